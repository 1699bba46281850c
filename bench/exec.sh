#!/usr/bin/env bash
# bench/exec.sh — the exec cost of the commands an application runs before
# every commit (owner-check) or a readiness probe runs (lease-status), now
# that they link neither libcurl nor OpenSSL nor expat, side by side with the
# same owner-check linked with every library as before (issue 14); and of a
# store command on the fs store (keep-store get), now that no command links
# libcurl (the S3 backend loads it with dlopen when an S3 store opens), side
# by side with the same keep-store linked with libcurl as before.
# docs/performance.md.
#
#   bash bench/exec.sh               1000 runs each (BENCH_RUNS to change)
#
# Release build (build/rel: make rel). The "full link" binary is built here
# from build/rel/obj/cmd/owner-check.o and build/rel/libkeep.a with the
# libraries every other command links, kept (--no-as-needed) as they were
# when owner-check pulled the store in: the dynamic loader maps and
# relocates them at every exec. Each run is a fork + exec of the
# command against a live node's state directory; prints ms per exec and the
# ratio to the full link.
set -u
. "$(dirname "$0")/perf-lib.sh"

RUNS=${BENCH_RUNS:-1000}
full="$DIR/owner-check-full-link"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc "$ROOT/build/rel/obj/cmd/owner-check.o" "$ROOT/build/rel/libkeep.a" -o "$full" \
	-Wl,--no-as-needed $(pkg-config --libs libcurl openssl yaml-0.1 expat) -lm || exit 111
full_store="$DIR/keep-store-full-link"
# shellcheck disable=SC2046
cc "$ROOT/build/rel/obj/cmd/keep-store.o" "$ROOT/build/rel/libkeep.a" -o "$full_store" \
	-Wl,--no-as-needed $(pkg-config --libs libcurl openssl yaml-0.1 expat) -ldl -lm || exit 111

new_cluster exec
node_config n1
lease-write -c "$CL/n1.yaml" >"$CL/log/n1.lw.out" 2>"$CL/log/n1.lw.err" &
PIDS+=($!)
disown $!
wait_live n1 || exit 111
owner-acquire -c "$CL/n1.yaml" t/c/a >/dev/null || exit 111

# per_exec CMD... : ms per run of CMD, RUNS times
per_exec() {
	local t0 t1 i
	t0=$(now_ms)
	for ((i = 0; i < RUNS; i++)); do
		"$@" >/dev/null 2>&1
	done
	t1=$(now_ms)
	awk -v ms=$((t1 - t0)) -v n="$RUNS" 'BEGIN { printf "%.3f", ms / n }'
}

echo "# $(machine)"
echo "# $RUNS runs each"
base=$(per_exec "$full" -c "$CL/n1.yaml" t/c/a 1)
printf '%-30s %10s %8s %s\n' binary ms/exec ratio libraries
printf '%-30s %10s %8s %s\n' "owner-check (full link)" "$base" 1.00 \
	"$(ldd "$full" | grep -c '=>')"
for c in owner-check lease-status; do
	case $c in
	owner-check) args=(t/c/a 1) ;;
	*) args=() ;;
	esac
	v=$(per_exec "$BIN/$c" -c "$CL/n1.yaml" "${args[@]}")
	printf '%-30s %10s %8s %s\n' "$c" "$v" "$(awk -v a="$v" -v b="$base" \
		'BEGIN { printf "%.2f", a / b }')" "$(ldd "$BIN/$c" | grep -c '=>')"
done
store=(-c "$CL/n1.yaml" get nodes/n1)
sbase=$(per_exec "$full_store" "${store[@]}")
printf '%-30s %10s %8s %s\n' "keep-store get (libcurl linked)" "$sbase" 1.00 \
	"$(ldd "$full_store" | grep -c '=>')"
v=$(per_exec "$BIN/keep-store" "${store[@]}")
printf '%-30s %10s %8s %s\n' "keep-store get" "$v" "$(awk -v a="$v" -v b="$sbase" \
	'BEGIN { printf "%.2f", a / b }')" "$(ldd "$BIN/keep-store" | grep -c '=>')"
