#!/usr/bin/env bats
# What every command answers after a conflict, a 409, a refusal or a 5xx
# (issue 16: "an answer line must say what happened"; docs/exit-codes.md).
# Faults are injected with the fault file around the real store (fs and
# s3): `error 409` is classified as the store would (a conflict on a
# write), `error 403` a definite refusal, `error 503` ambiguous (not sent),
# `lose` sent and landed with the reply dropped.
#   - a definite refusal exits 1 in every command, never 111 (retrying
#     cannot help); a 5xx or a timeout exits 111
#   - a fence refused by a 409 while the node did not write is `failed
#     reason=conflict-unchanged`, never `alive`

# run-all: sanitizers
load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

INST=0123456789abcdef0123456789abcdef

body() { printf 'wasmkeep-node 3\n%s %s\nwritten_at_ms %s\nnode %s\nseq 1\n' "$@"; }
put_obj() {
	local key=$1
	shift
	keep-store put "$key" "$@" | sed -n 's/.*outcome=ok version=\([^ ]*\).*/\1/p'
}
version_of() { keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p'; }

# a stale live n1 (written 20 s ago) and a live peer n2 whose lease is valid
stale_n1_live_n2() {
	start_bg n2 lease-write --node-id n2
	wait_line 30 n2 '^live '
	fencer_ready n2 # no fence before live_since + period + attempt (docs/fencing.md)
	W=$(($(now_ms) - 20000))
	V1=$(body live $INST $W n1 | put_obj nodes/n1 --if-none-match)
	[ -n "$V1" ]
}

@test "answers: a peer fence refused by a 409 while the node did not write: failed reason=conflict-unchanged, not alive" {
	stale_n1_live_n2
	echo 'put nodes/n1 error 409 count=1' >"$FAULT_FILE"
	run -0 --separate-stderr lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST written_at_ms=$W"
	assert_output "failed node=n1 instance=$INST written_at_ms=$W reason=conflict-unchanged"
	[[ $stderr == *"fence of nodes/n1: conflict: injected: error 409"* ]]
	[ "$(version_of nodes/n1)" = "$V1" ] # nothing written
	# the next stale line fences it
	run -0 --separate-stderr lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST written_at_ms=$W"
	assert_output --regexp "^fenced node=n1 instance=$INST written_at_ms=$W free_at_ms="
	refute_sanitizer_reports
}

@test "answers: a peer fence answered 5xx: failed reason=ambiguous-unchanged when it did not land, fenced when it did" {
	stale_n1_live_n2
	echo 'put nodes/n1 error 503 count=1' >"$FAULT_FILE"
	run -0 --separate-stderr lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST written_at_ms=$W"
	assert_output "failed node=n1 instance=$INST written_at_ms=$W reason=ambiguous-unchanged"
	[ "$(version_of nodes/n1)" = "$V1" ]
	# the reply lost, the fence landed: the re-read shows ours
	echo 'put nodes/n1 lose count=1' >"$FAULT_FILE"
	run -0 --separate-stderr lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST written_at_ms=$W"
	assert_output --regexp "^fenced node=n1 instance=$INST written_at_ms=$W free_at_ms=[0-9]+ reason=landed decided_mono_ms=[0-9]+ live_since_mono_ms=[0-9]+\$"
	run -0 keep-store get nodes/n1
	assert_line "fenced_by n2"
}

@test "answers: an operator fence retries a 409 on a fresh read; gives up with 111 naming what happened; a refusal is 1" {
	W=$(($(now_ms) - 20000))
	V1=$(body live $INST $W n1 | put_obj nodes/n1 --if-none-match)
	echo 'put nodes/n1 error 409' >"$FAULT_FILE"
	run -111 --separate-stderr lease-fence n1
	assert_output ""
	[[ $stderr == *"nodes/n1: 5 fences did not land (the last: conflict: injected: error 409): run it again"* ]]
	[ "$(version_of nodes/n1)" = "$V1" ]
	echo 'put nodes/n1 error 503' >"$FAULT_FILE"
	run -111 --separate-stderr lease-fence n1
	[[ $stderr == *"5 fences did not land (the last: ambiguous: injected: error 503)"* ]]
	echo 'put nodes/n1 error 403' >"$FAULT_FILE"
	run -1 --separate-stderr lease-fence n1
	[[ $stderr == *"unable to fence nodes/n1: the store refused the write: injected: error 403"* ]]
	echo 'get nodes/n1 error 403' >"$FAULT_FILE"
	run -1 --separate-stderr lease-fence n1
	echo 'put nodes/n1 error 409 count=1' >"$FAULT_FILE"
	run -0 --separate-stderr lease-fence n1
	assert_output --regexp "^fenced node=n1 instance=$INST written_at_ms=$W "
}

@test "answers: a lease write answered 409 by another request stays live (its re-read shows its own object)" {
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	echo 'put nodes/n1 error 409 count=1' >"$FAULT_FILE"
	wait_for 10 sh -c "! grep -q 409 '$FAULT_FILE'"
	# two more renewals: still live, never lost
	for i in 1 2; do
		w=$(lease-status --node-id n1 | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p')
		wait_for 10 sh -c "[ \"\$(lease-status --node-id n1 | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p')\" != '$w' ]"
	done
	run -0 lease-status --node-id n1
	run ! grep -q '^lost ' "$BATS_TEST_TMPDIR/n1.out"
	bg_running n1
}

@test "answers: upgrade-mark forget whose delete is answered 409 says the object is unchanged, not changed" {
	printf 'wasmkeep-node 1\nnode old\nwritten_at_ms %s\n' $(($(now_ms) - 600000)) |
		keep-store put nodes/old >/dev/null
	echo 'del nodes/old error 409 count=1' >"$FAULT_FILE"
	run -1 --separate-stderr upgrade-mark --horizon-ms 0 forget old
	assert_output "kept node=old reason=conflict-unchanged"
	run -0 --separate-stderr upgrade-mark --horizon-ms 0 forget old
	assert_output --regexp '^forgot node=old '
	echo 'del nodes/ error 403' >"$FAULT_FILE"
	printf 'wasmkeep-node 1\nnode old2\nwritten_at_ms 5\n' | keep-store put nodes/old2 >/dev/null
	run -1 --separate-stderr upgrade-mark --horizon-ms 0 forget old2
	assert_output "error node=old2 reason=store"
	echo 'del nodes/ error 503' >"$FAULT_FILE"
	run -111 --separate-stderr upgrade-mark --horizon-ms 0 forget old2
}

@test "answers: node-watch --once: a refused listing or read exits 1, an ambiguous one 111, the node shown unreadable" {
	body live $INST "$(now_ms)" n2 | keep-store put nodes/n2 >/dev/null
	echo 'list nodes/ error 403' >"$FAULT_FILE"
	run -1 --separate-stderr node-watch --once
	[[ $stderr == *"unable to list nodes/: refused: injected: error 403"* ]]
	echo 'list nodes/ error 503' >"$FAULT_FILE"
	run -111 --separate-stderr node-watch --once
	echo 'get nodes/n2 error 403' >"$FAULT_FILE"
	run -1 --separate-stderr node-watch --once
	assert_output --regexp '^node id=n2 state=unreadable .*reason="read refused"$'
	echo 'get nodes/n2 error 503' >"$FAULT_FILE"
	run -111 --separate-stderr node-watch --once
	assert_output --regexp '^node id=n2 state=unreadable .*reason="read ambiguous"$'
}

@test "answers: every command exits 1 on a definite refusal (403) and 111 on a 5xx, never the other way" {
	body live $INST "$(now_ms)" n1 | keep-store put nodes/n1 >/dev/null
	printf 'wasmkeep-node 1\nnode old\nwritten_at_ms 5\n' | keep-store put nodes/old >/dev/null
	for st in 403 503; do
		want=1
		[ $st = 503 ] && want=111
		echo "* * error $st" >"$FAULT_FILE"
		echo "# error $st: every command exits $want"
		run -$want --separate-stderr keep-store get nodes/n1
		run -$want --separate-stderr keep-store list nodes/
		run -$want --separate-stderr keep-store put k <<<"x"
		run -$want --separate-stderr node-watch --once
		run -$want --separate-stderr lease-fence n1
		run -$want --separate-stderr owner-show t/c/a
		run -$want --separate-stderr upgrade-mark actors t/c/a
		run -$want --separate-stderr upgrade-mark --horizon-ms 0 forget old
		run -$want --separate-stderr upgrade-mark forget --stale
		run -$want --separate-stderr store-probe
	done
	echo '* * error 403' >"$FAULT_FILE"
	run -1 --separate-stderr upgrade-mark guard
	refute_sanitizer_reports
}

@test "answers: a bucket that does not exist is a definite refusal (1) in every command (s3)" {
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "s3 only"
	local url="s3://keep-no-such-bucket-$$"
	run -1 --separate-stderr keep-store --store "$url" list
	[[ $stderr == *NoSuchBucket* ]]
	run -1 --separate-stderr node-watch --store "$url" --once
	run -1 --separate-stderr lease-fence --store "$url" n1
	run -1 --separate-stderr owner-show --store "$url" t/c/a
	run -1 --separate-stderr upgrade-mark --store "$url" actors t/c/a
	run -1 --separate-stderr upgrade-mark --store "$url" guard
	run -1 --separate-stderr store-probe --store "$url"
}

@test "answers: node-watch --follow: failing listings count, and the watch state says failing, failed (after ttl), ok again" {
	start_bg n2 lease-write --node-id n2
	wait_line 30 n2 '^live '
	cat >>"$KEEP_CONFIG" <<YAML
metrics:
  textfile: $BATS_TEST_TMPDIR/metrics.prom
YAML
	start_bg w node-watch --node-id n2 --follow
	wait_for 10 grep -q 'listing=ok' "$STATE_DIR/n2/watch"
	echo 'list nodes/ error 503' >"$FAULT_FILE"
	wait_for 10 grep -q 'listing=failing' "$STATE_DIR/n2/watch"
	run -0 cat "$STATE_DIR/n2/watch"
	# (read as soon as it says failing, a period or more later on a loaded
	# machine: one failure or more, each counted; since when, on the boot
	# clock of updated_mono_ms)
	assert_output --regexp '^watch node=n2 pid=[0-9]+ boot=[^ ]+ updated_mono_ms=[1-9][0-9]* listing=failing since_mono_ms=[1-9][0-9]* since_wall_ms=[1-9][0-9]* failures=[1-9][0-9]* reason="ambiguous: injected: error 503"$'
	u=$(sed -n 's/.* updated_mono_ms=\([0-9]*\) .*/\1/p' <<<"$output")
	s=$(sed -n 's/.* since_mono_ms=\([0-9]*\) .*/\1/p' <<<"$output")
	[ "$s" -le "$u" ]
	# failing for ttl (3 s): failed, and said so once on stderr
	wait_for 10 grep -q 'listing=failed' "$STATE_DIR/n2/watch"
	grep -q 'this node should not be ready' "$BATS_TEST_TMPDIR/w.err"
	wait_for 10 grep -q 'keep_watch_list_failures_total{node="n2"} [3-9]' \
		"$BATS_TEST_TMPDIR/metrics.node-watch.prom"
	grep -qE 'keep_watch_listing_failing_seconds\{node="n2"\} ([1-9][0-9]*\.[0-9]+|0\.[0-9]*[1-9][0-9]*)$' "$BATS_TEST_TMPDIR/metrics.node-watch.prom"
	: >"$FAULT_FILE"
	wait_for 10 grep -q 'listing=ok' "$STATE_DIR/n2/watch"
	run -0 cat "$STATE_DIR/n2/watch"
	assert_output --regexp ' listing=ok since_mono_ms=0 since_wall_ms=0 failures=0 reason=-$'
	refute_sanitizer_reports
}
