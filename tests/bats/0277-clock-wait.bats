#!/usr/bin/env bats
# --wait after a forward wall-clock step (issue 23 item 4; docs/ownership.md
# "Waiting for a key"): the waiter judges the holder's free time on its
# judging clock (wall - the judging offset lease-write recorded after the
# step, docs/lease.md "Judging others after a step"), and its retry is
# timed on that same clock (lib/core/acqwait.c). Timed on the raw wall
# clock, it came S ms early, was answered held, and waited a period more:
# with S = 400 (a step beyond clock_step_ms = 300) and a period of 2000,
# 1600 ms late. The step is made with tests/preload/clockshim.c. Runs on
# the fs store and on a real S3 server. Timings (ms): ttl 6000, grace
# 3000, safety 1200, skew 600, period 2000 (twice the other tests': the
# gap between a retry on time and one a period late, 1600 ms, stays far
# above what an attempt takes on this loaded machine).

# shellcheck disable=SC2154 # output: set by bats' run
load helpers/common
load helpers/owner # line_at (clock's start_node and field, loaded after, win)
load helpers/clock

setup() { keep_setup 6000 3000 1200 600 2000; }
teardown() { keep_teardown; }

@test "wall step +400 ms on the waiter: --wait acquires a fenced holder's key at its free time on the judging clock, not a period later" {
	start_node n1 n1 shim
	start_node n2 n2
	run -0 --separate-stderr owner-acquire --node-id n2 t/c/a
	shim_set n1 realtime_ms=400
	wait_line 10 n1 '^recovered '
	j=$(state_field n1 judge_offset_ms)
	echo "# judging offset $j ms" >&3
	[ "$j" -ge 300 ]
	[ "$j" -le 460 ]
	start_bg w shimmed n1 owner-acquire --node-id n1 --wait=30s t/c/a
	wait_line 10 w '^waiting key=t/c/a node=n2 free_at_ms=-$'
	# the holder dies; an operator (this host's clock, unshifted) fences it
	kill -KILL "$(bg_pid n2)"
	run -0 --separate-stderr lease-fence n2
	wait_line 10 w '^waiting key=t/c/a node=n2 free_at_ms=[0-9]+$'
	free_at=$(sed -n 's/^waiting .*free_at_ms=\([0-9][0-9]*\)$/\1/p' "$BATS_TEST_TMPDIR/w.out")
	t=$(line_at w '^acquired key=t/c/a generation=2 ' 15)
	run wait_exit 5 w
	[ "$output" = 0 ]
	# One clock: the test's wall clock is n2's and the operator's (free_at
	# is on it) and n1's wall clock less the shim's 400 ms; n1 judges on
	# its wall clock less j, i.e. on the test's clock plus (400 - j). It
	# may acquire once that reads free_at: at the test's free_at - 400 + j.
	due=$((free_at - 400 + j))
	echo "# acquired $((t - due)) ms after the free time on the waiter's judging clock" >&3
	[ "$t" -ge "$due" ]
	# right after it (an attempt's time; line_at polls every 10 ms), not
	# a period later (1600 ms here)
	[ $((t - due)) -le 1000 ]
	refute_sanitizer_reports
}
