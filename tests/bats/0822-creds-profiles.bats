#!/usr/bin/env bats
# AWS credentials from the shared files (docs/s3.md "Credentials"):
# ~/.aws/credentials [PROFILE], ~/.aws/config [profile PROFILE], AWS_PROFILE,
# AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, the profile's region; each
# wrong source fails with one clear line and its exit code. Against the
# real S3 server on the s3 pass; the refusals made before any request (no
# server needed) on the fs pass. No AWS_* key in the environment: HOME is
# the test's own.

# run-all: sanitizers
load helpers/common

setup() {
	keep_setup
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/home/.aws"
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
		AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
	export HOME="$T/home" AWS_EC2_METADATA_DISABLED=true
	ROOT_URL="s3://${S3_BUCKET:-keep-test}/t-creds-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
}
teardown() { keep_teardown; }

s3_only() { [ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "needs the S3 server (runs in the s3 pass)"; }
fs_only() { [ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"; }

# creds FILE MODE [SECTION KEY SECRET]... : write an AWS credentials file
creds() {
	local f=$1 m=$2
	shift 2
	: >"$f"
	while [ $# -ge 3 ]; do
		printf '[%s]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n' "$1" "$2" "$3" >>"$f"
		shift 3
	done
	chmod "$m" "$f"
}

# an endpoint nothing listens on, for the refusals made at open
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

@test "creds: [default] wrong and [p] right: AWS_PROFILE=p works, no profile fails with the profile named" {
	s3_only
	creds "$HOME/.aws/credentials" 600 default "$S3_ACCESS_KEY" wrongsecretwrongsecret p "$S3_ACCESS_KEY" "$S3_SECRET_KEY"
	AWS_PROFILE=p run -0 keep-store --store "$ROOT_URL" put k <<<"hello"
	AWS_PROFILE=p run -0 keep-store --store "$ROOT_URL" get k
	[ "$output" = hello ]
	AWS_PROFILE=p run -0 owner-show --store "$ROOT_URL" t/c/a
	run -1 --separate-stderr keep-store --store "$ROOT_URL" get k
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "keep-store: fatal: "*"refused: 403 SignatureDoesNotMatch (credentials from profile default in $HOME/.aws/credentials)" ]] ||
		{ echo "$stderr"; false; }
	run -1 --separate-stderr owner-show --store "$ROOT_URL" t/c/a # a 403 is a definite refusal: 1, never the retry code (docs/exit-codes.md)
	[[ "$stderr" == *"403 SignatureDoesNotMatch (credentials from profile default in "* ]]
	refute_sanitizer_reports
}

@test "creds: [default] right and [p] wrong: AWS_PROFILE=p fails, names profile p; the environment still comes first" {
	s3_only
	creds "$HOME/.aws/credentials" 600 default "$S3_ACCESS_KEY" "$S3_SECRET_KEY" p "$S3_ACCESS_KEY" wrongsecretwrongsecret
	run -0 keep-store --store "$ROOT_URL" put k <<<"x"
	AWS_PROFILE=p run -1 --separate-stderr keep-store --store "$ROOT_URL" get k
	[[ "$stderr" == *"403 SignatureDoesNotMatch (credentials from profile p in $HOME/.aws/credentials)" ]] ||
		{ echo "$stderr"; false; }
	AWS_PROFILE=p AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY" \
		run -0 keep-store --store "$ROOT_URL" get k
	refute_sanitizer_reports
}

@test "creds: other files by AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE; [profile p] in the config file" {
	s3_only
	creds "$HOME/.aws/credentials" 600 default "$S3_ACCESS_KEY" wrongsecretwrongsecret
	creds "$T/other-creds" 600 q "$S3_ACCESS_KEY" "$S3_SECRET_KEY"
	AWS_PROFILE=q AWS_SHARED_CREDENTIALS_FILE="$T/other-creds" run -0 keep-store --store "$ROOT_URL" list ''
	printf '[profile c]\naws_access_key_id = %s\naws_secret_access_key = %s\nregion = us-east-1\n' \
		"$S3_ACCESS_KEY" "$S3_SECRET_KEY" >"$T/other-config"
	chmod 600 "$T/other-config"
	AWS_PROFILE=c AWS_CONFIG_FILE="$T/other-config" run -0 keep-store --store "$ROOT_URL" list ''
	AWS_PROFILE=c AWS_CONFIG_FILE="$T/other-config" run -0 node-watch --store "$ROOT_URL" --once
	# in a config file [c] is not the profile c
	sed -i 's/^\[profile c\]/[c]/' "$T/other-config"
	AWS_PROFILE=c AWS_CONFIG_FILE="$T/other-config" run -100 --separate-stderr keep-store --store "$ROOT_URL" list ''
	[[ "$stderr" == *"profile 'c' (AWS_PROFILE) is in neither"* ]]
	refute_sanitizer_reports
}

@test "creds: the profile's region is used when nothing else names one" {
	fs_only
	closed_config
	sed -i '/region:/d' "$T/closed.yaml"
	unset AWS_REGION AWS_DEFAULT_REGION
	creds "$HOME/.aws/credentials" 600 default AKIDTEST secretsecret
	printf '[default]\nregion = not/a/region\n' >"$HOME/.aws/config"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"bad S3 region 'not/a/region'"* ]]
	# AWS_REGION and s3.region come before it
	AWS_REGION=us-east-1 run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	sed 's/^  endpoint:.*/&\n  region: eu-west-1/' "$T/closed.yaml" >"$T/r.yaml"
	run -111 --separate-stderr keep-store -c "$T/r.yaml" list ''
	refute_sanitizer_reports
}

