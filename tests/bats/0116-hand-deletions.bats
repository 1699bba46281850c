#!/usr/bin/env bats
# Hand deletions under nodes/ and owners/ are hard and visible (issue 23
# item 6; docs/operations.md "Deleting objects by hand"): keep-store del
# refuses them without --force (one line saying what it would break, exit
# 100, nothing deleted). Runs on the fs store and on a real S3 server.

# shellcheck disable=SC2154 # output, stderr: set by bats' run
load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

@test "hand-deletions: keep-store del refuses a node lease or a record without --force, and deletes it with --force" {
	printf 'x' | keep-store put nodes/n1 >/dev/null
	printf 'x' | keep-store put owners/t/c/a >/dev/null
	printf 'x' | keep-store put scratch/k >/dev/null
	run -100 --separate-stderr keep-store del nodes/n1
	[ "$output" = "" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "keep-store: fatal: refusing to delete 'nodes/n1' without --force: it is a node lease: "* ]]
	[[ "$stderr" == *"fence it instead (docs/operations.md)" ]]
	run -0 keep-store stat nodes/n1
	run -100 --separate-stderr keep-store del owners/t/c/a
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "keep-store: fatal: refusing to delete 'owners/t/c/a' without --force: it is an ownership record: "* ]]
	[[ "$stderr" == *"two owners, and fencing tokens that go backwards; release it instead (docs/operations.md)" ]]
	run -0 keep-store stat owners/t/c/a
	# refused before the configuration is read: nothing reaches the store
	echo 'del * error 503' >"$FAULT_FILE"
	run -100 --separate-stderr keep-store del --if-match '"v"' nodes/n1
	: >"$FAULT_FILE"
	# other keys need no --force; --force deletes
	run -0 keep-store del scratch/k
	run -0 --separate-stderr keep-store del --force nodes/n1
	[ "$output" = "del key=nodes/n1 outcome=ok" ]
	run -1 keep-store stat nodes/n1
	run -0 --separate-stderr keep-store del --force owners/t/c/a
	[ "$output" = "del key=owners/t/c/a outcome=ok" ]
	run -1 keep-store stat owners/t/c/a
	# --force belongs to del only
	run -100 --separate-stderr keep-store get --force nodes/n1
	[[ "${stderr_lines[0]}" == *"--force only applies to del"* ]]
	refute_sanitizer_reports
}
