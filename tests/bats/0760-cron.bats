#!/usr/bin/env bats
# etc/cron.d/keep-forget: the line it contains runs as cron runs it (the
# file's own SHELL, PATH and KEEP_CONFIG, nothing else from the test's
# environment) and forgets a stale old-format heartbeat, never a fresh one
# nor a node lease; a run while another holds the lock does nothing; the
# output goes to logger. `make install` puts it in /etc/cron.d with PATH
# rewritten to PREFIX. Runs on the fs store and on a real S3 server.
#
# The file is run as `make install PREFIX=$T/prefix` would write it (its
# /usr/local/ rewritten), with /etc/keep/keep.yaml pointed at this test's
# config and /run/lock/ at a private directory (other test runs share the
# machine). $T/prefix/bin holds the commands under test and a stand-in
# logger(1) that records what it is given.

load helpers/common

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	keep_setup
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/prefix/bin" "$T/lock" "$T/home"
	for f in "$KEEP_BINDIR"/*; do
		ln -s "$f" "$T/prefix/bin/${f##*/}"
	done
	cat >"$T/prefix/bin/logger" <<EOF
#!/bin/sh
# stand-in for logger(1): its arguments, then each line it reads
{ printf 'logger'; printf ' %s' "\$@"; echo; cat; } >>"$T/syslog"
EOF
	chmod 755 "$T/prefix/bin/logger"
	CONF=$T/cron-keep.yaml
	cp "$KEEP_CONFIG" "$CONF"
	if [ "${KEEP_TEST_STORE:-fs}" = s3 ]; then
		# cron passes no AWS_* variables: the configuration names them
		printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
			"$S3_ACCESS_KEY" "$S3_SECRET_KEY" >"$T/creds"
		chmod 600 "$T/creds"
		printf 's3:\n  endpoint: %s\n  region: %s\n  credentials_file: %s\n' \
			"$S3_ENDPOINT" "${S3_REGION:-us-east-1}" "$T/creds" >>"$CONF"
	fi
	sed -e "s|/usr/local/|$T/prefix/|g" -e "s|/etc/keep/keep.yaml|$CONF|g" \
		-e "s|/run/lock/|$T/lock/|g" "$ROOT/etc/cron.d/keep-forget" >"$T/keep-forget"
}
teardown() { keep_teardown; }

put_old_hb() {
	printf 'wasmkeep-node %s\nnode %s\nwritten_at_ms %s\nhost old-host\n' "$2" "$1" "$3" |
		keep-store put "nodes/$1" >/dev/null
}

