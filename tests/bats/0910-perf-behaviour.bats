#!/usr/bin/env bats
# Performance changes, checked for behaviour only (no timed assertion;
# docs/performance.md has the measurements): request accounting (--stats,
# keep_store_requests_total), node-watch reading only what changed,
# lease-fence deciding a not-yet again at free_at_ms, owner-acquire and
# owner-release --jobs. fs store and real S3.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

INST_A=0123456789abcdef0123456789abcdef

body() { printf 'wasmkeep-node 3\n%s %s\nwritten_at_ms %s\nnode %s\nseq 1\n' "$@"; }
# sfield NAME FIELD : FIELD= of the stats line in NAME.err
sfield() { sed -n "s/^stats .* $2=\([0-9]*\).*/\1/p" "$BATS_TEST_TMPDIR/$1.err" | tail -n 1; }
# metric OP : keep_store_requests_total{op=OP,outcome=ok} in node-watch's file
metric() {
	sed -n "s/^keep_store_requests_total{node=\"[^\"]*\",op=\"$1\",outcome=\"ok\"} \([0-9]*\)\$/\1/p" \
		"$BATS_TEST_TMPDIR/keep.node-watch.prom" 2>/dev/null
}
lists_ge() { [ "$(metric list)" -ge "$1" ] 2>/dev/null; }
with_metrics() { printf 'metrics:\n  textfile: %s/keep.prom\n' "$BATS_TEST_TMPDIR" >>"$KEEP_CONFIG"; }
STATS_RE='^stats requests=[0-9]+ get=[0-9]+ head=[0-9]+ put=[0-9]+ delete=[0-9]+ list=[0-9]+ ok=[0-9]+ conflict=[0-9]+ not_found=[0-9]+ refused=[0-9]+ ambiguous=[0-9]+ prog='

@test "node-watch: nodes whose listed token keeps changing are not read again; a node that stops writing is" {
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	start_bg n3 lease-write --node-id n3
	wait_line 30 n1 '^live '
	wait_line 30 n2 '^live '
	wait_line 30 n3 '^live '
	with_metrics
	start_bg w node-watch --node-id n1 --follow --stats
	wait_line 10 w '^join node=n3 '
	wait_for 20 lists_ge 7
	kill -TERM "$(bg_pid w)"
	run wait_exit 10 w
	[ "$output" = 0 ]
	run -0 grep -E "${STATS_RE}node-watch\$" "$BATS_TEST_TMPDIR/w.err"
	list=$(sfield w list)
	get=$(sfield w get)
	[ "$list" -ge 7 ]
	# the ADR's listing would have read 3 bodies a pass (3 x list); here
	# the joins' 3, and a read only where two listings caught no write
	[ "$get" -ge 3 ]
	[ "$get" -lt "$list" ]
	[ "$(sfield w put)" = 0 ]
	run ! grep -q '^stale ' "$BATS_TEST_TMPDIR/w.out"

	# n3 stops writing: it is read at every pass from then on
	kill -KILL "$(bg_pid n3)"
	start_bg w2 node-watch --node-id n1 --follow --stats
	wait_line 10 w2 '^stale node=n3 '
	kill -TERM "$(bg_pid w2)"
	run wait_exit 10 w2
	[ "$output" = 0 ]
	[ "$(sfield w2 get)" -ge 4 ] # 3 joins, then n3 again
	run -0 grep -c '^stale node=n3 ' "$BATS_TEST_TMPDIR/w2.out"
	run ! grep -qE '^stale node=n[12] ' "$BATS_TEST_TMPDIR/w2.out"
	refute_sanitizer_reports
}

@test "node-watch: a fenced node's change is still reported, then its unchanged fence is not read again" {
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	wait_line 30 n1 '^live '
	wait_line 30 n2 '^live '
	with_metrics
	start_bg w node-watch --node-id n1 --follow
	wait_line 10 w '^join node=n2 state=live'
	kill -KILL "$(bg_pid n2)"
	run -0 lease-fence n2
	wait_line 10 w '^change node=n2 state=fenced '
	l=$(metric list)
	wait_for 10 lists_ge $((l + 1))
	g1=$(metric get)
	wait_for 10 lists_ge $((l + 5))
	g2=$(metric get)
	# n1 renews (a new token at each listing), n2's fence stays: no read,
	# bar one of n1 should a listing fall between two of its writes
	[ "$g2" -le $((g1 + 1)) ]
	refute_sanitizer_reports
}

