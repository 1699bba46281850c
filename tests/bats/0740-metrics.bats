#!/usr/bin/env bats
# Metrics (docs/metrics.md): every series the code writes is documented, the
# textfiles are valid exposition format that `promtool check metrics`
# accepts (HELP and TYPE lines, base units, counters _total; Debian's
# prometheus package, scripts/install-deps.sh --test), every counter is
# there from 0, and the lease series move as the lease does (a failed write
# shows in keep_node_lease_failures_total).

load helpers/common

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	keep_setup
	echo "metrics: {textfile: $BATS_TEST_TMPDIR/prom/keep.prom}" >>"$KEEP_CONFIG"
	mkdir -p "$BATS_TEST_TMPDIR/prom"
}
teardown() { keep_teardown; }

# check_exposition FILE : the text format node_exporter accepts: one HELP
# and one TYPE line per name, before its series, all of a name's series
# together, no duplicate series, values integers (counters) or decimals
# (gauges in seconds); and `promtool check metrics` has nothing to say
check_exposition() {
	awk '
		/^# HELP / {
			if ($3 in helped) { print FILENAME ": second HELP for " $3; bad = 1 }
			helped[$3] = 1; next
		}
		/^# TYPE / {
			if ($3 in typed) { print FILENAME ": second TYPE for " $3; bad = 1 }
			if (!($3 in helped)) { print "no HELP line for " $3; bad = 1 }
			typed[$3] = 1; cur = $3; kind = $4
			if ($4 != "counter" && $4 != "gauge") { print "bad type: " $0; bad = 1 }
			next
		}
		/^#/ { next }
		{
			if ($0 !~ /^[a-z_]+\{node="[^"]*"(,[a-z_]+="[^"]*")*\} -?[0-9]+(\.[0-9]+)?$/) { print "bad line: " $0; bad = 1; next }
			if (kind == "counter" && $0 !~ / [0-9]+$/) { print "counter not an integer: " $0; bad = 1 }
			name = $0; sub(/\{.*/, "", name)
			if (name != cur) { print "series of " name " not under its TYPE line"; bad = 1 }
			series = $0; sub(/ [^ ]*$/, "", series)
			if (series in seen) { print "duplicate series " series; bad = 1 }
			seen[series] = 1
		}
		END { exit bad }' "$1" || return 1
	command -v promtool >/dev/null || {
		echo "promtool not installed (scripts/install-deps.sh --test installs prometheus)"
		return 1
	}
	promtool check metrics <"$1"
}

# value FILE SERIES : the value of one series (exact, labels included)
value() {
	awk -v s="$2" 'index($0, s " ") == 1 { print $NF }' "$1"
}

@test "metrics: docs/metrics.md lists every series the commands write" {
	names=$(grep -rhoE '"keep_[a-z_]+"' "$ROOT"/cmd/*.c "$ROOT"/lib/*/*.c | tr -d '"' | sort -u)
	[ -n "$names" ]
	for n in $names; do
		grep -qE "^\| \`$n(\{[a-z,]+\})?\` \| (counter|gauge) \|" "$ROOT/docs/metrics.md" ||
			{ echo "docs/metrics.md does not list $n (with its type)"; false; }
	done
	grep -q 'keep_node_lease_failures_total\[' "$ROOT/docs/metrics.md" # the alert example
	# and every series name has its HELP text in lib/local/metrics.c
	for n in $names; do
		grep -q "{\"$n\"," "$ROOT/lib/local/metrics.c" || { echo "lib/local/metrics.c has no HELP text for $n"; false; }
	done
}

@test "metrics: lease-write's textfile: valid, counters from 0, validity while live, a failed write counted" {
	f="$BATS_TEST_TMPDIR/prom/keep.lease-write.prom"
	start_bg n1 lease-write --node-id n1
	wait_for 10 test -s "$f"
	wait_line 20 n1 '^live '
	wait_for 5 grep -q 'keep_node_lease_writes_total{node="n1"} [1-9]' "$f"
	run -0 check_exposition "$f"
	[ "$(value "$f" 'keep_node_lease_failures_total{node="n1"}')" = 0 ]
	[ "$(value "$f" 'keep_node_lease_ran_out_total{node="n1"}')" = 0 ]
	[ "$(value "$f" 'keep_start_check_wait_seconds{node="n1"}')" = 0.000 ]
	v=$(value "$f" 'keep_node_lease_valid_seconds{node="n1"}')
	awk -v v="$v" 'BEGIN { exit !(v > 0 && v <= 2.4) }'
	grep -q '^keep_store_requests_total{node="n1",op="put",outcome="ok"} [1-9]' "$f"
	# every request series from 0, not only those seen
	[ "$(value "$f" 'keep_store_requests_total{node="n1",op="delete",outcome="refused"}')" = 0 ]
	# one failed renewal (a 503), then the retry lands
	echo "put nodes/n1 error 503 count=1" >"$FAULT_FILE"
	wait_for 10 grep -q 'keep_node_lease_failures_total{node="n1"} 1$' "$f"
	grep -q '^keep_store_requests_total{node="n1",op="put",outcome="ambiguous"} 1$' "$f"
	run -0 check_exposition "$f"
	wait_for 5 grep -q '^recovered \|^renewed \|^write-failed ' "$BATS_TEST_TMPDIR/n1.out"
	run -0 lease-status --node-id n1
	refute_sanitizer_reports
}

