# keep — shared setup for the end-to-end tests (bats).
#
# Environment (set by tests/run-all.sh):
#   KEEP_BINDIR       the build's bin dir (sanitizer build); put first on PATH
#   KEEP_TOOLDIR      test programs and LD_PRELOAD libraries (default: beside bin/)
#   KEEP_TEST_STORE   fs | s3 — which store this run uses
#   S3_ENDPOINT S3_ACCESS_KEY S3_SECRET_KEY S3_REGION S3_BUCKET  (s3 runs)
#
# keep_setup gives every test its own empty store (a fresh directory, or a
# fresh prefix in the S3 bucket), its own state dir, and a config with
# short ttls in $KEEP_CONFIG:
#   $STORE_URL  $STATE_DIR  $KEEP_CONFIG  $FAULT_FILE (empty file; write rules to inject faults)
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

export PATH="${KEEP_BINDIR:?KEEP_BINDIR not set}:$PATH"
# test tools and LD_PRELOAD libraries built from tests/tools, tests/preload
export KEEP_TOOLDIR="${KEEP_TOOLDIR:-${KEEP_BINDIR%/bin}/tools}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}"

# keep_setup [ttl grace safety skew period]  (ms; defaults 3000 1500 600 300 1000)
keep_setup() {
	local ttl=${1:-3000} grace=${2:-1500} safety=${3:-600} skew=${4:-300} period=${5:-1000}
	STATE_DIR="$BATS_TEST_TMPDIR/state"
	mkdir -p "$STATE_DIR"
	FAULT_FILE="$BATS_TEST_TMPDIR/faults"
	: >"$FAULT_FILE"
	export KEEP_FAULT_FILE="$FAULT_FILE"
	case "${KEEP_TEST_STORE:-fs}" in
	fs)
		mkdir -p "$BATS_TEST_TMPDIR/bucket"
		STORE_URL="file://$BATS_TEST_TMPDIR/bucket"
		;;
	s3)
		STORE_URL="s3://${S3_BUCKET:?}/t-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
		export AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY"
		export AWS_REGION="${S3_REGION:-us-east-1}" AWS_ENDPOINT_URL_S3="$S3_ENDPOINT"
		;;
	*) echo "unknown KEEP_TEST_STORE=$KEEP_TEST_STORE" >&2; return 1 ;;
	esac
	KEEP_CONFIG="$BATS_TEST_TMPDIR/keep.yaml"
	cat >"$KEEP_CONFIG" <<YAML
store: $STORE_URL
state_dir: $STATE_DIR
lease:
  ttl_ms: $ttl
  grace_ms: $grace
  safety_ms: $safety
  max_skew_ms: $skew
  heartbeat_period_ms: $period
YAML
	export STORE_URL STATE_DIR KEEP_CONFIG FAULT_FILE
}

# wait_for SECONDS CMD... : poll CMD every 0.1 s until it succeeds; fail after SECONDS.
wait_for() {
	local limit=$1; shift
	local end=$(( $(date +%s%N) / 1000000 + limit * 1000 ))
	until "$@" >/dev/null 2>&1; do
		if [ "$(( $(date +%s%N) / 1000000 ))" -ge "$end" ]; then
			echo "wait_for: timed out after ${limit}s: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

# A crash (signal, sanitizer report) is never a pass.
refute_crash() {
	[ "$status" -lt 90 ] || [ "$status" -eq 100 ] || [ "$status" -eq 111 ] || {
		echo "crashed or sanitizer report: status $status" >&2; return 1; }
}

# start_bg NAME CMD... : run CMD in the background. Its stdout goes to
# $BATS_TEST_TMPDIR/NAME.out, stderr to NAME.err, its pid to NAME.pid, and
# its exit code to NAME.rc when it ends. keep_teardown kills what is left.
start_bg() {
	local n=$1; shift
	local d=$BATS_TEST_TMPDIR
	rm -f "$d/$n.rc" "$d/$n.pid"
	(
		"$@" >"$d/$n.out" 2>"$d/$n.err" &
		echo $! >"$d/$n.pid"
		rc=0
		wait $! || rc=$?
		echo $rc >"$d/$n.rc"
	) 3>&- &
	echo "$n" >>"$d/.bg"
	wait_for 10 test -s "$d/$n.pid"
}

# bg_pid NAME ; bg_rc NAME (empty while running)
bg_pid() { cat "$BATS_TEST_TMPDIR/$1.pid"; }
bg_rc() { cat "$BATS_TEST_TMPDIR/$1.rc" 2>/dev/null; }
bg_running() { [ ! -s "$BATS_TEST_TMPDIR/$1.rc" ]; }

# wait_exit SECONDS NAME : wait until NAME ended; prints its exit code.
wait_exit() {
	wait_for "$1" test -s "$BATS_TEST_TMPDIR/$2.rc" || return 1
	cat "$BATS_TEST_TMPDIR/$2.rc"
}

# wait_line SECONDS NAME REGEX : wait until NAME's stdout has a line matching REGEX.
wait_line() {
	wait_for "$1" grep -Eq -- "$3" "$BATS_TEST_TMPDIR/$2.out"
}

keep_teardown() {
	local n p
	[ -f "$BATS_TEST_TMPDIR/.bg" ] || return 0
	while read -r n; do
		p=$(cat "$BATS_TEST_TMPDIR/$n.pid" 2>/dev/null) || continue
		kill -TERM "$p" 2>/dev/null || true
	done <"$BATS_TEST_TMPDIR/.bg"
	sleep 0.3
	while read -r n; do
		p=$(cat "$BATS_TEST_TMPDIR/$n.pid" 2>/dev/null) || continue
		kill -KILL "$p" 2>/dev/null || true
	done <"$BATS_TEST_TMPDIR/.bg"
	rm -f "$BATS_TEST_TMPDIR/.bg"
}

# A sanitizer report in any stderr file of this test is a failure.
# (NB: in bats a bare `! cmd` never fails a test; write `run ! cmd`.)
refute_sanitizer_reports() {
	if grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$BATS_TEST_TMPDIR"/*.err 2>/dev/null; then
		echo "sanitizer report found (files above)" >&2
		return 1
	fi
}

# now_ms : wall clock in ms
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# mono_ms : this host's monotonic clock in ms, as keep reads it (lease
# state files hold monotonic times)
mono_ms() { "$KEEP_TOOLDIR/clocks" | sed 's/^mono_ms=\([0-9]*\).*/\1/'; }

# fencer_ready NODE [MS] : wait until NODE's lease (its lease-write live)
# has been live for MS (default 1800 = write_every + attempt_timeout at
# keep_setup's timings). Before that, lease-fence --stdin answers every
# stale line `rewatch ... reason=watch-too-short` (ADR 0020 §2: a full
# watch counted from the fencer's own live_since; docs/fencing.md).
fencer_ready() {
	local f="$STATE_DIR/$1/lease" ms=${2:-1800} since
	wait_for 20 grep -Eq '^live_since_mono_ms [1-9]' "$f" || return 1
	since=$(sed -n 's/^live_since_mono_ms //p' "$f")
	wait_for 30 mono_at_least $((since + ms))
}
mono_at_least() { [ "$(mono_ms)" -ge "$1" ]; }

# descendants PID : every descendant process id of PID, one a line.
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# refute_alive PID... : none of these processes is still running (zombies excepted).
refute_alive() {
	local p st
	for p in "$@"; do
		st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1) || continue
		if [ -n "$st" ] && [ "$st" != Z ]; then
			echo "process $p is still running: $(tr '\0' ' ' <"/proc/$p/cmdline")" >&2
			return 1
		fi
	done
}
