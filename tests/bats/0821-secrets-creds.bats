#!/usr/bin/env bats
# Secrets from every credential source (docs/s3.md "Credentials"): a
# secret key or session token read from a shared credentials or config
# file, printed by a credential_process or served by the instance metadata
# never appears in any command's stdout or stderr (with -v, on success, on
# a refused request, on a malformed source), in the state directory or in
# the metrics file. The companion of 0820-secrets.bats (static keys).

# run-all: sanitizers
load helpers/common

setup() {
	keep_setup
	T=$BATS_TEST_TMPDIR
	LOG="$T/all.log"
	: >"$LOG"
	mkdir -p "$T/home/.aws"
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
		AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
	export HOME="$T/home" AWS_EC2_METADATA_DISABLED=true
	MARK="zzKeepSecret$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	TOKEN_MARK="zzKeepToken$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	printf 'metrics:\n  textfile: %s/keep.prom\n' "$T" >>"$KEEP_CONFIG"
}
teardown() { keep_teardown; }

s3_only() { [ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "needs the S3 server (runs in the s3 pass)"; }
fs_only() { [ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"; }

logged() {
	run --separate-stderr "$@"
	[ "$status" -eq 124 ] || refute_crash # any exit but a crash: the output is what is checked
	{
		echo "## $* -> $status"
		printf '%s\n' "$output" "$stderr"
	} >>"$LOG"
}

# no_secret SECRET... : in no output, state file or metrics file
no_secret() {
	local s f
	for s in "$@"; do
		[ -n "$s" ] || continue
		for f in "$LOG" "$T"/*.out "$T"/*.err; do
			[ -f "$f" ] || continue
			if grep -qF -- "$s" "$f"; then
				echo "secret found in $f:"
				grep -nF -- "$s" "$f" | head -5
				return 1
			fi
		done
		if grep -rqF -- "$s" "$STATE_DIR" "$T"/*.prom 2>/dev/null; then
			echo "secret found in the state dir or metrics"
			return 1
		fi
	done
}

# every_command : the commands that open the store, each once, logged
every_command() {
	logged keep-store put scratch/k <<<"body"
	logged keep-store get scratch/k
	logged keep-store list ''
	logged keep-store get scratch/absent
	logged store-probe
	logged owner-show t/c/a
	logged owner-watch --once
	logged node-watch --once
	logged lease-fence n9
	logged timeout 5 lease-write --node-id n1 -v
}

@test "secrets: a profile's secret is never printed, right or wrong" {
	s3_only
	printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\naws_session_token = %s\n[bad]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
		"$S3_ACCESS_KEY" "$S3_SECRET_KEY" "$TOKEN_MARK" "$S3_ACCESS_KEY" "$MARK" >"$HOME/.aws/credentials"
	chmod 600 "$HOME/.aws/credentials"
	every_command
	logged keep-store get scratch/k
	[ "$output" = body ]
	AWS_PROFILE=bad every_command
	AWS_PROFILE=bad logged keep-store get scratch/k
	[ "$status" -eq 1 ]
	no_secret "$S3_SECRET_KEY" "$MARK" "$TOKEN_MARK"
	refute_sanitizer_reports
}

@test "secrets: credential_process output is never printed, right or wrong" {
	s3_only
	printf '#!/bin/sh\nprintf %s "$(cat %s/sk)"\n' \
		"'{\"Version\": 1, \"AccessKeyId\": \"$S3_ACCESS_KEY\", \"SecretAccessKey\": \"%s\", \"SessionToken\": \"$TOKEN_MARK\"}'" \
		"$T" >"$T/creds.sh"
	chmod 755 "$T/creds.sh"
	printf '[default]\ncredential_process = %s\n' "$T/creds.sh" >"$HOME/.aws/config"
	echo "$S3_SECRET_KEY" >"$T/sk"
	every_command
	logged keep-store get scratch/k
	[ "$output" = body ]
	echo "$MARK" >"$T/sk"
	every_command
	no_secret "$S3_SECRET_KEY" "$MARK" "$TOKEN_MARK"
	refute_sanitizer_reports
}

@test "secrets: IMDS credentials are never printed, right or wrong" {
	s3_only
	unset AWS_EC2_METADATA_DISABLED
	: >"$T/ctl"
	start_bg imds "$KEEP_TOOLDIR/imds" "$T/imds.port" --access-key "$S3_ACCESS_KEY" \
		--secret-key "$S3_SECRET_KEY" --token "$TOKEN_MARK" --control "$T/ctl" --log "$T/imds.log"
	wait_for 10 test -s "$T/imds.port"
	export AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$(cat "$T/imds.port")"
	every_command
	logged keep-store get scratch/k
	[ "$output" = body ]
	echo wrong >"$T/ctl" # a wrong secret (the tool's own)
	every_command
	echo fail >"$T/ctl"
	every_command
	no_secret "$S3_SECRET_KEY" "$TOKEN_MARK" wrongsecretwrongsecret
	refute_sanitizer_reports
}

@test "secrets: a malformed source names the file or the command, never a value" {
	fs_only
	cat >"$T/closed.yaml" <<YAML
store: s3://keep-test/creds
state_dir: $STATE_DIR
s3:
  endpoint: http://127.0.0.1:9
  region: us-east-1
YAML
	c="$HOME/.aws/credentials"
	# a secret on a line that does not parse
	printf '[default]\naws_access_key_id = AKIDTEST\naws_secret_access_key %s\n' "$MARK" >"$c"
	chmod 600 "$c"
	logged keep-store -c "$T/closed.yaml" list ''
	[ "$status" -eq 100 ]
	[[ "$stderr" == *"'$c': line 3:"* ]]
	# a secret given twice
	printf '[default]\naws_access_key_id = A\naws_secret_access_key = %s\naws_secret_access_key = %s\n' "$MARK" "$MARK" >"$c"
	logged keep-store -c "$T/closed.yaml" list ''
	[ "$status" -eq 100 ]
	# a file others may read
	printf '[default]\naws_access_key_id = A\naws_secret_access_key = %s\n' "$MARK" >"$c"
	chmod 644 "$c"
	logged keep-store -c "$T/closed.yaml" list ''
	[ "$status" -eq 100 ]
	rm -f "$c"
	# credential_process output that is not valid credentials, secret inside
	for out in "{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"$MARK\"}" \
		"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"$MARK\" \"x\": 1}" \
		"{\"Version\": 1, \"AccessKeyId\": \"A B\", \"SecretAccessKey\": \"$MARK\", \"SessionToken\": \"$TOKEN_MARK\"}" \
		"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"$MARK\", \"Expiration\": \"$TOKEN_MARK\"}" \
		"$MARK"; do
		printf '#!/bin/sh\ncat <<"EOF"\n%s\nEOF\n' "$out" >"$T/creds.sh"
		chmod 755 "$T/creds.sh"
		printf '[default]\ncredential_process = %s\n' "$T/creds.sh" >"$HOME/.aws/config"
		logged keep-store -c "$T/closed.yaml" list ''
		[ "$status" -eq 100 ]
		[[ "$stderr" == *"the command's output is not credentials: "* ]]
	done
	no_secret "$MARK" "$TOKEN_MARK"
}
