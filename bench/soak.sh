#!/usr/bin/env bash
# bench/soak.sh — the soak test: 3 keep-agents, >= 100 actors acquired,
# written and released, a random node killed with SIGKILL every few tens of
# seconds and restarted; then an audit. docs/testing.md, "Soak".
#
#   bash bench/soak.sh                 10 minutes on the fs store
#   SOAK_SECONDS=1800 bash bench/soak.sh
#   SOAK_STORE=s3 bash bench/soak.sh   on $S3_ENDPOINT / $S3_BUCKET (S3_ACCESS_KEY,
#                                      S3_SECRET_KEY, S3_REGION), e.g. after
#                                      eval "$(bash scripts/s3-server.sh start DIR PORT)"
#
# Environment: SOAK_SECONDS (600), SOAK_ACTORS (120), SOAK_KILL_EVERY (30: a
# kill every 0.5x..1.5x this many seconds), SOAK_HOLDS (12: most holds a
# worker keeps at once), SOAK_DIR (a new temp dir; kept), KEEP_BINDIR
# (build/rel/bin), SOAK_STORE (fs | s3).
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
# faults,lost_holds (seconds: how much of that minute the soak ran), and a
# second line "soak-report minutes=… faults=… csv=…".
# `bench/plot-soak CSV PNG` draws the CSV.
#
# Each node N is a keep-agent (node id sN; started plainly, no setsid, restarted
# 1 s after it ends, as systemd would) and an app worker. The worker loops:
# pick a random actor t/soak/aNNN; not held: owner-acquire it (a hold at
# generation G); held: write 1..3 segments wal/t/soak/aNNN/G/SEQ, each with
# `keep-store put --if-none-match` and only right after `owner-check KEY G`
# passed; sometimes owner-release it. Every step is logged with a
# microsecond wall-clock time in the worker's app log:
#   acq ACTOR GEN NODE T NEW    acquired (T after owner-acquire returned; NEW
#                               no: this node's existing grant handed back)
#   chk ACTOR GEN NODE T        owner-check passed (T before it was run)
#   ack ACTOR GEN SEQ NODE T    segment put acknowledged
#   lost|rel ACTOR GEN NODE T   the check failed / released
# The killer SIGKILLs a random node every few tens of seconds: the
# keep-agent's pid alone (`kill -9 PID`, no process-group kill: its
# children must end by themselves, lib/supervise.h); on odd kills the
# worker goes on (its checks must start failing), on even kills the
# worker's process group is killed too (a node crash).
#
# The audit: no two holds of one actor overlapping in time (hold = from its
# acq to its last passing chk), no generation acquired twice, generations of
# an actor growing in acquisition order (a grant handed back to the node
# that holds it, `new=no`, is the same hold), every acknowledged segment present
# in the store (and no segment from a generation never acquired, no
# If-None-Match conflict on a segment), and no process of a killed agent
# still running 1.2 s after its kill, none of any node after the stop.
# Prints the counts; exit 0 only with no violation.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_TOTAL=${SOAK_SECONDS:-600}
ACTORS=${SOAK_ACTORS:-120}
KILL_EVERY=${SOAK_KILL_EVERY:-30}
MAX_HOLDS=${SOAK_HOLDS:-12}
BIN=${KEEP_BINDIR:-$ROOT/build/rel/bin}
STORE_KIND=${SOAK_STORE:-fs}
NODES="s1 s2 s3"

for b in keep-agent lease-write owner-acquire owner-release owner-check keep-store; do
	[ -x "$BIN/$b" ] || {
		echo "soak: $BIN/$b missing (make rel, or set KEEP_BINDIR)" >&2
		exit 100
	}
done
DIR=${SOAK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/keep-soak.XXXXXX")}
mkdir -p "$DIR/state" "$DIR/log"
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
	;;
*)
	echo "soak: SOAK_STORE must be fs or s3" >&2
	exit 100
	;;
esac

# one config per node: short timings (as the end-to-end tests) so fences and
# hand-overs happen within seconds of a kill
for n in $NODES; do
	cat >"$DIR/$n.yaml" <<YAML
