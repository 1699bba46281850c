#!/usr/bin/env bats
# Progress on long waits (issue 27; docs/operations.md "Logs"): a command
# whose store request hangs says, once a heartbeat period, what it waits
# for (lib/driver/progress.c), instead of staying silent until the request's bound.
# store-probe, the first command of the bucket-outage runbook, against a
# hung store: on the fs store through the fault file's `hang`, on the real
# S3 server through the fault proxy's `hang` (the request never answered).
# Timings: period 1000 ms; the request bound (s3.timeout_ms) 4000 ms.

load helpers/common

setup() {
	keep_setup
	echo 's3: {timeout_ms: 4000}' >>"$KEEP_CONFIG"
}
teardown() { keep_teardown; }

# hung_probe : store-probe against the hung store: 111, a progress line a
# period naming the request, counting on its own clock
hung_probe() {
	run -111 --separate-stderr store-probe
	assert_output --partial "probe result=failed step=create"
	# one line a period while it waited (4 s: 3 at least, whatever the load)
	n=$(grep -c '^store-probe: info: waiting for the store: PUT probe/[0-9a-f]* (' <<<"$stderr")
	[ "$n" -ge 3 ] || { echo "$stderr"; false; }
	[[ "${stderr_lines[0]}" == "store-probe: info: waiting for the store: PUT probe/"*" (1 s so far; a request gives up after 4 s)" ]] ||
		[[ "${stderr_lines[0]}" == "store-probe: info: waiting for the store: PUT probe/"*" (1 s so far)" ]]
}

@test "progress: store-probe against a hung store says what it waits for, once a period" {
	run -0 --separate-stderr store-probe
	[ -z "$stderr" ] # a store that answers: nothing to say
	if [ "${KEEP_TEST_STORE:-fs}" = s3 ]; then
		start_proxy
		proxy_rule 'put probe/ hang'
	else
		echo 'put probe/ hang' >"$FAULT_FILE"
	fi
	hung_probe
	# a one-shot read too (owner-show: who owns a key); node-watch --once
	# bounds its reads by the attempt timeout, shorter than a period
	if [ "${KEEP_TEST_STORE:-fs}" = s3 ]; then
		proxy_rule 'get owners/ hang'
	else
		echo 'get owners/ hang' >"$FAULT_FILE"
	fi
	run -111 --separate-stderr owner-show t/c/a
	run -0 grep -c '^owner-show: info: waiting for the store: GET owners/t/c/a (' <<<"$stderr"
	[ "$output" -ge 3 ]
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || stop_proxy
	refute_sanitizer_reports
}

@test "progress: keep-agent's first step, the store probe, is not silent on a hung store either" {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "the agent's side: the fs pass"
	echo 'put probe/ hang' >"$FAULT_FILE"
	run -111 --separate-stderr keep-agent --node-id n1
	run -0 grep -c '^store-probe: info: waiting for the store: PUT probe/' <<<"$stderr"
	[ "$output" -ge 3 ]
	[[ "${stderr_lines[-1]}" == "keep-agent: fatal: the store does not pass store-probe (exit 111)"* ]]
}
