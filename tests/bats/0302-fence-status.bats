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
	printf 'wasmkeep-node 1\nnode n5\nwritten_at_ms %s\n' $((now - 100000)) | put_body n5
	printf 'not a node\n' | put_body n6
	# n4 last: an old version runs while its heartbeat is younger than ttl +
	# grace (4.5 s), a bound the puts above may eat on a loaded machine
	n4at=$(now_ms)
	printf 'wasmkeep-node 2\nnode n4\nwritten_at_ms %s\n' $n4at | put_body n4
	run -0 --separate-stderr node-watch --once
	[ "${#lines[@]}" -eq 6 ]
	assert_line --index 0 --regexp "^node id=n1 state=live instance=$IA written_at_ms=$now age_ms=-?[0-9]+ format=3\$"
	assert_line --index 1 --regexp "^node id=n2 state=released instance=$IB written_at_ms=$((now - 1000)) age_ms=[0-9]+ format=3 free_at_ms=$((now + 3500))\$"
	assert_line --index 2 --regexp "^node id=n3 state=fenced instance=$IA written_at_ms=$((now - 2000)) age_ms=[0-9]+ format=3 fenced_by=n1 fenced_at_ms=$now free_at_ms=$((now + 2500))\$"
	assert_line --index 3 --regexp "^node id=n4 state=old-running instance=- written_at_ms=$n4at age_ms=-?[0-9]+ format=2\$"
	assert_line --index 4 --regexp "^node id=n5 state=old-retired instance=- written_at_ms=$((now - 100000)) age_ms=[0-9]+ format=1\$"
	assert_line --index 5 'node id=n6 state=unreadable instance=- written_at_ms=- age_ms=- format=- reason="not a node object"'
	# n4 is an old version running while its heartbeat is younger than ttl
	# + grace (4.5 s): written again right before the table, whatever the
	# time the lines above took on a loaded machine
	printf 'wasmkeep-node 2\nnode n4\nwritten_at_ms %s\n' "$(now_ms)" | keep-store put nodes/n4 >/dev/null
	run -0 node-watch --once --table
	assert_line --index 0 --regexp '^NODE +STATE +FORMAT +HOST +INSTANCE +WRITTEN_AT_MS +AGE +NOTE$'
	assert_line --regexp '^n4 +old-running .*an old version is running'
	assert_line --regexp '^n5 +old-retired .*retired'
	refute_sanitizer_reports
}

@test "fence-status: --table has a host column; a fence's records are free in Ns, or free since Ns, never a negative count" {
	now=$(now_ms)
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms %s\nnode n1\nseq 3\nhost web-1.example.net\n' $IA $now | put_body n1
	printf 'wasmkeep-node 3\nfenced %s\nwritten_at_ms %s\nnode n3\nseq 4\nfenced_by n1\nfenced_at_ms %s\n' $IA $now $now | put_body n3
	printf 'wasmkeep-node 3\nfenced %s\nwritten_at_ms %s\nnode n7\nseq 4\nhost db-2\nfenced_by operator\nfenced_at_ms %s\n' $IB $((now - 100000)) $((now - 90000)) | put_body n7
	run -0 --separate-stderr node-watch --once --table
	assert_line --index 0 --regexp '^NODE +STATE +FORMAT +HOST +INSTANCE +WRITTEN_AT_MS +AGE +NOTE$'
	assert_line --regexp "^n1 +live +3 +web-1\.example\.net +$IA "
	# ttl + grace is 4.5 s: n3's records are free within 5 s, n7's since 95 s
	assert_line --regexp "^n3 +fenced +3 +- +$IA .* by n1, free in [1-5]s\$"
	assert_line --regexp "^n7 +fenced +3 +db-2 +$IB .* by operator, free since 9[0-9]s\$"
	refute_output --partial "free in -"
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
