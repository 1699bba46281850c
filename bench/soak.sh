#!/usr/bin/env bash
# bench/soak.sh — the soak test: 3 keep-agents, >= 100 actors acquired,
# written and released, host events (kills, stops, suspends, wall-clock
# steps) on a random node every few tens of seconds; then an audit.
# docs/testing.md, "Soak".
#
#   bash bench/soak.sh                 10 minutes on the fs store, kills
#   SOAK_SECONDS=1800 bash bench/soak.sh
#   SOAK_EVENTS=kill-agent,kill-node,stop,suspend,step bash bench/soak.sh
#   SOAK_STORE=s3 bash bench/soak.sh   on $S3_ENDPOINT / $S3_BUCKET (S3_ACCESS_KEY,
#                                      S3_SECRET_KEY, S3_REGION), e.g. after
#                                      eval "$(bash scripts/s3-server.sh start DIR PORT)"
#
# Environment: SOAK_SECONDS (600), SOAK_ACTORS (120), SOAK_EVENT_EVERY (an
# event every 0.5x..1.5x this many seconds; SOAK_KILL_EVERY, its former
# name, or 30), SOAK_ROUNDS (0; N: the soak goes on past SOAK_SECONDS until
# every kind of SOAK_EVENTS happened at least N times, at most until
# 3 x SOAK_SECONDS: what a short soak in a test asserts), SOAK_MIN_WRITES
# and SOAK_MIN_ACQUISITIONS (0; with SOAK_ROUNDS, the soak also goes on
# until the workers made that many acknowledged writes and new
# acquisitions, and every action of SOAK_FAULTS fired once: the work a
# test asserts on is done however slow the machine, within the same
# 3 x SOAK_SECONDS), SOAK_HOLDS (12: most holds a worker keeps at once), SOAK_DIR
# (a new temp dir; kept), KEEP_BINDIR (build/rel/bin), SOAK_STORE (fs | s3).
#
# Host events (SOAK_EVENTS, comma-separated; default kill-agent,kill-node),
# each on a random node, in rounds that hold every kind once in a random
# order:
#   kill-agent  kill -9 of the keep-agent's pid alone (no process-group kill:
#               its children must end by themselves, lib/driver/supervise.h); the
#               worker goes on (its checks must start failing)
#   kill-node   kill -9 of every process of the node at once (frozen with
#               SIGSTOP first, so none sees the others die: a crash, no
#               `released` written)
#   stop        SIGSTOP of the node's whole agent tree (the agent and every
#               descendant) for SOAK_STOP_MS (3000-8000: longer than the
#               validity, ttl - safety = 2400), then SIGCONT; the worker
#               goes on
#   suspend     the host sleeps: every process of the node (agent tree and
#               worker) stopped for SOAK_SUSPEND_MS (1500-8000), then the
#               node's CLOCK_MONOTONIC set back by the time it slept (the
#               clock shim, below) and SIGCONT: boot and wall clocks went
#               on, the monotonic clock did not, as in a real suspend; no
#               process of the node is restarted while it sleeps
#   step        the node's wall clock steps by +-SOAK_STEP_MS (1000-30000,
#               the sign drawn), and SOAK_STEP_HOLD_MS (2000-8000) later
#               steps back (the correction): two steps of the realtime
#               offset alone
# (A-B: a value drawn uniformly in ms.) With suspend or step in SOAK_EVENTS
# every keep process of node N runs under tests/preload/clockshim.c
# (SOAK_SHIM, default KEEP_BINDIR/../tools/clockshim.so) with the offsets
# file $SOAK_DIR/clock/N: the agent and the worker's keep commands get
# LD_PRELOAD and KEEP_CLOCKSHIM_FILE in their environment (the agent passes
# it to every child). The soak checks at the start that the shim shifts a
# program run that way (tests/tools/clocks), and at every host event that
# each keep process of the node has it mapped (and that the worker's bash,
# which dates the app log, has not: the audit's times are the true time);
# a process without it is a violation. Events go to $SOAK_DIR/log/events
# ("T_us NODE KIND details", T after the event was made; a step's
# correction is a line step-back, not counted as an event).
#
# Network faults (S3 only): SOAK_FAULTS holds s3proxy rules (docs/testing.md,
# "The S3 fault proxy"), separated by ';' or newlines, or names a rules
# file, e.g.
#   SOAK_STORE=s3 SOAK_FAULTS='put nodes/ lose p=0.02; get * error 503 p=0.01' \
#       bash bench/soak.sh
# Every keep process of the soak then reaches the server through
# tests/tools/s3proxy (SOAK_PROXY, default KEEP_BINDIR/../tools/s3proxy;
# SOAK_SEED seeds its p= draws; SOAK_S3_TIMEOUT_MS sets the nodes'
# s3.timeout_ms, so a `late` hold can outlast it); the rules are cleared when the soak stops,
# before the clean stops and the audit. Faults injected are logged in
# $SOAK_DIR/log/faults.
#
# Besides the summary line, it writes $SOAK_DIR/soak.csv, one row a minute
# from the agents' start: minute,seconds,acquisitions,releases,writes,kills,
# faults,lost_holds,kill_agent,kill_node,stops,suspends,steps (seconds: how
# much of that minute the soak ran; kills = kill_agent + kill_node), and a
# second line "soak-report minutes=… faults=… csv=…".
# `bench/plot-soak CSV PNG` draws the CSV.
#
# Each node N is a keep-agent (node id sN; started plainly, no setsid, restarted
# 1 s after it ends, as systemd would) and an app worker. The worker loops:
# pick a random actor t/soak/aNNN; not held: owner-acquire it (a hold at
# generation G); held: write 1..3 segments wal/t/soak/aNNN/G/SEQ, each with
# `keep-store put --if-none-match` and only right after `owner-check KEY G`
# passed; sometimes owner-release it. Every step is logged with a
# microsecond time of the worker's own bash (never under the clock shim) in
# the worker's app log:
#   acq ACTOR GEN NODE T NEW    acquired (T after owner-acquire returned; NEW
#                               no: this node's existing grant handed back)
#   chk ACTOR GEN NODE T        owner-check passed (T before it was run)
#   ack ACTOR GEN SEQ NODE T    segment put acknowledged
#   lost|rel ACTOR GEN NODE T   the check failed / released
# SOAK_BREAK=no-check breaks the worker on purpose: it logs `chk` without
# running owner-check (docs/testing.md: what the audit says then).
#
# The audit: no two holds of one actor overlapping in time (hold = from its
# acq to its last passing chk), no generation acquired twice, generations of
# an actor growing in acquisition order (a grant handed back to the node
# that holds it, `new=no`, is the same hold), every acknowledged segment present
# in the store (and no segment from a generation never acquired, no
# If-None-Match conflict on a segment), no process of a killed agent
# still running a period + 2 s after its kill, none of any node after the stop, the
# clock shim where it must be (above), and no stale check: a hold acquired
# before a host event that ends the node's holds (a kill; a stop or suspend
# longer than the validity; a step beyond lease.clock_step_ms, either way)
# passes no owner-check that starts more than the validity (ttl - safety)
# after the event: no lease write sent after it may make such a hold valid.
# Prints the counts; exit 0 only with no violation.
# shellcheck disable=SC2317 # the worker's functions run through bash -c, cleanup by a trap
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_TOTAL=${SOAK_SECONDS:-600}
ACTORS=${SOAK_ACTORS:-120}
EVENT_EVERY=${SOAK_EVENT_EVERY:-${SOAK_KILL_EVERY:-30}}
MAX_HOLDS=${SOAK_HOLDS:-12}
BIN=${KEEP_BINDIR:-$ROOT/build/rel/bin}
STORE_KIND=${SOAK_STORE:-fs}
EVENTS=${SOAK_EVENTS:-kill-agent,kill-node}
STOP_MS=${SOAK_STOP_MS:-3000-8000}
SUSPEND_MS=${SOAK_SUSPEND_MS:-1500-8000}
STEP_MS=${SOAK_STEP_MS:-1000-30000}
STEP_HOLD_MS=${SOAK_STEP_HOLD_MS:-2000-8000}
BREAK=${SOAK_BREAK:-}
ROUNDS=${SOAK_ROUNDS:-0}
MIN_WRITES=${SOAK_MIN_WRITES:-0}
MIN_ACQ=${SOAK_MIN_ACQUISITIONS:-0}
NODES="s1 s2 s3"

