#!/bin/sh
# run-all.sh BUILD_DIR [unit|bats|sim|all] — every test suite of keep, TAP.
#
#   unit  each BUILD_DIR/tests/test_* binary
#   bats  tests/bats on the fs store and on a real S3 server, from one
#         queue of (store, file) jobs, 2 x $KEEP_TEST_JOBS at once (default
#         KEEP_TEST_JOBS: the number of cores; xargs -P, the tests of one
#         file one after the other), the longest files first, so that the
#         two passes end together; then the files marked `# run-all: alone`
#         (a line of its own in the file: the few that must not share the
#         machine), one at a time, fs then S3. The S3 server:
#         $S3_ENDPOINT if set (with S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION,
#         and the bucket $S3_BUCKET, default keep-test, created if missing),
#         else Ceph RGW started here by scripts/s3-server.sh on a temporary
#         data dir (port 7480 or the next free pair) and stopped on exit,
#         failure or interrupt; CEPH_CONF (that server's ceph.conf, or
#         the caller's for $S3_ENDPOINT) lets a test make a second S3 user
#         with radosgw-admin (tests/bats/0117-s3-bucket-policy.bats).
#         KEEP_TEST_S3_BUILD=DIR: the S3 pass runs DIR's commands and
#         tools (make check: build/relfi, the release flags with fault
#         injection, no sanitizers), but for the files with a line
#         `# run-all: sanitizers` (the S3 backend's own: conformance,
#         replies through the fault proxy, credentials), which run
#         BUILD_DIR's there too; the fs pass runs BUILD_DIR's throughout
#         (docs/testing.md "Sanitizers"). Default: BUILD_DIR for both.
#         KEEP_TEST_JOBS=1 runs one file of each store at a time;
#         KEEP_TEST_ONLY=RE runs only the files whose name matches the
#         extended regex RE.
#   sim   BUILD_DIR/bin/keep-sim --check
#   all   unit and bats (the default; bats runs keep-sim --check in
#         tests/bats/0900-sim.bats, once, in the fs pass)
#
# Each file's TAP is printed whole when the file is done (`# file: STORE
# FILE (exit N)` first); the counts are per store, once the queue is
# done. `ok` / `not ok` TAP lines are counted across all suites (skips are reported, not counted as passes); a
# suite that exits non-zero without any `not ok` line counts as 1 failure.
# After each bats suite, `# file-time` lines give each file's time (the sum
# of its tests' times, from bats --timing), slowest first. The last line is
# exactly "N passed, N failed"; exit 0 only if 0 failed.
# docs/testing.md ("Running the suite") has the rules a test follows to
# run beside the others.
set -u

usage() {
	echo "usage: sh tests/run-all.sh BUILD_DIR [unit|bats|sim|all]" >&2
	exit 100
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
MODE=${2:-all}
case $MODE in unit | bats | sim | all) ;; *) usage ;; esac
[ -d "$1" ] || {
	echo "run-all: no build directory '$1' (run make san first)" >&2
	exit 100
}
BUILD=$(cd "$1" && pwd)
S3_BUILD=$BUILD
if [ -n "${KEEP_TEST_S3_BUILD:-}" ]; then
	[ -d "$KEEP_TEST_S3_BUILD/bin" ] || {
		echo "run-all: KEEP_TEST_S3_BUILD: no build directory '$KEEP_TEST_S3_BUILD/bin' (make relfi-bin)" >&2
		exit 100
	}
	S3_BUILD=$(cd "$KEEP_TEST_S3_BUILD" && pwd)
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 100

PASSED=0
FAILED=0
SKIPPED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/keep-run-all.XXXXXX") || exit 111
S3_DATA=
S3_STARTED=

