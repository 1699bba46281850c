#!/usr/bin/env bats
# Runbooks that are tested: every ```sh block of docs/runbooks/*.md is run,
# as written, against the fs store with a node started here, so a runbook
# can never drift from the commands (docs/testing.md "Runbooks").
#
# Each block runs with `sh -eu` in a fresh store, state directory and
# $KEEP_CONFIG (short ttls: ttl 3000, grace 1500, ...), with $NODE (default
# n1) running under keep-agent and live, unless a directive above the block
# says otherwise:
#
#   <!-- test: needs node n1 live; peers n2 -->     this block only
#   <!-- test-all: peers n2 -->                     every block of the file
#
# Directives (`;`-separated, a leading "needs" is optional):
#   node ID [live]     the node the runbook acts as ($NODE), run by keep-agent
#   no node            start no node ($NODE is still set, to n1)
#   peers ID...        more nodes under keep-agent, live ($PEERS)
#   dead ID...         nodes that went live (lease-write) and were SIGKILLed
#   old ID [AGE_MS]    an old-format heartbeat nodes/ID (wasmkeep-node 1)
#                      written AGE_MS ago (default 0)
#   exit N             the block must exit N (default 0)
#   timeout S          bound of the block (default 60)
#   skip REASON        do not run it (reported)
#   continue           run in the previous block's environment (same bucket,
#                      same nodes still running): a later step of one procedure
# A block fails the test if it exits otherwise than expected or outlives
# its bound. Blocks that cannot run here (journalctl, systemctl) are
# written ```text, not ```sh.

load helpers/common
load helpers/mdblocks

ROOT="$BATS_TEST_DIRNAME/../.."

# stop_bg NAME : SIGTERM, wait for the clean stop, then make sure nothing of
# it (its children included) is left
stop_bg() {
	local p kids
	p=$(bg_pid "$1") || return 0
	kids=$(descendants "$p")
	kill -TERM "$p" 2>/dev/null || true
	wait_exit 20 "$1" >/dev/null || true
	kill -KILL "$p" $kids 2>/dev/null || true
}

# run_block DIR [keep] : set up what its directives ask for, run it; on
# failure print why and return 1. keep: leave its environment running for
# the next block (which says `continue`); LAST_ENV LAST_NODE LAST_PEERS name it.
run_block() {
	local d=$1 keep=${2:-} where node=n1 start_node=1 peers="" dead="" want=0 limit=60 \
		skip_why="" cont="" line words rc save_tmp=$BATS_TEST_TMPDIR
	where=$(sed 's|.*/docs/|docs/|' "$d/where")
	while IFS= read -r line; do
		read -r -a words <<<"$line"
		case ${words[0]}${words[1]:+ ${words[1]}} in
		"no node") start_node= ;;
		node*) node=${words[1]} ;;
		peers*) peers="${words[*]:1}" ;;
		dead*) dead="${words[*]:1}" ;;
		old*) : ;;
		exit*) want=${words[1]} ;;
		timeout*) limit=${words[1]} ;;
		skip*) skip_why="${words[*]:1}" ;;
		continue) cont=1 ;;
		*)
			echo "$where: unknown runbook test directive '$line'"
			return 1
			;;
		esac
	done <"$d/directives"
	if [ -n "$skip_why" ]; then
		echo "# $where: skipped: $skip_why" >&3
		return 0
	fi

	rc=0
	if [ -n "$cont" ]; then
		[ -n "${LAST_ENV:-}" ] || { echo "$where: 'continue' with no previous block"; return 1; }
		BATS_TEST_TMPDIR=$LAST_ENV node=$LAST_NODE peers=$LAST_PEERS
		run_sh || rc=$?
	else
		BATS_TEST_TMPDIR="$d/env"
		mkdir -p "$BATS_TEST_TMPDIR"
		block_body || rc=$?
	fi
	LAST_ENV=$BATS_TEST_TMPDIR LAST_NODE=$node LAST_PEERS=$peers
	[ -n "$keep" ] && [ "$rc" -ne 255 ] || { stop_all "$BATS_TEST_TMPDIR"; LAST_ENV=; }
	BATS_TEST_TMPDIR=$save_tmp
	[ "$rc" -ne 255 ] || return 1 # the setup failed (said why)
	if [ "$rc" -ne "$want" ]; then
		echo "$where: the block exited $rc (expected $want)$([ "$rc" -eq 124 ] && echo ", timed out after ${limit}s"):"
		sed 's/^/    | /' "$d/block.sh"
		echo "  output:"
		sed 's/^/    > /' "$d/out"
		return 1
	fi
	echo "# $where: ok" >&3
}

