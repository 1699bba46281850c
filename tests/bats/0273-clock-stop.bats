#!/usr/bin/env bats
# A holder's lease-write stopped longer than its validity (SIGSTOP; as a
# debugger, swapping or a stalled VM vCPU would), with a renewal in flight,
# then continued (issue 13; docs/lease.md "Clocks"): no grant passes on the
# stopped node after the deadline of its last acknowledged write — judged by
# each reader on its own reading of the boot clock, whatever lease-write
# does — and the late reply of that renewal makes nothing valid again for
# the holds from before. Runs on the fs store and on a real S3 server.
# Timings (ms): ttl 6000, grace 3000, safety 600, skew 300, period 1000:
# the holder is stopped with up to 4.4 s of validity left, room for the
# poll to start and check before the deadline on a loaded machine (with
# ttl 3000, 1.4 s at most, and the poll started after the deadline).

load helpers/common
load helpers/clock

setup() { keep_setup 6000 3000 600 300 1000; }
teardown() { keep_teardown; }

@test "SIGSTOP longer than validity with a renewal in flight, then SIGCONT: no grant passes after the deadline; the late reply is a lapse" {
	export KEEP_FAULT_LOG=1
	start_node n1 n1
	run -0 --separate-stderr owner-acquire --node-id n1 t/c/a
	[[ "$output" == "acquired key=t/c/a generation=1 "* ]]
	# the next renewal is held 600 ms in the store layer (in flight, its
	# send time taken); the process is stopped in the middle of it
	echo "put nodes/ delay 600 count=1" >"$FAULT_FILE"
	wait_for 5 grep -q 'keep-fault: put nodes/n1 delay' "$BATS_TEST_TMPDIR/n1.err"
	kill -STOP "$(bg_pid n1)"
	# the deadline on the clock the readers judge with (the boot clock);
	# every check below is timed on that clock too (columns 5 and 6)
	deadline=$(state_field n1 valid_until_ms)
	[ "$deadline" -gt "$(uptime_ms)" ]
	start_bg poll poll_grants "$BATS_TEST_TMPDIR/grants" 10000 n1 1 n2 1
	# stopped until 1 s past the deadline: the renewal's reply comes late
	wait_for 10 uptime_at_least $((deadline + 1000))
	kill -CONT "$(bg_pid n1)"
	wait_exit 30 poll
	g="$BATS_TEST_TMPDIR/grants"
	late=$(awk -v d="$deadline" '$3 ~ /^n1/ && $4 == 0 && $5 >= d' "$g" | wc -l)
	early=$(awk -v d="$deadline" '$3 ~ /^n1/ && $4 == 0 && $6 < d' "$g" | wc -l)
	echo "# n1: $(rounds "$g" n1) checks, $early passed before the deadline, $late after" >&3
	# the grant was live when the process stopped: not vacuous (tolerance:
	# 3 rounds, 60 ms of the poll on an idle machine, room for a loaded one)
	[ "$early" -ge 3 ]
	[ "$late" -eq 0 ]
	[ "$(awk '$3 ~ /^n1/' "$g" | tail -n 1 | cut -d' ' -f5)" -ge $((deadline + 3000)) ]
	# lease-write, continued: the renewal's reply came after the deadline:
	# a lapse (every hold from before ended), then valid again
	wait_line 10 n1 '^ran-out .*lapses=1'
	wait_line 10 n1 '^recovered '
	run -1 owner-check --node-id n1 t/c/a 1
	[ "$output" = "check key=t/c/a generation=1 ok=no reason=lapsed" ]
	run -0 lease-status --node-id n1
	refute_sanitizer_reports
}
