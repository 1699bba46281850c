#!/usr/bin/env bats
# upgrade-mark forget: delete retired old-format heartbeats once stale by
# the start guard's test; never a format-3 object, never a fresh one
# (ADR 0020 §2 "forget", §6). Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 3000, grace 1500; --horizon-ms 0: stale 4500 after written_at.

load helpers/common
load helpers/clock

setup() { keep_setup; }
teardown() { keep_teardown; }

put_old_hb() {
	printf 'wasmkeep-node %s\nnode %s\nwritten_at_ms %s\nhost old-host\n' "$2" "$1" "$3" |
		keep-store put "nodes/$1" >/dev/null
}

@test "upgrade-mark forget NODE: deletes a stale old-format heartbeat only" {
	now=$(now_ms)
	put_old_hb stale1 1 $((now - 600000))
	put_old_hb fresh2 2 $((now - 1000))
	run -0 --separate-stderr upgrade-mark --horizon-ms 0 forget stale1
	[ "$output" = "forgot node=stale1 format=1 written_at_ms=$((now - 600000))" ]
	run -1 keep-store stat nodes/stale1
	# (a horizon of 20 s: fresh for 24.5 s after its written_at, whatever
	# the four commands before take on a loaded machine; with 0, 3.5 s
	# was not always enough)
	run -1 --separate-stderr upgrade-mark --horizon-ms 20000 forget fresh2
	[[ "$output" =~ ^kept\ node=fresh2\ reason=fresh\ format=2\ written_at_ms=$((now - 1000))\ left_ms=[0-9]+$ ]]
	run -0 keep-store stat nodes/fresh2
	# the default horizon (10 s) keeps one 6 s old
	put_old_hb mid3 2 $(($(now_ms) - 6000)) # (6 s old now, not at the test's start)
	run -1 upgrade-mark forget mid3
	[[ "$output" == "kept node=mid3 reason=fresh "* ]]
	# dated ahead: forget has no count of it, it stays
	put_old_hb ahead4 2 $((now + 3600000))
	run -1 upgrade-mark --horizon-ms 0 forget ahead4
	[[ "$output" == "kept node=ahead4 reason=fresh "* ]]
	run -0 --separate-stderr upgrade-mark forget nobody
	[ "$output" = "absent node=nobody" ]
	[[ "$stderr" == *"nodes/nobody does not exist: nothing to forget"* ]]
	refute_sanitizer_reports
}

@test "upgrade-mark forget: never a format-3 object, whatever its state or age" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	run -1 --separate-stderr upgrade-mark --horizon-ms 0 forget n1
	[ "$output" = "kept node=n1 reason=format-3" ]
	kill -TERM "$(bg_pid n1)"
	run wait_exit 10 n1
	[ "$output" = 0 ]
	# released, its written_at aged past horizon + ttl + grace (the clock
	# shim: upgrade-mark's wall clock 10 s ahead): still never deleted
	shim_set p realtime_ms=10000
	run -1 --separate-stderr shimmed p upgrade-mark --horizon-ms 0 forget n1
	[ "$output" = "kept node=n1 reason=format-3" ]
	# a peer's fence: a process wrote, never deleted
	run -0 lease-fence --create n9
	keep-store get nodes/n9 | sed 's/^fenced_by operator$/fenced_by n2/' |
		keep-store put nodes/n9 --if-match "$(keep-store stat nodes/n9 | sed 's/.* version=//')" >/dev/null
	run -1 --separate-stderr upgrade-mark --horizon-ms 0 forget n9
	[ "$output" = "kept node=n9 reason=format-3" ]
	printf 'something else\n' | keep-store put nodes/x1 >/dev/null
	run -17 --separate-stderr upgrade-mark --horizon-ms 0 forget x1
	[ "$output" = "kept node=x1 reason=bad-object" ]
	run -0 keep-store stat nodes/n1
	run -0 keep-store stat nodes/n9
	run -0 keep-store stat nodes/x1
}

@test "upgrade-mark forget --stale: deletes every stale old-format heartbeat and nothing else" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	now=$(now_ms)
	put_old_hb s1 1 $((now - 600000))
	put_old_hb s2 2 $((now - 90000))
	# fresh: younger than ttl + grace (4.5 s); dated ahead so that it
	# stays fresh through a loaded machine's puts (dated now - 500 it was
	# forgotten at a load of 10)
	put_old_hb f3 2 $((now + 20000))
	printf 'not ours\n' | keep-store put nodes/x4 >/dev/null
	run -0 --separate-stderr upgrade-mark --horizon-ms 0 forget --stale
	assert_line "forgot node=s1 format=1 written_at_ms=$((now - 600000))"
	assert_line "forgot node=s2 format=2 written_at_ms=$((now - 90000))"
	assert_line --partial "kept node=f3 reason=fresh "
	assert_line "kept node=x4 reason=bad-object"
	[ "${#lines[@]}" -eq 4 ]
	run -0 keep-store list nodes/
	[ "$(printf '%s\n' "$output" | sed -n 's/^object key=\([^ ]*\).*/\1/p' | tr '\n' ' ')" = "nodes/f3 nodes/n1 nodes/x4 " ]
	# the node lease is untouched and still renewing
	run -0 lease-status --node-id n1
	# nothing left to forget: a quiet no-op
	put_old_hb f3 2 $((now - 600000))
	run -0 --separate-stderr upgrade-mark --horizon-ms 0 forget --stale
	echo "$output"
	[ "$output" = "$(printf 'forgot node=f3 format=2 written_at_ms=%s\nkept node=x4 reason=bad-object' $((now - 600000)))" ]
	run -100 --separate-stderr upgrade-mark forget
	run -100 --separate-stderr upgrade-mark forget --stale n1
	refute_sanitizer_reports
}
