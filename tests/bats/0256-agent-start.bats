#!/usr/bin/env bats
# keep-agent's start: flags, the store check, the start guard beside the
# start check (ADR 0020 §6), and a stop before the node is live.
# Timings (ms): ttl 3000, grace 1500 (start check 4500); the guard's default
# horizon 10000: an old heartbeat holds it until written_at + 14500.

load helpers/common
load helpers/agent
agent_leak_checks

setup() { keep_setup; }
teardown() { keep_teardown; }

put_old_hb() { # NODE WRITTEN_AT_MS
	printf 'wasmkeep-node 2\nnode %s\nwritten_at_ms %s\n' "$1" "$2" | keep-store put "nodes/$1" >/dev/null
}

@test "keep-agent: a flag without its value is a usage error (100, why and the synopsis), nothing started" {
	local args hint
	hint="keep-agent: info: usage: keep-agent [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR] [--timestamps] (\`keep-agent -h\` prints the whole usage)"
	for args in "--node-id n1 --store" "--store --node-id n1" "--node-id" "-c" "--node-id n1 --state-dir" \
		"--store= --node-id n1" "--node-id=" "status --node-id" "status --node-id n1 -c" "status --config="; do
		# shellcheck disable=SC2086 # word splitting wanted
		run -100 --separate-stderr keep-agent $args
		[ "${#stderr_lines[@]}" -eq 2 ] || { echo "$args: $stderr"; false; }
		[[ "${stderr_lines[0]}" == "keep-agent: fatal: option '-"*"' needs a value" ]] || { echo "$args: $stderr"; false; }
		[ "${stderr_lines[1]}" = "$hint" ]
		[ -z "$output" ]
	done
	run -100 --separate-stderr keep-agent --node-id n1 --bogus
	[ "$stderr" = "keep-agent: fatal: unknown argument '--bogus'"$'\n'"$hint" ]
	run -100 --separate-stderr keep-agent status n1
	[ "${stderr_lines[0]}" = "keep-agent: fatal: unknown argument 'n1'" ]
	run -1 keep-store stat nodes/n1
	[ ! -e "$STATE_DIR/n1" ]
}

@test "keep-agent: a store that fails store-probe is refused, naming the failing step" {
	echo "put probe/ error 412" >"$FAULT_FILE"
	run -1 --separate-stderr keep-agent --node-id n1
	[[ "$stderr" == *"fatal: the store does not pass store-probe (exit 1): probe result=failed step=create want=ok got=conflict"* ]]
	# a later step: the second conditional create is not refused as it must be
	printf 'put probe/ delay 0 count=1\nput probe/ error 403\n' >"$FAULT_FILE"
	run -1 --separate-stderr keep-agent --node-id n1
	[[ "$stderr" == *"probe result=failed step=create-again want=conflict got=refused"* ]]
	# a store that ignores conditional writes (a versioned RGW bucket):
	# the second If-None-Match create succeeds
	echo "put probe/ unconditional" >"$FAULT_FILE"
	run -1 --separate-stderr keep-agent --node-id n1
	[ "${#stderr_lines[@]}" -eq 2 ] || { echo "$stderr"; false; } # the lock's line, this one
	[ "${stderr_lines[1]}" = "keep-agent: fatal: the store does not pass store-probe (exit 1): probe result=failed step=create-again want=conflict got=ok (docs/s3.md, docs/store.md)" ]
	run -0 keep-store list nodes/
	[ -z "$output" ]
}