@test "creds: a wrong profile source fails at once with one line and exit 100" {
	fs_only
	closed_config
	c="$HOME/.aws/credentials"
	# no profile of that name
	creds "$c" 600 default AKIDTEST secretsecret
	AWS_PROFILE=nope run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"profile 'nope' (AWS_PROFILE) is in neither '$c' nor '$HOME/.aws/config'" ]]
	# readable by others
	chmod 640 "$c"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"shared credentials file '$c' is readable or writable by group or others (mode 0640): refused; chmod 600 it" ]]
	run -100 --separate-stderr lease-write -c "$T/closed.yaml" --node-id n1
	run -100 --separate-stderr owner-show -c "$T/closed.yaml" t/c/a
	# half a profile
	printf '[default]\naws_access_key_id = AKIDTEST\n' >"$c"
	chmod 600 "$c"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"profile 'default' in '$c' has aws_access_key_id but not aws_secret_access_key" ]]
	# a line that is no setting
	printf '[default]\naws_access_key_id AKIDTEST\n' >"$c"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"shared credentials file '$c': line 2: not a 'name = value' line" ]]
	# assume-role profiles are refused, not skipped
	: >"$c"
	printf '[profile r]\nrole_arn = arn:aws:iam::123456789012:role/x\nsource_profile = default\n' >"$HOME/.aws/config"
	AWS_PROFILE=r run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"profile 'r' uses role_arn (assume role), which keep does not support"* ]]
	# half the keys in the environment
	AWS_ACCESS_KEY_ID=AKIDTEST run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not" ]]
	# nothing at all (metadata disabled)
	rm -f "$c" "$HOME/.aws/config"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"no S3 credentials: "* ]]
	# the same codes from every command that opens the store
	for cmd in "node-watch --once" "owner-watch --once" "store-probe" "lease-fence n9" "upgrade-mark guard"; do
		# shellcheck disable=SC2086
		run -100 --separate-stderr $cmd -c "$T/closed.yaml"
		[[ "$stderr" == *"no S3 credentials: "* ]] || { echo "$cmd: $stderr"; false; }
	done
	refute_sanitizer_reports
}
