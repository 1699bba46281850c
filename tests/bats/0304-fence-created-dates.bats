#!/usr/bin/env bats
# A fence the operator creates over a deleted nodes/<id> is dated on the
# operator's wall clock, never on the judging clock of the node its
# configuration names (issue 23 item 1; ADR 0020 §2 "its written_at set to
# the operator's clock"; docs/fencing.md "The operator's fence"). Dated on
# the judging clock (wall - a carried judging offset, 10 s in the issue,
# 20 s here), the fence freed the deleted node's records that much early:
# the other node acquired at once while the first still passed
# owner-check: two owners.
# Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 12000, grace 1500, safety 600, skew 300, period 1000:
# a node is valid 11400 ms after the send of its last renewal, and others
# take over 13500 ms after a written_at. The long ttl leaves a loaded
# machine (an ASan command there can take 2 s to start) time to delete and
# fence within n1's validity, so a fence dated early would show two
# grants; the judging offset (20 s) is above ttl + grace.

# shellcheck disable=SC2154 # output: set by bats' run
load helpers/common
load helpers/clock

setup() { keep_setup 12000 1500 600 300 1000; }
teardown() { keep_teardown; }

# first_pass FILE WHO / last_pass FILE WHO : the wall ms (before) of WHO's
# first passing check, (after) of its last; poll_grants' FILE, one clock
first_pass() { awk -v n="$2" '$3 == n && $4 == 0 { print $1; exit }' "$1"; }
last_pass() { awk -v n="$2" '$3 == n && $4 == 0 { t = $2 } END { print (t == "" ? 0 : t) }' "$1"; }

# offset_node ID : leave node ID's state file with a judging offset of about
# 20 s, its lease-write stopped and its clock right again: lease-write ran
# while the wall clock stepped forward 20 s (under tests/preload/clockshim.c,
# so the test's host clock is untouched), then stopped cleanly, and the
# shim is gone. A step that corrected a clock behind leaves the same file.
offset_node() {
	shim_set "$1"
	start_node "$1" "$1" shim
	shim_set "$1" realtime_ms=20000
	wait_line 10 "$1" '^recovered '
	kill -TERM "$(bg_pid "$1")"
	run -0 wait_exit 10 "$1"
	[ "$output" = 0 ]
}

@test "fence-created: over a deleted nodes/n1, under a carried judging offset, the fence is dated on the wall clock; n2 gets held until n1's validity ended, never two grants" {
	offset_node n3
	j=$(state_field n3 judge_offset_ms)
	[ "$j" -ge 19800 ]
	[ "$j" -le 20200 ]
	# n1 runs with a fault file of its own (its renewals fail on demand);
	# n2 as usual
	: >"$BATS_TEST_TMPDIR/n1.faults"
	shim_set n1
	start_bg n1 env KEEP_FAULT_FILE="$BATS_TEST_TMPDIR/n1.faults" lease-write -v --node-id n1
	wait_line 30 n1 '^live '
	start_node n2 n2
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=1 "* ]]
	# the grants, from before anything happens until well after n1 lapsed;
	# n2 asks for t/c/a all the while (held while n1's record is not free)
	start_bg grants poll_grants "$BATS_TEST_TMPDIR/grants" 28000 n1 1 n2 2
	start_bg n2acq acquire_until 45 n2 t/c/a
	# right after a renewal of n1: its renewals fail from now on (as in a
	# partition; it counts itself valid for ttl - safety, 11400 ms, on its
	# boot clock),
	# nodes/n1 is deleted by mistake, and an operator fences n1 with n3's
	# configuration (the state file with the judging offset)
	wait_renewal n1
	echo 'put nodes/n1 error 503' >"$BATS_TEST_TMPDIR/n1.faults"
	run -0 --separate-stderr keep-store del --force nodes/n1
	t0=$(now_ms)
	run -0 --separate-stderr lease-fence --create --node-id n3 n1
	assert_output --regexp '^fenced node=n1 instance=- written_at_ms=[0-9]+ free_at_ms=[0-9]+$'
	w=$(field written_at_ms)
	# dated on the operator's wall clock (the test's and lease-fence's
	# clock are one, CLOCK_REALTIME of this host): not 20 s before it
	[ "$w" -ge "$t0" ]
	[ "$(field free_at_ms)" -eq $((w + 13500)) ]
	run -0 keep-store get nodes/n1
	assert_line --index 1 "fenced -"
	assert_line --index 2 "written_at_ms $w"
	# n2 is held until the fence's free_at
	run wait_exit 50 n2acq
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR/n2acq.out" "$BATS_TEST_TMPDIR/n2acq.err" >&3; false; }
	run -0 cat "$BATS_TEST_TMPDIR/n2acq.out"
	[[ "$output" == "acquired key=t/c/a generation=2 "* ]]
	run wait_exit 40 grants
	[ "$output" = 0 ]
	g="$BATS_TEST_TMPDIR/grants"
	echo "# n1: $(passes "$g" n1) passes, the last at $(last_pass "$g" n1); n2: $(passes "$g" n2), the first at $(first_pass "$g" n2); fence written_at $w; overlaps $(overlaps "$g")" >&3
	[ "$(passes "$g" n1)" -ge 5 ]
	[ "$(passes "$g" n2)" -ge 5 ]
	[ "$(overlaps "$g")" -eq 0 ]
	# n1 was still valid after the fence was written (the case at stake: a
	# fence dated 20 s early freed t/c/a while n1 acted)
	[ "$(last_pass "$g" n1)" -gt "$w" ]
	# n2's first grant came after n1's last (one clock: the checks' wall
	# readings), and not before the fence's free_at
	[ "$(first_pass "$g" n2)" -gt "$(last_pass "$g" n1)" ]
	[ "$(first_pass "$g" n2)" -ge $((w + 13500)) ]
	# n1 never noticed the fence (its writes fail unsent): it ran out
	grep -q '^ran-out ' "$BATS_TEST_TMPDIR/n1.out"
	refute_sanitizer_reports
}

@test "fence-created: with no node id the operator's fence is dated on the host's wall clock" {
	offset_node n3
	t0=$(now_ms)
	run -0 --separate-stderr lease-fence --create n9
	assert_output --regexp '^fenced node=n9 instance=- written_at_ms=[0-9]+ free_at_ms=[0-9]+$'
	[ "$(field written_at_ms)" -ge "$t0" ]
	# and with n3's configuration too (its judging offset changes no date)
	t0=$(now_ms)
	run -0 --separate-stderr lease-fence --create --node-id n3 n8
	[ "$(field written_at_ms)" -ge "$t0" ]
	refute_sanitizer_reports
}
