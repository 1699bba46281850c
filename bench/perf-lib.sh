# shellcheck shell=bash disable=SC2034
# bench/perf-lib.sh — shared by bench/requests.sh, bench/failover.sh and
# bench/acquire.sh (sourced, bash). docs/performance.md.
#
# Environment: BENCH_STORE (fs | s3; s3 uses S3_ENDPOINT, S3_ACCESS_KEY,
# S3_SECRET_KEY, S3_REGION, S3_BUCKET as tests/run-all.sh), KEEP_BINDIR
# (build/rel/bin: the release build; the sanitizer build is several times
# slower and would measure itself), BENCH_DIR (a new temp dir, removed at
# exit unless BENCH_KEEP=1).
#
# Timings are the end-to-end tests' (ttl 3000, grace 1500, safety 600, skew
# 300, period 1000 ms): request counts per period do not depend on them,
# and failover trials take seconds instead of tens of seconds.
# BENCH_DEFAULT_TIMINGS=1 uses ADR 0020's defaults instead (§5: ttl 10000,
# grace 5000, safety 2000, skew 1000, period 3000 ms), for failover times
# an operator will see.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${KEEP_BINDIR:-$ROOT/build/rel/bin}
STORE_KIND=${BENCH_STORE:-fs}
TTL=3000 GRACE=1500 SAFETY=600 SKEW=300 PERIOD=1000
if [ "${BENCH_DEFAULT_TIMINGS:-0}" = 1 ]; then
	TTL=10000 GRACE=5000 SAFETY=2000 SKEW=1000 PERIOD=3000
fi
TAKEOVER=$((TTL + GRACE))

for b in lease-write node-watch lease-fence owner-acquire owner-release keep-store; do
	[ -x "$BIN/$b" ] || {
		echo "bench: $BIN/$b missing (make rel, or set KEEP_BINDIR)" >&2
		exit 100
	}
done
export PATH="$BIN:$PATH"
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/keep-bench.XXXXXX")}
mkdir -p "$DIR"
PIDS=()

S3_CLUSTERS=() # s3:// stores made by new_cluster and not yet emptied

bench_cleanup() {
	local p s
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.3
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	# every object a run left under its prefix in the bucket, once the
	# processes writing there are gone
	for p in "${PIDS[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
	done
	for s in "${S3_CLUSTERS[@]}"; do store_clean "$s"; done
	[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$DIR"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

case $STORE_KIND in
fs) ;;
s3)
	: "${S3_ENDPOINT:?BENCH_STORE=s3 needs S3_ENDPOINT}" "${S3_ACCESS_KEY:?}" "${S3_SECRET_KEY:?}"
	export AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY"
	export AWS_REGION="${S3_REGION:-us-east-1}" AWS_ENDPOINT_URL_S3="$S3_ENDPOINT"
	;;
*)
	echo "bench: BENCH_STORE must be fs or s3" >&2
	exit 100
	;;
esac

# new_cluster NAME : a fresh store (a directory, or a fresh prefix in the
# bucket) and state dir; sets STORE and CL (its directory).
new_cluster() {
	CL="$DIR/$1"
	mkdir -p "$CL/state" "$CL/log"
	if [ "$STORE_KIND" = fs ]; then
		mkdir -p "$CL/bucket"
		STORE="file://$CL/bucket"
	else
		STORE="s3://${S3_BUCKET:-keep-test}/bench-$1-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
		S3_CLUSTERS+=("$STORE")
	fi
}

