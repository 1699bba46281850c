#!/usr/bin/env bats
# owner-commit: the fenced commit, its claim and its read (issue 26;
# docs/ownership.md "owner-commit", docs/formats.md "Fenced objects").
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/owner
load helpers/foreign

setup() { keep_setup; }
teardown() { keep_teardown; }

# commit NODE KEY GEN OBJ FILE [FLAG...] : owner-commit with FILE on stdin
commit() {
	local node=$1 key=$2 gen=$3 obj=$4 file=$5
	shift 5
	owner-commit --node-id "$node" "$@" "$key" "$gen" "$obj" <"$file"
}
# obj_version OBJ : the version token of OBJ as keep-store sees it
obj_version() { keep-store stat "$1" | sed -n 's/.*version=\([^ ]*\).*/\1/p'; }

@test "owner-commit: a holder commits; --get gives the bytes exactly, the fence on stderr; --show gives the fence" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	# any bytes: NUL, newlines, 0xff, no final newline
	head -c 3000 /dev/urandom >"$BATS_TEST_TMPDIR/data"
	printf '\0\n\377end' >>"$BATS_TEST_TMPDIR/data"
	run -0 --separate-stderr commit n1 t/c/a 1 app/state "$BATS_TEST_TMPDIR/data"
	[[ "$output" =~ ^committed\ key=t/c/a\ generation=1\ object=app/state\ version=[^\ ]+$ ]]
	v=$(field version)
	[ "$v" = "$(obj_version app/state)" ]
	owner-commit --get app/state >"$BATS_TEST_TMPDIR/got" 2>"$BATS_TEST_TMPDIR/get.err"
	cmp "$BATS_TEST_TMPDIR/data" "$BATS_TEST_TMPDIR/got"
	sha=$(sha256sum "$BATS_TEST_TMPDIR/data" | cut -d' ' -f1)
	run -0 cat "$BATS_TEST_TMPDIR/get.err"
	assert_output --regexp "^fence object=app/state key=t/c/a generation=1 version=$v size=3006 sha256=$sha meta_owner=[^ ]+ meta_generation=[^ ]+\$"
	run -0 --separate-stderr owner-commit --get --show app/state
	[[ "$output" == "fence object=app/state key=t/c/a generation=1 version=$v size=3006 sha256=$sha "* ]]
	[ -z "$stderr" ]
	run -0 --separate-stderr owner-commit --get --show --json app/state
	[[ "$output" == "{\"type\":\"fence\",\"object\":\"app/state\",\"key\":\"t/c/a\",\"generation\":1,\"version\":\"$v\",\"size\":3006,"* ]]
	# the object itself: keep's header, then the bytes
	run -0 keep-store get app/state
	[ "${lines[0]}" = "wasmkeep-fenced 1" ]
	[ "${lines[1]}" = "owner t/c/a" ]
	[ "${lines[2]}" = "generation 1" ]
	[ "${lines[3]}" = "size 3006" ]
	[ "${lines[4]}" = "sha256 $sha" ]
	# an absent object: exit 1, one line
	run -1 --separate-stderr owner-commit --get app/none
	[ -z "$output" ]
	[ "$stderr" = "owner-commit: warning: 'app/none': no such object" ]
	refute_sanitizer_reports
}

