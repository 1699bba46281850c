#!/usr/bin/env bats
# A wall clock behind the last write (docs/lease.md "A wall clock behind
# the last write"): a lease-write started after its node's wall clock went
# back (a wrong step nobody corrected, with the earlier process gone)
# never dates a write below the last written_at of nodes/<id>. When its
# start check is over with the wall clock still more than clock_step_ms
# behind that written_at, it waits for the clock to pass it (one
# clock-behind line, one warning); more than ttl + grace behind, it gives
# up: exit 111, one fatal line, nothing written. The steps are made with
# tests/preload/clockshim.c. Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 1500, grace 750, safety 300, skew 150, period 500;
# ttl + grace 2250, clock_step_ms 75.

load helpers/common
load helpers/clock

setup() { keep_setup 1500 750 300 150 500; }
teardown() { keep_teardown; }

# written_at_ms of nodes/n1 in the store
stored_written_at() {
	keep-store get nodes/n1 | sed -n 's/^written_at_ms //p'
}

@test "clock floor: restarted with the wall clock back by more than ttl + grace after a kill -9, lease-write waits until it passes the last written_at, then writes above it" {
	shim_set n1 realtime_ms=0
	start_node n1 n1 shim
	kill -KILL "$(bg_pid n1)"
	wait_exit 10 n1 >/dev/null
	run -0 stored_written_at
	last=$output
	[ "$last" -gt 0 ]
	# back by the time since that write + ttl + grace + 2150 ms: after
	# the 2250 ms start check the wall clock is still 2150 ms behind the
	# last written_at, less the restart's own latency (room: 2150 ms; more
	# than ttl + grace, 2250, behind is the next test's case, exit 111)
	back=$(($(now_ms) - last + 4400))
	shim_set n1 realtime_ms=-$back
	mv "$BATS_TEST_TMPDIR/n1.out" "$BATS_TEST_TMPDIR/n1-first.out"
	start_node n1 n1 shim
	# the first write of the new process, and every one after it, is
	# dated above the last one of the process before
	first=$(sed -n 's/^live .* written_at_ms=\([0-9]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out")
	[ "$first" -gt "$last" ]
	run -0 stored_written_at
	[ "$output" -gt "$last" ]
	run -0 grep -c '^clock-behind node=n1 ' "$BATS_TEST_TMPDIR/n1.out"
	[ "$output" = 1 ]
	behind=$(sed -n 's/^clock-behind .* behind_ms=\([0-9]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out")
	[ "$behind" -gt 0 ]
	[ "$behind" -le 2250 ]
	grep -q "^clock-behind .* written_at_ms=$last " "$BATS_TEST_TMPDIR/n1.out"
	run -0 grep -c 'warning: the wall clock is [0-9]* ms behind the last written_at of nodes/n1' "$BATS_TEST_TMPDIR/n1.err"
	[ "$output" = 1 ]
	# and the wait lasted until the shifted wall clock passed it
	[ "$(($(now_ms) - back))" -gt "$last" ]
	bg_running n1
	refute_sanitizer_reports
}

@test "clock floor: restarted with the wall clock still more than ttl + grace behind the last written_at after its check, lease-write exits 111 with one fatal line and writes nothing" {
	shim_set n1 realtime_ms=0
	start_node n1 n1 shim
	kill -TERM "$(bg_pid n1)"
	run -0 wait_exit 10 n1
	[ "$output" = 0 ]
	run -0 keep-store get nodes/n1
	assert_line --regexp "^released [0-9a-f]{32}$"
	body=$output
	last=$(printf '%s\n' "$body" | sed -n 's/^written_at_ms //p')
	# back by the time since that write + 3 x (ttl + grace): 4500 ms
	# behind at the end of the check, less the restart's latency
	back=$(($(now_ms) - last + 6750))
	shim_set n1 realtime_ms=-$back
	start_bg n1 env ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" \
		KEEP_CLOCKSHIM_FILE="$BATS_TEST_TMPDIR/n1.clock" LD_PRELOAD="$SHIM" \
		lease-write -v --node-id n1
	run -0 wait_exit 15 n1
	[ "$output" = 111 ]
	run -0 grep -c 'fatal: the wall clock is [0-9]* ms behind the last written_at of nodes/n1 ('"$last"'), more than ttl + grace (2250 ms): not starting' "$BATS_TEST_TMPDIR/n1.err"
	[ "$output" = 1 ]
	grep -q "^lost node=n1 .*reason=clock-behind .*written_at_ms=$last " "$BATS_TEST_TMPDIR/n1.out"
	run -1 grep -q '^live ' "$BATS_TEST_TMPDIR/n1.out"
	# nothing written: the object is the released one, byte for byte
	run -0 keep-store get nodes/n1
	[ "$output" = "$body" ]
	run -15 shimmed n1 lease-status --node-id n1
	refute_sanitizer_reports
}
