#!/usr/bin/env bats
# A mistyped fence (issue 27): lease-fence NODE over an absent nodes/NODE
# writes nothing and says which known ids are closest (exit 1), unless told
# --create; a created fence of an id no record names can be removed again
# with upgrade-mark forget NODE, which reads every owners/ record first
# (docs/fencing.md "An absent node", docs/runbooks/fence-a-node.md).
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

INST=0123456789abcdef0123456789abcdef

# node ID : a live format-3 object nodes/ID, written now
node() {
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms %s\nnode %s\nseq 1\n' "$INST" "$(now_ms)" "$1" |
		keep-store put "nodes/$1" --if-none-match >/dev/null
}

# record KEY NODE : owners/KEY held by NODE at generation 1
record() {
	printf 'wasmkeep-owner 1\nheld %s %s\ngeneration 1\n' "$2" "$INST" |
		keep-store put "owners/$1" --if-none-match >/dev/null
}

@test "fence-mistyped: an absent node is refused with the closest known ids, nothing written; --create fences it" {
	node n1
	node n12
	node web-3
	node db
	run -1 --separate-stderr lease-fence n11
	[ "$output" = "refused node=n11 instance=- written_at_ms=- reason=absent" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "lease-fence: fatal: nodes/n11 does not exist: nothing written (known nodes closest to n11: n1, n12, db (of 4)); \`lease-fence --create n11\` fences an id that never wrote" ]
	run -1 keep-store stat nodes/n11
	# JSON: the same refusal
	run -1 --separate-stderr lease-fence --json n11
	[ "$output" = '{"type":"refused","node":"n11","instance":null,"written_at_ms":null,"reason":"absent"}' ]
	run -1 keep-store stat nodes/n11
	# --create: the fence as before (instance -)
	run -0 --separate-stderr lease-fence --create n11
	assert_output --regexp '^fenced node=n11 instance=- written_at_ms=[0-9]+ free_at_ms=[0-9]+$'
	run -0 keep-store get nodes/n11
	assert_line --index 1 "fenced -"
	assert_line "fenced_by operator"
	# a live node needs no --create, and --create changes nothing for it
	run -0 --separate-stderr lease-fence --create n1
	assert_output --regexp "^fenced node=n1 instance=$INST "
	# --create is the operator's word, not a peer's
	run -100 --separate-stderr lease-fence --create --stdin --node-id n2
	refute_sanitizer_reports
}

@test "fence-mistyped: in an empty bucket, or when the listing fails, it still refuses" {
	run -1 --separate-stderr lease-fence n11
	[[ "$stderr" == *"(known nodes closest to n11: none: the bucket has no node)"* ]]
	echo 'list nodes/ error 503' >"$FAULT_FILE"
	run -1 --separate-stderr lease-fence n11
	[ "$output" = "refused node=n11 instance=- written_at_ms=- reason=absent" ]
	[[ "$stderr" == *"(known nodes closest to n11: unknown: the listing of nodes/ failed: ambiguous"* ]]
	run -1 keep-store stat nodes/n11
}

@test "fence-mistyped: upgrade-mark forget removes a created fence no record names, after reading every record" {
	node n1
	record t/c/a n1
	record t/c/b n1
	run -0 lease-fence --create n11
	run -0 --separate-stderr upgrade-mark forget n11
	assert_output --regexp '^forgot node=n11 format=3 written_at_ms=[0-9]+ checked_records=2$'
	[[ "$stderr" == *"none of the 2 ownership records under owners/ names n11: removing it"* ]]
	run -1 keep-store stat nodes/n11
	# gone: the id is no longer offered as a node
	run -0 node-watch --once
	refute_output --partial "id=n11 "
	# again: nothing to remove
	run -0 --separate-stderr upgrade-mark forget n11
	[ "$output" = "absent node=n11" ]
	# exit 0 (a second run is done), but a typo does not pass for a removal
	[ "$stderr" = "upgrade-mark: info: nodes/n11 does not exist: nothing to forget (check the id: \`node-watch --once\` lists the nodes)" ]
	refute_sanitizer_reports
}

@test "fence-mistyped: a created fence that a record names stays (it frees that record)" {
	run -0 lease-fence --create n9
	record t/c/a n1
	record t/c/z n9
	run -1 --separate-stderr upgrade-mark forget n9
	[ "$output" = "kept node=n9 reason=named key=t/c/z" ]
	[[ "$stderr" == *"owners/t/c/z names n9 (generation 1): the fence of nodes/n9 frees it, so it stays"* ]]
	run -0 keep-store stat nodes/n9
	# a record keep cannot read may name it: the fence stays too
	keep-store put owners/t/c/z --if-match "$(keep-store stat owners/t/c/z | sed 's/.* version=//')" \
		<<<"not a record" >/dev/null
	run -1 --separate-stderr upgrade-mark forget n9
	[ "$output" = "kept node=n9 reason=unreadable key=t/c/z" ]
	run -0 keep-store stat nodes/n9
	# --stale never touches a node lease, a created fence included
	run -0 upgrade-mark --horizon-ms 0 forget --stale
	[ -z "$output" ]
	run -0 keep-store stat nodes/n9
	# a peer's fence (a process wrote it) or a fence over a live object is a node lease: kept
	run -0 lease-fence --create n8
	node n7
	run -0 lease-fence n7
	run -1 --separate-stderr upgrade-mark forget n7
	[ "$output" = "kept node=n7 reason=format-3" ]
	# one line says why, and what forget removes
	[[ "$stderr" == "upgrade-mark: info: nodes/n7 is a node lease that a node of this keep wrote (format 3): nothing deleted; forget removes only "* ]]
	refute_sanitizer_reports
}
