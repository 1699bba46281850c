#!/usr/bin/env bats
# S3-only store behaviour (lib/store/s3.c, docs/s3.md): prefixes, reserved
# bytes in keys, listings over one page, a wrong secret, and the
# credentials-file mode check. Skipped unless KEEP_TEST_STORE=s3.
# run-all: sanitizers
load helpers/common

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = s3 ] || skip "s3 only (KEEP_TEST_STORE=${KEEP_TEST_STORE:-fs})"
	keep_setup
}

# put KEY BODY [flags...] through keep-store, expecting ok.
put_ok() {
	local key=$1 body=$2
	shift 2
	run -0 --separate-stderr keep-store --store "$STORE_URL" put "$key" "$@" <<<"$body"
	refute_crash
}

@test "two prefixes of one bucket do not see each other's keys" {
	put_ok a/x one
	put_ok b/x two
	run -0 --separate-stderr keep-store --store "$STORE_URL/a" list
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "object key=x version="* ]]
	run -0 --separate-stderr keep-store --store "$STORE_URL/b" get x
	[ "$output" = two ]
	run -0 --separate-stderr keep-store --store "$STORE_URL/a" get x
	[ "$output" = one ]
	# the parent prefix sees both, named from its own root
	run -0 --separate-stderr keep-store --store "$STORE_URL" list
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == "object key=a/x version="* ]]
	[[ "${lines[1]}" == "object key=b/x version="* ]]
	# a prefix that is a string prefix but not a path prefix stays apart
	put_ok x 'not in a'
	run -0 --separate-stderr keep-store --store "${STORE_URL}/a" list
	[ "${#lines[@]}" -eq 1 ]
}

@test "a key with reserved characters (= : + space) round-trips" {
	local key='n/k=1:2+3 4,@'
	put_ok "$key" 'reserved body' --if-none-match
	run -0 --separate-stderr keep-store --store "$STORE_URL" get "$key"
	[ "$output" = 'reserved body' ]
	run -0 --separate-stderr keep-store --store "$STORE_URL" stat "$key"
	[[ "$output" == 'object key="n/k=1:2+3 4,@" version='* ]]
	local v=${output##*version=}
	put_ok "$key" 'second' --if-match "$v"
	run -1 --separate-stderr keep-store --store "$STORE_URL" put "$key" --if-match "$v" <<<stale
	refute_crash
	[[ "$output" == *"outcome=conflict"* ]]
	run -0 --separate-stderr keep-store --store "$STORE_URL" list n/
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == 'object key="n/k=1:2+3 4,@" version='* ]]
	run -0 --separate-stderr keep-store --store "$STORE_URL" del "$key"
	run -1 --separate-stderr keep-store --store "$STORE_URL" get "$key"
	refute_crash
}

