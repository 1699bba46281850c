#!/usr/bin/env bats
# owner-run's job is every process holding the key's run lock (issue 24
# items 1 and 2; docs/ownership.md "The job"): a job whose CMD forks a
# worker, owner-run killed with SIGKILL (the OOM killer) or SIGQUIT. No
# second node's job starts while the first worker lives; the worker is
# gone before any record of the key is freed; the first node's clean stop
# completes, or, when the worker cannot be stopped, ends with exit 22 and
# no `released`. Runs on the fs store and on a real S3 server
# (KEEP_TEST_STORE). Timings (ms): ttl 3000, grace 1500, safety 600, skew
# 300, period 1000; --kill-after defaults to min(safety / 2, 1000) = 300.

load helpers/common
load helpers/owner

setup() {
	keep_setup
	# the worker: records its pid, and on SIGTERM, SIGQUIT, SIGINT or SIGHUP
	# the wall ms it ends at, then ends (its `sleep 1` children hold the
	# run lock too: they get the signal as holders)
	cat >"$BATS_TEST_TMPDIR/worker" <<'EOF'
#!/bin/sh
echo $$ >"$1"
trap 'date +%s%3N >"$2"; exit 0' TERM QUIT INT HUP
while :; do sleep 1 & wait; done
EOF
	chmod +x "$BATS_TEST_TMPDIR/worker"
}
teardown() {
	local w
	for w in "$BATS_TEST_TMPDIR"/*.wpid; do
		[ -s "$w" ] && kill -KILL "$(cat "$w")" 2>/dev/null
	done
	keep_teardown
}

# start_agents ID... : keep-agent for each node, started together, live
start_agents() {
	local n
	for n in "$@"; do start_bg "a$n" keep-agent --node-id "$n"; done
	for n in "$@"; do wait_line 30 "a$n" '^live '; done
}

# run_job NAME NODE KEY : owner-run NODE KEY with CMD = a shell that runs
# the worker and waits for it (CMD forks the worker; both hold the run
# lock); waits until the worker runs. $BATS_TEST_TMPDIR/NAME.wpid: its pid
run_job() {
	start_bg "$1" owner-run --node-id "$2" "$3" -- \
		sh -c '"$0" "$1" "$2"; true' "$BATS_TEST_TMPDIR/worker" \
		"$BATS_TEST_TMPDIR/$1.wpid" "$BATS_TEST_TMPDIR/$1.wend"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/$1.wpid"
}

# wait_job NAME NODE KEY : owner-run --wait NODE KEY with a CMD that records
# the wall ms it starts at in NAME.started
wait_job() {
	start_bg "$1" owner-run --node-id "$2" --wait=60s "$3" -- \
		sh -c 'date +%s%3N >"$0"' "$BATS_TEST_TMPDIR/$1.started"
}

@test "owner-run killed with SIGKILL: its worker is stopped by the node's resolver before the key is released; the other node's job starts after the worker ended; the clean stop completes" {
	start_agents n1 n2
	run_job r n1 t/c/job
	worker=$(cat "$BATS_TEST_TMPDIR/r.wpid")
	wait_job w n2 t/c/job
	wait_line 10 w '^waiting key=t/c/job node=n1 free_at_ms=-$'
	kill -KILL "$(bg_pid r)"
	run wait_exit 5 r
	[ "$output" = 137 ]
	# CMD died with owner-run (PR_SET_PDEATHSIG); the worker ran on with the
	# run lock, unsupervised, until n1's resolver found the owner-run gone
	# (its run lock: its generation, its pid and start time): it stopped the
	# worker (SIGTERM), then released the key
	run wait_exit 30 w
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR"/w.* "$BATS_TEST_TMPDIR"/an1.err; false; }
	run -0 grep -F "the owner-run of 't/c/job' (generation 1) is gone: its job is stopped and the key released" "$BATS_TEST_TMPDIR/an1.err"
	run -0 refute_alive "$worker"
	wend=$(cat "$BATS_TEST_TMPDIR/r.wend")
	started=$(cat "$BATS_TEST_TMPDIR/w.started")
	echo "# n2's job started $((started - wend)) ms after n1's worker ended" >&3
	# both read from this host's wall clock
	[ "$started" -ge "$wend" ]
	run -0 grep -E '^acquired key=t/c/job generation=2 ' "$BATS_TEST_TMPDIR/w.out"
	# n1 did not stop for it
	run -0 bg_running an1
	kill -TERM "$(bg_pid an1)"
	run wait_exit 30 an1
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR"/an1.err; false; }
	run -0 grep -q '^released ' <(keep-store get nodes/n1)
	refute_sanitizer_reports
}

@test "owner-run and its agent killed with SIGKILL together: lease-write's own stop ends the orphaned worker before it writes released" {
	start_agents n1
	run_job r n1 t/c/job
	worker=$(cat "$BATS_TEST_TMPDIR/r.wpid")
	# the agent first (its children get SIGTERM: lease-write's clean stop
	# without a drain), owner-run with it
	kill -KILL "$(bg_pid an1)" "$(bg_pid r)"
	# lease-write's released shows on the agent's stdout (it is lease-write's
	# too); the worker must be gone by then: it ends only of the stop's
	# SIGTERM
	wait_line 20 an1 '^released node=n1 '
	run -0 refute_alive "$worker"
	run -0 test -s "$BATS_TEST_TMPDIR/r.wend"
	run -0 grep -q '^released ' <(keep-store get nodes/n1)
	refute_sanitizer_reports
}

@test "owner-run given SIGQUIT: a stop of the job (SIGQUIT to it, then SIGKILL), the key released once the worker is gone; the other node's job starts after; the clean stop completes" {
	start_agents n1 n2
	run_job r n1 t/c/job
	worker=$(cat "$BATS_TEST_TMPDIR/r.wpid")
	wait_job w n2 t/c/job
	wait_line 10 w '^waiting key=t/c/job node=n1 free_at_ms=-$'
	kill -QUIT "$(bg_pid r)"
	run wait_exit 10 r
	[ "$output" = 131 ] || { cat "$BATS_TEST_TMPDIR"/r.*; false; }
	# (CMD's status passed through: sh ended by SIGQUIT, 128 + 3)
	run -0 grep -x 'exited key=t/c/job status=131' "$BATS_TEST_TMPDIR/r.out"
	run -0 grep -x 'released key=t/c/job generation=1' "$BATS_TEST_TMPDIR/r.out"
	run -0 refute_alive "$worker"
	run wait_exit 30 w
	[ "$output" = 0 ]
	wend=$(cat "$BATS_TEST_TMPDIR/r.wend")
	started=$(cat "$BATS_TEST_TMPDIR/w.started")
	echo "# n2's job started $((started - wend)) ms after n1's worker ended" >&3
	[ "$started" -ge "$wend" ]
	kill -TERM "$(bg_pid an1)"
	run wait_exit 30 an1
	[ "$output" = 0 ]
	refute_sanitizer_reports
}

@test "a worker the node cannot stop (kill refused): its release stays pending, the clean stop ends 22 naming its pid, no released; nothing of the key freed by the node while it lives" {
	start_agents n2
	# n1's processes may not signal other processes (EPERM), as for a job
	# that runs as another user
	# (env execs the agent: the pid start_bg records is the agent's)
	start_bg an1 env KEEP_SYSFAIL='kill:EPERM:prog=owner-release;kill:EPERM:prog=lease-write' \
		KEEP_SYSFAIL_LOG="$BATS_TEST_TMPDIR/sysfail.log" LD_PRELOAD="$KEEP_TOOLDIR/sysfail.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" keep-agent --node-id n1
	wait_line 30 an1 '^live '
	# a worker that is only `sleep`: one holder, its pid known
	start_bg r owner-run --node-id n1 t/c/job -- \
		sh -c 'sh -c "echo \$\$ >\"\$0\"; exec sleep 600" "$0"; true' "$BATS_TEST_TMPDIR/r.wpid"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/r.wpid"
	worker=$(cat "$BATS_TEST_TMPDIR/r.wpid")
	kill -KILL "$(bg_pid r)"
	run wait_exit 5 r
	[ "$output" = 137 ]
	run -0 alive "$worker"
	# n1's resolver finds the owner-run gone and tries to stop the worker:
	# refused, the release stays pending, the key n1's
	wait_for 30 grep -q "a process of the job of 't/c/job' (pid $worker) still holds its run lock" "$BATS_TEST_TMPDIR/an1.err"
	run -0 owner-show --node-id n1 t/c/job
	[[ "$output" == *" state=held node=n1 "* ]]
	run -0 alive "$worker"
	kill -TERM "$(bg_pid an1)"
	run wait_exit 60 an1
	[ "$output" = 22 ] || { cat "$BATS_TEST_TMPDIR"/an1.err; false; }
	run -0 grep -E "lease-write: fatal: a process of a job \(pid $worker\) still holds a run lock" "$BATS_TEST_TMPDIR/an1.err"
	run -0 grep -E "^lost node=n1 .*reason=job-running .*pid=$worker$" "$BATS_TEST_TMPDIR/an1.out"
	# not released (live, or fenced by n2's agent by now: ttl + grace after
	# n1's last write)
	run -1 grep -q '^released ' <(keep-store get nodes/n1)
	run -0 owner-show --node-id n1 t/c/job
	[[ "$output" == *" state=held node=n1 "* ]]
	run -0 alive "$worker"
	run -0 grep -q 'kill EPERM' "$BATS_TEST_TMPDIR/sysfail.log"
	refute_sanitizer_reports
}
