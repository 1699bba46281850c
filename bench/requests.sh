#!/usr/bin/env bash
# bench/requests.sh — store requests per node per heartbeat period at steady
# state, for clusters of N nodes holding M actors, beside ADR 0020's
# listing (one LIST and one GET per node: 1 + N a node and period, plus the
# lease PUT) and a per-actor-lease baseline (the same, plus one renewal per
# actor per ttl/3). Also each process's CPU and RSS while idle (node 1).
# docs/performance.md.
#
#   bash bench/requests.sh                       fs store, N = 3 10 20, M = 0 100 1000
#   BENCH_STORE=s3 bash bench/requests.sh        on $S3_ENDPOINT / $S3_BUCKET
#   BENCH_NODES="3 10" BENCH_ACTORS="0 100" BENCH_WINDOW=10 bash bench/requests.sh
#   BENCH_NEW=200 bash bench/requests.sh         first acquisitions only (below)
#
# BENCH_NEW=K: instead, the requests of K first acquisitions (one
# owner-acquire --jobs 8 --stats, one node) on a cluster with no cluster
# object (every first record takes the leases/ marker path of ADR 0020 §6)
# against a native one (`upgrade-mark native` first: the record's read and
# creation, and the cluster object once a process); docs/upgrade.md
# "Native clusters".
#
# Each node runs what keep-agent runs: lease-write and node-watch --follow |
# lease-fence --stdin (release build). Requests are read from their metrics
# files (keep_store_requests_total, every request they made) at the start
# and end of a window of BENCH_WINDOW seconds (default 10), after the
# cluster has been live for two periods. M actors are acquired before the
# window (owner-acquire --jobs 8, spread over the nodes): holds are not
# renewed, so M does not change the steady state; the baseline shows what
# per-actor leases would cost.
set -u
. "$(dirname "$0")/perf-lib.sh"

if [ -n "${BENCH_NEW:-}" ]; then
	echo "# $(machine)"
	echo "# first acquisitions: $BENCH_NEW new actors, owner-acquire --jobs 8 --stats, one node"
	printf '%-9s %6s %9s %6s %6s %6s %9s %7s %7s\n' cluster keys requests get put list req/key ratio keys/s
	base=
	for kind in marker native; do
		new_cluster "new-$kind"
		start_node n1
		wait_live n1 || exit 111
		if [ "$kind" = native ]; then
			upgrade-mark -c "$CL/n1.yaml" native >>"$CL/log/native.out" || exit 111
		fi
		seq 1 "$BENCH_NEW" | awk '{ print "t/new/a" $1 }' >"$CL/keys"
		t0=$(now_ms)
		owner-acquire -c "$CL/n1.yaml" --stats --jobs 8 <"$CL/keys" >"$CL/log/acq.out" 2>"$CL/log/acq.err"
		t1=$(now_ms)
		got=$(grep -c '^acquired .*generation=1 ' "$CL/log/acq.out")
		[ "$got" -eq "$BENCH_NEW" ] || echo "# warning: $got of $BENCH_NEW acquired at generation 1" >&2
		st=$(grep '^stats ' "$CL/log/acq.err")
		f() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $st"; }
		req=$(f requests)
		[ -n "$base" ] || base=$req
		awk -v c="$kind" -v k="$BENCH_NEW" -v r="$req" -v g="$(f get)" -v p="$(f put)" \
			-v l="$(f list)" -v b="$base" -v ms=$((t1 - t0)) 'BEGIN {
			printf "%-9s %6d %9d %6d %6d %6d %9.2f %7.3f %7.1f\n", c, k, r, g, p, l, r / k, r / b,
				k * 1000 / (ms > 0 ? ms : 1) }'
		kill_node n1
		sleep 0.5
	done
	exit 0
fi

NODES_LIST=${BENCH_NODES:-3 10 20}
ACTORS_LIST=${BENCH_ACTORS:-0 100 1000}
WINDOW=${BENCH_WINDOW:-10}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

echo "# $(machine)"
echo "# timing: ttl ${TTL} ms, period ${PERIOD} ms, renewal every ttl/3 = $((TTL / 3)) ms (per-actor baseline); window ${WINDOW} s"
printf '%-4s %-5s %8s %8s %8s %9s %9s %12s %9s %9s\n' N M get/n/p put/n/p list/n/p total/n/p adr/n/p per-actor/n/p vs_adr vs_actor
for N in $NODES_LIST; do
	new_cluster "req-$N"
	nodes=()
	for i in $(seq 1 "$N"); do nodes+=("n$i"); done
	for n in "${nodes[@]}"; do start_node "$n"; done
	wait_live "${nodes[@]}" || exit 111
	sleep $((2 * PERIOD / 1000))
	held=0
	for M in $ACTORS_LIST; do
		# acquire actors held+1..M, round-robin over the nodes
		if [ "$M" -gt "$held" ]; then
			acq=()
			for i in $(seq 1 "$N"); do
				seq $((held + 1)) "$M" | awk -v n="$N" -v i="$i" '($1 - 1) % n == i - 1 { print "t/bench/a" $1 }' |
					owner-acquire -c "$CL/n$i.yaml" --jobs 8 >>"$CL/log/acquire.out" 2>>"$CL/log/acquire.err" &
				acq+=($!)
			done
			wait "${acq[@]}"
			got=$(grep -c '^acquired ' "$CL/log/acquire.out")
			[ "$got" -eq "$M" ] || echo "# warning: $got of $M actors acquired (see $CL/log/acquire.err)" >&2
			held=$M
			sleep 1
		fi
		read -r g0 p0 l0 o0 <<<"$(requests "${nodes[@]}")"
		declare -A c0=()
		for p in $(cat "$CL/n1.pids"); do c0[$p]=$(cpu_ticks "$p"); done
		t0=$(now_ms)
		sleep "$WINDOW"
		t1=$(now_ms)
		read -r g1 p1 l1 o1 <<<"$(requests "${nodes[@]}")"
		periods=$(awk -v a="$t0" -v b="$t1" -v p="$PERIOD" 'BEGIN { print (b - a) / p }')
		awk -v N="$N" -v M="$M" -v P="$periods" -v g=$((g1 - g0)) -v p=$((p1 - p0)) \
			-v l=$((l1 - l0)) -v o=$((o1 - o0)) -v per="$PERIOD" -v ttl="$TTL" 'BEGIN {
			d = N * P
			tot = (g + p + l + o) / d
			adr = 1 + (1 + N)               # lease PUT + LIST + N GETs
			actor = adr + (M / N) * per / (ttl / 3)
			printf "%-4d %-5d %8.2f %8.2f %8.2f %9.2f %9.2f %12.2f %9.3f %9.3f\n",
				N, M, g / d, p / d, l / d, tot, adr, actor, tot / adr, tot / actor }'
		if [ "$M" = "$(echo "$ACTORS_LIST" | awk '{ print $1 }')" ]; then
			hz=$(getconf CLK_TCK)
			names=(lease-write lease-fence node-watch)
			i=0
			for p in $(cat "$CL/n1.pids"); do
				echo "#   idle N=$N node n1 ${names[$i]}: cpu $(awk -v a="${c0[$p]}" -v b="$(cpu_ticks "$p")" \
					-v hz="$hz" -v w="$WINDOW" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / w }')% rss $(rss_kb "$p") KiB"
				i=$((i + 1))
			done
		fi
		unset c0
	done
	for n in "${nodes[@]}"; do kill_node "$n"; done
	sleep 0.5
done
