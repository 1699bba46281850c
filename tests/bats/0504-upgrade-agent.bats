#!/usr/bin/env bats
# keep-agent runs the start guard before lease-write (ADR 0020 §6;
# docs/upgrade.md "In keep-agent"). Runs on fs and S3.
# Timings (ms): ttl 3000, grace 1500, period 1000; the agent uses the
# default horizon (10 s): an old heartbeat holds it 14.5 s after written_at.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

put_old_hb() {
	printf 'wasmkeep-node %s\nnode %s\nwritten_at_ms %s\n' "$2" "$1" "$3" |
		keep-store put "nodes/$1" >/dev/null
}

@test "keep-agent: a fresh old heartbeat holds the start; one rewritten stops it with 16, nothing written" {
	put_old_hb old1 2 "$(now_ms)"
	start_bg agent keep-agent --node-id n1
	wait_line 15 agent '^wait node=old1 '
	# a later pass of the guard still waits (each pass prints its line)
	wait_for 10 sh -c "[ \$(grep -c '^wait node=old1 ' '$BATS_TEST_TMPDIR/agent.out') -ge 2 ]"
	bg_running agent
	run -15 keep-agent status --node-id n1
	run -1 keep-store stat nodes/n1
	put_old_hb old1 2 "$(now_ms)"
	run wait_exit 5 agent
	[ "$output" = 16 ]
	grep -q '^old-running node=old1 ' "$BATS_TEST_TMPDIR/agent.out"
	grep -q 'the start guard refused the start (exit 16' "$BATS_TEST_TMPDIR/agent.err"
	run -1 keep-store stat nodes/n1
	refute_sanitizer_reports
}

@test "keep-agent: a stale old heartbeat does not hold the start; SIGTERM during the guard stops it" {
	put_old_hb old1 1 $(( $(now_ms) - 600000 ))
	start_bg agent keep-agent --node-id n1
	wait_line 15 agent '^pass old=1$'
	wait_for 20 keep-agent status --node-id n1
	kill -TERM "$(bg_pid agent)"
	run wait_exit 15 agent
	[ "$output" = 0 ]
	# stopped while the guard waits: exits at once, nothing written
	put_old_hb old2 2 "$(now_ms)"
	start_bg a2 keep-agent --node-id n2
	wait_line 15 a2 '^wait node=old2 '
	kill -TERM "$(bg_pid a2)"
	run wait_exit 3 a2
	[ "$output" = 0 ]
	run -1 keep-store stat nodes/n2
	refute_sanitizer_reports
}