stop_s3() {
	if [ -n "$S3_STARTED" ] && [ -d "$S3_DATA" ]; then
		echo "# stopping the test S3 server ($S3_DATA)"
		bash "$ROOT/scripts/s3-server.sh" stop "$S3_DATA" --purge >/dev/null 2>&1 ||
			echo "# warning: could not stop the S3 server of $S3_DATA" >&2
		S3_STARTED=
	fi
}
# tree PID : PID and every process below it, parents first
tree() {
	echo "$1"
	for c in $(pgrep -P "$1" 2>/dev/null); do
		tree "$c"
	done
}
cleanup() {
	trap '' HUP INT TERM # a second signal must not cut the cleanup short
	for p in "$TMP"/*.pid; do
		[ -f "$p" ] || continue
		pid=$(cat "$p")
		# the queue or the S3 start still running (an interrupt): every
		# job's bats and what it started (the tree taken first: a process
		# whose parent died is no longer found under it)
		if kill -0 "$pid" 2>/dev/null; then
			# shellcheck disable=SC2046 # one pid a word
			kill -TERM $(tree "$pid") 2>/dev/null
		fi
	done
	stop_s3
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT
trap 'echo "# terminated" >&2; exit 143' TERM
trap 'exit 129' HUP

# count NAME OUT RC : count the TAP lines of a suite's output OUT that
# exited RC (already printed).
count() {
	ok=$(grep -c '^ok ' "$2")
	skip=$(grep -c -i '^ok .*# skip' "$2")
	notok=$(grep -c '^not ok ' "$2")
	# each failure and its diagnostics (up to 40 lines), printed again at
	# the end so that the last lines of a long log name every failure
	awk -v suite="$1" '/^not ok / { n = 40; print "# [" suite "]"; print; next }
		n > 0 && /^#/ { print; n--; next } { n = 0 }' "$2" >>"$TMP/failures"
	PASSED=$((PASSED + ok - skip))
	SKIPPED=$((SKIPPED + skip))
	FAILED=$((FAILED + notok))
	if [ "$3" -ne 0 ] && [ "$notok" -eq 0 ]; then
		echo "not ok - suite '$1' exited with status $3"
		echo "not ok - suite '$1' exited with status $3" >>"$TMP/failures"
		FAILED=$((FAILED + 1))
	fi
	echo "# end of suite: $1: $((ok - skip)) passed, $notok failed, $skip skipped, exit $3"
}

# suite NAME CMD... : run CMD, show its output, count its TAP lines.
suite() {
	name=$1
	shift
	echo "# suite: $name"
	rm -f "$TMP/rc"
	{
		"$@"
		echo $? >"$TMP/rc"
	} 2>&1 | tee "$TMP/out"
	rc=$(cat "$TMP/rc" 2>/dev/null || echo 1)
	count "$name" "$TMP/out" "$rc"
}

# fail_suite NAME REASON : a suite that could not run at all.
fail_suite() {
	echo "# suite: $1"
	echo "not ok - $1: $2"
	echo "not ok - $1: $2" >>"$TMP/failures"
	FAILED=$((FAILED + 1))
}

run_unit() {
	found=
	for t in "$BUILD"/tests/test_*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		found=1
		suite "unit $(basename "$t")" "$t"
	done
	[ -n "$found" ] || echo "# no unit tests in $BUILD/tests"
}

have_bats_files() {
	for f in "$ROOT"/tests/bats/*.bats; do
		[ -f "$f" ] && return 0
	done
	return 1
}

# one file per core and per store: twice as many files at once as there
# are cores (on 2 cores with 8 at once, a CPU hog and a shared machine,
# renewals starved and most agent tests failed)
JOBS=${KEEP_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
case $JOBS in '' | *[!0-9]* | 0) echo "run-all: KEEP_TEST_JOBS must be a positive integer" >&2; exit 100 ;; esac

# The bats files, in two lists: $TMP/files.side (run side by side) and
# $TMP/files.alone (those with a line `# run-all: alone`). The side ones go
# longest first when a previous run left its file times in
# $BUILD/bats-times (a long file started last would end the pass alone),
# else by tests/file-times (the times of a CI run, committed so that a
# fresh clone orders its files too; a file it does not name goes last,
# in name order).
list_files() {
	: >"$TMP/files.side"
	: >"$TMP/files.alone"
	for f in "$ROOT"/tests/bats/*.bats; do
		[ -f "$f" ] || continue
		if [ -n "${KEEP_TEST_ONLY:-}" ] && ! printf '%s\n' "${f##*/}" | grep -Eq -- "$KEEP_TEST_ONLY"; then
			continue
		fi
		if grep -q '^# run-all: alone' "$f"; then
			echo "$f" >>"$TMP/files.alone"
		else
			echo "$f" >>"$TMP/files.side"
		fi
	done
	# a file's time: this build's last run of it, else tests/file-times's
	touch "$BUILD/bats-times" 2>/dev/null
	awk 'FILENAME == ARGV[1] { if ($1 !~ /^#/) c[$2] = $1; next }
	     FILENAME == ARGV[2] { b[$2] = $1; next }
	     { n = $0; sub(/.*\//, "", n); t = (n in b) ? b[n] : c[n]
	       printf "%d %d %s\n", -(t + 0), FNR, $0 }' \
		"$ROOT/tests/file-times" "$BUILD/bats-times" "$TMP/files.side" |
		sort -n -k1,1 -k2,2 | cut -d' ' -f3- >"$TMP/files.side.sorted"
	mv "$TMP/files.side.sorted" "$TMP/files.side"
}

