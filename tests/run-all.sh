#!/bin/sh
# run-all.sh BUILD_DIR [unit|bats|sim|all] — every test suite of keep, TAP.
#
#   unit  each BUILD_DIR/tests/test_* binary
#   bats  tests/bats on the fs store, then again on a real S3 server:
#         $S3_ENDPOINT if set (with S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION,
#         and the bucket $S3_BUCKET, default keep-test, created if missing),
#         else Ceph RGW started here by scripts/s3-server.sh on a temporary
#         data dir (port 7480 or the next free pair) and stopped on exit,
#         failure or interrupt; CEPH_CONF (that server's ceph.conf, or
#         the caller's for $S3_ENDPOINT) lets a test make a second S3 user
#         with radosgw-admin (tests/bats/0117-s3-bucket-policy.bats)
#   sim   BUILD_DIR/bin/keep-sim --check
#   all   unit and bats (the default; bats runs keep-sim --check in
#         tests/bats/0900-sim.bats, once, in the fs pass)
#
# Each suite's output is printed as it runs. `ok` / `not ok` TAP lines are
# counted across all suites (skips are reported, not counted as passes); a
# suite that exits non-zero without any `not ok` line counts as 1 failure.
# The last line is exactly "N passed, N failed"; exit 0 only if 0 failed.
set -u

usage() {
	echo "usage: sh tests/run-all.sh BUILD_DIR [unit|bats|sim|all]" >&2
	exit 100
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
MODE=${2:-all}
case $MODE in unit | bats | sim | all) ;; *) usage ;; esac
[ -d "$1" ] || {
	echo "run-all: no build directory '$1' (run make san first)" >&2
	exit 100
}
BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 100

PASSED=0
FAILED=0
SKIPPED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/keep-run-all.XXXXXX") || exit 111
S3_DATA=
S3_STARTED=

