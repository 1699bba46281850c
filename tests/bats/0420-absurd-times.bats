#!/usr/bin/env bats
# Absurd times in objects of the bucket (issue 18 item 4; docs/formats.md
# "Time bounds"): a written_at_ms (or fenced_at_ms, expires_at_ms) of
# INT64_MAX, past int64, negative, 0, beyond year 9999, far past, and at
# the year-9999 bound itself. Every command that reads such an object
# reports it, exits with its documented code, never crashes (a sanitizer
# build exits 98 on signed overflow), and never judges a record free
# because of it. Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 3000, grace 1500 (free at written_at + 4500).

load helpers/common

setup() { keep_setup; }
teardown() { keep_teardown; }

INST=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58
INST2=0123456789abcdef0123456789abcdef
HORIZON=253402300799999 # 9999-12-31T23:59:59.999Z: the largest time accepted
# refused at decode: over the bound (INT64_MAX and below it, past int64),
# negative, 0
REFUSED="9223372036854775807 9223372036854775806 253402300800000 99999999999999999999 -1 -9223372036854775808 0"

# node3 STATE WRITTEN_AT [INSTANCE] : a format-3 object of n1
node3() { printf 'wasmkeep-node 3\n%s %s\nwritten_at_ms %s\nnode n1\nseq 1\n' "$1" "${3:-$INST}" "$2"; }
# fenced3 WRITTEN_AT FENCED_AT : a peer's fence of n1
fenced3() { node3 fenced "$1"; printf 'fenced_by n3\nfenced_at_ms %s\n' "$2"; }

