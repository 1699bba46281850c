#!/usr/bin/env bats
# The README's commands, run as written (issue 27): every ```sh block of
# README.md runs from the top of a copy of this tree (the working tree's
# files, and build/rel when it is there, so that nothing is rebuilt), with
# the environment a newcomer has (no KEEP_CONFIG, no KEEP_BINDIR: the
# README names build/rel/bin itself), so the README can never drift from
# the commands. As the runbooks' blocks (tests/bats/0700-runbooks.bats),
# a block runs with `sh -eu`, and directives above it say more:
#
#   <!-- test: terminal; wait REGEX -->   run it in a terminal of its own
#        (tmux), in the background, as a person does (`make run`); the next
#        block starts once its output has a line matching REGEX; when the
#        last block that says `continue` is done, it gets Ctrl-C and must
#        end with 0, without a make error
#   <!-- test: continue -->   run while the terminal's block still runs
#   <!-- test: timeout S -->  bound of the block (default 60; a terminal's
#        wait: 900, a first build included)
#   <!-- test: exit N -->     the block must exit N (default 0)
#   <!-- test: skip WHY -->   not run (said why)
#
# Store-independent (the README uses the embedded store): the fs pass.

load helpers/common
load helpers/agent
load helpers/mdblocks

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "the README uses the embedded store: the fs pass"
	command -v tmux >/dev/null || skip "tmux not installed (scripts/install-deps.sh --test)"
	R="$BATS_TEST_TMPDIR/tree"
}
teardown() {
	terminal_teardown
	keep_teardown
}

# copy_tree : the working tree's files (tracked and new, not ignored) into
# $R, with their times; build/rel too when it exists
copy_tree() {
	mkdir -p "$R"
	(cd "$ROOT" && git ls-files -z -co --exclude-standard) | (cd "$ROOT" && tar --null -T - -cf -) |
		(cd "$R" && tar -xf -)
	if [ -d "$ROOT/build/rel/bin" ]; then
		mkdir -p "$R/build"
		cp -a "$ROOT/build/rel" "$R/build/"
		[ ! -e "$ROOT/build/.deps-ok" ] || cp -a "$ROOT/build/.deps-ok" "$R/build/"
	fi
}

# newcomer CMD... : CMD without this suite's environment (the README's reader
# has no KEEP_CONFIG, KEEP_BINDIR, fault file or log setting)
newcomer() {
	env -u KEEP_CONFIG -u KEEP_BINDIR -u KEEP_FAULT_FILE -u KEEP_LOG_TIMESTAMPS \
		-u KEEP_SUPERVISOR_PID "$@"
}

# stop_terminal : Ctrl-C to the terminal's block; it must end 0, no make error
stop_terminal() {
	local d=$BATS_TEST_TMPDIR rc
	[ -n "$TERM_BLOCK" ] || return 0
	terminal_keys C-c
	wait_for 60 test -s "$d/term.rc" || { echo "$TERM_BLOCK: still running 60 s after Ctrl-C"; return 1; }
	rc=$(cat "$d/term.rc")
	cat "$d/term.out" "$d/term.err" >"$d/term.all"
	if [ "$rc" != 0 ] || grep -qE 'Interrupt|\*\*\*' "$d/term.all"; then
		echo "$TERM_BLOCK: exit $rc after Ctrl-C (expected 0):"
		sed 's/^/    > /' "$d/term.all" | tail -20
		return 1
	fi
	echo "# $TERM_BLOCK: Ctrl-C: exit 0" >&3
	TERM_BLOCK=
}

