#!/usr/bin/env bash
# bench/owner-run.sh — how fast owner-run stops its command when the grant
# ends (issue 15 item 2; docs/performance.md "owner-run").
#
#   bash bench/owner-run.sh                  20 trials, fs store
#   BENCH_TRIALS=50 BENCH_STORE=s3 bash bench/owner-run.sh
#
# One trial: a fresh node nI (lease-write, live) runs
#   owner-run KEY -- sh -c 'trap ... TERM; sleep & wait'
# whose TERM trap writes the wall ms and exits (its death); then an
# operator fences nI (lease-fence nI) at a random point of the heartbeat
# period. Two figures per trial:
#   lost_to_death   from the moment nI's lease-write first wrote the lost
#                   state (the grant ends on this node; seen by
#                   tests/tools/statewatch.c, its own inotify watcher) to
#                   the command's death: owner-run's own reaction
#   fence_to_death  from lease-fence's return (the fence landed in the
#                   store) to the command's death: adds the time lease-write
#                   takes to see the fence (its next renewal, <= one period)
# A fresh node id a trial: a fenced id restarts only after its start check.
set -u
. "$(dirname "$0")/perf-lib.sh"
TOOLS=${BIN%/bin}/tools
if [ ! -x "$BIN/owner-run" ] || [ ! -x "$TOOLS/statewatch" ]; then
	echo "bench: $BIN/owner-run missing (make rel, or set KEEP_BINDIR)" >&2
	exit 100
fi

TRIALS=${BENCH_TRIALS:-20}
new_cluster ownrun
echo "# $(machine)"
echo "# $TRIALS trials, period $PERIOD ms ($BIN)"
printf '%-6s %14s %15s\n' trial lost_to_death fence_to_death
: >"$CL/lost" && : >"$CL/fence"
for i in $(seq 1 "$TRIALS"); do
	n=r$i
	node_config "$n"
	lease-write -c "$CL/$n.yaml" >"$CL/log/$n.lw.out" 2>"$CL/log/$n.lw.err" &
	lw=$!
	PIDS+=("$lw")
	wait_live "$n" || exit 111
	rm -f "$CL/$n.term"
	# shellcheck disable=SC2016 # $1 is the child shell's
	owner-run -c "$CL/$n.yaml" "t/bench/k$i" -- sh -c \
		'trap "date +%s%3N >\"$1\"; exit 143" TERM; while :; do sleep 60 & wait; done' \
		sh "$CL/$n.term" >"$CL/log/$n.run.out" 2>"$CL/log/$n.run.err" &
	run=$!
	PIDS+=("$run")
	until grep -q '^acquired ' "$CL/log/$n.run.out" 2>/dev/null; do sleep 0.01; done
	"$TOOLS/statewatch" "$CL/state/$n" >"$CL/log/$n.phases" &
	sw=$!
	PIDS+=("$sw")
	sleep "0.$(printf '%03d' $((RANDOM % 1000)))" # anywhere in the period
	lease-fence -c "$CL/$n.yaml" "$n" >"$CL/log/$n.lf.out" 2>&1 || {
		echo "bench: lease-fence $n failed" >&2
		exit 111
	}
	fenced=$(now_ms)
	wait "$run"
	rc=$?
	wait "$lw"
	if [ "$rc" != 21 ] || [ ! -s "$CL/$n.term" ]; then
		echo "bench: trial $i: owner-run exit $rc, no TERM" >&2
		exit 111
	fi
	kill "$sw"
	wait "$sw" 2>/dev/null
	death=$(cat "$CL/$n.term")
	lost=$(awk '$2 == "lost" { print $1; exit }' "$CL/log/$n.phases")
	[ -n "$lost" ] || {
		echo "bench: trial $i: no lost state seen" >&2
		exit 111
	}
	echo $((death - lost)) >>"$CL/lost"
	echo $((death - fenced)) >>"$CL/fence"
	printf '%-6d %14d %15d\n' "$i" $((death - lost)) $((death - fenced))
done
echo "lost_to_death_ms  $(stats_of <"$CL/lost")"
echo "fence_to_death_ms $(stats_of <"$CL/fence")"
