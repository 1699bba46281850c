#!/usr/bin/env bats
# Peer fencing by the agent itself, end to end: three real keep-agents, one
# node killed with SIGKILL (the whole node: the agent and every child, at
# once), and another agent's own pipeline (node-watch --follow |
# lease-fence --stdin, not a hand-wired one) fences it; its actors move.

load helpers/common
load helpers/agent
agent_leak_checks

setup() { keep_setup; }
teardown() { keep_teardown; }

@test "keep-agent: of three agents, one node killed with SIGKILL is fenced by another agent; its actors move" {
	local n pids t_kill
	for n in n1 n2 n3; do
		start_bg "$n" keep-agent --node-id "$n"
	done
	for n in n1 n2 n3; do
		wait_for 30 keep-agent status --node-id "$n"
	done
	run -0 owner-acquire --node-id n3 t/c/a
	run -1 owner-acquire --node-id n1 t/c/a
	# the whole node: every process of n3 at once (its children run in
	# process groups of their own, so by pid, not by group)
	pids=$(node_pids "$(bg_pid n3)")
	[ "$(echo "$pids" | wc -l)" -ge 5 ] # agent, lease-write, node-watch, lease-fence, resolver
	t_kill=$(now_ms)
	kill -KILL $pids
	wait_for 5 refute_alive $pids
	# a peer's own lease-fence writes the fence, ttl + grace after n3's last write
	wait_for 20 node_state n3 fenced
	echo "# fenced $(($(now_ms) - t_kill)) ms after the kill (ttl + grace = 4500 ms)" >&3
	run -0 grep -h '^fenced node=n3 ' "$BATS_TEST_TMPDIR/n1.out" "$BATS_TEST_TMPDIR/n2.out"
	[ "${#lines[@]}" -eq 1 ] # exactly one fence landed
	run -0 keep-store get nodes/n3
	assert_output --regexp $'\nfenced_by (n1|n2)\n'
	# n3's record is free now: n1 takes the actor at a new generation
	run -0 owner-acquire --node-id n1 t/c/a
	assert_output --partial "generation=2"
	# the survivors are still ready, nothing restarted
	run -0 keep-agent status --node-id n1
	run -0 keep-agent status --node-id n2
	run -1 grep -l 'warning: .* ended' "$BATS_TEST_TMPDIR/n1.err" "$BATS_TEST_TMPDIR/n2.err"
	refute_sanitizer_reports
}