# stop_all DIR : stop every background process a block environment started
stop_all() {
	local n save=$BATS_TEST_TMPDIR
	BATS_TEST_TMPDIR=$1
	for n in $(cat "$1/.bg" 2>/dev/null); do
		stop_bg "$n"
	done
	rm -f "$1/.bg"
	BATS_TEST_TMPDIR=$save
}

teardown() {
	local e
	for e in "$BATS_TEST_TMPDIR"/*/*/env; do
		[ -d "$e" ] && stop_all "$e"
	done
	return 0
}

# block_body : (run_block's variables) the setup, then the block; returns
# the block's status, or 255 when the setup failed
block_body() {
	local line words id age
	keep_setup
	# old-format heartbeats first, as a node sees them at its start
	while IFS= read -r line; do
		read -r -a words <<<"$line"
		[ "${words[0]}" = old ] || continue
		id=${words[1]} age=${words[2]:-0}
		printf 'wasmkeep-node 1\nnode %s\nwritten_at_ms %s\n' "$id" $(($(now_ms) - age)) |
			keep-store put "nodes/$id" --if-none-match >/dev/null
	done <"$d/directives"
	for id in $dead; do
		start_bg "dead-$id" lease-write --node-id "$id"
	done
	[ -z "$start_node" ] || start_bg "node-$node" keep-agent --node-id "$node"
	for id in $peers; do
		start_bg "node-$id" keep-agent --node-id "$id"
	done
	for id in $dead; do
		wait_line 30 "dead-$id" '^live ' || { echo "$where: dead node $id never went live"; return 255; }
		kill -KILL "$(bg_pid "dead-$id")"
	done
	for id in ${start_node:+$node} $peers; do
		wait_for 30 keep-agent status --node-id "$id" ||
			{ echo "$where: node $id never became ready"; cat "$BATS_TEST_TMPDIR/node-$id.err"; return 255; }
	done

	run_sh
}

# run_sh : (run_block's variables) the block itself
run_sh() {
	(
		cd "$BATS_TEST_TMPDIR" &&
			NODE=$node PEERS=$peers exec timeout "$limit" sh -eu "$d/block.sh"
	) </dev/null >"$d/out" 2>&1 3>&-
}

@test "runbooks: every sh block of docs/runbooks/*.md runs against the fs store" {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "the runbooks run on the fs store"
	extract "$BATS_TEST_TMPDIR/blocks" "$ROOT"/docs/runbooks/*.md
	[ -n "$(ls "$BATS_TEST_TMPDIR/blocks")" ] || { echo "no sh block in docs/runbooks"; false; }
	failed=0
	set -- "$BATS_TEST_TMPDIR"/blocks/*
	while [ $# -gt 0 ]; do
		keep=
		if [ $# -ge 2 ] && grep -qx continue "$2/directives"; then keep=1; fi
		run_block "$1" $keep || failed=$((failed + 1))
		shift
	done
	[ "$failed" -eq 0 ] || { echo "$failed runbook block(s) failed"; false; }
	run grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' -r "$BATS_TEST_TMPDIR/blocks"
	[ "$status" -eq 1 ] || { echo "sanitizer report in: $output"; false; }
}

@test "runbooks: the extractor and the runner (directives, a failing block fails)" {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "the runbooks run on the fs store"
	cat >"$BATS_TEST_TMPDIR/rb.md" <<'EOF'
<!-- test-all: timeout 30 -->
# A runbook

```sh
keep-agent status --node-id "$NODE"
```

```text
journalctl -u keep-agent@n1     # not run
```

<!-- test: no node; exit 15 -->
```sh
keep-agent status --node-id "$NODE"
```

1. In a list:

   ```sh
   false
   ```
EOF
	extract "$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/rb.md"
	run -0 ls "$BATS_TEST_TMPDIR/b"
	[ "${#lines[@]}" -eq 3 ]
	[ "$(cat "$BATS_TEST_TMPDIR/b/001/directives")" = "timeout 30" ]
	[ "$(cat "$BATS_TEST_TMPDIR/b/002/directives")" = $'timeout 30\nno node\nexit 15' ]
	[ "$(cat "$BATS_TEST_TMPDIR/b/003/block.sh")" = false ]
	[ "$(cat "$BATS_TEST_TMPDIR/b/003/where")" = "$BATS_TEST_TMPDIR/rb.md:19" ]
	run -0 run_block "$BATS_TEST_TMPDIR/b/002" 3>/dev/null
	echo "no node" >"$BATS_TEST_TMPDIR/b/003/directives"
	run -1 run_block "$BATS_TEST_TMPDIR/b/003" 3>/dev/null
	assert_output --partial "rb.md:19: the block exited 1 (expected 0)"
	echo "frobnicate" >"$BATS_TEST_TMPDIR/b/003/directives"
	run -1 run_block "$BATS_TEST_TMPDIR/b/003" 3>/dev/null
	assert_output --partial "unknown runbook test directive 'frobnicate'"
}
