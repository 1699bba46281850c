#!/usr/bin/env bats
# The fs store's local errors (docs/store.md "The fs backend";
# docs/exit-codes.md): a full disk, a quota or an I/O error is a temporary
# condition (ambiguous: 111, retry), a permission or a read-only file
# system a definite refusal (1), on PUT, GET, DELETE and LIST alike;
# nothing is written either way. Failures are injected into the real fs
# store with tests/preload/statefail.c (the store's own staging file
# obj-NONCE, the key's file, a directory of the prefix).
# fs only: the S3 backend has no local errors (its classification is
# tests/bats/0113-answers-after-failures.bats's).

load helpers/common
load helpers/owner

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "fs only: local errors of the fs backend"
	keep_setup
}
teardown() { keep_teardown; }

@test "fs errors: a PUT failing with ENOSPC, EDQUOT or EIO is temporary (111), EROFS or EACCES a refusal (1); nothing written" {
	local e
	for e in ENOSPC EDQUOT EIO; do
		run -111 --separate-stderr sf "write:obj-:$e" keep-store put d/k1 <<<"body"
		assert_output --regexp '^put key=d/k1 outcome=ambiguous'
		[[ $stderr == *"unable to put 'd/k1': "*"(temporary: nothing done)"* ]] || { echo "$stderr"; false; }
		grep -q "statefail: write .*obj-.* $e" "$BATS_TEST_TMPDIR/statefail.log"
		run -1 keep-store get d/k1 # nothing written
	done
	for e in EROFS EACCES; do
		run -1 --separate-stderr sf "write:obj-:$e" keep-store put d/k1 <<<"body"
		assert_output --regexp '^put key=d/k1 outcome=refused'
		[[ $stderr != *temporary* ]]
		run -1 keep-store get d/k1
	done
	# an If-Match write over an existing object: the object stays as it was
	run -0 keep-store put d/k1 <<<"first"
	v=$(keep-store stat d/k1 | sed -n 's/.*version=\([^ ]*\).*/\1/p')
	run -111 sf "write:obj-:ENOSPC" keep-store put d/k1 --if-match "$v" <<<"second"
	run -0 keep-store get d/k1
	[ "$output" = first ]
	refute_sanitizer_reports
}

@test "fs errors: GET, DELETE and LIST failing with EIO are temporary (111), with EACCES a refusal (1)" {
	run -0 keep-store put d/k1 <<<"body"
	run -111 sf "open:k1$:EIO" keep-store get d/k1
	run -1 sf "open:k1$:EACCES" keep-store get d/k1
	run -111 sf "unlink:k1$:EIO" keep-store del d/k1
	run -1 sf "unlink:k1$:EACCES" keep-store del d/k1
	run -111 sf "open:d$:EIO" keep-store list d/
	run -1 sf "open:d$:EACCES" keep-store list d/
	run -0 keep-store get d/k1 # still there
	[ "$output" = body ]
	refute_sanitizer_reports
}
