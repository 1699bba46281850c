#!/usr/bin/env bats
# Bad objects in the bucket, in every kind keep reads: nodes/ (node leases),
# owners/ (ownership records), leases/ (old per-actor leases and markers).
# Each kind gets garbage, a truncated object, an oversized one (over the
# codec's limit), a future format header and wrong field types. Every command
# that meets one gives a clear error naming the key, its documented exit code
# (17, bad object, where it applies: docs/exit-codes.md), and writes nothing
# over it: the object is byte-identical afterwards, at the same version.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).

load helpers/common
# error paths, where a leak hides: every command leak-checked at exit
leak_checks

setup() {
	keep_setup
	V="$BATS_TEST_TMPDIR/variants"
	mkdir -p "$V"
}
teardown() { keep_teardown; }

INST=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58

# big BYTES : BYTES bytes of a plausible-looking but endless object
big() { head -c "$1" /dev/zero | tr '\0' 'a'; }

# node_variants ID : the bad nodes/ID bodies, one file each in $V
node_variants() {
	rm -f "$V"/*
	head -c 300 /dev/urandom >"$V/garbage-random"
	printf 'garbage\001\n\000\377' >"$V/garbage-binary"
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms 17672256' "$INST" >"$V/truncated"
	{ printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms 1767225600123\nnode %s\nseq 1\nhost ' "$INST" "$1"
	  big 4100; echo; } >"$V/oversized-4k"
	{ printf 'wasmkeep-node 3\n'; big 65000; echo; } >"$V/oversized-64k"
	printf 'wasmkeep-node 4\nlive %s\nwritten_at_ms 1767225600123\nnode %s\nseq 1\n' "$INST" "$1" >"$V/future-header"
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms soon\nnode %s\nseq 1\n' "$INST" "$1" >"$V/type-written-at"
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms 1767225600123\nnode %s\nseq -1\n' "$INST" "$1" >"$V/type-seq"
	printf 'wasmkeep-node 3\nlive 42\nwritten_at_ms 1767225600123\nnode %s\nseq 1\n' "$1" >"$V/type-instance"
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms 1767225600123\nnode %s\nseq 1\npid many\n' "$INST" "$1" >"$V/type-pid"
	printf 'wasmkeep-node 3\nalive %s\nwritten_at_ms 1767225600123\nnode %s\nseq 1\n' "$INST" "$1" >"$V/type-state"
	printf 'wasmkeep-node 1\nnode %s\nwritten_at_ms -5\n' "$1" >"$V/old-format-type"
}

# owner_variants : the bad owners/ bodies
owner_variants() {
	rm -f "$V"/*
	head -c 300 /dev/urandom >"$V/garbage-random"
	printf 'owner: n1\n\000\377' >"$V/garbage-binary"
	printf 'wasmkeep-owner 1\nheld n1 %s\ngenera' "$INST" >"$V/truncated"
	printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration 7' "$INST" >"$V/truncated-newline"
	{ printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration 7\n' "$INST"; big 1100; echo; } >"$V/oversized-1k"
	{ printf 'wasmkeep-owner 1\n'; big 65000; echo; } >"$V/oversized-64k"
	printf 'wasmkeep-owner 2\nheld n1 %s\ngeneration 7\nlease 9\n' "$INST" >"$V/future-header"
	printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration seven\n' "$INST" >"$V/type-generation"
	printf 'wasmkeep-owner 1\nheld n1 %s\ngeneration -7\n' "$INST" >"$V/type-generation-negative"
	printf 'wasmkeep-owner 1\nnobody\ngeneration 0\n' >"$V/type-generation-zero"
	printf 'wasmkeep-owner 1\nheld n1 xyz\ngeneration 7\n' >"$V/type-instance"
	printf 'wasmkeep-owner 1\nheld ../n1 %s\ngeneration 7\n' "$INST" >"$V/type-node"
}

# lease_variants : the bad leases/ bodies (old leases and markers)
lease_variants() {
	rm -f "$V"/*
	head -c 300 /dev/urandom >"$V/garbage-random"
	printf 'lease\000\377\n' >"$V/garbage-binary"
	printf 'wasmkeep-lease 1\nnode n1\ngeneration 1' >"$V/truncated"
	{ printf 'wasmkeep-lease 2\nseed 3\n'; big 1100; echo; } >"$V/oversized-1k"
	{ printf 'wasmkeep-lease 1\n'; big 65000; echo; } >"$V/oversized-64k"
	printf 'wasmkeep-lease 3\nseed 4\n' >"$V/future-header"
	printf 'wasmkeep-lease 1\nnode n1\ngeneration many\nexpires_at_ms 1767225600123\n' >"$V/type-generation"
	printf 'wasmkeep-lease 1\nnode n1\ngeneration 3\nexpires_at_ms tomorrow\n' >"$V/type-expires"
	printf 'wasmkeep-lease 2\nseed -4\n' >"$V/type-seed"
}

# plant KEY FILE : store FILE's bytes as KEY; sets $VER to its version
plant() {
	keep-store put "$1" <"$2" >"$BATS_TEST_TMPDIR/put.out" ||
		{ cat "$BATS_TEST_TMPDIR/put.out"; return 1; }
	VER=$(keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p')
	[ -n "$VER" ]
}

# untouched KEY FILE : KEY still holds exactly FILE's bytes, at version $VER
untouched() {
	keep-store get "$1" >"$BATS_TEST_TMPDIR/after" || { echo "cannot read $1 back"; return 1; }
	cmp "$2" "$BATS_TEST_TMPDIR/after" || { echo "$1 was changed"; return 1; }
	local v
	v=$(keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p')
	[ "$v" = "$VER" ] || { echo "$1 was rewritten: version $VER -> $v"; return 1; }
}

# a_line_names KEY : one line of $stderr names KEY (a clear, one-line error)
a_line_names() {
	grep -qF -- "$1" <<<"$stderr" || { echo "no error line names $1: $stderr"; return 1; }
}

# only_keys KEY... : the store holds exactly these keys (nothing was written)
only_keys() {
	local want got
	want=$(printf '%s\n' "$@" | sort)
	got=$(keep-store list '' | sed -n 's/^object key=\([^ ]*\).*/\1/p' | sort)
	[ "$got" = "$want" ] || { echo "store holds: $got (want: $want)"; return 1; }
}

