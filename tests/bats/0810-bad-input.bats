#!/usr/bin/env bats
# Bad input everywhere but the bucket: invalid flags, config keys and values,
# stdin lines, keys that try to escape (`..`, a leading `/`, empty and `.`
# segments, control bytes, a NUL on stdin, over-long). Each is refused with a
# clear one-line error and exit 100 (usage or configuration,
# docs/exit-codes.md) or the command's documented code, and nothing is
# written: the store shows nothing new and no file appears outside it.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE); what is
# refused before any store request (flags, arguments, configuration) on
# the fs store only.

load helpers/common
# error paths, where a leak hides: every command leak-checked at exit
leak_checks

ROOT="$BATS_TEST_DIRNAME/../.."

setup() { keep_setup; }
teardown() { keep_teardown; }

# fs_only : a test whose input is refused before any store request (flags,
# arguments, the configuration): the store it names does not matter, so it
# runs in the fs pass only (the S3 pass ran each again for 96 s in all)
fs_only() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "refused before any store request: runs in the fs pass"
}

# every command built from cmd/*.c
commands() {
	local c
	for c in "$ROOT"/cmd/*.c; do
		c=${c##*/}
		echo "${c%.c}"
	done
}

# store_empty : nothing at all in this test's store
store_empty() {
	run -0 keep-store list ''
	[ -z "$output" ] || { echo "store holds: $output"; return 1; }
}

# nothing_escaped : no file named by an escaping key (x, escape, y) appeared
# next to the bucket, above it, or in the state dir (fs): in this test's
# directory, and directly in the two above it (not in the other tests'
# directories beside it: with files run side by side, another test's
# bucket may hold a key x of its own)
nothing_escaped() {
	local found
	found=$({
		find "$BATS_TEST_TMPDIR" -maxdepth 3 \( -name x -o -name escape -o -name y \) -print
		find "$BATS_TEST_TMPDIR/.." "$BATS_TEST_TMPDIR/../.." -mindepth 1 -maxdepth 1 \
			\( -name x -o -name escape -o -name y \) -print
	})
	[ -z "$found" ] || { echo "files outside the store: $found"; return 1; }
}

# one_clear_line PROG : $stderr's first line is "PROG: ..." naming the problem
one_clear_line() {
	[[ "${stderr_lines[0]}" == "$1: "* ]] || { echo "first stderr line: ${stderr_lines[0]}"; return 1; }
}

@test "bad input: an unknown flag is refused by every command: one line of why, one of the synopsis, 100" {
	fs_only
	for c in $(commands); do
		echo "# $c"
		run -100 --separate-stderr "$c" --no-such-flag
		one_clear_line "$c"
		# the why names the flag; the hint is the synopsis' first form, not
		# the whole usage (issue 27)
		[[ "${stderr_lines[0]}" == "$c: fatal: "*"'--no-such-flag'"* ]]
		[[ "${stderr_lines[1]}" == "$c: info: usage: $c "*" (\`$c -h\` prints the whole usage)" ]]
		[ "${#stderr_lines[@]}" -eq 2 ]
		[ -z "$output" ]
		run -0 --separate-stderr "$c" -h
		[[ "$output" == "usage: $c"* ]]
	done
	store_empty
	refute_sanitizer_reports
}

@test "bad input: missing or malformed arguments are refused with 100" {
	fs_only
	run -100 --separate-stderr lease-fence
	one_clear_line lease-fence
	run -100 --separate-stderr lease-fence n1 --stdin
	run -100 --separate-stderr lease-fence --stdin # no node id
	run -100 --separate-stderr owner-check t/c/a
	run -100 --separate-stderr owner-check t/c/a 1x
	one_clear_line owner-check
	run -100 --separate-stderr owner-check t/c/a ''
	run -100 --separate-stderr owner-check t/c/a 99999999999999999999999
	run -100 --separate-stderr owner-check --node-id n1 ../x 1
	run -100 --separate-stderr owner-release --all --wait-ms soon
	run -100 --separate-stderr upgrade-mark
	run -100 --separate-stderr upgrade-mark --horizon-ms -1 guard
	run -100 --separate-stderr upgrade-mark --horizon-ms 1e3 guard
	run -100 --separate-stderr upgrade-mark frobnicate
	run -100 --separate-stderr keep-store
	run -100 --separate-stderr keep-store frobnicate x
	run -100 --separate-stderr keep-store get
	run -100 --separate-stderr node-watch --once --follow
	store_empty
	nothing_escaped
}

