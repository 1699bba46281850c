#!/usr/bin/env bats
# The agent's children under one supervision shape: a child that ends is
# restarted after a growing delay, with a warning naming it and how it
# ended, counted in keep_agent_restarts_total{child}; one that keeps ending
# makes the agent stop the node and exit 111 (systemd restarts it).

load helpers/common
load helpers/agent
agent_leak_checks

setup() {
	keep_setup
	printf 'metrics:\n  textfile: %s/keep.prom\n' "$BATS_TEST_TMPDIR" >>"$KEEP_CONFIG"
	PROM="$BATS_TEST_TMPDIR/keep.keep-agent.prom"
}
teardown() { keep_teardown; }

@test "keep-agent: the resolver killed is restarted with a warning, and a release parked meanwhile lands" {
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	grep -qx 'keep_agent_restarts_total{node="n1",child="resolver"} 0' "$PROM"
	run -0 owner-acquire --node-id n1 t/c/a
	rs=$(agent_field n1 resolver pid)
	kill -KILL "$rs"
	# park a release: the store refuses it now
	echo "put owners/ fail" >"$FAULT_FILE"
	run -20 owner-release --node-id n1 t/c/a
	assert_output --partial "pending key=t/c/a"
	run -0 owner-show t/c/a
	assert_output --partial "state=held node=n1"
	# the agent says so and restarts the resolver
	wait_for 5 grep -q "warning: resolver (owner-release --pending --follow) ended: killed by SIGKILL (status 137); restarting it in 1 s" "$BATS_TEST_TMPDIR/agent.err"
	wait_for 5 agent_field_is n1 resolver restarts 1
	new=$(agent_field n1 resolver pid)
	[ "$new" != "$rs" ]
	run -0 keep-agent status --node-id n1
	assert_output --partial "resolver node=n1 state=running pid=$new restarts=1"
	grep -qx 'keep_agent_restarts_total{node="n1",child="resolver"} 1' "$PROM"
	# the store back: the restarted resolver lands the parked release
	: >"$FAULT_FILE"
	wait_for 10 nothing_pending n1
	run -0 owner-show t/c/a
	assert_output --partial "state=nobody"
	refute_sanitizer_reports
}

@test "keep-agent: a fencing pipeline that ends is restarted whole and wired again" {
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	wait_for 5 fencing_wired n1
	nw=$(agent_field n1 fencing node_watch)
	lf=$(agent_field n1 fencing lease_fence)
	kill -KILL "$lf"
	wait_for 5 grep -q "warning: fencing (lease-fence) ended: killed by SIGKILL (status 137); restarting it in 1 s" "$BATS_TEST_TMPDIR/agent.err"
	# its node-watch was stopped with it; both come back, wired to each other
	wait_for 3 refute_alive "$nw"
	wait_for 5 fencing_wired n1
	[ "$(agent_field n1 fencing node_watch)" != "$nw" ]
	[ "$(agent_field n1 fencing restarts)" = 1 ]
	run -0 keep-agent status --node-id n1
	grep -qx 'keep_agent_restarts_total{node="n1",child="fencing"} 1' "$PROM"
	# and node-watch's end restarts both too
	nw=$(agent_field n1 fencing node_watch)
	kill -TERM "$nw"
	# lease-fence then reads end of input and exits 0 within ms: the agent
	# sees node-watch's end alone, both at once, or (a loaded host: CI run
	# FF) lease-fence's end first, when node-watch closed the pipe and was
	# still exiting as the agent looked. Each restarts the pair.
	wait_for 5 grep -qF -e "warning: fencing (node-watch) ended: exit 0; restarting it in " \
		-e "warning: fencing (node-watch | lease-fence) ended: node-watch exit 0, lease-fence exit 0; restarting it in " \
		-e "warning: fencing (lease-fence) ended: exit 0; restarting it in " \
		"$BATS_TEST_TMPDIR/agent.err"
	wait_for 3 refute_alive "$nw"
	wait_for 8 fencing_wired n1
	[ "$(agent_field n1 fencing node_watch)" != "$nw" ]
	[ "$(agent_field n1 fencing restarts)" = 2 ]
	refute_sanitizer_reports
}

