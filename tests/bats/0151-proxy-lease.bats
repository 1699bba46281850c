#!/usr/bin/env bats
# lease-write through the S3 fault proxy (ADR 0020 §1; docs/lease.md):
# replies the network loses, late writes, fake conflicts and an outage, on
# the real server. S3 pass only (tests/tools/s3proxy.c).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000:
# a write every 1000, each attempt bounded by 800, valid 2400 after a send.

# run-all: sanitizers
load helpers/common

setup() {
	require_s3
	keep_setup
	start_proxy
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	INST=$(sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out")
}
teardown() { keep_teardown; }

# the lease is still ours, live, and was never lost or replaced
assert_still_live() {
	run -0 lease-status --node-id n1
	bg_running n1
	run -0 s3_direct keep-store get nodes/n1
	[ "${lines[1]}" = "live $INST" ]
	run ! grep -qE '^(lost|back-to-check) ' "$BATS_TEST_TMPDIR/n1.out"
}

@test "proxy lease: a renewal that landed but whose reply the network dropped is adopted, not taken for a fence" {
	proxy_rule 'put nodes/n1 lose count=1'
	wait_line 10 n1 '^adopted '
	[ "$(proxy_log_count forwarded action=lose status=200)" = 1 ]
	assert_still_live
	run ! grep -q '^ran-out ' "$BATS_TEST_TMPDIR/n1.out"
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy lease: a renewal that landed but was answered 500 is adopted" {
	proxy_rule 'put nodes/n1 error-after 500 count=1'
	wait_line 10 n1 '^adopted '
	[ "$(proxy_log_count forwarded action=error-after status=200)" = 1 ]
	grep -q '^write-failed .*outcome=ambiguous' "$BATS_TEST_TMPDIR/n1.out"
	assert_still_live
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy lease: a connection reset after the renewal landed is ambiguous; the retry's conflict is adopted" {
	proxy_rule 'put nodes/n1 reset-after count=1'
	wait_line 10 n1 '^adopted '
	[ "$(proxy_log_count forwarded action=reset-after status=200)" = 1 ]
	assert_still_live
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy lease: a 409 answered without forwarding is not a fence: the re-read finds our own live object" {
	proxy_rule 'put nodes/n1 error 409 count=1' 'put nodes/n1 late 0'
	# the re-read shows the very write the node holds: the conflict changed
	# nothing (or a stale replica answered); that write is retried on the
	# failed-write pacing, not at once (issue 28), and lands
	wait_line 10 n1 '^read-stale .*retry_ms=[1-9]'
	proxy_wait 10 1 forwarded action=late status=200
	[ "$(proxy_faults_count error put)" = 1 ]
	assert_still_live
	# and the renewals go on from the version it holds
	proxy_rule 'put nodes/n1 delay 0'
	proxy_wait 10 3 fault action=delay
	assert_still_live
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy lease: a renewal held past its timeout and forwarded late is refused by its condition; the lease stays live" {
	proxy_rule 'put nodes/n1 late 2000 count=1'
	proxy_wait 10 1 fault action=late
	# the held attempt times out (800 ms) and is retried on a new connection
	wait_line 5 n1 '^write-failed .*outcome=ambiguous'
	proxy_wait 10 1 forwarded action=late
	# the late copy carried If-Match an older version: RGW refused it
	[ "$(proxy_log_count forwarded action=late status=412)" = 1 ]
	assert_still_live
	run ! grep -qE '^(ran-out|adopted) ' "$BATS_TEST_TMPDIR/n1.out"
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy lease: the bucket unreachable for longer than the validity (every PUT hangs): ran out, not lost; back, recovered" {
	proxy_rule 'put nodes/ hang'
	wait_line 10 n1 '^ran-out '
	run -14 lease-status --node-id n1
	bg_running n1
	proxy_rule
	wait_line 10 n1 '^recovered '
	assert_still_live
	[ "$(proxy_faults_count hang put)" -ge 2 ]
	stop_proxy
	refute_sanitizer_reports
}
