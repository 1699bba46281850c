#!/usr/bin/env bats
# The fuzz smoke run of CI (docs/testing.md, "Fuzzing"): every libFuzzer
# harness in fuzz/ for $KEEP_FUZZ_SECONDS (default 10) from its seed corpus,
# one test each. Built by `make fuzz-build` (clang, ASan+UBSan) into
# build/fuzz. Store-independent: runs in the fs pass only; skipped without
# clang's libFuzzer runtime. A crash fails the test and leaves the input in
# build/fuzz/crashes/ (add it to tests/unit/test_fuzz_regressions.c).

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/../.."

setup_file() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || return 0
	command -v clang >/dev/null || return 0
	echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' >"$BATS_FILE_TMPDIR/probe.c"
	clang -fsanitize=fuzzer "$BATS_FILE_TMPDIR/probe.c" -o "$BATS_FILE_TMPDIR/probe" 2>/dev/null || return 0
	touch "$BATS_FILE_TMPDIR/have-libfuzzer"
	make -C "$ROOT" -s fuzz-build >"$BATS_FILE_TMPDIR/make.log" 2>&1 ||
		{ tail -30 "$BATS_FILE_TMPDIR/make.log" >&3; return 1; }
}

# fuzz NAME : run the harness NAME from its seeds for the smoke time
fuzz() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"
	[ -e "$BATS_FILE_TMPDIR/have-libfuzzer" ] || skip "clang with libFuzzer not installed"
	local b="$ROOT/build/fuzz/bin/$1" work="$BATS_TEST_TMPDIR/corpus"
	mkdir -p "$work" "$ROOT/build/fuzz/crashes"
	run "$b" -max_total_time="${KEEP_FUZZ_SECONDS:-10}" -max_len=8192 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$ROOT/build/fuzz/crashes/$1-" \
		"$work" "$ROOT/fuzz/corpus/$1"
	[ "$status" -eq 0 ] || {
		grep -E 'ERROR|runtime error|SUMMARY|#[0-9]+ 0x' <<<"$output" | head -30
		return 1
	}
	grep -q 'stat::number_of_executed_units' <<<"$output"
}

@test "fuzz: node lease codec (fuzz_nodeobj)" { fuzz fuzz_nodeobj; }
@test "fuzz: ownership record codec (fuzz_ownerrec)" { fuzz fuzz_ownerrec; }
@test "fuzz: old lease and marker codec (fuzz_leaseobj)" { fuzz fuzz_leaseobj; }
@test "fuzz: config loader (fuzz_config)" { fuzz fuzz_config; }
@test "fuzz: stdin line parser (fuzz_line)" { fuzz fuzz_line; }
@test "fuzz: lease state file (fuzz_lease_state)" { fuzz fuzz_lease_state; }
@test "fuzz: S3 listing parser (fuzz_s3_list)" { fuzz fuzz_s3_list; }
@test "fuzz: S3 error and ETag parsers (fuzz_s3_error)" { fuzz fuzz_s3_error; }
@test "fuzz: key validation (fuzz_key)" { fuzz fuzz_key; }
@test "fuzz: AWS credential sources: profiles, credential_process and IMDS JSON (fuzz_awscreds)" { fuzz fuzz_awscreds; }

@test "fuzz: every harness in fuzz/ has a test here and a seed corpus" {
	for f in "$ROOT"/fuzz/fuzz_*.c; do
		n=${f##*/}
		n=${n%.c}
		grep -q "{ fuzz $n; }" "$BATS_TEST_FILENAME" || { echo "no test for $n"; false; }
		[ -n "$(ls -A "$ROOT/fuzz/corpus/$n" 2>/dev/null)" ] || { echo "no seeds for $n"; false; }
	done
}
