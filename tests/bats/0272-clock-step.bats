#!/usr/bin/env bats
# Wall-clock steps on a node with a live hold (issue 13; docs/lease.md
# "Clocks"): lease-write compares the wall clock's progress with the boot
# clock's at every tick; a step beyond clock_step_ms (max_skew / 2 = 150
# ms here) ends every hold at once as a lapse does, with one warning naming
# its size, and the node is valid again after its next acknowledged write.
# The step is made with tests/preload/clockshim.c (realtime offset of
# every process of n1). Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/clock

setup() {
	keep_setup
	# n1's lease-write alone writes metrics (one textfile per node)
	cp "$KEEP_CONFIG" "$BATS_TEST_TMPDIR/n1.yaml"
	printf 'metrics:\n  textfile: %s\n' "$BATS_TEST_TMPDIR/keep.prom" >>"$BATS_TEST_TMPDIR/n1.yaml"
}
teardown() { keep_teardown; }

# n1_passed N FILE : grantpoll's FILE (its lines as they come) shows at
# least N passing checks of n1
n1_passed() { [ "$(awk '$3 == "n1" && $4 == 0' "$2" 2>/dev/null | wc -l)" -ge "$1" ]; }

# step_ends_hold STEP_MS : n1 holds t/c/a at generation 1; its wall clock
# steps by STEP_MS; the hold must end at the next tick (a write period
# plus the time to notice), with one clock-step line and one warning
step_ends_hold() {
	KEEP_CONFIG="$BATS_TEST_TMPDIR/n1.yaml" start_node n1 n1 shim
	run -0 --separate-stderr shimmed n1 owner-acquire --node-id n1 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=1 "* ]]
	run -0 shimmed n1 owner-check --node-id n1 t/c/a 1
	shim_set n1 realtime_ms="$1"
	t0=$(now_ms)
	# noticed at the next tick (within a write period: 1000 ms; the rest
	# is room for a loaded machine), and the hold ends right then
	local end=$((t0 + 5000)) t1=
	while [ "$(now_ms)" -lt "$end" ]; do
		if grep -q '^clock-step ' "$BATS_TEST_TMPDIR/n1.out"; then
			t1=$(now_ms)
			break
		fi
		sleep 0.01
	done
	[ -n "$t1" ] || { echo "no clock-step line 5 s after the step" >&2; return 1; }
	run -1 shimmed n1 owner-check --node-id n1 t/c/a 1
	# (one clock, the test's: from the step to the line seen; a missed
	# step has no line at all, the loop above fails then)
	echo "# step $1 ms: noticed $((t1 - t0)) ms after it" >&3
	step=$(sed -n 's/^clock-step .*step_ms=\(-\{0,1\}[0-9]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out")
	d=$((step - $1))
	# tolerance 200 ms: lease-write measures the step as the change of
	# wall - boot between two readings of both clocks; a preemption
	# between the two reads of one reading adds to it
	[ "${d#-}" -le 200 ]
	wait_line 5 n1 '^ran-out .*lapses=1'
	run -0 grep -c 'warning: the wall clock stepped' "$BATS_TEST_TMPDIR/n1.err"
	[ "$output" = 1 ]
	grep -Eq "stepped [+-]?[0-9]+ ms against the boot clock" "$BATS_TEST_TMPDIR/n1.err"
	# re-earned with the next acknowledged write
	wait_line 5 n1 '^recovered '
	run -0 shimmed n1 lease-status --node-id n1
	run -1 shimmed n1 owner-check --node-id n1 t/c/a 1
	[ "$output" = "check key=t/c/a generation=1 ok=no reason=lapsed" ]
	run -0 grep -x 'keep_clock_steps_total{node="n1"} 1' "$BATS_TEST_TMPDIR/keep.lease-write.prom" ||
		{ cat "$BATS_TEST_TMPDIR/keep.lease-write.prom" >&3; false; }
}

@test "clock step +20 s: the hold ends at the next tick, one warning; the peer's grant never overlaps" {
	start_node n2 n2
	step_ends_hold 20000
	# the lapse parked the hold as a pending release: the resolver frees it
	run -0 --separate-stderr shimmed n1 owner-release --node-id n1 --pending
	assert_output --partial "released key=t/c/a generation=1"
	run -0 acquire_until 10 n2 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=2 "* ]]
	poll_grants "$BATS_TEST_TMPDIR/grants" 1500 n1 1 n2 2
	g="$BATS_TEST_TMPDIR/grants"
	# not vacuous: n2 holds it all along (tolerance: 10 of the ~75 rounds
	# of an idle machine, one each 20 ms; room for a loaded one)
	[ "$(passes "$g" n2)" -ge 10 ]
	[ "$(overlaps "$g")" -eq 0 ]
	[ "$(passes "$g" n1)" -eq 0 ]
	refute_sanitizer_reports
}

@test "clock step -20 s: the hold ends at the next tick, one warning; written_at never goes back, so a fence after a stall frees nothing while n1 still counts itself valid" {
	start_node n2 n2
	step_ends_hold -20000
	# a new hold, after the recovery: generation 2
	run -0 --separate-stderr shimmed n1 owner-acquire --node-id n1 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=2 "* ]]
	# n1 dates its writes on the clock as it was before the step (carried
	# on its boot clock), not 20 s early
	# (n1's date against the test's wall clock: tolerance 10 s, which
	# tells "dated as before the step" from "20 s early"; the last write
	# is at most a write period + an attempt old, more on a loaded machine)
	w=$(keep-store get nodes/n1 | sed -n 's/^written_at_ms //p')
	[ "$w" -ge $(($(now_ms) - 10000)) ]
	# the grants are watched from before the stall on, and n1's grant is
	# seen passing first (so that the check below is not vacuous): started
	# after the stall, a loaded machine's poll came after n1's validity
	# (ttl - safety from its last send) ended and saw it pass 0 times.
	# 12 s: up to 3 s to the stall, then n1's validity, the fence's free_at
	# (ttl + grace after n1's last write) and n2's acquisition
	g="$BATS_TEST_TMPDIR/grants"
	start_bg poll poll_grants "$g" 12000 n1 2 n2 3
	wait_for 10 n1_passed 5 "$g.1"
	# n1 stalls right after a renewal (it cannot write; it still counts
	# itself valid for ttl - safety on its boot clock); the operator fences
	# it; n2 asks for t/c/a all the while
	wait_renewal n1 || { tail -20 "$BATS_TEST_TMPDIR/n1.out" "$BATS_TEST_TMPDIR/n1.err" >&3; false; }
	kill -STOP "$(bg_pid n1)"
	valid_until_wall=$(state_field n1 valid_until_wall_ms)
	run -0 --separate-stderr lease-fence n1
	free_at=$(field free_at_ms)
	# peers free n1's records no earlier than n1's validity ends. Two of
	# n1's own figures: valid_until_wall_ms is on its stepped wall clock
	# (20 s behind), the written_at the fence counts from is dated on its
	# clock as before the step: free_at - valid_until_wall = 20000 +
	# (ttl + grace) - (ttl - safety) = 22100, less the error of n1's
	# measure of the step (at most 200, above): tolerance 2100
	[ "$free_at" -ge $((valid_until_wall + 20000)) ]
	start_bg n2acq acquire_until 15 n2 t/c/a
	run wait_exit 20 poll
	[ "$output" = 0 ]
	run wait_exit 15 n2acq
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR/n2acq.out" "$BATS_TEST_TMPDIR/n2acq.err" >&3; false; }
	grep -q '^acquired key=t/c/a generation=3 ' "$BATS_TEST_TMPDIR/n2acq.out"
	echo "# n1: $(passes "$g" n1) passes; n2: $(passes "$g" n2) passes; overlaps $(overlaps "$g")" >&3
	# not vacuous (tolerance: 5 rounds, 100 ms of the poll on an idle
	# machine, room for a loaded one)
	[ "$(passes "$g" n1)" -ge 5 ]  # n1's grant was live before the stall
	[ "$(passes "$g" n2)" -ge 5 ]  # and n2's came after it
	[ "$(overlaps "$g")" -eq 0 ]
	kill -CONT "$(bg_pid n1)"
	run wait_exit 15 n1
	[ "$output" = 10 ]
	refute_sanitizer_reports
}