# cron_env FILE : the file's variable assignments, one a line
cron_env() { grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$1"; }
# cron_command FILE : the command of the file's one job line (after the
# five time fields and the user)
cron_command() {
	grep -E '^[0-9*]' "$1" | sed -E 's/^([^[:space:]]+[[:space:]]+){6}//'
}
# run_cron_line FILE : run the job line as cron does: SHELL -c COMMAND in an
# environment made of HOME, LOGNAME and the file's assignments only
run_cron_line() {
	local envs=() line
	while IFS= read -r line; do envs+=("$line"); done < <(cron_env "$1")
	env -i HOME="$T/home" LOGNAME=root "${envs[@]}" /bin/sh -c "$(cron_command "$1")"
}

@test "cron: the file has one daily job for root, a PATH, a lock and logger" {
	f="$ROOT/etc/cron.d/keep-forget"
	# a name cron accepts in /etc/cron.d (no dot), one job, five fields and a user
	[[ "${f##*/}" =~ ^[A-Za-z0-9_-]+$ ]]
	run -0 grep -cE '^[0-9*]' "$f"
	[ "$output" = 1 ]
	run -0 grep -E '^[0-9*]' "$f"
	[[ "$output" =~ ^[0-9]+\ [0-9]+\ \*\ \*\ \*\ root\  ]]
	grep -qx 'SHELL=/bin/sh' "$f"
	grep -qx 'PATH=/usr/local/bin:/usr/bin:/bin' "$f"
	grep -qx 'KEEP_CONFIG=/etc/keep/keep.yaml' "$f"
	run -0 cron_command "$f"
	[[ "$output" == *"flock -n /run/lock/keep-forget.lock "* ]]
	[[ "$output" == *"upgrade-mark forget --stale"* ]]
	[[ "$output" == *"| logger -t keep-forget "* ]]
	[[ "$output" == *"skipped: "* ]]
	[[ "$output" != *%* ]] # cron turns % into a newline
	run -0 sh -n -c "$output"
	[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ]
}

@test "cron: the job line, run as cron runs it, forgets a stale old heartbeat and logs it" {
	now=$(now_ms)
	put_old_hb old1 1 $((now - 600000))
	put_old_hb old2 2 $((now - 1000))
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	run -0 run_cron_line "$T/keep-forget"
	[ -z "$output" ] # everything went to logger
	run -1 keep-store stat nodes/old1
	run -0 keep-store stat nodes/old2 # fresh: kept for a later run
	run -0 keep-store stat nodes/n1	  # a node lease: never
	run -0 cat "$T/syslog"
	[ "${lines[0]}" = "logger -t keep-forget -p daemon.notice" ]
	assert_line "forgot node=old1 format=1 written_at_ms=$((now - 600000))"
	assert_line --regexp '^kept node=old2 reason=fresh '
	assert_line "exit 0"
	refute_sanitizer_reports
}

@test "cron: a run while the last one holds the lock does nothing; without a config it stays quiet" {
	now=$(now_ms)
	put_old_hb old1 1 $((now - 600000))
	# one process holds the lock (killing it frees the lock)
	start_bg holder sh -c 'exec 9>"$1" && flock 9 && exec sleep 60' _ "$T/lock/keep-forget.lock"
	wait_for 10 sh -c "! flock -n '$T/lock/keep-forget.lock' true"
	start=$(now_ms)
	run -0 run_cron_line "$T/keep-forget" # flock -n: skipped at once
	# tolerance 5 s: a start on a loaded machine; a run that waited for the
	# lock would wait for the holder's 60 s
	[ $(($(now_ms) - start)) -lt 5000 ]
	run -0 keep-store stat nodes/old1
	run -0 cat "$T/syslog"
	[ "$output" = "logger -t keep-forget -p daemon.notice
skipped: the last run still holds $T/lock/keep-forget.lock" ]
	kill "$(bg_pid holder)"
	run -0 wait_exit 10 holder # it ended (killed: its code does not matter)
	[ -n "$output" ]
	rm -f "$T/syslog"
	run -0 run_cron_line "$T/keep-forget"
	run -1 keep-store stat nodes/old1
	run -0 grep -c '^forgot node=old1 ' "$T/syslog"
	# no configuration on this host: nothing runs, nothing is logged
	rm -f "$T/syslog"
	put_old_hb old3 1 $((now - 600000))
	sed -i "s|^KEEP_CONFIG=.*|KEEP_CONFIG=$T/absent.yaml|" "$T/keep-forget"
	run -1 run_cron_line "$T/keep-forget"
	[ -z "$output" ]
	[ ! -e "$T/syslog" ]
	run -0 keep-store stat nodes/old3
	refute_sanitizer_reports
}

@test "cron: make install puts keep-forget in /etc/cron.d with PREFIX in PATH; CRONDIR= leaves it out" {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
	for prefix in /usr /usr/local; do
		d="$T/root$prefix"
		make -C "$ROOT" -s install PREFIX="$prefix" DESTDIR="$d" >"$T/make.log" 2>&1 ||
			{ tail -20 "$T/make.log"; false; }
		f="$d/etc/cron.d/keep-forget"
		[ -f "$f" ]
		[ "$(stat -c %a "$f")" = 644 ]
		grep -qx "PATH=$prefix/bin:/usr/bin:/bin" "$f"
		grep -qx 'KEEP_CONFIG=/etc/keep/keep.yaml' "$f"
		diff <(grep -E '^[0-9*]' "$f") <(grep -E '^[0-9*]' "$ROOT/etc/cron.d/keep-forget")
	done
	# any other PREFIX: an example under PREFIX/etc/cron.d (cron does not read it)
	make -C "$ROOT" -s install PREFIX=/opt/keep DESTDIR="$T/opt" >"$T/make.log" 2>&1
	grep -qx "PATH=/opt/keep/bin:/usr/bin:/bin" "$T/opt/opt/keep/etc/cron.d/keep-forget"
	[ ! -e "$T/opt/etc/cron.d" ]
	make -C "$ROOT" -s install PREFIX=/usr DESTDIR="$T/none" CRONDIR= >"$T/make.log" 2>&1
	[ ! -e "$T/none/etc/cron.d" ]
	[ -x "$T/none/usr/bin/upgrade-mark" ]
}
