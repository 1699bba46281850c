#!/usr/bin/env bats
# lease-fence NODE, the operator's fence, end to end (ADR 0020 §2; docs/fencing.md).
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000:
# takeover (ttl + grace) 4500.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

INST_A=0123456789abcdef0123456789abcdef

# body STATE INSTANCE WRITTEN_AT NODE : a format-3 node object
body() { printf 'wasmkeep-node 3\n%s %s\nwritten_at_ms %s\nnode %s\nseq 1\n' "$@"; }
# put_obj KEY [keep-store put flags] < body : prints the new version
put_obj() {
	local key=$1; shift
	keep-store put "$key" "$@" | sed -n 's/.*outcome=ok version=\([^ ]*\).*/\1/p'
}
version_of() { keep-store stat "nodes/$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p'; }

@test "fence-operator: lease-fence NODE makes the running lease-write exit with the fenced code" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	inst=$(sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/n1.out")
	run -0 --separate-stderr lease-fence n1
	assert_output --regexp "^fenced node=n1 instance=$inst written_at_ms=[0-9]+ free_at_ms=[0-9]+$"
	w=$(echo "$output" | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p')
	f=$(echo "$output" | sed -n 's/.*free_at_ms=\([0-9]*\).*/\1/p')
	[ "$f" -eq $((w + 4500)) ]
	run wait_exit 10 n1
	[ "$output" = 10 ]
	grep -q '^lost .*reason=fenced' "$BATS_TEST_TMPDIR/n1.out"
	run -0 keep-store get nodes/n1
	assert_line --index 1 "fenced $inst"
	assert_line --index 2 "written_at_ms $w"
	assert_line "fenced_by operator"
	refute_sanitizer_reports
}

@test "fence-operator: a heartbeat that lands after a fence is refused by its condition" {
	now=$(now_ms)
	v1=$(body live $INST_A "$now" n1 | put_obj nodes/n1 --if-none-match)
	[ -n "$v1" ]
	run -0 lease-fence n1
	assert_output --partial "instance=$INST_A written_at_ms=$now "
	# the node's next lease write, If-Match the version it last wrote
	run -1 --separate-stderr keep-store put nodes/n1 --if-match "$v1" < <(body live $INST_A $((now + 1000)) n1)
	assert_output --partial "outcome=conflict"
	run -0 keep-store get nodes/n1
	assert_line --index 1 "fenced $INST_A"
}

@test "fence-operator: over an absent object it creates the fence with instance - (--create)" {
	t0=$(now_ms)
	run -0 --separate-stderr lease-fence --create n9
	assert_output --regexp '^fenced node=n9 instance=- written_at_ms=[0-9]+ free_at_ms=[0-9]+$'
	w=$(echo "$output" | sed -n 's/.*written_at_ms=\([0-9]*\).*/\1/p')
	[ "$w" -ge "$t0" ]
	run -0 keep-store get nodes/n9
	assert_line --index 0 "wasmkeep-node 3"
	assert_line --index 1 "fenced -"
	assert_line --index 2 "written_at_ms $w"
	assert_line --index 3 "node n9"
}

@test "fence-operator: refuses a fence, a released object and an old format; exit 1, nothing written" {
	now=$(now_ms)
	body live $INST_A "$now" n1 | put_obj nodes/n1 --if-none-match >/dev/null
	run -0 lease-fence n1
	v=$(version_of n1)
	run -1 --separate-stderr lease-fence n1
	assert_output --regexp '^already-fenced node=n1 instance=0123456789abcdef0123456789abcdef written_at_ms=[0-9]+ free_at_ms=[0-9]+ fenced_by=operator$'
	[[ "$stderr" == *"already fenced"* ]]
	[ "$(version_of n1)" = "$v" ]

	body released $INST_A "$now" n2 | put_obj nodes/n2 --if-none-match >/dev/null
	v=$(version_of n2)
	run -1 --separate-stderr lease-fence n2
	assert_output --partial "refused node=n2"
	assert_output --partial "reason=released"
	[ "$(version_of n2)" = "$v" ]

	printf 'wasmkeep-node 2\nnode n3\nwritten_at_ms %s\n' "$now" | put_obj nodes/n3 --if-none-match >/dev/null
	v=$(version_of n3)
	run -1 --separate-stderr lease-fence n3
	assert_output --partial "reason=old-format"
	[[ "$stderr" == *"old-format heartbeat"* ]]
	[ "$(version_of n3)" = "$v" ]
	run -0 keep-store get nodes/n3
	assert_line --index 0 "wasmkeep-node 2"
	refute_sanitizer_reports
}

@test "fence-operator: an object that is not ours is never overwritten (exit 17)" {
	printf 'hello\n' | put_obj nodes/n4 --if-none-match >/dev/null
	run -17 --separate-stderr lease-fence n4
	[[ "$stderr" == *"not a keep node object"* ]]
	run -0 keep-store get nodes/n4
	assert_output "hello"
}

@test "fence-operator: usage errors exit 100" {
	run -100 --separate-stderr lease-fence
	run -100 --separate-stderr lease-fence 'bad/id'
	run -100 --separate-stderr lease-fence n1 --stdin
	run -0 lease-fence -h
	assert_output --partial "usage: lease-fence"
}

@test "fence-operator: the store unreachable is a temporary failure (111), nothing written" {
	echo '* * fail' >"$FAULT_FILE"
	run -111 --separate-stderr lease-fence n1
	: >"$FAULT_FILE"
	run -1 keep-store stat nodes/n1
}

@test "fence-operator: start check shortcut: a restart over a fence of the instance it first read goes live without the full wait" {
	start_bg a lease-write --node-id n1
	wait_line 20 a '^live '
	kill -KILL "$(bg_pid a)"
	run -0 lease-fence n1
	f=$(echo "$output" | sed -n 's/.*free_at_ms=\([0-9]*\).*/\1/p')
	# wait until the fence's kept written_at + ttl + grace has passed
	wait_for 10 sh -c "[ \$((\$(date +%s%N) / 1000000)) -ge $f ]"
	t0=$(now_ms)
	start_bg b lease-write --node-id n1
	wait_line 30 b '^live '
	t1=$(now_ms)
	echo "# live $((t1 - t0)) ms after the start (the full check: 4500)"
	# lease-write's own decision is the check: it cut the start check short
	# (check-shortcut), then went live; the time above also counts a
	# sanitizer-built start, seconds on a loaded machine
	run -0 grep -E '^(check-start|check-shortcut|live) ' "$BATS_TEST_TMPDIR/b.out"
	[[ "${lines[0]}" == "check-start "* ]]
	[[ "${lines[1]}" == "check-shortcut "* ]]
	[[ "${lines[2]}" == "live "* ]]
	refute_sanitizer_reports
}
