#!/usr/bin/env bats
# Issue 23 item 5 (ADR 0020 §1, §4; docs/lease.md "Clean stop", "The first
# write"): a clean stop that finds a fence in place of its `released` is
# done (§4: "a fence, done"): lease-write exits 0, the stop's outcome, and
# reports the fence (`stopped ... reason=fenced`, one warning); keep-agent
# exits 0 as well. A refused (4xx) first lease write goes back to the start
# check, never retried in place. Runs on the fs store and on a real S3
# server (the fault file wraps either).
# Timings (ms): ttl 6000, grace 1500, safety 600, skew 300, period 1000:
# the stop's bound (ttl - safety) leaves time to fence meanwhile.

# shellcheck disable=SC2154 # output: set by bats' run
load helpers/common

setup() {
	keep_setup 6000 1500 600 300 1000
	FAULTS="$BATS_TEST_TMPDIR/n1.faults"
	: >"$FAULTS"
}
teardown() { keep_teardown; }

# fence_while_stopping NAME PID : n1's writes fail unsent from now (it sees
# nothing of the fence), an operator fences n1, PID gets SIGTERM; once n1
# says `stopping`, its writes go through again: its `released` meets the fence
fence_while_stopping() {
	echo 'put nodes/n1 error 503' >"$FAULTS"
	run -0 --separate-stderr lease-fence n1
	[[ "$output" == "fenced node=n1 instance=$inst "* ]]
	kill -TERM "$2"
	wait_line 20 "$1" '^stopping '
	: >"$FAULTS"
}

@test "lease-stop: a clean stop that meets a fence is done: exit 0, the fence reported" {
	start_bg n1 env KEEP_FAULT_FILE="$FAULTS" lease-write --node-id n1
	wait_line 30 n1 '^live '
	inst=$(sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out")
	fence_while_stopping n1 "$(bg_pid n1)"
	run wait_exit 20 n1
	[ "$output" = 0 ]
	run -0 grep '^stopped ' "$BATS_TEST_TMPDIR/n1.out"
	[ "$output" = "stopped node=n1 instance=$inst reason=fenced state=fenced seen_instance=$inst" ]
	run -1 grep -E '^(released|lost) ' "$BATS_TEST_TMPDIR/n1.out"
	run -0 grep -c 'clean stop: nodes/n1 was fenced before released landed' "$BATS_TEST_TMPDIR/n1.err"
	[ "$output" = 1 ]
	# the object is the fence, and the node is not live
	run -0 keep-store get nodes/n1
	assert_line --index 1 "fenced $inst"
	run -15 lease-status --node-id n1
	refute_sanitizer_reports
}

@test "lease-stop: keep-agent's clean stop that meets a fence exits 0 too" {
	start_bg agent env KEEP_FAULT_FILE="$FAULTS" keep-agent --node-id n1
	wait_line 40 agent '^live '
	inst=$(sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/agent.out")
	fence_while_stopping agent "$(bg_pid agent)"
	run wait_exit 30 agent
	[ "$output" = 0 ]
	run -0 grep '^stopped ' "$BATS_TEST_TMPDIR/agent.out"
	[ "$output" = "stopped node=n1 instance=$inst reason=fenced state=fenced seen_instance=$inst" ]
	run -1 grep 'fatal' "$BATS_TEST_TMPDIR/agent.err"
	refute_sanitizer_reports
}

@test "lease-stop: a refused first lease write goes back to the start check, same instance" {
	echo 'put nodes/n1 error 403 count=1' >"$FAULTS"
	t0=$(mono_ms)
	start_bg n1 env KEEP_FAULT_FILE="$FAULTS" lease-write --node-id n1
	wait_line 40 n1 '^live '
	dt=$(($(mono_ms) - t0))
	f="$BATS_TEST_TMPDIR/n1.out"
	run -0 grep -c '^check-start ' "$f"
	[ "$output" = 2 ]
	# in this order: the refusal, back to the check, the check again, live
	run -0 grep -nE '^(write-failed|back-to-check|check-start|live) ' "$f"
	[[ "${lines[0]}" == "1:check-start "* ]]
	[[ "${lines[1]}" == *":write-failed node=n1 instance="*" outcome=refused retry_ms=7500" ]]
	[[ "${lines[2]}" == *":back-to-check node=n1 instance="* ]]
	[[ "${lines[3]}" == *":check-start node=n1 instance="*" wait_ms=7500" ]]
	[[ "${lines[4]}" == *":live node=n1 instance="* ]]
	[ "${#lines[@]}" -eq 5 ]
	# one instance throughout
	run -0 sh -c "sed -n 's/.* instance=\([0-9a-f]*\).*/\1/p' '$f' | sort -u | wc -l"
	[ "$output" = 1 ]
	# two whole start checks (ttl + grace each): a lower bound on one clock
	[ "$dt" -ge 15000 ]
	refute_sanitizer_reports
}
