#!/usr/bin/env bats
# Every answer that reports a grant is about the moment it is given
# (issue 13; docs/lease.md "Clocks", docs/ownership.md): the lease state
# file names its clock and boot and a reader refuses one it cannot
# compare; the clean stop is invalid at once even with a renewal in
# flight; owner-acquire judges the lease again after its record write's
# reply; the step threshold is validated. Runs on the fs store and on a
# real S3 server (the state-file cases are local: fs only).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
load helpers/common
load helpers/clock

setup() { keep_setup; }
teardown() { keep_teardown; }

local_only() { [ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "local state only: run on fs"; }

# state FILE PHASE CLOCK BOOT VALID_UNTIL : write a lease state file for n1
state() {
	mkdir -p "$STATE_DIR/n1"
	cat >"$STATE_DIR/n1/lease" <<EOF
keep-lease-state 2
node n1
instance 5f0c2a9e8b7d41c3a6e2f90d1b4c7e58
pid 4242
clock $2
boot_id $3
phase $1
reason -
version v1
written_at_ms 1767225600123
valid_until_ms $4
valid_until_wall_ms 1767225608123
live_since_ms 1
lapses 0
updated_wall_ms 1767225600200
EOF
}

@test "lease state: format 2 names its clock (boottime) and boot; a file whose clock cannot be compared is never valid, with the reason" {
	local_only
	boot=$(cat /proc/sys/kernel/random/boot_id)
	start_node n1 n1
	run -0 head -n 1 "$STATE_DIR/n1/lease"
	[ "$output" = "keep-lease-state 2" ]
	[ "$(state_field n1 clock)" = boottime ]
	[ "$(state_field n1 boot_id)" = "$boot" ]
	# valid_until_ms is on CLOCK_BOOTTIME, the clock of /proc/uptime: one
	# clock, read before and after the file. The lease is live, so its
	# validity runs past up0; it was counted from a send before up1, so it
	# ends at most ttl - safety (2400) after up1. Tolerance: 10 ms, the
	# resolution of /proc/uptime (it truncates to hundredths of a second).
	up0=$(awk '{ printf "%d", $1 * 1000 }' /proc/uptime)
	v=$(state_field n1 valid_until_ms)
	up1=$(awk '{ printf "%d", $1 * 1000 }' /proc/uptime)
	[ "$v" -gt "$up0" ]
	[ "$v" -le $((up1 + 2400 + 10)) ]
	run -0 lease-status --node-id n1
	kill -TERM "$(bg_pid n1)"
	wait_exit 15 n1
	far=$((up + 86400000))
	mkdir -p "$STATE_DIR/h"
	printf '%s\n' "keep-hold 1" "key t/c/a" "instance 5f0c2a9e8b7d41c3a6e2f90d1b4c7e58" \
		"generation 1" "version v1" "epoch 0" "acquired_at_ms 1" >"$STATE_DIR/h/hold"
	mkdir -p "$STATE_DIR/n1/holds"
	cp "$STATE_DIR/h/hold" "$STATE_DIR/n1/holds/$(printf 't/c/a' | sha256sum | cut -d' ' -f1)"
	# the same file, comparable: valid, the hold may act
	state live boottime "$boot" "$far"
	run -0 lease-status --node-id n1
	run -0 owner-check --node-id n1 t/c/a 1
	# an older lease-write's file (format 1, CLOCK_MONOTONIC): refused
	cat >"$STATE_DIR/n1/lease" <<EOF
keep-lease-state 1
node n1
instance 5f0c2a9e8b7d41c3a6e2f90d1b4c7e58
pid 4242
boot_id $boot
phase live
reason -
version v1
written_at_ms 1767225600123
valid_until_mono_ms $far
valid_until_wall_ms 1767225608123
live_since_mono_ms 1
lapses 0
updated_wall_ms 1767225600200
EOF
	run -15 --separate-stderr lease-status --node-id n1
	[[ "$output" == "lease node=n1 phase=live "*" valid_ms=0 "* ]]
	[[ "$stderr" == *"not valid here: its deadlines are on CLOCK_MONOTONIC (keep-lease-state 1, written by an older lease-write): restart lease-write"* ]]
	run -15 --separate-stderr owner-check --node-id n1 t/c/a 1
	[ "$output" = "check key=t/c/a generation=1 ok=no reason=not-valid" ]
	[[ "$stderr" == *"CLOCK_MONOTONIC"* ]]
	run -15 --separate-stderr owner-acquire --node-id n1 t/c/b
	[ "$output" = "refused key=t/c/b reason=lease-not-valid" ]
	# another boot's file, or another clock: refused
	state live boottime 00000000-0000-0000-0000-000000000000 "$far"
	run -15 --separate-stderr lease-status --node-id n1
	[[ "$stderr" == *"it was written on another boot"* ]]
	run -15 --separate-stderr owner-check --node-id n1 t/c/a 1
	state live monotonic "$boot" "$far"
	run -15 --separate-stderr lease-status --node-id n1
	[[ "$stderr" == *"CLOCK_MONOTONIC"* ]]
	state live tai "$boot" "$far"
	run -15 --separate-stderr lease-status --node-id n1
	[[ "$stderr" == *"a clock this version does not read"* ]]
	refute_sanitizer_reports
}

@test "clean stop: the lease is invalid at once, even while a renewal is in flight" {
	export KEEP_FAULT_LOG=1
	start_node n1 n1
	# the next renewal is held in the store layer until the test lets it
	# go (the fault file's hold: in flight for as long as the test needs,
	# whatever the machine's load); SIGTERM meanwhile
	echo "put nodes/ hold $BATS_TEST_TMPDIR/go count=1" >"$FAULT_FILE"
	wait_for 5 grep -q 'keep-fault: put nodes/n1 hold' "$BATS_TEST_TMPDIR/n1.err"
	kill -TERM "$(bg_pid n1)"
	# not valid while that renewal is still in flight: lease-write waits
	# for its reply before the release, so it is still running
	wait_for 2 sh -c 'lease-status --node-id n1; [ $? = 15 ]'
	bg_running n1
	run -15 lease-status --node-id n1
	[[ "$output" == "lease node=n1 phase=stopping "* ]]
	: >"$BATS_TEST_TMPDIR/go"
	run wait_exit 15 n1
	[ "$output" = 0 ]
	grep -q '^released ' "$BATS_TEST_TMPDIR/n1.out"
	run -0 keep-store get nodes/n1
	assert_line --index 1 --regexp '^released [0-9a-f]{32}$'
	refute_sanitizer_reports
}

# lease_lapsed NODE: lease-status says the lease is not valid
lease_lapsed() {
	local rc=0
	lease-status --node-id "$1" >/dev/null 2>&1 || rc=$?
	[ "$rc" -ne 0 ]
}

@test "owner-acquire: a lease that runs out while the record write is in flight gets no hold; the record is released in the background" {
	export KEEP_FAULT_LOG=1
	start_node n1 n1
	# the record write is held in the store layer (checked valid before
	# it, as the acquisition must); only then the lease stops renewing,
	# and the write goes once the lease has run out: its reply comes
	# after the validity (no window to hit: the order is the test's)
	echo "put owners/ hold $BATS_TEST_TMPDIR/go count=1" >"$FAULT_FILE"
	start_bg acq owner-acquire --node-id n1 t/c/a
	wait_for 10 grep -q 'keep-fault: put owners/t/c/a hold' "$BATS_TEST_TMPDIR/acq.err"
	echo "put nodes/ fail" >"$FAULT_FILE"
	wait_for 10 lease_lapsed n1
	: >"$BATS_TEST_TMPDIR/go"
	run wait_exit 10 acq
	[ "$output" = 14 ]
	run -0 cat "$BATS_TEST_TMPDIR/acq.out"
	[ "$output" = "refused key=t/c/a reason=lease-lapsed" ]
	run -0 grep -c 'owners/t/c/a was written at generation 1, but the node lease was not valid when the reply came: not held; its release is pending' "$BATS_TEST_TMPDIR/acq.err"
	[ "$output" = 1 ]
	# the record names n1, but no hold: nothing may act on it
	run -0 owner-show t/c/a
	assert_output --partial "state=held node=n1 "
	[ -z "$(ls "$STATE_DIR/n1/holds")" ]
	run -1 owner-check --node-id n1 t/c/a 1
	set -- "$STATE_DIR"/n1/pending/*.1.*.release
	[ $# -eq 1 ]
	[ -f "$1" ]
	# the store back: the lease recovers, the resolver frees the record
	: >"$FAULT_FILE"
	wait_line 10 n1 '^recovered '
	run -0 --separate-stderr owner-release --node-id n1 --pending
	assert_output --partial "released key=t/c/a generation=1"
	run -0 owner-show t/c/a
	assert_output --partial "state=nobody"
	refute_sanitizer_reports
}

@test "clock_step_ms: the config key and --clock-step-ms are validated (0 = max_skew / 2, at least 20; at most grace + safety - max_skew)" {
	run -0 lease-write --node-id n1 --check
	for v in 0 20 1000 1800; do
		run -0 lease-write --node-id n1 --check --clock-step-ms "$v"
		[ "$output" = "configuration OK" ]
	done
	for v in 19 1801 -5 +5 abc 1.5 ''; do
		run -100 --separate-stderr lease-write --node-id n1 --check --clock-step-ms "$v"
	done
	run -100 --separate-stderr lease-write --node-id n1 --check --clock-step-ms 1801
	[[ "$stderr" == *"clock_step_ms (1801) must not exceed grace_ms + safety_ms - max_skew_ms (1800)"* ]]
	cp "$KEEP_CONFIG" "$BATS_TEST_TMPDIR/k.yaml"
	sed -i 's/^  heartbeat_period_ms: .*/&\n  clock_step_ms: 10/' "$BATS_TEST_TMPDIR/k.yaml"
	run -100 --separate-stderr lease-write -c "$BATS_TEST_TMPDIR/k.yaml" --node-id n1 --check
	[[ "$stderr" == *"clock_step_ms (10) must be 0 (the default) or 20..86400000"* ]]
	sed -i 's/^  clock_step_ms: .*/  clock_step_ms: 500/' "$BATS_TEST_TMPDIR/k.yaml"
	run -0 lease-write -c "$BATS_TEST_TMPDIR/k.yaml" --node-id n1 --check
	sed -i 's/^  clock_step_ms: .*/  clock_step_ms: "500"/' "$BATS_TEST_TMPDIR/k.yaml"
	run -100 --separate-stderr lease-write -c "$BATS_TEST_TMPDIR/k.yaml" --node-id n1 --check
	# the default (its 20 ms floor) must fit too
	sed -i 's/^  clock_step_ms: .*/  clock_step_ms: 0/; s/^  max_skew_ms: .*/  max_skew_ms: 0/;
		s/^  grace_ms: .*/  grace_ms: 5/; s/^  safety_ms: .*/  safety_ms: 5/' "$BATS_TEST_TMPDIR/k.yaml"
	run -100 --separate-stderr lease-write -c "$BATS_TEST_TMPDIR/k.yaml" --node-id n1 --check
	[[ "$stderr" == *"clock_step_ms (20, the default) must not exceed grace_ms + safety_ms - max_skew_ms (10)"* ]]
}
