#!/usr/bin/env bats
# The read-back of an acquisition whose write timed out (ADR 0020 §3; issue
# 23 item 2; docs/ownership.md "An unknown outcome"): a record unchanged
# since the read the write was conditioned on stays unresolved, whoever it
# names and whatever its holder's node object shows now, because the write
# may still land. Here the write lands after the read-back (the fault
# file's `late` on fs, the S3 fault proxy's `late` on S3), and the holder's
# nodes/<id> is deleted while the write is on its way, so the holder no
# longer looks free: before issue 23 the read-back answered `held` (lost),
# kept nothing, and the write that landed named the live instance of n2
# with nothing on n2 to release it.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000;
# every store request bounded by 2500.

# shellcheck disable=SC2154 # output: set by bats' run
load helpers/common

setup() {
	keep_setup
	printf 's3:\n  timeout_ms: 2500\n' >>"$KEEP_CONFIG"
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || start_proxy
}
teardown() { keep_teardown; }

# late_write : the next write of owners/ is held 5000 ms and then sent,
# whatever its client did (it gives up after 2500 ms)
late_write() {
	if [ "${KEEP_TEST_STORE:-fs}" = fs ]; then
		echo 'put owners/ late 5000 count=1' >"$FAULT_FILE"
	else
		proxy_rule 'put owners/ late 5000 count=1'
	fi
}
# write_held : the held write has been sent by its client (fault logged)
write_held() {
	if [ "${KEEP_TEST_STORE:-fs}" = fs ]; then
		grep -q '^keep-fault: put owners/t/c/a late 5000$' "$BATS_TEST_TMPDIR/acq.err"
	else
		[ "$(proxy_log_count fault action=late op=put key=owners/t/c/a)" -ge 1 ]
	fi
}
# landed : the held write reached the store
landed() { keep-store get owners/t/c/a | grep -qx 'held n2 .*'; }

@test "owner-readback: an unchanged record whose holder stopped looking free stays unresolved; the write that lands later is released by the resolver" {
	start_bg n1 lease-write -v --node-id n1
	wait_line 20 n1 '^live '
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=1 "* ]]
	# n1's lease-write stops alone (no drain): the record keeps naming its
	# instance, free once the `released` object is ttl + grace old
	kill -TERM "$(bg_pid n1)"
	run -0 wait_exit 10 n1
	[ "$output" = 0 ]
	start_bg n2 lease-write -v --node-id n2
	wait_line 20 n2 '^live '
	wait_for 15 sh -c 'owner-show t/c/a | grep -q " free=yes"'
	# n2 takes it over: read, n1 free, write If-Match the record's version.
	# The write is held; meanwhile nodes/n1 is deleted by hand, so at the
	# read-back the record is unchanged and its holder no longer free
	v=$(keep-store stat owners/t/c/a | sed -n 's/.* version=//p')
	late_write
	start_bg acq env KEEP_FAULT_LOG=1 owner-acquire --node-id n2 t/c/a
	wait_for 10 write_held
	run -0 --separate-stderr keep-store del --force nodes/n1
	run wait_exit 15 acq
	[ "$output" = 20 ] || { cat "$BATS_TEST_TMPDIR/acq.out" "$BATS_TEST_TMPDIR/acq.err" >&3; false; }
	run -0 cat "$BATS_TEST_TMPDIR/acq.out"
	[ "$output" = "unknown key=t/c/a generation=2" ]
	# the read-back saw the record as it was (the write's condition)
	run -0 keep-store stat owners/t/c/a
	[ "$output" = "object key=owners/t/c/a version=$v" ]
	# kept as an unresolved acquire
	run -0 ls "$STATE_DIR/n2/pending"
	[[ "$output" == *".2."*".acquire" ]]
	# the write lands after the read-back: it names n2, which holds nothing
	wait_for 15 landed
	run -1 owner-check --node-id n2 t/c/a 2
	# the resolver finds the unresolved acquire and releases what landed
	run -0 --separate-stderr owner-release --node-id n2 --pending
	[ "$output" = "released key=t/c/a generation=2 reason=unresolved-acquire" ]
	run -0 keep-store get owners/t/c/a
	assert_line --index 1 nobody
	assert_line --index 2 "generation 2"
	run -0 ls "$STATE_DIR/n2/pending"
	[ "$output" = "" ]
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || stop_proxy
	refute_sanitizer_reports
}