@test "keep-agent: a stop during the start check ends it at once and writes nothing" {
	# a start check of 30 s (ttl 20 s + grace 10 s): the stop lands in it
	# however slow the machine (with 4.5 s a loaded one went live first)
	keep_setup 20000 10000 2000 1000 1000
	start_bg agent keep-agent --node-id n1
	wait_line 15 agent '^check-start '
	run -15 keep-agent status --node-id n1
	t0=$(now_ms)
	kill -TERM "$(bg_pid agent)"
	run wait_exit 3 agent
	[ "$output" = 0 ]
	echo "# exited $(($(now_ms) - t0)) ms after SIGTERM (the start check had 30 s to go)" >&3
	grep -q 'stop before the node went live: the start check ends, nothing is written' "$BATS_TEST_TMPDIR/agent.err"
	run -1 grep -E '^(live|drain|released) ' "$BATS_TEST_TMPDIR/agent.out"
	run -1 keep-store stat nodes/n1
	run -15 lease-status --node-id n1
	assert_output --partial "phase=stopped"
	refute_sanitizer_reports
}

@test "keep-agent: the start guard runs beside the start check: an old node stopped just now, ready after the guard's ~14.5 s, not 19" {
	# ADR §6 with the defaults: ready ~15 s after the start when the old
	# nodes stopped 10 s before (guard 10 + 10 + 5 - 10, check 10 + 5).
	# Here the old node stopped just now: the guard waits 14.5 s (10 + 3 +
	# 1.5), the check 4.5 s: side by side ~14.5 s, in turn 19 s. (With both
	# at 4.5 s, a loaded machine started lease-write after the guard had
	# passed: the order below is what is checked, and it needs the room.)
	put_old_hb old1 "$(now_ms)"
	t0=$(now_ms)
	start_bg agent keep-agent --node-id n1
	wait_line 20 agent '^live '
	took=$(($(now_ms) - t0))
	echo "# live ${took} ms after the start (side by side 14500, in turn 19000)" >&3
	# the check started before the guard passed, and the node went live after both
	first_pass=$(grep -n '^pass ' "$BATS_TEST_TMPDIR/agent.out" | cut -d: -f1)
	check_start=$(grep -n '^check-start ' "$BATS_TEST_TMPDIR/agent.out" | cut -d: -f1)
	live=$(grep -n '^live ' "$BATS_TEST_TMPDIR/agent.out" | cut -d: -f1)
	# (the order is the check, not the time: the time printed above
	# includes the starts of a dozen sanitizer-built processes, seconds on
	# a loaded machine; in turn, check-start would come after the pass)
	[ "$check_start" -lt "$first_pass" ]
	[ "$first_pass" -lt "$live" ]
	refute_sanitizer_reports
}

@test "keep-agent: the start check passed first holds the first write for the guard; a stop then writes nothing" {
	# guard: 34.5 s (the old node's heartbeat dated 20 s ahead); check:
	# 4.5 s. The 30 s between them is room for the starts of a loaded
	# machine (with 4 s, then 10 s, the guard passed first there); the
	# test stops the agent before the guard passes, so it costs nothing
	put_old_hb old1 "$(($(now_ms) + 20000))"
	start_bg agent keep-agent --node-id n1
	wait_for 30 grep -q 'start check passed; the first write waits for `go`' "$BATS_TEST_TMPDIR/agent.err"
	grep -q '^wait node=old1 ' "$BATS_TEST_TMPDIR/agent.out"
	run -1 grep -q '^pass ' "$BATS_TEST_TMPDIR/agent.out"
	run -15 keep-agent status --node-id n1
	assert_output --partial "guard node=n1 state=running"
	run -1 keep-store stat nodes/n1
	kill -TERM "$(bg_pid agent)"
	run wait_exit 3 agent
	[ "$output" = 0 ]
	run -1 keep-store stat nodes/n1
	run -1 grep -E '^(live|released) ' "$BATS_TEST_TMPDIR/agent.out"
	refute_sanitizer_reports
}

@test "keep-agent: a second agent for the same node and state directory is refused (11); the first stays ready" {
	start_bg a1 keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	run -11 --separate-stderr keep-agent --node-id n1
	[[ "$stderr" == *"fatal: another keep-agent (pid $(bg_pid a1)) runs node n1 with state directory '$STATE_DIR/n1'"* ]]
	run -0 keep-agent status --node-id n1
	assert_output --partial "agent node=n1 running=yes pid=$(bg_pid a1) "
	refute_sanitizer_reports
}
