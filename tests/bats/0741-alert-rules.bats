#!/usr/bin/env bats
# The alert rules (etc/prometheus/keep-rules.yml; docs/metrics.md "Alerts")
# under `promtool check rules` and `promtool test rules`, fed the series
# keep's processes really write: textfiles snapshotted while a node starts,
# goes live, has a lease write fail and runs out, while a peer's agent fences
# it, and while the agent restarts its fencing pipeline. Each snapshot
# becomes a stretch of minutes of promtool's input series, and the test says
# which alert fires when, with the node and the annotations it names. The
# textfile collector's `file` label is the full path of a file keep wrote
# (node_exporter 1.5), which KeepMetricsStale must match.
# promtool: Debian's prometheus package (scripts/install-deps.sh --test).
# Store-independent (the series are what the test is about): the fs pass.

load helpers/common
load helpers/agent

ROOT="$BATS_TEST_DIRNAME/../.."
RULES="$ROOT/etc/prometheus/keep-rules.yml"

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
	command -v promtool >/dev/null || {
		echo "promtool not installed (scripts/install-deps.sh --test installs prometheus)"
		return 1
	}
	keep_setup
	P="$BATS_TEST_TMPDIR/prom"
	mkdir -p "$P/n1" "$P/n2" "$BATS_TEST_TMPDIR/snap"
	# one textfile path per node (two nodes on one host: docs/metrics.md)
	for n in n1 n2; do
		cp "$KEEP_CONFIG" "$BATS_TEST_TMPDIR/$n.yaml"
		echo "metrics: {textfile: $P/$n/keep.prom}" >>"$BATS_TEST_TMPDIR/$n.yaml"
	done
}
teardown() { keep_teardown; }

# snap NAME FILE : keep a copy of FILE as snapshot NAME
snap() { cp "$2" "$BATS_TEST_TMPDIR/snap/$1"; }

# has FILE REGEX : FILE has a line matching REGEX (for wait_for)
has() { grep -qE -- "$2" "$1"; }

# input_series SNAP:MINUTES... : promtool's input_series for every series
# of these snapshots, each snapshot's value repeated for its MINUTES ('_'
# where a snapshot lacks the series)
input_series() {
	local spec files=() reps=()
	for spec in "$@"; do
		files+=("$BATS_TEST_TMPDIR/snap/${spec%%:*}")
		reps+=("${spec##*:}")
	done
	awk -v reps="${reps[*]}" '
		BEGIN { n = split(reps, r, " ") }
		FNR == 1 { f++ }
		/^#/ || NF == 0 { next }
		{
			key = $0; sub(/ [^ ]*$/, "", key)
			if (!(key in seen)) { seen[key] = 1; order[++k] = key }
			v[key, f] = $NF
		}
		END {
			for (i = 1; i <= k; i++) {
				s = ""
				for (j = 1; j <= n; j++)
					for (m = 0; m < r[j]; m++)
						s = s (s == "" ? "" : " ") (((order[i], j) in v) ? v[order[i], j] : "_")
				printf "      - series: '\''%s'\''\n        values: '\''%s'\''\n", order[i], s
			}
		}' "${files[@]}"
}

@test "alert rules: promtool check rules passes the shipped file" {
	run -0 promtool check rules "$RULES"
	assert_output --partial "SUCCESS: 7 rules found"
}

