#!/usr/bin/env bats
# Native clusters (issue 16 item 6; docs/upgrade.md "Native clusters"): a
# bucket that never held leases/, wal/ or snapshot/ objects is marked once
# by `upgrade-mark native` (the object `cluster`, If-None-Match); a new
# actor then costs 2 requests (its record's read and creation; the cluster
# object is read once a process) instead of the leases/ marker path. A
# bucket with an old object is refused and keeps the full path of ADR
# 0020 §6; a garbled cluster object is named and taken as not native.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).

load helpers/common
load helpers/foreign

setup() { keep_setup; }
teardown() { keep_teardown; }

live_n1() {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
}
# stats_of : the `stats` line of the last `run --separate-stderr owner-acquire --stats`
stats_of() { grep '^stats ' <<<"$stderr"; }

@test "native: upgrade-mark native marks an empty bucket once; a new actor costs 2 requests, no leases/ marker" {
	run -0 --separate-stderr upgrade-mark native
	assert_output --regexp '^native written_at_ms=[0-9]+ action=created$'
	run -0 keep-store get cluster
	assert_output --regexp $'^wasmkeep-cluster 1\nformat native\nwritten_at_ms [0-9]+$'
	run -0 --separate-stderr upgrade-mark native
	assert_output --regexp '^native written_at_ms=[0-9]+ action=existing$'
	live_n1
	# 3 new actors: the cluster object once, then a read and a create each
	run -0 --separate-stderr owner-acquire --node-id n1 --stats t/c/a t/c/b t/c/c
	[ "${#lines[@]}" -eq 3 ]
	assert_line --index 0 --regexp '^acquired key=t/c/a generation=1 .*new=yes'
	[[ "$(stats_of)" == "stats requests=7 get=4 head=0 put=3 delete=0 list=0 "* ]] || { echo "$stderr"; false; }
	run -0 keep-store list leases/
	assert_output ""
	# released and acquired again: 2 requests a key, as before
	run -0 owner-release --node-id n1 t/c/a
	run -0 --separate-stderr owner-acquire --node-id n1 --stats t/c/a
	assert_output --regexp '^acquired key=t/c/a generation=2 '
	[[ "$(stats_of)" == "stats requests=2 get=1 head=0 put=1 delete=0 list=0 "* ]] || { echo "$stderr"; false; }
	# keep's tools never write over nor remove it
	run -100 --separate-stderr keep-store del cluster
	[[ $stderr == *"'cluster' is the cluster object"* ]]
	run -100 --separate-stderr keep-store put cluster <<<"x"
	run -0 keep-store get cluster
	assert_output --regexp $'^wasmkeep-cluster 1\nformat native\n'
	refute_sanitizer_reports
}

@test "native: an old object refuses native and keeps the marker path; a garbled or upgraded cluster object is named and not native" {
	now=$(now_ms)
	printf 'wasmkeep-lease 1\nnode n9\ngeneration 7\nexpires_at_ms %s\n' $((now - 60000)) |
		keep-store put leases/t/c/a >/dev/null
	run -1 --separate-stderr upgrade-mark native
	assert_output 'refused reason=old-objects key=leases/t/c/a'
	[[ $stderr == *"leases/ holds objects"* ]]
	run -1 keep-store get cluster # nothing written
	live_n1
	# no cluster object: the marker path (seeded above the old lease)
	run -0 --separate-stderr owner-acquire --node-id n1 --stats t/c/a t/c/b
	assert_line --index 0 --regexp '^acquired key=t/c/a generation=8 '
	assert_line --index 1 --regexp '^acquired key=t/c/b generation=1 '
	[[ "$(stats_of)" =~ list=([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -ge 4 ]
	run -0 keep-store get leases/t/c/b # its marker, confirmed
	assert_output --partial 'created 1'
	# a garbled cluster object: named once a process, not native
	printf 'wasmkeep-cluster 1\nformat nativ\nwritten_at_ms 5\n' >"$BATS_TEST_TMPDIR/bad"
	foreign_put_ours cluster "$BATS_TEST_TMPDIR/bad"
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/c t/c/d
	assert_line --index 0 --regexp '^acquired key=t/c/c generation=1 '
	[ "$(grep -c "the object 'cluster' is not a keep cluster object (unknown format)" <<<"$stderr")" -eq 1 ]
	run -0 keep-store get leases/t/c/c
	assert_output --partial 'created 1'
	run -17 --separate-stderr upgrade-mark native
	[[ $stderr == *"the object 'cluster' is not a keep cluster object"* ]]
	# upgraded: not native either, and native refuses it
	printf 'wasmkeep-cluster 1\nformat upgraded\nwritten_at_ms 5\n' >"$BATS_TEST_TMPDIR/up"
	foreign_put_ours cluster "$BATS_TEST_TMPDIR/up"
	run -1 upgrade-mark native
	assert_output 'refused reason=upgraded written_at_ms=5'
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/e
	run -0 keep-store get leases/t/c/e
	refute_sanitizer_reports
}

@test "native: a create that always conflicts while the read says absent gives up after KEEP_NATIVE_CONFLICTS_MAX creates (111, one line), never recurses" {
	# a broken or hostile store (or a stale replica): every If-None-Match
	# create of `cluster` answers 412, every GET of it 404. Before the bound,
	# native() called itself on each conflict until the stack overflowed;
	# `timeout` turns a hang into a failure (124), never a pass.
	echo 'put cluster error 412' >"$FAULT_FILE"
	KEEP_FAULT_LOG=1 run -111 --separate-stderr timeout 120 upgrade-mark native
	assert_output ""
	# 3 creates (KEEP_NATIVE_CONFLICTS_MAX, docs/upgrade.md "Native clusters")
	[ "$(grep -c '^keep-fault: put cluster error' <<<"$stderr")" -eq 3 ]
	diag=$(grep -v '^keep-fault: ' <<<"$stderr")
	[ "$(wc -l <<<"$diag")" -eq 1 ]
	[[ $diag == *"the create of 'cluster' conflicted 3 times while a read found no object"* ]]
	: >"$FAULT_FILE"
	run -1 keep-store get cluster # nothing written
	run -0 --separate-stderr upgrade-mark native # a healthy store: created
	assert_output --regexp '^native written_at_ms=[0-9]+ action=created$'
	refute_sanitizer_reports
}
