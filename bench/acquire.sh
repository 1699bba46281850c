#!/usr/bin/env bash
# bench/acquire.sh — owner-acquire: one process per key against one batch on
# stdin (--jobs 1, 8, 32: one store connection per thread, kept alive), on
# the same server, for first acquisitions (each: the record read, the
# leases/ marker read, listed and written, the record written: ADR 0020 §6)
# and for acquisitions of released records (a read and a write).
# docs/performance.md.
#
#   bash bench/acquire.sh                  200 keys a mode on the fs store
#   BENCH_KEYS=500 bash bench/acquire.sh
#   BENCH_STORE=s3 bash bench/acquire.sh   on $S3_ENDPOINT / $S3_BUCKET
#
# One node (lease-write, release build). Each mode gets its own fresh keys;
# the released-record pass releases them (owner-release --jobs 8) and
# acquires them again the same way. Prints keys per second, the ratio to
# one process per key, and requests per key (--stats).
set -u
. "$(dirname "$0")/perf-lib.sh"

KEYS=${BENCH_KEYS:-200}

new_cluster acq
node_config n1
lease-write -c "$CL/n1.yaml" >"$CL/log/n1.lw.out" 2>"$CL/log/n1.lw.err" &
PIDS+=($!)
disown $!
wait_live n1 || exit 111

echo "# $(machine)"
echo "# $KEYS keys a mode"
printf '%-22s %-10s %10s %10s %8s %14s\n' mode records ms keys/s ratio requests/key

# run MODE KEYFILE : acquire every key of KEYFILE; "ms requests"
run() {
	local mode=$1 keys=$2 t0 t1 req
	t0=$(now_ms)
	case $mode in
	per-process)
		req=0
		while read -r k; do
			owner-acquire -c "$CL/n1.yaml" --stats "$k" >>"$CL/log/acq.out" 2>"$CL/log/one.err"
			req=$((req + $(sed -n 's/^stats requests=\([0-9]*\).*/\1/p' "$CL/log/one.err")))
		done <"$keys"
		;;
	*)
		owner-acquire -c "$CL/n1.yaml" --stats --jobs "${mode#batch-jobs-}" <"$keys" \
			>>"$CL/log/acq.out" 2>"$CL/log/batch.err"
		req=$(sed -n 's/^stats requests=\([0-9]*\).*/\1/p' "$CL/log/batch.err")
		;;
	esac
	t1=$(now_ms)
	echo "$((t1 - t0)) $req"
}

for records in new released; do
	base=
	for mode in per-process batch-jobs-1 batch-jobs-8 batch-jobs-32; do
		keys="$CL/keys-$mode"
		if [ "$records" = new ]; then
			seq 1 "$KEYS" | sed "s|^|t/$mode/a|" >"$keys"
		else
			owner-release -c "$CL/n1.yaml" --jobs 8 <"$keys" >/dev/null 2>&1
		fi
		read -r ms req <<<"$(run "$mode" "$keys")"
		[ "$ms" -gt 0 ] || ms=1
		[ -n "$base" ] || base=$ms
		awk -v m="$mode" -v r="$records" -v ms="$ms" -v k="$KEYS" -v b="$base" -v q="$req" 'BEGIN {
			printf "%-22s %-10s %10d %10.1f %8.2f %14.2f\n", m, r, ms, k * 1000 / ms, b / ms, q / k }'
	done
done
n=$(grep -c '^acquired ' "$CL/log/acq.out")
[ "$n" -eq $((8 * KEYS)) ] || echo "# warning: $n acquired lines, expected $((8 * KEYS))" >&2
