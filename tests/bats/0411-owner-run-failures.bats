#!/usr/bin/env bats
# Every exit of owner-run after an acquisition releases what it acquired,
# whatever failed (issue 24 item 3; docs/ownership.md "owner-run"): each
# failure is injected with tests/preload/sysfail.c into n1's owner-run
# (inotify_init1, inotify_add_watch, timerfd_create, signalfd, fork before
# CMD starts; poll and timerfd_settime while CMD runs), while n2's
# `owner-run --wait` waits for the key. The key is released (or parked
# pending while the store does not answer, then released by n1's resolver)
# and n2 runs the job within one heartbeat period of its poll. Runs on the
# fs store and on a real S3 server (KEEP_TEST_STORE). Timings (ms): ttl
# 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/owner

setup() { keep_setup; }
teardown() { keep_teardown; }

# the waiter's bound after the key is free: its next poll comes within one
# heartbeat period (1000 ms), and the attempt itself (a record read and a
# node read, a record write, the hold) takes up to ~700 ms more on this
# loaded two-core machine under the sanitizers
POLL_BOUND_MS=1700

start_agents() {
	local n
	for n in "$@"; do start_bg "a$n" keep-agent --node-id "$n"; done
	for n in "$@"; do wait_line 30 "a$n" '^live '; done
}

# waiter NAME KEY : n2's owner-run --wait for KEY, its CMD recording that it
# ran; returns once it waits on n1
waiter() {
	start_bg "$1" owner-run --node-id n2 --wait=30s "$2" -- \
		sh -c 'echo "ran $KEEP_OWNER_GENERATION" >"$0"' "$BATS_TEST_TMPDIR/$1.ran"
	wait_line 10 "$1" "^waiting key=$2 node=n1 free_at_ms=-\$"
}

# after_release NAME WAITER KEY : NAME (n1's failed owner-run) released KEY
# and exited 111; WAITER acquired it within one poll of its wait and ran
# its CMD
after_release() {
	local rel acq rc
	rel=$(line_at "$1" "^released key=$3 generation=1\$" 20) || { cat "$BATS_TEST_TMPDIR/$1".*; return 1; }
	acq=$(line_at "$2" "^acquired key=$3 generation=2 " 20) || { cat "$BATS_TEST_TMPDIR/$2".*; return 1; }
	echo "# $3: n2 acquired $((acq - rel)) ms after n1's release" >&3
	[ $((acq - rel)) -le "$POLL_BOUND_MS" ] || { echo "acquired $((acq - rel)) ms after the release" >&2; return 1; }
	rc=$(wait_exit 10 "$1") || return 1
	[ "$rc" = 111 ] || { echo "n1's owner-run exit $rc" >&2; cat "$BATS_TEST_TMPDIR/$1".*; return 1; }
	rc=$(wait_exit 10 "$2") || return 1
	[ "$rc" = 0 ] || { echo "n2's owner-run exit $rc" >&2; return 1; }
	grep -qx "ran 2" "$BATS_TEST_TMPDIR/$2.ran"
}

@test "a failure after the acquisition, before CMD starts (inotify, timer, signalfd, fork): CMD never runs, the key is released, the waiting node runs the job within a poll" {
	start_agents n1 n2
	nth=0
	for rule in inotify_init1:EMFILE inotify_add_watch:ENOSPC timerfd_create:EMFILE \
		signalfd:ENOMEM fork:EAGAIN; do
		nth=$((nth + 1))
		key=t/c/f$nth
		# n1 holds the key (the waiter waits on it); its owner-run takes the
		# same grant (new=no), then fails
		run -0 owner-acquire --node-id n1 "$key"
		waiter w$nth "$key"
		start_bg r$nth sysf "$rule:prog=owner-run" owner-run --node-id n1 "$key" -- \
			touch "$BATS_TEST_TMPDIR/r$nth.ran"
		run -0 after_release r$nth w$nth "$key"
		op=${rule%%:*}
		run -0 grep -E "^owner-run: error: $op( '[^']*')?: .*: stopping the job and releasing '$key'\$" "$BATS_TEST_TMPDIR/r$nth.err"
		run -0 grep -qx "sysfail: owner-run $op ${rule#*:}" "$BATS_TEST_TMPDIR/sysfail.log"
		[ ! -e "$BATS_TEST_TMPDIR/r$nth.ran" ]
		run -1 grep -q '^exited ' "$BATS_TEST_TMPDIR/r$nth.out"
	done
	refute_sanitizer_reports
}

@test "a failure while CMD runs (poll, timerfd_settime): the job is stopped, the key released, the waiting node runs the job within a poll" {
	start_agents n1 n2
	nth=0
	for rule in poll:EINVAL timerfd_settime:EINVAL; do
		nth=$((nth + 1))
		key=t/c/c$nth
		# the failure comes once the trigger file exists (count=1: the
		# release's own calls go through)
		start_bg r$nth sysf "$rule:prog=owner-run:count=1:while=$BATS_TEST_TMPDIR/trigger$nth" \
			owner-run --node-id n1 "$key" -- sh -c 'echo $$ >"$0"; exec sleep 600' \
			"$BATS_TEST_TMPDIR/r$nth.cmd"
		wait_for 10 test -s "$BATS_TEST_TMPDIR/r$nth.cmd"
		waiter w$nth "$key"
		: >"$BATS_TEST_TMPDIR/trigger$nth"
		run -0 after_release r$nth w$nth "$key"
		run -0 refute_alive "$(cat "$BATS_TEST_TMPDIR/r$nth.cmd")"
		run -0 grep -x "exited key=$key status=143" "$BATS_TEST_TMPDIR/r$nth.out"
		run -0 grep -qx "sysfail: owner-run ${rule%%:*} EINVAL" "$BATS_TEST_TMPDIR/sysfail.log"
	done
	refute_sanitizer_reports
}

@test "a failure after the acquisition while the store does not answer: the release is parked pending, then n1's resolver releases it once the store answers, and the waiting node runs the job" {
	start_agents n1 n2
	run -0 owner-acquire --node-id n1 t/c/p
	waiter w t/c/p
	# writes of the record fail (not sent) until the rule is removed
	echo 'put owners/t/c/p fail' >"$FAULT_FILE"
	start_bg r sysf 'inotify_init1:EMFILE:prog=owner-run' owner-run --node-id n1 t/c/p -- true
	run wait_exit 20 r
	[ "$output" = 111 ]
	run -0 grep -E '^pending key=t/c/p generation=1 version=' "$BATS_TEST_TMPDIR/r.out"
	# still n1's: the waiter waits
	run -0 owner-show --node-id n1 t/c/p
	[[ "$output" == *" state=held node=n1 "* ]]
	run -0 bg_running w
	: >"$FAULT_FILE"
	run wait_exit 30 w
	[ "$output" = 0 ]
	run -0 grep -qx "ran 2" "$BATS_TEST_TMPDIR/w.ran"
	refute_sanitizer_reports
}
