#!/usr/bin/env bats
# Ring mode (docs/fencing.md "Ring mode", issue 28): node-watch reads the
# bodies of its `successors` peers every period and lists nodes/ only every
# `full_every` periods. A dead node is fenced as in full mode while one of
# its watchers lives; when they died with it, by the node before them once
# they are candidates, or from the listings; a node that joins is watched
# once a listing showed it. fs store and real S3.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000:
# stale after 1000 + 800 unchanged, fence once written_at + 4500 passed.

load helpers/common
load helpers/agent

setup() { keep_setup; }
teardown() { keep_teardown; }

# ring K M : ring mode with K successors, a listing every M periods
ring() {
	printf 'watch:\n  mode: ring\n  successors: %s\n  full_every: %s\n' "$1" "$2" >>"$KEEP_CONFIG"
}

# fence_delay NODE : fenced_at_ms - written_at_ms of nodes/NODE's fence (both
# written by keep on this host's wall clock)
fence_delay() {
	local body w f
	body=$(keep-store get "nodes/$1")
	w=$(echo "$body" | sed -n 's/^written_at_ms //p')
	f=$(echo "$body" | sed -n 's/^fenced_at_ms //p')
	echo $((f - w))
}

@test "fence-ring: the configuration is checked (mode, successors, full_every, ring_from)" {
	run -0 node-watch --check
	printf 'watch:\n  mode: rings\n' >>"$KEEP_CONFIG"
	run -100 --separate-stderr node-watch --check
	assert_equal "${#stderr_lines[@]}" 1
	assert_equal "$stderr" "node-watch: fatal: invalid configuration: $KEEP_CONFIG:10: 'mode' in 'watch' must be full, ring or auto"
	keep_setup
	printf 'watch:\n  mode: ring\n  successors: 0\n' >>"$KEEP_CONFIG"
	run -100 --separate-stderr node-watch --check
	assert_equal "$stderr" "node-watch: fatal: invalid configuration: $KEEP_CONFIG:11: 'successors' in 'watch' out of range 1..16"
	keep_setup
	printf 'watch:\n  mode: ring\n  full_every: 1\n' >>"$KEEP_CONFIG"
	run -100 --separate-stderr node-watch --check
	assert_equal "$stderr" "node-watch: fatal: invalid configuration: $KEEP_CONFIG:11: 'full_every' in 'watch' out of range 2..100"
	keep_setup
	printf 'watch:\n  mode: auto\n  ring_from: 1\n' >>"$KEEP_CONFIG"
	run -100 --separate-stderr node-watch --check
	assert_equal "$stderr" "node-watch: fatal: invalid configuration: $KEEP_CONFIG:11: 'ring_from' in 'watch' out of range 2..1000000"
	keep_setup
	printf 'watch:\n  mode: auto\n  ring_from: 500\n' >>"$KEEP_CONFIG"
	run -0 node-watch --check
	keep_setup
	ring 2 5
	run -0 node-watch --check
	assert_output "configuration OK"
}

@test "fence-ring: a node killed while its watcher lives is fenced within the full-mode bound" {
	# one successor, a listing every 10 periods: n2 watches n3 (ids sort
	# n1 n2 n3); the listings alone could not find n3 before two of them,
	# 10 s apart, showed it unchanged
	ring 1 10
	local n pids
	for n in n1 n2 n3; do
		start_bg "$n" keep-agent --node-id "$n"
	done
	for n in n1 n2 n3; do
		wait_for 30 keep-agent status --node-id "$n"
	done
	# n2 watches from its own live_since + the bound (docs/fencing.md
	# "After the fencer's own lapse"): past that before the kill, so the
	# delay measured is the watch's, not the start's
	watched_past n2 "$(uptime_ms)"
	pids=$(node_pids "$(bg_pid n3)")
	kill -KILL $pids
	wait_for 5 refute_alive $pids
	wait_for 30 node_state n3 fenced
	# n2, its watcher, had it as a candidate (lease-fence's line on n3)
	run -0 grep -E '^[a-z-]+ node=n3 ' "$BATS_TEST_TMPDIR/n2.out"
	# never before written_at + ttl + grace (the fence's own dates)
	d=$(fence_delay n3)
	echo "# n3 fenced $d ms after its last written_at (free at 4500)" >&3
	[ "$d" -ge 4500 ]
	# within the full-mode bound: the candidate goes 1800 ms after the
	# watcher saw the last write, before free_at; the fence at free_at.
	# Tolerance 5000 ms (half of full_every periods, so a fence found by
	# the listings could not pass): the processes' lateness on a loaded
	# 2-core machine
	[ "$d" -le $((4500 + 5000)) ]
	refute_sanitizer_reports
}