@test "keep-agent: node-watch killed (SIGKILL): lease-fence reads end of input and ends on its own (0); the pair comes back and fences" {
	local nw lf pids
	start_bg agent keep-agent --node-id n1
	start_bg n2 keep-agent --node-id n2
	wait_for 30 keep-agent status --node-id n1
	wait_for 30 keep-agent status --node-id n2
	wait_for 5 fencing_wired n1
	nw=$(agent_field n1 fencing node_watch)
	lf=$(agent_field n1 fencing lease_fence)
	kill -KILL "$nw"
	# lease-fence's documented end (--stdin: 0 at end of input), not the
	# agent's SIGTERM: the agent gives it a heartbeat period to end. The
	# agent sees node-watch's end first, or (a loaded host: lease-fence
	# ends within ms of its end of input; hog run 5, docs/testing.md) both
	# at once, lease-fence's exit 0 then in the same line
	wait_for 5 grep -qF -e "warning: fencing (node-watch) ended: killed by SIGKILL (status 137); restarting it in 1 s" \
		-e "warning: fencing (node-watch | lease-fence) ended: node-watch killed by SIGKILL (status 137), lease-fence exit 0; restarting it in 1 s" \
		"$BATS_TEST_TMPDIR/agent.err"
	if ! grep -qF "fencing (node-watch | lease-fence) ended" "$BATS_TEST_TMPDIR/agent.err"; then
		grep -q "info: lease-fence (pid $lf) ended on its own after node-watch (end of input): exit 0" "$BATS_TEST_TMPDIR/agent.err"
	fi
	refute_alive "$lf"
	# both back, on a new pipe, one direction each
	wait_for 8 fencing_wired n1
	[ "$(agent_field n1 fencing node_watch)" != "$nw" ]
	[ "$(agent_field n1 fencing lease_fence)" != "$lf" ]
	[ "$(agent_field n1 fencing restarts)" = 1 ]
	run -0 keep-agent status --node-id n1
	# and the node still fences: n2 killed whole is fenced by n1's new pair
	pids=$(node_pids "$(bg_pid n2)")
	kill -KILL $pids
	wait_for 5 refute_alive $pids
	wait_for 20 node_state n2 fenced
	run -0 grep -c '^fenced node=n2 ' "$BATS_TEST_TMPDIR/agent.out"
	[ "$output" = 1 ]
	run -0 keep-store get nodes/n2
	assert_output --partial $'\nfenced_by n1\n'
	refute_sanitizer_reports
}

@test "keep-agent: lease-fence killed: node-watch's next line meets the closed pipe (stdout closed, 111); the pair comes back" {
	local a nw lf
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	wait_for 5 fencing_wired n1
	a=$(bg_pid agent)
	nw=$(agent_field n1 fencing node_watch)
	lf=$(agent_field n1 fencing lease_fence)
	# the agent stopped, so that it does not stop node-watch (SIGTERM) on
	# lease-fence's end before node-watch writes its next line
	kill -STOP "$a"
	kill -KILL "$lf"
	# a node appears (an operator's fence of an absent one): node-watch's
	# join line goes into a pipe no one reads
	run -0 lease-fence --create n9
	wait_for 10 grep -q "node-watch: warning: stdout closed: stopping" "$BATS_TEST_TMPDIR/agent.err"
	wait_for 5 refute_alive "$nw"
	kill -CONT "$a"
	wait_for 5 grep -q "warning: fencing (node-watch | lease-fence) ended: node-watch exit 111, lease-fence killed by SIGKILL (status 137); restarting it in 1 s" "$BATS_TEST_TMPDIR/agent.err"
	wait_for 8 fencing_wired n1
	[ "$(agent_field n1 fencing restarts)" = 1 ]
	run -0 keep-agent status --node-id n1
	refute_sanitizer_reports
}