for b in keep-agent lease-write owner-acquire owner-release owner-check keep-store; do
	[ -x "$BIN/$b" ] || {
		echo "soak: $BIN/$b missing (make rel, or set KEEP_BINDIR)" >&2
		exit 100
	}
done
usage_error() {
	echo "soak: $*" >&2
	exit 100
}
# the kinds of host events, and whether the clock shim is needed
KINDS=()
SHIM=
IFS=, read -r -a _ev <<<"$EVENTS"
for k in "${_ev[@]}"; do
	case $k in
	kill-agent | kill-node | stop) KINDS+=("$k") ;;
	suspend | step)
		KINDS+=("$k")
		SHIM=${SOAK_SHIM:-$BIN/../tools/clockshim.so}
		;;
	*) usage_error "SOAK_EVENTS: unknown event '$k' (kill-agent, kill-node, stop, suspend, step)" ;;
	esac
done
[ "${#KINDS[@]}" -gt 0 ] || usage_error "SOAK_EVENTS names no event"
for r in "SOAK_STOP_MS=$STOP_MS" "SOAK_SUSPEND_MS=$SUSPEND_MS" "SOAK_STEP_MS=$STEP_MS" \
	"SOAK_STEP_HOLD_MS=$STEP_HOLD_MS"; do
	[[ ${r#*=} =~ ^[0-9]+(-[0-9]+)?$ ]] || usage_error "${r%%=*} wants MS or MIN-MAX (ms), not '${r#*=}'"
done
[[ $ROUNDS =~ ^[0-9]+$ ]] || usage_error "SOAK_ROUNDS wants a count, not '$ROUNDS'"
[[ $SECONDS_TOTAL =~ ^[0-9]+$ ]] || usage_error "SOAK_SECONDS wants seconds, not '$SECONDS_TOTAL'"
case $BREAK in '' | no-check) ;; *) usage_error "SOAK_BREAK: unknown break '$BREAK' (no-check)" ;; esac
if [ -n "$SHIM" ] && [ ! -r "$SHIM" ]; then
	echo "soak: $SHIM missing (make rel builds it, or set SOAK_SHIM)" >&2
	exit 100
fi
DIR=${SOAK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/keep-soak.XXXXXX")}
mkdir -p "$DIR/state" "$DIR/log" "$DIR/clock"
export KEEP_BINDIR=$BIN PATH="$BIN:$PATH"

case $STORE_KIND in
fs)
	mkdir -p "$DIR/bucket"
	STORE="file://$DIR/bucket"
	;;
s3)
	: "${S3_ENDPOINT:?SOAK_STORE=s3 needs S3_ENDPOINT}" "${S3_ACCESS_KEY:?}" "${S3_SECRET_KEY:?}"
	STORE="s3://${S3_BUCKET:-keep-test}/soak-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
	export AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY"
	export AWS_REGION="${S3_REGION:-us-east-1}" AWS_ENDPOINT_URL_S3="$S3_ENDPOINT"
	# the bucket, created unless it exists (as tests/run-all.sh does)
	code=$(curl -s -o /dev/null -w '%{http_code}' -m 20 -X PUT \
		--aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/${S3_BUCKET:-keep-test}") || code=000
	case $code in
	200 | 409) ;;
	*)
		echo "soak: unable to create the bucket '${S3_BUCKET:-keep-test}' on $S3_ENDPOINT: HTTP $code" >&2
		exit 111
		;;
	esac
	;;
*)
	echo "soak: SOAK_STORE must be fs or s3" >&2
	exit 100
	;;
esac

# one config per node: short timings (as the end-to-end tests) so fences and
# hand-overs happen within seconds of a kill
TTL_MS=3000 GRACE_MS=1500 SAFETY_MS=600 SKEW_MS=300 PERIOD_MS=1000
VALIDITY_MS=$((TTL_MS - SAFETY_MS)) # how long a write keeps the lease valid
STEP_SEEN_MS=$((SKEW_MS / 2))        # lease.clock_step_ms's default
for n in $NODES; do
	cat >"$DIR/$n.yaml" <<YAML
node_id: $n
store: $STORE
state_dir: $DIR/state
lease:
  ttl_ms: $TTL_MS
  grace_ms: $GRACE_MS
  safety_ms: $SAFETY_MS
  max_skew_ms: $SKEW_MS
  heartbeat_period_ms: $PERIOD_MS
YAML
done

now_us() { echo "${EPOCHREALTIME/./}"; }
log() { echo "soak: $*" >&2; }

