#!/usr/bin/env bats
# node-watch --once (cluster status) and --follow events: the documented
# format for live, released, fenced, old-format and unreadable objects
# (ADR 0020 §2, §6; docs/fencing.md). fs store and real S3.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

IA=0123456789abcdef0123456789abcdef
IB=fedcba9876543210fedcba9876543210

put_body() { keep-store put "nodes/$1" --if-none-match >/dev/null; }

@test "fence-status: node-watch --once prints one documented line per node, in key order" {
	now=$(now_ms)
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms %s\nnode n1\nseq 3\n' $IA $now | put_body n1
	printf 'wasmkeep-node 3\nreleased %s\nwritten_at_ms %s\nnode n2\nseq 4\n' $IB $((now - 1000)) | put_body n2
	printf 'wasmkeep-node 3\nfenced %s\nwritten_at_ms %s\nnode n3\nseq 4\nfenced_by n1\nfenced_at_ms %s\n' $IA $((now - 2000)) $now | put_body n3
	# n4 is fresh (an old version running) while younger than ttl + grace,
	# 4.5 s: dated 20 s ahead, it stays fresh through six puts and
	# node-watch's start on a loaded machine (dated now, it was 6.3 s old)
	printf 'wasmkeep-node 2\nnode n4\nwritten_at_ms %s\n' $((now + 20000)) | put_body n4
	printf 'wasmkeep-node 1\nnode n5\nwritten_at_ms %s\n' $((now - 100000)) | put_body n5
	printf 'not a node\n' | put_body n6
	run -0 --separate-stderr node-watch --once
	[ "${#lines[@]}" -eq 6 ]
	assert_line --index 0 --regexp "^node id=n1 state=live instance=$IA written_at_ms=$now age_ms=-?[0-9]+ format=3\$"
	assert_line --index 1 --regexp "^node id=n2 state=released instance=$IB written_at_ms=$((now - 1000)) age_ms=[0-9]+ format=3 free_at_ms=$((now + 3500))\$"
	assert_line --index 2 --regexp "^node id=n3 state=fenced instance=$IA written_at_ms=$((now - 2000)) age_ms=[0-9]+ format=3 fenced_by=n1 fenced_at_ms=$now free_at_ms=$((now + 2500))\$"
	assert_line --index 3 --regexp "^node id=n4 state=old-running instance=- written_at_ms=$((now + 20000)) age_ms=0 format=2 ahead_ms=[0-9]+\$"
	assert_line --index 4 --regexp "^node id=n5 state=old-retired instance=- written_at_ms=$((now - 100000)) age_ms=[0-9]+ format=1\$"
	assert_line --index 5 'node id=n6 state=unreadable instance=- written_at_ms=- age_ms=- format=- reason="not a node object"'
	run -0 node-watch --once --table
	assert_line --index 0 --regexp '^NODE +STATE +FORMAT +INSTANCE +WRITTEN_AT_MS +AGE +NOTE$'
	assert_line --regexp '^n4 +old-running .*an old version is running'
	assert_line --regexp '^n5 +old-retired .*retired'
	refute_sanitizer_reports
}

@test "fence-status: an empty bucket prints nothing; an unreachable store exits 111" {
	run -0 node-watch --once
	assert_output ""
	echo 'list * fail' >"$FAULT_FILE"
	run -111 --separate-stderr node-watch --once
	[[ "$stderr" == *"unable to list nodes/"* ]]
}

@test "fence-status: --follow prints join, change and leave" {
	now=$(now_ms)
	start_bg w node-watch --follow
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms %s\nnode n1\nseq 3\n' $IA $now | put_body n1
	wait_line 10 w "^join node=n1 state=live instance=$IA written_at_ms=$now format=3\$"
	run -0 lease-fence n1
	wait_line 10 w "^change node=n1 state=fenced instance=$IA written_at_ms=$now format=3\$"
	run -0 keep-store del --force nodes/n1
	wait_line 10 w "^leave node=n1 state=fenced "
	run ! grep -q '^stale ' "$BATS_TEST_TMPDIR/w.out"
	refute_sanitizer_reports
}

@test "fence-status: usage" {
	run -100 --separate-stderr node-watch --table
	run -100 --separate-stderr node-watch --once --follow
	run -0 node-watch -h
	assert_output --partial "usage: node-watch"
}
