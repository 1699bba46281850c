#!/usr/bin/env bats
# upgrade-mark guard: the start guard (ADR 0020 §6).
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, skew 300, period 1000; --horizon-ms 0:
# an old heartbeat is stale 4500 after its written_at; one dated ahead lapses
# 4800 after the guard first read it; listings every 500.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

# put_old_hb NODE FORMAT WRITTEN_AT_MS : an old-format heartbeat (unconditional, as old binaries write)
put_old_hb() {
	printf 'wasmkeep-node %s\nnode %s\nwritten_at_ms %s\nhost old-host\n' "$2" "$1" "$3" |
		keep-store put "nodes/$1" >/dev/null
}

@test "upgrade-mark guard: passes at once with no old heartbeat (format-3 nodes do not count)" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	run -0 --separate-stderr upgrade-mark guard
	[ "$output" = "pass old=0" ]
	# a stale old heartbeat does not hold it up either
	put_old_hb old1 1 $(( $(now_ms) - 600000 ))
	run -0 --separate-stderr upgrade-mark guard
	[ "$output" = "pass old=1" ]
	refute_sanitizer_reports
}

# lines_ge NAME REGEX N : NAME's stdout has at least N lines matching REGEX
lines_ge() { [ "$(grep -cE -- "$2" "$BATS_TEST_TMPDIR/$1.out")" -ge "$3" ]; }

@test "upgrade-mark guard: waits for a fresh old heartbeat, passes once it is stale" {
	w=$(( $(now_ms) - 1000 ))
	put_old_hb old1 2 $w
	t0=$(now_ms)
	start_bg guard upgrade-mark --horizon-ms 0 guard
	wait_line 5 guard "^wait node=old1 format=2 written_at_ms=$w left_ms=[0-9]+$"
	# a later pass still waits (each pass prints its wait line)
	wait_for 10 lines_ge guard '^wait ' 2
	bg_running guard
	run wait_exit 10 guard
	[ "$output" = 0 ]
	t1=$(now_ms)
	# stale at w + 4500: about 3500 after the start
	[ $((t1 - t0)) -ge 3000 ]
	[ "$(tail -n 1 "$BATS_TEST_TMPDIR/guard.out")" = "pass old=1" ]
	[ "$(grep -c '^wait ' "$BATS_TEST_TMPDIR/guard.out")" -ge 3 ]
	grep -q 'ms left' "$BATS_TEST_TMPDIR/guard.err"
	# the default horizon (10 s) holds a heartbeat 6 s old
	put_old_hb old1 2 $(( $(now_ms) - 6000 ))
	start_bg guard2 upgrade-mark guard
	wait_line 5 guard2 '^wait node=old1 '
	wait_for 10 lines_ge guard2 '^wait ' 2
	bg_running guard2
	refute_sanitizer_reports
}

@test "upgrade-mark guard: an old heartbeat rewritten between listings means an old node runs: exit 16" {
	put_old_hb old1 2 $(now_ms)
	start_bg guard upgrade-mark --horizon-ms 0 guard
	wait_line 5 guard '^wait node=old1 '
	w2=$(now_ms)
	put_old_hb old1 2 $w2
	run wait_exit 5 guard
	[ "$output" = 16 ]
	grep -Eq "^old-running node=old1 written_at_ms=$w2 previous_written_at_ms=[0-9]+$" "$BATS_TEST_TMPDIR/guard.out"
	grep -q "fatal: an old (per-actor lease) node is running: 'nodes/old1' was rewritten" "$BATS_TEST_TMPDIR/guard.err"
	# even a stale one that is rewritten (its writer came back)
	put_old_hb old2 1 $(( $(now_ms) - 600000 ))
	keep-store del --force nodes/old1 >/dev/null
	start_bg g2 upgrade-mark --horizon-ms 0 guard
	run wait_exit 5 g2
	[ "$output" = 0 ]
	refute_sanitizer_reports
}

@test "upgrade-mark guard: a future-dated old heartbeat lapses on the guard's own count, with a warning naming it" {
	put_old_hb old1 1 $(( $(now_ms) + 3600000 ))
	t0=$(now_ms)
	start_bg guard upgrade-mark --horizon-ms 0 guard
	wait_line 5 guard '^wait node=old1 format=1 '
	run wait_exit 15 guard
	[ "$output" = 0 ]
	t1=$(now_ms)
	# horizon + ttl + grace + max_skew = 4800 after the first read
	# (tolerance for the upper bound: 12 s, room for a loaded machine; a
	# guard that trusted the future date would wait an hour)
	[ $((t1 - t0)) -ge 4500 ]
	[ $((t1 - t0)) -lt 12000 ]
	grep -q "old-format heartbeat 'nodes/old1' is dated in the future" "$BATS_TEST_TMPDIR/guard.err"
	[ "$(tail -n 1 "$BATS_TEST_TMPDIR/guard.out")" = "pass old=1" ]
	refute_sanitizer_reports
}

@test "upgrade-mark guard: a node that cannot be read holds the guard; bad flags are usage errors" {
	put_old_hb old1 2 $(( $(now_ms) - 600000 ))
	echo "get nodes/old1 fail" >"$FAULT_FILE"
	start_bg guard env KEEP_FAULT_LOG=1 upgrade-mark --horizon-ms 0 guard
	# two passes could not read it (each read's fault is logged): it holds
	wait_for 10 sh -c "[ \$(grep -c '^keep-fault: get nodes/old1 fail' '$BATS_TEST_TMPDIR/guard.err') -ge 2 ]"
	bg_running guard
	: >"$FAULT_FILE"
	run wait_exit 5 guard
	[ "$output" = 0 ]
	run -100 --separate-stderr upgrade-mark --horizon-ms x guard
	run -100 --separate-stderr upgrade-mark guard extra
	run -0 upgrade-mark --check
	[ "$output" = "configuration OK" ]
}

@test "upgrade-mark guard: a listing that fails for now is tried again half a period later, 10 times in a row at most (111)" {
	# the guard's retry rule (keep_guard_on_list_failure, KEEP_GUARD_LIST_FAILURES)
	echo 'list nodes/ fail' >"$FAULT_FILE"
	KEEP_FAULT_LOG=1 run -111 --separate-stderr timeout 60 upgrade-mark guard
	assert_output ""
	[ "$(grep -c '^keep-fault: list nodes/ fail' <<<"$stderr")" -eq 10 ]
	[[ $stderr == *"giving up after 10 failed listings of nodes/"* ]]
	refute_sanitizer_reports
}
