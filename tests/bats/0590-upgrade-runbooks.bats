#!/usr/bin/env bats
# The runbooks' commands run: every ```sh block of docs/runbooks/upgrade.md
# and docs/runbooks/forget-old-heartbeats.md, as written, against a store
# holding what the old binaries leave (stale old heartbeats, expired
# per-actor leases, segments) and a new node started by the test.
# ```text blocks are host-specific and not run. Runs on fs and S3.

load helpers/common

ROOT="$BATS_TEST_DIRNAME/../.."

setup() { keep_setup; }
teardown() { keep_teardown; }

# sh_blocks FILE DIR : write each ```sh block of FILE to DIR/NN.sh (fence
# indentation removed); prints the count.
sh_blocks() {
	awk -v dir="$2" '
		!inb && /^[ \t]*```sh[ \t]*$/ { inb = 1; n++; match($0, /^[ \t]*/); ind = RLENGTH;
			f = sprintf("%s/%02d.sh", dir, n); printf "" > f; next }
		inb && /^[ \t]*```[ \t]*$/ { inb = 0; close(f); next }
		inb { print substr($0, ind + 1) >> f }
		END { print n + 0 }' "$1"
}

old_state() {
	now=$(now_ms)
	printf 'wasmkeep-node 2\nnode old1\nwritten_at_ms %s\n' $((now - 600000)) | keep-store put nodes/old1 >/dev/null
	printf 'wasmkeep-node 1\nnode old2\nwritten_at_ms %s\n' $((now - 90000)) | keep-store put nodes/old2 >/dev/null
	printf 'wasmkeep-lease 1\nnode old1\ngeneration 7\nexpires_at_ms %s\n' $((now - 600000)) |
		keep-store put leases/t/c/a >/dev/null
	printf 'x' | keep-store put wal/t/c/a/12/seg >/dev/null
	printf 'x' | keep-store put snapshot/t/c/b/3/snap >/dev/null
}

# run_runbook NAME : run every sh block of docs/runbooks/NAME; each must exit 0
run_runbook() {
	local d="$BATS_TEST_TMPDIR/blocks-$1" n f
	mkdir -p "$d"
	n=$(sh_blocks "$ROOT/docs/runbooks/$1" "$d")
	[ "$n" -ge 2 ]
	for f in "$d"/*.sh; do
		run --separate-stderr sh -e "$f"
		[ "$status" -eq 0 ] || { echo "$1 block $f: exit $status"; cat "$f"; echo "$output"; echo "$stderr"; false; }
		printf '%s\n' "$output" >>"$BATS_TEST_TMPDIR/$1.out"
	done
}

@test "runbook upgrade.md: its sh blocks run, mark the actors and forget the stale heartbeats" {
	old_state
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	run_runbook upgrade.md
	grep -q '^pass old=2$' "$BATS_TEST_TMPDIR/upgrade.md.out"
	grep -q '^marked key=t/c/a seed=12 action=replaced keys_max=12$' "$BATS_TEST_TMPDIR/upgrade.md.out"
	grep -q '^marked key=t/c/b seed=3 action=created keys_max=3$' "$BATS_TEST_TMPDIR/upgrade.md.out"
	grep -q '^forgot node=old1 ' "$BATS_TEST_TMPDIR/upgrade.md.out"
	run -0 keep-store get leases/t/c/a
	[ "${lines[0]}" = "wasmkeep-lease 2" ]
	run -1 keep-store stat nodes/old1
	run -0 keep-store stat nodes/n1
	run -0 lease-status --node-id n1
	refute_sanitizer_reports
}

@test "runbook forget-old-heartbeats.md: its sh blocks run and delete only stale old heartbeats" {
	old_state
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	printf 'wasmkeep-node 2\nnode fresh3\nwritten_at_ms %s\n' "$(now_ms)" | keep-store put nodes/fresh3 >/dev/null
	run_runbook forget-old-heartbeats.md
	grep -q '^forgot node=old1 format=2 ' "$BATS_TEST_TMPDIR/forget-old-heartbeats.md.out"
	grep -q '^forgot node=old2 format=1 ' "$BATS_TEST_TMPDIR/forget-old-heartbeats.md.out"
	grep -q '^kept node=fresh3 reason=fresh ' "$BATS_TEST_TMPDIR/forget-old-heartbeats.md.out"
	run -0 keep-store stat nodes/fresh3
	run -0 keep-store stat nodes/n1
	run -1 keep-store stat nodes/old2
	refute_sanitizer_reports
}
