#!/usr/bin/env bats
# keep-sim: the simulator of node leases and ownership (docs/testing.md
# "Simulator"): it drives lib/core's machines, the ownership ones included.
# No store and no config: the simulator brings its own bucket and clocks.

load helpers/common

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
}

# sim_check ARGS... : keep-sim of the release build (make check builds it
# beside the sanitizer one) when no source of it is newer than it, else
# the sanitizer build's. The check is CPU-bound: 55 s of CPU under
# ASan+UBSan, 7 s optimised, while the rest of the suite runs beside it;
# the sanitizer build plays seeds of its own in the next test.
sim_check() {
	local rel="${KEEP_BINDIR%/*/bin}/rel/bin/keep-sim" root="$BATS_TEST_DIRNAME/../.."
	if [ -x "$rel" ] && [ -z "$(find "$root/sim" "$root/lib" -newer "$rel" -name '*.[ch]' | head -n 1)" ]; then
		echo "# keep-sim: $rel" >&3
		"$rel" "$@"
	else
		echo "# keep-sim: $(command -v keep-sim) (the release build's is missing or older than a source)" >&3
		keep-sim "$@"
	fi
}

@test "keep-sim --check: the real model passes, every broken model is caught" {
	run -0 --separate-stderr sim_check --check
	assert_line --regexp '^ok 1 - real model: [0-9]+ seeds, no violation$'
	assert_line --regexp '^ok [0-9]+ - broken unconditional-fence caught at seed [0-9]+$'
	assert_line --regexp '^ok [0-9]+ - broken reuse-generation caught at seed [0-9]+$'
	assert_line --regexp '^ok [0-9]+ - broken adopt-any-instance caught at seed [0-9]+$'
	assert_line --regexp '^ok [0-9]+ - broken validity-from-reply caught at seed [0-9]+$'
	assert_line --regexp '^ok [0-9]+ - broken no-actor-lock caught at seed [0-9]+$'
	assert_line --regexp '^ok [0-9]+ - broken trust-pre-lapse-write caught at seed [0-9]+$'
	assert_line --regexp '^ok [0-9]+ - broken no-start-wait caught at seed [0-9]+$'
	# the ownership machines' rules (issues 14 and 18)
	for m in resolver-gives-up drain-ignores-deadline seed-without-marker \
		release-with-hold-left grant-ignores-pending unsynced-hold-as-failed \
		fence-without-rewatch; do
		assert_line --regexp "^ok [0-9]+ - broken $m caught at seed [0-9]+\$"
	done
	# host events: wall-clock steps judged without the offset, or not noticed
	for m in judge-without-offset ignore-steps; do
		assert_line --regexp "^ok [0-9]+ - broken $m caught at seed [0-9]+\$"
	done
	# the fenced commit (issue 26): its PUT without its condition, the fence
	# in metadata only (S3's version token covers the body alone)
	for m in commit-without-condition fence-in-metadata-only; do
		assert_line --regexp "^ok [0-9]+ - broken $m caught at seed [0-9]+\$"
	done
	assert_line --regexp '^# acquisitions=[0-9]+ fences=[0-9]+ lost=[0-9]+ commits=[1-9][0-9]* steps=[0-9]+$'
	# the jobs of a key (issue 24): a release, released or a new instance's
	# first write that does not wait for them
	for m in release-ignores-job lease-ignores-jobs; do
		assert_line --regexp "^ok [0-9]+ - broken $m caught at seed [0-9]+\$"
	done
	# the fencer machine (lib/core/fencer.c) driven by the sim: a read-back
	# after an ambiguous fence write that takes the unchanged live object
	# for the fence reports a fence that never reached the bucket
	assert_line --regexp '^ok [0-9]+ - broken fence-readback-takes-live caught at seed [0-9]+$'
	refute_line --regexp '^not ok'
	assert_line --regexp '^1\.\.[0-9]+$'
}

@test "keep-sim under ASan+UBSan: 40 seeds of the real model, no violation, no sanitizer report" {
	run -0 --separate-stderr keep-sim --seeds 40
	assert_line --regexp '^sim model=real seeds=40 acquisitions=[1-9][0-9]* .*violations=0$'
	[ -z "$stderr" ]
}

@test "keep-sim: a seed replays bit for bit" {
	run -0 --separate-stderr keep-sim --seed 17 --verbose
	first=$output
	[ "${#first}" -gt 1000 ]
	run -0 --separate-stderr keep-sim --seed 17 --verbose
	[ "$output" = "$first" ]
	assert_line --regexp '^sim model=real seed=17 acquisitions=[0-9]+ fences=[0-9]+ lost=[0-9]+ violations=0$'
}

