#!/usr/bin/env bats
# Kept-alive S3 connections at full speed (issue 16 item 5; docs/performance.md
# "Kept-alive S3 requests"). RGW writes a reply's headers and body in two
# sends; without TCP_NODELAY on its side, Nagle holds the body until the
# client ACKs the headers, and Linux delays that ACK ~40 ms on a kept-alive
# connection. keep sets TCP_QUICKACK on its socket while each reply arrives,
# so the ACK goes out at once. The latency itself is measured in
# bench/s3-latency.sh (a ratio, in one run); here, what keep does on the wire:
# one connection for many requests, and TCP_QUICKACK set for each reply.
# s3 only.

# run-all: sanitizers
load helpers/common

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "s3 only (KEEP_TEST_STORE=${KEEP_TEST_STORE:-fs})"
	[ -e "$KEEP_TOOLDIR/store-sockopt.so" ] && [ -x "$KEEP_TOOLDIR/store-latency" ] ||
		skip "no store-sockopt.so / store-latency in $KEEP_TOOLDIR"
	keep_setup
	LOG=$BATS_TEST_TMPDIR/sockopt.log
}

written_at() { lease-status --node-id n1 | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p'; }

# traced ARGS... : store-latency ARGS with its connects and TCP options logged
traced() {
	env LD_PRELOAD="$KEEP_TOOLDIR/store-sockopt.so" KEEP_SOCKOPT_LOG="$LOG" \
		ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" \
		"$KEEP_TOOLDIR/store-latency" --store "$STORE_URL" "$@"
}

@test "kept-alive: 20 GETs and 20 LISTs on one connection, TCP_QUICKACK set while each reply arrives" {
	for op in get list; do
		: >"$LOG"
		run -0 --separate-stderr traced --op "$op" -n 20
		refute_crash
		assert_output --regexp "^latency op=$op mode=kept-alive quickack=on n=20 .* failed=0\$"
		# one connection for the set-up PUT and the 20 requests
		[ "$(grep -c '^connect ' "$LOG")" -eq 1 ]
		grep -q 'TCP_NODELAY=1' "$LOG"
		# at least once per reply (headers, then the body)
		[ "$(grep -c 'TCP_QUICKACK=1' "$LOG")" -ge 20 ]
	done
}

@test "kept-alive: a new store handle is a new connection; quickack off sets nothing" {
	: >"$LOG"
	run -0 --separate-stderr traced --op head -n 5 --fresh
	[ "$(grep -c '^connect ' "$LOG")" -eq 6 ]
	: >"$LOG"
	run -0 --separate-stderr traced --op get -n 5 --no-quickack
	assert_output --regexp '^latency op=get mode=kept-alive quickack=off '
	run ! grep -q 'TCP_QUICKACK' "$LOG"
}

@test "kept-alive: a lease-write keeps one connection for its renewals" {
	: >"$LOG"
	start_bg lw env LD_PRELOAD="$KEEP_TOOLDIR/store-sockopt.so" KEEP_SOCKOPT_LOG="$LOG" \
		ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" lease-write --node-id n1
	wait_line 20 lw '^live '
	# two renewals after going live (write_every = 1 s)
	for i in 1 2; do
		w=$(written_at)
		wait_for 10 sh -c "[ \"\$(lease-status --node-id n1 | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p')\" != '$w' ]"
	done
	[ "$(grep -c '^connect ' "$LOG")" -eq 1 ]
	grep -q 'TCP_QUICKACK=1' "$LOG"
}

teardown() { keep_teardown; }
