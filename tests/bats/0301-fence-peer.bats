#!/usr/bin/env bats
# node-watch --follow | lease-fence --stdin: peers fence a node that stopped
# writing (ADR 0020 §2; docs/fencing.md). fs store and real S3.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000:
# stale after 1000 + 800 unchanged, fence once written_at + 4500 passed.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

INST_A=0123456789abcdef0123456789abcdef

body() { printf 'wasmkeep-node 3\n%s %s\nwritten_at_ms %s\nnode %s\nseq 1\n' "$@"; }
put_obj() {
	local key=$1; shift
	keep-store put "$key" "$@" | sed -n 's/.*outcome=ok version=\([^ ]*\).*/\1/p'
}

# pipeline NAME NODE : node-watch --follow | lease-fence --stdin for NODE,
# through a fifo (every process its own pid, killed by keep_teardown);
# lease-fence's output in NAME.out. A second watcher for NODE, alone,
# writes what the watch prints to NAME-w.out.
pipeline() {
	local n=$1 node=$2 d=$BATS_TEST_TMPDIR
	mkfifo "$d/$n.fifo"
	start_bg "$n" sh -c "exec lease-fence --node-id $node --stdin < '$d/$n.fifo'"
	start_bg "$n-p" sh -c "exec node-watch --node-id $node --follow > '$d/$n.fifo'"
	start_bg "$n-w" node-watch --node-id $node --follow
}