# plant KEY < body : store it; $VER its version
plant() {
	keep-store put "$1" >"$BATS_TEST_TMPDIR/put.out" || { cat "$BATS_TEST_TMPDIR/put.out"; return 1; }
	VER=$(keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p')
	[ -n "$VER" ]
}
# untouched KEY : still at version $VER
untouched() {
	local v
	v=$(keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p')
	[ "$v" = "$VER" ] || { echo "$1 was rewritten: $VER -> $v"; return 1; }
}

live_lease() {
	start_bg "lw-$1" lease-write --node-id "$1"
	wait_line 20 "lw-$1" '^live '
}

@test "absurd times: node-watch --once and lease-fence NODE refuse a written_at beyond year 9999, negative or 0 as malformed" {
	for w in $REFUSED; do
		for state in live fenced released; do
			echo "# $state written_at_ms=$w"
			plant nodes/n1 < <(node3 $state "$w")
			run -0 --separate-stderr node-watch --once
			assert_output --regexp '^node id=n1 state=unreadable instance=- written_at_ms=- age_ms=- format=- reason=.*written_at_ms'
			run -0 --separate-stderr node-watch --once --table
			assert_output --regexp 'n1 +unreadable .*written_at_ms'
			run -17 --separate-stderr lease-fence n1
			[[ "$stderr" == *"nodes/n1 is not a keep node object"*"nothing written"* ]]
			untouched nodes/n1
		done
	done
	# fenced_at_ms past the bound too
	plant nodes/n1 < <(fenced3 1767225600123 9223372036854775807)
	run -0 --separate-stderr node-watch --once
	assert_output --regexp '^node id=n1 state=unreadable .*reason=.*fenced_at_ms beyond year 9999'
	run -17 --separate-stderr lease-fence n1
	untouched nodes/n1
	refute_sanitizer_reports
}

@test "absurd times: far past and the year-9999 bound decode; their deadlines do not overflow" {
	plant nodes/n1 < <(fenced3 $HORIZON $HORIZON)
	run -0 --separate-stderr node-watch --once
	# dated ahead of this clock: age_ms 0, and how far ahead at the end
	assert_output --regexp "^node id=n1 state=fenced instance=$INST written_at_ms=$HORIZON age_ms=0 format=3 fenced_by=n3 fenced_at_ms=$HORIZON free_at_ms=$((HORIZON + 4500)) ahead_ms=2[0-9]{14}\$"
	run -0 --separate-stderr node-watch --once --table
	assert_output --regexp "n1 +fenced .* ahead +by n3, free in [0-9]+s; written_at [0-9]+s ahead of this clock"
	plant nodes/n1 < <(node3 released $HORIZON)
	run -0 --separate-stderr node-watch --once
	assert_output --regexp "state=released .*age_ms=0 .*free_at_ms=$((HORIZON + 4500)) ahead_ms=[0-9]+\$"
	plant nodes/n1 < <(node3 live $HORIZON)
	run -0 --separate-stderr node-watch --once
	assert_output --regexp "^node id=n1 state=live instance=$INST written_at_ms=$HORIZON age_ms=0 format=3 ahead_ms=[0-9]+\$"
	run -0 --separate-stderr node-watch --once --json
	assert_output --regexp '"age_ms":0,.*"ahead_ms":[0-9]+\}$'
	plant nodes/n1 < <(node3 live 1)
	run -0 --separate-stderr node-watch --once
	assert_output --regexp '^node id=n1 state=live .*written_at_ms=1 age_ms=1[0-9]{12} format=3$'
	# the operator's fence keeps the written_at: free at the bound + 4500
	plant nodes/n1 < <(node3 live $HORIZON)
	run -0 --separate-stderr lease-fence n1
	assert_output "fenced node=n1 instance=$INST written_at_ms=$HORIZON free_at_ms=$((HORIZON + 4500))"
	refute_sanitizer_reports
}

@test "absurd times: owner-acquire and owner-show never free a record because of its holder's absurd written_at" {
	live_lease n2
	plant owners/t/c/a < <(printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration 5\n' $INST)
	rv=$VER
	for w in $REFUSED; do
		echo "# fenced written_at_ms=$w"
		plant nodes/n1 < <(node3 fenced "$w")
		run -1 --separate-stderr owner-acquire --node-id n2 t/c/a
		assert_output "held key=t/c/a node=n1 instance=$INST generation=5"
		run -0 --separate-stderr owner-show t/c/a
		assert_output "owner key=t/c/a state=held node=n1 instance=$INST generation=5 holder=unreadable free=no"
		VER=$rv untouched owners/t/c/a
	done
	# a fence or a release dated at the bound: free only then
	for state in fenced released; do
		plant nodes/n1 < <(node3 $state $HORIZON)
		run -1 --separate-stderr owner-acquire --node-id n2 t/c/a
		assert_output "held key=t/c/a node=n1 instance=$INST generation=5 free_at_ms=$((HORIZON + 4500))"
		run -0 --separate-stderr owner-show t/c/a
		assert_output --partial "holder=$state free=no"
	done
	# live naming the record's instance, written at the dawn of time: held
	plant nodes/n1 < <(node3 live 1)
	run -1 --separate-stderr owner-acquire --node-id n2 t/c/a
	assert_output "held key=t/c/a node=n1 instance=$INST generation=5"
	run -0 --separate-stderr owner-show t/c/a
	assert_output --partial 'holder=live free=no'
	VER=$rv untouched owners/t/c/a
	# an old lease in leases/ expiring past the bound: not ours (17), nothing written
	plant leases/t/c/b < <(printf 'wasmkeep-lease 1\nnode n1\ngeneration 3\nexpires_at_ms 9223372036854775807\n')
	run -17 --separate-stderr owner-acquire --node-id n2 t/c/b
	assert_output --regexp '^error key=t/c/b reason='
	[[ "$stderr" == *"leases/t/c/b"* ]]
	untouched leases/t/c/b
	run -1 keep-store stat owners/t/c/b
	# and the test can go the other way: a fence whose bound passed frees it
	plant nodes/n1 < <(node3 fenced $(($(now_ms) - 10000)))
	run -0 --separate-stderr owner-acquire --node-id n2 t/c/a
	assert_output --regexp '^acquired key=t/c/a generation=6 '
	refute_sanitizer_reports
}

@test "absurd times: lease-fence --stdin answers bad-object or not-yet, never a fence" {
	live_lease n2
	fencer_ready n2
	for w in $REFUSED; do
		echo "# live written_at_ms=$w"
		plant nodes/n1 < <(node3 live "$w")
		run -0 --separate-stderr lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST written_at_ms=$HORIZON"
		assert_output "bad-object node=n1 instance=$INST written_at_ms=$HORIZON reason=unreadable"
		untouched nodes/n1
	done
	# at the bound: not yet, free at the bound + 4500 (too far to wait for)
	plant nodes/n1 < <(node3 live $HORIZON)
	run -0 --separate-stderr timeout 20 lease-fence --node-id n2 --stdin <<<"stale node=n1 instance=$INST written_at_ms=$HORIZON"
	assert_output "not-yet node=n1 instance=$INST written_at_ms=$HORIZON free_at_ms=$((HORIZON + 4500))"
	untouched nodes/n1
	# a stale line whose times are absurd is a bad line: skipped
	run -0 --separate-stderr lease-fence --node-id n2 --stdin <<EOF
stale node=n1 instance=$INST written_at_ms=9223372036854775807
stale node=n1 instance=$INST written_at_ms=253402300800000
stale node=n1 instance=$INST written_at_ms=$HORIZON live_since_mono_ms=99999999999999999999
EOF
	[ -z "$output" ]
	[ "$(grep -c 'warning: input line' <<<"$stderr")" -eq 3 ]
	untouched nodes/n1
	refute_sanitizer_reports
}

@test "absurd times: lease-write's start check over its own id: refused (17), or at the bound a floor it never writes below (111)" {
	for w in 9223372036854775807 253402300800000 0; do
		echo "# written_at_ms=$w"
		plant nodes/n1 < <(fenced3 "$w" 1767225600123)
		run -17 --separate-stderr lease-write --node-id n1
		assert_line --regexp '^lost node=n1 .*reason=bad-object'
		[[ "$stderr" == *"nodes/n1"* ]]
		untouched nodes/n1
	done
	# a fence of a predecessor dated at the bound: no shortcut (its bound never
	# passes), the full wait; then its written_at is the floor of this
	# node's writes (docs/lease.md "A wall clock behind the last write"):
	# thousands of years behind it, lease-write never dates a write below
	# it and gives up (111, one fatal line), nothing written; the operator
	# fixes the clock or, for a planted object, removes nodes/n1
	plant nodes/n1 < <(fenced3 $HORIZON $HORIZON)
	start_bg n1 lease-write --node-id n1
	run wait_exit 30 n1
	[ "$output" = 111 ]
	run ! grep -q '^check-shortcut ' "$BATS_TEST_TMPDIR/n1.out"
	grep -q "^lost node=n1 .*reason=clock-behind .*written_at_ms=$HORIZON " "$BATS_TEST_TMPDIR/n1.out"
	grep -q "fatal: the wall clock is [0-9]* ms behind the last written_at of nodes/n1" "$BATS_TEST_TMPDIR/n1.err"
	untouched nodes/n1
	refute_sanitizer_reports
}

@test "absurd times: upgrade-mark refuses absurd old heartbeats and old leases; the guard reports and lapses them" {
	plant nodes/o1 < <(printf 'wasmkeep-node 1\nnode o1\nwritten_at_ms 9223372036854775807\n')
	run -17 --separate-stderr upgrade-mark forget o1
	assert_output --regexp '^kept node=o1 reason=bad-object'
	untouched nodes/o1
	v1=$VER
	# the guard: reported once, and it does not hold the start (not judgeable)
	run -0 --separate-stderr upgrade-mark --horizon-ms 0 guard
	assert_output 'pass old=0'
	[[ "$stderr" == *"nodes/o1 is not a valid node object"*"beyond year 9999"* ]]
	# an old heartbeat dated at the bound: the ADR's future-dated rule (it
	# lapses horizon + ttl + grace + max_skew after the first read)
	plant nodes/o2 < <(printf 'wasmkeep-node 2\nnode o2\nwritten_at_ms %s\n' $HORIZON)
	run -1 --separate-stderr upgrade-mark forget o2
	assert_output --regexp "^kept node=o2 reason=fresh format=2 written_at_ms=$HORIZON left_ms=[0-9]+\$"
	run -0 --separate-stderr timeout 30 upgrade-mark --horizon-ms 0 guard
	assert_output --regexp '^wait node=o2 format=2 '
	assert_line 'pass old=1'
	[[ "$stderr" == *"'nodes/o2' is dated in the future"* ]]
	# old leases: past the bound refused, at the bound held (live)
	plant leases/t/c/b < <(printf 'wasmkeep-lease 1\nnode n1\ngeneration 3\nexpires_at_ms 9223372036854775807\n')
	run -17 --separate-stderr upgrade-mark actors t/c/b
	assert_output --regexp '^error key=t/c/b reason=bad-object'
	untouched leases/t/c/b
	plant leases/t/c/c < <(printf 'wasmkeep-lease 1\nnode n1\ngeneration 3\nexpires_at_ms %s\n' $HORIZON)
	run -1 --separate-stderr upgrade-mark actors t/c/c
	assert_output "held key=t/c/c node=n1 generation=3 expires_at_ms=$HORIZON live_until_ms=$((HORIZON + 1500))"
	untouched leases/t/c/c
	VER=$v1 untouched nodes/o1
	refute_sanitizer_reports
}