@test "metrics: during the start check keep_start_check_wait_seconds counts down; no progress lines off a terminal" {
	f="$BATS_TEST_TMPDIR/prom/keep.lease-write.prom"
	start_bg n1 lease-write --node-id n1
	wait_line 10 n1 '^check-read '
	wait_for 5 grep -qE '^keep_start_check_wait_seconds\{node="n1"\} ([1-9][0-9]*\.[0-9]+|0\.[0-9]*[1-9][0-9]*)$' "$f"
	v=$(value "$f" 'keep_start_check_wait_seconds{node="n1"}')
	awk -v v="$v" 'BEGIN { exit !(v > 0 && v <= 4.5) }'
	wait_line 20 n1 '^live '
	run grep -c 'start check: waiting' "$BATS_TEST_TMPDIR/n1.err"
	[ "$output" = 0 ]
}

@test "metrics: on a terminal, lease-write says how long the start check still waits" {
	command -v script >/dev/null || skip "script(1) not installed"
	# timeout exits 124 (the INT is lease-write's clean stop): ignored
	run -0 timeout 20 script -qec "timeout -s INT 6 lease-write --node-id n1 >/dev/null; true" /dev/null
	assert_output --regexp 'lease-write: info: start check: waiting [45] s more for nodes/n1 \(ttl \+ grace\)'
	assert_output --partial 'waiting 1 s more for nodes/n1'
}

@test "metrics: node-watch and lease-fence textfiles are valid and counted; one-shot runs write none" {
	lease-fence --create n9 >/dev/null
	run -0 node-watch --once
	# one-shot runs must not replace the running pipeline's files
	[ ! -e "$BATS_TEST_TMPDIR/prom/keep.node-watch.prom" ]
	[ ! -e "$BATS_TEST_TMPDIR/prom/keep.lease-fence.prom" ]
	start_bg nw node-watch --follow --node-id n2
	wait_for 10 grep -q 'op="list",outcome="ok"} [1-9]' "$BATS_TEST_TMPDIR/prom/keep.node-watch.prom"
	# a fencer that never fenced has its counters, at 0, from its start
	start_bg lf lease-fence --stdin --node-id n2 </dev/null
	wait_exit 10 lf >/dev/null
	f="$BATS_TEST_TMPDIR/prom/keep.lease-fence.prom"
	[ "$(value "$f" 'keep_fences_total{node="n2"}')" = 0 ]
	[ "$(value "$f" 'keep_fence_candidates_total{node="n2"}')" = 0 ]
	run -0 check_exposition "$f"
	run -0 lease-fence --stdin --node-id n2 <<<"stale bogus"
	for p in node-watch lease-fence; do
		f="$BATS_TEST_TMPDIR/prom/keep.$p.prom"
		[ -s "$f" ] || { echo "no $f"; false; }
		run -0 check_exposition "$f"
	done
	grep -q '^keep_fence_bad_lines_total{node="n2"} 1$' "$BATS_TEST_TMPDIR/prom/keep.lease-fence.prom"
}

@test "metrics: the resolver writes holds, pending releases and unresolved acquires; the guard its wait" {
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 t/c/b
	start_bg res owner-release --node-id n1 --pending --follow
	f="$BATS_TEST_TMPDIR/prom/keep.owner-release.prom"
	wait_for 10 grep -q '^keep_holds{node="n1"} 2$' "$f"
	grep -q '^keep_pending_releases{node="n1"} 0$' "$f"
	grep -q '^keep_unresolved_acquires{node="n1"} 0$' "$f"
	run -0 check_exposition "$f"
	run -0 owner-release --node-id n1 t/c/a
	wait_for 10 grep -q '^keep_holds{node="n1"} 1$' "$f"
	run -0 upgrade-mark --node-id n1 guard
	g="$BATS_TEST_TMPDIR/prom/keep.upgrade-mark.prom"
	grep -q '^keep_start_guard_wait_seconds{node="n1"} 0.000$' "$g"
	run -0 check_exposition "$g"
}