# run_bats STORE LIST : bats over the files of LIST (one a line), in turn
# (the files marked `# run-all: alone`); the S3 pass with $S3_BUILD's
# commands (KEEP_SAN_BINDIR: tests/bats/helpers/common.bash runs the files
# marked `# run-all: sanitizers` with BUILD_DIR's).
run_bats() {
	if [ ! -s "$2" ]; then
		echo "1..0"
		return 0
	fi
	bindir=$BUILD/bin
	[ "$1" != s3 ] || bindir=$S3_BUILD/bin
	tr '\n' '\0' <"$2" | KEEP_BINDIR="$bindir" KEEP_SAN_BINDIR="$BUILD/bin" \
		KEEP_TEST_STORE=$1 xargs -0 bats --tap --timing
}

# file_times NAME OUT LIST : `# file-time` lines of a bats suite's output OUT
# over the files of LIST (bats numbers the tests file after file, in LIST's
# order; a file's time is the sum of its tests'), slowest first; also
# appended to $TMP/times for $BUILD/bats-times.
file_times() {
	while IFS= read -r f; do
		# the tests bats finds in f (its preprocessor's pattern)
		echo "$(grep -cE '^[[:blank:]]*@test[[:blank:]]' "$f") ${f##*/}"
	done <"$3" >"$TMP/counts"
	awk -v counts="$TMP/counts" -v suite="$1" '
	BEGIN { while ((getline l < counts) > 0) { split(l, a, " "); nf++; name[nf] = a[2]; cnt[nf] = a[1] } fi = 1; left = cnt[1] }
	/^(not )?ok [0-9]+ / {
		while (left == 0 && fi < nf) { fi++; left = cnt[fi] }
		ms = 0
		if (match($0, / in [0-9]+ms( |$)/)) ms = substr($0, RSTART + 4, RLENGTH - 4) + 0
		t[name[fi]] += ms; n[name[fi]]++; left--
	}
	END { for (k in t) printf "%d %s %d\n", t[k], k, n[k] }' "$2" | sort -rn >"$TMP/ft"
	print_times "$1"
}

# print_times NAME : the `# file-time` lines of $TMP/ft ("MS FILE TESTS"
# lines, slowest first); appended to $TMP/times for $BUILD/bats-times.
print_times() {
	awk -v suite="$1" '{ printf "# file-time %s: %s %.1f s (%d tests)\n", suite, $2, $1 / 1000, $3 }' "$TMP/ft"
	awk '{ print $1, $2 }' "$TMP/ft" >>"$TMP/times"
}

# port_free PORT: nothing accepts connections on 127.0.0.1:PORT.
port_free() {
	curl -s -o /dev/null -m 2 "http://127.0.0.1:$1/"
	[ $? -eq 7 ]
}