@test "owner-commit: requests per commit — 1 GET + 1 PUT; with --if-version, 1 PUT; --json lines" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf one >"$BATS_TEST_TMPDIR/d1"
	printf two >"$BATS_TEST_TMPDIR/d2"
	run -0 --separate-stderr commit n1 t/c/a 1 app/s "$BATS_TEST_TMPDIR/d1" --stats
	v1=$(field version)
	[ "$stderr" = "stats requests=2 get=1 head=0 put=1 delete=0 list=0 ok=1 conflict=0 not_found=1 refused=0 ambiguous=0 prog=owner-commit" ]
	run -0 --separate-stderr commit n1 t/c/a 1 app/s "$BATS_TEST_TMPDIR/d2" --stats --if-version "$v1"
	v2=$(field version)
	[ "$stderr" = "stats requests=1 get=0 head=0 put=1 delete=0 list=0 ok=1 conflict=0 not_found=0 refused=0 ambiguous=0 prog=owner-commit" ]
	[ "$v2" != "$v1" ]
	[ "$(owner-commit --get app/s 2>/dev/null)" = two ]
	# a stale --if-version: a compare-and-swap refused, the version named, nothing written
	run -1 --separate-stderr commit n1 t/c/a 1 app/s "$BATS_TEST_TMPDIR/d1" --if-version "$v1"
	[ "$output" = "refused key=t/c/a object=app/s reason=changed version=$v2" ]
	[ "$(owner-commit --get app/s 2>/dev/null)" = two ]
	run -0 --separate-stderr commit n1 t/c/a 1 app/s "$BATS_TEST_TMPDIR/d1" --json
	[[ "$output" =~ ^\{\"type\":\"committed\",\"key\":\"t/c/a\",\"generation\":1,\"object\":\"app/s\",\"version\":\"[^\"]+\"\}$ ]]
	refute_sanitizer_reports
}

@test "owner-commit --claim: a new holder's fence over the bytes there; absent: created empty; again: nothing written" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 --separate-stderr owner-commit --node-id n1 --claim t/c/a 1 app/c
	[[ "$output" =~ ^claimed\ key=t/c/a\ generation=1\ object=app/c\ version=[^\ ]+\ previous=-$ ]]
	run -0 --separate-stderr owner-commit --get app/c
	[ -z "$output" ]
	[[ "$stderr" == *" generation=1 "*" size=0 "* ]]
	printf 'the state' >"$BATS_TEST_TMPDIR/d"
	run -0 commit n1 t/c/a 1 app/c "$BATS_TEST_TMPDIR/d"
	run -0 owner-release --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 2 ]
	run -0 --separate-stderr owner-commit --node-id n1 --claim --stats t/c/a 2 app/c
	[[ "$output" == "claimed key=t/c/a generation=2 object=app/c version="*" previous=1" ]]
	v=$(field version)
	[[ "$stderr" == "stats requests=2 get=1 head=0 put=1 "* ]]
	run -0 --separate-stderr owner-commit --get app/c
	[ "$output" = "the state" ]
	[[ "$stderr" == *" generation=2 "* ]]
	# already claimed at 2: nothing written
	run -0 --separate-stderr owner-commit --node-id n1 --claim --stats t/c/a 2 app/c
	[ "$output" = "claimed key=t/c/a generation=2 object=app/c version=$v previous=2" ]
	[[ "$stderr" == "stats requests=1 get=1 head=0 put=0 "* ]]
	refute_sanitizer_reports
}

@test "owner-commit: refused without a valid grant (1, or the lease's code), under a later fence (23), over what is not a fenced object of KEY (17); nothing written" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf x >"$BATS_TEST_TMPDIR/d"
	# no hold of the key, another generation: nothing sent
	run -1 --separate-stderr commit n1 t/c/b 1 app/g "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/b object=app/g reason=grant-not-valid grant=no-hold" ]
	run -1 --separate-stderr commit n1 t/c/a 2 app/g "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/a object=app/g reason=grant-not-valid grant=other-generation" ]
	run -1 --separate-stderr keep-store get app/g
	# a later generation's fence on the object (planted: a copy of this
	# holder's object naming generation 2): refused, 23, for commits and claims
	run -0 commit n1 t/c/a 1 app/g "$BATS_TEST_TMPDIR/d"
	keep-store get app/g | sed 's/^generation 1$/generation 2/' >"$BATS_TEST_TMPDIR/later"
	keep-store put app/g2 <"$BATS_TEST_TMPDIR/later" >/dev/null
	v2=$(obj_version app/g2)
	run -23 --separate-stderr commit n1 t/c/a 1 app/g2 "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/a object=app/g2 reason=fenced generation=2" ]
	run -23 --separate-stderr owner-commit --node-id n1 --claim t/c/a 1 app/g2
	[ "$output" = "refused key=t/c/a object=app/g2 reason=fenced generation=2" ]
	[ "$(obj_version app/g2)" = "$v2" ]
	# another key's fence, a plain object, a fence that does not decode: 17
	run -0 owner-acquire --node-id n1 t/c/b
	v=$(obj_version app/g)
	run -17 --separate-stderr commit n1 t/c/b 1 app/g "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/b object=app/g reason=other-key owner=t/c/a" ]
	[ "$(obj_version app/g)" = "$v" ]
	printf 'not ours\n' | keep-store put app/plain >/dev/null
	vp=$(obj_version app/plain)
	run -17 --separate-stderr commit n1 t/c/a 1 app/plain "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/a object=app/plain reason=not-fenced" ]
	[ "$(obj_version app/plain)" = "$vp" ]
	run -17 --separate-stderr owner-commit --get app/plain
	[ -z "$output" ]
	[[ "$stderr" == "owner-commit: warning: 'app/plain' is not a fenced object: "* ]]
	keep-store get app/g | sed '$s/x$/y/' | keep-store put app/bad >/dev/null
	vb=$(obj_version app/bad)
	run -17 --separate-stderr commit n1 t/c/a 1 app/bad "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/a object=app/bad reason=bad-fence" ]
	[[ "$stderr" == *"sha256 does not match the data"* ]]
	[ "$(obj_version app/bad)" = "$vb" ]
	# on fs, a file that is no object of keep's at all (no fs header)
	if [ "${KEEP_TEST_STORE:-fs}" = fs ]; then
		foreign_put app/foreign "$BATS_TEST_TMPDIR/d"
		run -17 --separate-stderr commit n1 t/c/a 1 app/foreign "$BATS_TEST_TMPDIR/d"
		[ "$output" = "refused key=t/c/a object=app/foreign reason=not-fenced" ]
	fi
	# the lease not valid (lease-write stopped): the lease's code, 15
	kill -TERM "$(bg_pid n1)"
	run wait_exit 15 n1
	[ "$output" = 0 ]
	run -15 --separate-stderr commit n1 t/c/a 1 app/g "$BATS_TEST_TMPDIR/d"
	[ "$output" = "refused key=t/c/a object=app/g reason=grant-not-valid grant=not-valid" ]
	[ "$(obj_version app/g)" = "$v" ]
	refute_sanitizer_reports
}

