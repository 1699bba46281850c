#!/usr/bin/env bats
# upgrade-mark actors: leases/ markers and generation seeds (ADR 0020 §6,
# Verification item 3: "the upgrade seeds generations above every existing
# segment, marks leases/ for found and new actors, and refuses a live old
# record that names the starting node's own id").
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500: an old lease is live until expires_at + 1500.

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

# put_old_lease KEY NODE GENERATION EXPIRES_AT_MS : an old per-actor lease
put_old_lease() {
	printf 'wasmkeep-lease 1\nnode %s\ngeneration %s\nexpires_at_ms %s\n' "$2" "$3" "$4" |
		keep-store put "leases/$1" >/dev/null
}
# put_seg KEY : a segment object (its key carries the generation)
put_seg() { printf 'x' | keep-store put "$1" >/dev/null; }

@test "upgrade-mark actors: seeds above every segment key and above the old lease's generation" {
	now=$(now_ms)
	put_old_lease t/c/a n1 7 $((now - 60000))
	put_seg wal/t/c/a/3/seg-1
	put_seg wal/t/c/a/0000000012/seg-2
	put_seg snapshot/t/c/a/9/snap
	put_old_lease t/c/b n2 21 $((now - 60000))
	put_seg wal/t/c/b/4/seg
	# a neighbour whose name extends a's: never counted for a
	put_seg wal/t/c/ab/99/seg
	run -0 --separate-stderr upgrade-mark actors t/c/a t/c/b
	assert_line --index 0 "marked key=t/c/a seed=12 action=replaced keys_max=12"
	assert_line --index 1 "marked key=t/c/b seed=21 action=replaced keys_max=4"
	run -0 keep-store get leases/t/c/a
	[ "$output" = "$(printf 'wasmkeep-lease 2\nseed 12')" ]
	run -0 keep-store get leases/t/c/b
	[ "$output" = "$(printf 'wasmkeep-lease 2\nseed 21')" ]
	refute_sanitizer_reports
}

@test "upgrade-mark actors: markers for found actors (--all) and brand-new ones; an old reader sees header 2" {
	now=$(now_ms)
	put_old_lease t/c/old n1 5 $((now - 60000))
	put_seg wal/t/c/walonly/2/seg
	put_seg snapshot/t/c/snaponly/6/snap
	run -0 --separate-stderr upgrade-mark actors --all
	[ "${#lines[@]}" -eq 3 ]
	assert_line "marked key=t/c/old seed=5 action=replaced keys_max=0"
	assert_line "marked key=t/c/snaponly seed=6 action=created keys_max=6"
	assert_line "marked key=t/c/walonly seed=2 action=created keys_max=2"
	# a brand-new actor, from stdin
	run -0 --separate-stderr upgrade-mark actors <<<"t/c/new"
	[ "$output" = "marked key=t/c/new seed=0 action=created keys_max=0" ]
	for k in old walonly snaponly new; do
		run -0 keep-store get "leases/t/c/$k"
		# an old-format reader accepts only `wasmkeep-lease 1`: this is not a lease to it
		[ "${lines[0]}" = "wasmkeep-lease 2" ]
		[[ "${lines[1]}" =~ ^seed\ [0-9]+$ ]]
		[ "${#lines[@]}" -eq 2 ]
	done
	refute_sanitizer_reports
}

@test "upgrade-mark actors: idempotent; a marker keeps its seed, raised by keys found since" {
	run -0 upgrade-mark actors t/c/a
	[ "$output" = "marked key=t/c/a seed=0 action=created keys_max=0" ]
	v=$(keep-store stat leases/t/c/a)
	run -0 upgrade-mark actors t/c/a
	[ "$output" = "marked key=t/c/a seed=0 action=existing keys_max=0" ]
	[ "$(keep-store stat leases/t/c/a)" = "$v" ]
	put_seg wal/t/c/a/4/seg
	run -0 upgrade-mark actors t/c/a
	[ "$output" = "marked key=t/c/a seed=4 action=existing keys_max=4" ]
}

@test "upgrade-mark actors: a live old lease is refused whatever node it names, nothing written" {
	# grace 10 s: "expired, within grace" below stays so for 9.5 s, room
	# for a loaded machine's steps (with 1.5 s it ran out before the check)
	keep_setup 3000 10000 600 300 1000
	now=$(now_ms)
	put_old_lease t/c/a n1 7 $((now + 60000))
	v=$(keep-store stat leases/t/c/a)
	run -1 --separate-stderr upgrade-mark --node-id n1 actors t/c/a
	[ "$output" = "held key=t/c/a node=n1 generation=7 expires_at_ms=$((now + 60000)) live_until_ms=$((now + 70000))" ]
	[ "$(keep-store stat leases/t/c/a)" = "$v" ]
	# expired, but within grace: still live by the old rules
	put_old_lease t/c/b n2 3 $(($(now_ms) - 500))
	run -1 upgrade-mark actors t/c/b
	[[ "$output" == "held key=t/c/b node=n2 generation=3 "* ]]
	# past expires_at + grace: replaced
	put_old_lease t/c/c n2 3 $((now - 10100))
	run -0 upgrade-mark actors t/c/c
	[ "$output" = "marked key=t/c/c seed=3 action=replaced keys_max=0" ]
	# a batch reports each key; the worst code wins
	run -1 upgrade-mark actors t/c/a t/c/c
	assert_line --index 0 --partial "held key=t/c/a"
	assert_line --index 1 "marked key=t/c/c seed=3 action=existing keys_max=0"
	refute_sanitizer_reports
}

@test "upgrade-mark actors: an unreadable leases/ object or segment key is refused (17), a bad key is usage (100)" {
	printf 'wasmkeep-lease 1\nnode n1\n' | keep-store put leases/t/c/bad >/dev/null
	run -17 --separate-stderr upgrade-mark actors t/c/bad
	[ "$output" = "error key=t/c/bad reason=bad-object" ]
	run -0 keep-store get leases/t/c/bad
	[ "${lines[1]}" = "node n1" ]
	put_seg wal/t/c/x/notagen/seg
	run -17 --separate-stderr upgrade-mark actors t/c/x
	[ "$output" = "error key=t/c/x reason=bad-key" ]
	run -1 keep-store get leases/t/c/x
	run -100 --separate-stderr upgrade-mark actors 'bad key'
	[ "$output" = 'error key="bad key" reason=invalid-key' ]
	run -100 --separate-stderr upgrade-mark actors --all t/c/a
	run -100 --separate-stderr upgrade-mark frobnicate
	run -0 upgrade-mark -h
	assert_output --partial "upgrade-mark"
}
