#!/usr/bin/env bats
# bench/scale.sh does not rot (issue 28, item 2; docs/performance.md
# "Scale"): a tiny run (3 nodes, one kill, the tests' short timings) on
# this pass's store, whose line must parse and stay within the protocol's
# bounds (structure and bounds only, never a timed assertion: the
# measurements are the bench's, recorded by hand); an interrupted run leaves
# no process and no object behind; ring mode (K successors, a listing
# every M periods) runs too.
# The bench runs the build under test (KEEP_BINDIR: the sanitizer build here).

load helpers/common

setup() {
	keep_setup
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	BDIR="$BATS_TEST_TMPDIR/bench"
}
teardown() { keep_teardown; }

# bench ENV... : env for bench/scale.sh at 3 nodes, one kill, short timings
bench_env() {
	echo BENCH_STORE="${KEEP_TEST_STORE:-fs}" BENCH_NODES=3 BENCH_KILLS=1 BENCH_WINDOW=5 \
		BENCH_DEFAULT_TIMINGS=0 BENCH_KEEP=1 BENCH_DIR="$BDIR"
}
# f NAME : NAME= of the scale line in $line
f() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $line"; }
# le A B : A <= B (decimals)
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
# left_in DIR : processes whose command line names DIR (none expected)
left_in() { pgrep -af -- "$1/" || true; }
# prefix_of ERRFILE : the run's store URL, from its "# N=3 store URL" line
prefix_of() { sed -n 's/^# N=3 store \([^ ,]*\),.*/\1/p' "$1"; }

