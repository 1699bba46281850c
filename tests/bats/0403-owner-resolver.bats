#!/usr/bin/env bats
# The resolver and the drain against ADR 0020 §3, §4, §5 (issue 14 items 1-4):
# 32 requests in flight and the drain's deadline kept inside a pass; an
# unresolved acquire kept until the record decides it; a generation never
# handed out again after owners/KEY is deleted by hand; the refusal bound.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/owner

setup() { keep_setup; }
teardown() { keep_teardown; }

keys() { local i; for i in $(seq 1 "$1"); do echo "t/c/k$i"; done; }
instance_of() { sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/$1.out" | head -n 1; }

@test "issue 14 #1: a drain keeps 32 releases in flight: 64 holds at 200 ms a write drain well within the bound" {
	start_node n1 n1
	run -0 sh -c "$(declare -f keys); keys 64 | owner-acquire --node-id n1 --jobs 4"
	[ "${#lines[@]}" -eq 64 ]
	echo "put owners/ delay 200" >"$FAULT_FILE"
	# one at a time this is 64 x 200 ms = 12.8 s; 32 at once, about 0.4 s
	run -0 --separate-stderr owner-release --node-id n1 --all --wait-ms 6000
	[ "${lines[${#lines[@]}-1]}" = "drain pending=0" ]
	[ "$(grep -c '^released ' <<<"$output")" -eq 64 ]
	[ -z "$(ls "$STATE_DIR/n1/holds")" ]
	[ -z "$(ls "$STATE_DIR/n1/pending")" ]
	refute_sanitizer_reports
}

@test "issue 14 #1: the drain's deadline is kept inside a pass: slow writes are cut at the deadline" {
	start_node n1 n1
	run -0 sh -c "$(declare -f keys); keys 50 | owner-acquire --node-id n1 --jobs 4"
	# each write would take 8 s (under the store's 10 s timeout): the
	# deadline (700 ms) bounds every request
	echo "put owners/ delay 8000" >"$FAULT_FILE"
	t0=$(now_ms)
	run -20 --separate-stderr owner-release --node-id n1 --all --wait-ms 700
	t1=$(now_ms)
	[ "${lines[${#lines[@]}-1]}" = "drain pending=50" ]
	# it returned at its deadline, not after a pass (before: 10 s and
	# more). Tolerance: 7000 ms, below what a drain that waited for one
	# write needs (8 s; 32 at once, 16 s for 50), and 6.3 s above the
	# deadline (700) for a sanitizer-built start and exit on a loaded
	# machine (3.2 s of room was not enough for CI's)
	[ $((t1 - t0)) -lt 7000 ] || { echo "drain took $((t1 - t0)) ms" >&2; return 1; }
	# the holds parked before the deadline act no more; their releases stay
	# pending (the clean stop that follows a drain ends the others)
	run -1 owner-check --node-id n1 t/c/k1 1
	: >"$FAULT_FILE"
	run -0 --separate-stderr owner-release --node-id n1 --all --wait-ms 20000
	[ "${lines[${#lines[@]}-1]}" = "drain pending=0" ]
	refute_sanitizer_reports
}

@test "issue 14 #2: an unresolved acquire is kept until the record decides it, however late its write lands" {
	# a short store timeout: "2 x the store timeout" (the old cut-off of an
	# unresolved acquire) passes within a second
	printf 's3:\n  timeout_ms: 500\n' >>"$KEEP_CONFIG"
	start_node n1 n1
	inst=$(instance_of n1)
	# the first record's write is lost before it is sent: unknown
	echo "put owners/ fail count=1" >"$FAULT_FILE"
	run -20 --separate-stderr owner-acquire --node-id n1 t/c/a
	[ "$output" = "unknown key=t/c/a generation=1" ]
	# well past twice the store timeout, the record still says nothing
	sleep 1.2
	run -20 --separate-stderr owner-release --node-id n1 --pending
	[ -z "$output" ]
	[ -n "$(ls "$STATE_DIR/n1/pending")" ]
	# the write lands late (as a delayed request would): it is released
	run -0 sh -c "printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration 1\n' $inst |
		keep-store put owners/t/c/a --if-none-match"
	run -0 --separate-stderr owner-release --node-id n1 --pending
	[ "$output" = "released key=t/c/a generation=1 reason=unresolved-acquire" ]
	[ -z "$(ls "$STATE_DIR/n1/pending")" ]
	# an If-Match acquire whose write lands late: the same
	v=$(rec_version t/c/a)
	echo "put owners/ fail count=1" >"$FAULT_FILE"
	run -20 --separate-stderr owner-acquire --node-id n1 t/c/a
	[ "$output" = "unknown key=t/c/a generation=2" ]
	sleep 1.2
	run -20 --separate-stderr owner-release --node-id n1 --pending
	[ -z "$output" ]
	run -0 sh -c "printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration 2\n' $inst |
		keep-store put owners/t/c/a --if-match '$v'"
	run -0 --separate-stderr owner-release --node-id n1 --pending
	[ "$output" = "released key=t/c/a generation=2 reason=unresolved-acquire" ]
	run -0 owner-show t/c/a
	assert_output --partial "state=nobody"
	# a record changed by someone else ends it
	echo "put owners/ fail count=1" >"$FAULT_FILE"
	run -20 owner-acquire --node-id n1 t/c/a
	printf 'wasmkeep-owner 1\nnobody\ngeneration 7\n' | keep-store put owners/t/c/a >/dev/null
	run -0 --separate-stderr owner-release --node-id n1 --pending
	[ "$output" = "ended key=t/c/a generation=3 reason=not-landed" ]
	refute_sanitizer_reports
}

@test "issue 14 #3: owners/KEY deleted by hand: no generation is handed out again, the acquisition refuses and says why" {
	start_node n1 n1
	for g in 1 2 3 4; do
		run -0 owner-acquire --node-id n1 t/c/a
		[ "$(field generation)" = "$g" ]
		run -0 owner-release --node-id n1 t/c/a
	done
	run -0 keep-store get leases/t/c/a
	[ "$output" = "$(printf 'wasmkeep-lease 2\nseed 0\ncreated 1')" ]
	run -0 keep-store del --force owners/t/c/a
	run -17 --separate-stderr owner-acquire --node-id n1 t/c/a
	[ "$output" = "error key=t/c/a reason=record-missing" ]
	grep -q 'deleted out of band' <<<"$stderr"
	grep -q 'docs/runbooks/record-missing.md' <<<"$stderr"
	run -1 keep-store stat owners/t/c/a
	# the runbook's repair: a record naming nobody above every generation used
	printf 'wasmkeep-owner 1\nnobody\ngeneration 4\n' | keep-store put owners/t/c/a --if-none-match >/dev/null
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 5 ]
	run -0 owner-release --node-id n1 t/c/a
	# the marker deleted by hand: the record still carries the generation
	run -0 keep-store del leases/t/c/a
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 6 ]
	run -0 owner-release --node-id n1 t/c/a
	# both deleted: only the segment keys are left to seed from (documented)
	run -0 keep-store del --force owners/t/c/a
	printf 'x' | keep-store put wal/t/c/a/6/seg >/dev/null
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 7 ]
	refute_sanitizer_reports
}

