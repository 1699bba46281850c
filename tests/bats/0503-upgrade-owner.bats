#!/usr/bin/env bats
# owner-acquire's first acquisition under the upgrade (ADR 0020 §6), and an
# old-format heartbeat freeing no record (§2). Runs on the fs store and on a
# real S3 server. Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

put_old_lease() {
	printf 'wasmkeep-lease 1\nnode %s\ngeneration %s\nexpires_at_ms %s\n' "$2" "$3" "$4" |
		keep-store put "leases/$1" >/dev/null
}
put_seg() { printf 'x' | keep-store put "$1" >/dev/null; }
put_old_hb() {
	printf 'wasmkeep-node %s\nnode %s\nwritten_at_ms %s\n' "$2" "$1" "$3" |
		keep-store put "nodes/$1" >/dev/null
}
field() { printf '%s\n' "$output" | sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }

start_node() {
	start_bg "$1" lease-write --node-id "$2"
	wait_line 30 "$1" '^live '
}

@test "owner-acquire: the first record is created above every segment key and the old lease's generation" {
	start_node n1 n1
	now=$(now_ms)
	put_old_lease t/c/a n1 7 $((now - 60000))
	put_seg wal/t/c/a/11/seg
	put_seg snapshot/t/c/a/0000000013/snap
	put_seg wal/t/c/b/5/seg
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/a t/c/b t/c/new
	assert_line --index 0 --regexp '^acquired key=t/c/a generation=14 version=[^ ]+ new=yes$'
	assert_line --index 1 --regexp '^acquired key=t/c/b generation=6 version=[^ ]+ new=yes$'
	assert_line --index 2 --regexp '^acquired key=t/c/new generation=1 version=[^ ]+ new=yes$'
	# each marker is confirmed once its first record exists (created G)
	run -0 keep-store get leases/t/c/a
	[ "$output" = "$(printf 'wasmkeep-lease 2\nseed 13\ncreated 14')" ]
	run -0 keep-store get leases/t/c/b
	[ "$output" = "$(printf 'wasmkeep-lease 2\nseed 5\ncreated 6')" ]
	run -0 keep-store get leases/t/c/new
	[ "$output" = "$(printf 'wasmkeep-lease 2\nseed 0\ncreated 1')" ]
	# later acquisitions go on from the record, never lower
	run -0 owner-release --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 15 ]
	refute_sanitizer_reports
}

@test "owner-acquire: a live old lease naming this node's own id is refused (held, exit 1), nothing written" {
	start_node n1 n1
	now=$(now_ms)
	put_old_lease t/c/a n1 7 $((now + 60000))
	v=$(keep-store stat leases/t/c/a)
	run -1 --separate-stderr owner-acquire --node-id n1 t/c/a
	[ "$output" = "held key=t/c/a node=n1 instance=- generation=7 free_at_ms=$((now + 61500))" ]
	run -1 keep-store stat owners/t/c/a
	[ "$(keep-store stat leases/t/c/a)" = "$v" ]
	# another node's live lease too
	put_old_lease t/c/b n2 3 $((now + 60000))
	run -1 owner-acquire --node-id n1 t/c/b
	[[ "$output" == "held key=t/c/b node=n2 instance=- generation=3 "* ]]
	# once expired past grace, it is replaced by the marker and seeded
	put_old_lease t/c/c n1 8 $((now - 1600))
	run -0 owner-acquire --node-id n1 t/c/c
	[ "$(field generation)" = 9 ]
	run -0 keep-store get leases/t/c/c
	[ "${lines[0]}" = "wasmkeep-lease 2" ]
	refute_sanitizer_reports
}

@test "owner-acquire: a crash between marker and record is repaired by the next acquisition" {
	start_node n1 n1
	put_seg wal/t/c/a/4/seg
	# upgrade-mark wrote the marker, no record yet (as after a crash)
	run -0 upgrade-mark actors t/c/a
	[ "$output" = "marked key=t/c/a seed=4 action=existing keys_max=4" ] ||
		[ "$output" = "marked key=t/c/a seed=4 action=created keys_max=4" ]
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 5 ]
	# an unreadable leases/ object refuses the first acquisition
	printf 'garbage\n' | keep-store put leases/t/c/z >/dev/null
	run -17 --separate-stderr owner-acquire --node-id n1 t/c/z
	[ "$output" = "error key=t/c/z reason=bad-lease" ]
	run -1 keep-store stat owners/t/c/z
}

@test "owner-acquire: an old-format heartbeat frees no record (the holder's nodes/ object is old-format -> held)" {
	start_node n1 n1
	# a record held by n2, whose nodes/ object is an old-format heartbeat, long stale
	printf 'wasmkeep-owner 1\nheld n2 0123456789abcdef0123456789abcdef\ngeneration 4\n' |
		keep-store put owners/t/c/a >/dev/null
	put_old_hb n2 2 $(( $(now_ms) - 600000 ))
	run -1 --separate-stderr owner-acquire --node-id n1 t/c/a
	[ "$output" = "held key=t/c/a node=n2 instance=0123456789abcdef0123456789abcdef generation=4" ]
	put_old_hb n2 1 $(now_ms)
	run -1 owner-acquire --node-id n1 t/c/a
	[[ "$output" == "held key=t/c/a node=n2 "* ]]
	run -0 keep-store get owners/t/c/a
	[ "${lines[1]}" = "held n2 0123456789abcdef0123456789abcdef" ]
	refute_sanitizer_reports
}