@test "owner-commit: bad KEY, GENERATION, OBJECT, version or DATA over 64512 bytes — one line, exit 100, nothing written" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf x >"$BATS_TEST_TMPDIR/d"
	head -c 64513 /dev/zero >"$BATS_TEST_TMPDIR/big"
	head -c 64512 /dev/zero >"$BATS_TEST_TMPDIR/max"
	run -100 --separate-stderr owner-commit --node-id n1 t/c app/x <"$BATS_TEST_TMPDIR/d"
	[ -z "$output" ]
	[[ "${stderr%%$'\n'*}" == "owner-commit: fatal: KEY, GENERATION and OBJECT expected" ]]
	for bad in t/c 't/c/a b' t//a ../c/a; do
		run -100 --separate-stderr commit n1 "$bad" 1 app/x "$BATS_TEST_TMPDIR/d"
		[[ "${stderr%%$'\n'*}" == "owner-commit: fatal: invalid key '"*"' (tenant/class/name)" ]]
	done
	for bad in 0 -1 01 abc 9007199254740992 ''; do
		run -100 --separate-stderr owner-commit --node-id n1 -- t/c/a "$bad" app/x <"$BATS_TEST_TMPDIR/d"
		[[ "${stderr%%$'\n'*}" == "owner-commit: fatal: GENERATION wants 1..9007199254740991"* ]]
	done
	for bad in nodes/n1 nodes owners/t/c/a leases/t/c/a wal/t/c/a/1/x snapshot/x probe/x cluster cluster/x; do
		run -100 --separate-stderr commit n1 t/c/a 1 "$bad" "$BATS_TEST_TMPDIR/d"
		[[ "${stderr%%$'\n'*}" == "owner-commit: fatal: object key '$bad' is under one of keep's own names"* ]]
	done
	for bad in /abs a//b a/../b 'a\b' $'a\001b' ''; do
		run -100 --separate-stderr commit n1 t/c/a 1 "$bad" "$BATS_TEST_TMPDIR/d"
		[[ "${stderr%%$'\n'*}" == "owner-commit: fatal: invalid object key '"* ]]
	done
	run -100 --separate-stderr commit n1 t/c/a 1 app/x "$BATS_TEST_TMPDIR/big"
	[ "$stderr" = "owner-commit: fatal: DATA on stdin is larger than 64512 bytes: nothing written" ]
	run -100 --separate-stderr commit n1 t/c/a 1 app/x "$BATS_TEST_TMPDIR/d" --if-version ''
	run -100 --separate-stderr commit n1 t/c/a 1 app/x "$BATS_TEST_TMPDIR/d" --if-version $'a\nb'
	run -100 --separate-stderr owner-commit --show app/x
	run -100 --separate-stderr owner-commit --get --claim app/x
	run -100 --separate-stderr owner-commit --node-id n1 --claim --if-version v t/c/a 1 app/x
	run -100 --separate-stderr owner-commit --get app/x app/y
	# nothing was written by any of them
	run -0 --separate-stderr keep-store list app/
	[ -z "$output" ]
	# the largest DATA is accepted
	run -0 --separate-stderr commit n1 t/c/a 1 app/x "$BATS_TEST_TMPDIR/max"
	owner-commit --get app/x 2>/dev/null | cmp - "$BATS_TEST_TMPDIR/max"
	refute_sanitizer_reports
}

