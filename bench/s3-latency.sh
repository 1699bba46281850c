#!/usr/bin/env bash
# bench/s3-latency.sh — median latency of one S3 request through keep's store
# interface, on one kept-alive connection against a new connection each
# time, before and after the TCP_QUICKACK fix (lib/store/s3.c quickack()),
# in one run. docs/performance.md "Kept-alive S3 requests".
#
#   S3_ENDPOINT=http://127.0.0.1:7480 S3_ACCESS_KEY=.. S3_SECRET_KEY=.. \
#     S3_BUCKET=.. bash bench/s3-latency.sh
#   BENCH_N=100 BENCH_OPS="get put" bash bench/s3-latency.sh
#
# For each op (get, head, put, list; small objects), BENCH_N requests
# (default 50) with the release build's store-latency tool in three modes:
#   before      one kept-alive connection, TCP_QUICKACK off (keep until now)
#   after       one kept-alive connection, TCP_QUICKACK on
#   fresh       a new connection (new store handle) per request
# and prints the medians and the ratios kept-alive / fresh. Run it once
# against a server started with S3_TCP_NODELAY=0 (RGW as it was: headers
# and body in two sends, Nagle on) and once against one with tcp_nodelay=1
# (scripts/s3-server.sh's default now) to see both sides of the fix.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOL=${KEEP_TOOLDIR:-$ROOT/build/rel/tools}/store-latency
N=${BENCH_N:-50}
OPS=${BENCH_OPS:-get head put list}

[ -x "$TOOL" ] || {
	echo "bench: $TOOL missing (make rel, or set KEEP_TOOLDIR)" >&2
	exit 100
}
: "${S3_ENDPOINT:?set S3_ENDPOINT}" "${S3_ACCESS_KEY:?}" "${S3_SECRET_KEY:?}"
BUCKET=${S3_BUCKET:-keep-test}
export AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY"
export AWS_REGION="${S3_REGION:-us-east-1}" AWS_ENDPOINT_URL_S3="$S3_ENDPOINT"
STORE="s3://$BUCKET/bench-latency-$$"

# median OP ARGS... : the median_us of one store-latency run
median() {
	local op=$1 out
	shift
	out=$("$TOOL" --store "$STORE" --op "$op" -n "$N" "$@") || {
		echo "bench: store-latency --op $op $* failed" >&2
		exit 111
	}
	out=${out#*median_us=}
	echo "${out%% *}"
}

cleanup() {
	"${KEEP_BINDIR:-$ROOT/build/rel/bin}/keep-store" --store "$STORE" del bench/latency \
		>/dev/null 2>&1 || true
}
trap cleanup EXIT

ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "# $S3_ENDPOINT, $N requests per cell, medians in ms; ratio = kept-alive / fresh"
printf '| op | before: kept-alive | after: kept-alive | fresh connection | before ratio | after ratio |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for op in $OPS; do
	b=$(median "$op" --no-quickack)
	a=$(median "$op")
	f=$(median "$op" --fresh)
	printf '| %s | %s | %s | %s | %s | %s |\n' "$op" "$(ms "$b")" "$(ms "$a")" "$(ms "$f")" \
		"$(ratio "$b" "$f")" "$(ratio "$a" "$f")"
done
