# keep — helpers of the clock tests (tests/bats/0270–0289; docs/lease.md
# "Clocks"): run a node's commands with tests/preload/clockshim.c, and poll
# grants. Load after helpers/common.
#
#   shimmed NAME CMD...       run CMD with the clock offsets of NAME
#                             ($BATS_TEST_TMPDIR/NAME.clock)
#   shim_set NAME [monotonic_ms=N] [boottime_ms=N] [realtime_ms=N]
#                             replace NAME's offsets (by rename: a running
#                             process sees them at its next clock read)
#   start_node NAME ID [shim] lease-write -v for node ID in the background
#                             (under NAME's offsets with `shim`), live
#   acquire_until SECONDS NAME KEY [shim]
#                             owner-acquire while it answers held (exit 1)
#   poll_grants FILE MS N1 G1 N2 G2
#                             for MS ms, at once: owner-check's decision
#                             every 20 ms for node N1 at generation G1 (under
#                             N1's offsets) and for N2 at G2
#                             (tests/tools/grantpoll.c), and the owner-check
#                             command of N1 in a loop (20 ms between runs).
#                             FILE gets one line per check, in time order:
#                             "<wall ms before> <wall ms after> WHO <exit>
#                             <boot ms before> <boot ms after>",
#                             WHO = N1, N2 or N1/owner-check (whose boot
#                             times come from /proc/uptime: 10 ms steps)
#   overlaps FILE, passes FILE NODE, rounds FILE NODE   (on poll_grants' FILE)

# shellcheck disable=SC2154 # output: set by bats' run
SHIM="${KEEP_TOOLDIR:?}/clockshim.so"

shimmed() {
	local n=$1
	shift
	# env execs CMD: started with start_bg, the pid recorded is CMD's own
	# (a SIGSTOP must reach the process, not a shell around it)
	env ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" \
		KEEP_CLOCKSHIM_FILE="$BATS_TEST_TMPDIR/$n.clock" LD_PRELOAD="$SHIM" "$@"
}

shim_set() {
	local n=$1 kv
	shift
	: >"$BATS_TEST_TMPDIR/$n.clock.tmp"
	for kv in "$@"; do
		printf '%s %s\n' "${kv%%=*}" "${kv#*=}" >>"$BATS_TEST_TMPDIR/$n.clock.tmp"
	done
	mv -f "$BATS_TEST_TMPDIR/$n.clock.tmp" "$BATS_TEST_TMPDIR/$n.clock"
}

# the pid start_bg records is lease-write's own (env execs it)
start_node() {
	if [ "${3:-}" = shim ]; then
		start_bg "$1" env ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" \
			KEEP_CLOCKSHIM_FILE="$BATS_TEST_TMPDIR/$1.clock" LD_PRELOAD="$SHIM" \
			lease-write -v --node-id "$2"
	else
		start_bg "$1" lease-write -v --node-id "$2"
	fi
	wait_line 30 "$1" '^live '
}

acquire_until() {
	local end=$(($(now_ms) + $1 * 1000)) rc pre=
	[ "${4:-}" = shim ] && pre="shimmed $2"
	while :; do
		rc=0
		$pre owner-acquire --node-id "$2" "$3" >"$BATS_TEST_TMPDIR/acq.out" \
			2>>"$BATS_TEST_TMPDIR/acq.err" || rc=$?
		[ "$rc" -eq 0 ] && { cat "$BATS_TEST_TMPDIR/acq.out"; return 0; }
		[ "$rc" -eq 1 ] || { echo "owner-acquire exit $rc" >&2; cat "$BATS_TEST_TMPDIR/acq.out" >&2; return 1; }
		[ "$(now_ms)" -lt "$end" ] || { echo "still held after $1 s" >&2; return 1; }
		sleep 0.1
	done
}

# one loop of owner-check commands (slower: a process each time)
poll_cmd() {
	local out=$1 end=$2 n=$3 g=$4 t r
	while [ "$(now_ms)" -lt "$end" ]; do
		b=$(uptime_ms)
		t=$(now_ms)
		r=0
		shimmed "$n" owner-check --node-id "$n" t/c/a "$g" >/dev/null 2>&1 || r=$?
		echo "$t $(now_ms) $n/owner-check $r $b $(($(uptime_ms) + 10))" >>"$out"
		sleep 0.02
	done
}

poll_grants() {
	local out=$1 ms=$2 end=$(($(now_ms) + $2)) p1 p2 p3
	: >"$out"
	shimmed "$3" "$KEEP_TOOLDIR/grantpoll" "$STATE_DIR" "$3" t/c/a "$4" "$ms" 20 >"$out.1" &
	p1=$!
	"$KEEP_TOOLDIR/grantpoll" "$STATE_DIR" "$5" t/c/a "$6" "$ms" 20 >"$out.2" &
	p2=$!
	: >"$out.3"
	poll_cmd "$out.3" "$end" "$3" "$4" &
	p3=$!
	wait "$p1" "$p2" "$p3" # only these: the nodes run in the background too
	sort -n "$out.1" "$out.2" "$out.3" >"$out"
}

# overlaps FILE : checks of two different nodes that both passed at once
# (their [before, after] intervals meet)
overlaps() {
	awk '$4 == 0 { split($3, w, "/"); a[n] = $1; b[n] = $2; who[n] = w[1]; n++ }
	     END { c = 0; for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
	               if (who[i] != who[j] && a[i] <= b[j] && a[j] <= b[i]) c++;
	           print c }' "$1"
}
# passes FILE WHO : how many checks of WHO passed (WHO: NODE for the
# in-process checks, NODE/owner-check for the command's)
passes() { awk -v n="$2" '$3 == n && $4 == 0' "$1" | wc -l; }
# rounds FILE WHO : how many checks of WHO ran
rounds() { awk -v n="$2" '$3 == n' "$1" | wc -l; }

# state_field NODE KEY : a field of NODE's lease state file
state_field() { sed -n "s/^$2 //p" "$STATE_DIR/$1/lease"; }
# field KEY : the value of KEY= in $output
field() { printf '%s\n' "$output" | sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }

# wait_renewal NAME : until NAME (lease-write -v) prints one more `renewed`
# line than now (within 5 s): the moment right after a renewal
wait_renewal() {
	local f="$BATS_TEST_TMPDIR/$1.out" r end=$(($(now_ms) + 5000))
	r=$(grep -c '^renewed ' "$f")
	while [ "$(grep -c '^renewed ' "$f")" -le "$r" ]; do
		[ "$(now_ms)" -lt "$end" ] || { echo "no renewal of $1 in 5 s" >&2; return 1; }
		sleep 0.01
	done
}