@test "fence-ring: a node killed together with its watcher is fenced too (by the node before them, or a listing)" {
	# one successor, a listing every 3 periods: n1 watches n2, n2 watches
	# n3, n3 watches n4, n4 watches n1. n2 and n3 die together: n3's one
	# watcher is gone with it
	ring 1 3
	local n pids
	for n in n1 n2 n3 n4; do
		start_bg "$n" keep-agent --node-id "$n"
	done
	for n in n1 n2 n3 n4; do
		wait_for 30 keep-agent status --node-id "$n"
	done
	watched_past n1 "$(uptime_ms)"
	watched_past n4 "$(uptime_ms)"
	pids="$(node_pids "$(bg_pid n2)") $(node_pids "$(bg_pid n3)")"
	kill -KILL $pids
	wait_for 5 refute_alive $pids
	wait_for 40 node_state n2 fenced
	wait_for 40 node_state n3 fenced
	d2=$(fence_delay n2)
	d3=$(fence_delay n3)
	echo "# n2 fenced $d2 ms, n3 $d3 ms after their last written_at" >&3
	[ "$d2" -ge 4500 ]
	[ "$d3" -ge 4500 ]
	# docs/fencing.md "Ring mode": n1, the live node before the dead run,
	# watches n3 once n2 is a candidate (the ring walk): a candidate within
	# two watch bounds (2 x 3800 ms) of its last write at worst, which
	# issue 28 states as full_every periods (3000 ms) plus the full-mode
	# bound (free_at, 4500): 7500 (3 x full_every periods, 9000, is the
	# listings' bound when no walk happens); the same 5000 ms tolerance as
	# above
	[ "$d3" -le $((3000 + 4500 + 5000)) ]
	# the survivors go on
	run -0 keep-agent status --node-id n1
	run -0 keep-agent status --node-id n4
	refute_sanitizer_reports
}

@test "fence-ring: a node that joins is watched once a listing showed it" {
	# n1 and n3 run; n1 watches n3. n2 joins between them: after the next
	# listing (every 10 periods) n1 watches n2 instead, every period
	ring 1 10
	start_bg n1 lease-write --node-id n1
	start_bg n3 lease-write --node-id n3
	wait_line 20 n1 '^live '
	wait_line 20 n3 '^live '
	start_bg w1 node-watch --node-id n1 --follow
	wait_line 10 w1 '^join node=n3 state=live'
	start_bg n2 lease-write --node-id n2
	wait_line 20 n2 '^live '
	# learned from a listing: up to 10 periods
	wait_line 30 w1 '^join node=n2 state=live'
	# one more period: n1's ring pass has read n2's body (a write seen),
	# and the next one took it: then n2 dies
	watched_past n1 $(($(uptime_ms) + 1000))
	kill -KILL "$(bg_pid n2)"
	wait_line 30 w1 '^stale node=n2 '
	# found by the ring watch, not by the listings: unchanged for the
	# stale bound (1800 ms) when the candidate went, on node-watch's own
	# clock; two listings 10 s apart would have made it 10000 or more
	run -0 grep -m1 '^stale node=n2 ' "$BATS_TEST_TMPDIR/w1.out"
	u=$(echo "$output" | sed -n 's/.* unchanged_ms=\([0-9]*\).*/\1/p')
	echo "# stale after $u ms unchanged" >&3
	[ "$u" -ge 1800 ]
	[ "$u" -lt 10000 ]
	# n3 is no longer watched every period: never a candidate while alive
	run ! grep -q '^stale node=n3 ' "$BATS_TEST_TMPDIR/w1.out"
	refute_sanitizer_reports
}

@test "fence-ring: mode auto watches in full until a listing shows ring_from nodes, then in ring mode" {
	# the choice is the listing's count (keep_watch_choose_mode, unit-tested
	# with its band); ring mode itself runs on both stores above
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: the mode is chosen on the listing's count"
	printf 'watch:\n  mode: auto\n  ring_from: 3\n  successors: 1\n  full_every: 2\n' >>"$KEEP_CONFIG"
	start_bg n1 lease-write --node-id n1
	start_bg n3 lease-write --node-id n3
	wait_line 20 n1 '^live '
	wait_line 20 n3 '^live '
	start_bg w1 node-watch --node-id n1 --follow
	wait_line 10 w1 '^join node=n3 state=live'
	# that listing found 2 nodes: full mode stays (a switch is logged
	# before the pass's lines are printed)
	run -1 grep -c 'watch mode' "$BATS_TEST_TMPDIR/w1.err"
	start_bg n2 lease-write --node-id n2
	wait_line 20 n2 '^live '
	wait_line 10 w1 '^join node=n2 state=live'
	run -0 grep -c 'watch mode' "$BATS_TEST_TMPDIR/w1.err"
	assert_output 1
	run -0 grep 'watch mode' "$BATS_TEST_TMPDIR/w1.err"
	assert_output "node-watch: info: watch mode ring: 3 nodes listed (ring from 3)"
	# in ring mode n1 reads its successor n2 between listings: n2 killed is
	# a candidate from the ring watch
	watched_past n1 $(($(uptime_ms) + 1000))
	kill -KILL "$(bg_pid n2)"
	wait_line 30 w1 '^stale node=n2 '
	refute_sanitizer_reports
}
