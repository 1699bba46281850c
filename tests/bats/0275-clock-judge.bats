#!/usr/bin/env bats
# After a forward wall-clock step, this node judges OTHER nodes' freedom
# with its wall clock less the step (docs/lease.md "Judging others after a
# step"): lease-write records the judging offset in the lease state file,
# and every judging reader (owner-acquire's free rule, owner-show,
# lease-fence, node-watch) subtracts it; a reader also subtracts a forward
# step lease-write has not noticed yet (the state file's clock base).
# Without it a node stepped S ms forward takes a live peer's actor S ms
# early: two owners. The step is made with tests/preload/clockshim.c.
# Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 6000, grace 3000, safety 600, skew 300, period 1000:
# the stalled n2 stays valid 5400 ms after its last renewal and is free
# 9000 ms after it, room for the fence, the checks and the poll's start on
# a loaded machine (with ttl 3000, n2's validity had ended before the poll
# made 5 rounds); the step, 10 s, is still above ttl + grace.

# shellcheck disable=SC2154 # output: set by bats' run
load helpers/common
load helpers/clock

setup() { keep_setup 6000 3000 600 300 1000; }
teardown() { keep_teardown; }

# stop NAME : SIGTERM to NAME (lease-write), wait for its clean stop (0)
stop() {
	kill -TERM "$(bg_pid "$1")"
	run wait_exit 10 "$1"
	[ "$output" = 0 ] || { echo "$1: exit $output" >&3; tail -5 "$BATS_TEST_TMPDIR/$1.err" >&3; false; }
}

@test "wall step +10 s on n1: n1 takes stalled n2's fenced actor only after n2 could really have lapsed; the offset outlives a restart and is cleared by the operator" {
	start_node n1 n1 shim
	start_node n2 n2
	run -0 --separate-stderr owner-acquire --node-id n2 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=1 "* ]]
	# n1's wall clock jumps 10 s ahead (more than ttl + grace = 9 s)
	shim_set n1 realtime_ms=10000
	wait_line 5 n1 '^recovered '
	j=$(state_field n1 judge_offset_ms)
	[ "$j" -ge 9800 ]
	[ "$j" -le 10200 ]
	# n2 stalls right after a renewal (it still counts itself valid for
	# ttl - safety); n1's operator fences it, and n1 asks for t/c/a all
	# the while: never both grants at once
	wait_renewal n2 || { tail -5 "$BATS_TEST_TMPDIR"/n2.out "$BATS_TEST_TMPDIR"/n2.err "$BATS_TEST_TMPDIR"/n1.out >&3; false; }
	kill -STOP "$(bg_pid n2)"
	w=$(keep-store get nodes/n2 | sed -n 's/^written_at_ms //p')
	run -0 --separate-stderr shimmed n1 lease-fence --node-id n1 n2
	# free_at is n2's written_at + ttl + grace; judged on n1's clock less the step
	[ "$(field free_at_ms)" -eq $((w + 9000)) ]
	run -0 shimmed n1 owner-show --node-id n1 t/c/a
	[[ "$output" == *" free=no"* ]]
	start_bg n1acq acquire_until 20 n1 t/c/a shim
	poll_grants "$BATS_TEST_TMPDIR/grants" 11000 n1 2 n2 1
	run wait_exit 20 n1acq
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR/n1acq.out" "$BATS_TEST_TMPDIR/n1acq.err" >&3; false; }
	g="$BATS_TEST_TMPDIR/grants"
	echo "# n1: $(passes "$g" n1) passes; n2: $(passes "$g" n2) passes; overlaps $(overlaps "$g")" >&3
	[ "$(passes "$g" n2)" -ge 5 ]
	[ "$(passes "$g" n1)" -ge 5 ]
	[ "$(overlaps "$g")" -eq 0 ]
	kill -CONT "$(bg_pid n2)"
	# lease-write restarted on n1 keeps the offset
	stop n1
	start_bg n1b env ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" \
		KEEP_CLOCKSHIM_FILE="$BATS_TEST_TMPDIR/n1.clock" LD_PRELOAD="$SHIM" \
		lease-write --node-id n1
	wait_for 10 grep -q 'peers are judged [0-9]* ms late' "$BATS_TEST_TMPDIR/n1b.err"
	# cleared only with lease-write stopped
	run -11 --separate-stderr shimmed n1 lease-write --node-id n1 --clear-clock-offset
	stop n1b
	run -0 shimmed n1 lease-write --node-id n1 --clear-clock-offset
	[[ "$output" == "clock-offset node=n1 was_ms="* ]]
	[ "$(state_field n1 judge_offset_ms)" = 0 ]
	refute_sanitizer_reports
}
