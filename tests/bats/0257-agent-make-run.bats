#!/usr/bin/env bats
# `make run` as a newcomer sees it, on a real terminal (tmux): it builds
# the commands quietly, explains what the node does while it waits, and
# Ctrl-C ends it cleanly: `released` in RUN_DIR/bucket/nodes/n1, nothing
# pending, no process of the agent's left, make exits 0 (no "Interrupt").
# Store-independent (make run uses the embedded store): the fs pass only.

load helpers/common
load helpers/agent
agent_leak_checks

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
	command -v tmux >/dev/null || skip "tmux not installed (scripts/install-deps.sh --test)"
	RUN="$BATS_TEST_TMPDIR/run"
}
teardown() {
	terminal_teardown
	keep_teardown
}

@test "make run: explains the start, then Ctrl-C leaves released, nothing pending, no process left, no make error" {
	local d=$BATS_TEST_TMPDIR at pids
	# what a newcomer has: no KEEP_CONFIG (the default timings: a 15 s start check)
	unset KEEP_CONFIG KEEP_FAULT_FILE
	in_terminal m make --no-print-directory -C "$ROOT" run RUN_DIR="$RUN"
	# the build (if any) comes first, then the node's first event within ttl + grace
	wait_for 600 grep -q '^live node=n1 ' "$d/m.out"
	at=(--store "file://$RUN/bucket" --node-id n1 --state-dir "$RUN/state")
	wait_for 10 keep-agent status "${at[@]}"
	run -0 owner-acquire "${at[@]}" t/c/a
	pids=$(node_pids "$(agent_field_at "$RUN" agent pid)")
	[ "$(echo "$pids" | wc -l)" -ge 5 ]
	terminal_keys C-c
	wait_for 30 test -s "$d/m.rc"
	cat "$d/m.out" "$d/m.err" >"$d/m.all"
	[ "$(cat "$d/m.rc")" = 0 ] || { cat "$d/m.all"; false; }
	run -1 grep -E 'Interrupt|\*\*\*|Error' "$d/m.all"
	# before the first event: the two lines of make run, the agent's, no compiler lines
	run -1 grep -E '^(cc|gcc|clang|ar) ' "$d/m.all"
	grep -q '^keep: node n1 on the embedded store ' "$d/m.out"
	grep -q 'the start check waits ttl + grace (the wait_ms of its check-start line)' "$d/m.err"
	grep -q '`pass old=N`: the guard passed' "$d/m.err"
	grep -q '^pass old=0$' "$d/m.out"
	# one clean stop, released last
	run -0 grep -c 'SIGINT: clean stop$' "$d/m.err"
	[ "$output" = 1 ]
	run -0 keep-store --store "file://$RUN/bucket" get nodes/n1
	[[ "${lines[1]}" == "released "* ]]
	run -0 owner-show --store "file://$RUN/bucket" t/c/a
	assert_output --partial "state=nobody"
	[ -z "$(ls -A "$RUN/state/n1/pending")" ]
	wait_for 3 refute_alive $pids
}
