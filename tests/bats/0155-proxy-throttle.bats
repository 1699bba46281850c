#!/usr/bin/env bats
# Throttling is a state, not an error (issue 28 item 4; docs/s3.md
# "Throttling"; lib/core/throttle.h): 503 SlowDown and 429 answered by the
# S3 fault proxy are counted in keep_store_throttled_total{op}, stay
# ambiguous for the protocol, and the node lease keeps its own schedule.
# S3 pass only. Timings (ms): ttl 3000, grace 1500, safety 600, skew 300,
# period 1000.

load helpers/common

setup() {
	require_s3
	keep_setup
	echo "metrics: {textfile: $BATS_TEST_TMPDIR/prom/keep.prom}" >>"$KEEP_CONFIG"
	mkdir -p "$BATS_TEST_TMPDIR/prom"
	start_proxy
}
teardown() { keep_teardown; }

# value FILE SERIES : the value of one series of a textfile
value() {
	awk -v s="$2" 'index($0, s " ") == 1 { print $NF }' "$1"
}

@test "proxy throttle: node-watch's listings answered 503 SlowDown and 429 are counted as throttled, ambiguous, and the watch goes on" {
	f="$BATS_TEST_TMPDIR/prom/keep.node-watch.prom"
	proxy_rule 'list nodes/ error 503 code=SlowDown count=2' 'list nodes/ error 429 count=1'
	start_bg nw node-watch --follow --node-id n2
	# three throttled listings, then the listings succeed again
	wait_for 30 grep -q 'op="list",outcome="ok"} [1-9]' "$f"
	[ "$(proxy_faults_count error list)" = 3 ]
	[ "$(value "$f" 'keep_store_throttled_total{node="n2",op="list"}')" = 3 ]
	[ "$(value "$f" 'keep_store_requests_total{node="n2",op="list",outcome="ambiguous"}')" = 3 ]
	# every other operation's counter is there from 0
	[ "$(value "$f" 'keep_store_throttled_total{node="n2",op="get"}')" = 0 ]
	[ "$(value "$f" 'keep_store_throttled_total{node="n2",op="put"}')" = 0 ]
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy throttle: lease-write's renewals answered 503 SlowDown keep the lease's schedule (no backoff) and are counted" {
	f="$BATS_TEST_TMPDIR/prom/keep.lease-write.prom"
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	[ "$(value "$f" 'keep_store_throttled_total{node="n1",op="put"}')" = 0 ]
	proxy_rule 'put nodes/n1 error 503 code=SlowDown count=2'
	proxy_wait 10 2 fault action=error op=put
	wait_for 10 grep -q 'keep_store_throttled_total{node="n1",op="put"} 2$' "$f"
	# the retries came on the lease's renewal-retry schedule (docs/lease.md
	# "Retries"): the first 100 ms after the failure at most (floor 50 ms
	# doubling, bounded by the validity left), never a throttle backoff
	run -0 sed -n 's/^write-failed .*outcome=ambiguous retry_ms=\([0-9]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out"
	[ "${#lines[@]}" -ge 2 ]
	[ "${lines[0]}" -le 100 ]
	[ "${lines[1]}" -le 200 ]
	run ! grep -qE '^(ran-out|lost) ' "$BATS_TEST_TMPDIR/n1.out"
	run -0 lease-status --node-id n1
	stop_proxy
	refute_sanitizer_reports
}
