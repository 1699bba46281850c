#!/usr/bin/env bats
# Log lines journald and pipelines can use (docs/operations.md "Logs"):
# every diagnostic line is [<N>][TIME ]PROG: LEVEL: message; <N> (the
# syslog priority) only when stderr is the journal (JOURNAL_STREAM names
# it), TIME per log.timestamps (auto: not on a terminal, not in the
# journal); stdout's lines keep their format unless --timestamps or
# log.event_timestamps adds ts=. The other tests run with
# KEEP_LOG_TIMESTAMPS=never (helpers/common.bash); these unset it.
# Store-independent: the fs pass.

load helpers/common

TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
	keep_setup
	unset KEEP_LOG_TIMESTAMPS
	E="$BATS_TEST_TMPDIR/stderr"
}
teardown() { keep_teardown; }

# journal FILE : the JOURNAL_STREAM value systemd would set for FILE (device:inode)
journal() { stat -L -c '%d:%i' "$1"; }

# err CMD... : CMD with its stderr appended to $E (stdout to $E.out); its status
err() { "$@" 2>>"$E" >"$E.out"; }

@test "logs: by default a file or a pipe gets the time first; PROG: LEVEL: stays greppable" {
	: >"$E"
	run -1 err keep-store get nope
	run -0 cat "$E"
	assert_output --regexp "^$TS keep-store: fatal: unable to get 'nope': not found\$"
	# through a pipe too
	run -0 bash -c 'keep-store get nope 2>&1 >/dev/null | cat'
	assert_output --regexp "^$TS keep-store: fatal: "
	# the usage hint is a line of its own, with its level
	: >"$E"
	run -100 err lease-fence --bogus
	run -0 cat "$E"
	assert_line --index 0 --regexp "^$TS lease-fence: fatal: unknown option '--bogus'\$"
	assert_line --index 1 --regexp "^$TS lease-fence: info: usage: lease-fence .* \\(\`lease-fence -h\` prints the whole usage\\)\$"
	[ "${#lines[@]}" -eq 2 ]
	# a warning, an info line
	run -0 lease-fence --create n9
	: >"$E"
	run -1 err lease-fence n9
	run -0 cat "$E"
	assert_output --regexp "^$TS lease-fence: info: nodes/n9 is already fenced \\(by operator\\)\$"
}

@test "logs: log.timestamps never, always, a bad value; KEEP_LOG_TIMESTAMPS before the configuration" {
	echo 'log: {timestamps: never}' >>"$KEEP_CONFIG"
	: >"$E"
	run -1 err keep-store get nope
	[ "$(cat "$E")" = "keep-store: fatal: unable to get 'nope': not found" ]
	sed -i 's/timestamps: never/timestamps: always/' "$KEEP_CONFIG"
	: >"$E"
	run -1 err keep-store get nope
	run -0 cat "$E"
	assert_output --regexp "^$TS keep-store: fatal: "
	sed -i 's/timestamps: always/timestamps: sometimes/' "$KEEP_CONFIG"
	run -100 --separate-stderr keep-store get nope
	[[ "$stderr" == *"'timestamps' must be auto, always or never"* ]]
	# the environment sets the default (usage errors come before the file)
	sed -i '/^log:/d' "$KEEP_CONFIG"
	KEEP_LOG_TIMESTAMPS=never run -100 --separate-stderr lease-fence --bogus
	[ "${stderr_lines[0]}" = "lease-fence: fatal: unknown option '--bogus'" ]
	KEEP_LOG_TIMESTAMPS=always run -100 --separate-stderr lease-fence --bogus
	[[ "${stderr_lines[0]}" =~ ^$TS\ lease-fence:\ fatal: ]]
}

@test "logs: on a terminal no time (a person reads it as it comes)" {
	command -v script >/dev/null || skip "script(1) not installed"
	run -0 script -qec "keep-store get nope; true" /dev/null
	assert_output --partial "keep-store: fatal: unable to get 'nope': not found"
	refute_output --regexp "$TS keep-store"
}