# ensure_bucket: create $S3_BUCKET on $S3_ENDPOINT unless it exists.
ensure_bucket() {
	code=$(curl -s -o "$TMP/bucket.out" -w '%{http_code}' -m 20 -X PUT \
		--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/$S3_BUCKET") || code=000
	case $code in
	200 | 409) return 0 ;;
	esac
	echo "# creating bucket '$S3_BUCKET' on $S3_ENDPOINT failed: HTTP $code" >&2
	return 1
}

# start_s3: Ceph RGW on a temporary data dir; exports the S3_* variables.
start_s3() {
	if ! command -v radosgw >/dev/null 2>&1 || ! command -v ceph-mon >/dev/null 2>&1 ||
		! command -v ceph-osd >/dev/null 2>&1; then
		echo "# ceph packages missing: running scripts/install-deps.sh --s3"
		sh "$ROOT/scripts/install-deps.sh" --s3 || return 1
	fi
	port=7480
	tries=0
	until port_free "$port" && port_free $((port + 1)); do
		port=$((port + 2))
		tries=$((tries + 1))
		[ "$tries" -lt 50 ] || {
			echo "# no free port pair from 7480 up" >&2
			return 1
		}
	done
	S3_DATA="$TMP/s3"
	S3_STARTED=1 # from here on, stop it on exit whatever happens
	S3_BUCKET=${S3_BUCKET:-keep-test}
	export S3_BUCKET
	bash "$ROOT/scripts/s3-server.sh" start "$S3_DATA" "$port" >"$TMP/s3.env" || return 1
	# only the lines we expect, never arbitrary shell
	# shellcheck disable=SC2034 # v is read by the eval below
	while IFS='=' read -r k v; do
		case $k in
		S3_ENDPOINT | S3_ACCESS_KEY | S3_SECRET_KEY | S3_REGION | S3_BUCKET | CEPH_CONF)
			eval "$k=\$v"
			export "${k?}"
			;;
		esac
	done <"$TMP/s3.env"
	[ -n "${S3_ENDPOINT:-}" ]
}

# s3_ready: the S3 server to use is set up ($S3_* exported); 1 (after a
# `not ok` line) when it cannot be.
s3_ready() {
	if [ -n "${S3_ENDPOINT:-}" ]; then
		if [ -z "${S3_ACCESS_KEY:-}" ] || [ -z "${S3_SECRET_KEY:-}" ]; then
			fail_suite "bats (s3)" "S3_ENDPOINT is set but S3_ACCESS_KEY or S3_SECRET_KEY is not"
			return 1
		fi
		S3_REGION=${S3_REGION:-us-east-1}
		S3_BUCKET=${S3_BUCKET:-keep-test}
		export S3_ENDPOINT S3_ACCESS_KEY S3_SECRET_KEY S3_REGION S3_BUCKET
		echo "# using the S3 server at $S3_ENDPOINT, bucket $S3_BUCKET"
		if ! ensure_bucket; then
			fail_suite "bats (s3)" "bucket $S3_BUCKET missing and could not be created"
			return 1
		fi
	else
		echo "# starting a test S3 server (Ceph RGW on loopback)"
		if ! start_s3; then
			fail_suite "bats (s3)" "could not start the test S3 server (logs: $S3_DATA/log)"
			tail -n 30 "$S3_DATA"/log/*.log 2>/dev/null | sed 's/^/# /'
			stop_s3
			return 1
		fi
		echo "# S3 server up: $S3_ENDPOINT bucket $S3_BUCKET"
	fi
}

# The side-by-side files run from one queue of (store, file) jobs,
# $SLOTS at a time ($JOBS per store): the longest first, each file's fs
# job then its S3 job, so that neither pass ends early and leaves the
# machine half used while the other finishes alone. The S3 server starts
# beside the first jobs; an S3 job waits for it ($TMP/s3.ok, or
# $TMP/s3.failed: the job then does nothing, the failure is counted once).
# $TMP/job.sh runs one job: bats over one file, its TAP in
# $TMP/res/STORE/FILE (and .rc), printed whole when the file is done,
# under a lock so that two files' lines never mix.
write_job() {
	cat >"$TMP/job.sh" <<'JOB'
#!/bin/sh
# job.sh STORE FILE (environment: TMP, BUILD, S3_BUILD; see run-all.sh)
store=$1
f=$2
out=$TMP/res/$store/${f##*/}
bindir=$BUILD/bin
if [ "$store" = s3 ]; then
	while [ ! -e "$TMP/s3.ok" ] && [ ! -e "$TMP/s3.failed" ]; do sleep 1; done
	[ -e "$TMP/s3.ok" ] || exit 0
	set -a
	. "$TMP/s3.vars"
	set +a
	bindir=$S3_BUILD/bin