node_id: $n
store: $STORE
state_dir: $DIR/state
lease:
  ttl_ms: 3000
  grace_ms: 1500
  safety_ms: 600
  max_skew_ms: 300
  heartbeat_period_ms: 1000
YAML
done

now_us() { echo "${EPOCHREALTIME/./}"; }
log() { echo "soak: $*" >&2; }

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
	trap soak_proxy_stop EXIT
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
	touch "$DIR/log/faults" "$DIR/log/kills"
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
	FILENAME ~ /kills$/ { k[minute($1)]++; next }
	FILENAME ~ /faults$/ {
		for (i = 2; i <= NF; i++) if ($i ~ /^ms=/) t = substr($i, 4) * 1000
		if ($1 == "fault") {
			f[minute(t)]++; faults++
			for (i = 2; i <= NF; i++) if ($i ~ /^action=/) by[substr($i, 8)]++
		} else if ($1 == "forwarded") fwd++
		next
	}
	END {
		print "minute,seconds,acquisitions,releases,writes,kills,faults,lost_holds" >csv
		for (m = 0; m <= last; m++) {
			s = (t1 - t0) / 1000000 - m * 60
			if (s > 60) s = 60
			printf "%d,%d,%d,%d,%d,%d,%d,%d\n", m, s, acq[m], rel[m], wr[m], k[m], f[m], lost[m] >csv
		}
		acts = ""
		for (a in by) acts = acts (acts == "" ? "" : ",") a ":" by[a]
		printf "soak-report minutes=%d faults=%d faults_forwarded=%d fault_actions=%s csv=%s\n", \
			last + 1, faults, fwd, acts == "" ? "-" : acts, csv
	}' "$DIR/app.log" "$DIR/log/kills" "$DIR/log/faults"
	if [ "$prc" -ne 0 ]; then
		log "the fault proxy exited $prc (see $DIR/log/proxy.err)"
		return 1
	fi
}

soak_net_start

# ---- a node: keep-agent under a restart loop ---------------------------------
# The agent's pid is in $DIR/sN.agent (it is killed by that pid alone).
supervise_agent() { # NODE
	local n=$1 rc
	while [ ! -e "$DIR/stop" ]; do
		keep-agent -c "$DIR/$n.yaml" >>"$DIR/log/$n.agent.out" 2>>"$DIR/log/$n.agent.err" &
		echo $! >"$DIR/$n.agent"
		wait $!
		rc=$?
		echo "$(now_us) $rc" >>"$DIR/log/$n.agent.exits"
		[ -e "$DIR/stop" ] && break
		sleep 1
	done
}