@test "keep-agent: not ready while a part is down (exit 18), ready again once it is back" {
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	run -0 keep-agent status --node-id n1
	assert_output --partial "status node=n1 ready=yes lease=valid agent=yes fencing=running resolver=running"
	kill -STOP "$(bg_pid agent)" # no restart while we look
	kill -KILL "$(agent_field n1 resolver pid)"
	run -18 keep-agent status --node-id n1
	assert_output --partial "status node=n1 ready=no lease=valid agent=yes fencing=running resolver=down"
	kill -CONT "$(bg_pid agent)"
	wait_for 5 keep-agent status --node-id n1
}

@test "keep-agent: a stopped agent (SIGSTOP) is not ready (18), one warning says so; ready again once it continues" {
	local a
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	a=$(bg_pid agent)
	run -0 --separate-stderr keep-agent status --node-id n1
	assert_line --regexp "^agent node=n1 running=yes pid=$a phase=[a-z]+ stopped=no\$"
	kill -STOP "$a"
	# its children run on (own process groups): only the supervisor stopped
	run -18 --separate-stderr keep-agent status --node-id n1
	assert_line --regexp "^agent node=n1 running=yes pid=$a phase=[a-z]+ stopped=yes\$"
	assert_line "status node=n1 ready=no lease=valid agent=yes fencing=running resolver=running listing=ok"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "keep-agent: warning: the agent (pid $a) is stopped (SIGSTOP, Ctrl-Z or a debugger): it restarts no child and its clean stop waits; \`kill -CONT $a\` lets it go on" ]
	run -18 --separate-stderr keep-agent status --node-id n1 --json
	assert_line --partial '{"type":"agent","node":"n1","running":true,'
	assert_line --partial '"stopped":true}'
	kill -CONT "$a"
	wait_for 5 keep-agent status --node-id n1
	run -0 --separate-stderr keep-agent status --node-id n1
	assert_line --regexp "^agent node=n1 running=yes pid=$a phase=[a-z]+ stopped=no\$"
	[ -z "$stderr" ]
	refute_sanitizer_reports
}

@test "keep-agent: a child that keeps ending stops the node (clean stop) and exits 111" {
	# a bindir whose owner-release --follow ends at once (the drain works)
	local bin=$BATS_TEST_TMPDIR/bin c
	mkdir -p "$bin"
	for c in "$KEEP_BINDIR"/*; do ln -s "$c" "$bin/"; done
	rm "$bin/owner-release"
	printf '#!/bin/sh\ncase " $* " in *" --follow "*) echo "resolver broken" >&2; exit 3 ;; esac\nexec %q "$@"\n' \
		"$KEEP_BINDIR/owner-release" >"$bin/owner-release"
	chmod +x "$bin/owner-release"
	KEEP_BINDIR=$bin start_bg agent "$bin/keep-agent" --node-id n1
	# ends 1..4 are restarted after 1, 2, 4, 8 s; the 5th stops the node
	run wait_exit 40 agent
	[ "$output" = 111 ]
	run -0 grep -c "warning: resolver (owner-release --pending --follow) ended: exit 3; restarting it in" "$BATS_TEST_TMPDIR/agent.err"
	[ "$output" = 4 ]
	for d in 1 2 4 8; do
		grep -q "ended: exit 3; restarting it in $d s" "$BATS_TEST_TMPDIR/agent.err"
	done
	grep -q "fatal: resolver (owner-release --pending --follow) ended 5 times in a row, last: exit 3; stopping the node" "$BATS_TEST_TMPDIR/agent.err"
	grep -qx 'keep_agent_restarts_total{node="n1",child="resolver"} 4' "$PROM"
	# a clean stop: it went live meanwhile, so it drained and wrote released
	node_state n1 released
	refute_sanitizer_reports
}
