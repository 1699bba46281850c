#!/usr/bin/env bats
# Several applications on one cluster (ADR 0022, issue 27): an application
# root's ownership records and lease markers live under apps/ROOT/, nodes/
# and the cluster object are shared; owner-* take --app ROOT, keep-agent
# drains and resolves every root of `apps:`. Two roots never see each
# other's records; no --app is today's layout.
# Runs on the fs store and on a real S3 server (KEEP_TEST_STORE).
# Timings (ms): ttl 3000, grace 1500, safety 600, skew 300, period 1000.

load helpers/common
load helpers/owner
load helpers/agent

setup() { keep_setup; }
teardown() { keep_teardown; }

# keys PREFIX: the keys of the bucket under PREFIX, one a line
keys() { keep-store list "$1" | sed -n 's/^object key=\([^ ]*\) .*/\1/p'; }
# state_of ROOT KEY: the state= of owner-show (ROOT "" is the default root)
state_of() {
	if [ -n "$1" ]; then
		owner-show --app "$1" "$2" | sed -n 's/.* state=\([^ ]*\).*/\1/p'
	else
		owner-show "$2" | sed -n 's/.* state=\([^ ]*\).*/\1/p'
	fi
}
state_is() { [ "$(state_of "$1" "$2")" = "$3" ]; }
# with_apps ROOT...: `apps:` in the test's configuration
with_apps() {
	local IFS=,
	echo "apps: [$*]" >>"$KEEP_CONFIG"
}

@test "apps: the same actor in two roots is two records, each with its own generation; a release in one leaves the other" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 1 ]
	run -0 owner-release --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 t/c/a
	[ "$(field generation)" = 2 ]
	run -0 owner-acquire --node-id n1 --app billing t/c/a
	[[ "$output" =~ ^acquired\ key=t/c/a\ generation=1\ version=[^\ ]+\ new=yes$ ]]
	# the keys: the default root's where they always were, billing's under apps/billing/
	run -0 keep-store get owners/t/c/a
	[ "${lines[2]}" = "generation 2" ]
	run -0 keep-store get apps/billing/owners/t/c/a
	[ "${lines[2]}" = "generation 1" ]
	# its hold is its own: checked per root
	run -0 owner-check --node-id n1 --app billing t/c/a 1
	run -1 owner-check --node-id n1 t/c/a 1
	[ "$output" = "check key=t/c/a generation=1 ok=no reason=other-generation" ]
	[ -n "$(ls "$STATE_DIR/n1/holds/apps/billing")" ]
	# a release in billing leaves the default root's record held
	run -0 owner-release --node-id n1 --app billing t/c/a
	[ "$output" = "released key=t/c/a generation=1" ]
	state_is billing t/c/a nobody
	state_is "" t/c/a held
	run -0 owner-check --node-id n1 t/c/a 2
	# and the other way round
	run -0 owner-acquire --node-id n1 --app billing t/c/a
	[ "$(field generation)" = 2 ]
	run -0 owner-release --node-id n1 t/c/a
	state_is "" t/c/a nobody
	state_is billing t/c/a held
	refute_sanitizer_reports
}

@test "apps: owner-show and owner-watch of one root never list the other's records" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 t/c/only-default
	run -0 owner-acquire --node-id n1 --app billing t/c/only-billing
	run -0 owner-acquire --node-id n1 --app search t/c/only-search
	run -0 owner-watch --once
	[ "$output" = "$(printf '%s\n' "$output" | grep '^owner key=t/c/only-default ')" ]
	run -0 owner-watch --once --app billing
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "owner key=t/c/only-billing state=held node=n1 "* ]]
	run -0 owner-watch --once --app search t/c/
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "owner key=t/c/only-search state=held node=n1 "* ]]
	run -0 owner-show --app billing t/c/only-default
	[ "$output" = "owner key=t/c/only-default state=absent node=- instance=- generation=- holder=- free=yes" ]
	run -0 owner-show t/c/only-billing
	[ "$output" = "owner key=t/c/only-billing state=absent node=- instance=- generation=- holder=- free=yes" ]
	# a follower of billing reports billing's changes only
	start_bg watch owner-watch --follow --app billing
	wait_line 20 watch '^synced keys=1$'
	run -0 owner-acquire --node-id n1 t/c/later-default
	run -0 owner-acquire --node-id n1 --app billing t/c/later-billing
	wait_line 20 watch '^acquired key=t/c/later-billing node=n1 '
	run -1 grep -c 'later-default\|only-default\|only-search' "$BATS_TEST_TMPDIR/watch.out"
	[ "$output" = 0 ]
	refute_sanitizer_reports
}

