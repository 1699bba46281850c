#!/usr/bin/env bats
# EC2 instance metadata credentials, IMDSv2 (docs/s3.md "Credentials"),
# against tests/tools/imds.c, a loopback metadata server started here
# (AWS_EC2_METADATA_SERVICE_ENDPOINT): the token flow, temporary
# credentials fetched again before they expire (a lease-write runs on them
# for several lifetimes without a lapse), expired credentials never used
# (the lease runs out while the service fails, and recovers after), one
# fetch for every store handle of a process, AWS_EC2_METADATA_DISABLED, and
# each wrong answer failing with one clear line and its exit code. Against
# the real S3 server on the s3 pass; the refusals on the fs pass.

# run-all: sanitizers
load helpers/common

setup() {
	keep_setup
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/home"
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
		AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE AWS_EC2_METADATA_DISABLED
	export HOME="$T/home"
	: >"$T/ctl"
}
teardown() { keep_teardown; }

s3_only() { [ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "needs the S3 server (runs in the s3 pass)"; }
fs_only() { [ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"; }

# start_imds TTL_MS : the metadata server, serving the S3 server's keys
start_imds() {
	start_bg imds "$KEEP_TOOLDIR/imds" "$T/imds.port" --access-key "${S3_ACCESS_KEY:-AKIDTEST}" \
		--secret-key "${S3_SECRET_KEY:-secretsecret}" --ttl-ms "$1" --control "$T/ctl" --log "$T/imds.log"
	wait_for 10 test -s "$T/imds.port"
	export AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$(cat "$T/imds.port")"
}
# fetches : credential documents served so far
fetches() { grep -c 'security-credentials/keep-test-role 200$' "$T/imds.log" 2>/dev/null || echo 0; }
has_fetches() { [ "$(fetches)" -ge "$1" ]; }

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

@test "creds: IMDSv2 gives the credentials: token, role, credentials; one fetch for every store handle" {
	s3_only
	start_imds 3600000
	run -0 keep-store put k <<<"hello"
	run -0 keep-store get k
	[ "$output" = hello ]
	run -0 cat "$T/imds.log"
	[ "${lines[0]}" = "PUT /latest/api/token 200" ]
	[ "${lines[1]}" = "GET /latest/meta-data/iam/security-credentials/ 200" ]
	[ "${lines[2]}" = "GET /latest/meta-data/iam/security-credentials/keep-test-role 200" ]
	[ "${#lines[@]}" -eq 6 ] # two processes, three requests each
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	: >"$T/imds.log"
	for i in $(seq 1 20); do echo "t/c/k$i"; done >"$T/keys"
	run -0 owner-acquire --node-id n1 --jobs 8 <"$T/keys"
	[ "${#lines[@]}" -eq 20 ]
	[ "$(fetches)" = 1 ]
	# the environment comes first: the metadata server is not asked
	: >"$T/imds.log"
	AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY" run -0 keep-store get k
	[ ! -s "$T/imds.log" ]
	refute_sanitizer_reports
}

@test "creds: IMDS credentials are fetched again before they expire, and never used expired" {
	s3_only
	start_imds 3000 # whole seconds: a lifetime of 2..3 s, fetched again half way
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	wait_for 20 has_fetches 5
	run -0 lease-status --node-id n1
	[[ "$output" == *" lapses=0" ]]
	run ! grep -E '^(ran-out|lost) ' "$T/n1.out"
	# the service fails: the credentials held serve until they expire, then
	# nothing is sent with them: the lease runs out (not lost)
	echo fail >"$T/ctl"
	wait_line 20 n1 '^ran-out '
	run -14 lease-status --node-id n1
	run -0 grep -c 'security-credentials/keep-test-role 500$' "$T/imds.log"
	# the service is back: fetched again (retries back off from 1 s), the
	# lease recovers
	: >"$T/ctl"
	wait_line 40 n1 '^recovered '
	run -0 lease-status --node-id n1
	refute_sanitizer_reports
}

@test "creds: IMDS serving a wrong secret fails the request with the role named" {
	s3_only
	start_imds 3600000
	echo wrong >"$T/ctl"
	run -1 --separate-stderr keep-store list ''
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"refused: 403 SignatureDoesNotMatch (credentials from EC2 instance metadata (role keep-test-role))" ]] ||
		{ echo "$stderr"; false; }
	refute_sanitizer_reports
}

@test "creds: IMDS refusals: disabled, unreachable, no role, no token: 100; 5xx or not JSON: 111" {
	fs_only
	closed_config
	start_imds 3600000
	ep=$AWS_EC2_METADATA_SERVICE_ENDPOINT
	# works up to the closed store port
	run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"127.0.0.1 port 9"* ]]
	echo norole >"$T/ctl"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"EC2 instance metadata at $ep: no IAM role (instance profile)" ]]
	echo notoken >"$T/ctl"
	run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"EC2 instance metadata at $ep: the IMDSv2 token request got HTTP 403" ]]
	echo fail >"$T/ctl"
	run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"EC2 instance metadata at $ep: the credentials of role keep-test-role: HTTP 500" ]]
	echo garbage >"$T/ctl"
	run -111 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"the credentials of role keep-test-role: byte 1: not a JSON object" ]]
	: >"$T/ctl"
	# IMDSv2 only: a request without the token is refused by the service,
	# and keep always asks for one first
	run -0 curl -s -o /dev/null -w '%{http_code}' "$ep/latest/meta-data/iam/security-credentials/"
	[ "$output" = 401 ]
	# disabled
	AWS_EC2_METADATA_DISABLED=true run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"no S3 credentials: "*"(EC2 instance metadata is disabled)" ]]
	AWS_EC2_METADATA_DISABLED=TRUE run -100 keep-store -c "$T/closed.yaml" list ''
	# nothing listens there
	AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9 run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"no S3 credentials: "*"EC2 instance metadata at http://127.0.0.1:9: unreachable"* ]]
	AWS_EC2_METADATA_SERVICE_ENDPOINT=ftp://127.0.0.1 run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"AWS_EC2_METADATA_SERVICE_ENDPOINT must be http[s]://HOST[:PORT]" ]]
	AWS_METADATA_SERVICE_TIMEOUT=0 run -100 --separate-stderr keep-store -c "$T/closed.yaml" list ''
	[[ "$stderr" == *"AWS_METADATA_SERVICE_TIMEOUT must be an integer 1..60" ]]
	refute_sanitizer_reports
}
