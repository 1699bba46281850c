#!/usr/bin/env bats
# The fenced commit against the classic hole (issue 26 acceptance; M.
# Kleppmann, "How to do distributed locking"): a holder paused between its
# grant check and its write publishes nothing once the next holder wrote
# its fence. The store's condition refuses the late write, not a check.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE); the
# write is held by the fault file's `hold PATH` (docs/store.md), released
# by the test once the next holder committed: no timing guess.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/owner

setup() { keep_setup; }
teardown() { keep_teardown; }

obj_version() { keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p'; }

# fence_n1 : the operator fences n1 (retried while a renewal of n1 lands in
# between: lease-fence refuses then), and n1's lease-write ends: exit 10
fence_n1() {
	local i
	for i in 1 2 3 4 5; do
		lease-fence n1 >>"$BATS_TEST_TMPDIR/fence.out" 2>&1 && break
		[ "$i" -lt 5 ] || return 1
	done
	[ "$(wait_exit 15 n1)" = 10 ]
}

# kleppmann N2DATA : n1 holds t/c/a at 1 and has committed "A"; its next
# commit ("B") is held after its grant checks; n1 is fenced; n2 acquires
# generation 2, claims and commits N2DATA; n1's write is then sent: refused
# by the store's condition (a conflict), n1 answers fenced generation=2 (23).
kleppmann() {
	local d=$BATS_TEST_TMPDIR v1 v2
	printf A >"$d/a"
	printf B >"$d/b"
	printf '%s' "$1" >"$d/n2"
	start_node n1 n1
	start_node n2 n2
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 --separate-stderr owner-commit --node-id n1 t/c/a 1 app/state <"$d/a"
	v1=$(field version)
	# n1's next commit: its PUT waits for $d/go, after both grant checks
	echo "put app/state hold $d/go count=1" >"$FAULT_FILE"
	start_bg c1 env KEEP_FAULT_LOG=1 sh -c 'exec owner-commit --node-id n1 --stats t/c/a 1 app/state <"$1"' _ "$d/b"
	wait_for 30 grep -q '^keep-fault: put app/state hold ' "$d/c1.err"
	bg_running c1
	# n1 is fenced; n2 takes the key at generation 2 (once the fence frees
	# it), claims the object and commits
	fence_n1
	owner-acquire --node-id n2 --wait=30s t/c/a >"$d/acq2.out"
	run -0 tail -n 1 "$d/acq2.out"
	[[ "$output" == "acquired key=t/c/a generation=2 "* ]]
	run -0 --separate-stderr owner-commit --node-id n2 --claim t/c/a 2 app/state
	[[ "$output" == "claimed key=t/c/a generation=2 object=app/state version="*" previous=1" ]]
	run -0 --separate-stderr owner-commit --node-id n2 t/c/a 2 app/state <"$d/n2"
	v2=$(field version)
	[ "$v2" != "$v1" ]
	# n1's held write goes now: the store refuses it, n1 reads the fence of 2
	touch "$d/go"
	run wait_exit 30 c1
	[ "$output" = 23 ]
	run -0 cat "$d/c1.out"
	[ "$output" = "refused key=t/c/a object=app/state reason=fenced generation=2" ]
	# it was sent and refused by the condition: one PUT, one conflict
	run -0 grep '^stats ' "$d/c1.err"
	[[ "$output" == "stats requests=3 get=2 head=0 put=1 delete=0 list=0 ok=2 conflict=1 "* ]]
	# the object holds n2's bytes and fence, at n2's version
	[ "$(obj_version app/state)" = "$v2" ]
	owner-commit --get app/state >"$d/got" 2>"$d/fence"
	cmp "$d/n2" "$d/got"
	run -0 cat "$d/fence"
	[[ "$output" == "fence object=app/state key=t/c/a generation=2 version=$v2 "* ]]
	refute_sanitizer_reports
}

@test "Kleppmann: n1's write held past its fence is refused when it is sent; n2 committed other bytes" {
	kleppmann C
}

@test "Kleppmann, the ETag trap: n2 commits the very bytes n1 had committed; n1's late write is refused all the same" {
	# with S3's tokens (the MD5 of the body) a fence kept in metadata only
	# would leave n2's object at n1's version: the fence is in the body
	kleppmann A
}

@test "a lost reply whose write landed is read back: committed (the object names the generation and carries these bytes)" {
	local d=$BATS_TEST_TMPDIR
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf before >"$d/a"
	printf after >"$d/b"
	run -0 owner-commit --node-id n1 t/c/a 1 app/state <"$d/a"
	echo "put app/state lose count=1" >"$FAULT_FILE"
	run -0 --separate-stderr owner-commit --node-id n1 --stats t/c/a 1 app/state <"$d/b"
	[[ "$output" =~ ^committed\ key=t/c/a\ generation=1\ object=app/state\ version=[^\ ]+$ ]]
	v=$(field version)
	# the PUT landed and its reply was lost; the read-back found it
	[[ "$stderr" == *"stats requests=3 get=2 head=0 put=1 delete=0 list=0 ok=2 conflict=0 not_found=0 refused=0 ambiguous=1 "* ]]
	[ "$(obj_version app/state)" = "$v" ]
	[ "$(owner-commit --get app/state 2>/dev/null)" = after ]
	# a lost reply whose write did not land (not sent): written again
	echo "put app/state fail count=1" >"$FAULT_FILE"
	printf again >"$d/c"
	run -0 --separate-stderr owner-commit --node-id n1 --stats t/c/a 1 app/state <"$d/c"
	[[ "$stderr" == *"stats requests=4 get=2 head=0 put=2 "* ]]
	[ "$(owner-commit --get app/state 2>/dev/null)" = again ]
	refute_sanitizer_reports
}
