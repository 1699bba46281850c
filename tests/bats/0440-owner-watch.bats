#!/usr/bin/env bats
# owner-watch: the table (--once), the events of acquisitions, releases,
# fences and clean stops of many keys by two nodes with no missed
# transition, reading only what changed, prefixes, bad records and usage
# (docs/ownership.md "Watching owners"; docs/formats.md).
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/foreign

setup() { keep_setup; }
teardown() { keep_teardown; }

# start_node NAME ID : lease-write for node ID in the background, live
start_node() {
	start_bg "$1" lease-write --node-id "$2"
	wait_line 30 "$1" '^live '
}
instance_of() { sed -n 's/^live .*instance=\([0-9a-f]*\).*/\1/p' "$BATS_TEST_TMPDIR/$1.out" | head -n 1; }
keys() { for i in $(seq -w "$1" "$2"); do echo "t/c/k$i"; done; }
# count NAME REGEX : lines of NAME's stdout matching REGEX
count() { grep -cE -- "$2" "$BATS_TEST_TMPDIR/$1.out" || true; }
# has_count NAME REGEX N : NAME's stdout has at least N lines matching REGEX
has_count() { [ "$(count "$1" "$2")" -ge "$3" ]; }
# passes NAME : listings NAME (started with KEEP_FAULT_LOG=1 under the
# rule `list owners/ delay 1`) made so far: one a pass, logged on stderr
passes() { grep -c '^keep-fault: list owners/' "$BATS_TEST_TMPDIR/$1.err" || true; } # (grep -c: 1 on none)
passes_ge() { [ "$(passes "$1")" -ge "$2" ]; }
# wait_count SECONDS NAME REGEX N : until NAME's stdout has N lines matching REGEX
wait_count() { wait_for "$1" has_count "$2" "$3" "$4"; }
# acquire_all SECONDS NODE KEYS... : retry until every key is acquired by NODE
acquire_all() {
	local end=$(($(now_ms) + $1 * 1000)) node=$2 rc
	shift 2
	while :; do
		rc=0
		printf '%s\n' "$@" | owner-acquire --node-id "$node" >"$BATS_TEST_TMPDIR/acq.out" 2>>"$BATS_TEST_TMPDIR/acq.err" || rc=$?
		[ "$rc" -eq 0 ] && return 0
		[ "$rc" -eq 1 ] || { echo "owner-acquire exit $rc" >&2; cat "$BATS_TEST_TMPDIR/acq.out" >&2; return 1; }
		[ "$(now_ms)" -lt "$end" ] || { echo "still held after $1 s" >&2; return 1; }
		sleep 0.2
	done
}

@test "owner-watch: acquire, release and fence of 50 keys by two nodes, every transition once, none missed" {
	start_node n1 n1
	start_node n2 n2
	i1=$(instance_of n1)
	i2=$(instance_of n2)
	# each pass of the watch's is seen: its listing logged (a 1 ms delay)
	echo 'list owners/ delay 1' >"$FAULT_FILE"
	start_bg w env KEEP_FAULT_LOG=1 owner-watch t/c/
	wait_line 20 w '^synced keys=0$'
	# n1 takes k01..k25, n2 k26..k50
	run -0 owner-acquire --node-id n1 $(keys 1 25)
	run -0 owner-acquire --node-id n2 $(keys 26 50)
	wait_count 20 w '^acquired ' 50
	# n1 releases k01..k10
	run -0 owner-release --node-id n1 $(keys 1 10)
	wait_count 20 w '^released ' 10
	# the operator fences n2: its 25 holds show holder-fenced
	run -0 lease-fence n2
	wait_count 20 w '^holder-fenced ' 25
	run wait_exit 20 n2
	[ "$output" = 10 ]
	# n1 takes n2's keys over once they are free, and k01..k10 again
	acquire_all 30 n1 $(keys 26 50)
	run -0 owner-acquire --node-id n1 $(keys 1 10)
	wait_count 20 w '^acquired ' 85
	# two more passes: nothing else may show up
	p=$(passes w)
	wait_for 20 passes_ge w $((p + 2))
	kill -TERM "$(bg_pid w)"
	run wait_exit 10 w
	[ "$output" = 0 ]
	out="$BATS_TEST_TMPDIR/w.out"
	[ "$(wc -l <"$out")" -eq $((1 + 50 + 10 + 25 + 35)) ] || { cat "$out"; false; }
	# per key, exactly the expected sequence, with the fields of each hold
	for k in $(keys 1 10); do
		run -0 grep -F " key=$k " "$out"
		[ "${#lines[@]}" -eq 3 ]
		[ "${lines[0]}" = "acquired key=$k node=n1 instance=$i1 generation=1 previous_node=- missed=0" ]
		[ "${lines[1]}" = "released key=$k node=n1 instance=$i1 generation=1 missed=0" ]
		[ "${lines[2]}" = "acquired key=$k node=n1 instance=$i1 generation=2 previous_node=- missed=0" ]
	done
	for k in $(keys 11 25); do
		run -0 grep -F " key=$k " "$out"
		[ "${#lines[@]}" -eq 1 ]
		[ "${lines[0]}" = "acquired key=$k node=n1 instance=$i1 generation=1 previous_node=- missed=0" ]
	done
	for k in $(keys 26 50); do
		run -0 grep -F " key=$k " "$out"
		[ "${#lines[@]}" -eq 3 ]
		[ "${lines[0]}" = "acquired key=$k node=n2 instance=$i2 generation=1 previous_node=- missed=0" ]
		[ "${lines[1]}" = "holder-fenced key=$k node=n2 instance=$i2 generation=1" ]
		[ "${lines[2]}" = "acquired key=$k node=n1 instance=$i1 generation=2 previous_node=n2 missed=0" ]
	done
	refute_sanitizer_reports
}

