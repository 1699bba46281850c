#!/usr/bin/env bash
# bench/scale.sh — N real nodes on one bucket (issue 28, item 2): store
# requests per node per period at steady state, CPU and RSS per node, and
# the time from a node's kill -9 to its fence in the bucket, with how many
# fence attempts one death draws. docs/performance.md, "Scale".
#
#   bash bench/scale.sh                          fs store, N = 10 50 100 200
#   BENCH_STORE=s3 bash bench/scale.sh           on $S3_ENDPOINT / $S3_BUCKET
#                                                (a prefix of its own per run,
#                                                emptied after it)
#   BENCH_NODES="3" BENCH_KILLS=1 BENCH_WINDOW=5 BENCH_DEFAULT_TIMINGS=0 \
#       bash bench/scale.sh                      what tests/bats/0915 runs
#
# Environment (besides bench/perf-lib.sh's BENCH_STORE, KEEP_BINDIR,
# BENCH_DIR, BENCH_KEEP): BENCH_MODE (full: every node lists nodes/ every
# period and every peer races to fence a dead node; ring: each node GETs
# its BENCH_SUCCESSORS (3) successors in the ring of live ids every period
# and lists nodes/ every BENCH_FULL_EVERY (10) periods, configuration
# `watch: {mode: ring, ...}`, docs/fencing.md "Ring mode"),
# BENCH_NODES (node counts, one run each: "10 50 100 200"), BENCH_WINDOW
# (seconds of the steady-state window: 30), BENCH_KILLS (kills a run: 5),
# BENCH_START_GAP_MS (ms between two nodes' starts: 100),
# BENCH_DEFAULT_TIMINGS (1 here: ADR 0020's defaults, ttl 10 s, grace 5 s,
# period 3 s; 0: the end-to-end tests' short timings, for a quick check).
#
# Each node runs what keep-agent runs for it (bench/perf-lib.sh start_node):
# lease-write, and node-watch --follow | lease-fence --stdin, release build.
# A run, for one N:
#   1. a new cluster (a directory, or a new prefix in the bucket), N nodes
#      started, until each lease-write printed `live` and each node-watch's
#      last listing found the N nodes (keep_nodes_listed), then one period;
#   2. the window, a whole number of write periods (BENCH_WINDOW rounded:
#      10 periods of 3 s), so that a node writing and listing once a period
#      counts the same whatever its phase (the nodes start together, their
#      phases cluster: a window of 10.03 periods counted 11 writes of most
#      nodes in one run and 10 in the next): every process's
#      keep_store_requests_total (their metrics files) and CPU time
#      (/proc/PID/stat) at its start and end, the ends read that many
#      periods after the starts; RSS (/proc/PID/status) at its end;
#   3. BENCH_KILLS kills, one after another: every process of one node
#      killed with SIGKILL (a crashed host loses all three), then the wait
#      for a peer's lease-fence to print `fenced node=ID`; the fence's time
#      is the fenced_at_ms the fencer wrote into nodes/ID (its wall clock
#      when it sent the fence, read back from the bucket) minus the kill's
#      time on the same wall clock (this host's: every node runs here). The
#      tolerance: the fence landed after fenced_at_ms by at most one PUT's
#      round trip (ms on loopback; never counted), and the kill's time is
#      read right before the kill (bash's EPOCHREALTIME, no fork). The next
#      kill waits until every attempt on this death is over: a fencer sends
#      its fence at most two store requests (each bounded by the attempt
#      timeout, (ttl - safety)/3) after its decision at free_at_ms, which
#      the landed fence passed already, so write_every + 2 x attempt
#      timeout + 1 s after the `fenced` line no attempt on it is left. The
#      attempts are the PUTs the lease-fence processes made in between
#      (keep_store_requests_total{op="put"}, any outcome: lease-fence writes
#      nothing else);
#   4. every node stopped (SIGTERM, SIGKILL after 10 s), the cluster's
#      objects deleted (s3), and a check that none of its processes is left.
# One line per run on stdout (per node per period: requests, put, get,
# list; fence times over the kills):
#   scale store=S mode=M nodes=N requests_per_node_period=X put=.. get=..
#   list=.. cpu_pct_per_node=.. rss_kib_per_node=.. fence_median_ms=..
#   fence_p99_ms=.. fence_attempts_per_death=.. kills=K fenced=F
#   over_floor_min_ms=.. window_s=.. expected_per_node_period=E
#   lease_ran_out=R window_ran_out=W [successors=K full_every=M (ring mode)]
# over_floor_min_ms: the least of fenced_at_ms - (written_at_ms + ttl +
# grace) over the kills, on the fencer's clock alone: never below 0 (no
# fence before the floor, ADR 0020 §2); expected_per_node_period: the
# protocol's 1 PUT + ceil(N/1000) LIST pages (+ a GET per changed body,
# none at steady state) in full mode, 1 PUT + K GETs + ceil(N/1000)/M LIST
# pages in ring mode; lease_ran_out: the `ran-out` lines of the nodes'
# lease-writes from their start to the window's end (the start included:
# run-outs while 3N processes start); window_ran_out: those in the window
# alone: not 0 means this host did not hold N nodes at steady state (writes
# later than the validity), and the line is no steady state (docs/performance.md, "Scale"). Lines starting with # say what it does (stderr:
# each kill). Exit: 0; 100 usage; 111 a run failed (a node not live, a
# fence that did not come, a process left); 130 interrupted (SIGINT or
# SIGTERM: every process it started is killed first, and the bucket
# prefixes it made are emptied).
set -u
MODE=${BENCH_MODE:-full}
NODES_LIST=${BENCH_NODES:-10 50 100 200}
START_GAP=${BENCH_START_GAP_MS:-100}
WINDOW=${BENCH_WINDOW:-30}
KILLS=${BENCH_KILLS:-5}
usage() {
	echo "bench: $*" >&2
	exit 100
}
SUCC=${BENCH_SUCCESSORS:-3}
FULL_EVERY=${BENCH_FULL_EVERY:-10}
case $MODE in
full) ;;
ring)
	[[ $SUCC =~ ^[1-9][0-9]*$ ]] || usage "BENCH_SUCCESSORS wants a count > 0, not '$SUCC'"
	[[ $FULL_EVERY =~ ^[1-9][0-9]*$ ]] || usage "BENCH_FULL_EVERY wants a count > 0, not '$FULL_EVERY'"
	# node_config (bench/perf-lib.sh) appends this to every node's file;
	# the configuration checks the ranges (docs/configuration.md)
	NODE_EXTRA_YAML="watch:
  mode: ring
  successors: $SUCC
  full_every: $FULL_EVERY"
	;;
