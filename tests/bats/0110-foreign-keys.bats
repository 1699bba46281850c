#!/usr/bin/env bats
# Keys and objects written by something other than keep (the AWS CLI, a
# console, a sync tool) beside keep's own, on both stores: a key keep cannot
# use is skipped and named, never failing a listing (nor peer fencing); an
# object too big to be keep's is "not ours" (17), never "retry" (111); a
# folder marker is ignored (issue 16 items 0-2; docs/formats.md "Foreign
# keys and objects"). On S3 the foreign keys are PUT by curl --aws-sigv4,
# percent-encoded; on fs they are plain files.

load helpers/common
load helpers/foreign

setup() {
	keep_setup
	printf 'x' >"$BATS_TEST_TMPDIR/one-byte"
	: >"$BATS_TEST_TMPDIR/empty"
}
teardown() { keep_teardown; }

INST=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58
CTRL=$(printf '\001')

# big FILE : 70000 bytes, over any object keep reads (65536)
big() { head -c 70000 /dev/zero | tr '\0' 'a' >"$1"; }

@test "foreign keys: a key with a control byte is skipped and named (escaped), the rest is listed" {
	foreign_put "nodes/bad${CTRL}id" "$BATS_TEST_TMPDIR/one-byte"
	foreign_put "nodes/new"$'\n'"line" "$BATS_TEST_TMPDIR/one-byte"
	keep-store put nodes/n1 <<<"hello" >/dev/null
	run -0 --separate-stderr keep-store list nodes/
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp '^object key=nodes/n1 version='
	# one line per skipped key, the key escaped as the stdout line format does
	[[ $stderr == *'keep-store: warning: listing nodes/: skipped "nodes/bad\x01id": not a key keep can use'* ]]
	[[ $stderr == *'skipped "nodes/new\nline"'* ]]
	[ "$(grep -c . <<<"$stderr")" -eq 2 ]
	# the same from the bucket's root
	run -0 --separate-stderr keep-store list
	[ "${#lines[@]}" -eq 1 ]
	[[ $stderr == *'listing the bucket: skipped "nodes/bad\x01id"'* ]]
	refute_crash
}