fi
KEEP_BINDIR=$bindir KEEP_SAN_BINDIR=$BUILD/bin KEEP_TEST_STORE=$store \
	bats --tap --timing "$f" >"$out" 2>&1 </dev/null
echo $? >"$out.rc"
{
	flock 9
	echo "# file: $store ${f##*/} (exit $(cat "$out.rc"))"
	cat "$out"
} 9>"$TMP/print.lock"
JOB
}

# s3_bg : s3_ready in the background; $TMP/s3.vars holds the S3_* variables
# when it succeeded ($TMP/s3.ok), $TMP/s3.failed holds the failure otherwise
# (the `not ok` line it printed); its output in $TMP/s3-start.out.
s3_bg() {
	(
		if s3_ready >"$TMP/s3-start.out" 2>&1; then
			for k in S3_ENDPOINT S3_ACCESS_KEY S3_SECRET_KEY S3_REGION S3_BUCKET CEPH_CONF; do
				eval "v=\${$k:-}"
				[ -z "$v" ] || printf "%s='%s'\n" "$k" "$(printf '%s' "$v" | sed "s/'/'\\\\''/g")"
			done >"$TMP/s3.vars"
			touch "$TMP/s3.ok"
		else
			# (fail_suite already put its line in $TMP/failures)
			grep '^not ok ' "$TMP/s3-start.out" >"$TMP/s3.failed"
			if [ ! -s "$TMP/s3.failed" ]; then
				echo "not ok - bats (s3): the S3 server could not be set up" >"$TMP/s3.failed"
				cat "$TMP/s3.failed" >>"$TMP/failures"
			fi
		fi
	) &
	echo $! >"$TMP/s3start.pid"
}

# queue : the jobs of $TMP/files.side (already longest first) on both
# stores, NUL-separated "STORE FILE" pairs, in $TMP/queue: first the fs
# jobs of the $SLOTS longest files (while the S3 server starts), then each
# file's S3 job in turn with the next file's fs job.
queue() {
	awk -v k="$SLOTS" '{ f[NR] = $0 }
	END {
		for (i = 1; i <= NR && i <= k; i++) printf "fs%c%s%c", 0, f[i], 0
		for (j = 1; j <= NR; j++) {
			printf "s3%c%s%c", 0, f[j], 0
			if (j + k <= NR) printf "fs%c%s%c", 0, f[j + k], 0
		}
	}' "$TMP/files.side" >"$TMP/queue"
}

