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
	# an application root's record (ADR 0022) is one too, under its raw key
	printf 'x' | keep-store put apps/billing/owners/t/c/a >/dev/null
	run -100 --separate-stderr keep-store del apps/billing/owners/t/c/a
	[[ "$stderr" == "keep-store: fatal: refusing to delete 'apps/billing/owners/t/c/a' without --force: it is an ownership record: "* ]]
	run -0 keep-store stat apps/billing/owners/t/c/a
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

# instance_of NAME : the instance of lease-write NAME (its `live` line)
instance_of() { sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/$1.out" | head -n 1; }

@test "hand-deletions: owner-watch reports a held record that vanished, and one created again at a lower generation (text and JSON)" {
	run -0 upgrade-mark native
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	wait_line 30 n1 '^live '
	wait_line 30 n2 '^live '
	i1=$(instance_of n1)
	i2=$(instance_of n2)
	run -0 owner-acquire --node-id n1 t/c/a t/c/b
	run -0 owner-release --node-id n1 t/c/b
	run -0 owner-acquire --node-id n1 t/c/b
	[[ "$output" == "acquired key=t/c/b generation=2 "* ]]
	start_bg w owner-watch
	start_bg wj owner-watch --json
	wait_line 20 w '^synced keys=2$'
	wait_line 20 wj '^\{"type":"synced","keys":2\}$'
	# a held record deleted: its holder still passes owner-check (the hold
	# is local): owner-watch says so
	run -0 keep-store del --force owners/t/c/a
	wait_line 20 w "^removed key=t/c/a node=n1 instance=$i1 generation=1\$"
	wait_line 20 wj "^\\{\"type\":\"removed\",\"key\":\"t/c/a\",\"node\":\"n1\",\"instance\":\"$i1\",\"generation\":1\\}\$"
	run -0 owner-check --node-id n1 t/c/a 1
	# deleted and created again between two listings (both watchers held
	# still meanwhile): on a native cluster the record comes back at
	# generation 1 under n2 while n1 still holds generation 2
	kill -STOP "$(bg_pid w)" "$(bg_pid wj)"
	run -0 keep-store del --force owners/t/c/b
	run -0 owner-acquire --node-id n2 t/c/b
	[[ "$output" == "acquired key=t/c/b generation=1 "* ]]
	kill -CONT "$(bg_pid w)" "$(bg_pid wj)"
	wait_line 20 w "^recreated key=t/c/b node=n2 instance=$i2 generation=1 previous_node=n1 previous_generation=2\$"
	wait_line 20 wj "^\\{\"type\":\"recreated\",\"key\":\"t/c/b\",\"node\":\"n2\",\"instance\":\"$i2\",\"generation\":1,\"previous_node\":\"n1\",\"previous_generation\":2\\}\$"
	wait_line 20 w "^acquired key=t/c/b node=n2 instance=$i2 generation=1 previous_node=n1 missed=0\$"
	# the two holders the events warn about
	run -0 owner-check --node-id n1 t/c/b 2
	run -0 owner-check --node-id n2 t/c/b 1
	kill -TERM "$(bg_pid w)" "$(bg_pid wj)"
	run -0 wait_exit 10 w
	[ "$output" = 0 ]
	refute_sanitizer_reports
}
