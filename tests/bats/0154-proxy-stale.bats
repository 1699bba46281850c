#!/usr/bin/env bats
# Stale reads behind the S3 fault proxy (issue 28; docs/lease.md "Conflict";
# tests/tools/s3proxy.c, action stale): a replica or cache that serves a
# node's GETs of its own nodes/<id> one period old for 8 s after an operator
# fence. lease-write adopted the stale body and wrote again at once: 390-475
# PUTs and as many GETs in those 8 s. S3 pass only.
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000:
# a write every 1000, each attempt bounded by 800, valid 2400 after a send.

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

# stale_after_fence STALE_MS : the scenario of issue 28 with GETs answered by
# the node's own acknowledged PUT of at least STALE_MS before.
stale_after_fence() {
	local stale_ms=$1 puts_412 stale
	# for 8 s from the next request, the node's GETs of nodes/n1 get the
	# body and ETag of its own PUT of at least stale_ms before (not
	# forwarded); every PUT of nodes/n1 is logged with its status (late 0)
	proxy_rule "get nodes/n1 stale $stale_ms for=8000" 'put nodes/n1 late 0'
	proxy_wait 10 1 forwarded op=put action=late status=200
	# the operator fences on the server itself (its reads are fresh)
	run -0 --separate-stderr s3_direct lease-fence n1
	assert_output --partial "fenced node=n1 instance=$INST "
	# the conflict's re-read is served stale: neither adopted nor a loss
	wait_line 10 n1 '^read-stale '
	# once the window ends the re-read sees the fence (8 s, then at most
	# the half write period of the ran-out backoff, on a loaded machine)
	run wait_exit 30 n1
	[ "$output" = 10 ]
	grep -q '^lost .*reason=fenced' "$BATS_TEST_TMPDIR/n1.out"
	# the loop's mark: an adoption after the fence. None, and no recovery
	run ! grep -qE '^(adopted|recovered) ' "$BATS_TEST_TMPDIR/n1.out"
	grep -q '^ran-out ' "$BATS_TEST_TMPDIR/n1.out"
	# after the fence, every PUT is a retry of the write the node holds
	# (If-Match its version: 412) and is followed by one GET, paced as
	# below: the renewal that met the fence, one after each stale GET (39
	# at most), one after the window; none landed
	puts_412=$(proxy_log_count forwarded op=put action=late status=412)
	[ "$puts_412" -ge 1 ]
	[ "$puts_412" -le 41 ]
	run -0 awk '$1 == "forwarded" && / op=put / { if (/ status=412/) c = 1; else if (c && / status=2[0-9][0-9]/) bad = 1 }
		END { exit bad }' "$PROXY_LOG"
	# GETs in the window, all answered stale, one after each conflict:
	# the failed-write pacing of docs/lease.md "Retries" at these timings
	# (floor 50 ms) bounds them by 7 doubling steps, 16 at the floor in
	# the last attempt before the validity ends, and one every half write
	# period (500 ms) while ran out, 16 in 8 s: 39, two requests a second
	# once ran out. The loop made 390-475 of each.
	stale=$(proxy_faults_count stale get)
	[ "$stale" -ge 1 ]
	[ "$stale" -le 39 ]
	# every read-stale line is one stale GET; the read after the window
	# went to the server and showed the fence
	[ "$(grep -c '^read-stale ' "$BATS_TEST_TMPDIR/n1.out")" = "$stale" ]
	# safety: the object stays fenced; the node never wrote over it
	run -0 s3_direct keep-store get nodes/n1
	assert_line --index 1 "fenced $INST"
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy stale: GETs answered with the last acknowledged write for 8 s after an operator fence (the replica missed the fence): no adoption, no loop, lost fenced" {
	# stale 0: the newest acknowledged PUT, the write the failed If-Match
	# named (the loop of issue 28: adopted, written over at once)
	stale_after_fence 0
}

@test "proxy stale: GETs answered one period and more stale for 8 s after an operator fence: no adoption, no loop, lost fenced" {
	# stale 1500: a write older than the last acknowledged one
	stale_after_fence 1500
}

@test "proxy stale: a stale rule with no earlier PUT seen does not fire; the request is forwarded" {
	# a key the proxy never saw written: the stale rule lets it through
	proxy_rule 'get nodes/n9 stale 0'
	run -1 keep-store get nodes/n9
	[ "$(proxy_faults_count stale get)" = 0 ]
	run -0 "$KEEP_TOOLDIR/s3proxy" -n -r <(printf 'get nodes/ stale 1000 for=8000\n')
	run -100 --separate-stderr "$KEEP_TOOLDIR/s3proxy" -n -r <(printf 'put nodes/ stale 1000\n')
	run -100 --separate-stderr "$KEEP_TOOLDIR/s3proxy" -n -r <(printf 'get nodes/ delay 0 for=0\n')
	stop_proxy
	refute_sanitizer_reports
}
