#!/usr/bin/env bash
# s3-server.sh — a real S3 server on loopback for keep's tests: Ceph RGW
# (Debian 12's ceph 16.2 packages) with 1 mon, 1 OSD on memstore (RAM only)
# and 1 radosgw, all bound to 127.0.0.1.
#
#   scripts/s3-server.sh start DATA_DIR [PORT]   (PORT default 7480; the mon uses PORT+1)
#       prints shell-sourceable lines on stdout (progress goes to stderr):
#         S3_ENDPOINT=http://127.0.0.1:PORT S3_ACCESS_KEY=... S3_SECRET_KEY=...
#         S3_REGION=us-east-1 S3_BUCKET=... CEPH_CONF=...
#       and makes sure the bucket $S3_BUCKET (default keep-test) exists.
#   scripts/s3-server.sh stop DATA_DIR [--purge]
#       stops the daemons by the PIDs recorded at start (never by name);
#       --purge also deletes DATA_DIR.
#
# Both are idempotent: starting a running cluster only prints its info again
# (and re-creates the bucket if missing); a start over leftovers of a crashed
# run stops them and starts a FRESH, EMPTY cluster (memstore keeps nothing).
# Stopping a stopped cluster does nothing.
#
# Two settings are essential (docs/s3.md): paxos propose interval = 0.05 (the
# 1 s default makes the start take ~13 s) and cephx on (with auth=none the OSD
# sometimes fails to start with a zero fsid).
#
# The beast frontend runs with tcp_nodelay=1: RGW writes a reply's headers
# and body in two sends, and without it Nagle's algorithm holds the body
# until the client's delayed ACK, ~40 ms on every request of a kept-alive
# connection (docs/performance.md, "Kept-alive S3 requests").
#
# Env: S3_ACCESS_KEY S3_SECRET_KEY (test credentials), S3_BUCKET, MON_PORT,
#      MEMSTORE_BYTES (default 1 GiB), START_TIMEOUT (default 120 s),
#      STOP_TIMEOUT (default 10 s), S3_TCP_NODELAY (default 1; 0 starts RGW
#      as before, for bench/s3-latency.sh's comparison).
# Needs: radosgw ceph-mon ceph-osd curl (scripts/install-deps.sh --s3).
set -euo pipefail

usage() {
	echo "usage: s3-server.sh start DATA_DIR [PORT] | stop DATA_DIR [--purge]" >&2
	exit 100
}

# ---- stop ----------------------------------------------------------------------
is_ours() { # pid comm : the daemon we started still runs (not reused, not a zombie)
	kill -0 "$1" 2>/dev/null && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] &&
		[ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
}

