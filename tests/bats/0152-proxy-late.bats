#!/usr/bin/env bats
# Writes that land after the client gave up, through the S3 fault proxy:
# keep-store with a 1 s store timeout, and owner-acquire's record write
# (ADR 0020 §3: an acquire with an unknown outcome is released if it
# landed). S3 pass only (tests/tools/s3proxy.c).

# run-all: sanitizers
load helpers/common

setup() {
	require_s3
	keep_setup
	printf 's3:\n  timeout_ms: 1000\n' >>"$KEEP_CONFIG"
	start_proxy
}
teardown() { keep_teardown; }

@test "proxy late: a PUT held past keep-store's timeout and forwarded late lands after the client gave up" {
	# held 6 s: keep-store (timeout 1 s) has long answered, however
	# loaded the machine, when the proxy forwards it
	proxy_rule 'put late/ late 6000 count=1'
	run -111 --separate-stderr keep-store put late/x <<<"body"
	[ "$output" = "put key=late/x outcome=ambiguous version=-" ]
	# it gave up at its timeout (its own clock), not at the reply
	[[ "$stderr" == *"timed out after 1000 ms"* ]]
	# not there yet: the proxy still holds it
	[ "$(proxy_log_count forwarded)" = 0 ]
	run -1 s3_direct keep-store stat late/x
	proxy_wait 15 1 forwarded action=late status=200
	run -0 s3_direct keep-store get late/x
	[ "$output" = body ]
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy late: a PUT delayed past keep-store's timeout is never forwarded once the client hung up" {
	proxy_rule 'put d/ delay 2500'
	run -111 keep-store put d/x <<<"body"
	proxy_wait 10 1 unsent action=delay op=put key=d/x
	# the proxy stopped and every thread joined: nothing can land any more
	stop_proxy
	[ "$(proxy_log_count forwarded)" = 0 ]
	run -1 keep-store stat d/x
	refute_sanitizer_reports
}

@test "proxy late: a delay shorter than the timeout only slows the request" {
	proxy_rule 'get * delay 400'
	printf 'x' | s3_direct keep-store put k >/dev/null
	t0=$(now_ms)
	run -0 keep-store get k
	[ "$output" = x ]
	[ $(($(now_ms) - t0)) -ge 400 ]
	[ "$(proxy_faults_count delay get)" = 1 ]
	stop_proxy
}

@test "proxy late: owner-acquire whose record write lands after its timeout answers unknown; the resolver releases what landed" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	proxy_rule 'put owners/ late 1500 count=1'
	run -20 --separate-stderr owner-acquire --node-id n1 t/c/a
	[ "$output" = "unknown key=t/c/a generation=1" ]
	[ -n "$(ls "$STATE_DIR/n1/pending")" ]
	proxy_wait 10 1 forwarded action=late op=put key=owners/t/c/a status=200
	# it landed, naming this node: never a hold here, and released by the resolver
	run -0 owner-show t/c/a
	assert_output --partial "state=held node=n1"
	run -1 owner-check --node-id n1 t/c/a 1
	run -0 --separate-stderr owner-release --node-id n1 --pending
	[ "$output" = "released key=t/c/a generation=1 reason=unresolved-acquire" ]
	run -0 owner-show t/c/a
	assert_output --partial "state=nobody"
	[ -z "$(ls "$STATE_DIR/n1/pending")" ]
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy late: owner-acquire whose record write landed but whose reply was dropped reads it back as its own" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	proxy_rule 'put owners/ lose count=1'
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=1 "*" new=yes" ]]
	[ "$(proxy_log_count forwarded action=lose status=200)" = 1 ]
	run -0 owner-check --node-id n1 t/c/a 1
	stop_proxy
	refute_sanitizer_reports
}
