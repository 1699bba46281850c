#!/usr/bin/env bats
# keep-sim --scale: the request-accounting model (issue 28 item 1;
# docs/scale.md, docs/testing.md "The scale model"). N lease machines and
# node-watch | lease-fence pipelines on lib/core against a counting bucket:
# what the protocol asks of the store per node and period, and one node's
# death to its fence, on the model's clock. No store and no config.

load helpers/common

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
}

# scale_model ARGS... : keep-sim of the release build when no source of it
# is newer than it (as 0900's sim_check: N = 1,000 is 5 s of CPU
# optimised, 28 s and 860 MB under ASan+UBSan), else the sanitizer
# build's.
scale_model() {
	local rel="${KEEP_BINDIR%/*/bin}/rel/bin/keep-sim" root="$BATS_TEST_DIRNAME/../.."
	if [ -x "$rel" ] && [ -z "$(find "$root/sim" "$root/lib" -newer "$rel" -name '*.[ch]' | head -n 1)" ]; then
		echo "# keep-sim: $rel" >&3
		"$rel" "$@"
	else
		echo "# keep-sim: $(command -v keep-sim) (the release build's is missing or older than a source)" >&3
		keep-sim "$@"
	fi
}

# field NAME : the value of NAME=... on the scale-model line in $output
field() {
	printf '%s\n' "$output" | awk -v k="$1" '/^scale-model /{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}

# within V LO HI : LO <= V <= HI (decimals)
within() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo + 0 && v + 0 <= hi + 0) }'
}

@test "keep-sim --scale 20: 1 PUT, 1 LIST page per node and period; the dead node fenced at its floor" {
	# the sanitizer build: 20 nodes are well under a second of CPU
	run -0 keep-sim --scale 20
	assert_output --regexp '^scale-model mode=full nodes=20 played=20 periods=10 period_ms=3000 jitter_ms=20 '
	# one renewal a write period (ADR 0020 §1: write_every = min(period,
	# ttl/3) = 3000 ms from the previous send): per 3000 ms counted, 1 less
	# the lateness of the wake-ups (0..20 ms each, 10 on average: 0.3 %)
	within "$(field put_per_node_period)" 0.98 1.0
	# one listing a period, ceil(20 / 1000) = 1 page, 20 keys
	within "$(field list_pages_per_node_period)" 0.98 1.0
	within "$(field keys_listed_per_node_period)" 19.6 20
	# bodies read only when a listing fell between two writes of a peer
	# (lib/core/listing.c): a few hundredths a node at N = 20, as measured
	# by bench/requests.sh (docs/performance.md: 0.00 to 0.07)
	within "$(field get_per_node_period)" 0 0.1
	within "$(field requests_per_node_period)" 1.96 2.1
	# the fence: never before the floor (the dead node's last written_at +
	# ttl + grace, ADR 0020 §2), and at it: lease-fence's not-yet decides
	# again at free_at + 1 ms, woken up to jitter_ms (20) late
	within "$(field over_floor_ms)" 1 21
	# the kill comes at a random phase after the last write: within
	# ttl + grace (15000 ms) + 1 + 20 of the death
	within "$(field death_to_fence_ms)" 1 15021
	[ "$(field fences_landed)" = 1 ]
	# every other node watched it and raced to fence it
	[ "$(field fencers)" = 19 ]
	# no live node was ever a candidate once every watch had started
	[ "$(field false_candidates)" = 0 ]
}

@test "keep-sim --scale 2500 --sample 4: ceil(N / 1000) LIST pages a node and period, every lease played" {
	run -0 keep-sim --scale 2500 --sample 4 --periods 3
	assert_output --regexp '^scale-model mode=full nodes=2500 played=4 periods=3 '
	within "$(field list_pages_per_node_period)" 2.94 3.0
	within "$(field keys_listed_per_node_period)" 2450 2500
	within "$(field put_per_node_period)" 0.98 1.0
	within "$(field over_floor_ms)" 1 21
	[ "$(field fences_landed)" = 1 ]
	# the sample's 4 watches race; the 2496 others are not played
	[ "$(field fencers)" = 4 ]
	[ "$(field false_candidates)" = 0 ]
}

@test "keep-sim --scale: bad arguments get one line and exit 100" {
	run -100 --separate-stderr keep-sim --scale 1
	[ "${stderr_lines[0]}" = "keep-sim: --scale needs a number of nodes, 2 to 100000" ]
	run -100 --separate-stderr keep-sim --scale 100001
	[ "${stderr_lines[0]}" = "keep-sim: --scale needs a number of nodes, 2 to 100000" ]
	run -100 --separate-stderr keep-sim --periods 5
	[ "${stderr_lines[0]}" = "keep-sim: --periods, --sample, --jitter-ms, --mode, --successors, --full-every and --kill-watchers need --scale" ]
	run -100 --separate-stderr keep-sim --scale 10 --mode rung
	[ "${stderr_lines[0]}" = "keep-sim: --mode needs a known watch mode: full, ring" ]
	run -100 --separate-stderr keep-sim --scale 10 --successors 2
	[ "${stderr_lines[0]}" = "keep-sim: --successors, --full-every and --kill-watchers need --mode ring" ]
	run -100 --separate-stderr keep-sim --scale 10 --mode ring --successors 17
	[ "${stderr_lines[0]}" = "keep-sim: --successors needs a number, 1 to 16" ]
	run -100 --separate-stderr keep-sim --scale 10 --mode ring --full-every 1
	[ "${stderr_lines[0]}" = "keep-sim: --full-every needs a number, 2 to 100" ]
	run -100 --separate-stderr keep-sim --scale 10 --check
	[ "${stderr_lines[0]}" = "keep-sim: --scale takes no --check, --broken, --verbose or --seeds" ]
}