# ---- the app worker of a node --------------------------------------------------
worker() { # NODE
	local n=$1 a k gen seq i out rc t fresh
	declare -A held=()
	export KEEP_CONFIG="$DIR/$n.yaml"
	exec 3>>"$DIR/log/app-$n.log"
	while [ ! -e "$DIR/stop" ]; do
		a=$(printf 't/soak/a%03d' $((RANDOM % ACTORS)))
		if [ -z "${held[$a]:-}" ] && [ "${#held[@]}" -ge "$MAX_HOLDS" ]; then
			for k in "${!held[@]}"; do a=$k; break; done # full: work on (and maybe release) a hold
		fi
		if [ -n "${held[$a]:-}" ]; then
			read -r gen seq <<<"${held[$a]}"
			for ((i = 1 + RANDOM % 3; i > 0; i--)); do
				t=$(now_us)
				if ! owner-check "$a" "$gen" >/dev/null 2>&1; then
					echo "lost $a $gen $n $t" >&3
					unset "held[$a]"
					continue 2
				fi
				echo "chk $a $gen $n $t" >&3
				seq=$((seq + 1))
				out=$(printf '%s %s %s\n' "$a" "$gen" "$seq" |
					keep-store put "wal/$a/$gen/$seq" --if-none-match 2>&1)
				rc=$?
				if [ $rc -eq 0 ]; then
					echo "ack $a $gen $seq $n $(now_us)" >&3
				else
					echo "putfail $a $gen $seq $n $rc $(now_us) ${out//$'\n'/ }" >&3
				fi
			done
			held[$a]="$gen $seq"
			if [ $((RANDOM % 3)) -eq 0 ] || [ "${#held[@]}" -ge "$MAX_HOLDS" ]; then
				owner-release "$a" >/dev/null 2>&1
				echo "rel $a $gen $n $(now_us) $?" >&3
				unset "held[$a]"
			fi
		else
			out=$(owner-acquire "$a" 2>/dev/null)
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
					seq=$(keep-store list "wal/$a/$gen/" 2>/dev/null |
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
		setsid bash -c "$(declare -f now_us worker); DIR='$DIR' ACTORS=$ACTORS MAX_HOLDS=$MAX_HOLDS worker $n" &
		echo $! >"$DIR/$n.worker"
		wait $!
		sleep 0.5
	done
}

# ---- run -------------------------------------------------------------------------
log "dir $DIR, store $STORE, ${SECONDS_TOTAL} s, $ACTORS actors, a kill every ~${KILL_EVERY} s"
pids=()
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
kills=0
orphans=0
: >"$DIR/log/kills"
while [ $((SECONDS - start)) -lt "$SECONDS_TOTAL" ]; do
	wait_s=$((KILL_EVERY / 2 + RANDOM % (KILL_EVERY + 1)))
	left=$((SECONDS_TOTAL - (SECONDS - start)))
	[ "$wait_s" -lt "$left" ] || wait_s=$left
	sleep "$wait_s"
	[ $((SECONDS - start)) -lt "$SECONDS_TOTAL" ] || break
	set -- $NODES
	shift $((RANDOM % 3))
	victim=$1
	kills=$((kills + 1))
	p=$(cat "$DIR/$victim.agent" 2>/dev/null)
	kids=$( [ -n "$p" ] && pgrep -P "$p" | paste -sd, -)
	[ -n "$p" ] && kill -KILL "$p" 2>/dev/null # the agent alone: no orphan may stay
	what=agent
	if [ $((kills % 2)) -eq 0 ]; then
		w=$(cat "$DIR/$victim.worker" 2>/dev/null)
		[ -n "$w" ] && kill -KILL -- "-$w" 2>/dev/null
		what=node
	fi
	echo "$(now_us) $victim $what" >>"$DIR/log/kills"
	log "kill $kills: $victim ($what) at +$((SECONDS - start)) s"
	# its children end within a heartbeat period (1 s here); zombies are
	# ended processes waiting for init
	if [ -n "$kids" ]; then
		sleep 1.2
		left=$(ps -o pid=,stat=,args= -p "$kids" | awk '$2 !~ /^Z/')
		if [ -n "$left" ]; then
			orphans=$((orphans + 1))
			log "VIOLATION kill $kills: children of the agent still running 1.2 s after:"
			echo "$left" >&2
		fi
	fi
done

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
awk -v kills="$kills" -v restarts="$restarts" -v secs="$SECONDS_TOTAL" -v actors="$ACTORS" -v orphans="$orphans" '
FNR == 1 { file++ }
file == 1 && $1 == "object" { # the listing of wal/
	k = $2; sub(/^key=/, "", k)
	inlist[k] = 1
	n = split(k, p, "/")
	listed++
	if (n == 6) listed_gen[p[2] "/" p[3] "/" p[4] " " p[5]] = 1
	next
}
file == 2 {
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
		if (!(key in start)) { viol++; print "VIOLATION check passed for a hold never acquired: " a " " g }
		else if ($5 > last[key]) last[key] = $5
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
	viol += orphans
	printf "soak seconds=%d nodes=3 actors=%d actors_acquired=%d acquisitions=%d regrants=%d releases=%d checks=%d writes=%d segments_listed=%d lost_holds=%d held_elsewhere=%d unknown=%d refused=%d put_failures=%d kills=%d agent_exits=%d orphans=%d missing_writes=%d violations=%d\n", \
		secs, actors, nact, acq - regrants, regrants + 0, releases, checks, writes, listed, lost, busy, unknown, acqfail, putfail, kills, restarts, orphans, missing, viol
	exit (viol > 0 ? 1 : 0)
}' "$DIR/wal.list" "$DIR/app.log"
rc=$?
soak_report || { [ "$rc" -ne 0 ] || rc=1; }
log "logs and the store are in $DIR"
exit $rc
