#!/usr/bin/env bats
# A short soak with host events (bench/soak.sh with SOAK_EVENTS;
# docs/testing.md "Soak"): 3 keep-agents and their workers on the fs store,
# and every ~10 s one of: SIGSTOP of a node's agent tree for longer than
# the validity, a suspend (every process of the node stopped, its
# CLOCK_MONOTONIC set back by the time it slept: tests/preload/clockshim.c),
# a wall-clock step and back, kill -9 of an agent alone, kill -9 of a whole
# node. The audit must find 0 violations: no overlapping holds, no
# generation twice, every acknowledged write listed, no orphan, no check
# passing for a hold from before a host event that ended it, and the shim
# in every keep process of a node (never in the worker's bash, which dates
# the log). About 2.5 minutes; fs pass only (the RGW runs with host events
# are recorded in docs/testing.md).

load helpers/common

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "the host-events soak runs on the fs pass"
}

@test "host-events soak: 140 s of stops, suspends, wall-clock steps and kills audits 0 violations" {
	dir="$BATS_TEST_TMPDIR/soak"
	run --separate-stderr env SOAK_DIR="$dir" SOAK_STORE=fs SOAK_SECONDS=140 \
		SOAK_EVENT_EVERY=10 SOAK_EVENTS=stop,suspend,step,kill-agent,kill-node \
		SOAK_STOP_MS=3000-5000 SOAK_SUSPEND_MS=2500-5000 SOAK_STEP_HOLD_MS=1500-4000 \
		SOAK_ACTORS=60 SOAK_HOLDS=8 bash "$BATS_TEST_DIRNAME/../../bench/soak.sh"
	[ "$status" -eq 0 ] || {
		echo "soak exit $status; its first violations, its events and its summary:"
		grep VIOLATION <<<"$output$stderr" | head -n 20
		cat "$dir/log/events"
		grep '^soak' <<<"$output"
		false
	}
	summary=$(grep '^soak seconds=' <<<"$output")
	echo "$summary"
	[[ "$summary" == *" violations=0" ]]
	[[ "$summary" == *" missing_writes=0 "* ]]
	[[ "$summary" == *" stale_checks=0 "* ]]
	[[ "$summary" == *" shim_missing=0 "* ]]
	field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$summary"; }
	[ "$(field acquisitions)" -gt 200 ]
	[ "$(field writes)" -gt 400 ]
	# every kind of event happened (each round of events holds each kind once)
	for k in stops suspends steps kill_agent kill_node; do
		[ "$(field "$k")" -ge 1 ] || { echo "no $k"; false; }
	done
	# they bit: holds were lost, lease-write saw the steps, and the shim was
	# found in the node's keep processes
	[ "$(field lost_holds)" -gt 0 ]
	[ "$(field clock_steps_seen)" -ge 1 ]
	[ "$(field shim_checked)" -ge 10 ]
	for p in keep-agent lease-write node-watch lease-fence owner-release; do
		run -0 awk -v p="$p" '$3 == p && $5 == "yes"' "$dir/log/shim"
		[ -n "$output" ] || { echo "$p never found with the shim"; false; }
	done
	run -0 awk '$3 == "worker-bash"' "$dir/log/shim"
	[ -n "$output" ]
	# the per-minute CSV: its columns add up to the summary
	[ "$(head -n 1 "$dir/soak.csv")" = "minute,seconds,acquisitions,releases,writes,kills,faults,lost_holds,kill_agent,kill_node,stops,suspends,steps" ]
	[ "$(wc -l <"$dir/soak.csv")" -ge 3 ]
	sum() { awk -F, -v c="$1" 'NR > 1 { s += $c } END { print s + 0 }' "$dir/soak.csv"; }
	[ "$(sum 5)" = "$(field writes)" ]
	[ "$(sum 6)" = "$(field kills)" ]
	[ "$(sum 9)" = "$(field kill_agent)" ]
	[ "$(sum 10)" = "$(field kill_node)" ]
	[ "$(sum 11)" = "$(field stops)" ]
	[ "$(sum 12)" = "$(field suspends)" ]
	[ "$(sum 13)" = "$(field steps)" ]
	# no sanitizer report from any keep process
	run -1 grep -rlE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$dir/log"
	run -0 awk '($1 == "acqfail" || $1 == "putfail") && $6 >= 90 && $6 <= 100' "$dir/app.log"
	[ -z "$output" ]
}
