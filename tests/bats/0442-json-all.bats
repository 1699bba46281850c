#!/usr/bin/env bats
# --json on every command that prints lines (issue 27; docs/formats.md
# "JSON lines"): keep-agent status, lease-write, lease-fence (both modes),
# node-watch --follow, owner-acquire, owner-release, owner-check, owner-run,
# keep-store, store-probe, upgrade-mark and the umbrella keep: each stdout
# line one JSON object jq reads, with a string "type", the text line's
# fields, numbers as numbers and yes/no as booleans — never a number or a
# yes/no in a string. The text lines stay the default, unchanged.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).

load helpers/common

setup() {
	keep_setup
	command -v jq >/dev/null || skip "jq not installed (scripts/install-deps.sh --test)"
}
teardown() { keep_teardown; }

# typed FILE : every line of FILE is a JSON object with a string type, and no
# value is a decimal number or yes/no written as a string
typed() {
	[ -s "$1" ] || { echo "$1: no line"; return 1; }
	jq -e -s 'all(.[]; type == "object" and (.type | type) == "string")' "$1" >/dev/null ||
		{ echo "$1: not JSON objects with a type:"; cat "$1"; return 1; }
	if jq -r 'to_entries[] | select(.key != "type" and (.value | type) == "string") |
		select(.value | test("^(-?[0-9]+|yes|no)$")) | "\(.key)=\(.value)"' "$1" | grep .; then
		echo "$1: values above should be typed"
		return 1
	fi
}

# as_text : each JSON object on stdin as the text line (bare values only)
as_text() {
	jq -r '([.type] + [to_entries[1:][] | "\(.key)=\(if .value == null then "-" elif .value == true then "yes" elif .value == false then "no" else .value end)"]) | join(" ")'
}

@test "json-all: the ownership commands, keep-store, store-probe, upgrade-mark, lease-fence" {
	d=$BATS_TEST_TMPDIR
	start_bg n1 lease-write --node-id n1 --json
	wait_line 30 n1 '^\{"type":"live",'
	run -0 typed "$d/n1.out"
	run -0 jq -e 'select(.type == "live") | (.valid_ms | type) == "number" and (.written_at_ms | type) == "number"' "$d/n1.out"

	owner-acquire --node-id n1 --json t/c/a t/c/b >"$d/acq"
	run -0 typed "$d/acq"
	run -0 jq -e -s 'map(select(.type == "acquired") | .new == true and (.generation | type) == "number") | length == 2 and all' "$d/acq"
	gen=$(jq -r 'select(.key == "t/c/a") | .generation' "$d/acq")
	owner-check --node-id n1 --json t/c/a "$gen" >"$d/chk"
	run -0 typed "$d/chk"
	run -0 jq -e '.ok == true and .reason == "ok"' "$d/chk"
	run -1 owner-check --node-id n1 --json t/c/a $((gen + 1))
	run -0 jq -e '.ok == false' <<<"$output"
	owner-release --node-id n1 --json t/c/b >"$d/rel"
	run -0 typed "$d/rel"
	owner-run --node-id n1 --json t/c/r -- true >"$d/run"
	run -0 typed "$d/run"
	run -0 jq -e -s 'map(.type) | index("acquired") != null and index("exited") != null' "$d/run"
	owner-show --json t/c/a >"$d/show"
	run -0 typed "$d/show"
	run -0 jq -e '.free == false and .holder == "live"' "$d/show"

	keep-store --json put x/k <<<"body" >"$d/put"
	keep-store --json stat x/k >"$d/stat"
	keep-store --json list x/ >"$d/list"
	keep-store --json del x/k >"$d/del"
	for f in put stat list del; do run -0 typed "$d/$f"; done
	# get still writes the raw body
	run -1 --separate-stderr keep-store --json get x/k
	store-probe --json >"$d/probe"
	run -0 typed "$d/probe"
	run -0 jq -e -s 'last | .result == "ok"' "$d/probe"

	upgrade-mark --json actors t/c/new >"$d/mark"
	run -0 typed "$d/mark"
	upgrade-mark --json guard >"$d/guard"
	run -0 typed "$d/guard"
	run -0 jq -e -s 'last | .type == "pass" and .old == 0' "$d/guard"

	lease-fence --json --create n9 >"$d/fence"
	run -0 typed "$d/fence"
	run -0 jq -e '(.free_at_ms | type) == "number" and .instance == null' "$d/fence"
	# the same fields as the text line, in the same order
	run -1 --separate-stderr lease-fence n9
	txt=$output
	run -1 --separate-stderr lease-fence --json n9
	[ "$(as_text <<<"$output")" = "$txt" ]
	refute_sanitizer_reports
}

@test "json-all: node-watch --follow, lease-fence --stdin, keep-agent status and keep pass --json on" {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "the long-running commands: the fs pass"
	d=$BATS_TEST_TMPDIR
	start_bg nw node-watch --follow --json
	run -0 lease-fence --create n9
	wait_line 20 nw '^\{"type":"join","node":"n9",'
	run -0 typed "$d/nw.out"
	run -0 lease-fence --stdin --json --node-id n2 <<<"stale node=n9 instance=0123456789abcdef0123456789abcdef written_at_ms=1 unchanged_ms=5"
	[ "$(jq -r .type <<<"$output")" = skipped ]
	printf '%s\n' "$output" >"$d/stdin"
	run -0 typed "$d/stdin"

	start_bg a1 keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	keep-agent status --node-id n1 --json >"$d/st"
	run -0 typed "$d/st"
	run -0 jq -e -s 'map({(.type): .}) | add | .status.ready == true and .agent.running == true and (.agent.pid | type) == "number" and .fencing.state == "running" and (.fencing.restarts | type) == "number" and .lease.phase == "live"' "$d/st"
	# the text lines are unchanged
	run -0 keep-agent status --node-id n1
	assert_line --regexp '^status node=n1 ready=yes lease=valid agent=yes fencing=running resolver=running listing=ok$'
	# the agent takes --json for its status only
	run -100 --separate-stderr keep-agent --node-id n1 --json
	# the umbrella passes it on
	keep nodes --json >"$d/nodes"
	run -0 typed "$d/nodes"
	keep status --node-id n1 --json >"$d/st2"
	run -0 typed "$d/st2"
	refute_sanitizer_reports
}