# live_lease ID : a lease-write for ID, live (the owner commands need one)
live_lease() {
	start_bg "lw-$1" lease-write --node-id "$1"
	wait_line 20 "lw-$1" '^live '
}

@test "bad objects: nodes/ — lease-write refuses each with 17, names the key, writes nothing" {
	node_variants n1
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant nodes/n1 "$f"
		run -17 --separate-stderr lease-write --node-id n1
		a_line_names nodes/n1
		assert_line --regexp '^lost node=n1 .*reason=bad-object'
		untouched nodes/n1 "$f"
		run -17 lease-status --node-id n1
	done
	only_keys nodes/n1
	refute_sanitizer_reports
}

@test "bad objects: nodes/ — lease-fence NODE refuses each with 17, names the key, writes nothing" {
	node_variants n2
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant nodes/n2 "$f"
		run -17 --separate-stderr lease-fence n2
		a_line_names nodes/n2
		[[ "$stderr" == *"nothing written"* ]]
		[ -z "$output" ]
		untouched nodes/n2 "$f"
	done
	only_keys nodes/n2
}

@test "bad objects: nodes/ — node-watch --once reports each as unreadable, with its reason, and writes nothing" {
	node_variants n3
	printf 'wasmkeep-node 3\nlive %s\nwritten_at_ms %s\nnode n4\nseq 0\n' "$INST" "$(now_ms)" >"$BATS_TEST_TMPDIR/good"
	keep-store put nodes/n4 <"$BATS_TEST_TMPDIR/good" >/dev/null
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant nodes/n3 "$f"
		run -0 --separate-stderr node-watch --once
		assert_line --regexp '^node id=n3 state=unreadable .*reason='
		assert_line --regexp '^node id=n4 state=live '
		untouched nodes/n3 "$f"
	done
	only_keys nodes/n3 nodes/n4
}

@test "bad objects: nodes/ — a peer fence (lease-fence --stdin) answers bad-object and writes nothing" {
	live_lease p1
	fencer_ready p1
	node_variants n5
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant nodes/n5 "$f"
		run -0 --separate-stderr lease-fence --node-id p1 --stdin \
			<<<"stale node=n5 instance=$INST written_at_ms=1767225600123 unchanged_ms=9000"
		assert_line --regexp '^bad-object node=n5 '
		a_line_names nodes/n5
		untouched nodes/n5 "$f"
	done
	only_keys nodes/n5 nodes/p1
	refute_sanitizer_reports
}

@test "bad objects: owners/ — owner-show refuses each with 17, names the key" {
	owner_variants
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant owners/t/c/a "$f"
		run -17 --separate-stderr owner-show t/c/a
		a_line_names owners/t/c/a
		untouched owners/t/c/a "$f"
	done
	only_keys owners/t/c/a
}

@test "bad objects: owners/ — owner-acquire refuses each with 17, names the key, writes nothing" {
	live_lease n1
	owner_variants
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant owners/t/c/a "$f"
		run -17 --separate-stderr owner-acquire --node-id n1 t/c/a
		a_line_names owners/t/c/a
		assert_output --regexp '^error key=t/c/a reason='
		untouched owners/t/c/a "$f"
		run -1 owner-check --node-id n1 t/c/a 1
	done
	only_keys owners/t/c/a nodes/n1
	refute_sanitizer_reports
}

@test "bad objects: leases/ — owner-acquire (first acquisition) refuses each with 17, names the key, writes nothing" {
	live_lease n1
	lease_variants
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant leases/t/c/b "$f"
		run -17 --separate-stderr owner-acquire --node-id n1 t/c/b
		a_line_names leases/t/c/b
		assert_output --regexp '^error key=t/c/b reason='
		untouched leases/t/c/b "$f"
	done
	only_keys leases/t/c/b nodes/n1
	refute_sanitizer_reports
}

@test "bad objects: leases/ — upgrade-mark actors refuses each with 17, names the key, writes nothing" {
	lease_variants
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant leases/t/c/b "$f"
		run -17 --separate-stderr upgrade-mark actors t/c/b
		a_line_names leases/t/c/b
		assert_output --regexp '^error key=t/c/b reason=bad-object'
		untouched leases/t/c/b "$f"
	done
	only_keys leases/t/c/b
}

@test "bad objects: nodes/ — upgrade-mark forget refuses each with 17 and never deletes it" {
	node_variants n6
	for f in "$V"/*; do
		echo "# variant ${f##*/}"
		plant nodes/n6 "$f"
		run -17 --separate-stderr upgrade-mark forget n6
		a_line_names nodes/n6
		assert_output --regexp '^kept node=n6 reason=bad-object'
		untouched nodes/n6 "$f"
	done
	only_keys nodes/n6
}
