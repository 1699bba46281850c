#!/usr/bin/env bats
# valgrind memcheck over real command runs, with the release build (the
# sanitizer build the other tests use cannot run under valgrind): a
# lease-write from start to a clean stop, and a few one-shot commands.
# No memory error and no leak definitely lost (valgrind exits 99 then).
# The release binaries are looked up beside the sanitizer build
# ($KEEP_BINDIR/../../rel/bin, i.e. build/rel/bin: `make rel`); the test
# is skipped when they or valgrind are missing.

load helpers/common

setup() {
	REL=$(cd "$KEEP_BINDIR/../../rel/bin" 2>/dev/null && pwd) || REL=
	[ -n "$REL" ] && [ -x "$REL/lease-write" ] || skip "no release build beside $KEEP_BINDIR (make rel)"
	command -v valgrind >/dev/null || skip "valgrind not installed"
	# longer timings: everything runs ~20x slower under valgrind
	keep_setup 6000 3000 1200 600 2000
}
teardown() { keep_teardown; }

VG=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite
	--errors-for-leak-kinds=definite --track-fds=no)

@test "valgrind: lease-write from start to a clean stop: no memory error, no leak" {
	start_bg lw "${VG[@]}" --log-file="$BATS_TEST_TMPDIR/vg-lw.log" "$REL/lease-write" --node-id n1 -v
	wait_line 60 lw '^live '
	wait_line 30 lw '^renewed '
	kill -TERM "$(bg_pid lw)"
	run wait_exit 60 lw
	[ "$output" = 0 ] || { echo "lease-write exit $output"; cat "$BATS_TEST_TMPDIR/vg-lw.log"; false; }
	grep -q '^released ' "$BATS_TEST_TMPDIR/lw.out"
	[ ! -s "$BATS_TEST_TMPDIR/vg-lw.log" ] || { cat "$BATS_TEST_TMPDIR/vg-lw.log"; false; }
}

@test "valgrind: one-shot commands (keep-store, node-watch, lease-fence, config errors): no memory error, no leak" {
	vg() {
		run "${VG[@]}" --log-file="$BATS_TEST_TMPDIR/vg.log" "$REL/$@"
		[ "$status" -ne 99 ] || { cat "$BATS_TEST_TMPDIR/vg.log"; return 1; }
		[ ! -s "$BATS_TEST_TMPDIR/vg.log" ] || { cat "$BATS_TEST_TMPDIR/vg.log"; return 1; }
	}
	vg keep-store put k <<<"body"
	[ "$status" -eq 0 ]
	vg keep-store get k
	[ "$output" = body ]
	vg keep-store list ''
	vg lease-fence --create n9
	[ "$status" -eq 0 ]
	vg node-watch --once
	[ "$status" -eq 0 ]
	printf 'garbage\n' | "$REL/keep-store" put nodes/bad >/dev/null
	vg lease-fence bad
	[ "$status" -eq 17 ]
	vg store-probe
	[ "$status" -eq 0 ]
	printf 'bogus: 1\n' >"$BATS_TEST_TMPDIR/bad.yaml"
	vg lease-write -c "$BATS_TEST_TMPDIR/bad.yaml" --check
	[ "$status" -eq 100 ]
	vg keep-store put ../x <<<"body"
	[ "$status" -eq 100 ]
}