@test "bad input: node ids that try to escape or are over-long are refused with 100, nothing written" {
	long=$(printf 'n%.0s' $(seq 65))
	for id in ../x .. . .x x/y /x "$long" 'x y' "$(printf 'x\001')" 'x\y'; do
		echo "# node id '$id'"
		run -100 --separate-stderr lease-write --node-id "$id"
		one_clear_line lease-write
		run -100 --separate-stderr lease-fence "$id"
		one_clear_line lease-fence
		run -100 --separate-stderr upgrade-mark forget "$id"
		one_clear_line upgrade-mark
		run -100 --separate-stderr lease-status --node-id "$id"
		run -100 --separate-stderr owner-acquire --node-id "$id" t/c/a
	done
	run -100 --separate-stderr lease-write --node-id ''
	store_empty
	nothing_escaped
	refute_sanitizer_reports
}

@test "bad input: store keys that try to escape are refused by keep-store with 100, nothing written" {
	long=$(printf 'k%.0s' $(seq 1025))
	for k in ../x ../../escape /x /etc/passwd 'a//b' 'a/./b' 'a/../b' a/.. '.' '..' 'a/' \
		'a\b' "$(printf 'a\001b')" "$(printf 'a\nb')" "$(printf 'a\tb')" "$long" ''; do
		echo "# key '$k'"
		run -100 --separate-stderr keep-store put "$k" <<<"payload"
		one_clear_line keep-store
		[[ "${stderr_lines[0]}" == *"invalid key"* ]]
		run -100 --separate-stderr keep-store get "$k"
		run -100 --separate-stderr keep-store stat "$k"
		run -100 --separate-stderr keep-store del "$k"
	done
	for p in ../ /x/ 'a//' 'a/./' "$(printf 'a\001/')"; do
		echo "# prefix '$p'"
		run -100 --separate-stderr keep-store list "$p"
		one_clear_line keep-store
	done
	store_empty
	nothing_escaped
	refute_sanitizer_reports
}