*) usage "BENCH_MODE must be full or ring, not '$MODE'" ;;
esac
[[ $WINDOW =~ ^[1-9][0-9]*$ ]] || usage "BENCH_WINDOW wants seconds > 0, not '$WINDOW'"
[[ $KILLS =~ ^[0-9]+$ ]] || usage "BENCH_KILLS wants a count, not '$KILLS'"
[[ $START_GAP =~ ^[0-9]+$ ]] || usage "BENCH_START_GAP_MS wants ms, not '$START_GAP'"
for N in $NODES_LIST; do
	[[ $N =~ ^[1-9][0-9]*$ ]] || usage "BENCH_NODES wants node counts, not '$N'"
	[ "$KILLS" -lt "$N" ] || usage "BENCH_KILLS=$KILLS needs more than $KILLS nodes: N=$N leaves no fencer"
done
: "${BENCH_DEFAULT_TIMINGS:=1}"
. "$(dirname "$0")/perf-lib.sh"

WRITE_EVERY=$((PERIOD < TTL / 3 ? PERIOD : TTL / 3))
WINDOW_P=$(((WINDOW * 1000 + PERIOD / 2) / PERIOD)) # the window in periods
[ "$WINDOW_P" -ge 1 ] || WINDOW_P=1
WINDOW_MS=$((WINDOW_P * PERIOD))
ATTEMPT=$(((TTL - SAFETY) / 3))
SETTLE_MS=$((WRITE_EVERY + 2 * ATTEMPT + 1000))
HZ=$(getconf CLK_TCK)

