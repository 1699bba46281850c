#!/usr/bin/env bats
# owner-run KEY -- CMD (issue 15 item 2; docs/ownership.md "owner-run"): CMD
# runs only while the grant holds. It is stopped (SIGTERM to its process
# group, SIGKILL after --kill-after) the moment the grant ends: an operator
# fence, a run-out (store outage), a lease-write that stopped renewing, a
# wall-clock step; KEY is released when CMD exits; CMD's status is passed
# through. Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Nodes start together (a start check takes seconds: in parallel, once).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000;
# the default --kill-after is min(safety / 2, 1000) = 300.

load helpers/common
load helpers/owner # line_at (clock's start_node, loaded after, wins)
load helpers/clock

setup() { keep_setup; }
teardown() { keep_teardown; }

# wait_live ID... : each node's lease-write (started with start_bg) is live
wait_live() {
	local n
	for n in "$@"; do wait_line 30 "$n" '^live '; done
}

# a child that records its pid, then the wall ms of every SIGTERM, and
# goes on (only the SIGKILL after --kill-after ends it), as a stuck job
# would; `sleep & wait` lets the trap run at once
STUCK='echo $$ >"$1"; trap "date +%s%3N >>\"\$2\"" TERM; while :; do sleep 60 & wait; done'

@test "owner-run: CMD's environment and exit status, KEY released when it exits, held elsewhere runs nothing, --wait, signals forwarded" {
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	wait_live n1 n2
	run -7 --separate-stderr owner-run --node-id n1 t/c/a -- \
		sh -c 'echo "env $KEEP_OWNER_KEY $KEEP_OWNER_GENERATION $KEEP_NODE_ID"; owner-check --node-id n1 t/c/a "$KEEP_OWNER_GENERATION" >/dev/null && echo checked; exit 7'
	[[ "${lines[0]}" == "acquired key=t/c/a generation=1 "* ]]
	[ "${lines[1]}" = "env t/c/a 1 n1" ]
	[ "${lines[2]}" = "checked" ]
	[ "${lines[3]}" = "exited key=t/c/a status=7" ]
	[ "${lines[4]}" = "released key=t/c/a generation=1" ]
	[ -z "$(ls "$STATE_DIR/n1/holds")" ]
	# released: another node acquires it at once
	run -0 owner-acquire --node-id n2 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=2 "* ]]
	# held elsewhere: CMD never runs, held's code
	run -1 --separate-stderr owner-run --node-id n1 t/c/a -- touch "$BATS_TEST_TMPDIR/ran"
	[[ "$output" == "held key=t/c/a node=n2 "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	run -100 --separate-stderr owner-run --node-id n1 t/c/a
	# signals: SIGTERM to owner-run reaches CMD, then KEY is released
	start_bg s owner-run --node-id n1 t/c/s -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$BATS_TEST_TMPDIR/s.pid"
	# --wait: CMD runs once the holder's own owner-run released the key
	# (the holder's job ends when the test says, once the waiter waits:
	# with a `sleep 1`, a loaded machine started the waiter after it)
	start_bg h owner-run --node-id n1 t/c/b -- sh -c 'until [ -e "$1" ]; do sleep 0.05; done' sh "$BATS_TEST_TMPDIR/h.go"
	wait_line 10 h '^acquired key=t/c/b generation=1 '
	start_bg wt owner-run --node-id n2 --wait=30s t/c/b -- sh -c 'echo "ran $KEEP_OWNER_GENERATION"'
	wait_line 10 wt '^waiting '
	: >"$BATS_TEST_TMPDIR/h.go"
	run wait_exit 30 wt
	[ "$output" = 0 ]
	run -0 cat "$BATS_TEST_TMPDIR/wt.out"
	[ "${lines[0]}" = "waiting key=t/c/b node=n1 free_at_ms=-" ]
	[[ "${lines[1]}" == "acquired key=t/c/b generation=2 "* ]]
	[ "${lines[2]}" = "ran 2" ]
	run wait_exit 5 h
	[ "$output" = 0 ]
	wait_for 10 test -s "$BATS_TEST_TMPDIR/s.pid"
	child=$(cat "$BATS_TEST_TMPDIR/s.pid")
	kill -TERM "$(bg_pid s)"
	run wait_exit 10 s
	[ "$output" = 143 ]
	run -0 refute_alive "$child"
	run -0 grep -x "released key=t/c/s generation=1" "$BATS_TEST_TMPDIR/s.out"
	refute_sanitizer_reports
}

@test "owner-run: CMD is stopped, exit 21, when the grant ends: an operator fence (SIGTERM, then SIGKILL after --kill-after), a store outage, a lease-write that stopped renewing (the boot-clock timer), a wall-clock step" {
	: >"$BATS_TEST_TMPDIR/f3"
	start_bg n1 lease-write --node-id n1
	start_bg n2 lease-write --node-id n2
	start_bg n3 env KEEP_FAULT_FILE="$BATS_TEST_TMPDIR/f3" lease-write --node-id n3
	start_node n4 n4 shim
	wait_live n1 n2 n3
	for n in n1 n2 n3 n4; do
		pre=
		[ $n = n4 ] && pre="shimmed n4"
		start_bg "r$n" $pre owner-run --node-id $n --kill-after=200 t/c/$n -- \
			sh -c "$STUCK" sh "$BATS_TEST_TMPDIR/$n.child" "$BATS_TEST_TMPDIR/$n.term"
	done
	for n in n1 n2 n3 n4; do wait_for 10 test -s "$BATS_TEST_TMPDIR/$n.child"; done
	"$KEEP_TOOLDIR/statewatch" "$STATE_DIR/n1" >"$BATS_TEST_TMPDIR/n1.phases" 2>&1 &
	echo $! >"$BATS_TEST_TMPDIR/sw.pid"
	echo sw >>"$BATS_TEST_TMPDIR/.bg"
	wait_for 5 grep -q live "$BATS_TEST_TMPDIR/n1.phases"
	# all four at once
	kill -STOP "$(bg_pid n2)"
	until_mono=$(sed -n 's/^valid_until_ms //p' "$STATE_DIR/n2/lease")
	echo 'put nodes/n3 fail' >"$BATS_TEST_TMPDIR/f3"
	shim_set n4 realtime_ms=5000
	run -0 --separate-stderr lease-fence n1
	for n in n1 n2 n3 n4; do
		run wait_exit 10 "r$n"
		[ "$output" = 21 ] || { echo "$n: owner-run exit $output"; cat "$BATS_TEST_TMPDIR/r$n.out"; false; }
		run -0 refute_alive "$(cat "$BATS_TEST_TMPDIR/$n.child")"
		# one SIGTERM, and the SIGKILL after --kill-after ended the child
		[ "$(wc -l <"$BATS_TEST_TMPDIR/$n.term")" -eq 1 ]
		run -0 grep -x "exited key=t/c/$n status=137" "$BATS_TEST_TMPDIR/r$n.out"
	done
	kill -CONT "$(bg_pid n2)"
	# the fence: SIGTERM right after lease-write first wrote the lost state
	# (inotify), before the validity deadline (about 1400 ms later): the
	# latency figures are in bench/owner-run.sh
	# (the reason says it: lapsed is the lost state, the timer says
	# not-valid). The times below are owner-run's own (ended_mono_ms: when
	# it sent SIGTERM) and the lease's, on one clock, the boot clock.
	run -0 grep -E '^grant-ended key=t/c/n1 generation=1 reason=lapsed code=10 ended_mono_ms=[0-9]+$' "$BATS_TEST_TMPDIR/rn1.out"
	ended=$(sed -n 's/.* ended_mono_ms=//p' "$BATS_TEST_TMPDIR/rn1.out")
	lost_line=$(awk '$2 == "lost" { print; exit }' "$BATS_TEST_TMPDIR/n1.phases")
	until1=$(echo "$lost_line" | cut -d' ' -f4)
	echo "# fence: SIGTERM $((until1 - ended)) ms before the validity deadline" >&3
	[ "$until1" -gt 0 ]
	[ "$ended" -lt "$until1" ]
	# no renewal and no state written: the timer at the validity deadline,
	# not before it (tolerance for after it: 1000 ms, the wake-up of a
	# timerfd on a loaded machine; a missed timer would wait until n2 is
	# continued below, and owner-run would not have exited)
	run -0 grep -E '^grant-ended key=t/c/n2 generation=1 reason=not-valid code=14 ended_mono_ms=[0-9]+$' "$BATS_TEST_TMPDIR/rn2.out"
	ended=$(sed -n 's/.* ended_mono_ms=//p' "$BATS_TEST_TMPDIR/rn2.out")
	echo "# stopped lease-write: SIGTERM $((ended - until_mono)) ms after the validity deadline" >&3
	[ "$ended" -ge "$until_mono" ]
	[ $((ended - until_mono)) -le 1000 ]
	# the outage: ran out (owner-run's timer at the validity deadline says
	# not-valid; lease-write's ran-out state, written at the same moment,
	# counts a lapse and says lapsed: which comes first is the scheduler's)
	run -0 grep -E '^grant-ended key=t/c/n3 generation=1 reason=(not-valid|lapsed) code=(1|14) ended_mono_ms=[0-9]+$' "$BATS_TEST_TMPDIR/rn3.out" ||
		{ cat "$BATS_TEST_TMPDIR/rn3.out"; false; }
	# the clock step: the hold lapsed
	run -0 grep -E '^grant-ended key=t/c/n4 generation=1 reason=(lapsed|not-valid) code=(1|14) ended_mono_ms=[0-9]+$' "$BATS_TEST_TMPDIR/rn4.out"
	refute_sanitizer_reports
}

# released_after CHILD KEY NAME... : one of NAME's stdout shows `released
# key=KEY generation=1` (polled every 10 ms); the moment it does, CHILD must
# be gone already. The release is sent only once no process of the job
# holds the run lock; one sent at once would show while CHILD still runs:
# it ignores SIGTERM and dies only of its SIGKILL, --kill-after (1000 ms)
# later
released_after() {
	local child=$1 key=$2 end=$(($(now_ms) + 20000)) n
	shift 2
	while [ "$(now_ms)" -lt "$end" ]; do
		for n in "$@"; do
			if grep -qx "released key=$key generation=1" "$BATS_TEST_TMPDIR/$n.out"; then
				refute_alive "$child"
				return
			fi
		done
		sleep 0.01
	done
	echo "no released line for $key" >&2
	return 1
}

@test "owner-run: no release while CMD's processes live (an operator's owner-release, an agent's clean stop wait for the run lock); a second run of KEY refused; kill -9 of owner-run kills CMD; bad --kill-after, --wait and CMD refused before acquiring" {
	# safety 2000: --kill-after up to 1000 ms (a stuck CMD lives that long
	# after its SIGTERM: a release sent meanwhile would show it alive)
	keep_setup 6000 3000 2000 300 1000
	start_bg a keep-agent --node-id n1
	printf '#!/bin/sh\n' >"$BATS_TEST_TMPDIR/noexec"
	# refused before anything is acquired: one line each
	run -127 --separate-stderr owner-run --node-id n1 t/c/x -- no-such-command-$$
	[ "$stderr" = "owner-run: fatal: cannot run 'no-such-command-$$': No such file or directory" ]
	run -126 --separate-stderr owner-run --node-id n1 t/c/x -- "$BATS_TEST_TMPDIR/noexec"
	[ "$stderr" = "owner-run: fatal: cannot run '$BATS_TEST_TMPDIR/noexec': Permission denied" ]
	run -100 --separate-stderr owner-run --node-id n1 --kill-after=1001 t/c/x -- true
	[ "$stderr" = "owner-run: fatal: --kill-after 1001 ms is above safety_ms / 2 (1000 ms)" ]
	run -100 --separate-stderr owner-run --node-id n1 --wait=soon t/c/x -- true
	[ "$stderr" = "owner-run: fatal: --wait wants a duration: N (ms) or Nms, Ns, Nm, Nh, at most 24h" ]
	wait_line 30 a '^live '
	run -0 owner-show --node-id n1 t/c/x
	[[ "$output" == *" state=absent "* ]]
	# an operator's owner-release KEY: the record names n1 until CMD (which
	# ignores SIGTERM) is gone, SIGKILLed after --kill-after
	start_bg r owner-run --node-id n1 --kill-after=1000 t/c/r -- sh -c "$STUCK" sh "$BATS_TEST_TMPDIR/r.child" "$BATS_TEST_TMPDIR/r.term"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/r.child"
	# a second run of KEY on this node: refused, nothing acquired or run
	run -1 --separate-stderr owner-run --node-id n1 t/c/r -- touch "$BATS_TEST_TMPDIR/ran"
	[ "$output" = "refused key=t/c/r reason=running" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	start_bg rel owner-release --node-id n1 t/c/r
	run -0 released_after "$(cat "$BATS_TEST_TMPDIR/r.child")" t/c/r rel a
	# the release stops the job and waits for it within its 1 s (issue 23
	# item 3): released when the job ended in time, else parked (exit 20:
	# the SIGKILL comes 1000 ms after the SIGTERM), and the agent's resolver
	# sends it once no process of the job holds the lock
	run wait_exit 10 rel
	case $output in
	0) run -0 grep -x "released key=t/c/r generation=1" "$BATS_TEST_TMPDIR/rel.out" ;;
	20) run -0 grep -x "pending key=t/c/r generation=1 version=.*" "$BATS_TEST_TMPDIR/rel.out" ;;
	*) cat "$BATS_TEST_TMPDIR"/rel.* "$BATS_TEST_TMPDIR"/r.*; false ;;
	esac
	wait_for 10 sh -c 'owner-show --node-id n1 t/c/r | grep -q " state=nobody "'
	run wait_exit 10 r
	[ "$output" = 21 ]
	# kill -9 of owner-run: CMD (SIGTERM ignored) dies with it
	start_bg k owner-run --node-id n1 t/c/k -- sh -c 'echo $$ >"$1"; trap "" TERM; exec sleep 60' sh "$BATS_TEST_TMPDIR/k.child"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/k.child"
	kill -KILL "$(bg_pid k)"
	wait_for 5 refute_alive "$(cat "$BATS_TEST_TMPDIR/k.child")"
	# the agent's clean stop (its drain) waits for the job too
	start_bg d owner-run --node-id n1 --kill-after=1000 t/c/d -- sh -c "$STUCK" sh "$BATS_TEST_TMPDIR/d.child" "$BATS_TEST_TMPDIR/d.term"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/d.child"
	kill -TERM "$(bg_pid a)"
	run -0 released_after "$(cat "$BATS_TEST_TMPDIR/d.child")" t/c/d a
	run wait_exit 20 a
	[ "$output" = 0 ]
	run wait_exit 5 d
	[ "$output" = 21 ] || { echo "owner-run d: exit '$output'"; cat "$BATS_TEST_TMPDIR"/d.* "$BATS_TEST_TMPDIR"/a.err; false; }
	for k in t/c/d t/c/k; do
		run -0 owner-show --node-id n1 $k
		[[ "$output" == *" state=nobody "* ]] || { echo "$output"; cat "$BATS_TEST_TMPDIR"/a.* "$BATS_TEST_TMPDIR"/d.* "$BATS_TEST_TMPDIR"/k.*; false; }
	done
	refute_sanitizer_reports
}