@test "alert rules: each fires on the series keep writes (lease write failed, ran out, not valid, fenced, child restarted, stale file)" {
	export KEEP_CONFIG="$BATS_TEST_TMPDIR/n1.yaml"
	f1="$P/n1/keep.lease-write.prom"
	# n1: its start check, live, one failed write, then a run-out
	start_bg n1 lease-write --node-id n1
	wait_for 20 has "$f1" '^keep_start_check_wait_seconds\{node="n1"\} ([1-9][0-9]*\.[0-9]+|0\.[0-9]*[1-9][0-9]*)$'
	snap start "$f1"
	wait_line 20 n1 '^live '
	wait_for 10 has "$f1" '^keep_node_lease_valid_seconds\{node="n1"\} ([1-9][0-9]*\.[0-9]+|0\.[0-9]*[1-9][0-9]*)$'
	snap live "$f1"
	echo "put nodes/n1 error 503 count=1" >"$FAULT_FILE"
	wait_for 10 has "$f1" '^keep_node_lease_failures_total\{node="n1"\} 1$'
	snap failed "$f1"
	echo "put nodes/n1 error 503" >"$FAULT_FILE"
	wait_for 10 has "$f1" '^keep_node_lease_ran_out_total\{node="n1"\} 1$'
	wait_for 10 has "$f1" '^keep_node_lease_valid_seconds\{node="n1"\} 0\.000$'
	snap ranout "$f1"
	: >"$FAULT_FILE"
	wait_line 20 n1 '^recovered '

	# n2: an agent with its fencing pipeline; it fences n1 once n1 is killed
	export KEEP_CONFIG="$BATS_TEST_TMPDIR/n2.yaml"
	start_bg n2 keep-agent --node-id n2
	wait_for 30 keep-agent status --node-id n2
	fencer_ready n2
	snap fence0 "$P/n2/keep.lease-fence.prom"
	snap agent0 "$P/n2/keep.keep-agent.prom"
	[ "$(grep -c '^keep_fences_total{node="n2"} 0$' "$BATS_TEST_TMPDIR/snap/fence0")" -eq 1 ]
	kill -KILL "$(bg_pid n1)"
	wait_for 30 has "$P/n2/keep.lease-fence.prom" '^keep_fences_total\{node="n2"\} 1$'
	snap fence1 "$P/n2/keep.lease-fence.prom"
	# the agent restarts its fencing pipeline once
	kill -KILL "$(agent_field n2 fencing lease_fence)"
	wait_for 20 has "$P/n2/keep.keep-agent.prom" 'child="fencing"\} 1$'
	snap agent1 "$P/n2/keep.keep-agent.prom"
	for s in start live failed ranout fence0 fence1 agent0 agent1; do
		run -0 promtool check metrics <"$BATS_TEST_TMPDIR/snap/$s"
	done

	# minutes: n1 start 0-2, live 3-5, failed 6-8, ran out 9-13;
	# n2 before the fence 0-5, after it 6-13; its agent before the
	# restart 0-8, after it 9-13; n1's file last rewritten at 5m
	cat >"$BATS_TEST_TMPDIR/test.yml" <<EOF
rule_files:
  - $RULES
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
$(input_series start:3 live:3 failed:3 ranout:5)
$(input_series fence0:6 fence1:8)
$(input_series agent0:9 agent1:5)
      - series: 'node_textfile_mtime_seconds{file="$f1"}'
        values: '0+60x5 300x8'
      - series: 'node_textfile_mtime_seconds{file="$BATS_TEST_TMPDIR/other.prom"}'
        values: '0x13'
    alert_rule_test:
      - eval_time: 2m
        alertname: KeepNodeLeaseNotValid
        exp_alerts: []
      - eval_time: 5m
        alertname: KeepNodeLeaseWriteFailed
        exp_alerts: []
      - eval_time: 7m
        alertname: KeepNodeLeaseWriteFailed
        exp_alerts:
          - exp_labels: {node: n1, severity: warning}
            exp_annotations:
              summary: "keep node n1: a lease write failed"
              runbook: "docs/runbooks/lease-lost.md, docs/runbooks/bucket-outage.md"
      - eval_time: 8m
        alertname: KeepNodeLeaseRanOut
        exp_alerts: []
      - eval_time: 10m
        alertname: KeepNodeLeaseRanOut
        exp_alerts:
          - exp_labels: {node: n1, severity: critical}
            exp_annotations:
              summary: "keep node n1: its lease ran out"
              runbook: "docs/runbooks/lease-lost.md"
      - eval_time: 11m
        alertname: KeepNodeLeaseNotValid
        exp_alerts:
          - exp_labels: {node: n1, severity: critical}
            exp_annotations:
              summary: "keep node n1: its lease is not valid"
              runbook: "docs/runbooks/lease-lost.md"
      - eval_time: 5m
        alertname: KeepNodeFenced
        exp_alerts: []
      - eval_time: 7m
        alertname: KeepNodeFenced
        exp_alerts:
          - exp_labels: {node: n2, severity: warning}
            exp_annotations:
              summary: "keep node n2 fenced a peer"
              runbook: "docs/runbooks/lease-lost.md, docs/fencing.md"
      - eval_time: 8m
        alertname: KeepAgentChildRestarted
        exp_alerts: []
      - eval_time: 10m
        alertname: KeepAgentChildRestarted
        exp_alerts:
          - exp_labels: {node: n2, child: fencing, severity: warning}
            exp_annotations:
              summary: "keep node n2: keep-agent restarted its fencing"
              runbook: "docs/operations.md (What the agent does)"
      - eval_time: 6m
        alertname: KeepMetricsStale
        exp_alerts: []
      - eval_time: 7m
        alertname: KeepMetricsStale
        exp_alerts:
          - exp_labels: {file: "$f1", severity: warning}
            exp_annotations:
              summary: "keep textfile $f1 not rewritten for a minute"
              runbook: "docs/metrics.md (Where)"
      - eval_time: 13m
        alertname: KeepClockStep
        exp_alerts: []
EOF
	run -0 promtool test rules "$BATS_TEST_TMPDIR/test.yml"
	assert_output --partial "SUCCESS"

	# the check is live: the former KeepMetricsStale match (file=~"keep.*\\.prom",
	# a bare file name) never matches the collector's full path, and fails it
	sed 's|(\.\*/)?keep\[^/\]\*|keep.*|' "$RULES" >"$BATS_TEST_TMPDIR/old-rules.yml"
	run -1 grep -F '(.*/)?keep' "$BATS_TEST_TMPDIR/old-rules.yml"
	sed "s|^  - $RULES\$|  - $BATS_TEST_TMPDIR/old-rules.yml|" "$BATS_TEST_TMPDIR/test.yml" >"$BATS_TEST_TMPDIR/old-test.yml"
	run -1 promtool test rules "$BATS_TEST_TMPDIR/old-test.yml"
	assert_output --partial "alertname: KeepMetricsStale"
	refute_sanitizer_reports
}