@test "owner-watch --once: the table as owner-show lines; --table for people; prefixes" {
	start_node n1 n1
	i1=$(instance_of n1)
	run -0 owner-acquire --node-id n1 t/c/a t/c/b t/cx/a u/c/a
	run -0 owner-release --node-id n1 t/c/b
	run -0 --separate-stderr owner-watch --once
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "owner key=t/c/a state=held node=n1 instance=$i1 generation=1 holder=live free=no" ]
	[ "${lines[1]}" = "owner key=t/c/b state=nobody node=- instance=- generation=1 holder=- free=yes" ]
	[ "${lines[2]}" = "owner key=t/cx/a state=held node=n1 instance=$i1 generation=1 holder=live free=no" ]
	[ "${lines[3]}" = "owner key=u/c/a state=held node=n1 instance=$i1 generation=1 holder=live free=no" ]
	# every line is owner-show's line for its key
	for k in t/c/a t/c/b t/cx/a u/c/a; do
		run -0 owner-show "$k"
		want=$output
		run -0 owner-watch --once "$k"
		[ "$output" = "$want" ]
	done
	# PREFIX is the start of the key, at any byte
	run -0 owner-watch --once t/c/
	[ "${#lines[@]}" -eq 2 ]
	run -0 owner-watch --once t/c
	[ "${#lines[@]}" -eq 3 ]
	run -0 owner-watch --once u
	[ "${#lines[@]}" -eq 1 ]
	run -0 owner-watch --once nothing/
	[ -z "$output" ]
	run -0 owner-watch --once --table t/c/
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" =~ ^KEY\ +STATE\ +NODE\ +GENERATION\ +HOLDER\ +FREE\ +NOTE$ ]]
	[[ "${lines[1]}" =~ ^t/c/a\ +held\ +n1\ +1\ +live\ +no$ ]]
	[[ "${lines[2]}" =~ ^t/c/b\ +nobody\ +-\ +1\ +-\ +yes$ ]]
	# the holder stops cleanly: holder=released, free once ttl + grace passed
	kill -TERM "$(bg_pid n1)"
	run -0 wait_exit 20 n1
	[ "$output" = 0 ] # a clean stop
	[ "$output" = 0 ]
	run -0 owner-watch --once t/c/a
	# (free=yes only ttl + grace after its last write: the free rule's own tests)
	[[ "$output" =~ ^owner\ key=t/c/a\ state=held\ node=n1\ instance=$i1\ generation=1\ holder=released\ free=(no|yes)$ ]]
	refute_sanitizer_reports
}

@test "owner-watch: a clean stop, a restart under a new instance and a removed record are events" {
	start_node n1 n1
	i1=$(instance_of n1)
	run -0 owner-acquire --node-id n1 t/c/a t/c/b
	start_bg w owner-watch
	wait_line 20 w '^synced keys=2$'
	run -0 grep -c '^owner key=t/c/[ab] state=held node=n1 ' "$BATS_TEST_TMPDIR/w.out"
	[ "$output" = 2 ]
	kill -TERM "$(bg_pid n1)"
	run -0 wait_exit 20 n1
	[ "$output" = 0 ] # a clean stop
	wait_count 20 w '^holder-released ' 2
	run -0 grep '^holder-released key=t/c/a ' "$BATS_TEST_TMPDIR/w.out"
	[ "$output" = "holder-released key=t/c/a node=n1 instance=$i1 generation=1" ]
	# a new process of n1: the records still name the old instance
	start_node n1b n1
	wait_count 20 w '^holder-live-other-instance ' 2
	# an operator deletes a record (keep never does)
	run -0 keep-store del --force owners/t/c/b
	wait_line 20 w "^removed key=t/c/b node=n1 instance=$i1 generation=1$"
	refute_sanitizer_reports
}

