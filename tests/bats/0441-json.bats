#!/usr/bin/env bats
# --json on the status commands (node-watch --once, owner-show, owner-watch,
# lease-status): one JSON object a line that jq parses, with the fields of
# the text line in its order, integers as JSON numbers and absent values as
# null; the text lines stay the default (docs/formats.md "JSON lines").
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# jq (scripts/install-deps.sh --test) parses and converts the objects.

load helpers/common

setup() {
	keep_setup
	command -v jq >/dev/null || skip "jq not installed (scripts/install-deps.sh --test)"
}
teardown() { keep_teardown; }

start_node() {
	start_bg "$1" lease-write --node-id "$2"
	wait_line 30 "$1" '^live '
}

# as_text : each JSON object on stdin back as a text line (bare values
# only): TYPE key=value ..., null as -, true and false as yes and no
as_text() {
	jq -r '([.type] + [to_entries[1:][] | "\(.key)=\(if .value == null then "-" elif .value == true then "yes" elif .value == false then "no" else .value end)"]) | join(" ")'
}

# same_lines JSON_FILE TEXT_FILE [FIELD...] : the JSON lines, as text, are
# the text lines, with FIELD (which changes between two runs) dropped from both
same_lines() {
	local j=$1 t=$2 f del=. sedx=(-e '')
	shift 2
	for f in "$@"; do
		del="$del | del(.$f)"
		sedx+=(-e "s/ $f=[^ ]*//")
	done
	diff -u <(sed "${sedx[@]}" "$t") <(jq -c "$del" "$j" | as_text)
}

@test "json: owner-show, owner-watch --once, node-watch --once, lease-status: same fields, numbers as numbers" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a t/c/b
	run -0 owner-release --node-id n1 t/c/b
	run -0 lease-fence --create n7
	d=$BATS_TEST_TMPDIR

	run -0 owner-show t/c/a
	echo "$output" >"$d/t"
	run -0 owner-show --json t/c/a
	echo "$output" >"$d/j"
	run -0 jq -e '(.generation | type) == "number" and .type == "owner" and .free == false' "$d/j"
	run -0 same_lines "$d/j" "$d/t"
	run -0 owner-show --json t/c/zz
	[ "$output" = '{"type":"owner","key":"t/c/zz","state":"absent","node":null,"instance":null,"generation":null,"holder":null,"free":true}' ]

	owner-watch --once >"$d/t"
	owner-watch --once --json >"$d/j"
	[ "$(wc -l <"$d/j")" -eq 2 ]
	run -0 same_lines "$d/j" "$d/t"
	run -0 jq -s -e 'map(.generation | type == "number") | all' "$d/j"

	node-watch --once >"$d/t"
	node-watch --once --json >"$d/j"
	[ "$(wc -l <"$d/j")" -eq 2 ]
	# (a live node's written_at_ms and age_ms move between the two runs)
	run -0 same_lines "$d/j" "$d/t" written_at_ms age_ms
	run -0 jq -s -e 'map((.written_at_ms | type) == "number" and (.format | type) == "number") | all' "$d/j"
	# an operator fence of an absent node names no instance: null, "-" in text
	run -0 jq -e 'select(.id == "n7") | .instance == null and .fenced_by == "operator"' "$d/j"

	lease-status --node-id n1 >"$d/t"
	lease-status --node-id n1 --json >"$d/j"
	run -0 same_lines "$d/j" "$d/t" valid_ms written_at_ms
	run -0 jq -e '.phase == "live" and (.valid_ms | type) == "number" and .valid_ms > 0 and .reason == null and (.written_at_ms | type) == "number"' "$d/j"
	# the exit codes do not change with the format
	run -15 --separate-stderr lease-status --node-id n9 --json
	[ "$output" = '{"type":"lease","node":"n9","phase":"none"}' ]
	[[ "$stderr" == *"no lease state for node n9 in "* ]]
	refute_sanitizer_reports
}

@test "json: owner-watch follows with JSON events; quoted text values decode to the same string" {
	start_node n1 n1
	start_bg w owner-watch --json
	wait_line 20 w '^\{"type":"synced","keys":0\}$'
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 owner-release --node-id n1 t/c/a
	printf 'not a record\n' | keep-store put owners/t/c/x >/dev/null
	wait_line 20 w '"type":"unreadable"'
	run -0 jq -s -e 'length >= 3' "$BATS_TEST_TMPDIR/w.out"
	run -0 jq -c 'select(.type == "acquired" or .type == "released") | [.type, .key, .node, .generation, .missed]' "$BATS_TEST_TMPDIR/w.out"
	# acquired then released, or (both within one listing) released with missed=1
	[[ "$output" == $'["acquired","t/c/a","n1",1,0]\n["released","t/c/a","n1",1,0]' ||
		"$output" == '["released","t/c/a",null,1,1]' ]] || { echo "$output"; false; }
	run -0 jq -r 'select(.type == "unreadable") | .reason' "$BATS_TEST_TMPDIR/w.out"
	[ "$output" = "not an ownership record" ]
	# the text line carries the same value, quoted
	run -17 owner-watch --once t/c/x
	[[ "$output" == *' reason="not an ownership record"' ]]
	run -17 --separate-stderr owner-watch --once --json t/c/x
	run -0 jq -r .reason <<<"$output"
	[ "$output" = "not an ownership record" ]
	refute_sanitizer_reports
}

@test "json: --json is refused where it does not apply" {
	run -100 --separate-stderr node-watch --once --table --json
	run -100 --separate-stderr owner-watch --once --table --json
	run -100 --separate-stderr owner-show --json
	run -100 --separate-stderr lease-status --json
}
