#!/usr/bin/env bats
# Source rules that a test can hold the tree to (docs/design.md "Conventions").

bats_require_minimum_version 1.5.0
ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
}

@test "lint: no bats assertion is a bare negation (in bats '! cmd' never fails a test)" {
	run grep -nE '^[[:space:]]*! ' "$ROOT"/tests/bats/*.bats
	[ "$status" -eq 1 ] || { echo "$output"; false; }
}

@test "lint: no banned C functions (sprintf, strcpy, strcat, atoi, atol, gets)" {
	run grep -nE '(^|[^a-z_])(sprintf|vsprintf|strcpy|strcat|atoi|atol|atoll|gets)[[:space:]]*\(' \
		"$ROOT"/lib/*/*.c "$ROOT"/cmd/*.c "$ROOT"/sim/*.c
	[ "$status" -eq 1 ] || { echo "$output"; false; }
}

@test "lint: the C code is clang-formatted" {
	command -v clang-format >/dev/null || skip "clang-format not installed"
	cd "$ROOT"
	run clang-format --dry-run -Werror $(git ls-files '*.c' '*.h' 2>/dev/null || ls lib/*/*.[ch] cmd/*.c)
	[ "$status" -eq 0 ] || { echo "$output" | head -40; false; }
}

@test "lint: the keep-agent script is POSIX sh (dash parses it)" {
	run dash -n "$ROOT/agent/keep-agent"
	[ "$status" -eq 0 ]
}

@test "lint: every bats run without an exact status (-N, !) is followed by a test of its status or output" {
	# `run cmd` never fails a test by itself: a `run wait_for ...` whose
	# status nobody reads passes even when the wait timed out. The next
	# statement must be a [ ], [[ ]], (( )) or case reading $status,
	# $output, $lines or $stderr, or an assert_/refute_ call.
	run awk -f "$ROOT/tests/bats/helpers/lint-run.awk" "$ROOT"/tests/bats/*.bats "$ROOT"/tests/bats/helpers/*.bash
	[ "$status" -eq 0 ] || { echo "runs whose status nobody checks:"; echo "$output"; false; }
}

@test "lint: no half-assertion ([ A ] && [ B ] checks only B under set -e) in a test body or mid-function" {
	run awk -f "$ROOT/tests/bats/helpers/lint-and.awk" "$ROOT"/tests/bats/*.bats "$ROOT"/tests/bats/helpers/*.bash
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "lint: the half-assertion check refuses a planted one and accepts the honest forms" {
	# bats' own behaviour, the reason for the check: the first part of an
	# && list never fails a test
	# (the files planted here spell @test as %test, so that bats does not
	# take their tests for this file's own)
	cat >"$BATS_TEST_TMPDIR/why.bats" <<'EOF'
%test "hits=3 is not in (5, 35)" {
	hits=3
	[ "$hits" -gt 5 ] && [ "$hits" -lt 35 ]
	true
}
EOF
	sed -i 's/^%test /@test /' "$BATS_TEST_TMPDIR/why.bats"
	run -0 bats --tap "$BATS_TEST_TMPDIR/why.bats"
	[ "${lines[1]}" = 'ok 1 hits=3 is not in (5, 35)' ]
	# the planted examples: each is named with its line
	cat >"$BATS_TEST_TMPDIR/planted.bats" <<'EOF'
pred() {
	[ -n "$1" ] && [ "$1" -gt 0 ]
	echo more
}
%test "planted" {
	[ "$hits" -gt 5 ] && [ "$hits" -lt 35 ]
	[[ $x =~ n=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 4 ]
	test -f a && test -f b
	[ -f log ] &&
		grep -q done log
	cd "$d" && assert_output x
	true
}
EOF
	sed -i 's/^%test /@test /' "$BATS_TEST_TMPDIR/planted.bats"
	run -1 awk -f "$ROOT/tests/bats/helpers/lint-and.awk" "$BATS_TEST_TMPDIR/planted.bats"
	[ "${#lines[@]}" -eq 6 ]
	[[ "${lines[0]}" == *"/planted.bats:2: half-assertion "*'[ -n "$1" ] && [ "$1" -gt 0 ]' ]]
	[[ "${lines[1]}" == *"/planted.bats:6: half-assertion "*'[ "$hits" -gt 5 ] && [ "$hits" -lt 35 ]' ]]
	[[ "${lines[2]}" == *"/planted.bats:7: half-assertion "* ]]
	[[ "${lines[3]}" == *"/planted.bats:8: half-assertion "* ]]
	[[ "${lines[4]}" == *"/planted.bats:9: half-assertion "* ]]
	[[ "${lines[5]}" == *"/planted.bats:11: half-assertion "* ]]
	# what is not a half-assertion: a handled failure, a condition, an
	# action, a predicate's last statement, a here-document's text
	cat >"$BATS_TEST_TMPDIR/honest.bats" <<'EOF'
bg_running() { [ -n "$1" ] && [ ! -s "$1.rc" ]; }
pred() {
	local v=$1
	[ -n "$v" ] && [ "$v" -gt 0 ]
}
%test "honest" {
	[ "$a" -ge 1 ] && [ "$a" -le 9 ] || { echo "a=$a"; false; }
	if [ -n "$x" ] && [ "$x" -gt 1 ]; then echo; fi
	while [ "$i" -lt 3 ] && [ -f f ]; do i=$((i + 1)); done
	[ "$st" = 503 ] && want=111
	[ "$rc" -eq 0 ] && break
	awk '$3 == n && $4 == 0' f
	cat <<TXT
[ a ] && [ b ]
TXT
	[ "$a" -ge 1 ]
	[ "$a" -le 9 ]
}
EOF
	sed -i 's/^%test /@test /' "$BATS_TEST_TMPDIR/honest.bats"
	run -0 awk -f "$ROOT/tests/bats/helpers/lint-and.awk" "$BATS_TEST_TMPDIR/honest.bats"
	[ "$output" = "" ]
}

@test "lint: keep-agent is shellcheck clean" {
	command -v shellcheck >/dev/null || skip "shellcheck not installed"
	run shellcheck "$ROOT/agent/keep-agent"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "lint: every document a file names resolves inside the repository" {
	cd "$ROOT"
	bad=0
	# paths docs/….md named in code, tests, scripts and documents
	# (an upper-case name is a placeholder: docs/runbooks/FILE.md); one
	# grep over all the files (a grep a file took a minute of a loaded CI)
	git ls-files -z 2>/dev/null | grep -zvE '^(build|fuzz/corpus)/|^tests/bats/0001-lint.bats$' |
		xargs -0 grep -IoHE 'docs/[a-z0-9_./-]+\.md' 2>/dev/null | sort -u >"$BATS_TEST_TMPDIR/refs"
	[ -s "$BATS_TEST_TMPDIR/refs" ] || { echo "found no docs/ reference at all"; bad=1; }
	while IFS= read -r line; do
		ref=${line#*:}
		[ -f "$ref" ] || { echo "${line%%:*}: $ref does not exist"; bad=1; }
	done <"$BATS_TEST_TMPDIR/refs"
	outside=$(git ls-files -z 2>/dev/null | grep -zvE '^(build|fuzz/corpus)/|^tests/bats/0001-lint.bats$' |
		xargs -0 grep -IlE '(^|[^A-Za-z/])(DESIGN|CONVENTIONS)\.md|CONVENTIONS:' 2>/dev/null) ||
		true # (grep finds none: the usual case)
	for f in $outside; do
		echo "$f: names a document outside the repository (DESIGN.md, CONVENTIONS.md)"
		bad=1
	done
	# relative links of the documents: [text](file.md#anchor)
	for f in README.md docs/*.md docs/runbooks/*.md; do
		d=$(dirname "$f")
		for ref in $(grep -oE '\]\([A-Za-z0-9_./-]+\.md' "$f" | sed 's/^](//' | sort -u); do
			[ -f "$d/$ref" ] || { echo "$f: link $ref does not exist"; bad=1; }
		done
	done
	# the source files docs/design.md names (its layers and where each
	# rule lives) exist
	for ref in $(grep -oE '(lib|cmd|sim|tests|agent|bench)/[A-Za-z0-9_./-]+\.(c|h|bats|sh)' docs/design.md | sort -u); do
		[ -f "$ref" ] || { echo "docs/design.md: $ref does not exist"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "lint: lib/ keeps its layers, and sim/ uses only the core, codecs and vocabulary (no upward include, no include circle)" {
	run -0 bash "$ROOT/tests/bats/helpers/lint-includes.sh" "$ROOT"
	[ -z "$output" ] || { echo "$output"; false; }
}

@test "lint: the include check refuses a planted upward include, a planted circle in lib/store, a simulator including a driver and a file outside the layers" {
	local t="$BATS_TEST_TMPDIR/tree"
	mkdir -p "$t"
	cp -r "$ROOT/lib" "$t/"
	# the vocabulary using the store
	printf '#include "../store/store.h"\n' >>"$t/lib/base/vocab.h"
	run -1 bash "$ROOT/tests/bats/helpers/lint-includes.sh" "$t"
	[[ $output == *'lib/base/vocab.h:'* ]]
	[[ $output == *'includes lib/store/store.h: the base layer may not use the store layer'* ]]
	# the core reading a clock (the sans-I/O rule, as an include)
	cp "$ROOT/lib/base/vocab.h" "$t/lib/base/vocab.h"
	printf '#include "../platform/clock.h"\n' >>"$t/lib/core/lease.c"
	run -1 bash "$ROOT/tests/bats/helpers/lint-includes.sh" "$t"
	[[ $output == *'includes lib/platform/clock.h: the core layer may not use the platform layer'* ]]
	# two store modules including each other: a circle, named
	cp "$ROOT/lib/core/lease.c" "$t/lib/core/lease.c"
	printf '#include "store.h"\n' >>"$t/lib/store/awscreds.h"
	printf '#include "awscreds.h"\n' >>"$t/lib/store/store.h"
	run -1 bash "$ROOT/tests/bats/helpers/lint-includes.sh" "$t"
	[[ $output == *'modules that include each other (a circle):'* ]]
	[[ $output == *'lib/store/awscreds'* ]]
	[[ $output == *'lib/store/store'* ]]
	[[ $output != *'may not use'* ]]
	# the simulator reaching past the core (a driver's code it would copy)
	cp "$ROOT/lib/store/store.h" "$t/lib/store/store.h"
	cp "$ROOT/lib/store/awscreds.h" "$t/lib/store/awscreds.h"
	mkdir -p "$t/sim"
	cp "$ROOT/sim/sim.h" "$t/sim/"
	printf '#include "../lib/local/holds.h"\n' >>"$t/sim/sim.h"
	run -1 bash "$ROOT/tests/bats/helpers/lint-includes.sh" "$t"
	[[ $output == *'sim/sim.h:'* ]]
	[[ $output == *'includes lib/local/holds.h: the sim layer may not use the local layer'* ]]
	# a file outside the layers' folders
	cp "$ROOT/sim/sim.h" "$t/sim/sim.h"
	printf '/* stray */\n' >"$t/lib/stray.c"
	run -1 bash "$ROOT/tests/bats/helpers/lint-includes.sh" "$t"
	[[ $output == *'lib/stray.c: not in a layer'* ]]
}