stop_s3() {
	if [ -n "$S3_STARTED" ]; then
		echo "# stopping the test S3 server ($S3_DATA)"
		bash "$ROOT/scripts/s3-server.sh" stop "$S3_DATA" --purge >/dev/null 2>&1 ||
			echo "# warning: could not stop the S3 server of $S3_DATA" >&2
		S3_STARTED=
	fi
}
cleanup() {
	stop_s3
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "# interrupted" >&2; exit 130' INT
trap 'echo "# terminated" >&2; exit 143' TERM
trap 'exit 129' HUP

# suite NAME CMD... : run CMD, show its output, count its TAP lines.
suite() {
	name=$1
	shift
	echo "# suite: $name"
	rm -f "$TMP/rc"
	{
		"$@"
		echo $? >"$TMP/rc"
	} 2>&1 | tee "$TMP/out"
	rc=$(cat "$TMP/rc" 2>/dev/null || echo 1)
	ok=$(grep -c '^ok ' "$TMP/out")
	skip=$(grep -c -i '^ok .*# skip' "$TMP/out")
	notok=$(grep -c '^not ok ' "$TMP/out")
	PASSED=$((PASSED + ok - skip))
	SKIPPED=$((SKIPPED + skip))
	FAILED=$((FAILED + notok))
	if [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
		echo "not ok - suite '$name' exited with status $rc"
		FAILED=$((FAILED + 1))
	fi
	echo "# end of suite: $name: $((ok - skip)) passed, $notok failed, $skip skipped, exit $rc"
}

# fail_suite NAME REASON : a suite that could not run at all.
fail_suite() {
	echo "# suite: $1"
	echo "not ok - $1: $2"
	FAILED=$((FAILED + 1))
}

run_unit() {
	found=
	for t in "$BUILD"/tests/test_*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		found=1
		suite "unit $(basename "$t")" "$t"
	done
	[ -n "$found" ] || echo "# no unit tests in $BUILD/tests"
}

have_bats_files() {
	for f in "$ROOT"/tests/bats/*.bats; do
		[ -f "$f" ] && return 0
	done
	return 1
}

run_bats() { # STORE
	KEEP_BINDIR="$BUILD/bin" KEEP_TEST_STORE=$1 bats --tap --timing "$ROOT/tests/bats"
}

# port_free PORT: nothing accepts connections on 127.0.0.1:PORT.
port_free() {
	curl -s -o /dev/null -m 2 "http://127.0.0.1:$1/"
	[ $? -eq 7 ]
}

# ensure_bucket: create $S3_BUCKET on $S3_ENDPOINT unless it exists.
ensure_bucket() {
	code=$(curl -s -o "$TMP/bucket.out" -w '%{http_code}' -m 20 -X PUT \
		--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/$S3_BUCKET") || code=000
	case $code in
	200 | 409) return 0 ;;
	esac
	echo "# creating bucket '$S3_BUCKET' on $S3_ENDPOINT failed: HTTP $code" >&2
	return 1
}

# start_s3: Ceph RGW on a temporary data dir; exports the S3_* variables.
start_s3() {
	if ! command -v radosgw >/dev/null 2>&1 || ! command -v ceph-mon >/dev/null 2>&1 ||
		! command -v ceph-osd >/dev/null 2>&1; then
		echo "# ceph packages missing: running scripts/install-deps.sh --s3"
		sh "$ROOT/scripts/install-deps.sh" --s3 || return 1
	fi
	port=7480
	tries=0
	until port_free "$port" && port_free $((port + 1)); do
		port=$((port + 2))
		tries=$((tries + 1))
		[ "$tries" -lt 50 ] || {
			echo "# no free port pair from 7480 up" >&2
			return 1
		}
	done
	S3_DATA="$TMP/s3"
	S3_STARTED=1 # from here on, stop it on exit whatever happens
	S3_BUCKET=${S3_BUCKET:-keep-test}
	export S3_BUCKET
	bash "$ROOT/scripts/s3-server.sh" start "$S3_DATA" "$port" >"$TMP/s3.env" || return 1
	# only the lines we expect, never arbitrary shell
	# shellcheck disable=SC2034 # v is read by the eval below
	while IFS='=' read -r k v; do
		case $k in
		S3_ENDPOINT | S3_ACCESS_KEY | S3_SECRET_KEY | S3_REGION | S3_BUCKET | CEPH_CONF)
			eval "$k=\$v"
			export "${k?}"
			;;
		esac
	done <"$TMP/s3.env"
	[ -n "${S3_ENDPOINT:-}" ]
}

run_bats_s3() {
	if [ -n "${S3_ENDPOINT:-}" ]; then
		if [ -z "${S3_ACCESS_KEY:-}" ] || [ -z "${S3_SECRET_KEY:-}" ]; then
			fail_suite "bats (s3)" "S3_ENDPOINT is set but S3_ACCESS_KEY or S3_SECRET_KEY is not"
			return
		fi
		S3_REGION=${S3_REGION:-us-east-1}
		S3_BUCKET=${S3_BUCKET:-keep-test}
		export S3_ENDPOINT S3_ACCESS_KEY S3_SECRET_KEY S3_REGION S3_BUCKET
		echo "# using the S3 server at $S3_ENDPOINT, bucket $S3_BUCKET"
		if ! ensure_bucket; then
			fail_suite "bats (s3)" "bucket $S3_BUCKET missing and could not be created"
			return
		fi
	else
		echo "# starting a test S3 server (Ceph RGW on loopback)"
		if ! start_s3; then
			fail_suite "bats (s3)" "could not start the test S3 server (logs: $S3_DATA/log)"
			tail -n 30 "$S3_DATA"/log/*.log 2>/dev/null | sed 's/^/# /'
			stop_s3
			return
		fi
		echo "# S3 server up: $S3_ENDPOINT bucket $S3_BUCKET"
	fi
	suite "bats (s3)" run_bats s3
	stop_s3
}

if [ "$MODE" = unit ] || [ "$MODE" = all ]; then
	run_unit
fi

if [ "$MODE" = bats ] || [ "$MODE" = all ]; then
	if ! command -v bats >/dev/null 2>&1; then
		fail_suite "bats" "bats is not installed (run scripts/install-deps.sh --test)"
	elif ! have_bats_files; then
		echo "# no bats files in tests/bats"
	else
		suite "bats (fs)" run_bats fs
		run_bats_s3
	fi
fi

# In "all", the simulator's check runs once, as tests/bats/0900-sim.bats
# (which also names every broken model it must catch).
if [ "$MODE" = sim ]; then
	if [ -x "$BUILD/bin/keep-sim" ]; then
		suite "sim" "$BUILD/bin/keep-sim" --check
	else
		fail_suite "sim" "$BUILD/bin/keep-sim was not built"
	fi
fi

[ "$SKIPPED" -eq 0 ] || echo "# $SKIPPED skipped"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
