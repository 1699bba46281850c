#!/usr/bin/env bats
# owner-run KEY -- CMD (issue 15 item 2; docs/ownership.md "owner-run"): CMD
# runs only while the grant holds. It is stopped (SIGTERM to its process
# group, SIGKILL after --kill-after) the moment the grant ends: an operator
# fence, a run-out (store outage), a wall-clock step; KEY is released when
# CMD exits; CMD's status is passed through. Runs on the fs store and on a
# real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000;
# the default --kill-after is min(safety / 2, 1000) = 300.

load helpers/common
load helpers/clock

setup() { keep_setup; }
teardown() { keep_teardown; }

# a child that records its pid, then the wall ms of every SIGTERM, and
# goes on (only the SIGKILL after --kill-after ends it), as a stuck job
# would; `sleep & wait` lets the trap run at once
STUCK='echo $$ >"$1"; trap "date +%s%3N >>\"\$2\"" TERM; while :; do sleep 60 & wait; done'

@test "owner-run: CMD gets the grant in its environment, its exit status is passed through, and KEY is released when it exits" {
	start_node n1 n1
	start_node n2 n2
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
	refute_sanitizer_reports
}

@test "owner-run: an operator fence stops CMD (SIGTERM, then SIGKILL after --kill-after) with exit 21" {
	start_node n1 n1
	start_bg r owner-run --node-id n1 --kill-after=200 t/c/a -- \
		sh -c "$STUCK" sh "$BATS_TEST_TMPDIR/child.pid" "$BATS_TEST_TMPDIR/term.ms"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/child.pid"
	child=$(cat "$BATS_TEST_TMPDIR/child.pid")
	run -0 --separate-stderr lease-fence n1
	run wait_exit 10 r
	[ "$output" = 21 ]
	run -0 refute_alive "$child"
	# SIGTERM came right after lease-write wrote the lost state (inotify),
	# not at the lease's validity deadline (1400 ms later at the latest:
	# a coarse bound, the real figure is in bench/owner-run.sh)
	run -0 grep -x 'phase lost' "$STATE_DIR/n1/lease"
	lost_at=$(sed -n 's/^updated_wall_ms //p' "$STATE_DIR/n1/lease")
	term_at=$(head -n 1 "$BATS_TEST_TMPDIR/term.ms")
	echo "# SIGTERM $((term_at - lost_at)) ms after the lost state" >&3
	[ $((term_at - lost_at)) -le 500 ]
	# one SIGTERM, and the SIGKILL ended the child
	[ "$(wc -l <"$BATS_TEST_TMPDIR/term.ms")" -eq 1 ]
	run -0 grep -x 'grant-ended key=t/c/a generation=1 reason=lapsed code=10' "$BATS_TEST_TMPDIR/r.out" || { cat "$BATS_TEST_TMPDIR/r.out" >&3; false; }
	run -0 grep -x "exited key=t/c/a status=137" "$BATS_TEST_TMPDIR/r.out"
	refute_sanitizer_reports
}

@test "owner-run: a store outage (the lease runs out) stops CMD at the validity deadline" {
	start_node n1 n1
	start_bg r owner-run --node-id n1 t/c/a -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$BATS_TEST_TMPDIR/child.pid"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/child.pid"
	child=$(cat "$BATS_TEST_TMPDIR/child.pid")
	echo 'put nodes/n1 fail' >"$FAULT_FILE"
	run wait_exit 10 r
	[ "$output" = 21 ]
	run -0 refute_alive "$child"
	run -0 grep -Ex 'grant-ended key=t/c/a generation=1 reason=not-valid code=14' "$BATS_TEST_TMPDIR/r.out"
	# SIGTERM was enough
	run -0 grep -x "exited key=t/c/a status=143" "$BATS_TEST_TMPDIR/r.out"
	refute_sanitizer_reports
}

@test "owner-run: with no renewal and no state written (lease-write stopped), CMD is stopped at the validity deadline (boot-clock timer)" {
	start_node n1 n1
	start_bg r owner-run --node-id n1 --kill-after=200 t/c/a -- \
		sh -c "$STUCK" sh "$BATS_TEST_TMPDIR/child.pid" "$BATS_TEST_TMPDIR/term.ms"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/child.pid"
	kill -STOP "$(bg_pid n1)"
	until_wall=$(sed -n 's/^valid_until_wall_ms //p' "$STATE_DIR/n1/lease")
	run wait_exit 10 r
	[ "$output" = 21 ]
	kill -CONT "$(bg_pid n1)"
	run -0 grep -x 'grant-ended key=t/c/a generation=1 reason=not-valid code=14' "$BATS_TEST_TMPDIR/r.out"
	term_at=$(head -n 1 "$BATS_TEST_TMPDIR/term.ms")
	echo "# SIGTERM $((term_at - until_wall)) ms after the validity deadline" >&3
	[ "$term_at" -ge "$until_wall" ]
	[ $((term_at - until_wall)) -le 300 ]
	refute_sanitizer_reports
}

@test "owner-run: a wall-clock step stops CMD (the hold lapsed)" {
	start_node n1 n1 shim
	start_bg r shimmed n1 owner-run --node-id n1 t/c/a -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$BATS_TEST_TMPDIR/child.pid"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/child.pid"
	child=$(cat "$BATS_TEST_TMPDIR/child.pid")
	shim_set n1 realtime_ms=5000
	run wait_exit 10 r
	[ "$output" = 21 ]
	run -0 refute_alive "$child"
	run -0 grep -E '^grant-ended key=t/c/a generation=1 reason=(lapsed|not-valid) code=(1|14)$' "$BATS_TEST_TMPDIR/r.out"
	refute_sanitizer_reports
}

@test "owner-run: SIGTERM to owner-run is forwarded to CMD, then KEY is released" {
	start_node n1 n1
	start_bg r owner-run --node-id n1 t/c/a -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$BATS_TEST_TMPDIR/child.pid"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/child.pid"
	child=$(cat "$BATS_TEST_TMPDIR/child.pid")
	kill -TERM "$(bg_pid r)"
	run wait_exit 10 r
	[ "$output" = 143 ]
	run -0 refute_alive "$child"
	run -0 grep -x "released key=t/c/a generation=1" "$BATS_TEST_TMPDIR/r.out"
	run -0 owner-show t/c/a
	refute_sanitizer_reports
}