@test "owner-commit: a store failing for now is 111 (unknown once a write may have landed), a refused request 1" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf x >"$BATS_TEST_TMPDIR/d"
	echo "get app/ error 503" >"$FAULT_FILE"
	run -111 --separate-stderr commit n1 t/c/a 1 app/f "$BATS_TEST_TMPDIR/d" --stats
	[ "$output" = "error key=t/c/a object=app/f reason=store" ]
	[[ "$stderr" == *"stats requests=4 get=4 head=0 put=0 "* ]]
	echo "put app/ error 503" >"$FAULT_FILE"
	run -111 --separate-stderr commit n1 t/c/a 1 app/f "$BATS_TEST_TMPDIR/d" --stats
	[ "$output" = "unknown key=t/c/a object=app/f generation=1 reason=store" ]
	[[ "$stderr" == *"stats requests=8 get=4 head=0 put=4 "* ]]
	echo "put app/ error 403" >"$FAULT_FILE"
	run -1 --separate-stderr commit n1 t/c/a 1 app/f "$BATS_TEST_TMPDIR/d"
	[ "$output" = "error key=t/c/a object=app/f reason=store" ]
	: >"$FAULT_FILE"
	run -1 --separate-stderr keep-store get app/f
	run -0 commit n1 t/c/a 1 app/f "$BATS_TEST_TMPDIR/d"
	refute_sanitizer_reports
}

@test "owner-commit on S3: the fence is in the object's metadata (curl, SigV4), --get gives the bytes exactly; the ETag trap is real on this store" {
	require_s3 "S3 user metadata and ETags: S3 pass only"
	local base=${STORE_URL#s3://} sig=("--aws-sigv4" "aws:amz:${S3_REGION:-us-east-1}:s3"
		"--user" "$S3_ACCESS_KEY:$S3_SECRET_KEY" "-H" "x-amz-content-sha256: UNSIGNED-PAYLOAD")
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	printf 'payload\n\001bytes' >"$BATS_TEST_TMPDIR/d"
	run -0 commit n1 t/c/a 1 app/i "$BATS_TEST_TMPDIR/d"
	v=$(field version)
	run -0 curl -sS --fail -I "${sig[@]}" "$S3_ENDPOINT/$base/app/i"
	assert_line --regexp '^[Xx]-[Aa]mz-[Mm]eta-[Kk]eep-[Oo]wner: t/c/a'$'\r''?$'
	assert_line --regexp '^[Xx]-[Aa]mz-[Mm]eta-[Kk]eep-[Gg]eneration: 1'$'\r''?$'
	assert_line --regexp "^[Ee][Tt]ag: \"?$v\"?"$'\r''?$'
	curl -sS --fail "${sig[@]}" -o "$BATS_TEST_TMPDIR/raw" "$S3_ENDPOINT/$base/app/i"
	run -0 head -n 1 "$BATS_TEST_TMPDIR/raw"
	[ "$output" = "wasmkeep-fenced 1" ]
	owner-commit --get app/i 2>/dev/null | cmp - "$BATS_TEST_TMPDIR/d"
	run -0 --separate-stderr owner-commit --get --show app/i
	[[ "$output" == *" meta_owner=t/c/a meta_generation=1" ]]
	# the trap: the same body with other metadata keeps its ETag, so a fence
	# in metadata only would not change the version If-Match compares
	for g in 1 2; do
		curl -sS --fail -X PUT --data-binary same -H "x-amz-meta-keep-generation: $g" \
			"${sig[@]}" -D "$BATS_TEST_TMPDIR/h$g" -o /dev/null "$S3_ENDPOINT/$base/app/trap"
	done
	e1=$(tr -d '\r' <"$BATS_TEST_TMPDIR/h1" | sed -n 's/^[Ee][Tt]ag: //p')
	e2=$(tr -d '\r' <"$BATS_TEST_TMPDIR/h2" | sed -n 's/^[Ee][Tt]ag: //p')
	[ -n "$e1" ]
	[ "$e1" = "$e2" ]
	refute_sanitizer_reports
}