# run_block DIR : as its directives say; 1 (and why) when it failed
run_block() {
	local d=$1 where line words want=0 limit=60 wait_re="" terminal="" skip_why="" rc=0
	where=$(sed 's|.*/tree/||' "$d/where")
	while IFS= read -r line; do
		read -r -a words <<<"$line"
		case ${words[0]} in
		terminal) terminal=1 limit=900 ;;
		wait) wait_re="${line#wait }" ;;
		continue) ;;
		timeout) limit=${words[1]} ;;
		exit) want=${words[1]} ;;
		skip) skip_why="${line#skip }" ;;
		*)
			echo "$where: unknown README test directive '$line'"
			return 1
			;;
		esac
	done <"$d/directives"
	if ! grep -qx continue "$d/directives"; then
		stop_terminal || return 1
	fi
	if [ -n "$skip_why" ]; then
		echo "# $where: skipped: $skip_why" >&3
		return 0
	fi
	if [ -n "$terminal" ]; then
		TERM_BLOCK=$where
		cp "$d/block.sh" "$R/.readme-block.sh"
		(
			unset KEEP_CONFIG KEEP_BINDIR KEEP_FAULT_FILE KEEP_LOG_TIMESTAMPS KEEP_SUPERVISOR_PID
			in_terminal term sh -c 'cd "$1" && exec sh -eu .readme-block.sh' _ "$R"
		)
		[ -z "$wait_re" ] || wait_for "$limit" grep -Eq -- "$wait_re" \
			"$BATS_TEST_TMPDIR/term.out" "$BATS_TEST_TMPDIR/term.err" || {
			echo "$where: no line matching '$wait_re' within $limit s:"
			tail -20 "$BATS_TEST_TMPDIR/term.out" "$BATS_TEST_TMPDIR/term.err"
			return 1
		}
		echo "# $where: running in a terminal" >&3
		return 0
	fi
	(cd "$R" && newcomer timeout "$limit" sh -eu "$d/block.sh") </dev/null >"$d/out" 2>&1 3>&- || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "$where: the block exited $rc (expected $want)$([ "$rc" -eq 124 ] && echo ", timed out after ${limit}s"):"
		sed 's/^/    | /' "$d/block.sh"
		echo "  output:"
		sed 's/^/    > /' "$d/out" | tail -30
		return 1
	fi
	echo "# $where: ok" >&3
}

@test "README: every sh block runs as written from the top of the tree" {
	copy_tree
	extract "$BATS_TEST_TMPDIR/blocks" "$R/README.md"
	[ -n "$(ls "$BATS_TEST_TMPDIR/blocks")" ]
	TERM_BLOCK=
	failed=0
	for b in "$BATS_TEST_TMPDIR"/blocks/*; do
		run_block "$b" || failed=$((failed + 1))
	done
	stop_terminal || failed=$((failed + 1))
	[ "$failed" -eq 0 ] || { echo "$failed README block(s) failed"; false; }
	# the node `make run` ran stopped cleanly: released, no process left
	run -0 "$R/build/rel/bin/keep-store" --store "file://$R/run/bucket" get nodes/n1
	[[ "${lines[1]}" == "released "* ]]
	run -0 "$R/build/rel/bin/keep-store" --store "file://$R/run/bucket" stat cluster
	# make demo built nothing loudly
	run -1 grep -rlE '^(cc|gcc|clang|ar) ' "$BATS_TEST_TMPDIR"/blocks/*/out
}

@test "README: the runner's directives (a failing block fails, a skipped one is said)" {
	mkdir -p "$R"
	cat >"$R/README.md" <<'EOF'
<!-- test: skip not here -->
```sh
false
```

```sh
echo ok
```

<!-- test: exit 3 -->
```sh
exit 3
```

```sh
exit 4
```
EOF
	extract "$BATS_TEST_TMPDIR/b" "$R/README.md"
	TERM_BLOCK=
	run -0 run_block "$BATS_TEST_TMPDIR/b/001" 3>/dev/null
	run -0 run_block "$BATS_TEST_TMPDIR/b/002" 3>/dev/null
	run -0 run_block "$BATS_TEST_TMPDIR/b/003" 3>/dev/null
	run -1 run_block "$BATS_TEST_TMPDIR/b/004" 3>/dev/null
	assert_output --partial "README.md:15: the block exited 4 (expected 0)"
	echo frobnicate >"$BATS_TEST_TMPDIR/b/002/directives"
	run -1 run_block "$BATS_TEST_TMPDIR/b/002" 3>/dev/null
	assert_output --partial "unknown README test directive 'frobnicate'"
}
