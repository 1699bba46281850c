#!/usr/bin/env bats
# --wait waits through transient errors (issue 24 item 4; docs/ownership.md
# "Waiting for a key"): a store that does not answer, 503s and ambiguous
# writes, this node's own lease running out meanwhile; one `retrying` line
# per error, a backoff with jitter (lib/core/acqwait.c); only a definite
# answer or the deadline ends the wait. Runs on the fs store and on a real
# S3 server (KEEP_TEST_STORE): the outage is the fault file (every store
# call of every process of the test fails, not sent). Timings (ms): ttl
# 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/owner

setup() { keep_setup; }
teardown() { keep_teardown; }

# since_at_least T0 MS : MS ms have passed since T0 (the test's wall clock)
since_at_least() { [ $(($(now_ms) - $1)) -ge "$2" ]; }

start_agents() {
	local n
	for n in "$@"; do start_bg "a$n" keep-agent --node-id "$n"; done
	for n in "$@"; do wait_line 30 "a$n" '^live '; done
}

@test "a 60 s --wait across a 10 s store outage acquires the key after the outage (owner-acquire and owner-run), a retrying line per error" {
	start_agents n1 n2
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 t/c/b
	start_bg wa owner-acquire --node-id n2 --wait=60s t/c/a
	start_bg wr owner-run --node-id n2 --wait=60s t/c/b -- sh -c 'echo "ran $KEEP_OWNER_GENERATION"'
	wait_line 10 wa '^waiting key=t/c/a node=n1 free_at_ms=-$'
	wait_line 10 wr '^waiting key=t/c/b node=n1 free_at_ms=-$'
	# the outage: 10 s of every store call failing; n1's holds lapse with
	# its lease (its resolver releases them once the store answers again)
	echo '* * fail' >"$FAULT_FILE"
	t0=$(now_ms)
	wait_line 15 wa '^retrying key=t/c/a '
	wait_for 15 since_at_least "$t0" 10000
	: >"$FAULT_FILE"
	t1=$(now_ms)
	run wait_exit 40 wa
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR"/wa.*; false; }
	run wait_exit 40 wr
	[ "$output" = 0 ] || { cat "$BATS_TEST_TMPDIR"/wr.*; false; }
	for w in wa wr; do
		k=t/c/a
		[ $w = wr ] && k=t/c/b
		run -0 grep -E "^acquired key=$k generation=2 " "$BATS_TEST_TMPDIR/$w.out"
		n=$(grep -c "^retrying key=$k reason=[a-z-]* code=[0-9]* in_ms=[0-9]*$" "$BATS_TEST_TMPDIR/$w.out")
		echo "# $w: $n retrying lines in the outage" >&3
		# at least one attempt a period: 10 s of outage
		[ "$n" -ge 8 ]
		# every line a transient answer: the store (111), an unknown write
		# (20), this node's lease ran out (14)
		other=$(grep "^retrying key=$k " "$BATS_TEST_TMPDIR/$w.out" |
			grep -Ev ' reason=(store code=111|unknown code=20|lease-not-valid code=14|lease-lapsed code=14) ' || true)
		[ -z "$other" ] || { echo "not transient: $other"; false; }
		run -1 grep -E '^(error|refused|held) ' "$BATS_TEST_TMPDIR/$w.out"
	done
	run -0 grep -x 'ran 2' "$BATS_TEST_TMPDIR/wr.out"
	# the retries back off to a period at most, with jitter: never more
	# than the period apart
	run -0 awk '/^retrying / { sub("in_ms=", "", $5); if ($5 + 0 > 1000) { print; bad = 1 } } END { exit bad }' "$BATS_TEST_TMPDIR/wa.out"
	echo "# outage ended at +$((t1 - t0)) ms" >&3
	refute_sanitizer_reports
}

@test "--wait ends at a definite answer (the store refuses: 403), not at a transient one; its deadline bounds the retries" {
	start_agents n1
	# a refusal is definite: no retry, held's sibling exit 1 at once
	echo 'get owners/ error 403' >"$FAULT_FILE"
	t0=$(now_ms)
	run -1 --separate-stderr owner-acquire --node-id n1 --wait=30s t/c/x
	t1=$(now_ms)
	[ "$output" = "error key=t/c/x reason=store" ]
	[ $((t1 - t0)) -lt 10000 ]
	# a 503 is transient: retried until the deadline, then its own code
	echo 'get owners/ error 503' >"$FAULT_FILE"
	t0=$(now_ms)
	run -111 --separate-stderr owner-acquire --node-id n1 --wait=3s t/c/x
	t1=$(now_ms)
	[ "${lines[-1]}" = "error key=t/c/x reason=store" ]
	run -0 grep -c '^retrying key=t/c/x reason=store code=111 ' <<<"$output"
	[ "$output" -ge 3 ]
	echo "# gave up after $((t1 - t0)) ms" >&3
	[ $((t1 - t0)) -ge 3000 ]
	: >"$FAULT_FILE"
	refute_sanitizer_reports
}