# ---- the clock shim: each node's offsets, and how its processes get it ----------
# Offsets (ms) now in force per node; the file $DIR/clock/N says the same.
declare -A MONO=() REAL=()
for n in $NODES; do
	MONO[$n]=0
	REAL[$n]=0
	: >"$DIR/clock/$n"
done
# clock_set NODE : write NODE's offsets (by rename: its processes see them
# at their next clock read)
clock_set() {
	printf 'monotonic_ms %d\nrealtime_ms %d\n' "${MONO[$1]}" "${REAL[$1]}" >"$DIR/clock/$1.tmp"
	mv -f "$DIR/clock/$1.tmp" "$DIR/clock/$1"
}
# SHIM_ENV: the environment a process of a node starts with (after
# KEEP_CLOCKSHIM_FILE=...); empty without the shim. The sanitizer build
# wants verify_asan_link_order=0 with a preload.
SHIM_ENV=()
if [ -n "$SHIM" ]; then
	SHIM=$(cd "$(dirname "$SHIM")" && pwd -P)/$(basename "$SHIM")
	SHIM_ENV=("LD_PRELOAD=$SHIM${LD_PRELOAD:+:$LD_PRELOAD}"
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
fi
# on_node NODE CMD... : CMD as a process of NODE (exec'd by env: the pid of
# a background `on_node ... &` is not CMD's, so start the agent with
# node_cmd's array instead)
node_cmd() { # NODE : sets NODE_CMD, the prefix that runs a command as NODE's
	NODE_CMD=()
	[ -n "$SHIM" ] && NODE_CMD=(env "KEEP_CLOCKSHIM_FILE=$DIR/clock/$1" "${SHIM_ENV[@]}")
	return 0
}

# The shim must shift what a process started as the worker starts its
# commands (k, below) reads: a probe offset of one hour on
# tests/tools/clocks, against a plain run; and the dynamic loader must
# load it into each keep command the worker runs (LD_DEBUG=libs). The
# agent's children are checked while they run (shim_check).
shim_probe() {
	local clocks=$BIN/../tools/clocks plain shifted d prog NODE=probe
	[ -n "$SHIM" ] || return 0
	for prog in owner-acquire owner-check owner-release keep-store; do
		k env LD_DEBUG=libs "$prog" --help 2>&1 >/dev/null | grep -qF "calling init: $SHIM" || {
			echo "soak: the clock shim $SHIM is not loaded into $prog as the worker runs it" >&2
			exit 111
		}
	done
	if [ ! -x "$clocks" ]; then
		log "$clocks missing (make rel builds it): the clock shim's offsets are not probed"
		return 0
	fi
	printf 'realtime_ms 3600000\nmonotonic_ms -3600000\n' >"$DIR/clock/probe"
	plain=$("$clocks" | sed -n 's/.* realtime_ms=\([0-9]*\).*/\1/p')
	shifted=$(k "$clocks" | sed -n 's/.* realtime_ms=\([0-9]*\).*/\1/p')
	rm -f "$DIR/clock/probe"
	d=$((${shifted:-0} - ${plain:-0} - 3600000))
	if [ "${d#-}" -gt 5000 ]; then
		echo "soak: the clock shim $SHIM does not shift a node's clocks (a probe of +3600000 ms read $((d + 3600000)) ms)" >&2
		exit 111
	fi
	log "clock shim $SHIM: loaded into owner-acquire, owner-check, owner-release, keep-store; a probe of +3600000 ms read +$((d + 3600000)) ms"
}

# ---- network faults (SOAK_FAULTS) and the per-minute report ----------------------
PROXY_BIN=${SOAK_PROXY:-$BIN/../tools/s3proxy}

# soak_net_start: note the start; with SOAK_FAULTS, start the fault proxy in
# front of $S3_ENDPOINT and point every keep process at it.
soak_net_start() {
	local port="" end n
	now_us >"$DIR/log/t0"
	if [ -n "${SOAK_S3_TIMEOUT_MS:-}" ]; then
		for n in $NODES; do printf 's3:\n  timeout_ms: %s\n' "$SOAK_S3_TIMEOUT_MS" >>"$DIR/$n.yaml"; done
	fi
	[ -n "${SOAK_FAULTS:-}" ] || return 0
	if [ "$STORE_KIND" != s3 ]; then
		echo "soak: SOAK_FAULTS needs SOAK_STORE=s3 (the fault proxy fronts the S3 server)" >&2
		exit 100
	fi
	if [ ! -x "$PROXY_BIN" ]; then
		echo "soak: $PROXY_BIN missing (make rel builds it, or set SOAK_PROXY)" >&2
		exit 100
	fi
	if [ -f "$SOAK_FAULTS" ]; then
		cp "$SOAK_FAULTS" "$DIR/faults.rules"
	else
		printf '%s\n' "$SOAK_FAULTS" | tr ';' '\n' >"$DIR/faults.rules"
	fi
	"$PROXY_BIN" -n -r "$DIR/faults.rules" >/dev/null || exit 100
	cp "$DIR/faults.rules" "$DIR/faults.rules.run"
	"$PROXY_BIN" -u "$S3_ENDPOINT" -r "$DIR/faults.rules.run" -l "$DIR/log/faults" \
		-k "${STORE#s3://*/}" ${SOAK_SEED:+-s "$SOAK_SEED"} \
		>"$DIR/log/proxy.out" 2>"$DIR/log/proxy.err" &
	echo $! >"$DIR/proxy.pid"
	end=$((SECONDS + 10))
	while [ -z "$port" ]; do
		port=$(sed -n 's/^listening port=\([0-9]*\) .*/\1/p' "$DIR/log/proxy.out")
		[ -n "$port" ] && break
		if [ $SECONDS -ge $end ] || ! kill -0 "$(cat "$DIR/proxy.pid")" 2>/dev/null; then
			echo "soak: the fault proxy did not start: $(cat "$DIR/log/proxy.err")" >&2
			exit 111
		fi
		sleep 0.1
	done
	export AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port"
	log "faults through s3proxy on 127.0.0.1:$port: $(grep -cvE '^[[:space:]]*(#|$)' "$DIR/faults.rules") rule(s), $(sed -n 's/.* seed=//p' "$DIR/log/proxy.out" | head -n 1) seed"
}

# soak_net_stop_faults: the soak is stopping: no more faults (the rules file
# is emptied by a rename, the proxy re-reads it on its next request)
soak_net_stop_faults() {
	now_us >"$DIR/log/t1"
	[ -s "$DIR/proxy.pid" ] || return 0
	: >"$DIR/faults.rules.tmp"
	mv -f "$DIR/faults.rules.tmp" "$DIR/faults.rules.run"
}

# soak_proxy_stop: SIGTERM the proxy and wait; its exit status (0 expected)
soak_proxy_stop() {
	local p rc=0
	[ -s "$DIR/proxy.pid" ] || return 0
	p=$(cat "$DIR/proxy.pid")
	rm -f "$DIR/proxy.pid"
	kill -TERM "$p" 2>/dev/null
	wait "$p" 2>/dev/null || rc=$?
	return $rc
}

# soak_report: $DIR/soak.csv (one row a minute) and the line
# "soak-report minutes=N faults=N faults_forwarded=N fault_actions=A:N,… csv=PATH";
# non-zero when the fault proxy did not exit 0.
soak_report() {
	local t0 t1 prc=0 csv="$DIR/soak.csv"
	t0=$(cat "$DIR/log/t0")
	t1=$(cat "$DIR/log/t1" 2>/dev/null || now_us)
	soak_proxy_stop || prc=$?
	touch "$DIR/log/faults" "$DIR/log/events"
	awk -v t0="$t0" -v t1="$t1" -v csv="$csv" '
	function minute(us,  m) {
		m = int((us - t0) / 60000000)
		if (m < 0) m = 0
		if (m > last) m = last
		return m
	}
	BEGIN { last = int((t1 - t0 - 1) / 60000000); if (last < 0) last = 0 }
	FILENAME ~ /app\.log$/ {
		if ($1 == "acq" && $6 != "no") acq[minute($5)]++
		else if ($1 == "rel") rel[minute($5)]++
		else if ($1 == "ack") wr[minute($6)]++
		else if ($1 == "lost") lost[minute($5)]++
		next
	}
	FILENAME ~ /events$/ { ev[$3, minute($1)]++; next }
	FILENAME ~ /faults$/ {
		for (i = 2; i <= NF; i++) if ($i ~ /^ms=/) t = substr($i, 4) * 1000
		if ($1 == "fault") {
			f[minute(t)]++; faults++
			for (i = 2; i <= NF; i++) if ($i ~ /^action=/) by[substr($i, 8)]++
		} else if ($1 == "forwarded") fwd++
		next
	}
	END {
		print "minute,seconds,acquisitions,releases,writes,kills,faults,lost_holds,kill_agent,kill_node,stops,suspends,steps" >csv
		for (m = 0; m <= last; m++) {
			s = (t1 - t0) / 1000000 - m * 60
			if (s > 60) s = 60
			ka = ev["kill-agent", m]; kn = ev["kill-node", m]
			printf "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", m, s, acq[m], rel[m], wr[m], ka + kn, f[m], lost[m], \
				ka, kn, ev["stop", m], ev["suspend", m], ev["step", m] >csv
		}
		acts = ""
		for (a in by) acts = acts (acts == "" ? "" : ",") a ":" by[a]
		printf "soak-report minutes=%d faults=%d faults_forwarded=%d fault_actions=%s csv=%s\n", \
			last + 1, faults, fwd, acts == "" ? "-" : acts, csv
	}' "$DIR/app.log" "$DIR/log/events" "$DIR/log/faults"
	if [ "$prc" -ne 0 ]; then
		log "the fault proxy exited $prc (see $DIR/log/proxy.err)"
		return 1
	fi
}

# ---- a node: keep-agent under a restart loop ---------------------------------
# The agent's pid is in $DIR/sN.agent (it is killed by that pid alone). While
# $DIR/sN.asleep exists (a suspend) nothing of the node is (re)started.
asleep_wait() { while [ -e "$DIR/$1.asleep" ]; do sleep 0.1; done; }
supervise_agent() { # NODE
	local n=$1 rc
	node_cmd "$n"
	while [ ! -e "$DIR/stop" ]; do
		asleep_wait "$n"
		"${NODE_CMD[@]}" keep-agent -c "$DIR/$n.yaml" >>"$DIR/log/$n.agent.out" 2>>"$DIR/log/$n.agent.err" &
		echo $! >"$DIR/$n.agent"
		wait $!
		rc=$?
		echo "$(now_us) $rc" >>"$DIR/log/$n.agent.exits"
		[ -e "$DIR/stop" ] && break
		sleep 1
	done
}

# ---- the app worker of a node --------------------------------------------------
# Its bash is not under the clock shim (its times are the audit's: true
# time); each keep command it runs is, through k.
k() {
	if [ -n "$SHIM" ]; then
		env "KEEP_CLOCKSHIM_FILE=$DIR/clock/$NODE" "${SHIM_ENV[@]}" "$@"
	else
		"$@"
	fi
}
# owner_check KEY GEN : owner-check (SOAK_BREAK=no-check: passes, unrun)
owner_check() {
	[ "$BREAK" = no-check ] && return 0
	k owner-check "$@"
}
worker() { # NODE
	local n=$1 a i out rc t fresh gen seq
	declare -A held=()
	export KEEP_CONFIG="$DIR/$n.yaml"
	NODE=$n
	exec 3>>"$DIR/log/app-$n.log"
	while [ ! -e "$DIR/stop" ]; do
		a=$(printf 't/soak/a%03d' $((RANDOM % ACTORS)))
		if [ -z "${held[$a]:-}" ] && [ "${#held[@]}" -ge "$MAX_HOLDS" ]; then
			for i in "${!held[@]}"; do a=$i; break; done # full: work on (and maybe release) a hold
		fi
		if [ -n "${held[$a]:-}" ]; then
			read -r gen seq <<<"${held[$a]}"
			for ((i = 1 + RANDOM % 3; i > 0; i--)); do
				t=$(now_us)
				if ! owner_check "$a" "$gen" >/dev/null 2>&1; then
					echo "lost $a $gen $n $t" >&3
					unset "held[$a]"
					continue 2
				fi
				echo "chk $a $gen $n $t" >&3
				seq=$((seq + 1))
				out=$(printf '%s %s %s\n' "$a" "$gen" "$seq" |
					k keep-store put "wal/$a/$gen/$seq" --if-none-match 2>&1)
				rc=$?
				if [ "$rc" -eq 0 ]; then
					echo "ack $a $gen $seq $n $(now_us)" >&3
				else
					echo "putfail $a $gen $seq $n $rc $(now_us) ${out//$'\n'/ }" >&3
				fi
			done
			held[$a]="$gen $seq"
			if [ $((RANDOM % 3)) -eq 0 ] || [ "${#held[@]}" -ge "$MAX_HOLDS" ]; then
				k owner-release "$a" >/dev/null 2>&1
				echo "rel $a $gen $n $(now_us) $?" >&3
				unset "held[$a]"
			fi
		else
			out=$(k owner-acquire "$a" 2>/dev/null)
			rc=$?
			t=$(now_us)
			case $rc in
			0)
				gen=$(sed -n 's/^acquired .*generation=\([0-9]*\).*/\1/p' <<<"$out")
				fresh=$(sed -n 's/^acquired .*new=\([a-z]*\).*/\1/p' <<<"$out")
				echo "acq $a $gen $n $t $fresh" >&3
				seq=0
				if [ "$fresh" = no ]; then
					# this node's grant handed back (e.g. after a lapse this
					# worker took for a loss): go on after its last segment,
					# as an app reading its own log would
					seq=$(k keep-store list "wal/$a/$gen/" 2>/dev/null |
						sed -n 's|^object key=wal/[^ ]*/\([0-9]*\) .*|\1|p' | sort -n | tail -n 1)
					seq=${seq:-0}
				fi
				held[$a]="$gen $seq"
				;;
			1) echo "busy $a - $n $t" >&3 ;;
			20) echo "unknown $a - $n $t" >&3 ;;
			*)
				echo "acqfail $a - $n $t $rc" >&3
				sleep 0.2 # the lease is not valid (yet): do not spin
				;;
			esac
		fi
	done
}

