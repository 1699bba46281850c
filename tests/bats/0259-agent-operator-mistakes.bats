#!/usr/bin/env bats
# keep-agent and its status under an operator's mistakes (issue 27, the
# operator's walkthrough): a state directory it cannot use says why in one
# line instead of ending the shell silently (exit 2); the wrong user is named
# as the likely cause; `--check` appended after the flags works.

load helpers/common
agent_leak_checks

setup() { keep_setup; }
teardown() { keep_teardown; }

@test "agent-mistakes: a state directory it cannot use: exit 111 and one line saying why, never a silent exit 2" {
	# STATE_DIR/n1/agent.lock is a directory: the lock file cannot be opened
	# (dash ended the script at once with status 2 and no word before)
	mkdir -p "$STATE_DIR/n1/agent.lock"
	run -111 --separate-stderr keep-agent --node-id n1
	[ -z "$output" ]
	[ "$stderr" = "keep-agent: fatal: unable to open '$STATE_DIR/n1/agent.lock': Is a directory" ]
	# STATE_DIR/n2 is a file: the node's directory cannot be made
	: >"$STATE_DIR/n2"
	run -111 --separate-stderr keep-agent --node-id n2
	[ "$stderr" = "keep-agent: fatal: unable to create '$STATE_DIR/n2': File exists" ]
	# nothing was written to the bucket
	run -0 keep-store list nodes/
	[ -z "$output" ]
}

@test "agent-mistakes: run as the wrong user, the agent and its status name the permission problem" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run a command as another user"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	mkdir -p -m 700 "$STATE_DIR/n1"
	as_nobody() { env -u KEEP_CONFIG setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
	run -111 --separate-stderr as_nobody keep-agent --node-id n1 --store "$STORE_URL" --state-dir "$STATE_DIR"
	[[ "$stderr" == "keep-agent: fatal: unable to "* ]]
	[[ "$stderr" == *": Permission denied (run keep-agent as the user owning the state directory: the unit runs as keep)" ]]
	# the status of a node it may not read: not live (15), and the one line
	# says that the answer is not about the node
	run -15 --separate-stderr as_nobody lease-status --node-id n1 --state-dir "$STATE_DIR"
	[ "$output" = "lease node=n1 phase=none" ]
	[ "$stderr" = "lease-status: warning: unable to read the lease state in '$STATE_DIR/n1': Permission denied: this answer is not about the node (run it as the user the agent runs as, or root)" ]
	refute_sanitizer_reports
}

@test "agent-mistakes: the status of a mistyped node id says that no node ran here, naming those that did" {
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	run -0 --separate-stderr lease-status --node-id n1
	[ -z "$stderr" ]
	# no node id at all: said as keep-agent status's error, with its usage
	# (it pointed at lease-status -h)
	run -100 --separate-stderr keep-agent status
	[ "${stderr_lines[0]}" = "keep-agent: fatal: no node id (--node-id or node_id: in the config)" ]
	[[ "${stderr_lines[1]}" == "keep-agent: info: usage: keep-agent status "* ]]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ -z "$output" ]
	run -15 --separate-stderr keep-agent status --node-id n11
	[ "${lines[0]}" = "lease node=n11 phase=none" ]
	[ "$stderr" = "lease-status: warning: no lease state for node n11 in '$STATE_DIR/n11': no node ran here under this id and state directory (nodes with state there: n1); check --node-id and --state-dir" ]
	# the wrong state directory: the same line, no node there
	mkdir "$BATS_TEST_TMPDIR/other"
	run -15 --separate-stderr lease-status --node-id n1 --state-dir "$BATS_TEST_TMPDIR/other"
	[ "$stderr" = "lease-status: warning: no lease state for node n1 in '$BATS_TEST_TMPDIR/other/n1': no node ran here under this id and state directory (nodes with state there: none); check --node-id and --state-dir" ]
	kill -TERM "$(bg_pid n1)"
	run wait_exit 15 n1
	[ "$output" = 0 ]
	# a node that stopped keeps its state: no such line
	run -15 --separate-stderr lease-status --node-id n1
	[ -z "$stderr" ]
	refute_sanitizer_reports
}

@test "agent-mistakes: --check after the flags validates as --check first does; status must come first" {
	run -0 --separate-stderr keep-agent -c "$KEEP_CONFIG" --node-id n1 --check
	[ "$output" = "configuration OK" ]
	run -0 --separate-stderr keep-agent --check -c "$KEEP_CONFIG" --node-id n1
	[ "$output" = "configuration OK" ]
	run -100 --separate-stderr keep-agent --node-id 'n 1' --check
	[[ "$stderr" == *"node id 'n 1' is not valid"* ]]
	run -100 --separate-stderr keep-agent --node-id n1 status
	[ "${stderr_lines[0]}" = "keep-agent: fatal: 'status' comes first: keep-agent status [-c FILE] [--node-id ID] ..." ]
	run -100 --separate-stderr keep-agent status --node-id n1 --check
	[ "${stderr_lines[0]}" = "keep-agent: fatal: --check is not for keep-agent status" ]
	# none of it touched the state directory or the bucket
	[ ! -e "$STATE_DIR/n1" ]
	run -0 keep-store list nodes/
	[ -z "$output" ]
}

@test "agent-mistakes: a drain by hand of a node that never ran here warns, and drains nothing" {
	run -0 --separate-stderr owner-release --node-id n11 --all --wait-ms 2000
	[ "$output" = "drain pending=0" ]
	[ "$stderr" = "owner-release: warning: no lease state for node n11 in '$STATE_DIR/n11': no node ran here under this id and state directory, so there is nothing to drain (check --node-id and --state-dir)" ]
	# a node that ran here: no such line
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	run -0 --separate-stderr owner-release --node-id n1 --all --wait-ms 2000
	[ "$output" = "drain pending=0" ]
	[ -z "$stderr" ]
	kill -TERM "$(bg_pid n1)"
	run wait_exit 15 n1
	[ "$output" = 0 ]
	refute_sanitizer_reports
}
