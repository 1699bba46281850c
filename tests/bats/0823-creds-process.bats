#!/usr/bin/env bats
# credential_process (docs/s3.md "Credentials"): a command named in a
# profile, run without a shell, printing JSON Version 1; its Expiration is
# honoured (fetched again before it), one run serves every store handle of
# a process (owner-acquire --jobs), and each wrong command fails with one
# clear line and its exit code. Against the real S3 server on the s3 pass;
# the refusals made before any request on the fs pass.

# run-all: sanitizers
load helpers/common

setup() {
	keep_setup
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/home/.aws"
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
		AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
	export HOME="$T/home" AWS_EC2_METADATA_DISABLED=true AWS_PROFILE=proc
	# the helper: counts its runs in $T/runs, prints credentials expiring
	# $T/life seconds from now (no Expiration when it says 0)
	cat >"$T/creds.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0")
echo run >>"$d/runs"
life=$(cat "$d/life" 2>/dev/null || echo 3600)
if [ "$life" != 0 ]; then
	exp=", \"Expiration\": \"$(date -u -d "@$(($(date +%s) + life))" +%Y-%m-%dT%H:%M:%SZ)\""
else
	exp=
fi
printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s", "SessionToken": "tok"%s}\n' \
	"$(cat "$d/ak")" "$(cat "$d/sk")" "$exp"
EOF
	chmod 755 "$T/creds.sh"
	printf '%s\n' "${S3_ACCESS_KEY:-AKIDTEST}" >"$T/ak"
	printf '%s\n' "${S3_SECRET_KEY:-secretsecret}" >"$T/sk"
	chmod 600 "$T/ak" "$T/sk"
	profile "$T/creds.sh"
}
teardown() { keep_teardown; }

s3_only() { [ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "needs the S3 server (runs in the s3 pass)"; }
fs_only() { [ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"; }

# profile COMMAND : [profile proc] in ~/.aws/config with credential_process COMMAND
profile() {
	printf '[profile proc]\ncredential_process = %s\n' "$1" >"$HOME/.aws/config"
	chmod 644 "$HOME/.aws/config" # no secret in it: others may read, not write
}
runs() { [ -f "$T/runs" ] && wc -l <"$T/runs" || echo 0; }
has_runs() { [ "$(runs)" -ge "$1" ]; }

closed_config() {
	cat >"$T/closed.yaml" <<YAML
store: s3://keep-test/creds
state_dir: $STATE_DIR
s3:
  endpoint: http://127.0.0.1:9
  region: us-east-1
  timeout_ms: 1000
YAML
}

@test "creds: credential_process gives the credentials; one run per process, whatever the store handles" {
	s3_only
	run -0 keep-store put k <<<"hello"
	[ "$(runs)" = 1 ]
	run -0 keep-store get k
	[ "$output" = hello ]
	[ "$(runs)" = 2 ]
	# owner-acquire --jobs 8: 8 store handles, one run of the command
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	: >"$T/runs"
	for i in $(seq 1 20); do echo "t/c/k$i"; done >"$T/keys"
	run -0 owner-acquire --node-id n1 --jobs 8 <"$T/keys"
	[ "${#lines[@]}" -eq 20 ]
	[ "$(runs)" = 1 ]
	# a command whose path has a space, and arguments: no shell involved
	mkdir -p "$T/with space"
	cp "$T/creds.sh" "$T/with space/creds.sh"
	cp "$T/ak" "$T/sk" "$T/with space/"
	profile "\"$T/with space/creds.sh\" --user \"a b\" \$HOME"
	run -0 keep-store list ''
	[ "$(wc -l <"$T/with space/runs")" = 1 ]
	refute_sanitizer_reports
}

@test "creds: credential_process Expiration is honoured: a long-running process runs it again before expiry" {
	s3_only
	echo 3 >"$T/life" # lifetime 2..3 s: fetched again within 1.5 s
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	wait_for 20 has_runs 4
	# no request ever went out with expired credentials: the lease never lapsed
	run -0 lease-status --node-id n1
	[[ "$output" == *" lapses=0" ]]
	run ! grep -E '^(ran-out|lost) ' "$BATS_TEST_TMPDIR/n1.out"
	kill -TERM "$(bg_pid n1)"
	run wait_exit 20 n1
	[ "$output" = 0 ]
	# no Expiration: never run again
	echo 0 >"$T/life"
	: >"$T/runs"
	start_bg n2 lease-write -v --node-id n2
	wait_line 30 n2 '^live '
	# two renewals later (store requests signed with the credentials)
	wait_for 10 sh -c "[ \$(grep -c '^renewed ' '$BATS_TEST_TMPDIR/n2.out') -ge 2 ]"
	[ "$(runs)" = 1 ]
	refute_sanitizer_reports
}

@test "creds: credential_process giving a wrong secret fails the request with the source named" {
	s3_only
	echo wrongsecretwrongsecret >"$T/sk"
	run -1 --separate-stderr keep-store list ''
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"refused: 403 SignatureDoesNotMatch (credentials from credential_process of profile proc ($HOME/.aws/config))" ]] ||
		{ echo "$stderr"; false; }
	refute_sanitizer_reports
}

@test "creds: a wrong credential_process fails at once with one line: 100 for a configuration error, 111 for a failure that may pass" {
	fs_only
	closed_config
	# not there
	profile /nonexistent/creds
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"credential_process of profile proc ($HOME/.aws/config): unable to run '/nonexistent/creds': No such file or directory" ]]
	# exits non-zero: may pass (a vault down): 111; its stderr passes through
	printf '#!/bin/sh\necho "helper: vault unreachable" >&2\nexit 3\n' >"$T/fail.sh"
	chmod 755 "$T/fail.sh"
	profile "$T/fail.sh"
	run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"helper: vault unreachable"* ]]
	[[ "$stderr" == *"the command exited with status 3" ]]
	# prints no credentials
	profile "echo {\"Version\": 2}"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"the command's output is not credentials: "* ]]
	printf '#!/bin/sh\necho "{\\"Version\\": 2, \\"AccessKeyId\\": \\"A\\", \\"SecretAccessKey\\": \\"S\\"}"\n' >"$T/v2.sh"
	chmod 755 "$T/v2.sh"
	profile "$T/v2.sh"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"the command's output is not credentials: \"Version\" is not the number 1" ]]
	# credentials that expired already
	echo -10 >"$T/life"
	profile "$T/creds.sh"
	run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"the credentials it gave expired already" ]] || { echo "$stderr"; false; }
	echo 3600 >"$T/life"
	# does not finish: killed (the test build lets the test shorten the bound)
	profile "sleep 30"
	start=$(now_ms)
	KEEP_TEST_CREDENTIAL_PROCESS_TIMEOUT_MS=500 run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"the command did not finish in 500 ms: killed" ]]
	# tolerance 5 s: 500 ms + a start on a loaded machine; not killed, the
	# command would run its 30 s
	[ $(($(now_ms) - start)) -lt 5000 ]
	# no shell: shell syntax is passed as words, not run
	profile "$T/creds.sh; touch $T/pwned"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"unable to run '$T/creds.sh;': No such file or directory" ]]
	[ ! -e "$T/pwned" ]
	profile "sh -c 'touch $T/pwned'" # a shell only when the command asks for one
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[ -e "$T/pwned" ]
	# a config file others may write names the command: refused
	chmod 666 "$HOME/.aws/config"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"shared config file '$HOME/.aws/config' is writable by group or others (mode 0666): refused; chmod go-w it" ]]
	refute_sanitizer_reports
}
