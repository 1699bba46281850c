#!/usr/bin/env bats
# Secrets: the S3 secret key (and a session token) never appear in any
# command's stdout or stderr, in the state directory or in the metrics file,
# including with -v, on a wrong secret and on errors; a credentials file that
# group or other may read is refused (0600 accepted); TLS verification is on
# unless tls_insecure is set, and tls_insecure is only honoured for a
# loopback endpoint (an `openssl s_server` with a self-signed certificate).
#
# On the S3 run (KEEP_TEST_STORE=s3) every command talks to the real server
# with its secret ($S3_SECRET_KEY; scripts/s3-server.sh's default is
# testsecretkey). The store-independent cases (credential file modes, TLS,
# a wrong secret against a closed port) run on the fs pass only.

load helpers/common

setup() {
	keep_setup
	LOG="$BATS_TEST_TMPDIR/all.log"
	: >"$LOG"
	MARK="zzKeepSecret$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	TOKEN_MARK="zzKeepToken$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
}
teardown() { keep_teardown; }

s3_only() { [ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "needs the S3 server (runs in the s3 pass)"; }
fs_only() { [ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"; }

# logged CMD... : run CMD, keep its stdout and stderr in $LOG (and in
# $output / $stderr / $status, as `run`)
logged() {
	local crashed=
	run --separate-stderr "$@"
	[ "$status" -eq 124 ] || refute_crash || crashed=1 # 124: a bounded run (timeout) ended it
	{
		echo "## $* -> $status"
		printf '%s\n' "$output" "$stderr"
	} >>"$LOG"
	[ -z "$crashed" ]
}

# no_secret SECRET... : none of the secrets in $LOG, in any background
# command's output, in the state dir or the metrics file
no_secret() {
	local s f
	for s in "$@"; do
		[ -n "$s" ] || continue
		for f in "$LOG" "$BATS_TEST_TMPDIR"/*.out "$BATS_TEST_TMPDIR"/*.err; do
			[ -f "$f" ] || continue
			if grep -qF -- "$s" "$f"; then
				echo "secret found in $f:"
				grep -nF -- "$s" "$f" | head -5
				return 1
			fi
		done
		if grep -rqF -- "$s" "$STATE_DIR" "$BATS_TEST_TMPDIR"/*.prom 2>/dev/null; then
			echo "secret found in the state dir or metrics: $(grep -rlF -- "$s" "$STATE_DIR" "$BATS_TEST_TMPDIR"/*.prom)"
			return 1
		fi
	done
}

# free_port : a TCP port nothing listens on (loopback)
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000))
		curl -s -o /dev/null -m 1 "http://127.0.0.1:$p/" || [ $? -ne 7 ] || { echo "$p"; return 0; }
	done
	return 1
}

# s3_config FILE ENDPOINT [EXTRA_S3_LINES] : a config for an s3:// store at
# ENDPOINT (the default timeout, 10 s: with 2 s a TLS handshake with a
# single-threaded s_server timed out on a loaded machine, a timeout where
# the test wants the certificate's refusal)
s3_config() {
	cat >"$1" <<YAML
node_id: n1
store: s3://keep-test/secrets
state_dir: $STATE_DIR
s3:
  endpoint: $2
  region: us-east-1
  timeout_ms: 10000
$3
YAML
}

@test "secrets: no command prints the S3 secret, with -v, on success and on errors" {
	s3_only
	printf 'metrics:\n  textfile: %s/keep.prom\n' "$BATS_TEST_TMPDIR" >>"$KEEP_CONFIG"
	start_bg lw lease-write --node-id n1 -v
	start_bg agent keep-agent --node-id a1
	logged store-probe
	[ "$status" -eq 0 ]
	logged keep-store put scratch/k <<<"body"
	logged keep-store get scratch/k
	logged keep-store stat scratch/k
	logged keep-store list ''
	logged keep-store put scratch/k --if-match wrong-version <<<"body"
	[ "$status" -eq 1 ]
	logged keep-store del scratch/k
	logged keep-store get scratch/absent
	wait_line 20 lw '^live '
	logged lease-status --node-id n1
	logged node-watch --once
	logged node-watch --once --table
	logged owner-acquire --node-id n1 t/c/a
	[ "$status" -eq 0 ]
	gen=$(sed -n 's/.*generation=\([0-9]*\).*/\1/p' <<<"$output")
	logged owner-show t/c/a
	logged owner-check --node-id n1 t/c/a "$gen"
	logged owner-release --node-id n1 t/c/a
	logged owner-release --node-id n1 --pending
	logged upgrade-mark actors t/c/b
	logged upgrade-mark guard
	logged lease-fence --create n9
	logged lease-fence n9 # refused: already fenced
	[ "$status" -eq 1 ]
	logged upgrade-mark forget n9
	logged upgrade-mark forget --stale
	logged lease-fence n9 # refused: absent (forgotten above)
	[ "$status" -eq 1 ]
	printf 'wasmkeep-node 7\n' | keep-store put nodes/bad >/dev/null
	logged node-watch --once
	logged lease-fence bad
	[ "$status" -eq 17 ]
	wait_for 20 keep-agent status --node-id a1
	logged keep-agent status --node-id a1
	[ "$status" -eq 0 ]
	kill -TERM "$(bg_pid lw)" "$(bg_pid agent)"
	run wait_exit 20 lw
	[ "$output" = 0 ]
	run wait_exit 30 agent
	[ "$output" = 0 ]
	no_secret "$S3_SECRET_KEY" "$AWS_SECRET_ACCESS_KEY"
	refute_sanitizer_reports
}

@test "secrets: a wrong secret and session token are refused by the server and never printed" {
	s3_only
	export AWS_SECRET_ACCESS_KEY="$MARK" AWS_SESSION_TOKEN="$TOKEN_MARK"
	logged keep-store list ''
	[ "$status" -ne 0 ]
	logged keep-store put k <<<"x"
	[ "$status" -ne 0 ]
	logged store-probe
	[ "$status" -ne 0 ]
	logged owner-show t/c/a
	[ "$status" -ne 0 ]
	logged node-watch --once
	[ "$status" -ne 0 ]
	logged lease-fence n9
	[ "$status" -ne 0 ]
	logged timeout 6 lease-write --node-id n1 -v
	[ "$status" -ne 0 ]
	no_secret "$MARK" "$TOKEN_MARK" "$S3_SECRET_KEY"
	refute_sanitizer_reports
}

@test "secrets: an unreachable endpoint or a bad credentials line never prints the secret" {
	fs_only
	port=$(free_port)
	export AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY="$MARK" AWS_SESSION_TOKEN="$TOKEN_MARK"
	s3_config "$BATS_TEST_TMPDIR/s3.yaml" "http://127.0.0.1:$port"
	for cmd in "keep-store list" "keep-store get k" "store-probe" "node-watch --once" "lease-fence n9" \
		"owner-show t/c/a"; do
		# shellcheck disable=SC2086
		logged $cmd -c "$BATS_TEST_TMPDIR/s3.yaml"
		[ "$status" -eq 111 ]
	done
	logged timeout 6 lease-write -v -c "$BATS_TEST_TMPDIR/s3.yaml"
	[ "$status" -ne 0 ]
	# a credentials file whose lines do not parse: the error names the file, not a value
	printf '[default]\naws_access_key_id AKIDTEST\naws_secret_access_key %s\n' "$MARK" >"$BATS_TEST_TMPDIR/creds"
	chmod 600 "$BATS_TEST_TMPDIR/creds"
	s3_config "$BATS_TEST_TMPDIR/s3c.yaml" "http://127.0.0.1:$port" "  credentials_file: $BATS_TEST_TMPDIR/creds"
	logged keep-store -c "$BATS_TEST_TMPDIR/s3c.yaml" list ''
	[ "$status" -eq 100 ]
	[[ "$stderr" == *"$BATS_TEST_TMPDIR/creds"* ]]
	no_secret "$MARK" "$TOKEN_MARK"
}

@test "secrets: a credentials file readable by group or other is refused; 0600 is accepted" {
	fs_only
	port=$(free_port)
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
	creds="$BATS_TEST_TMPDIR/creds"
	printf '# test\n[default]\naws_access_key_id = AKIDTEST\naws_secret_access_key = %s\n' "$MARK" >"$creds"
	s3_config "$BATS_TEST_TMPDIR/s3.yaml" "http://127.0.0.1:$port" "  credentials_file: $creds"
	for mode in 644 640 604 660 606 666 620 602; do
		chmod "$mode" "$creds"
		echo "# mode $mode"
		logged keep-store -c "$BATS_TEST_TMPDIR/s3.yaml" list ''
		[ "$status" -eq 100 ]
		[[ "$stderr" == *"$creds"* ]]
		logged lease-write -c "$BATS_TEST_TMPDIR/s3.yaml"
		[ "$status" -eq 100 ]
	done
	chmod 600 "$creds"
	# accepted: the request is made (and fails only because nothing listens)
	logged keep-store -c "$BATS_TEST_TMPDIR/s3.yaml" list ''
	[ "$status" -eq 111 ]
	chmod 400 "$creds"
	logged keep-store -c "$BATS_TEST_TMPDIR/s3.yaml" list ''
	[ "$status" -eq 111 ]
	no_secret "$MARK"
}

@test "secrets: a 0600 credentials file works against the real server, a 0644 one is refused" {
	s3_only
	creds="$BATS_TEST_TMPDIR/creds"
	printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$S3_ACCESS_KEY" "$S3_SECRET_KEY" >"$creds"
	chmod 600 "$creds"
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
	printf 's3:\n  credentials_file: %s\n  endpoint: %s\n' "$creds" "$S3_ENDPOINT" >>"$KEEP_CONFIG"
	logged keep-store put k <<<"x"
	[ "$status" -eq 0 ]
	logged keep-store get k
	[ "$output" = x ]
	chmod 644 "$creds"
	logged keep-store get k
	[ "$status" -eq 100 ]
	[[ "$stderr" == *"$creds"* ]]
	no_secret "$S3_SECRET_KEY"
}

@test "secrets: TLS verification is on: a self-signed loopback endpoint is refused unless tls_insecure" {
	fs_only
	command -v openssl >/dev/null || skip "openssl not installed"
	d=$BATS_TEST_TMPDIR
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
		-keyout "$d/tls.key" -out "$d/tls.crt" 2>/dev/null
	port=$(free_port)
	start_bg tls openssl s_server -accept "127.0.0.1:$port" -cert "$d/tls.crt" -key "$d/tls.key" -www -quiet
	wait_for 10 sh -c "curl -sk -o /dev/null https://127.0.0.1:$port/"
	export AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY="$MARK"
	# verification on (the default): the handshake is refused, nothing is sent
	s3_config "$d/on.yaml" "https://127.0.0.1:$port"
	logged keep-store -c "$d/on.yaml" get k
	[ "$status" -ne 0 ]
	[[ "$stderr" =~ (certificate|SSL|TLS|verify) ]] || { echo "$stderr"; false; }
	s3_config "$d/off.yaml" "https://127.0.0.1:$port" "  tls_insecure: false"
	logged keep-store -c "$d/off.yaml" get k
	[[ "$stderr" =~ (certificate|SSL|TLS|verify) ]] || { echo "$stderr"; false; }
	# tls_insecure on a loopback endpoint: the handshake completes and the
	# request reaches the server (s_server answers with its status page)
	s3_config "$d/insecure.yaml" "https://127.0.0.1:$port" "  tls_insecure: true"
	logged keep-store -c "$d/insecure.yaml" get k
	[[ ! "$stderr" =~ (certificate|SSL|verify) ]] || { echo "$stderr"; false; }
	# the same for localhost
	s3_config "$d/insecure2.yaml" "https://localhost:$port" "  tls_insecure: true"
	logged keep-store -c "$d/insecure2.yaml" get k
	[[ ! "$stderr" =~ (certificate|SSL|verify) ]] || { echo "$stderr"; false; }
	# tls_insecure is not honoured for a non-loopback endpoint
	ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | head -n 1)
	if [ -n "$ip" ]; then
		start_bg tls2 openssl s_server -accept "$ip:$((port + 1))" -cert "$d/tls.crt" -key "$d/tls.key" -www -quiet
		if wait_for 5 sh -c "curl -sk -o /dev/null --noproxy '*' https://$ip:$((port + 1))/"; then
			s3_config "$d/remote.yaml" "https://$ip:$((port + 1))" "  tls_insecure: true"
			NO_PROXY='*' logged keep-store -c "$d/remote.yaml" get k
			[ "$status" -ne 0 ]
			[[ "$stderr" =~ (certificate|SSL|TLS|verify) ]] || { echo "$stderr"; false; }
		fi
	fi
	no_secret "$MARK"
	refute_sanitizer_reports
}