@test "apps: --app with a bad root, or a bad apps: list, is refused with one line (100) and changes nothing" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 --app billing t/c/a
	# every key and version but the node leases' (renewed meanwhile)
	before=$(keep-store list "" | grep -v ' key=nodes/' | sort)
	for bad in Billing -x 'a/b' '..' '' a.b "$(printf 'x%.0s' $(seq 1 33))"; do
		run -100 --separate-stderr owner-acquire --node-id n1 --app "$bad" t/c/a
		[ -z "$output" ]
		[ "$(printf '%s\n' "$stderr" | grep -c 'fatal: ')" = 1 ]
		[[ "$stderr" == *"--app '$bad' is not a valid application root"* ]]
		run -100 owner-release --node-id n1 --app "$bad" --all
		run -100 owner-show --app "$bad" t/c/a
		run -100 owner-watch --once --app "$bad"
		run -100 owner-run --node-id n1 --app "$bad" t/c/a -- true
		run -100 owner-check --node-id n1 --app "$bad" t/c/a 1
		run -100 owner-commit --node-id n1 --app "$bad" --claim t/c/a 1 o
	done
	# nodes/ is every root's: node-watch takes no --app
	run -100 --separate-stderr node-watch --once --app billing
	[[ "$stderr" == *"--app: nodes/ is shared by every application root"* ]]
	[ "$(keep-store list "" | grep -v ' key=nodes/' | sort)" = "$before" ]
	[ ! -e "$STATE_DIR/n1/holds/apps/Billing" ]
	# the configuration's apps: is checked line by line
	cp "$KEEP_CONFIG" "$BATS_TEST_TMPDIR/good.yaml"
	echo 'apps: [billing, Search]' >>"$KEEP_CONFIG"
	run -100 --separate-stderr lease-status --node-id n1 --paths
	[[ "$stderr" == *"keep.yaml:9: 'apps': 'Search' is not a valid application root"* ]]
	cp "$BATS_TEST_TMPDIR/good.yaml" "$KEEP_CONFIG"
	echo 'apps: [billing, billing]' >>"$KEEP_CONFIG"
	run -100 --separate-stderr lease-status --node-id n1 --paths
	[[ "$stderr" == *"'apps': 'billing' is listed twice"* ]]
	cp "$BATS_TEST_TMPDIR/good.yaml" "$KEEP_CONFIG"
	echo 'apps: billing' >>"$KEEP_CONFIG"
	run -100 --separate-stderr lease-status --node-id n1 --paths
	[[ "$stderr" == *"'apps' must be a list of application roots"* ]]
	cp "$BATS_TEST_TMPDIR/good.yaml" "$KEEP_CONFIG"
	[ "$(keep-store list "" | grep -v ' key=nodes/' | sort)" = "$before" ]
	refute_sanitizer_reports
}

