#!/usr/bin/env bats
# The S3 bucket policy of docs/operations.md "Deleting objects by hand",
# tried on the real S3 server (Ceph RGW; issue 23 item 6): applied as the
# bucket's owner (the test's user, the administrator), it lets a second
# user, the nodes', run keep as usual and refuses that user's deletes under
# nodes/ and owners/; the administrator's go through. The policy is the
# block the document shows, read from it. S3 pass only; the second user is
# made with radosgw-admin (CEPH_CONF names the server's ceph.conf).

# shellcheck disable=SC2154 # output: set by bats' run
# run-all: sanitizers
load helpers/common

DOC="$BATS_TEST_DIRNAME/../../docs/operations.md"

setup() {
	require_s3 "a bucket policy needs the real S3 server (RGW): S3 pass only"
	command -v radosgw-admin >/dev/null ||
		skip "radosgw-admin is not installed: no second S3 user can be made"
	[ -n "${CEPH_CONF:-}" ] && [ -r "$CEPH_CONF" ] ||
		skip "CEPH_CONF (the RGW's ceph.conf) is not set: no second S3 user can be made"
	keep_setup
	R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	NODE_USER="keep-node-$R"
	NODE_AK="KN$R$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
	NODE_SK="$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
	BUCKET="keep-policy-$R"
	radosgw-admin -c "$CEPH_CONF" -n client.rgw user create --uid="$NODE_USER" \
		--display-name="$NODE_USER" --access-key="$NODE_AK" --secret-key="$NODE_SK" \
		>"$BATS_TEST_TMPDIR/user.out" 2>&1
	ADMIN_USER=$(radosgw-admin -c "$CEPH_CONF" -n client.rgw user info \
		--access-key="$S3_ACCESS_KEY" 2>/dev/null | sed -n 's/^ *"user_id": "\(.*\)",$/\1/p')
	[ -n "$ADMIN_USER" ]
	[ "$(s3api PUT "/$BUCKET")" = 200 ]
	# the store: a prefix in a bucket of its own
	STORE_URL="s3://$BUCKET/k"
	sed -i "s|^store: .*|store: $STORE_URL|" "$KEEP_CONFIG"
}

teardown() {
	keep_teardown
	[ -n "${BUCKET:-}" ] || return 0
	as_admin keep-store list >"$BATS_TEST_TMPDIR/left" 2>/dev/null || true
	sed -n 's/^object key=\([^ ]*\) .*/\1/p' "$BATS_TEST_TMPDIR/left" | while read -r k; do
		as_admin keep-store del --force "$k" >/dev/null 2>&1 || true
	done
	s3api DELETE "/$BUCKET" >/dev/null || true
	radosgw-admin -c "$CEPH_CONF" -n client.rgw user rm --uid="$NODE_USER" >/dev/null 2>&1 || true
}

# s3api METHOD PATH [FILE] : one request signed as the administrator (curl's
# SigV4); prints the HTTP status. A query string keeps its `=`: curl signs
# `?policy=`, not `?policy`.
s3api() {
	local body=() sum=UNSIGNED-PAYLOAD
	if [ -n "${3:-}" ]; then
		body=(--data-binary "@$3")
		sum=$(sha256sum "$3" | cut -d' ' -f1)
	fi
	curl -s -o "$BATS_TEST_TMPDIR/s3api.out" -w '%{http_code}' -m 20 -X "$1" \
		--aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-H "x-amz-content-sha256: $sum" "${body[@]}" "$S3_ENDPOINT$2"
}
as_admin() { AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY" "$@"; }
as_node() { AWS_ACCESS_KEY_ID="$NODE_AK" AWS_SECRET_ACCESS_KEY="$NODE_SK" "$@"; }

# policy : the document's block, with this test's bucket, prefix and users
policy() {
	awk '/<!-- bucket-policy:/ { on = 1; next } on && /```json/ { inb = 1; next }
	     inb && /```/ { exit } inb { print }' "$DOC" |
		sed -e "s/NODE_USER/$NODE_USER/g" -e "s/ADMIN_USER/$ADMIN_USER/g" \
			-e "s/BUCKET/$BUCKET/g" -e "s/PREFIX/k/g"
}

@test "s3-bucket-policy: the documented policy refuses the nodes' deletes under nodes/ and owners/, not the administrator's" {
	policy >"$BATS_TEST_TMPDIR/policy.json"
	run -0 grep -c '"NotPrincipal"' "$BATS_TEST_TMPDIR/policy.json"
	[ "$(s3api PUT "/$BUCKET?policy=" "$BATS_TEST_TMPDIR/policy.json")" = 204 ]
	# the nodes' user runs keep as usual: a lease, an acquisition, a release
	start_bg n1 env AWS_ACCESS_KEY_ID="$NODE_AK" AWS_SECRET_ACCESS_KEY="$NODE_SK" \
		lease-write --node-id n1
	wait_line 30 n1 '^live '
	run -0 --separate-stderr as_node owner-acquire --node-id n1 t/c/a t/c/b
	run -0 --separate-stderr as_node owner-release --node-id n1 t/c/b
	[ "$output" = "released key=t/c/b generation=1" ]
	printf 'x' | as_node keep-store put scratch/k >/dev/null
	# ... but its deletes there are refused by the store
	run -1 --separate-stderr as_node keep-store del --force nodes/n1
	[ "$output" = "del key=nodes/n1 outcome=refused" ]
	[[ "$stderr" == *"403 AccessDenied"* ]]
	run -1 --separate-stderr as_node keep-store del --force owners/t/c/a
	[ "$output" = "del key=owners/t/c/a outcome=refused" ]
	run -0 as_node keep-store stat nodes/n1
	run -0 as_node keep-store stat owners/t/c/a
	run -0 as_node owner-check --node-id n1 t/c/a 1
	# other keys: deleted
	run -0 as_node keep-store del scratch/k
	# the administrator's delete goes through (a record nobody holds)
	run -0 --separate-stderr as_admin keep-store del --force owners/t/c/b
	[ "$output" = "del key=owners/t/c/b outcome=ok" ]
	kill -TERM "$(bg_pid n1)"
	run -0 wait_exit 15 n1
	[ "$output" = 0 ]
	refute_sanitizer_reports
}
