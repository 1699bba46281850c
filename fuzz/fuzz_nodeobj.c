/* keep — libFuzzer harness: the node lease codec (lib/codec/nodeobj.h).
 *
 * Untrusted bytes: any object under nodes/ in the bucket. Properties:
 * decode never crashes or reads past len; a format-3 object that decodes
 * is canonical (encoding the result gives back exactly the input bytes);
 * anything it accepts has its documented bounds, times included (at most
 * KEEP_WALL_MAX_MS); and every deadline the commands compute from it
 * (status, the free rule, the peer and operator fence decisions, the start
 * guard and forget, node-watch's age and free_at, lease-write's start-check
 * shortcut), at the largest timings the configuration accepts and at
 * clocks from INT64_MIN to INT64_MAX, runs without a UBSan report
 * (issue 18 item 4). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/codec/nodeobj.h"
#include "../lib/core/fence.h"
#include "../lib/core/timing.h"
#include "../lib/core/upgrade.h"

#define DAY_MS 86400000LL

/* The deadlines computed from a decoded object o, as the commands compute
 * them. UBSan (the fuzz build) aborts on any signed overflow. */
static void deadlines(const struct keep_node_obj *o)
{
	static const int64_t nows[] = {INT64_MIN,	 -1,	   0, 1, 1767225600123LL,
				       KEEP_WALL_MAX_MS, INT64_MAX};
	struct keep_timing big = {.ttl_ms = DAY_MS,
				  .grace_ms = DAY_MS,
				  .safety_ms = DAY_MS - 1,
				  .max_skew_ms = DAY_MS,
				  .period_ms = DAY_MS / 3};
	struct keep_timing t;
	struct keep_stale st;
	struct keep_fencer me = {.valid = true, .live_since_mono_ms = 1, .now_mono_ms = INT64_MAX};
	struct keep_fence_decision d, d2;
	volatile int64_t sink;
	size_t i;
	int k;

	/* the bound keeps even plain arithmetic (as written before issue 18)
	 * inside int64 at the largest timings: written_at + horizon + ttl +
	 * grace + max_skew */
	sink = o->written_at_ms + DAY_MS + big.ttl_ms + big.grace_ms + big.max_skew_ms;
	sink = o->fenced_at_ms + DAY_MS;
	for (k = 0; k < 2; k++) {
		if (k == 0)
			keep_timing_defaults(&t);
		else
			t = big;
		memset(&st, 0, sizeof(st));
		snprintf(st.node, sizeof(st.node), "%s", o->node);
		snprintf(st.instance, sizeof(st.instance), "%s", o->instance);
		st.written_at_ms = o->written_at_ms;
		for (i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
			int64_t now = nows[i], at = 0;
			/* the fence decisions take both clocks (issue 23): the
			 * wall clock dates what is written, the judging clock
			 * judges; equal here, and 10 s apart below */
			struct keep_walls w = {now, now}, wj = {now, keep_sub_sat_ms(now, 10000)};
			enum keep_free f;

			(void)keep_node_status(o, now, &t, false);
			(void)keep_node_status(o, now, &t, true);
			f = keep_node_free(o->node, o->instance, true, o, now, &t, &at);
			if (f == KEEP_FREE_YES && o->state == KEEP_NODE_LIVE)
				abort(); /* live naming the instance never frees */
			f = keep_node_free(o->node, "-", true, o, now, &t, &at);
			if (f == KEEP_FREE_YES && o->state != KEEP_NODE_LIVE && now < at)
				abort();
			keep_fence_peer_judge(&st, &me, KEEP_STORE_OK, o, 0, &w, &t, "fz", &d);
			if (d.verdict == KEEP_FV_FENCE) {
				if (now < d.free_at_ms)
					abort(); /* never before written_at + ttl + grace */
				keep_fence_read_back(&d.obj, KEEP_STORE_OK, o, 0, &t, &d2);
			}
			keep_fence_operator(o->node, KEEP_STORE_OK, o, 0, &w, &t, &d);
			keep_fence_operator(o->node, KEEP_STORE_OK, o, 0, &wj, &t, &d);
			keep_fence_operator(o->node, KEEP_STORE_NOT_FOUND, NULL, 0, &wj, &t, &d);
			if (d.obj.written_at_ms != now)
				abort(); /* a created fence is dated on the wall clock */
			(void)keep_upgrade_old_left_ms(o->written_at_ms, now, &t, 0);
			(void)keep_upgrade_old_left_ms(o->written_at_ms, now, &t, DAY_MS);
			(void)keep_upgrade_forget_decide(KEEP_STORE_OK, o, 0, now, &t, DAY_MS,
							 NULL);
			/* node-watch --once: age_ms, free_at_ms, the table's "free in" */
			sink = keep_sub_sat_ms(now, o->written_at_ms);
			sink = keep_add_sat_ms(
			    keep_sub_sat_ms(
				keep_add_sat_ms(o->written_at_ms, keep_timing_takeover_ms(&t)),
				now),
			    999);
			/* lease-write's start-check shortcut and adopt (lib/core/lease.c) */
			sink =
			    now >= keep_add_sat_ms(o->written_at_ms, keep_timing_takeover_ms(&t));
			sink = keep_sub_sat_ms(now, keep_sub_sat_ms(now, o->written_at_ms));
		}
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_node_obj o, o2;
	struct keep_buf b;
	char err[256];
	int rc;

	rc = keep_node_obj_decode((const char *)data, size, &o, err, sizeof(err));
	if (rc != 0) {
		if (rc != KEEP_ERR_NOTOURS && rc != KEEP_ERR_PARSE && rc != KEEP_ERR_TOOBIG)
			abort();
		if (strnlen(err, sizeof(err)) >= sizeof(err) || !err[0])
			abort(); /* a reason is always given, NUL-terminated */
		return 0;
	}
	if (size > KEEP_NODEOBJ_MAX)
		abort();
	if (!keep_node_id_valid(o.node))
		abort();
	if (o.written_at_ms <= 0 || o.written_at_ms > KEEP_WALL_MAX_MS || o.fenced_at_ms < 0 ||
	    o.fenced_at_ms > KEEP_WALL_MAX_MS)
		abort(); /* every time bounded at decode */
	deadlines(&o);
	if (o.format != 3)
		return 0;
	keep_buf_init(&b, KEEP_NODEOBJ_MAX);
	if (keep_node_obj_encode(&o, &b) != 0)
		abort(); /* encode refuses only what decode refuses */
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort(); /* strict format: the accepted bytes are the canonical ones */
	if (keep_node_obj_decode(b.data, b.len, &o2, err, sizeof(err)) != 0)
		abort();
	if (o.state != o2.state || o.seq != o2.seq || o.written_at_ms != o2.written_at_ms ||
	    strcmp(o.instance, o2.instance) != 0 || strcmp(o.node, o2.node) != 0)
		abort();
	keep_buf_release(&b);
	return 0;
}
