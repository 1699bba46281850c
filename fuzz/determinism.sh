#!/usr/bin/env bash
# fuzz/determinism.sh [SCALE] — run every harness twice the way CI's smoke
# runs it (tests/bats/0840-fuzz-smoke.bats: fixed seed and runs, setarch -R)
# at SCALE percent of its runs (default 10), and compare the units the two
# runs added (named by their SHA-1). One line per harness; exit 1 when a
# pair differs. By hand (`make fuzz-determinism`): docs/testing.md
# "Fuzzing" records its results.
set -u
cd "$(dirname "$0")/.." || exit 2
scale=${1:-10}
bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs() {
	case $1 in
	fuzz_ownerrec | fuzz_lease_state | fuzz_leaseobj) echo 1000000 ;;
	fuzz_nodeobj) echo 800000 ;;
	fuzz_line | fuzz_awscreds | fuzz_key) echo 300000 ;;
	fuzz_s3_error | fuzz_config) echo 150000 ;;
	fuzz_s3_list) echo 50000 ;;
	*) echo 100000 ;;
	esac
}
for f in fuzz/fuzz_*.c; do
	n=${f##*/}
	n=${n%.c}
	r=$(($(runs "$n") * scale / 100))
	for side in a b; do
		mkdir -p "$tmp/$n-$side"
		setarch -R "build/fuzz/bin/$n" -seed=1 -runs="$r" -entropic=0 -reduce_inputs=0 \
			-len_control=0 -reload=0 -max_len=8192 -timeout=10 "$tmp/$n-$side" \
			"fuzz/corpus/$n" >"$tmp/$n-$side.log" 2>&1 || { echo "not ok - $n: run $side failed"; bad=1; }
	done
	a=$(cd "$tmp/$n-a" && ls | LC_ALL=C sort | md5sum)
	b=$(cd "$tmp/$n-b" && ls | LC_ALL=C sort | md5sum)
	if [ "$a" = "$b" ]; then
		echo "ok - $n: two runs of $r added the same $(ls "$tmp/$n-a" | wc -l) units"
	else
		echo "not ok - $n: two runs of $r added different units"
		bad=1
	fi
done
exit $bad
