#!/usr/bin/env bats
# A short soak through the S3 fault proxy (bench/soak.sh with SOAK_FAULTS;
# docs/testing.md "Soak"): 3 keep-agents and their workers on the real
# server, every request exposed to lost replies, late writes, resets and
# 5xx answers, a node killed every ~25 s; the audit must find 0 violations.
# About 2 minutes. S3 pass only (tests/tools/s3proxy.c).

load helpers/common

setup() { require_s3; }

@test "proxy soak: 100 s of acquisitions, writes and kills through network faults audits 0 violations" {
	dir="$BATS_TEST_TMPDIR/soak"
	faults='put nodes/ lose p=0.03; put nodes/ late 1200 p=0.01;
put owners/ lose p=0.03; put owners/ error-after 500 p=0.02; put owners/ late 1500 p=0.01;
get owners/ error 503 p=0.03; get nodes/ reset p=0.02; list * delay 300 p=0.05;
put wal/ reset-after p=0.02; put wal/ late 1500 p=0.01; * * error 503 p=0.005'
	run -0 --separate-stderr env SOAK_DIR="$dir" SOAK_STORE=s3 SOAK_SECONDS=100 \
		SOAK_KILL_EVERY=25 SOAK_ACTORS=40 SOAK_HOLDS=6 SOAK_S3_TIMEOUT_MS=1000 \
		SOAK_FAULTS="$faults" bash "$BATS_TEST_DIRNAME/../../bench/soak.sh"
	echo "$output"
	summary=$(grep '^soak seconds=' <<<"$output")
	report=$(grep '^soak-report ' <<<"$output")
	[[ "$summary" == *" violations=0" ]]
	[[ "$summary" == *" missing_writes=0 "* ]]
	field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
	[ "$(field acquisitions "$summary")" -gt 50 ]
	[ "$(field writes "$summary")" -gt 100 ]
	[ "$(field kills "$summary")" -ge 2 ]
	# faults of every kind were injected, and the ones that forward reached the server
	[ "$(field faults "$report")" -gt 20 ]
	[ "$(field faults_forwarded "$report")" -gt 5 ]
	for a in lose late error-after reset reset-after error delay; do
		[[ ",$(field fault_actions "$report")," == *",$a:"* ]] || { echo "no $a fault"; false; }
	done
	# the per-minute CSV covers the run, and its columns add up to the summary
	[ "$(head -n 1 "$dir/soak.csv")" = "minute,seconds,acquisitions,releases,writes,kills,faults,lost_holds,kill_agent,kill_node,stops,suspends,steps" ]
	[ "$(wc -l <"$dir/soak.csv")" -ge 3 ]
	[ "$(awk -F, 'NR > 1 { s += $5 } END { print s }' "$dir/soak.csv")" = "$(field writes "$summary")" ]
	[ "$(awk -F, 'NR > 1 { s += $7 } END { print s }' "$dir/soak.csv")" = "$(field faults "$report")" ]
	# no sanitizer report from any keep process, nor from the proxy (it exited 0)
	run -1 grep -rlE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$dir/log"
	run -0 awk '($1 == "acqfail" || $1 == "putfail") && $6 >= 90 && $6 <= 100' "$dir/app.log"
	[ -z "$output" ]
}