@test "logs: in the journal each line starts with its syslog priority, and carries no time of its own" {
	: >"$E"
	JOURNAL_STREAM=$(journal "$E") run -1 err keep-store get nope
	[ "$(cat "$E")" = "<3>keep-store: fatal: unable to get 'nope': not found" ]
	run -0 lease-fence --create n9
	: >"$E"
	JOURNAL_STREAM=$(journal "$E") run -1 err lease-fence n9
	[ "$(cat "$E")" = "<6>lease-fence: info: nodes/n9 is already fenced (by operator)" ]
	# a warning: a key keep cannot use, skipped by a listing
	printf 'not ours\n' >"$BATS_TEST_TMPDIR/bucket/nodes/n2"
	: >"$E"
	JOURNAL_STREAM=$(journal "$E") run -0 err keep-store list nodes/
	run -0 cat "$E"
	assert_output --regexp '^<4>keep-store: warning: listing nodes/: skipped '
	# JOURNAL_STREAM naming another file (stderr redirected away from the
	# journal): no priority, the time as for any file
	: >"$E"
	JOURNAL_STREAM=$(journal "$KEEP_CONFIG") run -1 err keep-store get nope
	run -0 cat "$E"
	assert_output --regexp "^$TS keep-store: fatal: "
}

@test "logs: journalctl -p err finds the agent's one fatal line among its info lines" {
	# a store that fails store-probe: the agent says what it does, then why it stops
	echo "put probe/ error 403" >"$FAULT_FILE"
	: >"$E"
	JOURNAL_STREAM=$(journal "$E") run -1 err keep-agent --node-id n1
	run -0 grep -c '^<6>keep-agent: info: ' "$E"
	[ "$output" -ge 1 ]
	# the priority filter (journalctl -p err: 0..3): the one fatal line
	run -0 grep -E '^<[0-3]>' "$E"
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp '^<3>keep-agent: fatal: the store does not pass store-probe \(exit 1\)'
	# every line carries a priority (the agent's and its children's)
	run -1 grep -vE '^<[0-7]>[a-z-]+: (fatal|error|warning|info): ' "$E"
	# the agent's own lines follow log.timestamps too
	: >"$E"
	run -1 err keep-agent --node-id n1
	run -0 grep -cE "^$TS keep-agent: fatal: the store does not pass store-probe" "$E"
}

@test "logs: --timestamps and log.event_timestamps add ts= last on stdout; the text and JSON lines keep their fields" {
	run -0 --separate-stderr lease-fence --create --timestamps n9
	assert_output --regexp "^fenced node=n9 instance=- written_at_ms=[0-9]+ free_at_ms=[0-9]+ ts=$TS\$"
	run -0 --separate-stderr node-watch --once --json --timestamps
	assert_output --regexp "^\\{\"type\":\"node\",\"id\":\"n9\",.*,\"ts\":\"$TS\"\\}\$"
	run -0 --separate-stderr node-watch --once
	refute_output --partial " ts="
	echo 'log: {event_timestamps: true}' >>"$KEEP_CONFIG"
	run -0 --separate-stderr node-watch --once
	assert_output --regexp " ts=$TS\$"
	# lease-fence --stdin reads node-watch's lines with their ts=
	run -0 --separate-stderr lease-fence --stdin --node-id n2 \
		<<<"stale node=n1 instance=0123456789abcdef0123456789abcdef written_at_ms=1 unchanged_ms=9 ts=2025-01-01T00:00:00.000Z"
	assert_output --regexp '^skipped node=n1 .* reason=.*'
	[[ "$stderr" != *"unknown key"* ]]
	# keep-agent status follows --timestamps
	run -15 --separate-stderr keep-agent status --node-id n1 --timestamps
	assert_line --regexp "^status node=n1 ready=no .* ts=$TS\$"
}