@test "apps: the default root is today's layout: a record at owners/KEY is read and taken without --app, and no root sees it" {
	start_node n1 n1
	# a record written at today's key (by this keep without --app, as any
	# existing cluster holds them)
	run -0 owner-acquire --node-id n1 t/c/old
	run -0 keep-store stat owners/t/c/old
	run -0 owner-release --node-id n1 t/c/old
	# nothing of it under apps/
	[ -z "$(keys apps/)" ]
	run -0 owner-show t/c/old
	[ "$output" = "owner key=t/c/old state=nobody node=- instance=- generation=1 holder=- free=yes" ]
	run -0 owner-acquire --node-id n1 t/c/old
	[ "$(field generation)" = 2 ]
	run -0 owner-show --app billing t/c/old
	[ "$output" = "owner key=t/c/old state=absent node=- instance=- generation=- holder=- free=yes" ]
	# the holds of the default root are where they always were
	[ -n "$(find "$STATE_DIR/n1/holds" -maxdepth 1 -type f)" ]
	[ ! -e "$STATE_DIR/n1/holds/apps" ]
	refute_sanitizer_reports
}

@test "apps: keep-agent drains every root of apps: on a clean stop; each root's resolver writes its own metrics" {
	with_apps billing search
	mkdir "$BATS_TEST_TMPDIR/m"
	printf 'metrics:\n  textfile: %s\n' "$BATS_TEST_TMPDIR/m/keep.prom" >>"$KEEP_CONFIG"
	run -0 lease-status --node-id n1 --paths
	assert_line "apps billing search"
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	# a resolver per root, each with its file and its app label
	grep -q 'resolvers of the application roots (billing search)' "$BATS_TEST_TMPDIR/agent.err"
	wait_for 20 test -s "$BATS_TEST_TMPDIR/m/keep.owner-release.billing.prom"
	wait_for 20 test -s "$BATS_TEST_TMPDIR/m/keep.owner-release.search.prom"
	wait_for 20 test -s "$BATS_TEST_TMPDIR/m/keep.owner-release.prom"
	grep -q '^keep_holds{node="n1",app="billing"} ' "$BATS_TEST_TMPDIR/m/keep.owner-release.billing.prom"
	grep -q '^keep_holds{node="n1"} ' "$BATS_TEST_TMPDIR/m/keep.owner-release.prom"
	run -1 grep -c 'app=' "$BATS_TEST_TMPDIR/m/keep.owner-release.prom"
	[ "$output" = 0 ]
	if command -v promtool >/dev/null; then
		promtool check metrics <"$BATS_TEST_TMPDIR/m/keep.owner-release.billing.prom"
	fi
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 --app billing t/c/a t/c/b
	run -0 owner-acquire --node-id n1 --app search t/c/a
	kill -TERM "$(bg_pid agent)"
	run wait_exit 30 agent
	[ "$output" = 0 ]
	state_is "" t/c/a nobody
	state_is billing t/c/a nobody
	state_is billing t/c/b nobody
	state_is search t/c/a nobody
	node_state n1 released
	run -1 grep 'drain.*incomplete' "$BATS_TEST_TMPDIR/agent.err"
	refute_sanitizer_reports
}

@test "apps: after a fence, a node's actors in every root move to another node" {
	with_apps billing
	start_bg agent keep-agent --node-id n1
	wait_for 30 keep-agent status --node-id n1
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 owner-acquire --node-id n1 --app billing t/c/a
	start_node n2 n2
	run -1 owner-acquire --node-id n2 --app billing t/c/a
	hand_fence n1
	run wait_exit 15 agent
	[ "$output" = 10 ]
	# n1's records in both roots free ttl + grace after its last lease
	# write (free_at_ms): n2 waits for that and takes both at new generations
	run -0 --separate-stderr owner-acquire --node-id n2 --wait=60s t/c/a
	assert_line --regexp '^acquired key=t/c/a generation=2 '
	run -0 --separate-stderr owner-acquire --node-id n2 --app billing --wait=60s t/c/a
	assert_line --regexp '^acquired key=t/c/a generation=2 '
	run -0 owner-show --app billing t/c/a
	[[ "$output" == "owner key=t/c/a state=held node=n2 "* ]]
	refute_sanitizer_reports
}

