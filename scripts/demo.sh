#!/bin/sh
# demo.sh — a three-node cluster on the embedded fs store, with a failover.
#
#   KEEP_BINDIR=build/rel/bin sh scripts/demo.sh     (make demo)
#
# Makes the fresh bucket a native cluster (keep init), starts lease-write
# for n1, n2, n3 (short ttls), and for n2 and n3 the
# peer-fencing pipeline `node-watch --follow | lease-fence --stdin`; shows
# cluster status; kills n1's lease-write with SIGKILL; waits (with a
# deadline) until a peer fences n1; shows status again. Every child is
# stopped on exit. Exit 0 only if the failover was seen.
set -u

BIN=${KEEP_BINDIR:?KEEP_BINDIR not set (make demo sets it)}
PATH="$BIN:$PATH"
export PATH
DIR=$(mktemp -d "${TMPDIR:-/tmp}/keep-demo.XXXXXX") || exit 111
PIDS=""

cleanup() {
	for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.3
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }

mkdir -p "$DIR/bucket" "$DIR/state"
cat >"$DIR/keep.yaml" <<EOF
store: file://$DIR/bucket
state_dir: $DIR/state
lease:
  ttl_ms: 3000
  grace_ms: 1500
  safety_ms: 600
  max_skew_ms: 300
  heartbeat_period_ms: 1000
EOF
KEEP_CONFIG=$DIR/keep.yaml
export KEEP_CONFIG

echo "== keep demo: store $DIR/bucket, ttl 3 s, grace 1.5 s, safety 0.6 s, period 1 s"
echo "== keep init: a fresh bucket becomes a native cluster (docs/operations.md)"
keep init >"$DIR/init.out" || exit 1
sed 's/^/   /' "$DIR/init.out"
for n in n1 n2 n3; do
	lease-write --node-id "$n" >"$DIR/$n.out" 2>"$DIR/$n.err" &
	eval "PID_$n=\$!"
	PIDS="$PIDS $!"
done
for n in n2 n3; do
	mkfifo "$DIR/$n.fifo"
	lease-fence --node-id "$n" --stdin <"$DIR/$n.fifo" >"$DIR/$n.fence" 2>"$DIR/$n.fence.err" &
	PIDS="$PIDS $!"
	node-watch --node-id "$n" --follow >"$DIR/$n.fifo" 2>"$DIR/$n.watch.err" &
	PIDS="$PIDS $!"
done

# wait_until SECONDS CMD... : poll CMD every 0.2 s until it succeeds
wait_until() {
	end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

echo "== starting: every node waits ttl + grace (start check), then goes live"
wait_until 20 sh -c "grep -q '^live ' '$DIR/n1.out' && grep -q '^live ' '$DIR/n2.out' &&
	grep -q '^live ' '$DIR/n3.out'" || {
	echo "demo: the nodes did not go live" >&2
	exit 1
}
sleep 1
echo "== cluster status (node-watch --once --table)"
node-watch --once --table

echo
echo "== kill -9 n1's lease-write (pid $PID_n1): it stops writing, without a release"
kill -KILL "$PID_n1"
t0=$(now_ms)
echo "== waiting for a peer to fence n1 (watch 1.8 s unchanged, then written_at + 4.5 s)"
if ! wait_until 20 sh -c "grep -h '^fenced node=n1 ' '$DIR/n2.fence' '$DIR/n3.fence'"; then
	echo "demo: no peer fenced n1 in time" >&2
	exit 1
fi
t1=$(now_ms)
grep -h '^fenced node=n1 ' "$DIR/n2.fence" "$DIR/n3.fence" | sed 's/^/   /'
grep -h '^already-fenced node=n1 ' "$DIR/n2.fence" "$DIR/n3.fence" | sed 's/^/   /'
echo "== fenced $((t1 - t0)) ms after the kill"
echo
echo "== cluster status after the failover"
node-watch --once --table
node-watch --once | grep -q '^node id=n1 state=fenced ' || exit 1
echo
echo "== demo done: n1 fenced by a peer; n2 and n3 still live"
exit 0