@test "lint: docs/design.md's map names exactly one lib/core function per rule, and refuses two, a driver's, or a core function in 'driven by'" {
	run -0 sh "$ROOT/tests/bats/helpers/lint-map.sh" "$ROOT"
	t="$BATS_TEST_TMPDIR/design.md"
	row='| a planted rule | §1 | `keep_lease_validity_end_ms` (`lease.c`) | the lease machine |'
	# the planted row alone is accepted: what follows fails only by its change
	awk -v r="$row" '{ print } /^\| rule \| section \| function \| driven by \|/ { getline; print; print r }' \
		"$ROOT/docs/design.md" >"$t"
	run -0 sh "$ROOT/tests/bats/helpers/lint-map.sh" "$ROOT" "$t"
	# two functions in one row
	awk -v r='| a planted rule | §1 | `keep_lease_validity_end_ms`, `keep_lease_next` (`lease.c`) | the lease machine |' \
		'{ print } /^\| rule \| section \| function \| driven by \|/ { getline; print; print r }' "$ROOT/docs/design.md" >"$t"
	run -1 sh "$ROOT/tests/bats/helpers/lint-map.sh" "$ROOT" "$t"
	[[ $output == *'names 2 functions, not one: | a planted rule'* ]]
	# a driver's function, not the core's
	awk -v r='| a planted rule | §1 | `keep_holds_lock_ms` (`holds.c`) | the lease machine |' \
		'{ print } /^\| rule \| section \| function \| driven by \|/ { getline; print; print r }' "$ROOT/docs/design.md" >"$t"
	run -1 sh "$ROOT/tests/bats/helpers/lint-map.sh" "$ROOT" "$t"
	[[ $output == *'not a public lib/core function: keep_holds_lock_ms'* ]]
	# a second core function hidden in 'driven by'
	awk -v r='| a planted rule | §1 | `keep_lease_validity_end_ms` (`lease.c`) | `keep_lease_next` |' \
		'{ print } /^\| rule \| section \| function \| driven by \|/ { getline; print; print r }' "$ROOT/docs/design.md" >"$t"
	run -1 sh "$ROOT/tests/bats/helpers/lint-map.sh" "$ROOT" "$t"
	[[ $output == *'driven by names a lib/core function (keep_lease_next)'* ]]
}
