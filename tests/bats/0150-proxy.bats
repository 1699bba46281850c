#!/usr/bin/env bats
# The S3 fault proxy itself (tests/tools/s3proxy.c, docs/testing.md "The S3
# fault proxy"): usage, the rules syntax, SigV4 through it, keep-alive,
# counts, probabilities, re-reading, bodies, a clean stop. S3 pass only:
# the proxy sits in front of the real server.

# run-all: sanitizers
load helpers/common

setup() {
	require_s3
	keep_setup
}
teardown() { keep_teardown; }

PROXY() { "$KEEP_TOOLDIR/s3proxy" "$@"; }

@test "s3proxy: -h prints the usage; misuse is one line and exit 100" {
	run -0 PROXY -h
	assert_line --index 0 --partial "usage: s3proxy [-p PORT]"
	for args in "-x" "-p" "-p 70000" "-p x" "-u ftp://h" "-u http://h/path" "-s -1" "extra" \
		"-n"; do
		# shellcheck disable=SC2086 # split on purpose
		run -100 --separate-stderr env -u S3_ENDPOINT "$KEEP_TOOLDIR/s3proxy" $args
		[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$args: $stderr"; false; }
		[[ "$stderr" == "s3proxy: "*"(s3proxy -h for usage)" ]]
		[ -z "$output" ]
	done
	run -100 --separate-stderr env -u S3_ENDPOINT "$KEEP_TOOLDIR/s3proxy"
	[ "$stderr" = "s3proxy: no server: give -u URL or set S3_ENDPOINT (s3proxy -h for usage)" ]
}

@test "s3proxy -n: good rules pass; a malformed line is named with why" {
	f="$BATS_TEST_TMPDIR/r"
	printf '%s\n' '# comment' '' 'put nodes/ lose count=1' 'get * delay 200 p=0.5' \
		'* owners/* error 503 code=SlowDown' 'list nodes/ late 1500 p=1 count=3' \
		'del x error-after 500' 'head * drop' 'put * reset p=.25 # trailing' \
		'put * reset-after' 'get a hang' 'put owners/ late 9000 until=/tmp/go count=1 p=1' \
		'* * error 503 above=200' >"$f"
	run -0 PROXY -n -r "$f"
	[ "$output" = "rules ok=11" ]
	for bad in "post * lose" "put" "put x" "put x explode" "put x delay" "put x delay -1" \
		"put x error 200" "put x error 600" "put x lose count=0" "put x lose p=1.5" \
		"put x lose p=0.1234567" "put x lose count=1 count=2" "put x lose code=a-b" \
		"put x lose extra" "put x delay 10 20" "put x late 10 until=rel/path" \
		"put x delay 10 until=/tmp/go" "put x late 10 until=/a until=/b" \
		"put x error 503 above=0" "put x error 503 above=2x" "put x lose above=1 above=2"; do
		printf '%s\n' "get * lose" "$bad" >"$f"
		run -100 --separate-stderr PROXY -n -r "$f"
		[[ "$stderr" == "s3proxy: $f:2: bad fault rule: "* ]] || { echo "$bad: $stderr"; false; }
	done
	# a missing file is no faults
	run -0 PROXY -n -r "$BATS_TEST_TMPDIR/none"
}

@test "s3proxy: SigV4 verifies for PUT, GET, HEAD, LIST and DELETE through the proxy" {
	start_proxy
	[ "$AWS_ENDPOINT_URL_S3" = "$PROXY_URL" ]
	# every request logged (a fault that does nothing), so we see it went through
	proxy_rule '* * delay 0'
	run -0 --separate-stderr keep-store put a/b <<<"hello"
	[[ "$output" == "put key=a/b outcome=ok version="* ]]
	v=${output##*version=}
	run -0 --separate-stderr keep-store get a/b
	[ "$output" = hello ]
	run -0 --separate-stderr keep-store stat a/b
	[ "$output" = "object key=a/b version=$v" ]
	run -0 --separate-stderr keep-store list a/
	[ "$output" = "object key=a/b version=$v" ]
	run -0 --separate-stderr keep-store put a/b --if-match "$v" <<<"again"
	run -0 --separate-stderr keep-store del a/b
	[ "$output" = "del key=a/b outcome=ok" ]
	run -0 --separate-stderr store-probe
	assert_output --partial "probe result=ok"
	# each one reached the proxy, named by keep's key (the store prefix removed)
	[ "$(proxy_log_count fault op=put key=a/b)" = 2 ]
	[ "$(proxy_log_count fault op=get key=a/b)" = 1 ]
	[ "$(proxy_log_count fault op=head key=a/b)" = 1 ]
	[ "$(proxy_log_count fault op=list key=a/)" = 1 ]
	[ "$(proxy_log_count fault op=del key=a/b)" = 1 ]
	[ "$(proxy_faults_count delay put)" -ge 6 ] # the probe's writes too
	# and it landed at the real server
	run -0 s3_direct keep-store list probe/
	[ -z "$output" ]
	stop_proxy
	refute_sanitizer_reports
}

@test "s3proxy: lease-write's renewals go over one kept-alive connection through the proxy" {
	start_proxy
	proxy_rule 'put nodes/ delay 0'
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	proxy_wait 15 5 fault action=delay op=put
	# the first write and every renewal after it: one client connection
	run -0 awk '$1 == "fault" { print $3 }' "$PROXY_LOG"
	[ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 1 ]
	run -0 lease-status --node-id n1
	run ! grep -qE '^(ran-out|lost|write-failed) ' "$BATS_TEST_TMPDIR/n1.out"
	stop_proxy
	refute_sanitizer_reports
}

@test "s3proxy: count=N fires N times, p= draws, the first rule that fires wins, the file is re-read when it changes" {
	start_proxy
	printf 'x' | s3_direct keep-store put k/a >/dev/null
	proxy_rule 'get k/ error 503 count=2' 'get k/ error 404'
	run -111 keep-store get k/a
	run -111 keep-store get k/a
	run -1 --separate-stderr keep-store get k/a # count used up: the next rule
	[[ "$stderr" == *"not found"* ]]
	[ "$(proxy_faults_count error get)" = 3 ]
	# p=0 never fires (the next rule does), p=1 always
	proxy_rule 'get k/ error 503 p=0' 'get k/ error 500 p=1'
	run -111 --separate-stderr keep-store get k/a
	[[ "$stderr" == *"500 InternalError"* ]]
	[ "$(proxy_log_count fault action=error arg=503)" = 2 ] # the first set's, not p=0
	# p=0.5: some of 40 fire, not all, not none
	proxy_rule 'get k/ error 503 p=0.5'
	hits=0
	for _ in $(seq 40); do
		if keep-store get k/a >/dev/null 2>&1; then :; else hits=$((hits + 1)); fi
	done
	[ "$hits" -gt 5 ]
	[ "$hits" -lt 35 ]
	[ "$(proxy_log_count fault action=error arg=503)" = $((hits + 2)) ]
	# a rule for another op or prefix does not apply; no rules: no faults
	proxy_rule 'put k/ drop' 'get other/ drop' 'list k/a drop'
	run -0 keep-store get k/a
	proxy_rule
	run -0 keep-store get k/a
	stop_proxy
}

@test "s3proxy: above=R answers 503 beyond R requests a second and forwards the rest" {
	start_proxy
	printf 'x' | s3_direct keep-store put k/a >/dev/null
	proxy_rule 'get k/ error 503 above=5'
	# 60 GETs from one curl process (one kept-alive connection): faster
	# than the rate, whatever the machine's load
	local cfg="$BATS_TEST_TMPDIR/curl.cfg" base=${STORE_URL#s3://} i t0 t
	: >"$cfg"
	for ((i = 0; i < 60; i++)); do
		printf 'url = "%s/%s/k/a"\noutput = "/dev/null"\n' "$PROXY_URL" "$base" >>"$cfg"
	done
	t0=$(now_ms)
	curl -sS -w '%{http_code}\n' -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
		--aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
		-K "$cfg" >"$BATS_TEST_TMPDIR/codes"
	t=$(( $(now_ms) - t0 ))
	ok=$(grep -c '^200$' "$BATS_TEST_TMPDIR/codes")
	slow=$(grep -c '^503$' "$BATS_TEST_TMPDIR/codes")
	[ $((ok + slow)) -eq 60 ]
	# the bucket starts full: the first 5 pass
	[ "$(head -n 5 "$BATS_TEST_TMPDIR/codes" | grep -c '^200$')" -eq 5 ]
	# never more than 5 + 5 a second of the run went through (t is
	# measured around the whole curl run, so the bound can only be loose)
	[ "$ok" -le $((5 + 5 * t / 1000 + 1)) ]
	[ "$(proxy_log_count fault action=error arg=503)" -eq "$slow" ]
	# 60 requests in under 10 s must meet the rate (5 + 50 < 60)
	[ "$t" -ge 10000 ] || [ "$slow" -ge 1 ]
	# the rule's tokens come back at 5 a second (a longer sleep on a
	# loaded machine only brings more)
	sleep 1.1
	run -0 keep-store get k/a
	stop_proxy
}

@test "s3proxy: a malformed rules file answers every request 400 InvalidFaultRule until it is fixed" {
	start_proxy
	printf 'x' | s3_direct keep-store put k/a >/dev/null
	printf '%s\n' 'get * lose' 'get * sometimes' >"$PROXY_RULES.tmp"
	mv "$PROXY_RULES.tmp" "$PROXY_RULES"
	run -1 --separate-stderr keep-store get k/a
	[[ "$stderr" == *"refused: 400 InvalidFaultRule"* ]]
	grep -q "^s3proxy: warning: bad fault rule line 2 in '$PROXY_RULES'" "$BATS_TEST_TMPDIR/proxy.err"
	proxy_rule
	run -0 keep-store get k/a
	[ "$output" = x ]
	stop_proxy
}

@test "s3proxy: a 3 MB PUT with Expect: 100-continue and chunked listings pass intact" {
	start_proxy
	head -c 3000000 /dev/urandom >"$BATS_TEST_TMPDIR/big"
	url="$PROXY_URL/$S3_BUCKET/${STORE_URL#s3://*/}/big"
	curl_s3() {
		curl -sS -m 60 --aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" \
			--user "$S3_ACCESS_KEY:$S3_SECRET_KEY" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
	}
	run -0 curl_s3 -v -o /dev/null -w '%{http_code}' -T "$BATS_TEST_TMPDIR/big" "$url"
	assert_output --partial "Expect: 100-continue"
	assert_output --partial "HTTP/1.1 100 Continue"
	[ "${lines[${#lines[@]} - 1]}" = 200 ]
	run -0 curl_s3 -o "$BATS_TEST_TMPDIR/big.back" "$url"
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/big.back"
	# RGW answers listings chunked: 300 keys, several pages, on one connection
	# (the keys written straight to the server by one curl, one connection:
	# 300 sanitizer-built keep-store starts took two minutes on CI)
	printf 'x' >"$BATS_TEST_TMPDIR/x"
	direct="$S3_ENDPOINT/$S3_BUCKET/${STORE_URL#s3://*/}"
	for i in $(seq -w 300); do
		printf 'upload-file = "%s"\nurl = "%s/l/%s"\noutput = "/dev/null"\n' \
			"$BATS_TEST_TMPDIR/x" "$direct" "$i"
	done >"$BATS_TEST_TMPDIR/puts"
	run -0 curl_s3 -f -K "$BATS_TEST_TMPDIR/puts" -w '%{http_code}\n'
	[ "$(grep -cx 200 <<<"$output")" -eq 300 ]
	proxy_rule 'list * delay 0'
	run -0 --separate-stderr keep-store list l/
	[ "${#lines[@]}" -eq 300 ]
	[ "$(awk '$1 == "fault" { print $3 }' "$PROXY_LOG" | sort -u | wc -l)" -eq 1 ]
	stop_proxy
	refute_sanitizer_reports
}

@test "s3proxy: SIGTERM with connections open (idle, held by hang, held late) exits 0 without a leak" {
	start_proxy
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	proxy_rule 'get h/ hang' 'put l/ late 60000'
	start_bg hung keep-store get h/x
	start_bg held keep-store put l/x </dev/null
	proxy_wait 10 2 fault
	t0=$(now_ms)
	stop_proxy
	# tolerance: it exits in well under a second; one that waited for the
	# requests it holds would take 60 s (late) or forever (hang)
	[ $(($(now_ms) - t0)) -lt 15000 ]
	# the late PUT was dropped with the proxy, never forwarded
	[ "$(proxy_log_count forwarded)" = 0 ]
	run -1 s3_direct keep-store stat l/x
	refute_sanitizer_reports
}