@test "fence-peer: a node killed with SIGKILL is fenced by a peer after the bound; it stays fenced" {
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	wait_line 20 n1 '^live '
	wait_line 20 n2 '^live '
	pipeline f2 n2
	wait_line 10 f2-w '^join node=n1 state=live'
	# n1 keeps renewing: never a candidate while it does. Watched past the
	# stale bound (period + attempt, 1800 ms, from the join) on n2's clock
	watched_past n2 $(($(uptime_ms) + 1800))
	run ! grep -q '^stale ' "$BATS_TEST_TMPDIR/f2-w.out"
	kill -KILL "$(bg_pid n1)"
	wait_line 20 f2 '^fenced node=n1 '
	run -0 grep '^fenced node=n1 ' "$BATS_TEST_TMPDIR/f2.out"
	w=$(echo "$output" | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p')
	assert_output --regexp "free_at_ms=$((w + 4500)) decided_mono_ms=[0-9]+ live_since_mono_ms=[0-9]+\$"
	run -0 keep-store get nodes/n1
	assert_line "fenced_by n2"
	assert_line "written_at_ms $w"
	wait_line 10 f2-w '^change node=n1 state=fenced'
	run -0 node-watch --once
	assert_line --regexp '^node id=n1 state=fenced '
	assert_line --regexp '^node id=n2 state=live '
	bg_running n2
	refute_sanitizer_reports
}

@test "fence-peer: a peer whose lease is not valid fences nobody" {
	now=$(now_ms)
	body live $INST_A $((now - 10000)) n1 | put_obj nodes/n1 --if-none-match >/dev/null
	run -0 --separate-stderr lease-fence --node-id n2 --stdin \
		<<<"stale node=n1 instance=$INST_A written_at_ms=$((now - 10000)) unchanged_ms=2000"
	assert_output --regexp '^skipped node=n1 .*reason="own lease not valid"$'
	run -0 keep-store get nodes/n1
	assert_line --index 1 "live $INST_A"
}

@test "fence-peer: bad input lines are reported and skipped; other node-watch lines ignored" {
	start_bg n2 lease-write --node-id n2
	wait_line 20 n2 '^live '
	fencer_ready n2
	now=$(now_ms)
	w=$((now - 10000))
	body live $INST_A $w n1 | put_obj nodes/n1 --if-none-match >/dev/null
	run -0 --separate-stderr lease-fence --node-id n2 --stdin <<EOF
join node=n1 state=live instance=$INST_A written_at_ms=$w format=3
stale node=n1 instance=nothex written_at_ms=$w
stale node=n1 written_at_ms=$w
garbage here
stale node=n1 instance=$INST_A written_at_ms=$w bogus=1
stale node=n1 instance=$INST_A written_at_ms=$w unchanged_ms=1800
EOF
	assert_output --regexp "^fenced node=n1 instance=$INST_A written_at_ms=$w free_at_ms=$((w + 4500)) decided_mono_ms=[0-9]+ live_since_mono_ms=[0-9]+\$"
	[ "$(grep -c 'skipped' <<<"$stderr")" -eq 4 ]
	refute_sanitizer_reports
}

@test "fence-peer: not yet past written_at + ttl + grace: not-yet, nothing written" {
	start_bg n2 lease-write --node-id n2
	wait_line 20 n2 '^live '
	fencer_ready n2
	# dated 20 s ahead: free 24.5 s from now, however slowly a loaded
	# machine starts the commands below (dated now, lease-fence once came
	# past the 4.5 s and fenced)
	now=$(($(now_ms) + 20000))
	v=$(body live $INST_A "$now" n1 | put_obj nodes/n1 --if-none-match)
	run -0 lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST_A written_at_ms=$now"
	assert_output "not-yet node=n1 instance=$INST_A written_at_ms=$now free_at_ms=$((now + 4500))"
	run -0 keep-store stat nodes/n1
	assert_output --partial "version=$v"
	# and a stale line that no longer matches the object: rewatch
	run -0 lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST_A written_at_ms=$((now - 1000))"
	assert_output --regexp '^rewatch node=n1 .*reason=changed$'
}

@test "fence-peer: a fence decided on a stale read is refused by its condition (the node wrote in between)" {
	keep_setup 9000 4500 1800 300 1000 # attempts bounded by 2400 ms
	start_bg n2 lease-write --node-id n2
	wait_line 30 n2 '^live '
	fencer_ready n2 3400
	now=$(now_ms)
	w=$((now - 20000))
	v1=$(body live $INST_A $w n1 | put_obj nodes/n1 --if-none-match)
	# the fence's PUT is held after its GET decided, until n1 has renewed
	# (the fault file's hold: no timing guess; with a 1500 ms delay, a
	# loaded machine started the renewal's keep-store after the fence had
	# landed)
	echo "put nodes/n1 hold $BATS_TEST_TMPDIR/go count=1" >"$FAULT_FILE"
	echo "stale node=n1 instance=$INST_A written_at_ms=$w" >"$BATS_TEST_TMPDIR/in"
	start_bg f env KEEP_FAULT_LOG=1 sh -c "exec lease-fence --node-id n2 --stdin < '$BATS_TEST_TMPDIR/in'"
	wait_for 30 grep -q '^keep-fault: put nodes/n1 hold ' "$BATS_TEST_TMPDIR/f.err"
	# n1 renews meanwhile, If-Match its version
	v2=$(body live $INST_A $((w + 1)) n1 | put_obj nodes/n1 --if-match "$v1")
	[ -n "$v2" ]
	touch "$BATS_TEST_TMPDIR/go"
	run wait_exit 10 f
	[ "$output" = 0 ]
	run -0 cat "$BATS_TEST_TMPDIR/f.out"
	assert_output "alive node=n1 instance=$INST_A written_at_ms=$w reason=wrote"
	grep -q 'fence of nodes/n1: conflict' "$BATS_TEST_TMPDIR/f.err"
	run -0 keep-store get nodes/n1
	assert_line --index 1 "live $INST_A"
	assert_line --index 2 "written_at_ms $((w + 1))"
}

@test "fence-peer: two peers fencing the same node at once: one lands, the other reports already-fenced" {
	start_bg n2 lease-write --node-id n2
	start_bg n3 lease-write --node-id n3
	wait_line 20 n2 '^live '
	wait_line 20 n3 '^live '
	fencer_ready n2
	fencer_ready n3
	now=$(now_ms)
	w=$((now - 10000))
	body live $INST_A $w n1 | put_obj nodes/n1 --if-none-match >/dev/null
	echo "stale node=n1 instance=$INST_A written_at_ms=$w" >"$BATS_TEST_TMPDIR/in"
	# both fences held 500 ms after their reads: both condition on one version
	echo 'put nodes/n1 delay 500 count=2' >"$FAULT_FILE"
	start_bg a sh -c "exec lease-fence --node-id n2 --stdin < '$BATS_TEST_TMPDIR/in'"
	start_bg b sh -c "exec lease-fence --node-id n3 --stdin < '$BATS_TEST_TMPDIR/in'"
	[ "$(wait_exit 10 a)" = 0 ]
	[ "$(wait_exit 10 b)" = 0 ]
	cat "$BATS_TEST_TMPDIR"/a.out "$BATS_TEST_TMPDIR"/b.out
	[ "$(cat "$BATS_TEST_TMPDIR"/a.out "$BATS_TEST_TMPDIR"/b.out | grep -c '^fenced node=n1 ')" -eq 1 ]
	[ "$(cat "$BATS_TEST_TMPDIR"/a.out "$BATS_TEST_TMPDIR"/b.out | grep -c '^already-fenced node=n1 ')" -eq 1 ]
	run -0 keep-store get nodes/n1
	assert_line --index 1 "fenced $INST_A"
	refute_sanitizer_reports
}

@test "fence-peer: an old-format heartbeat is never a candidate and never fenced" {
	start_bg n2 lease-write --node-id n2
	wait_line 20 n2 '^live '
	now=$(now_ms)
	w=$((now - 100000))
	printf 'wasmkeep-node 2\nnode n5\nwritten_at_ms %s\n' $w | put_obj nodes/n5 --if-none-match >/dev/null
	pipeline f2 n2
	wait_line 10 f2-w '^join node=n5 state=old-retired instance=- written_at_ms=[0-9]+ format=2$'
	# watched for more than stale-after plus a few periods: no candidate
	watched_past n2 $(($(uptime_ms) + 4000))
	run ! grep -q '^stale node=n5' "$BATS_TEST_TMPDIR/f2-w.out"
	# fed by hand, it is still refused on the fresh read
	run -0 lease-fence --node-id n2 --stdin <<<"stale node=n5 instance=$INST_A written_at_ms=$w"
	assert_output --regexp '^rewatch node=n5 .*reason=old-format$'
	run -0 keep-store get nodes/n5
	assert_line --index 0 "wasmkeep-node 2"
}

@test "fence-peer: after a store outage longer than the ttl no node fences another before renewing" {
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	wait_line 20 n1 '^live '
	wait_line 20 n2 '^live '
	pipeline f1 n1
	pipeline f2 n2
	wait_line 10 f1-w '^join node=n2 '
	wait_line 10 f2-w '^join node=n1 '
	echo '* * fail' >"$FAULT_FILE"
	wait_line 10 n1 '^ran-out '
	wait_line 10 n2 '^ran-out '
	t_end=$(($(now_ms) + 4000)) # outage: ttl + 1 s in all
	wait_for 10 sh -c "[ \$((\$(date +%s%N) / 1000000)) -ge $t_end ]"
	: >"$FAULT_FILE"
	wait_line 10 n1 '^recovered '
	wait_line 10 n2 '^recovered '
	# watch for well over stale-after + the fence bound: both watchers
	# listed past it (their own clock), and both fencers read what came
	b=$(($(uptime_ms) + 6000))
	watched_past n1 "$b"
	watched_past n2 "$b"
	wait_for 10 state_mono_ge n1 fence $((b + 1800))
	wait_for 10 state_mono_ge n2 fence $((b + 1800))
	# nobody is fenced: each node renewed before it could judge the other, and
	# both came back within a watch period of each other (ran-out retries are
	# at most half a write period apart). A `stale` candidate alone writes
	# nothing, so only fences are counted here.
	run ! grep -qE '^fenced ' "$BATS_TEST_TMPDIR/f1.out" "$BATS_TEST_TMPDIR/f2.out"
	bg_running n1
	bg_running n2
	run -0 node-watch --once
	assert_line --regexp '^node id=n1 state=live '
	assert_line --regexp '^node id=n2 state=live '
	refute_sanitizer_reports
}
