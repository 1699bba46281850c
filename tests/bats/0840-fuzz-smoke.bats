#!/usr/bin/env bats
# The fuzz smoke run of CI (docs/testing.md, "Fuzzing"): every libFuzzer
# harness in fuzz/ from its seed corpus for a fixed number of runs, one test
# each. Built by `make fuzz-build` (clang, ASan+UBSan) into build/fuzz.
# Store-independent: runs in the fs pass only; skipped without clang's
# libFuzzer runtime. A crash fails the test and leaves the input in
# build/fuzz/crashes/ (add it to tests/unit/test_fuzz_regressions.c).
#
# The smoke is deterministic, so CI is never red by chance: a fixed -seed and
# -runs, with what makes libFuzzer depend on time or addresses turned off
# (ASLR via `setarch -R`, the corpus reload every second, entropic's
# schedule, input reduction, the length control; measured in docs/testing.md).
# The same tree runs the same inputs every time on a quiet machine (`make
# fuzz-determinism` checks it, by hand: one CI run beside a CPU hog saw
# fuzz_awscreds add other units, so that check is not a CI test, where it
# would turn CI red by chance); a finding is caused by a change of the code
# or of the seeds. Random exploration is `make fuzz`, run by hand.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/../.."

setup_file() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || return 0
	command -v clang >/dev/null || return 0
	echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' >"$BATS_FILE_TMPDIR/probe.c"
	clang -fsanitize=fuzzer "$BATS_FILE_TMPDIR/probe.c" -o "$BATS_FILE_TMPDIR/probe" 2>/dev/null || return 0
	touch "$BATS_FILE_TMPDIR/have-libfuzzer"
	setarch -R true 2>/dev/null && touch "$BATS_FILE_TMPDIR/have-setarch"
	make -C "$ROOT" -s fuzz-build >"$BATS_FILE_TMPDIR/make.log" 2>&1 ||
		{ tail -30 "$BATS_FILE_TMPDIR/make.log" >&3; return 1; }
}

# runs NAME : the smoke's number of runs for harness NAME, about 8 s each on
# this 2-core machine, quiet (the harnesses differ 30-fold in speed)
runs() {
	case $1 in
	fuzz_ownerrec | fuzz_lease_state | fuzz_leaseobj) echo 1000000 ;;
	fuzz_nodeobj) echo 800000 ;;
	fuzz_line | fuzz_awscreds | fuzz_key) echo 300000 ;;
	fuzz_s3_error | fuzz_config) echo 150000 ;;
	fuzz_s3_list) echo 50000 ;;
	*) echo 100000 ;;
	esac
}

# fuzz NAME [RUNS [WORKDIR]] : run the harness NAME from its seeds,
# deterministically, RUNS times (default: runs NAME, scaled by
# $KEEP_FUZZ_SCALE percent, default 100); new units go to WORKDIR
fuzz() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent (runs in the fs pass)"
	[ -e "$BATS_FILE_TMPDIR/have-libfuzzer" ] || skip "clang with libFuzzer not installed"
	[ -e "$BATS_FILE_TMPDIR/have-setarch" ] ||
		skip "setarch -R refused here (personality(2) blocked): the smoke would not be deterministic"
	local b="$ROOT/build/fuzz/bin/$1" n=${2:-$(($(runs "$1") * ${KEEP_FUZZ_SCALE:-100} / 100))}
	local work=${3:-$BATS_TEST_TMPDIR/corpus}
	mkdir -p "$work" "$ROOT/build/fuzz/crashes"
	run setarch -R "$b" -seed=1 -runs="$n" -entropic=0 -reduce_inputs=0 -len_control=0 \
		-reload=0 -max_len=8192 -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$ROOT/build/fuzz/crashes/$1-" "$work" "$ROOT/fuzz/corpus/$1"
	[ "$status" -eq 0 ] || {
		grep -E 'ERROR|runtime error|SUMMARY|#[0-9]+ 0x' <<<"$output" | head -30
		return 1
	}
	grep -q "stat::number_of_executed_units: *$n\$" <<<"$output" ||
		{ grep stat:: <<<"$output"; return 1; }
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