supervise_worker() { # NODE: restarted at once after a crash kill
	local n=$1
	while [ ! -e "$DIR/stop" ]; do
		asleep_wait "$n"
		setsid bash -c "$(declare -p SHIM_ENV); $(declare -f now_us k owner_check worker)
			DIR='$DIR' ACTORS=$ACTORS MAX_HOLDS=$MAX_HOLDS SHIM='$SHIM' BREAK='$BREAK' worker $n" &
		echo $! >"$DIR/$n.worker"
		wait $!
		sleep 0.5
	done
}

# ---- host events ------------------------------------------------------------------
# alive FILE : the pid in FILE, if that process runs
alive() {
	local p
	p=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
}
# descendants PID : every descendant of PID (children first)
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}
# agent_wait NODE : the node's running agent pid (waits up to 5 s for a
# restart to bring one), or nothing
agent_wait() {
	local i p
	for ((i = 0; i < 50; i++)); do
		p=$(alive "$DIR/$1.agent") && {
			echo "$p"
			return 0
		}
		sleep 0.1
	done
	return 1
}
# freeze ROOT : SIGSTOP ROOT, then its descendants until no new one appears;
# sets FROZEN to every pid stopped
freeze() {
	local q round more
	FROZEN=()
	[ -n "$1" ] || return 0
	kill -STOP "$1" 2>/dev/null || return 0
	FROZEN=("$1")
	for ((round = 0; round < 10; round++)); do
		more=0
		for q in $(descendants "$1"); do
			case " ${FROZEN[*]} " in
			*" $q "*) ;;
			*)
				kill -STOP "$q" 2>/dev/null && FROZEN+=("$q")
				more=1
				;;
			esac
		done
		[ "$more" -eq 1 ] || break
	done
}
# node_pids NODE : the node's processes: the agent tree and the worker's group
node_pids() {
	local p w
	p=$(alive "$DIR/$1.agent") && {
		echo "$p"
		descendants "$p"
	}
	w=$(alive "$DIR/$1.worker") && pgrep -g "$w"
}
# shim_check NODE PIDS... : with the shim, every keep process of NODE among
# PIDS has it mapped; the worker's bash (its group leader) has not. One
# line per process in $DIR/log/shim: "T NODE NAME PID yes|no|loading"
# (loading: caught before the dynamic loader mapped libc, so undecided).
KEEP_PROGS=" keep-agent lease-write upgrade-mark node-watch lease-fence owner-release owner-acquire owner-check keep-store lease-status store-probe "
shim_check() {
	local n=$1 p name has w maps
	[ -n "$SHIM" ] || return 0
	shift
	w=$(alive "$DIR/$n.worker")
	for p in "$@"; do
		name=$(cat "/proc/$p/comm" 2>/dev/null) || continue
		if [ "$p" = "$w" ]; then
			name=worker-bash
		else
			case $KEEP_PROGS in *" $name "*) ;; *) continue ;; esac
		fi
		# a process caught between its exec and the end of the dynamic
		# loader's work (a window of microseconds, ms under load, and
		# held open by a SIGSTOP) has no libc mapped yet: the loader maps
		# LD_PRELOAD's libraries before any DT_NEEDED one, so with libc
		# mapped and the shim not, the shim is missing
		maps=$(cat "/proc/$p/maps" 2>/dev/null) || continue # ended meanwhile
		if [[ $maps == *"$SHIM"* ]]; then
			has=yes
		elif [[ $maps == *"/libc.so"* || $maps == *"/libc-"* ]]; then
			has=no
		else
			has=loading
		fi
		echo "$(now_us) $n $name $p $has" >>"$DIR/log/shim"
	done
}
# rand_ms MIN-MAX | MS : a value drawn in [MIN, MAX]
rand_ms() {
	local lo=${1%-*} hi=${1#*-}
	[ "$hi" -ge "$lo" ] || hi=$lo
	echo $((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
}
# nap SECONDS : a sleep that SIGINT and SIGTERM cut short (bash runs a trap
# only once its foreground command ended: a foreground sleep held a Ctrl-C
# for up to 45 s); cleanup kills the sleep
NAP=
nap() {
	sleep "$1" &
	NAP=$!
	wait "$NAP"
	NAP=
}
ms_sleep() { nap "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
event() { echo "$(now_us) $*" >>"$DIR/log/events"; } # NODE KIND DETAILS
yes_if() { if [ "$@" ]; then echo yes; else echo no; fi; }

# pid_starts PIDS... : "PID:START" for each PID that runs (START: its start
# time, field 22 of /proc/PID/stat, in clock ticks since boot). A pid alone
# does not name a process for long: on a machine that starts about a
# thousand processes and threads a second (the soaks and their neighbours;
# pid_max 32768) the kernel hands a pid out again within a cycle of
# 30 s, and a restarted agent's first `sleep 1` took a killed node-watch's
# pid 1.1 s after the kill (the RGW soak of docs/testing.md "Soak").
pid_starts() {
	local p st
	for p in "$@"; do
		st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f20) || continue
		[ -n "$st" ] && echo "$p:$st"
	done
	return 0
}
# orphans_after "PID:START..." WHAT : none of these processes (the same
# pid and start time) may still run a heartbeat period after a kill (they
# notice within a period, docs/operations.md), plus 2 s for a loaded
# machine's scheduling (the tolerance: a process that lingers is still
# caught, one that ends late by a wake-up is not); zombies are ended
# processes waiting for init. Polled every 100 ms.
orphans=0
orphans_left() { # "PID:START...": the list of those still running, or ''
	local pe st cur left=""
	for pe in $1; do
		cur=$(sed 's/^.*) //' "/proc/${pe%%:*}/stat" 2>/dev/null) || continue
		st=$(echo "$cur" | cut -d' ' -f20)
		[ "$st" = "${pe#*:}" ] || continue # the pid is another process's now
		case $cur in Z*) continue ;; esac
		left="$left ${pe%%:*}"
	done
	echo "$left"
}
orphans_after() {
	local left end
	[ -n "$1" ] || return 0
	end=$(($(date +%s%3N) + PERIOD_MS + 2000))
	while left=$(orphans_left "$1") && [ -n "$left" ] && [ "$(date +%s%3N)" -lt "$end" ]; do
		sleep 0.1
	done
	[ -n "$left" ] || return 0
	left=$(ps -o pid=,stat=,args= -p "$(echo $left | tr ' ' ,)" | grep -v '^ *[0-9]* *Z')
	if [ -n "$left" ]; then
		orphans=$((orphans + 1))
		log "VIOLATION $2: still running $((PERIOD_MS + 2000)) ms after the kill:"
		echo "$left" >&2
	fi
}

ev_kill_agent() { # NODE: the agent's pid alone; its children end by themselves
	local p kids all
	p=$(agent_wait "$1") || {
		log "kill-agent $1: no agent running"
		return 0
	}
	# shellcheck disable=SC2046 # the pids, one word each
	kids=$(pid_starts $(pgrep -P "$p"))
	mapfile -t all < <(descendants "$p")
	shim_check "$1" "$p" "${all[@]}"
	kill -KILL "$p" 2>/dev/null
	event "$1" kill-agent "pid=$p ends_holds=yes"
	orphans_after "$kids" "kill-agent $1: children of the agent"
}

ev_kill_node() { # NODE: every process of it, frozen first (a crash)
	local w all starts
	w=$(alive "$DIR/$1.worker") && kill -STOP -- "-$w" 2>/dev/null
	freeze "$(alive "$DIR/$1.agent")"
	mapfile -t all < <({
		printf '%s\n' "${FROZEN[@]}"
		[ -z "$w" ] || pgrep -g "$w"
	} | grep .)
	shim_check "$1" "${all[@]}"
	starts=$(pid_starts "${all[@]}")
	[ "${#all[@]}" -eq 0 ] || kill -KILL "${all[@]}" 2>/dev/null
	[ -n "$w" ] && kill -KILL -- "-$w" 2>/dev/null
	event "$1" kill-node "processes=${#all[@]} ends_holds=yes"
	orphans_after "$starts" "kill-node $1: processes of the node"
}

ev_stop() { # NODE: SIGSTOP the agent tree, longer than the validity
	local d p t0
	d=$(rand_ms "$STOP_MS")
	p=$(agent_wait "$1") || {
		log "stop $1: no agent running"
		return 0
	}
	freeze "$p"
	t0=$(now_us)
	event "$1" stop "ms=$d processes=${#FROZEN[@]} ends_holds=$(yes_if "$d" -gt "$VALIDITY_MS")"
	shim_check "$1" "${FROZEN[@]}"
	ms_sleep "$d"
	kill -CONT "${FROZEN[@]}" 2>/dev/null
	log "stop $1: ${#FROZEN[@]} processes for $((($(now_us) - t0) / 1000)) ms"
}

ev_suspend() { # NODE: everything stopped, monotonic clock set back after
	local d w t0 slept wg=()
	d=$(rand_ms "$SUSPEND_MS")
	touch "$DIR/$1.asleep"
	t0=$(now_us)
	w=$(alive "$DIR/$1.worker") && kill -STOP -- "-$w" 2>/dev/null
	freeze "$(alive "$DIR/$1.agent")"
	[ -z "$w" ] || mapfile -t wg < <(pgrep -g "$w")
	event "$1" suspend "ms=$d processes=$((${#FROZEN[@]} + ${#wg[@]})) ends_holds=$(yes_if "$d" -gt "$VALIDITY_MS")"
	shim_check "$1" "${FROZEN[@]}" "${wg[@]}"
	ms_sleep "$d"
	slept=$((($(now_us) - t0) / 1000))
	MONO[$1]=$((MONO[$1] - slept))
	clock_set "$1"
	[ "${#FROZEN[@]}" -eq 0 ] || kill -CONT "${FROZEN[@]}" 2>/dev/null
	[ -n "$w" ] && kill -CONT -- "-$w" 2>/dev/null
	rm -f "$DIR/$1.asleep"
	log "suspend $1: slept $slept ms (its monotonic clock now ${MONO[$1]} ms off)"
}

ev_step() { # NODE: the wall clock steps by +-d, and back after a while
	local d h all
	d=$(rand_ms "$STEP_MS")
	h=$(rand_ms "$STEP_HOLD_MS")
	[ $((RANDOM % 2)) -eq 0 ] && d=$((-d))
	REAL[$1]=$((REAL[$1] + d))
	clock_set "$1"
	event "$1" step "ms=$d hold_ms=$h ends_holds=$(yes_if "${d#-}" -gt "$STEP_SEEN_MS")"
	mapfile -t all < <(node_pids "$1")
	shim_check "$1" "${all[@]}"
	ms_sleep "$h"
	REAL[$1]=$((REAL[$1] - d))
	clock_set "$1"
	# the correction is a step too (not counted as an event of its own)
	event "$1" step-back "ms=$((-d)) ends_holds=$(yes_if "${d#-}" -gt "$STEP_SEEN_MS")"
	log "step $1: wall clock $d ms for $h ms, then back"
}

# on any exit (the end, an error, Ctrl-C, SIGTERM): nothing stays stopped
# and nothing the soak started runs on. The restart loops end first (no
# restart after this); the workers run under setsid, in process groups of
# their own that a terminal's Ctrl-C or a SIGTERM of this script does not
# reach, so each is killed by its group; each agent gets its clean stop
# (SIGTERM), and whatever of a node still runs 10 s later is killed; then
# the proxy is stopped. At the normal end all of it is already gone.
pids=()
cleanup() {
	local n w p end left
	touch "$DIR/stop"
	[ -z "$NAP" ] || kill "$NAP" 2>/dev/null
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for n in $NODES; do
		rm -f "$DIR/$n.asleep"
		for p in $(node_pids "$n"); do kill -CONT "$p" 2>/dev/null; done
		w=$(alive "$DIR/$n.worker") && kill -KILL -- "-$w" 2>/dev/null
		p=$(alive "$DIR/$n.agent") && kill -TERM "$p" 2>/dev/null
	done
	end=$((SECONDS + 10))
	while left=$(pgrep -f -- "$DIR/s[123].yaml") && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
	# shellcheck disable=SC2086 # one pid a word
	[ -z "$left" ] || kill -KILL $left 2>/dev/null
	soak_proxy_stop
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- run -------------------------------------------------------------------------
shim_probe
soak_net_start
log "dir $DIR, store $STORE, ${SECONDS_TOTAL} s, $ACTORS actors, an event every ~${EVENT_EVERY} s: ${KINDS[*]}${BREAK:+ (broken on purpose: $BREAK)}"
for n in $NODES; do
	supervise_agent "$n" 2>>"$DIR/log/$n.supervisor" &
	pids+=($!)
done
# wait for the first node to be ready, then start the workers
deadline=$((SECONDS + 60))
until KEEP_CONFIG="$DIR/s1.yaml" keep-agent status >/dev/null 2>&1; do
	[ $SECONDS -lt $deadline ] || {
		log "s1 not ready after 60 s"
		break
	}
	sleep 0.5
done
for n in $NODES; do
	supervise_worker "$n" 2>>"$DIR/log/$n.supervisor" &
	pids+=($!)
done

start=$SECONDS
: >"$DIR/log/events"
bag=()
read -r -a nodes <<<"$NODES"
# more: the soak goes on (SOAK_SECONDS not over, or SOAK_ROUNDS: a kind of
# event happened fewer than ROUNDS times and 3 x SOAK_SECONDS are not over)
more() {
	local k
	[ $((SECONDS - start)) -lt "$SECONDS_TOTAL" ] && return 0
	[ "$ROUNDS" -gt 0 ] && [ $((SECONDS - start)) -lt $((3 * SECONDS_TOTAL)) ] || return 1
	for k in "${KINDS[@]}"; do
		[ "$(awk -v k="$k" '$3 == k' "$DIR/log/events" | wc -l)" -ge "$ROUNDS" ] || return 0
	done
	work_short && return 0
	return 1
}
# work_short: the workers have not yet made SOAK_MIN_WRITES acknowledged
# writes or SOAK_MIN_ACQUISITIONS new acquisitions, or an action named in
# SOAK_FAULTS has not fired yet (a slow, loaded machine does less work in
# the same seconds: a run of CI made 54 writes in 100 s where 147 were
# usual)
work_short() {
	local acts a
	cat "$DIR"/log/app-*.log 2>/dev/null | awk -v w="$MIN_WRITES" -v q="$MIN_ACQ" '
		$1 == "ack" { n++ } $1 == "acq" && $6 != "no" { m++ }
		END { exit !(n + 0 < w || m + 0 < q) }' && return 0
	[ -n "${SOAK_FAULTS:-}" ] || return 1
	acts=$(tr ';' '\n' <<<"$SOAK_FAULTS" | awk 'NF >= 3 { print $3 }' | sort -u)
	for a in $acts; do
		grep -q "^fault .*action=$a\( \|$\)" "$DIR/log/faults" 2>/dev/null || return 0
	done
	return 1
}
while more; do
	wait_s=$((EVENT_EVERY / 2 + RANDOM % (EVENT_EVERY + 1)))
	left=$((SECONDS_TOTAL - (SECONDS - start)))
	[ "$wait_s" -lt "$left" ] || [ "$left" -le 0 ] || wait_s=$left
	nap "$wait_s"
	more || break
	# the next kind: rounds of every kind once, each round shuffled
	if [ "${#bag[@]}" -eq 0 ]; then
		bag=("${KINDS[@]}")
		for ((i = ${#bag[@]} - 1; i > 0; i--)); do
			j=$((RANDOM % (i + 1)))
			x=${bag[i]}
			bag[i]=${bag[j]}
			bag[j]=$x
		done
	fi
	kind=${bag[0]}
	bag=("${bag[@]:1}")
	victim=${nodes[RANDOM % 3]}
	log "$kind $victim at +$((SECONDS - start)) s"
	case $kind in
	kill-agent) ev_kill_agent "$victim" ;;
	kill-node) ev_kill_node "$victim" ;;
	stop) ev_stop "$victim" ;;
	suspend) ev_suspend "$victim" ;;
	step) ev_step "$victim" ;;
	esac
done

ran=$((SECONDS - start)) # the seconds the soak ran (SOAK_ROUNDS may add)
[ "$ROUNDS" -eq 0 ] || [ "$ran" -le "$SECONDS_TOTAL" ] || log "went on to +$ran s (SOAK_ROUNDS=$ROUNDS SOAK_MIN_WRITES=$MIN_WRITES SOAK_MIN_ACQUISITIONS=$MIN_ACQ)"

# ---- stop: workers first, then a clean stop of every agent ----------------------
touch "$DIR/stop"
soak_net_stop_faults
for n in $NODES; do
	w=$(cat "$DIR/$n.worker" 2>/dev/null)
	[ -n "$w" ] && kill -KILL -- "-$w" 2>/dev/null
done
for n in $NODES; do
	p=$(cat "$DIR/$n.agent" 2>/dev/null)
	[ -n "$p" ] && kill -TERM "$p" 2>/dev/null
done
for p in "${pids[@]}"; do
	wait "$p" 2>/dev/null
done
# every process of every node is gone after the clean stops
sleep 1
left=$(pgrep -af -- "$DIR/s[123].yaml" || true)
if [ -n "$left" ]; then
	orphans=$((orphans + 1))
	log "VIOLATION processes left after the stop:"
	echo "$left" >&2
fi

# ---- audit ---------------------------------------------------------------------------
cat "$DIR"/log/app-*.log >"$DIR/app.log" 2>/dev/null
KEEP_CONFIG="$DIR/s1.yaml" keep-store list wal/ >"$DIR/wal.list" || {
	log "unable to list wal/ for the audit"
	exit 111
}
restarts=$(cat "$DIR"/log/*.agent.exits 2>/dev/null | wc -l) # the last 3 are the clean stops
# wall-clock steps lease-write saw (one warning each; docs/lease.md "Clocks")
steps_seen=$(cat "$DIR"/log/*.agent.err 2>/dev/null | grep -c 'warning: the wall clock stepped')
touch "$DIR/log/shim"
# shim_checked: keep processes found with the shim; shim_missing: without it,
# or the worker's bash with it (its times would not be the true time)
shim_checked=$(awk '$3 != "worker-bash" && $5 == "yes"' "$DIR/log/shim" | wc -l)
shim_missing=$(awk '$5 != "loading" && ($3 != "worker-bash") == ($5 == "no")' "$DIR/log/shim" | wc -l)
if [ "$shim_missing" -gt 0 ]; then
	log "VIOLATION the clock shim is not where it must be:"
	awk '$5 != "loading" && ($3 != "worker-bash") == ($5 == "no")' "$DIR/log/shim" | head -n 20 >&2
fi
evcount() { awk -v k="$1" '$3 == k' "$DIR/log/events" | wc -l; }
awk -v restarts="$restarts" -v secs="$ran" -v actors="$ACTORS" -v orphans="$orphans" \
	-v ka="$(evcount kill-agent)" -v kn="$(evcount kill-node)" -v stops="$(evcount stop)" \
	-v suspends="$(evcount suspend)" -v steps="$(evcount step)" -v steps_seen="$steps_seen" \
	-v shim_checked="$shim_checked" -v shim_missing="$shim_missing" -v validity_us="$((VALIDITY_MS * 1000))" '
FNR == 1 { file = FILENAME ~ /wal\.list$/ ? 1 : FILENAME ~ /events$/ ? 2 : 3 } # any may be empty
file == 1 && $1 == "object" { # the listing of wal/
	k = $2; sub(/^key=/, "", k)
	inlist[k] = 1
	n = split(k, p, "/")
	listed++
	if (n == 6) listed_gen[p[2] "/" p[3] "/" p[4] " " p[5]] = 1
	next
}
file == 2 { # host events that end every hold of their node
	for (i = 4; i <= NF; i++) if ($i == "ends_holds=yes") { ne[$2]++; et[$2, ne[$2]] = $1; ek[$2, ne[$2]] = $3 }
	next
}
file == 3 {
	ev = $1; a = $2; g = $3
	if (ev == "acq") {
		acq++
		key = a " " g
		if (key in start) {
			# the same grant handed back to its own node (new=no) is one hold
			if ($6 == "no" && holder[key] == $4) { regrants++; next }
			viol++; print "VIOLATION generation used twice: " a " generation " g " (" holder[key] " and " $4 ")"; next
		}
		start[key] = $5; last[key] = $5; holder[key] = $4
		ng[a]++; gens[a, ng[a]] = g
	} else if (ev == "chk") {
		checks++
		key = a " " g
		if (!(key in start)) { viol++; print "VIOLATION check passed for a hold never acquired: " a " " g; next }
		if ($5 > last[key]) last[key] = $5
		# a hold acquired before a host event that ends holds (its lease
		# ran out, stepped or its agent was killed) passes no check later
		# than the validity after it: no write sent after the event makes
		# it valid again
		n = $4
		for (i = ne[n]; i >= 1 && et[n, i] + validity_us >= $5; i--) ;
		if (i >= 1 && et[n, i] > start[key]) {
			viol++; stale++
			if (stale <= 20) printf "VIOLATION check passed %.0f ms after a %s of %s for a hold acquired before it: %s\n", ($5 - et[n, i]) / 1000, ek[n, i], n, $0
		}
	} else if (ev == "ack") {
		writes++
		acked["wal/" a "/" g "/" $4] = 1
	} else if (ev == "rel") { releases++ }
	else if (ev == "lost") { lost++ }
	else if (ev == "busy") { busy++ }
	else if (ev == "unknown") { unknown++ }
	else if (ev == "acqfail") { acqfail++ }
	else if (ev == "putfail") { putfail++; if ($6 == 1) { viol++; print "VIOLATION segment put refused/conflict: " $0 } }
}
END {
	# per actor, holds in acquisition-time order: generations grow, and a
	# hold starts only after every earlier one made its last passing check
	for (a in ng) {
		m = ng[a]
		for (i = 1; i <= m; i++) srt[i] = gens[a, i]
		for (i = 2; i <= m; i++) { # insertion sort by start time
			x = srt[i]; j = i - 1
			while (j >= 1 && start[a " " srt[j]] > start[a " " x]) { srt[j + 1] = srt[j]; j-- }
			srt[j + 1] = x
		}
		prev_end = 0; prev_g = ""
		for (i = 1; i <= m; i++) {
			key = a " " srt[i]
			if (i > 1 && srt[i] + 0 <= srt[i - 1] + 0) {
				viol++; print "VIOLATION generation not growing: " a " " srt[i] " acquired after " srt[i - 1]
			}
			if (prev_g != "" && start[key] <= prev_end) {
				viol++
				printf "VIOLATION overlapping holds of %s: generation %s (checked until %.0f) and %s (from %.0f)\n", a, prev_g, prev_end, srt[i], start[key]
			}
			if (last[key] > prev_end) { prev_end = last[key]; prev_g = srt[i] }
		}
	}
	for (k in acked) if (!(k in inlist)) { viol++; missing++; print "VIOLATION acknowledged write missing: " k }
	for (k in listed_gen) if (!(k in start)) { viol++; print "VIOLATION segment of a generation never acquired: " k }
	nact = 0; for (a in ng) nact++
	viol += orphans + shim_missing
	printf "soak seconds=%d nodes=3 actors=%d actors_acquired=%d acquisitions=%d regrants=%d releases=%d checks=%d writes=%d segments_listed=%d lost_holds=%d held_elsewhere=%d unknown=%d refused=%d put_failures=%d kills=%d kill_agent=%d kill_node=%d stops=%d suspends=%d steps=%d clock_steps_seen=%d shim_checked=%d agent_exits=%d orphans=%d shim_missing=%d stale_checks=%d missing_writes=%d violations=%d\n", \
		secs, actors, nact, acq - regrants, regrants + 0, releases, checks, writes, listed, lost, busy, unknown, acqfail, putfail, ka + kn, ka, kn, stops, suspends, steps, steps_seen, shim_checked, restarts, orphans, shim_missing, stale, missing, viol
	exit (viol > 0 ? 1 : 0)
}' "$DIR/wal.list" "$DIR/log/events" "$DIR/app.log"
rc=$?
soak_report || { [ "$rc" -ne 0 ] || rc=1; }
log "logs and the store are in $DIR"
exit $rc