do_stop() { # DATA_DIR [--purge]
	local D=$1 purge=${2:-} timeout=${STOP_TIMEOUT:-10} spec f comm pid i end
	local -a pids=() comms=()
	[ -d "$D" ] || return 0
	D=$(cd "$D" && pwd)
	for spec in rgw:radosgw osd.0:ceph-osd mon.a:ceph-mon; do
		f=$D/run/${spec%%:*}.spid
		comm=${spec#*:}
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		if is_ours "$pid" "$comm"; then
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
			comms+=("$comm")
		fi
	done
	end=$(($(date +%s) + timeout))
	for i in "${!pids[@]}"; do
		while is_ours "${pids[$i]}" "${comms[$i]}" && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done
		if is_ours "${pids[$i]}" "${comms[$i]}"; then kill -KILL "${pids[$i]}" 2>/dev/null || true; fi
	done
	for i in "${!pids[@]}"; do # even KILLed ones must be gone before we return
		for _ in $(seq 1 100); do
			is_ours "${pids[$i]}" "${comms[$i]}" || break
			sleep 0.1
		done
	done
	rm -f "$D"/run/*.spid "$D"/run/*.pid
	if [ "$purge" = "--purge" ]; then rm -rf "$D"; fi
	return 0
}

# ---- start ---------------------------------------------------------------------
D='' PORT='' FRONTEND='' MON_PORT='' AK='' SK='' BUCKET='' CONF='' ENDPOINT='' deadline='' T0=''

alive() { # name comm
	local f=$D/run/$1.spid
	[ -s "$f" ] && is_ours "$(cat "$f")" "$2"
}

print_info() {
	cat <<INFO
S3_ENDPOINT=$ENDPOINT
S3_ACCESS_KEY=$AK
S3_SECRET_KEY=$SK
S3_REGION=us-east-1
S3_BUCKET=$BUCKET
CEPH_CONF=$CONF
INFO
}

# make_bucket: a signed PUT /BUCKET (curl's SigV4 needs x-amz-content-sha256
# added by hand: curl 7.88 does not send it and RGW answers 403 without it).
# 200 = created; 409 BucketAlreadyOwnedByYou = it was there.
make_bucket() {
	local code
	code=$(curl -s -o "$D/log/bucket.out" -w '%{http_code}' -m 10 -X PUT \
		--aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$ENDPOINT/$BUCKET") || code=000
	case $code in
	200 | 409) return 0 ;;
	*)
		echo "s3-server: creating bucket '$BUCKET' failed: HTTP $code" >&2
		cat "$D/log/bucket.out" >&2 2>/dev/null || true
		return 1
		;;
	esac
}

wait_for() { # desc cmd...
	local desc=$1
	shift
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "s3-server: timed out waiting for $desc" >&2
			return 1
		fi
		sleep 0.2
	done
}

elapsed() { awk "BEGIN{printf \"%.1f\", $(date +%s.%N)-$T0}"; }
phase() { echo "s3-server: $1 at +$(elapsed) s" >&2; }

launch() { # name comm cmd... : a daemon in the foreground under setsid, detached
	local name=$1 comm=$2
	shift 2
	setsid "$@" </dev/null >>"$D/log/$name.out" 2>&1 &
	echo $! >"$D/run/$name.spid"
	sleep 0.1
	alive "$name" "$comm" || {
		echo "s3-server: $name exited at once; see $D/log/$name.*" >&2
		return 1
	}
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_failed() {
	local rc=$1 line=$2
	echo "s3-server: start FAILED (rc=$rc) at line $line; logs in $D/log/" >&2
	tail -n 20 "$D/log/mkfs.log" >&2 2>/dev/null || true
	do_stop "$D" >/dev/null 2>&1 || true
	exit "$rc"
}

do_start() { # DATA_DIR [PORT]
	D=$1
	PORT=${2:-7480}
	case $PORT in '' | *[!0-9]*) usage ;; esac
	MON_PORT=${MON_PORT:-$((PORT + 1))}
	AK=${S3_ACCESS_KEY:-testaccesskey}
	SK=${S3_SECRET_KEY:-testsecretkey}
	BUCKET=${S3_BUCKET:-keep-test}
	local memstore=${MEMSTORE_BYTES:-1073741824} b fsid osd_uuid p
	deadline=$(($(date +%s) + ${START_TIMEOUT:-120}))

	mkdir -p "$D"
	D=$(cd "$D" && pwd)
	CONF=$D/ceph.conf
	ENDPOINT=http://127.0.0.1:$PORT
	case ${S3_TCP_NODELAY:-1} in
	1) FRONTEND="beast endpoint=127.0.0.1:$PORT tcp_nodelay=1" ;;
	0) FRONTEND="beast endpoint=127.0.0.1:$PORT" ;;
	*) usage ;;
	esac

	for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph-authtool ceph curl setsid; do
		command -v "$b" >/dev/null || {
			echo "s3-server: missing $b (run scripts/install-deps.sh --s3)" >&2
			exit 2
		}
	done

	# already running: print the info again (and make sure of the bucket)
	if [ -f "$CONF" ] && grep -qxF "rgw frontends = $FRONTEND" "$CONF" &&
		alive mon.a ceph-mon && alive osd.0 ceph-osd && alive rgw radosgw &&
		curl -s -o /dev/null -m 2 "$ENDPOINT/"; then
		mkdir -p "$D/log"
		make_bucket
		print_info
		return 0
	fi
	# leftovers of an earlier run (crash, interrupted start): stop them first
	do_stop "$D" >/dev/null 2>&1 || true
	rm -rf "$D/mon.a" "$D/osd.0" "$D/run" "$D/log" "$D/rgw" "$D/monmap" "$D/keyring" "$CONF"
	mkdir -p "$D/run" "$D/log" "$D/osd.0" "$D/rgw"

	for p in "$MON_PORT" "$PORT"; do
		for _ in $(seq 1 50); do
			port_busy "$p" || break
			sleep 0.1
		done
		if port_busy "$p"; then
			echo "s3-server: 127.0.0.1:$p is already in use" >&2
			exit 1
		fi
	done

	fsid=$(cat /proc/sys/kernel/random/uuid)
	cat >"$CONF" <<CONF
[global]
fsid = $fsid
mon host = [v1:127.0.0.1:$MON_PORT]
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr2 = false
ms bind ipv6 = false
# cephx ON: with auth=none the OSD sometimes sends its first mon command with
# a zero fsid and exits ("mon_cmd_maybe_osd_create fail: 'wrong fsid'")
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $D/keyring
mon warn on insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
log to stderr = false
err to stderr = false
mon cluster log file = $D/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
mon pg warn min per osd = 0
# commit mon changes fast (the 1 s default makes the start take ~13 s)
paxos propose interval = 0.05
paxos min wait = 0.01

[mon]
mon data = $D/mon.\$id

[osd]
osd data = $D/osd.\$id
osd objectstore = memstore
memstore device bytes = $memstore
osd crush update on start = true
# do not wait 5 s for the mon to ack "mark me down" on SIGTERM
osd mon shutdown timeout = 0.2

[client.rgw]
rgw frontends = $FRONTEND
rgw data = $D/rgw
log file = $D/log/rgw.log
CONF

	T0=$(date +%s.%N)
	trap 'start_failed $? $LINENO' ERR

	# mon
	ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
	ceph-authtool "$D/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
		--cap mgr 'allow *' --cap mds 'allow *' >/dev/null
	ceph-authtool "$D/keyring" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' \
		--cap mgr 'allow profile osd' >/dev/null
	ceph-authtool "$D/keyring" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' \
		--cap mgr 'allow rw' >/dev/null
	monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$D/monmap" >/dev/null
	ceph-mon -c "$CONF" -i a --mkfs --monmap "$D/monmap" --keyring "$D/keyring" >>"$D/log/mkfs.log" 2>&1
	launch mon.a ceph-mon ceph-mon -f -c "$CONF" -i a
	wait_for "mon" ceph -c "$CONF" --connect-timeout 5 mon stat
	[ "$(ceph -c "$CONF" fsid)" = "$fsid" ] # it is our mon that answers
	phase "mon up"

	# osd (memstore: RAM only)
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	ceph -c "$CONF" osd new "$osd_uuid" >/dev/null
	ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$D/log/mkfs.log" 2>&1
	launch osd.0 ceph-osd ceph-osd -f -c "$CONF" -i 0
	wait_for "osd.0 up" osd_up
	phase "osd.0 up"

	# S3 user, radosgw, bucket
	radosgw-admin -c "$CONF" -n client.rgw user create --uid=tester --display-name=tester \
		--access-key="$AK" --secret-key="$SK" >>"$D/log/mkfs.log" 2>&1
	launch rgw radosgw radosgw -f -c "$CONF" -n client.rgw
	wait_for "radosgw on $ENDPOINT" curl -s -o /dev/null -m 2 "$ENDPOINT/"
	make_bucket
	trap - ERR
	echo "s3-server: up in $(elapsed) s: $ENDPOINT bucket $BUCKET" >&2
	print_info
}

osd_up() { ceph -c "$CONF" osd dump 2>/dev/null | grep -q '^osd.0 up'; }

case ${1:-} in
start)
	[ $# -ge 2 ] && [ $# -le 3 ] || usage
	do_start "$2" "${3:-}"
	;;
stop)
	[ $# -ge 2 ] && [ $# -le 3 ] || usage
	case ${3:-} in '' | --purge) ;; *) usage ;; esac
	do_stop "$2" "${3:-}"
	;;
*) usage ;;
esac
