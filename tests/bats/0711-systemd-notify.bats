#!/usr/bin/env bats
# keep-agent under Type=notify (docs/operations.md "Run under systemd"): it
# tells systemd READY=1 when the node is live, not before, and STOPPING=1
# when its clean stop begins, each with a STATUS= line, through the socket
# $NOTIFY_SOCKET names. A fake socket (tests/tools/notify-listen.c, which
# prints each datagram with its sender's pid) stands in for systemd.
# Store-independent: the fs pass.

load helpers/common

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
	keep_setup
	SOCK="$BATS_TEST_TMPDIR/notify"
	start_bg listen "$KEEP_TOOLDIR/notify-listen" "$SOCK"
	wait_line 10 listen '^listening '
}
teardown() { keep_teardown; }

@test "systemd notify: STATUS at start, READY=1 once the node is live (not before), STOPPING=1 at the clean stop" {
	NOTIFY_SOCKET="$SOCK" start_bg agent keep-agent --node-id n1
	wait_line 20 listen 'msg="STATUS=node n1: start check'
	# the start check is 4.5 s: not ready yet, and nothing says so
	run -15 lease-status --node-id n1
	run -1 grep -c 'READY=1' "$BATS_TEST_TMPDIR/listen.out"
	wait_line 30 listen 'msg="READY=1\\nSTATUS=node n1 is live"'
	# READY=1 came after the lease was valid: it still is, and the agent
	# said live first
	run -0 lease-status --node-id n1
	grep -q '^live ' "$BATS_TEST_TMPDIR/agent.out"
	grep -q 'keep-agent: info: node n1 is live' "$BATS_TEST_TMPDIR/agent.err"
	wait_for 10 keep-agent status --node-id n1
	run -1 grep -c 'STOPPING=1' "$BATS_TEST_TMPDIR/listen.out"
	kill -TERM "$(bg_pid agent)"
	run wait_exit 30 agent
	[ "$output" = 0 ]
	# sent before the agent ended (it waits for its last message)
	run -0 grep -c 'msg="STOPPING=1\\nSTATUS=node n1: clean stop (drain, then released)"' \
		"$BATS_TEST_TMPDIR/listen.out"
	[ "$output" = 1 ]
	# one READY=1, in order: status, ready, stopping
	run -0 sed -n 's/^notify pid=[0-9]* msg="\([A-Z]*\)=.*/\1/p' "$BATS_TEST_TMPDIR/listen.out"
	[ "$output" = $'STATUS\nREADY\nSTOPPING' ]
	refute_sanitizer_reports
}

@test "systemd notify: without NOTIFY_SOCKET nothing is sent; lease-status --notify checks what it sends" {
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	kill -TERM "$(bg_pid agent)"
	run wait_exit 30 agent
	[ "$output" = 0 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/listen.out")" -eq 1 ]
	# the helper: nothing to do without the variable; a bad message or address is 100
	run -0 lease-status --notify READY=1
	NOTIFY_SOCKET="$SOCK" run -0 lease-status --notify READY=1 "STATUS=by hand"
	wait_line 5 listen 'msg="READY=1\\nSTATUS=by hand"'
	NOTIFY_SOCKET="$SOCK" run -100 --separate-stderr lease-status --notify NOVALUE
	NOTIFY_SOCKET="relative/path" run -100 --separate-stderr lease-status --notify READY=1
	[[ "$stderr" == *"unable to notify systemd through \$NOTIFY_SOCKET: an unusable socket address"* ]]
	NOTIFY_SOCKET="$BATS_TEST_TMPDIR/nobody" run -111 --separate-stderr lease-status --notify READY=1
}