# doc_row N MODE : the docs/scale.md row for N nodes in MODE: its cells,
# "|"-separated, trimmed
doc_row() {
	awk -F'|' -v n="$1" -v m="$2" '$2 ~ "^ *" n " *$" && $3 ~ "^ *" m " *$" {
		for (i = 2; i < NF; i++) { gsub(/^ +| +$/, "", $i); printf "%s%s", (i > 2 ? "|" : ""), $i }
		print ""; exit }' "$BATS_TEST_DIRNAME/../../docs/scale.md"
}

@test "docs/scale.md: the table's row and the recorded line at N = 1,000 are the model's output" {
	run -0 scale_model --scale 1000
	line=$(printf '%s\n' "$output" | grep '^scale-model ')
	# the recorded line, verbatim
	run -0 grep -Fx -- "$line" "$BATS_TEST_DIRNAME/../../docs/scale.md"
	output=$line
	want="1,000|full|$(field played)|$(field put_per_node_period)|$(field get_per_node_period)"
	want="$want|$(field list_pages_per_node_period)|$(field requests_per_node_period)"
	want="$want|$(field cluster_keys_listed_per_period)|$(field cluster_put_per_s)"
	want="$want|$(field cluster_get_per_s)|$(field cluster_list_per_s)"
	want="$want|$(field cluster_requests_per_s)|$(field s3_usd_month)|$(field r2_usd_month)"
	want="$want|$(field death_to_fence_ms)"
	run -0 doc_row 1,000 full
	assert_output "$want"
}

@test "keep-sim --scale 20 --mode ring: 1 PUT, K GETs, 1/M of a listing per node and period; fenced at the floor" {
	run -0 keep-sim --scale 20 --mode ring --successors 2 --full-every 4
	assert_output --regexp '^scale-model mode=ring successors=2 full_every=4 nodes=20 played=20 periods=10 '
	within "$(field put_per_node_period)" 0.98 1.0
	# K GETs on 3 periods of 4 (ring passes), a listing on the 4th: 10
	# periods counted hold 7 or 8 ring passes and 2 or 3 listings
	within "$(field get_per_node_period)" 1.35 1.65
	within "$(field list_pages_per_node_period)" 0.19 0.31
	within "$(field over_floor_ms)" 1 21
	[ "$(field fences_landed)" = 1 ]
	# the dead node's watchers, and watches whose listing judged it: not
	# every node
	[ "$(field fencers)" -lt 19 ]
	[ "$(field false_candidates)" = 0 ]
}

@test "docs/scale.md: the ring mode row and line at N = 1,000 are the model's output" {
	run -0 scale_model --scale 1000 --mode ring
	line=$(printf '%s\n' "$output" | grep '^scale-model ')
	run -0 grep -Fx -- "$line" "$BATS_TEST_DIRNAME/../../docs/scale.md"
	output=$line
	want="1,000|ring|$(field played)|$(field put_per_node_period)|$(field get_per_node_period)"
	want="$want|$(field list_pages_per_node_period)|$(field requests_per_node_period)"
	want="$want|$(field cluster_keys_listed_per_period)|$(field cluster_put_per_s)"
	want="$want|$(field cluster_get_per_s)|$(field cluster_list_per_s)"
	want="$want|$(field cluster_requests_per_s)|$(field s3_usd_month)|$(field r2_usd_month)"
	want="$want|$(field death_to_fence_ms)"
	run -0 doc_row 1,000 ring
	assert_output "$want"
}

@test "keep-sim --scale 20 --mode ring --kill-watchers: a node dead with its K watchers is fenced within 3 x M periods; with a watcher alive, within the full-mode bound" {
	# docs/fencing.md "Ring mode", liveness: the model itself fails (exit 1,
	# a `scale-model error:` line) past the bound; here the bound's figures
	# are checked as well. Timings: the defaults (period 3000, ttl 10000,
	# grace 5000, attempt timeout 2666): full-mode bound = the floor + 2
	# attempt timeouts (5332), the candidate (2 periods + write_every +
	# attempt timeout after the last write) coming before the floor
	run -0 keep-sim --scale 20 --mode ring --successors 2 --full-every 4
	[ "$(field bound_over_floor_ms)" = 5332 ]
	within "$(field over_floor_ms)" 0 5332
	# K = 2 watchers killed with it, a listing every 4 periods: a
	# candidate within 3 x 4 x 3000 ms of the last write, fenced within 2
	# attempt timeouts of that (12 periods: past the floor by 21000 + 5332)
	run -0 keep-sim --scale 20 --mode ring --successors 2 --full-every 4 --kill-watchers
	assert_output --regexp ' watchers_killed=2$'
	[ "$(field bound_over_floor_ms)" = 26332 ]
	within "$(field over_floor_ms)" 0 26332
	# the victim and its two watchers, each fenced once
	[ "$(field fences_landed)" = 3 ]
	[ "$(field false_candidates)" = 0 ]
	# every watch must be played to kill the victim's watchers
	run -100 --separate-stderr keep-sim --scale 2000 --mode ring --kill-watchers --sample 10
	[ "${stderr_lines[0]}" = "keep-sim: --kill-watchers needs every watch played (--sample N)" ]
}