@test "owner-watch: reads a record only when its listed version token changed" {
	start_node n1 n1
	keys 1 30 >"$BATS_TEST_TMPDIR/keys"
	run -0 owner-acquire --node-id n1 <"$BATS_TEST_TMPDIR/keys"
	run -0 owner-release --node-id n1 $(keys 1 30)
	# nobody holds anything: 30 GETs at the first pass, none after
	echo 'list owners/ delay 1' >"$FAULT_FILE"
	start_bg w env KEEP_FAULT_LOG=1 owner-watch --stats t/c/
	wait_line 20 w '^synced keys=30$'
	# three more passes (their listings, logged)
	p=$(passes w)
	wait_for 20 passes_ge w $((p + 3))
	: >"$FAULT_FILE"
	kill -TERM "$(bg_pid w)"
	run wait_exit 10 w
	[ "$output" = 0 ]
	run -0 cat "$BATS_TEST_TMPDIR/w.err"
	[[ "$output" =~ stats\ requests=[0-9]+\ get=30\ head=0\ put=0\ delete=0\ list=([0-9]+)\  ]] || { echo "$output"; false; }
	[ "${BASH_REMATCH[1]}" -ge 3 ] # passes made: the records were listed again, not read
	# one record written: one more GET for it, and its holder's object
	# once a pass (a live node writes every period) until the watch stops
	start_bg w2 owner-watch --stats t/c/
	wait_line 20 w2 '^synced keys=30$'
	run -0 owner-acquire --node-id n1 t/c/k07
	wait_line 20 w2 '^acquired key=t/c/k07 '
	kill -TERM "$(bg_pid w2)"
	run -0 wait_exit 10 w2
	[ "$output" = 0 ] # owner-watch: 0 on a signal
	run -0 cat "$BATS_TEST_TMPDIR/w2.err"
	[[ "$output" =~ stats\ requests=[0-9]+\ get=3[1-4]\  ]] || { echo "$output"; false; }
	refute_sanitizer_reports
}

@test "owner-watch: a malformed record is shown, not guessed: --once exits 17, --follow prints unreadable" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf 'wasmkeep-owner 1\nheld n1\n' | keep-store put owners/t/c/bad >/dev/null
	run -17 --separate-stderr owner-watch --once
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == 'owner key=t/c/bad state=unreadable node=- instance=- generation=- holder=- free=no reason='* ]]
	start_bg w owner-watch
	wait_line 20 w '^synced keys=2$'
	printf 'something else\n' | keep-store put owners/t/c/a >/dev/null
	wait_line 20 w '^unreadable key=t/c/a node=- instance=- generation=- reason="not an ownership record"$'
	run -0 keep-store get owners/t/c/bad
	[ "$output" = "$(printf 'wasmkeep-owner 1\nheld n1')" ] # nothing written
	refute_sanitizer_reports
}

@test "owner-watch: a record over 65536 bytes is named and skipped: --once exits 17, --follow goes on" {
	head -c 70000 /dev/zero | tr '\0' 'a' >"$BATS_TEST_TMPDIR/big"
	foreign_put_ours owners/t/c/big "$BATS_TEST_TMPDIR/big"
	nobody() { printf 'wasmkeep-owner 1\nnobody\ngeneration 1\n' | keep-store put "owners/$1" >/dev/null; }
	nobody t/c/a
	run -17 --separate-stderr owner-watch --once
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 1 --regexp '^owner key=t/c/big state=unreadable .* reason=".*larger than 65536 bytes.*"$'
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
	[[ $stderr == "owner-watch: warning: owners/t/c/big is not a keep ownership record: "*"larger than 65536"* ]]
	# follow: named once (not every period), the other keys still followed
	start_bg w owner-watch
	wait_line 20 w '^synced keys=2$'
	nobody t/c/b
	wait_line 20 w '^released key=t/c/b '
	nobody t/c/c
	wait_line 20 w '^released key=t/c/c '
	bg_running w
	[ "$(grep -c 'owners/t/c/big' "$BATS_TEST_TMPDIR/w.err")" -eq 1 ]
	refute_sanitizer_reports
}

@test "owner-watch: usage errors exit 100; the store unreachable exits 111 with --once" {
	for bad in "/t" "t//c" "t/c/a/b" "t/.c" "t/c d" ".t"; do
		run -100 --separate-stderr owner-watch --once "$bad"
		[[ "$stderr" == *"invalid prefix"* ]]
	done
	run -100 --separate-stderr owner-watch --table
	run -100 --separate-stderr owner-watch --once --table --json
	run -100 --separate-stderr owner-watch --once --follow
	run -100 --separate-stderr owner-watch --once a/ b/
	run -0 owner-watch --check
	[ "$output" = "configuration OK" ]
	echo "list * fail" >"$FAULT_FILE"
	run -111 --separate-stderr owner-watch --once
	[[ "$stderr" == *"unable to list owners/"* ]]
	refute_sanitizer_reports
}
