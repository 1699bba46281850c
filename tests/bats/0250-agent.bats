#!/usr/bin/env bats
# keep-agent end to end: runs a node, readiness follows the lease, SIGTERM is
# the clean stop, a lost lease stops everything with the reason's code.

load helpers/common
agent_leak_checks

setup() { keep_setup; }
teardown() { keep_teardown; }

@test "keep-agent: ready only while the lease is valid; SIGTERM leaves released and exits 0" {
	run -15 keep-agent status --node-id n1
	start_bg agent keep-agent --node-id n1
	wait_line 20 agent '^live '
	run -0 keep-agent status --node-id n1
	assert_output --partial "phase=live"
	kids=$(descendants "$(bg_pid agent)")
	[ -n "$kids" ]
	kill -TERM "$(bg_pid agent)"
	run wait_exit 15 agent
	[ "$output" = 0 ]
	run -0 keep-store get nodes/n1
	[[ "${lines[1]}" == "released "* ]]
	run -15 keep-agent status --node-id n1
	# nothing of the agent's is left running
	wait_for 5 refute_alive $kids
	refute_sanitizer_reports
}

@test "keep-agent: a fence makes it exit at once with the fenced code, children gone" {
	start_bg agent keep-agent --node-id n1
	wait_line 20 agent '^live '
	kids=$(descendants "$(bg_pid agent)")
	hand_fence n1
	run wait_exit 10 agent
	[ "$output" = 10 ]
	grep -q 'node lease ended (exit 10' "$BATS_TEST_TMPDIR/agent.err"
	run -10 keep-agent status --node-id n1
	wait_for 5 refute_alive $kids
}

@test "keep-agent: refuses a store that fails store-probe, and bad flags" {
	run -100 --separate-stderr keep-agent --bogus
	[[ "$stderr" == *"unknown argument '--bogus'"* ]]
	# a missing store directory may be a volume not mounted yet: temporary
	run -111 --separate-stderr keep-agent --node-id n1 --store "file://$BATS_TEST_TMPDIR/missing"
	echo "put probe/ error 403" >"$FAULT_FILE"
	run -1 --separate-stderr keep-agent --node-id n1
	[[ "$stderr" == *"store-probe"* ]]
	run -0 keep-store list nodes/
	[ -z "$output" ]
}

@test "keep-agent: -h prints the usage and exits 0" {
	run -0 keep-agent -h
	assert_output --partial "keep-agent status"
}
