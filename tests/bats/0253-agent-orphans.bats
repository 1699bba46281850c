#!/usr/bin/env bats
# SIGKILL of the agent alone leaves no orphan: every long-running child
# ends within one heartbeat period (lib/driver/supervise.h: PR_SET_PDEATHSIG), and
# the node ends as docs/lease.md "No supervisor" says: lease-write makes the
# lease invalid at once (every hold with it), writes `released`, and
# releases no ownership record (no drain without the agent): the records
# free ttl + grace after the last write, by the `released` object.
# Timings: period 1000 ms, ttl 3000, grace 1500.

load helpers/common
load helpers/agent
agent_leak_checks

setup() { keep_setup; }
teardown() { keep_teardown; }

@test "keep-agent: SIGKILL of the agent alone: no process left within a period; released, holds ended, records kept" {
	start_bg n2 keep-agent --node-id n2
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	wait_for 30 keep-agent status --node-id n2
	run -0 owner-acquire --node-id n1 t/c/a
	gen=$(sed -n 's/.*generation=\([0-9]*\).*/\1/p' <<<"$output")
	run -0 owner-check --node-id n1 t/c/a "$gen"
	kids=$(descendants "$(bg_pid agent)")
	[ "$(echo "$kids" | wc -l)" -ge 4 ] # lease-write, node-watch, lease-fence, resolver (+ the 1 s timer)
	keep_cmds=$(for p in $kids; do
		case $({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null) in
		*lease-write* | *node-watch* | *lease-fence* | *owner-release*) echo "$p" ;;
		esac
	done)
	[ "$(echo "$keep_cmds" | wc -l)" -eq 4 ]
	t0=$(now_ms)
	kill -KILL "$(bg_pid agent)"
	# every keep command of the node is told at once (PR_SET_PDEATHSIG) and
	# stops within one heartbeat period (lease-write's orphan stop, its
	# released write); anything else (the agent's 1 s timer) soon after.
	# Tolerance: 5 s, the exits of four sanitizer-built processes on a
	# loaded machine (1.7 s seen); an orphan left running is still there
	wait_for 5 refute_alive $keep_cmds
	gone=$(($(now_ms) - t0))
	echo "# children gone ${gone} ms after SIGKILL of the agent (period 1000 ms)" >&3
	wait_for 5 refute_alive $kids
	# ps agrees: not one of the node's processes is left running (a zombie
	# is an ended process its new parent has not reaped: init's business)
	left=$(ps -o pid=,stat=,args= -p "$(paste -sd, <<<"$kids")" | awk '$2 !~ /^Z/')
	[ -z "$left" ] || { echo "still running: $left"; false; }
	# the node ends as documented: released written, the lease invalid,
	# the hold refused; the record still names n1 (nothing released it)
	run -0 keep-store get nodes/n1
	[[ "${lines[1]}" == "released "* ]]
	run -15 lease-status --node-id n1
	assert_output --partial "phase=stopped"
	run -15 owner-check --node-id n1 t/c/a "$gen"
	run -0 owner-show t/c/a
	assert_output --partial "state=held node=n1"
	grep -q "keep-agent is gone" "$BATS_TEST_TMPDIR/agent.err"
	# ... and it frees ttl + grace after n1's last write: n2 takes it
	wait_for 10 owner-acquire --node-id n2 t/c/a
	run -0 owner-show t/c/a
	assert_output --partial "node=n2"
	refute_sanitizer_reports
}

@test "supervise: KEEP_SUPERVISOR_PID malformed is a usage error; naming a process already gone, nothing starts" {
	run -100 --separate-stderr env KEEP_SUPERVISOR_PID=abc node-watch --follow --node-id n1
	[[ "$stderr" == *"bad KEEP_SUPERVISOR_PID 'abc'"* ]]
	# a pid that is gone: the agent ended before its child asked to follow it
	sh -c 'exit 0' &
	gone=$!
	wait "$gone" || true
	run -111 --separate-stderr env KEEP_SUPERVISOR_PID="$gone" lease-write --node-id n1
	[[ "$stderr" == *"keep-agent (pid $gone) is gone: not starting"* ]]
	run -15 lease-status --node-id n1 # it wrote nothing, not even its state
	# started through a wrapper (not by the agent itself): it says so and
	# follows the parent it has instead
	start_bg w env KEEP_SUPERVISOR_PID=$$ sh -c 'node-watch --follow --node-id n1; exit 0'
	wait_for 5 pgrep -P "$(bg_pid w)"
	nw=$(pgrep -P "$(bg_pid w)")
	wait_for 5 grep -q "node-watch: warning: started by pid $(bg_pid w), not by keep-agent (pid $$)" "$BATS_TEST_TMPDIR/w.err"
	kill -KILL "$(bg_pid w)"
	wait_for 2 refute_alive "$nw"
}
