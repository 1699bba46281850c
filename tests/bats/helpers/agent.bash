# keep — helpers for the keep-agent tests (tests/bats/025x-agent-*.bats).
# Load after helpers/common.

# agent_field NODE TYPE KEY: the value of KEY on the TYPE line of
# `keep-agent status --node-id NODE` (whatever its exit code).
agent_field() {
	keep-agent status --node-id "$1" 2>/dev/null |
		sed -n "s/^$2 .*[ ]$3=\([^ ]*\).*/\1/p"
}

# fd_mode PID FD: how PID's FD is open: r, w or rw (the access mode of
# /proc/PID/fdinfo/FD's flags, octal).
fd_mode() {
	local f
	f=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$1/fdinfo/$2" 2>/dev/null) || return 1
	[ -n "$f" ] || return 1
	case $((8#$f & 3)) in
	0) echo r ;;
	1) echo w ;;
	*) echo rw ;;
	esac
}

# fencing_wired NODE: the agent's node-watch and lease-fence both run and
# node-watch's stdout is the very pipe lease-fence reads (same inode), each
# with one direction of it (node-watch writes, lease-fence reads: the
# reader sees end of input when the writer is gone, the writer EPIPE when
# the reader is): the peer-fencing pipeline is up.
fencing_wired() {
	local nw lf a b
	[ "$(agent_field "$1" fencing state)" = running ] || return 1
	nw=$(agent_field "$1" fencing node_watch)
	lf=$(agent_field "$1" fencing lease_fence)
	a=$(stat -L -c '%d:%i:%F' "/proc/$nw/fd/1" 2>/dev/null) || return 1
	b=$(stat -L -c '%d:%i:%F' "/proc/$lf/fd/0" 2>/dev/null) || return 1
	[ "$a" = "$b" ] || return 1
	[[ "$a" == *fifo* ]] || return 1
	[ "$(fd_mode "$nw" 1)" = w ] || return 1
	[ "$(fd_mode "$lf" 0)" = r ]
}

# node_pids PID: PID and every descendant of it (the agent and its
# children, whatever their process groups).
node_pids() {
	echo "$1"
	descendants "$1"
}

# node_state NODE STATE: nodes/NODE is in STATE (live, released, fenced).
node_state() {
	[ "$(keep-store get "nodes/$1" 2>/dev/null | sed -n 2p | cut -d' ' -f1)" = "$2" ]
}

# nothing_pending NODE: no pending release or unresolved acquire in the
# node's state directory.
nothing_pending() {
	[ -z "$(ls -A "$STATE_DIR/$1/pending" 2>/dev/null)" ]
}

# agent_field_is NODE TYPE KEY VALUE: agent_field says VALUE (for wait_for).
agent_field_is() {
	[ "$(agent_field "$1" "$2" "$3")" = "$4" ]
}

# in_terminal NAME CMD...: run CMD as the foreground job of a new terminal
# (a tmux session of this test's own server); its stdout, stderr and exit
# code in NAME.out, NAME.err, NAME.rc (as start_bg). The environment the
# keep commands need is passed explicitly.
in_terminal() {
	local n=$1 d=$BATS_TEST_TMPDIR v
	shift
	{
		for v in PATH KEEP_BINDIR KEEP_CONFIG KEEP_FAULT_FILE ASAN_OPTIONS UBSAN_OPTIONS \
			AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION AWS_ENDPOINT_URL_S3; do
			[ -z "${!v+x}" ] || printf 'export %s=%q\n' "$v" "${!v}"
		done
		# the terminal's Ctrl-C reaches this shell too: it goes on to write
		# CMD's status, whatever ended CMD
		printf "trap ': Ctrl-C' INT\n"
		# leak-checked at exit, as everything a test starts in the background
		printf 'export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=1"\n'
		printf '%q ' "$@"
		printf '>%q 2>%q\necho $? >%q\n' "$d/$n.out" "$d/$n.err" "$d/$n.rc"
	} >"$d/$n.sh"
	tmux -S "$d/tmux.sock" new-session -d -x 200 -y 50 "bash $d/$n.sh"
}

# terminal_keys KEYS...: type KEYS into that terminal (tmux send-keys: C-c is Ctrl-C)
terminal_keys() {
	tmux -S "$BATS_TEST_TMPDIR/tmux.sock" send-keys "$@"
}

terminal_teardown() {
	tmux -S "$BATS_TEST_TMPDIR/tmux.sock" kill-server 2>/dev/null || true
}

# agent_field_at RUN_DIR TYPE KEY: agent_field for the node n1 that `make
# run` runs in RUN_DIR
agent_field_at() {
	keep-agent status --store "file://$1/bucket" --node-id n1 --state-dir "$1/state" 2>/dev/null |
		sed -n "s/^$2 .*[ ]$3=\([^ ]*\).*/\1/p"
}