@test "lease-fence --stdin: a not-yet is decided again on a fresh read when free_at_ms passes; --stats counts it" {
	start_bg n2 lease-write --node-id n2
	wait_line 30 n2 '^live '
	fencer_ready n2
	w=$(($(now_ms) - 2000)) # free at w + 4500: in about 2.5 s
	body live $INST_A $w n1 | keep-store put nodes/n1 --if-none-match >/dev/null
	mkfifo "$BATS_TEST_TMPDIR/in"
	start_bg f sh -c "exec lease-fence --node-id n2 --stdin --stats <'$BATS_TEST_TMPDIR/in'"
	# one stale line, and the input kept open
	start_bg feed sh -c "exec 3>'$BATS_TEST_TMPDIR/in'; echo 'stale node=n1 instance=$INST_A written_at_ms=$w' >&3; exec sleep 60"
	wait_line 10 f '^not-yet node=n1 '
	wait_line 10 f '^fenced node=n1 '
	run -0 cat "$BATS_TEST_TMPDIR/f.out"
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "not-yet node=n1 instance=$INST_A written_at_ms=$w free_at_ms=$((w + 4500))" ]
	[[ "${lines[1]}" =~ ^fenced\ node=n1\ instance=$INST_A\ written_at_ms=$w\ free_at_ms=$((w + 4500))\ decided_mono_ms=[0-9]+\ live_since_mono_ms=[0-9]+$ ]]
	run -0 keep-store get nodes/n1
	assert_line "fenced_by n2"
	kill -TERM "$(bg_pid f)"
	run wait_exit 10 f
	[ "$output" = 0 ]
	run -0 grep -E "${STATS_RE}lease-fence\$" "$BATS_TEST_TMPDIR/f.err"
	[ "$(sfield f get)" = 2 ]
	[ "$(sfield f put)" = 1 ]
	refute_sanitizer_reports
}

@test "owner-acquire --jobs: every key answered once, a key given twice is one hold; owner-release --jobs releases them; --stats" {
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	for i in $(seq 1 40); do echo "t/c/a$i"; done >"$BATS_TEST_TMPDIR/keys"
	{ cat "$BATS_TEST_TMPDIR/keys"; head -n 10 "$BATS_TEST_TMPDIR/keys"; } >"$BATS_TEST_TMPDIR/keys2"
	run -0 --separate-stderr owner-acquire --node-id n1 --jobs 8 --stats <"$BATS_TEST_TMPDIR/keys2"
	[ "$(grep -c '^acquired ' <<<"$output")" = 50 ]
	# one generation per key: the second answer is the same grant
	[ "$(sed -n 's/^acquired key=\([^ ]*\) generation=1 .*/\1/p' <<<"$output" | sort -u | wc -l)" = 40 ]
	[ "$(grep -c ' new=no$' <<<"$output")" = 10 ]
	[ "$(ls "$STATE_DIR/n1/holds" | wc -l)" = 40 ]
	[[ "$stderr" =~ stats\ requests=[0-9]+\ get=[0-9]+\ .*\ prog=owner-acquire$ ]]
	run -0 keep-store get owners/t/c/a7
	assert_line "generation 1"

	run -1 --separate-stderr owner-release --node-id n1 --jobs 8 --stats <"$BATS_TEST_TMPDIR/keys2"
	[ "$(grep -c '^released ' <<<"$output")" = 40 ]
	[ "$(grep -c '^none ' <<<"$output")" = 10 ]
	[[ "$stderr" =~ stats\ requests=40\ get=0\ head=0\ put=40\ .*\ prog=owner-release$ ]]
	[ "$(ls "$STATE_DIR/n1/holds" | wc -l)" = 0 ]
	run -100 owner-acquire --node-id n1 --jobs 33 </dev/null
	run -100 owner-release --node-id n1 --jobs 0 </dev/null
	refute_sanitizer_reports
}
