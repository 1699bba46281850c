#!/usr/bin/env bats
# Ctrl-C from a real terminal (tmux): the terminal's SIGINT goes to the
# foreground process group, which holds the agent but none of its children
# (each runs in a group of its own, lib/driver/supervise.h). So exactly one clean
# stop runs, the agent's, in the ADR §4 order: drain complete (nothing
# pending), then lease-write's `stopping` (the lease locally invalid), then
# `released` last. (Before: lease-write got the SIGINT too, began its own
# stop, and the drain paused: releases stayed pending until ttl + grace.)

load helpers/common
load helpers/agent
agent_leak_checks

setup() {
	command -v tmux >/dev/null || skip "tmux not installed (scripts/install-deps.sh --test)"
	keep_setup
}
teardown() {
	terminal_teardown
	keep_teardown
}

@test "keep-agent: Ctrl-C on a terminal runs exactly one clean stop: drained, released last, nothing pending, no process left" {
	local d=$BATS_TEST_TMPDIR pids
	in_terminal t keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 t/c/b
	pids=$(node_pids "$(agent_field n1 agent pid)")
	[ "$(echo "$pids" | wc -l)" -ge 5 ]
	terminal_keys C-c
	wait_for 20 test -s "$d/t.rc"
	[ "$(cat "$d/t.rc")" = 0 ]
	# one stop: one `clean stop` from the agent, one drain, one `stopping`
	# and one `released` from lease-write, in that order
	run -0 grep -c ': SIGINT: clean stop$' "$d/t.err"
	[ "$output" = 1 ]
	run -0 grep -nE '^(released key=|drain |stopping |released node=)' "$d/t.out"
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[0]}" == *"released key=t/c/"* ]]
	[[ "${lines[1]}" == *"released key=t/c/"* ]]
	[[ "${lines[2]}" == *"drain pending=0" ]]
	[[ "${lines[3]}" == *"stopping node=n1 "* ]]
	[[ "${lines[4]}" == *"released node=n1 "* ]]
	# in the bucket: released, the records free; nothing pending locally
	node_state n1 released
	run -0 owner-show t/c/a
	assert_output --partial "state=nobody"
	run -0 owner-show t/c/b
	assert_output --partial "state=nobody"
	nothing_pending n1
	# no process of the node's left
	wait_for 3 refute_alive $pids
	refute_sanitizer_reports
}
