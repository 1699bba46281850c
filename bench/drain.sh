#!/usr/bin/env bash
# bench/drain.sh — the drain (owner-release --all) against a slow bucket:
# N holds, every release write delayed by MS (the fault file `put owners/
# delay MS`), 32 releases in flight (ADR 0020 §5 bounds; issue 14 item 1).
# docs/performance.md.
#
#   bash bench/drain.sh                     1000 holds, 200 ms a write, fs store
#   BENCH_HOLDS=500 BENCH_DELAY_MS=100 bash bench/drain.sh
#   BENCH_STORE=s3 bash bench/drain.sh      on $S3_ENDPOINT / $S3_BUCKET
#
# The fault file is only read by the test build (KEEP_FAULT_INJECTION), so
# this benchmark runs build/san/bin by default (KEEP_BINDIR to change it);
# the delay dominates every release, not the sanitizers. Two runs:
#   drain     --wait-ms long enough: the time to drain everything, against
#             one write at a time (N x MS) and against the ideal of 32 at a
#             time (N / 32 x MS)
#   deadline  writes slower than the bound (4 x MS... each 10 x MS), --wait-ms
#             3000: the time the drain returns, against its bound
set -u
KEEP_BINDIR=${KEEP_BINDIR:-$(cd "$(dirname "$0")/.." && pwd)/build/san/bin}
export KEEP_BINDIR
. "$(dirname "$0")/perf-lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

HOLDS=${BENCH_HOLDS:-1000}
DELAY=${BENCH_DELAY_MS:-200}
# the ADR's default timings: acquiring a thousand keys on the fs store is a
# burst of fsyncs that the tests' 3 s ttl does not always outlast
TTL=10000 GRACE=5000 SAFETY=2000 SKEW=1000 PERIOD=3000

new_cluster drain
node_config n1
export KEEP_FAULT_FILE="$CL/faults"
: >"$KEEP_FAULT_FILE"
lease-write -c "$CL/n1.yaml" >"$CL/log/n1.lw.out" 2>"$CL/log/n1.lw.err" &
PIDS+=($!)
disown $!
wait_live n1 || exit 111

# hold HOLDS keys (8 acquisitions at once), every one acquired
hold_all() {
	seq 1 "$HOLDS" | sed "s|^|t/$1/k|" >"$CL/keys-$1"
	owner-acquire -c "$CL/n1.yaml" --jobs 8 <"$CL/keys-$1" >"$CL/log/acq-$1.out" 2>&1
	[ "$(grep -c '^acquired ' "$CL/log/acq-$1.out")" -eq "$HOLDS" ] || {
		echo "bench: not every key acquired ($1)" >&2
		exit 111
	}
}

echo "# $(machine)"
echo "# $HOLDS holds, release writes delayed $DELAY ms ($KEEP_BINDIR)"
printf '%-9s %8s %8s %12s %10s %10s %s\n' run holds ms bound_ms serial_ms ideal_ms result

hold_all drain
echo "put owners/ delay $DELAY" >"$KEEP_FAULT_FILE"
t0=$(now_ms)
owner-release -c "$CL/n1.yaml" --all --wait-ms 600000 >"$CL/log/drain.out" 2>"$CL/log/drain.err"
rc=$?
t1=$(now_ms)
printf '%-9s %8d %8d %12s %10d %10d %s\n' drain "$HOLDS" $((t1 - t0)) - \
	$((HOLDS * DELAY)) $(((HOLDS + 31) * DELAY / 32)) \
	"exit=$rc $(tail -n 1 "$CL/log/drain.out") x$(awk -v s=$((HOLDS * DELAY)) -v m=$((t1 - t0)) \
		'BEGIN { printf "%.1f", s / m }') faster than one at a time"
: >"$KEEP_FAULT_FILE"

# the first drain marked this instance draining (no new acquisition): a
# fresh run needs the mark gone
rm -f "$CL/state/n1/draining"
hold_all deadline
echo "put owners/ delay $((DELAY * 10))" >"$KEEP_FAULT_FILE"
t0=$(now_ms)
owner-release -c "$CL/n1.yaml" --all --wait-ms 3000 >"$CL/log/deadline.out" 2>"$CL/log/deadline.err"
rc=$?
t1=$(now_ms)
printf '%-9s %8d %8d %12d %10s %10s %s\n' deadline "$HOLDS" $((t1 - t0)) 3000 - - \
	"exit=$rc $(tail -n 1 "$CL/log/deadline.out")"
: >"$KEEP_FAULT_FILE"
