# keep — helpers for the ownership tests (load after helpers/common).
#
#   start_node NAME ID        lease-write for node ID in the background, live
#   field KEY                 the value of KEY= in $output
#   rec_version KEY           the version token of owners/KEY
#   sf RULES CMD...           run CMD with the state-directory failure injector
#                             (tests/preload/statefail.c) preloaded with RULES
#   start_owners_watch KEY ID...   poll every node's grant check of KEY every
#                             20 ms (tests/tools/owners-watch.c: owner-check's
#                             decision) until stop_owners_watch
#   stop_owners_watch         stop it; fails if two nodes ever passed together
#   sysf RULES CMD...         run CMD with tests/preload/sysfail.c (failing system calls)
#   line_at NAME REGEX SECS   the wall ms NAME first printed a line matching REGEX
#   alive PID                 PID runs (not a zombie)

start_node() {
	start_bg "$1" lease-write --node-id "$2"
	wait_line 30 "$1" '^live '
}
# shellcheck disable=SC2154 # $output is set by bats' run
field() { printf '%s\n' "$output" | sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }
rec_version() { keep-store stat "owners/$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p'; }

sf() {
	local rules=$1
	shift
	KEEP_STATEFAIL="$rules" KEEP_STATEFAIL_LOG="$BATS_TEST_TMPDIR/statefail.log" \
		LD_PRELOAD="$KEEP_TOOLDIR/statefail.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" "$@"
}

start_owners_watch() {
	local key=$1
	shift
	local ids
	ids=$(IFS=,; echo "$*")
	start_bg owners-watch "$KEEP_TOOLDIR/owners-watch" --state-dir "$STATE_DIR" \
		--key "$key" --nodes "$ids" --interval-ms 20
}

stop_owners_watch() {
	local rc
	kill -TERM "$(bg_pid owners-watch)"
	rc=$(wait_exit 10 owners-watch) || return 1
	if [ "$rc" != 0 ]; then
		echo "owners-watch: exit $rc: $(cat "$BATS_TEST_TMPDIR/owners-watch.out")" >&2
		return 1
	fi
	grep -q '^watch polls=' "$BATS_TEST_TMPDIR/owners-watch.out"
}

# sysf RULES CMD...  run CMD with the system-call failure injector
#                    (tests/preload/sysfail.c) preloaded with RULES; every
#                    injected failure is logged to $BATS_TEST_TMPDIR/sysfail.log
sysf() {
	local rules=$1
	shift
	env KEEP_SYSFAIL="$rules" KEEP_SYSFAIL_LOG="$BATS_TEST_TMPDIR/sysfail.log" \
		LD_PRELOAD="$KEEP_TOOLDIR/sysfail.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" "$@"
}

# line_at NAME REGEX SECONDS : the wall ms (the test's clock) at which
# NAME's stdout first had a line matching REGEX, polled every 10 ms (good
# to ~20 ms on a quiet machine)
line_at() {
	local end=$(($(now_ms) + $3 * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		if grep -Eq -- "$2" "$BATS_TEST_TMPDIR/$1.out"; then
			now_ms
			return 0
		fi
		sleep 0.01
	done
	echo "no line '$2' from $1 after $3 s" >&2
	return 1
}

# alive PID : PID runs (not a zombie)
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}
