#!/usr/bin/env bats
# How keep classifies what the network and the server answer (docs/store.md
# "Outcomes", docs/s3.md "Classification"), with the answers made by the
# S3 fault proxy in front of the real server and read by keep-store. S3
# pass only (tests/tools/s3proxy.c).

# run-all: sanitizers
load helpers/common

setup() {
	require_s3
	keep_setup
	printf 's3:\n  timeout_ms: 1000\n' >>"$KEEP_CONFIG"
	start_proxy
	printf 'old' | s3_direct keep-store put k/obj >/dev/null
	V=$(s3_direct keep-store stat k/obj | sed -n 's/.*version=\([^ ]*\).*/\1/p')
}
teardown() { keep_teardown; }

# answer_is RULE WANT_EXIT WANT_OUTCOME CMD... : with RULE (applied to the
# next request only), CMD exits WANT_EXIT and reports WANT_OUTCOME (on
# stdout for put/del, in the fatal line for get/list/stat)
answer_is() {
	local rule=$1 code=$2 want=$3
	shift 3
	proxy_rule "$rule count=1"
	run "-$code" --separate-stderr keep-store "$@" </dev/null
	if [ "$1" = put ] || [ "$1" = del ]; then
		[[ "$output" == *" outcome=$want"* ]] || { echo "$rule: $output"; return 1; }
	elif [ "$want" = not-found ]; then
		[[ "$stderr" == *": not found"* ]] || { echo "$rule: $stderr"; return 1; }
	else
		[[ "$stderr" == *"': $want: "* ]] || { echo "$rule: $stderr"; return 1; }
	fi
	[ "$(proxy_faults_count)" -ge 1 ]
	: >"$PROXY_LOG"
}

@test "proxy classify: PUT answers: 409/412 conflict, 404 conflict only under If-Match, other 4xx refused, 408/429/5xx ambiguous" {
	answer_is 'put k/ error 409' 1 conflict put k/new
	answer_is 'put k/ error 412' 1 conflict put k/obj --if-match "$V"
	answer_is 'put k/ error 404' 1 refused put k/new
	answer_is 'put k/ error 404' 1 conflict put k/obj --if-match "$V"
	answer_is 'put k/ error 404 code=NoSuchBucket' 1 refused put k/obj --if-match "$V"
	answer_is 'put k/ error 400' 1 refused put k/new
	answer_is 'put k/ error 403' 1 refused put k/new
	answer_is 'put k/ error 301' 1 refused put k/new
	answer_is 'put k/ error 408' 111 ambiguous put k/new
	answer_is 'put k/ error 429' 111 ambiguous put k/new
	answer_is 'put k/ error 500 code=UnknownError' 111 ambiguous put k/new
	answer_is 'put k/ error 503' 111 ambiguous put k/new
	# none of them reached the server
	run -1 s3_direct keep-store stat k/new
	run -0 s3_direct keep-store stat k/obj
	[ "$output" = "object key=k/obj version=$V" ]
	refute_sanitizer_reports
}

@test "proxy classify: GET, LIST and DELETE answers: 404 not found, 409/412 refused on reads and conflict on a delete, 5xx ambiguous" {
	answer_is 'get k/ error 404' 1 not-found get k/obj
	answer_is 'get k/ error 409' 1 refused get k/obj
	answer_is 'get k/ error 412' 1 refused get k/obj
	answer_is 'get k/ error 403' 1 refused get k/obj
	answer_is 'get k/ error 503' 111 ambiguous get k/obj
	answer_is 'head k/ error 500' 111 ambiguous stat k/obj
	answer_is 'list k/ error 503' 111 ambiguous list k/
	answer_is 'list k/ error 404 code=NoSuchBucket' 1 refused list k/
	answer_is 'list k/ error 409' 1 refused list k/
	answer_is 'del k/ error 409' 1 conflict del k/obj
	answer_is 'del k/ error 412' 1 conflict del k/obj --if-match "$V"
	answer_is 'del k/ error 404' 1 not-found del k/obj
	answer_is 'del k/ error 503' 111 ambiguous del k/obj
	run -0 s3_direct keep-store get k/obj
	[ "$output" = old ]
}

@test "proxy classify: a reset, a dropped or a lost reply, a 500 after landing and a hang are ambiguous for a PUT, landed or not" {
	for f in 'drop no' 'reset no' 'hang no' 'lose yes' 'reset-after yes' 'error-after 500 yes'; do
		action=${f% *} landed=${f##* }
		key="c/${action%% *}"
		proxy_rule "put c/ $action count=1"
		run -111 --separate-stderr keep-store put "$key" <<<"$action"
		[ "$output" = "put key=$key outcome=ambiguous version=-" ] || { echo "$action: $output"; false; }
		case $action in reset*) [[ "$stderr" == *"reset by peer"* ]] ;; esac
		if [ "$landed" = yes ]; then
			run -0 s3_direct keep-store get "$key"
			[ "$output" = "$action" ]
		else
			run -1 s3_direct keep-store stat "$key"
		fi
	done
	[ "$(proxy_faults_count)" = 6 ]
	[ "$(proxy_log_count forwarded status=200)" = 3 ]
	stop_proxy
	refute_sanitizer_reports
}

@test "proxy classify: a read whose connection is reset is retried once (s3.c), a second reset is ambiguous" {
	proxy_rule 'get k/ reset count=1'
	run -0 keep-store get k/obj
	[ "$output" = old ]
	[ "$(proxy_faults_count reset get)" = 1 ]
	proxy_rule 'get k/ reset count=2'
	run -111 --separate-stderr keep-store get k/obj
	[[ "$stderr" == *"': ambiguous: "*"reset by peer"* ]]
	[ "$(proxy_faults_count reset get)" = 3 ]
	stop_proxy
	refute_sanitizer_reports
}