@test "foreign keys: a control-byte key as the last key of a full ListObjectsV2 page: the next page follows (s3)" {
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "s3 only: RGW's NextContinuationToken is the raw key"
	# 999 keys, the control-byte key (the 1000th: the end of RGW's first
	# page, so its token carries &#x01;), then 2 more; one curl process.
	# k0999A sorts between "k0999\x01" and the text "k0999\\x01": a token
	# taken as rewritten text would skip it
	local i cfg="$BATS_TEST_TMPDIR/curl.cfg" base=${STORE_URL#s3://}
	: >"$cfg"
	for ((i = 0; i < 999; i++)); do
		printf 'url = "%s/%s/p/k%04d"\noutput = "/dev/null"\n' "$S3_ENDPOINT" "$base" "$i" >>"$cfg"
	done
	for k in k0999%01 k0999A k1000; do
		printf 'url = "%s/%s/p/%s"\noutput = "/dev/null"\n' "$S3_ENDPOINT" "$base" "$k" >>"$cfg"
	done
	curl -sS --fail -X PUT --data-binary x -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
		--aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-K "$cfg"
	run -0 --separate-stderr keep-store list p/
	refute_crash
	[ "${#lines[@]}" -eq 1001 ]
	[[ "${lines[998]}" == "object key=p/k0998 version="* ]]
	[[ "${lines[999]}" == "object key=p/k0999A version="* ]]
	[[ "${lines[1000]}" == "object key=p/k1000 version="* ]]
	[ "$stderr" = 'keep-store: warning: listing p/: skipped "p/k0999\x01": not a key keep can use' ]
}

@test "foreign keys: a control-byte key under nodes/ while a peer is killed: it is fenced in time, the key named once" {
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	wait_line 20 n1 '^live '
	wait_line 20 n2 '^live '
	foreign_put "nodes/bad${CTRL}id" "$BATS_TEST_TMPDIR/one-byte"
	local d=$BATS_TEST_TMPDIR
	mkfifo "$d/w.fifo"
	start_bg f sh -c "exec lease-fence --node-id n2 --stdin < '$d/w.fifo'"
	start_bg w sh -c "exec node-watch --node-id n2 --follow > '$d/w.fifo'"
	wait_for 10 grep -q 'skipped "nodes/bad\\x01id"' "$d/w.err"
	kill -KILL "$(bg_pid n1)"
	local killed
	killed=$(now_ms)
	# ttl + grace (4500 ms) after n1's last write, plus a watch bound and a
	# GET and PUT: well within 10 s (with the key breaking every listing,
	# n1 stayed live for good)
	wait_line 10 f '^fenced node=n1 '
	echo "# fenced $(($(now_ms) - killed)) ms after the kill"
	run -0 keep-store get nodes/n1
	assert_line "fenced_by n2"
	# named once, not every period; the listings never failed
	[ "$(grep -c 'skipped "nodes/bad\\x01id": not a key keep can use' "$d/w.err")" -eq 1 ]
	run ! grep -q 'unable to list' "$d/w.err"
	run -0 grep -c 'listing=ok' "$STATE_DIR/n2/watch"
	bg_running n2
	refute_sanitizer_reports
}

@test "foreign objects: an object over 65536 bytes is not ours (17) in every command, never 111" {
	big "$BATS_TEST_TMPDIR/big"
	foreign_put_ours nodes/n9 "$BATS_TEST_TMPDIR/big"
	foreign_put_ours owners/t/c/a "$BATS_TEST_TMPDIR/big"
	foreign_put_ours leases/t/c/b "$BATS_TEST_TMPDIR/big"

	run -17 --separate-stderr lease-fence n9
	[[ $stderr == *"nodes/n9 is not a keep node object"*"nothing written"* ]]
	[[ $stderr != *": refused"* ]]
	run -0 --separate-stderr node-watch --once
	assert_line --regexp '^node id=n9 state=unreadable .*reason='
	run -17 --separate-stderr owner-show t/c/a
	[[ $stderr == *"owners/t/c/a is not a keep ownership record"* ]]
	run -17 --separate-stderr upgrade-mark actors t/c/b
	assert_output --regexp '^error key=t/c/b reason=bad-object'
	run -17 --separate-stderr upgrade-mark forget n9
	run -17 --separate-stderr lease-write --node-id n9
	assert_line --regexp '^lost node=n9 .*reason=bad-object'
	# and a peer's fence decision: bad-object, nothing written
	start_bg p1 lease-write --node-id p1
	wait_line 20 p1 '^live '
	fencer_ready p1
	run -0 --separate-stderr lease-fence --node-id p1 --stdin \
		<<<"stale node=n9 instance=$INST written_at_ms=1767225600123 unchanged_ms=9000"
	assert_output --regexp '^bad-object node=n9 '
	# keep-store, the raw tool, refuses the read (1)
	run -1 --separate-stderr keep-store get nodes/n9
	[[ $stderr == *"larger than 65536"* ]]
	refute_sanitizer_reports
}

@test "foreign objects: folder markers are ignored everywhere" {
	foreign_put wal/t/c/a/ "$BATS_TEST_TMPDIR/empty"
	foreign_put nodes/ "$BATS_TEST_TMPDIR/empty"
	foreign_put owners/t/ "$BATS_TEST_TMPDIR/empty"
	keep-store put wal/t/c/a/5/seg-1 <<<"segment" >/dev/null
	run -0 --separate-stderr keep-store list
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp '^object key=wal/t/c/a/5/seg-1 '
	[ -z "$stderr" ]
	# a marker beside an actor's segments neither refuses nor blocks it
	run -0 --separate-stderr upgrade-mark actors t/c/a
	assert_output --regexp '^marked key=t/c/a seed=5 action=created keys_max=5'
	run -0 --separate-stderr upgrade-mark actors --all
	run -0 --separate-stderr node-watch --once
	assert_output ""
	[ -z "$stderr" ]
	refute_crash
}

@test "foreign objects: a non-empty key ending in '/' is skipped and named (s3)" {
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "s3 only: a file system has no such key"
	foreign_put wal/t/c/a/ "$BATS_TEST_TMPDIR/one-byte"
	run -0 --separate-stderr keep-store list wal/
	assert_output ""
	[ "$stderr" = "keep-store: warning: listing wal/: skipped wal/t/c/a/: not a key keep can use" ]
}

@test "foreign keys: invalid-key messages escape the key (one line whatever its bytes)" {
	run -100 --separate-stderr keep-store get "a"$'\n'"b"
	[ "$(grep -c . <<<"$stderr")" -ge 1 ]
	[[ $stderr == "keep-store: fatal: invalid key 'a\nb'"* ]]
	run -100 --separate-stderr owner-show "t/c/x${CTRL}"
	[[ $stderr == "owner-show: fatal: invalid key 't/c/x\x01'"* ]]
	run -100 --separate-stderr owner-check --node-id n1 "t/c/x${CTRL}" 3
	[[ $stderr == "owner-check: fatal: invalid key 't/c/x\x01'"* ]]
	run -100 --separate-stderr upgrade-mark actors <<<"t/c/x${CTRL}y"
	[[ $stderr == *"invalid key 't/c/x\x01y'"* ]]
	assert_output 'error key="t/c/x\x01y" reason=invalid-key'
}