@test "apps: owner-commit in a root writes its objects under apps/ROOT/; the default root may not write under apps/" {
	start_node n1 n1
	run -0 owner-acquire --node-id n1 --app billing t/c/a
	echo data >"$BATS_TEST_TMPDIR/d"
	run -0 owner-commit --node-id n1 --app billing t/c/a 1 app/state <"$BATS_TEST_TMPDIR/d"
	run -0 keep-store stat apps/billing/app/state
	run -1 keep-store stat app/state
	run -0 --separate-stderr owner-commit --app billing --get app/state
	[ "$output" = data ]
	run -1 owner-commit --get app/state
	# the default root's holder may not reach into a root by the key
	run -0 owner-acquire --node-id n1 t/c/a
	run -100 --separate-stderr owner-commit --node-id n1 t/c/a 1 apps/billing/app/state <"$BATS_TEST_TMPDIR/d"
	[[ "$stderr" == *"is under one of keep's own names (nodes, owners, leases, wal, snapshot, probe, cluster, apps)"* ]]
	run -0 --separate-stderr owner-commit --app billing --get app/state
	[ "$output" = data ]
	refute_sanitizer_reports
}

@test "apps: upgrade-mark forget keeps a created fence that a record of any root names, and says it read the roots" {
	inst=0123456789abcdef0123456789abcdef
	run -0 lease-fence --create n9
	run -0 lease-fence --create n8
	printf 'wasmkeep-owner 1\nheld n9 %s\ngeneration 1\n' "$inst" |
		keep-store put apps/billing/owners/t/c/z --if-none-match
	printf 'wasmkeep-owner 1\nheld n8 %s\ngeneration 1\n' "$inst" |
		keep-store put apps/search/owners/t/c/y --if-none-match
	run -1 --separate-stderr upgrade-mark forget n9
	[ "$output" = "kept node=n9 reason=named key=t/c/z app=billing" ]
	run -0 keep-store stat nodes/n9
	# n8: named in search only; once search's record no longer names it, it goes
	run -1 --separate-stderr upgrade-mark forget n8
	[ "$output" = "kept node=n8 reason=named key=t/c/y app=search" ]
	printf 'wasmkeep-owner 1\nnobody\ngeneration 1\n' |
		keep-store put apps/search/owners/t/c/y --if-match "$(keep-store stat apps/search/owners/t/c/y | sed 's/.* version=//')"
	run -0 --separate-stderr upgrade-mark forget n8
	assert_output --regexp '^forgot node=n8 format=3 written_at_ms=[0-9]+ checked_records=2$'
	[[ "$stderr" == *"none of the 2 ownership records under owners/ and the application roots' apps/ROOT/owners/ names n8: removing it"* ]]
	run -1 keep-store stat nodes/n8
	refute_sanitizer_reports
}

@test "apps: lease-write's own stop ends an orphaned job of an application root before it writes released" {
	with_apps billing
	# the worker: a child of CMD (CMD dies with owner-run, the worker runs on
	# holding the root's run lock), its pid in wpid
	printf '#!/bin/sh\necho $$ >"$1"\nwhile :; do sleep 1 & wait; done\n' >"$BATS_TEST_TMPDIR/worker"
	chmod +x "$BATS_TEST_TMPDIR/worker"
	start_bg agent keep-agent --node-id n1
	wait_line 30 agent '^live '
	start_bg r owner-run --node-id n1 --app billing t/c/job -- \
		sh -c '"$0" "$1"; true' "$BATS_TEST_TMPDIR/worker" "$BATS_TEST_TMPDIR/wpid"
	wait_for 10 test -s "$BATS_TEST_TMPDIR/wpid"
	worker=$(cat "$BATS_TEST_TMPDIR/wpid")
	# the root's run lock, where the root's files are
	[ -n "$(ls "$STATE_DIR/n1/runs/apps/billing")" ]
	kill -KILL "$(bg_pid agent)" "$(bg_pid r)"
	# lease-write's released shows on the agent's stdout (lease-write's
	# too): the worker must be gone by then
	wait_line 20 agent '^released node=n1 '
	run -0 refute_alive "$worker"
	run -0 grep -q '^released ' <(keep-store get nodes/n1)
	refute_sanitizer_reports
}