@test "keep-sim: the trace shows the ownership machines at work (lib/core/acquire.c, resolver.c)" {
	run -0 --separate-stderr keep-sim --seed 17 --verbose
	# the reason keep_owner_acq_on_record / _on_node gave for each record write
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ acquire a[0-9]+ gen 1 if-none-match +\(absent\)$'
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ acquire a[0-9]+ gen [0-9]+ if-match "[^"]+" \(nobody\)$'
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ acquire a[0-9]+: same hold gen [0-9]+$'
	# the marker before the first record, and its confirmation after
	assert_line --regexp '^t=[0-9]+ bucket put leases/a[0-9]+ from n[0-9]+\.[0-9]+/fg -> ok '
	# a foreground release and the resolver's events
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ hibernates a[0-9]+$'
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ fg: released a[0-9]+ gen [0-9]+$'
}

@test "keep-sim: the trace shows the fenced commit at work (lib/core/commit.c)" {
	run -0 --separate-stderr keep-sim --seed 17 --verbose
	# a claim at each generation held, then commits, some of the same bytes
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ claims app/a[0-9]+ gen [0-9]+$'
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ commits app/a[0-9]+ gen [0-9]+ \(the same bytes\)$'
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ commit app/a[0-9]+ gen [0-9]+: committed "[0-9a-f]+"$'
	# S3's tokens: a hash of the body, so one body read twice has one version
	assert_line --regexp '^t=[0-9]+ bucket put app/a[0-9]+ from n[0-9]+\.[0-9]+/commit -> ok "[0-9a-f]{32}"$'
}

@test "keep-sim: a straggler's commit landing after a later generation's is a violation" {
	# the first seeds, not one pinned: any change of the simulated world
	# moves which seed shows it (keep-sim --check searches further)
	run -1 --separate-stderr keep-sim --seeds 10 --broken fence-in-metadata-only
	assert_line --regexp '^seed [0-9]+: model=fence-in-metadata-only violation at t=[0-9]+ms: app/a[0-9]+: a write fenced at generation [0-9]+ by n[0-9.]+ landed after one at generation [0-9]+ by n[0-9.]+$'
}

@test "keep-sim: peers and the operator fence through the fencer machine (lib/core/fencer.c)" {
	run -0 --separate-stderr keep-sim --seed 26 --verbose
	# peers and the operator run lease-fence's machine: its answer lines
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ lease-fence: fenced node=n[0-9]+ free_at_ms=[0-9]+ reason=-$'
	assert_line --regexp '^t=[0-9]+ operator: lease-fence (--create )?n[0-9]+ exits 0$'
	# a fence whose reply was lost, found landed by the machine's re-read
	assert_line --regexp '^t=[0-9]+ n[0-9]+\.[0-9]+ lease-fence: fenced node=n[0-9]+ free_at_ms=[0-9]+ reason=landed$'
	# a read-back that takes the unchanged live object for its fence
	run -1 --separate-stderr keep-sim --seeds 10 --broken fence-readback-takes-live
	assert_line --regexp '^seed [0-9]+: model=fence-readback-takes-live violation at t=[0-9]+ms: n[0-9.]+ reports its fence of nodes/n[0-9]+ landed, but that write never reached the bucket$'
}

@test "keep-sim: a caught seed prints itself and its replay command" {
	run -1 --separate-stderr keep-sim --seeds 3 --broken reuse-generation
	assert_line --regexp '^seed 0: model=reuse-generation violation at t=[0-9]+ms: generation [0-9]+ of a[0-9]+ held twice'
	assert_line 'replay: keep-sim --seed 0 --broken reuse-generation --verbose'
	assert_line --regexp '^sim model=reuse-generation seeds=3 acquisitions=[0-9]+ fences=[0-9]+ lost=[0-9]+ violations=[1-3]$'
	run -1 --separate-stderr keep-sim --seed 0 --broken reuse-generation --verbose
	assert_line --regexp '^t=[0-9]+ VIOLATION generation'
}

@test "keep-sim: the summary line of the real model" {
	run -0 --separate-stderr keep-sim --seeds 5
	assert_output --regexp '^sim model=real seeds=5 acquisitions=[0-9]+ fences=[0-9]+ lost=[0-9]+ violations=0$'
}

@test "keep-sim: usage errors exit 100" {
	run -100 --separate-stderr keep-sim --broken no-such-model
	run -100 --separate-stderr keep-sim --seeds x
	run -100 --separate-stderr keep-sim --check --seed 3
	run -0 --separate-stderr keep-sim -h
	assert_line --partial 'usage: keep-sim'
}