@test "bench/scale.sh: a run of 3 nodes prints one scale line within the protocol's bounds, and leaves nothing" {
	# shellcheck disable=SC2046 # the words of bench_env
	run -0 --separate-stderr env $(bench_env) bash "$ROOT/bench/scale.sh"
	err=$stderr
	[ "$(grep -c '^scale ' <<<"$output")" -eq 1 ]
	line=$(grep '^scale ' <<<"$output")
	D='[0-9]+(\.[0-9]+)?'
	re="^scale store=(fs|s3) mode=full nodes=3 requests_per_node_period=$D put=$D get=$D list=$D"
	re+=" cpu_pct_per_node=$D rss_kib_per_node=[0-9]+ fence_median_ms=[0-9]+ fence_p99_ms=[0-9]+"
	re+=" fence_attempts_per_death=$D kills=1 fenced=1 over_floor_min_ms=-?[0-9]+ window_s=$D"
	re+=" expected_per_node_period=2 lease_ran_out=[0-9]+ window_ran_out=[0-9]+\$"
	[[ $line =~ $re ]]
	[ "$(f store)" = "${KEEP_TEST_STORE:-fs}" ]
	# each node wrote its lease and listed nodes/ in the window: once a
	# write period (1 s here) each; at most twice, with the window's edges
	# (5 periods: a counter read just before or after a request is 0.2 off)
	# and a retry (docs/lease.md: at most two writes a second)
	le 0.1 "$(f put)"
	le "$(f put)" 2
	le 0.1 "$(f list)"
	le "$(f list)" 2
	# a pass reads at most each listed body (3 nodes)
	le "$(f get)" "$(awk -v l="$(f list)" 'BEGIN { print 3 * l }')"
	# the total holds the three kinds (3 decimals each)
	le "$(awk -v p="$(f put)" -v g="$(f get)" -v l="$(f list)" 'BEGIN { print p + g + l - 0.003 }')" "$(f requests_per_node_period)"
	le 1 "$(f rss_kib_per_node)"
	le "$(f fence_median_ms)" "$(f fence_p99_ms)"
	# a fence was sent by at least one of the 2 peers (in full mode both race)
	le 1 "$(f fence_attempts_per_death)"
	# no fence before the last write's written_at + ttl + grace, on the
	# fencer's own clock (ADR 0020 §2): a protocol bound, not a timing
	le 0 "$(f over_floor_min_ms)"
	# the kill's line on stderr names the same fence
	run -0 grep -E '^# N=3 kill 1: n1 killed at [0-9]+, fenced by n[23] at [0-9]+ ' <<<"$err"
	# nothing of the run is left: no process, no object under its prefix
	[ -z "$(left_in "$BDIR")" ]
	if [ "${KEEP_TEST_STORE:-fs}" = s3 ]; then
		echo "$err" >"$BATS_TEST_TMPDIR/bench.err"
		url=$(prefix_of "$BATS_TEST_TMPDIR/bench.err")
		[[ $url == s3://* ]]
		run -0 keep-store --store "$url" list
		[ -z "$output" ]
	fi
}

@test "bench/scale.sh: SIGTERM mid-run (the window) kills every process it started and exits 130" {
	# shellcheck disable=SC2046 # the words of bench_env
	start_bg sb env $(bench_env | sed 's/BENCH_WINDOW=5/BENCH_WINDOW=600/') bash "$ROOT/bench/scale.sh"
	# the nodes are live and the 600 s window has started (its first
	# counter reads are taken after every node-watch listed 3 nodes)
	wait_for 60 grep -q '^live ' "$BDIR/scale-3/log/n3.lw.out"
	wait_for 60 grep -q '^keep_nodes_listed{[^}]*} 3$' "$BDIR/scale-3/n1.node-watch.prom"
	[ -n "$(left_in "$BDIR")" ]
	kill -TERM "$(bg_pid sb)"
	run wait_exit 30 sb
	[ "$output" = 130 ]
	[ -z "$(left_in "$BDIR")" ]
	if [ "${KEEP_TEST_STORE:-fs}" = s3 ]; then
		url=$(prefix_of "$BATS_TEST_TMPDIR/sb.err")
		[[ $url == s3://* ]]
		run -0 keep-store --store "$url" list
		[ -z "$output" ]
	fi
}

@test "bench/scale.sh: BENCH_MODE=ring runs the ring watch: K GETs a period, a listing every M; the dead node fenced by a watcher" {
	# K = 1, M = 2: each of the 3 nodes GETs one successor a period and
	# lists nodes/ every other period; the first node killed is watched by
	# its predecessor, which fences it (ADR 0020 §2 floor, as in full mode)
	# shellcheck disable=SC2046 # the words of bench_env
	run -0 --separate-stderr env $(bench_env) BENCH_MODE=ring BENCH_SUCCESSORS=1 BENCH_FULL_EVERY=2 bash "$ROOT/bench/scale.sh"
	err=$stderr
	[ "$(grep -c '^scale ' <<<"$output")" -eq 1 ]
	line=$(grep '^scale ' <<<"$output")
	D='[0-9]+(\.[0-9]+)?'
	re="^scale store=(fs|s3) mode=ring nodes=3 requests_per_node_period=$D put=$D get=$D list=$D"
	re+=" cpu_pct_per_node=$D rss_kib_per_node=[0-9]+ fence_median_ms=[0-9]+ fence_p99_ms=[0-9]+"
	re+=" fence_attempts_per_death=$D kills=1 fenced=1 over_floor_min_ms=-?[0-9]+ window_s=$D"
	re+=" expected_per_node_period=2.5 lease_ran_out=[0-9]+ window_ran_out=[0-9]+ successors=1 full_every=2\$"
	[[ $line =~ $re ]]
	run -0 grep -Fx '# ring: 1 successors a period, a listing every 2 periods' <<<"$output"
	# one PUT a write period; one listing every 2 periods: at most 1 with
	# the window's edges (5 periods: a counter read just before or after a
	# request is 0.2 off), less than full mode's 1 a period
	le 0.1 "$(f put)"
	le "$(f put)" 2
	le "$(f list)" 0.8
	# one GET of the successor a pass, plus the listing passes' reads of
	# bodies whose token did not move: at most 2 (K + 1 listed peer) on average
	le 0.1 "$(f get)"
	le "$(f get)" 2
	le 0 "$(f over_floor_min_ms)"
	run -0 grep -E '^# N=3 kill 1: n1 killed at [0-9]+, fenced by n[23] at [0-9]+ ' <<<"$err"
	[ -z "$(left_in "$BDIR")" ]
}

@test "bench/scale.sh: a bad mode and bad counts are refused (exit 100, one line), nothing started" {
	run -100 --separate-stderr env BENCH_MODE=star BENCH_DIR="$BDIR" bash "$ROOT/bench/scale.sh"
	[ "$stderr" = "bench: BENCH_MODE must be full or ring, not 'star'" ]
	[ -z "$output" ]
	run -100 --separate-stderr env BENCH_MODE=ring BENCH_SUCCESSORS=0 BENCH_DIR="$BDIR" bash "$ROOT/bench/scale.sh"
	[ "$stderr" = "bench: BENCH_SUCCESSORS wants a count > 0, not '0'" ]
	run -100 --separate-stderr env BENCH_NODES="10 x" BENCH_DIR="$BDIR" bash "$ROOT/bench/scale.sh"
	[ "$stderr" = "bench: BENCH_NODES wants node counts, not 'x'" ]
	run -100 --separate-stderr env BENCH_NODES=2 BENCH_KILLS=2 BENCH_DIR="$BDIR" bash "$ROOT/bench/scale.sh"
	[ "$stderr" = "bench: BENCH_KILLS=2 needs more than 2 nodes: N=2 leaves no fencer" ]
	[ -z "$(left_in "$BDIR")" ]
}
