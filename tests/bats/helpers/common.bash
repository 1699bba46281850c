# keep — shared setup for the end-to-end tests (bats).
#
# Environment (set by tests/run-all.sh):
#   KEEP_BINDIR       the build's bin dir (sanitizer build); put first on PATH
#   KEEP_TOOLDIR      test programs and LD_PRELOAD libraries (default: beside bin/)
#   KEEP_TEST_STORE   fs | s3 — which store this run uses
#   KEEP_SAN_BINDIR   the sanitizer build's bin dir, where KEEP_BINDIR is
#                     another build (make check's S3 pass: build/relfi); a
#                     file with a line `# run-all: sanitizers` runs it
#   S3_ENDPOINT S3_ACCESS_KEY S3_SECRET_KEY S3_REGION S3_BUCKET  (s3 runs)
#
# keep_setup gives every test its own empty store (a fresh directory, or a
# fresh prefix in the S3 bucket), its own state dir, and a config with
# short ttls in $KEEP_CONFIG:
#   $STORE_URL  $STATE_DIR  $KEEP_CONFIG  $FAULT_FILE (empty file; write rules to inject faults)
bats_require_minimum_version 1.5.0
# bats-support, then bats-assert (Debian's), their files sourced here:
# their load.bash runs a dirname process per file, 15 a test (issue 22:
# the suite is CPU-bound; each file only defines functions)
for _f in /usr/lib/bats/bats-support/src/*.bash /usr/lib/bats/bats-assert/src/*.bash; do
	# shellcheck disable=SC1090
	source "$_f"
done
unset _f

if [ -n "${KEEP_SAN_BINDIR:-}" ] && [ "$KEEP_SAN_BINDIR" != "${KEEP_BINDIR:-}" ] &&
	grep -q '^# run-all: sanitizers' "$BATS_TEST_FILENAME"; then
	export KEEP_BINDIR=$KEEP_SAN_BINDIR
fi
export PATH="${KEEP_BINDIR:?KEEP_BINDIR not set}:$PATH"
# test tools and LD_PRELOAD libraries built from tests/tools, tests/preload
export KEEP_TOOLDIR="${KEEP_TOOLDIR:-${KEEP_BINDIR%/bin}/tools}"
# Diagnostics without the time (lib/platform/log.h: log.timestamps' default, auto,
# would put one first on every stderr line written to a file): tests
# compare whole lines. tests/bats/0750-logs.bats tests the default.
export KEEP_LOG_TIMESTAMPS=never
# Leak checks (LeakSanitizer) run where a leak can grow or hide: in every
# process a test starts in the background (start_bg: the daemons, the
# agents and everything they start), in the files about error paths
# (leak_checks: 0800, 0810, ...), in the unit tests and under valgrind
# (0830). Not in every one-shot command a test runs or polls: the check
# at exit cost 50 ms of CPU per process (more than the command itself),
# and the suite's thousands of store reads and polls, run side by side,
# kept both cores busy with it (docs/testing.md "Running the suite").
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:exitcode=99}"
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

# wait_for SECONDS CMD... : poll CMD until it succeeds (every 0.1 s, then
# less often: below); fail after
# SECONDS x KEEP_TEST_WAIT_SCALE (default 3). The limit bounds a wait for an
# event, it is not what a test asserts (a test that asserts a duration does
# it on a time the product printed, or with a named tolerance): on a
# loaded machine (a load average of 20 on 2 cores, a CPU hog beside the
# suite) the start of a sanitizer-built agent took over 20 s, and a
# failing test only fails later.
wait_for() {
	local limit=$(($1 * ${KEEP_TEST_WAIT_SCALE:-3})); shift
	local end=$(( $(now_ms) + limit * 1000 ))
	local n=0
	until "$@" >/dev/null 2>&1; do
		if [ "$(now_ms)" -ge "$end" ]; then
			echo "wait_for: timed out after ${limit}s: $*" >&2
			return 1
		fi
		# every 0.1 s for the first half second, 0.25 s up to 2 s, then
		# 0.5 s: a poll of `keep-agent status` costs three sanitizer-built
		# commands, and ten a second kept a core busy while a test waited
		# for a start check of several seconds (docs/testing.md)
		n=$((n + 1))
		if [ "$n" -le 5 ]; then
			sleep 0.1
		elif [ "$n" -le 11 ]; then
			sleep 0.25
		else
			sleep 0.5
		fi
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
		# leak-checked at exit; an agent's whole tree (its one-shot
		# children too) only in the files about the agent (agent_leak_checks)
		if [ "$1" != keep-agent ] || [ -n "${KEEP_TEST_AGENT_LEAKS:-}" ]; then
			export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=1"
		fi
		"$@" >"$d/$n.out" 2>"$d/$n.err" &
		echo $! >"$d/$n.pid"
		rc=0
		wait $! || rc=$?
		echo $rc >"$d/$n.rc"
	) 3>&- &
	echo "$n" >>"$d/.bg"
	wait_for 10 test -s "$d/$n.pid"
}

# agent_leak_checks : (at the top of a file about keep-agent) an agent that
# start_bg starts is leak-checked with every process it starts: the
# daemons and the one-shot commands of its ticks and its status. Elsewhere
# an agent is scenery, and its daemons and one-shots are checked where a
# test starts them itself (each check at exit costs 40 ms of CPU).
agent_leak_checks() {
	export KEEP_TEST_AGENT_LEAKS=1
}

# leak_checks : from here on, every command of this test (or of the file,
# called outside a test) is leak-checked at exit: for the files about error
# paths, where a leak hides
leak_checks() {
	export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=1"
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
	local n p i left kids
	[ -f "$BATS_TEST_TMPDIR/.bg" ] || return 0
	# a failed test: the last lines of what each background process said
	# go with its failure (its directory, with the rest, is deleted)
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		while read -r n; do
			for p in "$BATS_TEST_TMPDIR/$n.err" "$BATS_TEST_TMPDIR/$n.out"; do
				[ -s "$p" ] || continue
				echo "--- ${p##*/}, its last 40 lines:"
				tail -n 40 "$p"
			done
		done <"$BATS_TEST_TMPDIR/.bg"
	fi
	# their descendants too (an agent's children): taken before the stop
	# and again before the SIGKILL (a child started meanwhile), since a
	# child whose parent is gone leaves the tree. None may outlive the
	# test: one still writing into the test's directory made bats's own
	# removal of it fail (hog run 7, 0258 on S3: "Directory not empty")
	kids=
	while read -r n; do
		p=$(cat "$BATS_TEST_TMPDIR/$n.pid" 2>/dev/null) || continue
		kids="$kids $(descendants "$p")"
		kill -TERM "$p" 2>/dev/null || true
	done <"$BATS_TEST_TMPDIR/.bg"
	# up to 0.3 s for them to end, no longer than they take
	for i in $(seq 30); do
		left=
		while read -r n; do
			p=$(cat "$BATS_TEST_TMPDIR/$n.pid" 2>/dev/null) || continue
			if kill -0 "$p" 2>/dev/null; then left=1; break; fi
		done <"$BATS_TEST_TMPDIR/.bg"
		[ -n "$left" ] || break
		sleep 0.01
	done
	while read -r n; do
		p=$(cat "$BATS_TEST_TMPDIR/$n.pid" 2>/dev/null) || continue
		kids="$kids $(descendants "$p")"
		kill -KILL "$p" 2>/dev/null || true
	done <"$BATS_TEST_TMPDIR/.bg"
	for p in $kids; do
		kill -KILL "$p" 2>/dev/null || true
	done
	# and gone (zombies excepted), up to 5 s: a SIGKILL ends a process
	# at once but for one in uninterruptible sleep
	for i in $(seq 500); do
		refute_alive $kids 2>/dev/null && break
		sleep 0.01
	done
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