# count_store STORE TITLE : count the TAP of each of the store's files
# (a file that exited non-zero without a `not ok` line is 1 failure) and
# print its `# file-time` lines.
count_store() {
	echo "# suite: $2"
	: >"$TMP/all.out"
	: >"$TMP/ft.raw"
	bad=0
	while IFS= read -r f; do
		r=$TMP/res/$1/${f##*/}
		[ -f "$r.rc" ] || {
			echo "not ok - $2: ${f##*/} did not run" >>"$TMP/all.out"
			continue
		}
		cat "$r" >>"$TMP/all.out"
		rc=$(cat "$r.rc")
		if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$r"; then
			echo "not ok - $2: ${f##*/}: bats exited with status $rc" >>"$TMP/all.out"
		fi
		[ "$rc" -eq 0 ] || bad=1
		awk -v n="${f##*/}" '/^(not )?ok [0-9]+ / { c++; if (match($0, / in [0-9]+ms( |$)/)) t += substr($0, RSTART + 4, RLENGTH - 4) }
			END { if (c) printf "%d %s %d\n", t, n, c }' "$r" >>"$TMP/ft.raw"
	done <"$TMP/files.side"
	count "$2" "$TMP/all.out" "$bad"
	sort -rn "$TMP/ft.raw" >"$TMP/ft"
	print_times "$2"
}

run_all_bats() {
	list_files
	: >"$TMP/times"
	if [ -z "${S3_ENDPOINT:-}" ]; then
		# started here (start_s3, in s3_bg's sub-shell): stopped on exit
		S3_DATA=$TMP/s3
		S3_STARTED=1
	fi
	s3_bg
	SLOTS=$((JOBS * 2))
	echo "# bats: $(wc -l <"$TMP/files.side") files side by side on the fs and S3 stores" \
		"($SLOTS files at once), $(wc -l <"$TMP/files.alone") alone"
	if [ "$S3_BUILD" != "$BUILD" ]; then
		echo "# the S3 pass runs $S3_BUILD (the files marked \`# run-all: sanitizers\`: $BUILD)"
	fi
	mkdir -p "$TMP/res/fs" "$TMP/res/s3"
	write_job
	queue
	export TMP BUILD S3_BUILD
	xargs -0 -n 2 -P "$SLOTS" sh "$TMP/job.sh" <"$TMP/queue" &
	echo $! >"$TMP/queue.pid"
	wait "$(cat "$TMP/queue.pid")"
	wait "$(cat "$TMP/s3start.pid")" 2>/dev/null
	s3=0
	[ ! -e "$TMP/s3.ok" ] || s3=1
	sed 's/^/# /' "$TMP/s3-start.out"
	if [ "$s3" = 1 ]; then
		set -a
		. "$TMP/s3.vars"
		set +a
	fi
	count_store fs "bats (fs)"
	if [ "$s3" = 1 ]; then
		count_store s3 "bats (s3)"
	else
		echo "# suite: bats (s3)"
		cat "$TMP/s3.failed"
		FAILED=$((FAILED + 1))
	fi
	if [ -s "$TMP/files.alone" ]; then
		suite "bats (fs, alone)" run_bats fs "$TMP/files.alone"
		file_times "bats (fs, alone)" "$TMP/out" "$TMP/files.alone"
		if [ "$s3" = 1 ]; then
			suite "bats (s3, alone)" run_bats s3 "$TMP/files.alone"
			file_times "bats (s3, alone)" "$TMP/out" "$TMP/files.alone"
		fi
	fi
	[ "$s3" = 0 ] || stop_s3
	# each file's time: the larger of its two stores', for the order of
	# the next run (the files this run did not run keep their last time)
	awk 'FILENAME == ARGV[1] { if ($1 > t[$2]) t[$2] = $1; next }
	     !($2 in t) { t[$2] = $1 }
	     END { for (k in t) print t[k], k }' "$TMP/times" "$BUILD/bats-times" 2>/dev/null |
		sort -rn >"$TMP/bats-times" && cp "$TMP/bats-times" "$BUILD/bats-times" 2>/dev/null || true
}

if [ "$MODE" = unit ] || [ "$MODE" = all ]; then
	run_unit
fi

if [ "$MODE" = bats ] || [ "$MODE" = all ]; then
	if ! command -v bats >/dev/null 2>&1; then
		fail_suite "bats" "bats is not installed (run scripts/install-deps.sh --test)"
	elif ! have_bats_files; then
		echo "# no bats files in tests/bats"
	else
		run_all_bats
	fi
fi

# In "all", the simulator's check runs once, as tests/bats/0900-sim.bats
# (which also names every broken model it must catch).
if [ "$MODE" = sim ]; then
	if [ -x "$BUILD/bin/keep-sim" ]; then
		suite "sim" "$BUILD/bin/keep-sim" --check
	else
		fail_suite "sim" "$BUILD/bin/keep-sim was not built"
	fi
fi

if [ -s "$TMP/failures" ]; then
	echo "# ---- every failure again (each with the suite it ran in) ----"
	cat "$TMP/failures"
fi
[ "$SKIPPED" -eq 0 ] || echo "# $SKIPPED skipped"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