@test "a listing of more than 1000 keys returns every page" {
	# 1001 keys written by one curl process (keep-alive), then listed by keep-store
	local n=1001 i cfg="$BATS_TEST_TMPDIR/curl.cfg" base=${STORE_URL#s3://}
	: >"$cfg"
	for ((i = 0; i < n; i++)); do
		printf 'url = "%s/%s/p/k%04d"\n' "$S3_ENDPOINT" "$base" "$i" >>"$cfg"
		printf 'output = "/dev/null"\n' >>"$cfg"
	done
	curl -sS --fail -X PUT --data-binary x -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
		--aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-K "$cfg"
	run -0 --separate-stderr keep-store --store "$STORE_URL" list p/
	refute_crash
	[ "${#lines[@]}" -eq "$n" ]
	[[ "${lines[0]}" == "object key=p/k0000 version="* ]]
	[[ "${lines[1000]}" == "object key=p/k1000 version="* ]]
	# every key exactly once, in order
	run -0 bash -c 'keep-store --store "$STORE_URL" list p/ | sed "s/ version=.*//" | sort -c -u'
	# and the same from one level up, with the prefix in the names
	run -0 --separate-stderr keep-store --store "$STORE_URL" list
	[ "${#lines[@]}" -eq "$n" ]
}

@test "an object over 64 KiB is refused on read, not truncated" {
	local base=${STORE_URL#s3://}
	head -c 70000 /dev/zero | curl -sS --fail -X PUT --data-binary @- \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
		--aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-o /dev/null "$S3_ENDPOINT/$base/big"
	run -1 --separate-stderr keep-store --store "$STORE_URL" get big
	refute_crash
	[ -z "$output" ]
	[[ "$stderr" == *"larger than 65536"* ]]
}

@test "a wrong secret is refused (exit 1, not 111) and no secret is printed" {
	local wrong=Wr0ngSecretValue-9f8e7d
	put_ok s/x body
	run -1 --separate-stderr env AWS_SECRET_ACCESS_KEY="$wrong" keep-store --store "$STORE_URL" get s/x
	refute_crash
	[[ "$stderr" == *"403"* ]]
	[[ "$output$stderr" != *"$wrong"* ]]
	[[ "$output$stderr" != *"$S3_SECRET_KEY"* ]]
	run -1 --separate-stderr env AWS_SECRET_ACCESS_KEY="$wrong" keep-store --store "$STORE_URL" put s/y <<<body
	refute_crash
	[[ "$output" == *"outcome=refused"* ]]
	[[ "$output$stderr" != *"$wrong"* ]]
	run -1 --separate-stderr env AWS_SECRET_ACCESS_KEY="$wrong" keep-store --store "$STORE_URL" list
	refute_crash
	[[ "$output$stderr" != *"$wrong"* ]]
	# nothing was written by the refused put
	run -1 --separate-stderr keep-store --store "$STORE_URL" get s/y
}

@test "a credentials file readable by group or others is refused; 0600 is used" {
	local creds="$BATS_TEST_TMPDIR/credentials" cfg="$BATS_TEST_TMPDIR/creds.yaml"
	printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
		"$S3_ACCESS_KEY" "$S3_SECRET_KEY" >"$creds"
	cp "$KEEP_CONFIG" "$cfg"
	printf 's3:\n  credentials_file: %s\n' "$creds" >>"$cfg"
	chmod 0644 "$creds"
	# the file, not the environment, must be what is used
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
		keep-store -c "$cfg" list >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" && status=0 || status=$?
	[ "$status" -eq 100 ]
	grep -q 'group or others' "$BATS_TEST_TMPDIR/err"
	run ! grep -q -- "$S3_SECRET_KEY" "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err"
	chmod 0600 "$creds"
	echo file-creds | env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
		keep-store -c "$cfg" put c/x
	run -0 --separate-stderr keep-store --store "$STORE_URL" get c/x
	[ "$output" = file-creds ]
}

# libcurl is loaded when the first S3 store opens, never linked
# (lib/store/curlfn_internal.h): without it an S3 command fails with one
# line and 111, and an fs store command does not need it at all.
@test "libcurl is loaded for an S3 store only: missing, it is one line and 111; the fs store runs without it" {
	load helpers/owner
	local b
	for b in keep-store lease-write lease-fence node-watch owner-acquire; do
		run -0 ldd "$KEEP_BINDIR/$b"
		[[ "$output" != *libcurl* ]]
	done
	run -111 --separate-stderr sysf 'dlopen:ENOENT' keep-store --store "$STORE_URL" get k
	refute_crash
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"fatal: unable to open store '$STORE_URL': cannot load libcurl (libcurl.so.4): "* ]]
	mkdir "$BATS_TEST_TMPDIR/bucket"
	run -0 --separate-stderr sysf 'dlopen:ENOENT' keep-store --store "file://$BATS_TEST_TMPDIR/bucket" put k <<<body
	run -0 --separate-stderr sysf 'dlopen:ENOENT' keep-store --store "file://$BATS_TEST_TMPDIR/bucket" get k
	[ "$output" = body ]
	# the same store on S3, libcurl there: works
	run -0 --separate-stderr keep-store --store "$STORE_URL" put k <<<body
	run -0 --separate-stderr keep-store --store "$STORE_URL" get k
	[ "$output" = body ]
}

@test "this file runs the sanitizer build in every pass (# run-all: sanitizers)" {
	[ -n "${KEEP_SAN_BINDIR:-}" ] || skip "KEEP_SAN_BINDIR not set (not run by tests/run-all.sh)"
	[ "$KEEP_BINDIR" = "$KEEP_SAN_BINDIR" ]
	run -0 ldd "$(command -v keep-store)"
	[[ "$output" == *libasan* ]]
}
