#!/usr/bin/env bats
# --version on every command and keep-agent, from the one version string
# (the file VERSION, lib/platform/version.h), which also dates the software line of
# nodes/<id>; and the umbrella command keep (cmd/keep.c): its short names,
# keep help, keep init (a fresh bucket made native, with upgrade-mark
# native's refusals). Runs on the fs store and on a real S3 server
# (keep init and the software line touch the store).

load helpers/common

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	keep_setup
	VERSION=$(cat "$ROOT/VERSION")
}
teardown() { keep_teardown; }

@test "version: every command and keep-agent print the one version; lease-write writes it into nodes/<id>" {
	[ -n "$VERSION" ]
	for c in "$ROOT"/cmd/*.c keep-agent; do
		c=${c##*/}
		c=${c%.c}
		run -0 --separate-stderr "$c" --version
		[ "$output" = "$c (keep) $VERSION" ] || { echo "$c: $output"; false; }
		[ -z "$stderr" ]
	done
	start_bg n1 lease-write --node-id n1
	wait_line 20 n1 '^live '
	run -0 keep-store get nodes/n1
	assert_line "software keep/$VERSION"
	refute_sanitizer_reports
}

@test "keep: short names run the programs, with their output, exit codes and flags" {
	run -0 --separate-stderr keep help
	assert_line --index 0 "usage: keep COMMAND [ARGS...]"
	assert_line --regexp '^  fence +lease-fence: '
	run -0 --separate-stderr keep help fence
	[ "$output" = "$(lease-fence -h)" ]
	run -0 --separate-stderr keep --version
	[ "$output" = "keep (keep) $VERSION" ]
	# keep fence is lease-fence, its refusal and --create included
	run -1 --separate-stderr keep fence n7
	[ "$output" = "refused node=n7 instance=- written_at_ms=- reason=absent" ]
	[[ "$stderr" == "lease-fence: fatal: nodes/n7 does not exist"* ]]
	run -0 --separate-stderr keep fence --create n7
	assert_output --regexp '^fenced node=n7 instance=- '
	run -0 --separate-stderr keep nodes
	assert_output --regexp '^node id=n7 state=fenced '
	run -0 --separate-stderr keep lease-fence --create n8 # a full name works too
	run -0 --separate-stderr keep forget n8
	assert_output --regexp '^forgot node=n8 format=3 '
	run -15 --separate-stderr keep status --node-id n1
	assert_line --regexp '^status node=n1 ready=no '
	run -0 --separate-stderr keep check --node-id n1
	[ "$output" = "configuration OK" ]
	# an unknown name, options before the name, nothing at all: 100, why and the synopsis
	run -100 --separate-stderr keep frob
	[ "${stderr_lines[0]}" = "keep: fatal: unknown command 'frob' (\`keep help\` lists them)" ]
	[ "${stderr_lines[1]}" = "keep: info: usage: keep COMMAND [ARGS...] (\`keep -h\` prints the whole usage)" ]
	run -100 --separate-stderr keep --node-id n1 status
	run -100 --separate-stderr keep
	run -100 --separate-stderr keep help frob
	# a program keep cannot find (not in KEEP_BINDIR, not beside keep, not
	# in PATH): 111, naming it
	mkdir "$BATS_TEST_TMPDIR/alone"
	cp "$KEEP_BINDIR/keep" "$BATS_TEST_TMPDIR/alone/keep"
	KEEP_BINDIR=/nonexistent PATH=/usr/bin:/bin run -111 --separate-stderr "$BATS_TEST_TMPDIR/alone/keep" fence n1
	[[ "$stderr" == "keep: fatal: unable to run lease-fence: "*"(set KEEP_BINDIR)" ]]
	refute_sanitizer_reports
}

@test "keep init: a fresh bucket becomes native (first acquisitions skip the upgrade marker)" {
	run -0 --separate-stderr keep init
	assert_output --regexp '^native written_at_ms=[0-9]+ action=created$'
	run -0 --separate-stderr keep init
	assert_output --regexp '^native written_at_ms=[0-9]+ action=existing$'
	# a native cluster's first acquisition: no leases/ marker written
	start_bg n1 lease-write --node-id n1
	wait_line 30 n1 '^live '
	run -0 owner-acquire --node-id n1 t/c/a
	run -0 keep-store list leases/
	[ -z "$output" ]
	refute_sanitizer_reports
}

@test "keep init: a bucket that held per-actor leases is refused as upgrade-mark native refuses it, nothing written" {
	printf 'wasmkeep-lease 1\nnode old1\ngeneration 3\nexpires_at_ms 1\n' | keep-store put leases/t/c/z >/dev/null
	run -1 --separate-stderr keep init
	[ "$output" = "refused reason=old-objects key=leases/t/c/z" ]
	[[ "$stderr" == *"leases/ holds objects: this cluster ran per-actor leases"* ]]
	run -1 keep-store stat cluster
	refute_sanitizer_reports
}