# nap SECONDS : sleep, in a way INT and TERM interrupt at once (bash runs a
# trap only after its foreground command ended: a foreground sleep of the
# window would hold a Ctrl-C for 30 s); the sleep is killed at exit
NAP=
nap() {
	sleep "$1" &
	NAP=$!
	wait "$NAP"
	NAP=
}
scale_cleanup() {
	[ -z "$NAP" ] || kill "$NAP" 2>/dev/null
	bench_cleanup
}
trap scale_cleanup EXIT
ms_now() { echo $((${EPOCHREALTIME/./} / 1000)); }
ms_sleep() { nap "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

# cluster_pids NODE... : every pid the nodes were started with
cluster_pids() {
	local n
	for n in "$@"; do cat "$CL/$n.pids"; done
}
# cpu_ticks PID... : utime + stime summed (ended processes count 0)
cpu_ticks() { (cd /proc && cat "${@/%//stat}" 2>/dev/null) | awk '{ s += $14 + $15 } END { print s + 0 }'; }
# rss_kib PID... : VmRSS summed
rss_kib() { (cd /proc && cat "${@/%//status}" 2>/dev/null) | awk '/^VmRSS:/ { s += $2 } END { print s + 0 }'; }
# fence_puts : PUTs made by every lease-fence of the cluster (any outcome)
fence_puts() {
	cat "$CL"/*.lease-fence.prom 2>/dev/null |
		awk '/^keep_store_requests_total/ && /op="put"/ { s += $NF } END { print s + 0 }'
}
# listed_all N NODE... : each node-watch's last listing found N nodes
listed_all() {
	local want=$1 n
	shift
	for n in "$@"; do
		grep -q "^keep_nodes_listed{[^}]*} $want\$" "$CL/$n.node-watch.prom" 2>/dev/null || return 1
	done
}
# not_listed N NODE... : how many node-watches' last listing did not find N
# nodes, and the last lines of three of them
not_listed() {
	local want=$1 n k=0 shown=0
	shift
	for n in "$@"; do
		grep -q "^keep_nodes_listed{[^}]*} $want\$" "$CL/$n.node-watch.prom" 2>/dev/null && continue
		k=$((k + 1))
		[ $shown -lt 3 ] || continue
		shown=$((shown + 1))
		echo "# $n: $(grep -h '^keep_nodes_listed\|^keep_watch_list_failures_total' "$CL/$n.node-watch.prom" 2>/dev/null | tr '\n' ' ')"
		tail -n 3 "$CL/log/$n.nw.err" 2>/dev/null | sed 's/^/#   /'
	done
	echo "# $k of $# node-watches did not list $want nodes"
}
# gone PID... : none of them runs
gone() {
	local p
	for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}
# field NAME : NAME's value in the body in $CL/victim.body
field() { sed -n "s/^$1 //p" "$CL/victim.body"; }

# one_run N : the run of N nodes; prints its line
one_run() {
	local N=$1 nodes=() pids n i p end w0 t0 t1 g0 p0 l0 o0 g1 p1 l1 o1 c0 c1 rss
	local v t_kill f0 f1 fat fby wat left ro ro0 rw
	new_cluster "scale-$N"
	echo "# N=$N store $STORE, dir $CL" >&2
	for i in $(seq 1 "$N"); do nodes+=("n$i"); done
	# the starts spread over N x START_GAP ms: hosts do not start their
	# nodes in one instant, and 3N processes exec'd at once on one host
	# (each mapping libcurl and OpenSSL) starve the first ones' renewals
	for n in "${nodes[@]}"; do
		start_node "$n"
		[ "$START_GAP" -eq 0 ] || ms_sleep "$START_GAP"
	done
	wait_live "${nodes[@]}" || return 1
	# in ring mode a node lists nodes/ every FULL_EVERY periods only
	w=60
	[ "$MODE" = full ] || w=$((60 + FULL_EVERY * PERIOD / 1000))
	end=$((SECONDS + w))
	until listed_all "$N" "${nodes[@]}"; do
		[ $SECONDS -lt $end ] || {
			echo "bench: N=$N: the node-watches did not all list $N nodes in $w s" >&2
			not_listed "$N" "${nodes[@]}" >&2
			return 1
		}
		sleep 0.2
	done
	ms_sleep "$PERIOD"
	mapfile -t pids < <(cluster_pids "${nodes[@]}")

	# the window: the counters read at w0 and again at w0 + WINDOW_MS (each
	# file's two reads that far apart, when both reads take as long), the
	# CPU times just after them (over the time measured between)
	w0=$(ms_now)
	ro0=$(cat "$CL"/log/*.lw.out | grep -c '^ran-out ')
	read -r g0 p0 l0 o0 <<<"$(requests "${nodes[@]}")"
	c0=$(cpu_ticks "${pids[@]}")
	t0=$(ms_now)
	left=$((w0 + WINDOW_MS - t0))
	[ "$left" -le 0 ] || ms_sleep "$left"
	read -r g1 p1 l1 o1 <<<"$(requests "${nodes[@]}")"
	c1=$(cpu_ticks "${pids[@]}")
	t1=$(ms_now)
	rss=$(rss_kib "${pids[@]}")
	ro=$(cat "$CL"/log/*.lw.out | grep -c '^ran-out ')
	rw=$((ro - ro0))
	[ "$ro" -eq 0 ] || echo "bench: warning: N=$N: $ro lease run-outs by the window's end, $rw of them in the window" >&2
	[ "$rw" -eq 0 ] || echo "bench: warning: N=$N: $rw lease run-outs in the window: this host does not hold $N nodes" >&2
	gone "${pids[@]}" && {
		echo "bench: N=$N: every process ended during the window" >&2
		return 1
	}

	# the kills
	: >"$CL/fence_ms"
	: >"$CL/attempts"
	: >"$CL/over"
	for i in $(seq 1 "$KILLS"); do
		v=n$i
		f0=$(fence_puts)
		t_kill=$(ms_now)
		kill_node "$v" KILL
		end=$((t_kill + TTL + GRACE + 4 * PERIOD + 60000))
		until grep -qs "^fenced node=$v " "$CL"/log/*.lf.out; do
			[ "$(ms_now)" -lt "$end" ] || {
				echo "bench: N=$N: $v not fenced $((end - t_kill)) ms after its kill" >&2
				return 1
			}
			sleep 0.1
		done
		keep-store -c "$CL/n$N.yaml" get "nodes/$v" >"$CL/victim.body" 2>"$CL/log/victim.err" || {
			echo "bench: N=$N: unable to read nodes/$v: $(cat "$CL/log/victim.err")" >&2
			return 1
		}
		fat=$(field fenced_at_ms)
		fby=$(field fenced_by)
		wat=$(field written_at_ms)
		if [ -z "$fat" ] || [ -z "$wat" ]; then
			echo "bench: N=$N: nodes/$v has no fenced_at_ms or written_at_ms after its fence" >&2
			return 1
		fi
		ms_sleep "$SETTLE_MS"
		f1=$(fence_puts)
		echo $((fat - t_kill)) >>"$CL/fence_ms"
		echo $((fat - wat - TAKEOVER)) >>"$CL/over"
		echo $((f1 - f0)) >>"$CL/attempts"
		echo "# N=$N kill $i: $v killed at $t_kill, fenced by $fby at $fat ($((fat - t_kill)) ms; $((fat - wat - TAKEOVER)) ms after written_at + ttl + grace), $((f1 - f0)) fence attempts by $((N - i)) peers" >&2
	done

	# the stop: nothing of the cluster may be left
	for n in "${nodes[@]}"; do kill_node "$n" TERM; done
	end=$((SECONDS + 10))
	until gone "${pids[@]}"; do
		[ $SECONDS -lt $end ] || break
		sleep 0.2
	done
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
	store_clean "$STORE"
	left=$(pgrep -f -- "$CL/" | wc -l)
	if [ "$left" -ne 0 ]; then
		echo "bench: N=$N: $left processes left after the run" >&2
		pgrep -af -- "$CL/" >&2
		return 1
	fi
	[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$CL/bucket" "$CL/state"

	awk -v S="$STORE_KIND" -v M="$MODE" -v N="$N" -v per="$PERIOD" -v ms="$WINDOW_MS" -v cms=$((t1 - t0)) \
		-v g=$((g1 - g0)) -v p=$((p1 - p0)) -v l=$((l1 - l0)) -v o=$((o1 - o0)) \
		-v cpu=$((c1 - c0)) -v hz="$HZ" -v rss="$rss" -v K="$KILLS" -v ro="$ro" \
		-v succ="$SUCC" -v fe="$FULL_EVERY" -v rw="$rw" \
		-v fm="$(sort -n "$CL/fence_ms" | tr '\n' ' ')" \
		-v at="$(tr '\n' ' ' <"$CL/attempts")" -v ov="$(sort -n "$CL/over" | tr '\n' ' ')" '
	function median(s,  a, n) { n = split(s, a, " "); return n ? a[int((n + 1) / 2)] : -1 }
	function p99(s,  a, n, i) { n = split(s, a, " "); if (!n) return -1; i = int(n * 0.99 + 0.999999); return a[i > n ? n : i] }
	BEGIN {
		d = N * ms / per # node-periods in the window
		na = split(at, a, " "); sa = 0; for (i = 1; i <= na; i++) sa += a[i]
		no = split(ov, o2, " ")
		printf "scale store=%s mode=%s nodes=%d requests_per_node_period=%.3f put=%.3f get=%.3f list=%.3f", S, M, N, (g + p + l + o) / d, p / d, g / d, l / d
		printf " cpu_pct_per_node=%.3f rss_kib_per_node=%d", 100 * cpu / hz / (cms / 1000) / N, rss / N
		printf " fence_median_ms=%d fence_p99_ms=%d fence_attempts_per_death=%.1f", median(fm), p99(fm), na ? sa / na : 0
		pages = int((N + 999) / 1000)
		ex = M == "ring" ? 1 + succ + pages / fe : 1 + pages
		printf " kills=%d fenced=%d over_floor_min_ms=%d window_s=%.1f expected_per_node_period=%g lease_ran_out=%d window_ran_out=%d", K, na, no ? o2[1] : -1, ms / 1000, ex, ro, rw
		if (M == "ring") printf " successors=%d full_every=%d", succ, fe
		printf "\n"
	}'
}

echo "# $(machine)"
[ "$MODE" = full ] || echo "# ring: $SUCC successors a period, a listing every $FULL_EVERY periods"
echo "# mode $MODE; timing: ttl ${TTL} ms, grace ${GRACE} ms, period ${PERIOD} ms; window ${WINDOW_MS} ms (${WINDOW_P} periods); ${KILLS} kills a run; build $BIN"
echo "# commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
for N in $NODES_LIST; do
	one_run "$N" || exit 111
done