# store_clean STORE : delete every object of STORE, an s3:// prefix a run
# made (nothing for a directory: it goes with $DIR); call it once the
# processes that write there are gone. Prints how many objects it deleted
# and could not delete to stderr when any could not be.
store_clean() {
	local k n=0 bad=0 keep=() pass
	case $1 in s3://*) ;; *) return 0 ;; esac
	# twice: a request a killed process had sent may land after the first
	for pass in 1 2; do
		bad=0
		while read -r k; do
			if keep-store --store "$1" del "$k" --force >/dev/null 2>&1; then n=$((n + 1)); else bad=$((bad + 1)); fi
		done < <(keep-store --store "$1" list 2>/dev/null | sed -n 's/^object key=\([^ ]*\) .*/\1/p')
		[ "$pass" = 2 ] || sleep 0.5
	done
	[ "$bad" -eq 0 ] || echo "bench: $1: $bad of $((n + bad)) objects not deleted" >&2
	for k in "${S3_CLUSTERS[@]}"; do [ "$k" = "$1" ] || keep+=("$k"); done
	S3_CLUSTERS=("${keep[@]}")
}

# node_config NODE : $CL/NODE.yaml, metrics in $CL/NODE.<command>.prom
node_config() {
	cat >"$CL/$1.yaml" <<YAML
node_id: $1
store: $STORE
state_dir: $CL/state
lease:
  ttl_ms: $TTL
  grace_ms: $GRACE
  safety_ms: $SAFETY
  max_skew_ms: $SKEW
  heartbeat_period_ms: $PERIOD
metrics:
  textfile: $CL/$1.prom
${NODE_EXTRA_YAML:-}
YAML
}

# start_node NODE : lease-write, and the peer-fencing pipeline (node-watch
# --follow | lease-fence --stdin), as keep-agent runs them. Pids in
# $CL/NODE.pids (one a line; the first is lease-write's).
start_node() {
	local n=$1
	node_config "$n"
	lease-write -c "$CL/$n.yaml" >"$CL/log/$n.lw.out" 2>"$CL/log/$n.lw.err" &
	echo $! >"$CL/$n.pids"
	PIDS+=($!)
	disown $!
	mkfifo "$CL/$n.fifo"
	lease-fence -c "$CL/$n.yaml" --stdin <"$CL/$n.fifo" >"$CL/log/$n.lf.out" 2>"$CL/log/$n.lf.err" &
	echo $! >>"$CL/$n.pids"
	PIDS+=($!)
	disown $!
	node-watch -c "$CL/$n.yaml" --follow >"$CL/$n.fifo" 2>"$CL/log/$n.nw.err" &
	echo $! >>"$CL/$n.pids"
	PIDS+=($!)
	disown $!
}

# kill_node NODE [SIG] : every process of NODE
kill_node() {
	local p
	for p in $(cat "$CL/$1.pids" 2>/dev/null); do kill "-${2:-TERM}" "$p" 2>/dev/null; done
	rm -f "$CL/$1.fifo"
}

# wait_live NODE... : until each lease-write printed `live` (60 s at most)
wait_live() {
	local n end=$((SECONDS + 60))
	for n in "$@"; do
		until grep -q '^live ' "$CL/log/$n.lw.out" 2>/dev/null; do
			[ $SECONDS -lt $end ] || {
				echo "bench: $n not live after 60 s" >&2
				return 1
			}
			sleep 0.1
		done
	done
}

# requests NODE... : "GET PUT LIST OTHER" summed over every metrics file of
# these nodes (keep_store_requests_total, any outcome)
requests() {
	local n
	for n in "$@"; do cat "$CL/$n".*.prom 2>/dev/null; done |
		awk '/^keep_store_requests_total/ {
			v = $NF
			if ($0 ~ /op="get"/) g += v
			else if ($0 ~ /op="put"/) p += v
			else if ($0 ~ /op="list"/) l += v
			else o += v
		} END { printf "%d %d %d %d\n", g, p, l, o }'
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# machine : one line about this machine and the date
machine() {
	printf 'date %s; nproc %s; memory %s MiB; kernel %s; store %s\n' \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)" \
		"$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)" "$(uname -r)" "$STORE_KIND"
}

# median and p99 of numbers on stdin (nearest rank)
stats_of() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (!NR) { print "n=0"; exit }
		m = v[int((NR + 1) / 2)]; i = int(NR * 0.99 + 0.999999); if (i > NR) i = NR
		printf "n=%d median=%d p99=%d min=%d max=%d\n", NR, m, v[i], v[1], v[NR] }'
}