@test "issue 14 #4: 32 store failures in a row stop a pass (the refusal bound)" {
	start_node n1 n1
	run -0 sh -c "$(declare -f keys); keys 40 | owner-acquire --node-id n1 --jobs 4"
	echo "put owners/ fail" >"$FAULT_FILE"
	# park every hold (the drain), then allow acquisitions again (a drain
	# parks within its deadline: 1500 ms parked 39 of 40 on a loaded
	# machine; 5000)
	run -20 --separate-stderr owner-release --node-id n1 --all --wait-ms 5000
	[ "${lines[${#lines[@]}-1]}" = "drain pending=40" ]
	[ -z "$(ls "$STATE_DIR/n1/holds")" ] || { ls -l "$STATE_DIR/n1/holds"; echo "$stderr"; false; }
	[ "$(ls "$STATE_DIR/n1/pending" | wc -l)" -eq 40 ]
	# one pass over 40 pending releases on a bucket refusing every write:
	# 32 writes, then the pass stops
	run -20 --separate-stderr owner-release --node-id n1 --pending --stats
	grep -q ' put=32 ' <<<"$stderr" || { echo "$stderr" >&2; return 1; }
	[ "$(ls "$STATE_DIR/n1/pending" | wc -l)" -eq 40 ]
	# the bucket answers again: the next pass releases them all
	: >"$FAULT_FILE"
	run -0 --separate-stderr owner-release --node-id n1 --pending
	[ "$(grep -c '^released ' <<<"$output")" -eq 40 ]
	refute_sanitizer_reports
}