@test "bad input: actor keys that try to escape are refused (arguments and stdin), error lines, 100, nothing written" {
	long=$(printf 'a%.0s' $(seq 129))
	bad=(../x/y /t/c/n t/c t/c/n/e t/./n t/../n .t/c/n 't/c/n ' 't/c/n\' "$(printf 't/c/\001')" "t/c/$long" 't//n')
	for k in "${bad[@]}"; do
		echo "# actor key '$k'"
		run -100 --separate-stderr owner-acquire --node-id n1 "$k"
		assert_output --regexp '^error key=.* reason=invalid-key$'
		one_clear_line owner-acquire
		run -100 --separate-stderr owner-show "$k"
		one_clear_line owner-show
		run --separate-stderr upgrade-mark actors "$k"
		[ "$status" -eq 100 ] || { echo "upgrade-mark actors '$k': status $status"; false; }
		assert_output --regexp '^error key=.* reason=invalid-key$'
	done
	# the same on stdin, with an over-long line, all in one batch
	{ printf '%s\n' "${bad[@]}"; head -c 5000 /dev/zero | tr '\0' a; echo; } >"$BATS_TEST_TMPDIR/input"
	run -100 --separate-stderr owner-acquire --node-id n1 <"$BATS_TEST_TMPDIR/input"
	[ "${#lines[@]}" -ge "${#bad[@]}" ]
	run -100 --separate-stderr upgrade-mark actors <"$BATS_TEST_TMPDIR/input"
	store_empty
	nothing_escaped
	refute_sanitizer_reports
}

@test "bad input: a NUL inside a stdin key is refused, never cut short to a valid key" {
	start_bg lw lease-write --node-id n1
	wait_line 20 lw '^live '
	printf 't/c/a\000../../x\n' >"$BATS_TEST_TMPDIR/input"
	run --separate-stderr owner-acquire --node-id n1 <"$BATS_TEST_TMPDIR/input"
	refute_crash
	refute_output --regexp '^acquired '
	[ "$status" -eq 100 ]
	run --separate-stderr upgrade-mark actors <"$BATS_TEST_TMPDIR/input"
	refute_crash
	refute_output --regexp '^marked '
	[ "$status" -eq 100 ]
	run -0 keep-store list ''
	refute_output --partial 'owners/'
	refute_output --partial 'leases/'
	# a release of a hold, named with a NUL and more after it
	run -0 owner-acquire --node-id n1 t/c/b
	gen=$(sed -n 's/.*generation=\([0-9]*\).*/\1/p' <<<"$output")
	printf 't/c/b\000x\n' >"$BATS_TEST_TMPDIR/input"
	run -100 --separate-stderr owner-release --node-id n1 <"$BATS_TEST_TMPDIR/input"
	refute_output --regexp '^released '
	run -0 owner-check --node-id n1 t/c/b "$gen"
	refute_sanitizer_reports
}

@test "bad input: malformed stdin lines to lease-fence --stdin are reported and skipped, nothing written" {
	start_bg lw lease-write --node-id n1
	wait_line 20 lw '^live '
	{
		echo 'garbage'
		echo 'stale'
		echo 'stale node=../x instance=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58 written_at_ms=1 unchanged_ms=9000'
		echo 'stale node=n2 instance=zz written_at_ms=1 unchanged_ms=9000'
		echo 'stale node=n2 instance=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58 written_at_ms=-1 unchanged_ms=9000'
		echo 'stale node=n2 node=n3 instance=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58 written_at_ms=1'
		echo 'stale node="n2 instance=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58'
		printf 'stale node=n2\001 instance=5f0c2a9e8b7d41c3a6e2f90d1b4c7e58 written_at_ms=1\n'
		head -c 5000 /dev/zero | tr '\0' a
		echo
	} >"$BATS_TEST_TMPDIR/input"
	run -0 --separate-stderr lease-fence --node-id n1 --stdin <"$BATS_TEST_TMPDIR/input"
	refute_output --regexp '^fenced '
	[ "$(grep -c 'warning: input line' <<<"$stderr")" -ge 8 ]
	run -0 keep-store list ''
	assert_output --regexp '^object key=nodes/n1 '
	[ "${#lines[@]}" -eq 1 ]
	refute_sanitizer_reports
}

@test "bad input: invalid configuration files are refused with 100 and a file:line reason" {
	fs_only
	good="store: $STORE_URL"$'\n'"state_dir: $STATE_DIR"$'\n'
	cases=(
		"bogus: 1|unknown key 'bogus'"
		"lease:\n  ttl_ms: abc|not a plain decimal integer"
		"lease:\n  ttl_ms: -5|not a plain decimal integer"
		"lease:\n  ttl_ms: 1e4|not a plain decimal integer"
		"lease:\n  ttl_ms: 010000|leading zero"
		"lease:\n  ttl_ms: 99999999999999999999|out of range"
		"lease:\n  ttl_ms: 3000\n  ttl_ms: 4000|duplicate key"
		"lease:\n  grace_ms: 100\n  safety_ms: 100\n  max_skew_ms: 1000|max_skew_ms"
		"lease:\n  heartbeat_period_ms: 9000|heartbeat_period_ms"
		"lease: 5|mapping"
		"lease:\n  bogus_ms: 5|unknown key 'bogus_ms'"
		"node_id: ../x|node id"
		"node_id: [a, b]|single value"
		"node_id: \"a\\\\x01b\"|control character"
		"metrics:\n  textfile: {a: b}|single value"
		"s3:\n  tls_insecure: maybe|true or false"
		"s3:\n  addressing: sideways|path or virtual"
		"s3:\n  timeout_ms: forever|not a plain decimal integer"
		"[1, 2]|could not find expected ':'"
		"metrics:\n  textfile: $(printf 'd%.0s' $(seq 1100))|too long"
		"node_id: a\n  b: [|"
	)
	ncase=0
	for c in "${cases[@]}"; do
		ncase=$((ncase + 1))
		f="$BATS_TEST_TMPDIR/bad$ncase.yaml"
		printf '%s' "$good" >"$f"
		printf "${c%%|*}\n" >>"$f"
		want=${c#*|}
		echo "# case $ncase: ${c%%|*}"
		for cmd in lease-write node-watch lease-fence upgrade-mark; do
			run -100 --separate-stderr "$cmd" -c "$f" --check
			one_clear_line "$cmd"
			[[ "${stderr_lines[0]}" == *"bad$ncase.yaml"* && "${stderr_lines[0]}" == *"$want"* ]] ||
				{ echo "$cmd: $stderr"; false; }
		done
		run -100 --separate-stderr owner-acquire -c "$f" --node-id n1 t/c/a
		run -100 --separate-stderr keep-store -c "$f" list ''
	done
	run -100 --separate-stderr lease-write -c "$BATS_TEST_TMPDIR/absent.yaml" --check
	[[ "${stderr_lines[0]}" == *"absent.yaml"* ]]
	run -0 lease-write --node-id n1 --check
	assert_output "configuration OK"
	store_empty
	nothing_escaped
	refute_sanitizer_reports
}

@test "bad input: flags with bad values are refused with 100, nothing written" {
	fs_only
	run -100 --separate-stderr lease-write --store ftp://x --node-id n1
	one_clear_line lease-write
	run -100 --separate-stderr lease-write --store 'file://relative/dir' --node-id n1
	run -100 --separate-stderr keep-store --store 's3://' list ''
	# a store directory that does not exist is the documented temporary failure
	run -111 --separate-stderr keep-store --store "file://$BATS_TEST_TMPDIR/$(printf 'x\001')" list ''
	one_clear_line keep-store
	run -100 --separate-stderr lease-write --state-dir '' --node-id n1
	run -100 --separate-stderr lease-write --state-dir "$(printf 'd%.0s' $(seq 1100))" --node-id n1
	store_empty
	nothing_escaped
	refute_sanitizer_reports
}