# hand_fence ID : fence nodes/ID as an operator does (`lease-fence ID`: one
# process that reads the object and writes the fence If-Match that read,
# and decides again on a conflict: a renewal lands every second, and on a
# loaded machine three keep-store commands in a row took longer than that
# every time for 20 s)
hand_fence() {
	local i rc
	for i in 1 2 3 4 5; do
		rc=0
		lease-fence "$1" >/dev/null 2>&1 || rc=$?
		[ "$rc" -eq 0 ] && return 0
		[ "$rc" -eq 111 ] || break # 111: 5 fences that did not land, again
	done
	echo "hand_fence $1: lease-fence exit $rc" >&2
	return 1
}

# uptime_ms : the boot clock in ms (CLOCK_BOOTTIME, the clock of the lease
# state file's valid_until_ms and live_since_ms), from /proc/uptime without
# starting a program: truncated to 10 ms (never ahead of the clock)
uptime_ms() {
	local up _
	read -r up _ </proc/uptime
	echo $((10#${up//[!0-9]/} * 10))
}
uptime_at_least() { [ "$(uptime_ms)" -ge "$1" ]; }

# state_mono NODE FILE : updated_mono_ms of NODE's watch or fence state file
# (node-watch --follow writes `watch` after each listing, lease-fence
# --stdin writes `fence` once a period; docs/formats.md), 0 when absent
state_mono() {
	local v
	v=$(sed -n 's/.* updated_mono_ms=\([0-9]*\).*/\1/p' "$STATE_DIR/$1/$2" 2>/dev/null)
	echo "${v:-0}"
}
state_mono_ge() { [ "$(state_mono "$1" "$2")" -ge "$3" ]; }
# watched_past NODE BOOT_MS [SECONDS] : wait until NODE's node-watch wrote
# its watch state after a listing begun at BOOT_MS or later (boot clock):
# what it prints about a time up to BOOT_MS, it has printed. (A listing
# ends before the state is written, and begins at most a write period and
# an attempt earlier: BOOT_MS + 1800 at the test timings.)
watched_past() {
	wait_for "${3:-20}" state_mono_ge "$1" watch $(($2 + 1800))
}

# now_ms : wall clock in ms
# (bash's EPOCHREALTIME, microseconds: no process started, which counts in
# the polling loops of a dozen tests running at once)
now_ms() {
	local t=${EPOCHREALTIME//[!0-9]/}
	echo $((t / 1000))
}

# mono_ms : keep's steady clock in ms (CLOCK_BOOTTIME, lib/platform/clock.h; lease
# state files hold its times)
mono_ms() { "$KEEP_TOOLDIR/clocks" | sed 's/.* keep_boot_ms=\([0-9]*\).*/\1/'; }

# fencer_ready NODE [MS] : wait until NODE's lease (its lease-write live)
# has been live for MS (default 1800 = write_every + attempt_timeout at
# keep_setup's timings). Before that, lease-fence --stdin answers every
# stale line `rewatch ... reason=watch-too-short` (ADR 0020 §2: a full
# watch counted from the fencer's own live_since; docs/fencing.md).
fencer_ready() {
	local f="$STATE_DIR/$1/lease" ms=${2:-1800} since
	wait_for 20 grep -Eq '^live_since_ms [1-9]' "$f" || return 1
	since=$(sed -n 's/^live_since_ms //p' "$f")
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

# ---- the S3 fault proxy (tests/tools/s3proxy.c; docs/testing.md) -----------
# A test on the S3 pass puts s3proxy between keep and the real server:
#   require_s3                       skip unless KEEP_TEST_STORE=s3 (the fs pass)
#   keep_setup; start_proxy          every keep command of the test now goes
#                                    through the proxy (AWS_ENDPOINT_URL_S3)
#   proxy_rule 'put nodes/ lose count=1' 'get * delay 200'
#   proxy_faults_count [ACTION [OP]] faults injected so far
#   proxy_log_count TYPE [FIELD=VALUE...]  lines of the fault log
#   proxy_wait SECONDS N TYPE [FIELD=VALUE...]  until N such lines are logged
#   s3_direct CMD...                 CMD against the real server, not the proxy
#   stop_proxy                       SIGTERM; it must exit 0 (no leak report)

# require_s3 : skip this test on the fs pass (it needs the real S3 server).
require_s3() {
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] ||
		skip "${1:-the S3 fault proxy sits in front of the real S3 server: S3 pass only}"
}

# start_proxy [NAME] : start s3proxy (background process NAME, default
# "proxy") in front of $S3_ENDPOINT, rules in $PROXY_RULES (empty: no
# faults), fault log in $PROXY_LOG, the store prefix of $STORE_URL stripped
# from keys (rules name keep's keys: nodes/n1, owners/...). Exports
# PROXY_PORT, PROXY_URL, and AWS_ENDPOINT_URL_S3=$PROXY_URL so every keep
# command of the test goes through it. Call after keep_setup.
start_proxy() {
	local n=${1:-proxy} prefix
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] || {
		echo "start_proxy: needs KEEP_TEST_STORE=s3 (call require_s3 first)" >&2
		return 1
	}
	prefix=${STORE_URL#s3://}
	case $prefix in */*) prefix=${prefix#*/} ;; *) prefix= ;; esac
	PROXY_RULES="$BATS_TEST_TMPDIR/$n.rules"
	PROXY_LOG="$BATS_TEST_TMPDIR/$n.log"
	: >"$PROXY_RULES"
	: >"$PROXY_LOG"
	start_bg "$n" "$KEEP_TOOLDIR/s3proxy" -u "$S3_ENDPOINT" -r "$PROXY_RULES" \
		-l "$PROXY_LOG" ${prefix:+-k "$prefix"}
	wait_line 10 "$n" '^listening port=[0-9]+ ' || return 1
	PROXY_PORT=$(sed -n 's/^listening port=\([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/$n.out")
	PROXY_URL="http://127.0.0.1:$PROXY_PORT"
	PROXY_NAME=$n
	export PROXY_NAME PROXY_RULES PROXY_LOG PROXY_PORT PROXY_URL AWS_ENDPOINT_URL_S3="$PROXY_URL"
}

# proxy_rule [RULE...] : replace the proxy's rules with these lines (none:
# no faults). The syntax is checked first (s3proxy -n); the file is
# replaced by a rename, so the proxy never reads half of it. Counts start
# afresh with every change.
proxy_rule() {
	local tmp="$PROXY_RULES.tmp"
	if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$tmp"; else : >"$tmp"; fi
	"$KEEP_TOOLDIR/s3proxy" -n -r "$tmp" >/dev/null || {
		rm -f "$tmp"
		return 1
	}
	mv -f "$tmp" "$PROXY_RULES"
}

# proxy_log_count TYPE [FIELD=VALUE...] : lines of the fault log of TYPE
# (fault, forwarded, unsent) carrying every FIELD=VALUE given.
proxy_log_count() {
	local type=$1
	shift
	awk -v type="$type" -v want="$*" '
	BEGIN { nw = split(want, w, " ") }
	$1 == type {
		for (i = 1; i <= nw; i++) {
			hit = 0
			for (j = 2; j <= NF; j++) if ($j == w[i]) { hit = 1; break }
			if (!hit) next
		}
		n++
	}
	END { print n + 0 }' "$PROXY_LOG"
}

# proxy_faults_count [ACTION [OP]] : faults injected so far (of ACTION, on OP).
proxy_faults_count() {
	proxy_log_count fault ${1:+"action=$1"} ${2:+"op=$2"}
}

# proxy_wait SECONDS N TYPE [FIELD=VALUE...] : wait until the fault log has
# at least N such lines (proxy_log_count); fail after SECONDS.
proxy_wait() {
	local secs=$1
	shift
	wait_for "$secs" _proxy_log_ge "$@"
}
_proxy_log_ge() {
	local n=$1
	shift
	[ "$(proxy_log_count "$@")" -ge "$n" ]
}

# s3_direct CMD... : run CMD against the real server, bypassing the proxy.
s3_direct() {
	AWS_ENDPOINT_URL_S3="$S3_ENDPOINT" "$@"
}

# stop_proxy : SIGTERM the proxy; it must exit 0 within 15 s (an ASan leak
# report would make it 99). Later commands go to the real server again.
stop_proxy() {
	local p rc
	p=$(bg_pid "$PROXY_NAME")
	kill -TERM "$p"
	rc=$(wait_exit 15 "$PROXY_NAME") || return 1
	export AWS_ENDPOINT_URL_S3="$S3_ENDPOINT"
	[ "$rc" = 0 ] || {
		echo "stop_proxy: s3proxy exited $rc" >&2
		cat "$BATS_TEST_TMPDIR/$PROXY_NAME.err" >&2
		return 1
	}
}
