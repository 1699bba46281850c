#!/usr/bin/env bash
# bench/commit.sh — the fenced commit (owner-commit, keep_commit_fenced)
# against a plain conditional PUT: requests per commit and latency as a
# ratio, in one run (issue 26). docs/performance.md "The fenced commit".
#
#   bash bench/commit.sh                   on the fs store
#   BENCH_STORE=s3 bash bench/commit.sh    on $S3_ENDPOINT / $S3_BUCKET (RGW)
#   BENCH_N=200 bash bench/commit.sh
#
# Two parts, BENCH_N (default 50) rounds each, the modes of a round run one
# after another (interleaved: they share whatever load the machine and the
# server carry):
#   in-process  tests/tools/commit-latency: keep_store_put If-Match (plain)
#               against keep_commit_fenced (read + write) and
#               keep_commit_fenced with the last version (one write), one
#               kept-alive connection each, the grant from a callback
#   commands    one process each, as a shell script commits: `keep-store
#               put --if-match V` (plain) against `owner-commit` and
#               `owner-commit --if-version V` (node n1 live, holding the key:
#               the grant check reads its state directory), requests
#               counted by --stats
# Prints requests per commit (expect 1 GET + 1 PUT; 1 PUT with
# --if-version), medians, and the ratios commit / plain.
set -u
. "$(dirname "$0")/perf-lib.sh"

N=${BENCH_N:-50}
TOOL=${KEEP_TOOLDIR:-$ROOT/build/rel/tools}/commit-latency
for b in owner-commit "$TOOL"; do
	command -v "$b" >/dev/null || [ -x "$b" ] || {
		echo "bench: $b missing (make rel, or set KEEP_BINDIR / KEEP_TOOLDIR)" >&2
		exit 100
	}
done

new_cluster commit
node_config n1
lease-write -c "$CL/n1.yaml" >"$CL/log/n1.lw.out" 2>"$CL/log/n1.lw.err" &
PIDS+=($!)
disown $!
wait_live n1 || exit 111
owner-acquire -c "$CL/n1.yaml" t/c/bench >/dev/null || exit 111

echo "# $(machine)"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $N rounds a mode, interleaved"
echo "## in-process (one kept-alive connection per mode)"
[ "$STORE_KIND" = s3 ] || mkdir -p "${STORE#file://}/inproc"
"$TOOL" --store "$STORE/inproc" -n "$N" || exit 111

echo "## commands (one process per request)"
us() { echo $(($(date +%s%N) / 1000)); }
: >"$CL/t.plain"
: >"$CL/t.commit"
: >"$CL/t.ifv"
: >"$CL/r.commit"
: >"$CL/r.ifv"
printf 'x%.0s' $(seq 64) >"$CL/data"
pv=$(keep-store -c "$CL/n1.yaml" put bench/plain <"$CL/data" | sed -n 's/.* version=//p')
for i in $(seq "$N"); do
	printf '%064d' "$i" >"$CL/data"
	t0=$(us)
	pv=$(keep-store -c "$CL/n1.yaml" put bench/plain --if-match "$pv" <"$CL/data" |
		sed -n 's/.* outcome=ok version=//p')
	echo $(($(us) - t0)) >>"$CL/t.plain"
	[ -n "$pv" ] || { echo "bench: the plain PUT failed" >&2; exit 111; }
	t0=$(us)
	cv=$(owner-commit -c "$CL/n1.yaml" --stats t/c/bench 1 bench/fenced <"$CL/data" \
		2>>"$CL/r.commit" | sed -n 's/^committed .* version=//p')
	echo $(($(us) - t0)) >>"$CL/t.commit"
	[ -n "$cv" ] || { echo "bench: owner-commit failed" >&2; exit 111; }
	t0=$(us)
	owner-commit -c "$CL/n1.yaml" --stats --if-version "$cv" t/c/bench 1 bench/fenced \
		<"$CL/data" 2>>"$CL/r.ifv" | grep -q '^committed ' || {
		echo "bench: owner-commit --if-version failed" >&2
		exit 111
	}
	echo $(($(us) - t0)) >>"$CL/t.ifv"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
perreq() { # FILE FIELD : the mean of FIELD=N over the stats lines
	awk -v f="$2" '{ for (i = 1; i <= NF; i++) if ($i ~ "^" f "=") { s += substr($i, length(f) + 2); n++ } }
		END { printf "%.2f", n ? s / n : 0 }' "$1"
}
mp=$(median "$CL/t.plain")
mc=$(median "$CL/t.commit")
mi=$(median "$CL/t.ifv")
printf '%-34s %12s %10s %6s %6s\n' mode median_us requests get put
printf '%-34s %12d %10s %6s %6s\n' "keep-store put --if-match" "$mp" 1.00 0.00 1.00
printf '%-34s %12d %10s %6s %6s\n' "owner-commit" "$mc" "$(perreq "$CL/r.commit" requests)" \
	"$(perreq "$CL/r.commit" get)" "$(perreq "$CL/r.commit" put)"
printf '%-34s %12d %10s %6s %6s\n' "owner-commit --if-version" "$mi" "$(perreq "$CL/r.ifv" requests)" \
	"$(perreq "$CL/r.ifv" get)" "$(perreq "$CL/r.ifv" put)"
awk -v p="$mp" -v c="$mc" -v i="$mi" 'BEGIN { printf "ratio commit=%.2f if_version=%.2f\n", c / p, i / p }'
