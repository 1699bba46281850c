/* Unit tests: the upgrade from per-actor leases (lib/core/upgrade.c, ADR 0020 §6). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/err.h"
#include "../../lib/base/exitcode.h"
#include "../../lib/codec/ownerrec.h"
#include "../../lib/core/cluster.h"
#include "../../lib/core/mark.h"
#include "../../lib/core/upgrade.h"
#include "unit.h"

#define W0 1700000000000LL
#define H 500 /* horizon used by the guard tests (ms) */

/* ttl 3000, grace 1500, safety 600, skew 300, period 1000:
 * stale after H + 4500 = 5000; a future body lapses 5300 after its first read */
static void timing(struct keep_timing *t)
{
	t->ttl_ms = 3000;
	t->grace_ms = 1500;
	t->safety_ms = 600;
	t->max_skew_ms = 300;
	t->period_ms = 1000;
}

static int dec(const char *s, struct keep_lease_obj *o)
{
	return keep_lease_obj_decode(s, strlen(s), o, NULL, 0);
}

static void old(struct keep_node_obj *o, const char *node, int format, int64_t written_at)
{
	memset(o, 0, sizeof(*o));
	o->format = format;
	o->state = KEEP_NODE_LIVE;
	snprintf(o->instance, sizeof(o->instance), "-");
	o->written_at_ms = written_at;
	snprintf(o->node, sizeof(o->node), "%s", node);
	o->seq = -1;
}

/* ---- codec ---- */

TEST(codec_old_lease_and_marker_round_trip)
{
	struct keep_lease_obj o, p;
	struct keep_buf b;

	CHECK_EQ_INT(
	    dec("wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 1700000000000\n", &o), 0);
	CHECK_EQ_INT(o.format, 1);
	CHECK_EQ_STR(o.node, "n1");
	CHECK_EQ_INT(o.generation, 7);
	CHECK_EQ_INT(o.expires_at_ms, W0);
	keep_buf_init(&b, KEEP_LEASEOBJ_MAX);
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), 0);
	CHECK_EQ_STR(keep_buf_str(&b),
		     "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 1700000000000\n");
	CHECK_EQ_INT(dec(keep_buf_str(&b), &p), 0);
	CHECK(memcmp(&o, &p, sizeof(o)) == 0);

	memset(&o, 0, sizeof(o));
	o.format = 2;
	o.seed = 12;
	keep_buf_reset(&b);
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "wasmkeep-lease 2\nseed 12\n");
	CHECK_EQ_INT(dec(keep_buf_str(&b), &p), 0);
	CHECK_EQ_INT(p.format, 2);
	CHECK_EQ_INT(p.seed, 12);
	CHECK_EQ_INT(dec("wasmkeep-lease 2\nseed 0\n", &p), 0);
	CHECK_EQ_INT(p.seed, 0);
	keep_buf_release(&b);
}

TEST(codec_marker_is_not_an_old_lease)
{
	/* an old decoder accepts only header 1: the marker's first line differs,
	 * so an old binary reads it as corrupt and never takes the actor (§6) */
	struct keep_lease_obj o;
	struct keep_buf b;

	memset(&o, 0, sizeof(o));
	o.format = 2;
	o.seed = 3;
	keep_buf_init(&b, KEEP_LEASEOBJ_MAX);
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), 0);
	CHECK(strncmp(keep_buf_str(&b), "wasmkeep-lease 1\n", 17) != 0);
	CHECK(strncmp(keep_buf_str(&b), "wasmkeep-lease 2\n", 17) == 0);
	CHECK(!keep_old_lease_live(&o, 0, NULL));
	keep_buf_release(&b);
}

TEST(codec_refuses_malformed)
{
	static const char *const parse[] = {
	    "wasmkeep-lease 1\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration 7\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 5",
	    "wasmkeep-lease 1\nnode n1\ngeneration 07\nexpires_at_ms 5\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration -1\nexpires_at_ms 5\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 0\n",
	    "wasmkeep-lease 1\nnode .n1\ngeneration 7\nexpires_at_ms 5\n",
	    "wasmkeep-lease 1\ngeneration 7\nnode n1\nexpires_at_ms 5\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 5\nextra 1\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 5\r\n",
	    "wasmkeep-lease 1\nnode  n1\ngeneration 7\nexpires_at_ms 5\n",
	    "wasmkeep-lease 1\nnode n1\ngeneration 9007199254740992\nexpires_at_ms 5\n",
	    "wasmkeep-lease 2\n",
	    "wasmkeep-lease 2\nseed x\n",
	    "wasmkeep-lease 2\nseed 1\nseed 2\n",
	    "wasmkeep-lease 2\nseed 1",
	    "wasmkeep-lease 2",
	};
	static const char *const notours[] = {
	    "",
	    "wasmkeep-lease 3\nseed 1\n",
	    "wasmkeep-owner 1\nnobody\ngeneration 1\n",
	    "hello",
	};
	struct keep_lease_obj o;
	size_t i;

	for (i = 0; i < sizeof(parse) / sizeof(parse[0]); i++) {
		int rc = dec(parse[i], &o);

		if (rc != KEEP_ERR_PARSE)
			printf("#   parse case %zu: %d\n", i, rc);
		CHECK_EQ_INT(rc, KEEP_ERR_PARSE);
	}
	for (i = 0; i < sizeof(notours) / sizeof(notours[0]); i++)
		CHECK_EQ_INT(dec(notours[i], &o), KEEP_ERR_NOTOURS);
	{
		char big[KEEP_LEASEOBJ_MAX + 2];

		memset(big, 'a', sizeof(big));
		CHECK_EQ_INT(keep_lease_obj_decode(big, sizeof(big), &o, NULL, 0), KEEP_ERR_TOOBIG);
	}
	{
		/* a NUL inside */
		static const char nul[] = "wasmkeep-lease 2\nseed 1\0\n";

		CHECK_EQ_INT(keep_lease_obj_decode(nul, sizeof(nul) - 1, &o, NULL, 0),
			     KEEP_ERR_PARSE);
	}
}

TEST(codec_encode_refuses_what_decode_refuses)
{
	struct keep_lease_obj o;
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LEASEOBJ_MAX);
	memset(&o, 0, sizeof(o));
	o.format = 2;
	o.seed = -1;
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), KEEP_ERR_INVAL);
	o.format = 1;
	snprintf(o.node, sizeof(o.node), "bad id");
	o.expires_at_ms = 1;
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), KEEP_ERR_INVAL);
	o.format = 3;
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), KEEP_ERR_INVAL);
	CHECK_EQ_INT(b.len, 0);
	keep_buf_release(&b);
}

/* ---- marking ---- */

TEST(mark_live_old_lease_is_held_whatever_node)
{
	struct keep_timing t;
	struct keep_lease_obj o;

	timing(&t);
	CHECK_EQ_INT(
	    dec("wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 1700000000000\n", &o), 0);
	/* live until expires_at + grace, exclusive */
	CHECK(keep_old_lease_live(&o, W0 + 1499, &t));
	CHECK(!keep_old_lease_live(&o, W0 + 1500, &t));
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, &o, 0, W0 - 5000, &t), KEEP_MARK_HELD);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, &o, 0, W0 + 1499, &t), KEEP_MARK_HELD);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, &o, 0, W0 + 1500, &t),
		     KEEP_MARK_REPLACE);
}

TEST(mark_absent_marker_bad_failed)
{
	struct keep_timing t;
	struct keep_lease_obj m;

	timing(&t);
	CHECK_EQ_INT(dec("wasmkeep-lease 2\nseed 4\n", &m), 0);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_NOT_FOUND, NULL, 0, W0, &t),
		     KEEP_MARK_CREATE);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, &m, 0, W0, &t), KEEP_MARK_EXISTING);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, NULL, KEEP_ERR_NOTOURS, W0, &t),
		     KEEP_MARK_BAD_OBJECT);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, NULL, KEEP_ERR_PARSE, W0, &t),
		     KEEP_MARK_BAD_OBJECT);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_AMBIGUOUS, NULL, 0, W0, &t),
		     KEEP_MARK_FAILED);
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_REFUSED, NULL, 0, W0, &t),
		     KEEP_MARK_FAILED);
	CHECK_EQ_STR(keep_mark_verdict_name(KEEP_MARK_EXISTING), "existing");
}

TEST(seed_is_max_of_old_and_keys)
{
	CHECK_EQ_INT(keep_upgrade_seed_of(0, 0), 0);
	CHECK_EQ_INT(keep_upgrade_seed_of(7, 12), 12);
	CHECK_EQ_INT(keep_upgrade_seed_of(12, 7), 12);
	CHECK_EQ_INT(keep_upgrade_seed_of(-3, 0), 0);
}

TEST(segment_generation_parsing)
{
	int64_t g = -1;

	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/a/12/seg", &g), 0);
	CHECK_EQ_INT(g, 12);
	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/a/0000000042/x/y", &g), 0);
	CHECK_EQ_INT(g, 42);
	CHECK_EQ_INT(keep_upgrade_segment_gen("snapshot/t/c/a/", "snapshot/t/c/a/3", &g), 0);
	CHECK_EQ_INT(g, 3);
	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/ab/1/x", &g), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/a/x1/x", &g), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/a/-1/x", &g), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/a/99999999999999999999/x", &g),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_upgrade_segment_gen("wal/t/c/a/", "wal/t/c/a/9007199254740992/x", &g),
		     KEEP_ERR_PARSE);
}

TEST(actor_of_listed_keys)
{
	char k[KEEP_OWNER_KEY_MAX + 1];

	CHECK_EQ_INT(keep_upgrade_actor_of("leases/", "leases/t/c/a", k, sizeof(k)), 0);
	CHECK_EQ_STR(k, "t/c/a");
	CHECK_EQ_INT(keep_upgrade_actor_of("owners/", "owners/t/c/b", k, sizeof(k)), 0);
	CHECK_EQ_STR(k, "t/c/b");
	CHECK_EQ_INT(keep_upgrade_actor_of("wal/", "wal/t/c/a/3/seg", k, sizeof(k)), 0);
	CHECK_EQ_STR(k, "t/c/a");
	CHECK_EQ_INT(keep_upgrade_actor_of("snapshot/", "snapshot/t/c/z/9", k, sizeof(k)), 0);
	CHECK_EQ_STR(k, "t/c/z");
	CHECK_EQ_INT(keep_upgrade_actor_of("leases/", "leases/t/c/a/x", k, sizeof(k)),
		     KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_actor_of("leases/", "leases/t/c", k, sizeof(k)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_actor_of("wal/", "wal/t/c/a", k, sizeof(k)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_actor_of("wal/", "leases/t/c/a/1", k, sizeof(k)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_actor_of("leases/", "leases/t/.c/a", k, sizeof(k)),
		     KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_actor_of("leases/", "leases/t/c/a", k, 3), KEEP_ERR_TOOBIG);
}

/* ---- the start guard ---- */

static int pass1(struct keep_guard *g, const struct keep_node_obj *o, const char *node,
		 int64_t mono, int64_t wall)
{
	struct keep_guard_input in = {node, false, o};

	return keep_guard_pass(g, &in, o || node ? 1 : 0, mono, wall);
}

TEST(guard_passes_with_no_old_heartbeat)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_node_obj n3;

	timing(&t);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(keep_guard_pass(&g, NULL, 0, 100, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	/* a format-3 object and an unreadable one hold nothing up */
	memset(&n3, 0, sizeof(n3));
	n3.format = 3;
	snprintf(n3.node, sizeof(n3.node), "a");
	n3.written_at_ms = W0;
	CHECK_EQ_INT(pass1(&g, &n3, "a", 200, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	CHECK_EQ_INT(pass1(&g, NULL, "b", 300, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	CHECK_EQ_INT(g.n, 0);
	keep_guard_release(&g);
}

TEST(guard_waits_for_a_fresh_old_heartbeat_then_passes)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_node_obj o;

	timing(&t);
	keep_guard_init(&g, &t, H);
	old(&o, "old1", 2, W0);
	/* written 1000 ago: 4000 left; re-read every half period (500) */
	CHECK_EQ_INT(pass1(&g, &o, "old1", 10000, W0 + 1000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK_EQ_INT(g.left_ms, 4000);
	CHECK_EQ_INT(g.next_mono_ms, 10500);
	CHECK_EQ_INT(g.e[0].state, KEEP_GUARD_FRESH);
	CHECK_EQ_INT(pass1(&g, &o, "old1", 14800, W0 + 4800), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK_EQ_INT(g.left_ms, 200);
	CHECK_EQ_INT(g.next_mono_ms, 15000); /* min(half period, left) */
	CHECK_EQ_INT(pass1(&g, &o, "old1", 15000, W0 + 5000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	CHECK_EQ_INT(g.e[0].state, KEEP_GUARD_STALE);
	keep_guard_release(&g);
}

TEST(guard_old_heartbeat_rewritten_is_an_old_node_running)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_node_obj o;

	timing(&t);
	keep_guard_init(&g, &t, H);
	old(&o, "old1", 1, W0);
	CHECK_EQ_INT(pass1(&g, &o, "old1", 0, W0 + 100), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	o.written_at_ms = W0 + 3000;
	CHECK_EQ_INT(pass1(&g, &o, "old1", 3100, W0 + 3100), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_OLD_RUNNING);
	CHECK_EQ_INT(g.e[0].state, KEEP_GUARD_REWRITTEN);
	CHECK_EQ_INT(g.e[0].prev_written_at_ms, W0);
	CHECK_EQ_INT(g.e[0].written_at_ms, W0 + 3000);
	keep_guard_release(&g);
}

TEST(guard_rewritten_even_when_stale_or_after_an_absence)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_node_obj o;

	timing(&t);
	keep_guard_init(&g, &t, H);
	old(&o, "old1", 2, W0);
	/* stale at first sight */
	CHECK_EQ_INT(pass1(&g, &o, "old1", 0, W0 + 60000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	/* gone from a listing, then back with a new body: an old node wrote */
	CHECK_EQ_INT(keep_guard_pass(&g, NULL, 0, 500, W0 + 60500), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	o.written_at_ms = W0 + 60900;
	CHECK_EQ_INT(pass1(&g, &o, "old1", 1000, W0 + 61000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_OLD_RUNNING);
	keep_guard_release(&g);
}

TEST(guard_future_dated_heartbeat_lapses_on_the_monotonic_count)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_node_obj o;

	timing(&t);
	keep_guard_init(&g, &t, H);
	/* dated an hour ahead: the wall test would hold for an hour + 5 s */
	old(&o, "old1", 2, W0 + 3600000);
	CHECK_EQ_INT(pass1(&g, &o, "old1", 1000, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK_EQ_INT(g.left_ms, 5300); /* H + ttl + grace + max_skew */
	CHECK_EQ_INT(pass1(&g, &o, "old1", 6299, W0 + 5299), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK(!g.e[0].lapsed_now);
	/* the wall clock stands still (or steps back): the count goes on */
	CHECK_EQ_INT(pass1(&g, &o, "old1", 6300, W0 - 100000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	CHECK_EQ_INT(g.e[0].state, KEEP_GUARD_LAPSED);
	CHECK(g.e[0].lapsed_now); /* warn once */
	CHECK_EQ_INT(pass1(&g, &o, "old1", 7000, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	CHECK(!g.e[0].lapsed_now);
	keep_guard_release(&g);
}

TEST(guard_read_failure_never_passes)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_guard_input in = {"x", true, NULL};

	timing(&t);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(keep_guard_pass(&g, &in, 1, 0, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK(g.incomplete);
	CHECK_EQ_INT(g.next_mono_ms, 500);
	in.read_failed = false;
	CHECK_EQ_INT(keep_guard_pass(&g, &in, 1, 500, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	keep_guard_release(&g);
}

TEST(guard_two_heartbeats_wait_for_the_longest)
{
	struct keep_timing t;
	struct keep_guard g;
	struct keep_node_obj a, b;
	struct keep_guard_input in[2] = {{"a", false, &a}, {"b", false, &b}};

	timing(&t);
	keep_guard_init(&g, &t, H);
	old(&a, "a", 1, W0);
	old(&b, "b", 2, W0 + 2000);
	CHECK_EQ_INT(keep_guard_pass(&g, in, 2, 0, W0 + 4000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK_EQ_INT(g.left_ms, 3000);
	CHECK_EQ_INT(g.e[0].left_ms, 1000);
	CHECK_EQ_INT(keep_guard_pass(&g, in, 2, 1000, W0 + 5000), 0);
	CHECK_EQ_INT(g.e[0].state, KEEP_GUARD_STALE);
	CHECK_EQ_INT(g.e[1].state, KEEP_GUARD_FRESH);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	CHECK_EQ_INT(keep_guard_pass(&g, in, 2, 3000, W0 + 7000), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	keep_guard_release(&g);
}

/* ---- forget ---- */

TEST(forget_only_stale_old_formats)
{
	struct keep_timing t;
	struct keep_node_obj o;
	int64_t left = -1;

	timing(&t);
	old(&o, "old1", 2, W0);
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0 + 4999, &t, H, &left),
		     KEEP_FORGET_FRESH);
	CHECK_EQ_INT(left, 1);
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0 + 5000, &t, H, &left),
		     KEEP_FORGET_DELETE);
	o.format = 1;
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0 + 99999, &t, H, NULL),
		     KEEP_FORGET_DELETE);
	/* dated ahead: not stale for forget */
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0 - 100000, &t, H, NULL),
		     KEEP_FORGET_FRESH);
	/* a node lease, whatever its age or state: never */
	o.format = 3;
	o.state = KEEP_NODE_FENCED;
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0 + 9999999, &t, H, NULL),
		     KEEP_FORGET_FORMAT3);
	CHECK_EQ_INT(
	    keep_upgrade_forget_decide(KEEP_STORE_OK, NULL, KEEP_ERR_NOTOURS, W0, &t, H, NULL),
	    KEEP_FORGET_BAD_OBJECT);
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_NOT_FOUND, NULL, 0, W0, &t, H, NULL),
		     KEEP_FORGET_ABSENT);
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_AMBIGUOUS, NULL, 0, W0, &t, H, NULL),
		     KEEP_FORGET_FAILED);
}

/* issue 27: an operator's fence created over an absent object may go once
 * no record names the node; every other format-3 object stays */
TEST(forget_created_fence_only_unnamed)
{
	struct keep_timing t;
	struct keep_node_obj o;
	struct keep_owner_rec r;

	timing(&t);
	memset(&o, 0, sizeof(o));
	o.format = 3;
	o.state = KEEP_NODE_FENCED;
	snprintf(o.instance, sizeof(o.instance), "-");
	snprintf(o.node, sizeof(o.node), "n11");
	snprintf(o.fenced_by, sizeof(o.fenced_by), "operator");
	o.written_at_ms = W0;
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0, &t, H, NULL),
		     KEEP_FORGET_FENCE);
	snprintf(o.fenced_by, sizeof(o.fenced_by), "n2"); /* a peer's fence: a process */
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0, &t, H, NULL),
		     KEEP_FORGET_FORMAT3);
	snprintf(o.fenced_by, sizeof(o.fenced_by), "operator");
	snprintf(o.instance, sizeof(o.instance), "0123456789abcdef0123456789abcdef");
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &o, 0, W0, &t, H, NULL),
		     KEEP_FORGET_FORMAT3);
	memset(&r, 0, sizeof(r));
	r.held = true;
	snprintf(r.node, sizeof(r.node), "n11");
	r.generation = 4;
	CHECK_EQ_INT(keep_upgrade_forget_fence_record("n11", KEEP_STORE_OK, &r),
		     KEEP_FORGET_REC_NAMED);
	CHECK_EQ_INT(keep_upgrade_forget_fence_record("n1", KEEP_STORE_OK, &r),
		     KEEP_FORGET_REC_CLEAR);
	r.held = false;
	CHECK_EQ_INT(keep_upgrade_forget_fence_record("n11", KEEP_STORE_OK, &r),
		     KEEP_FORGET_REC_CLEAR);
	CHECK_EQ_INT(keep_upgrade_forget_fence_record("n11", KEEP_STORE_NOT_FOUND, NULL),
		     KEEP_FORGET_REC_CLEAR);
	CHECK_EQ_INT(keep_upgrade_forget_fence_record("n11", KEEP_STORE_OK, NULL),
		     KEEP_FORGET_REC_UNKNOWN);
	CHECK_EQ_INT(keep_upgrade_forget_fence_record("n11", KEEP_STORE_AMBIGUOUS, NULL),
		     KEEP_FORGET_REC_UNKNOWN);
}

/* Times bounded at decode, deadlines saturated (issue 18 item 4). */
TEST(absurd_times_refused_or_saturated)
{
	struct keep_timing t;
	struct keep_lease_obj o;
	struct keep_buf b;
	struct keep_guard g;
	struct keep_node_obj n;
	char err[128];
	const char *s;

	timing(&t);
	/* an old lease's expires_at beyond year 9999 (INT64_MAX, past int64) */
	s = "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 9223372036854775807\n";
	CHECK_EQ_INT(keep_lease_obj_decode(s, strlen(s), &o, err, sizeof(err)), KEEP_ERR_PARSE);
	CHECK(strstr(err, "beyond year 9999") != NULL);
	s = "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 99999999999999999999\n";
	CHECK_EQ_INT(keep_lease_obj_decode(s, strlen(s), &o, err, sizeof(err)), KEEP_ERR_PARSE);
	CHECK(strstr(err, "beyond year 9999") != NULL);
	CHECK_EQ_INT(
	    dec("wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 253402300800000\n", &o),
	    KEEP_ERR_PARSE);
	s = "wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 00\n";
	CHECK_EQ_INT(keep_lease_obj_decode(s, strlen(s), &o, err, sizeof(err)), KEEP_ERR_PARSE);
	CHECK(strstr(err, "want 'expires_at_ms") != NULL);
	/* the bound itself decodes, is live far ahead, and never overflows */
	CHECK_EQ_INT(
	    dec("wasmkeep-lease 1\nnode n1\ngeneration 7\nexpires_at_ms 253402300799999\n", &o), 0);
	CHECK(keep_old_lease_live(&o, W0, &t));
	CHECK_EQ_INT(keep_upgrade_mark_decide(KEEP_STORE_OK, &o, 0, W0, &t), KEEP_MARK_HELD);
	o.expires_at_ms = INT64_MAX; /* handed to the core directly */
	CHECK(keep_old_lease_live(&o, INT64_MAX - 1, &t));
	keep_buf_init(&b, KEEP_LEASEOBJ_MAX);
	CHECK_EQ_INT(keep_lease_obj_encode(&o, &b), KEEP_ERR_INVAL);
	keep_buf_release(&b);

	/* the start guard and forget on an old heartbeat at the end of time */
	CHECK_EQ_INT(keep_upgrade_old_left_ms(INT64_MAX, W0, &t, H), INT64_MAX);
	CHECK_EQ_INT(keep_upgrade_old_left_ms(1, INT64_MAX, &t, H), 5001 - INT64_MAX);
	old(&n, "old1", 1, INT64_MAX);
	CHECK_EQ_INT(keep_upgrade_forget_decide(KEEP_STORE_OK, &n, 0, W0, &t, H, NULL),
		     KEEP_FORGET_FRESH);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(pass1(&g, &n, "old1", INT64_MAX - 10000, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT); /* the future-dated rule: lapses on the count */
	CHECK_EQ_INT(pass1(&g, &n, "old1", INT64_MAX - 4700, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	CHECK_EQ_INT(g.e[0].state, KEEP_GUARD_LAPSED);
	keep_guard_release(&g);
}

/* ---- the guard's retry rule ------------------------------------------------------ */

TEST(guard_list_failures_wait_then_give_up_refused_at_once)
{
	struct keep_guard g;
	struct keep_timing t;
	int i;

	timing(&t);
	keep_guard_init(&g, &t, H);
	/* a refusal (403, no such bucket) ends the guard at once */
	CHECK_EQ_INT(keep_guard_on_list_failure(&g, KEEP_STORE_REFUSED, 100), KEEP_GV_REFUSED);
	CHECK_EQ_INT(keep_guard_on_list_failure(&g, KEEP_STORE_NOT_FOUND, 100), KEEP_GV_REFUSED);
	/* a failure for now: list again half a period later, 9 times */
	for (i = 1; i < KEEP_GUARD_LIST_FAILURES; i++) {
		CHECK_EQ_INT(keep_guard_on_list_failure(&g, KEEP_STORE_AMBIGUOUS, 100 * i),
			     KEEP_GV_WAIT);
		CHECK_EQ_INT(g.next_mono_ms, 100 * i + 501);
	}
	/* a pass resets the count */
	CHECK_EQ_INT(keep_guard_pass(&g, NULL, 0, 2000, W0), 0);
	CHECK_EQ_INT(g.list_failures, 0);
	for (i = 1; i < KEEP_GUARD_LIST_FAILURES; i++)
		CHECK_EQ_INT(keep_guard_on_list_failure(&g, KEEP_STORE_AMBIGUOUS, 3000),
			     KEEP_GV_WAIT);
	CHECK_EQ_INT(keep_guard_on_list_failure(&g, KEEP_STORE_AMBIGUOUS, 3000), KEEP_GV_GAVE_UP);
	CHECK_EQ_STR(keep_guard_verdict_name(g.verdict), "gave-up");
	/* saturating */
	keep_guard_release(&g);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(keep_guard_on_list_failure(&g, KEEP_STORE_AMBIGUOUS, INT64_MAX - 1),
		     KEEP_GV_WAIT);
	CHECK_EQ_INT(g.next_mono_ms, INT64_MAX);
	keep_guard_release(&g);
}

/* ---- the cluster object's judgement and `upgrade-mark native` ---------------------- */

#define NATIVE_BODY "wasmkeep-cluster 1\nformat native\nwritten_at_ms 5\n"
#define UPGRADED_BODY "wasmkeep-cluster 1\nformat upgraded\nwritten_at_ms 6\n"

TEST(cluster_judge_every_read)
{
	struct keep_cluster_obj o;
	char why[96];
	const char *b = NATIVE_BODY;

	CHECK_EQ_INT(
	    keep_cluster_judge(KEEP_STORE_NOT_FOUND, false, NULL, NULL, 0, &o, why, sizeof(why)),
	    KEEP_CLUSTER_READ_ABSENT);
	CHECK_EQ_INT(
	    keep_cluster_judge(KEEP_STORE_AMBIGUOUS, false, "x", NULL, 0, &o, why, sizeof(why)),
	    KEEP_CLUSTER_READ_FAILED);
	CHECK_EQ_INT(
	    keep_cluster_judge(KEEP_STORE_REFUSED, false, "x", NULL, 0, &o, why, sizeof(why)),
	    KEEP_CLUSTER_READ_FAILED);
	CHECK_EQ_INT(
	    keep_cluster_judge(KEEP_STORE_OK, false, NULL, b, strlen(b), &o, why, sizeof(why)),
	    KEEP_CLUSTER_READ_NATIVE);
	CHECK_EQ_INT(o.written_at_ms, 5);
	CHECK_EQ_STR(why, "");
	b = UPGRADED_BODY;
	CHECK_EQ_INT(
	    keep_cluster_judge(KEEP_STORE_OK, false, NULL, b, strlen(b), &o, why, sizeof(why)),
	    KEEP_CLUSTER_READ_UPGRADED);
	CHECK_EQ_INT(o.written_at_ms, 6);
	b = "wasmkeep-cluster 1\nformat nativ\nwritten_at_ms 5\n";
	CHECK_EQ_INT(
	    keep_cluster_judge(KEEP_STORE_OK, false, NULL, b, strlen(b), &o, why, sizeof(why)),
	    KEEP_CLUSTER_READ_BAD);
	CHECK_EQ_STR(why, "unknown format");
	CHECK_EQ_INT(keep_cluster_judge(KEEP_STORE_OK, false, NULL, NULL, 0, &o, why, sizeof(why)),
		     KEEP_CLUSTER_READ_BAD);
	CHECK_EQ_INT(keep_cluster_judge(KEEP_STORE_OK, true, "over 65536 bytes", NULL, 0, &o, why,
					sizeof(why)),
		     KEEP_CLUSTER_READ_BAD);
	CHECK_EQ_STR(why, "over 65536 bytes");
}

/* A scripted bucket for the native machine: the cluster object's body
 * (NULL: absent), the first key under each old prefix (NULL: none), and
 * each request's forced outcome (OK: as the bucket says). */
struct nbucket {
	const char *cluster;
	const char *old[3]; /* leases/, wal/, snapshot/ */
	enum keep_outcome read_fail, list_fail, create_fail;
	bool create_lands; /* a create that is answered OK stores the body */
	int reads, lists, creates;
	char stored[KEEP_CLUSTER_MAX + 1];
};

static void native_run(struct keep_native *m, struct nbucket *b)
{
	struct keep_walls now = {W0, W0};
	struct keep_native_act act;
	struct keep_native_reply r;
	int steps = 0;

	keep_native_init(m);
	for (;;) {
		keep_native_next(m, &now, &act);
		if (act.kind == KEEP_NATIVE_ACT_DONE || ++steps > 100)
			break;
		memset(&r, 0, sizeof(r));
		switch (act.kind) {
		case KEEP_NATIVE_ACT_READ:
			b->reads++;
			r.outcome = b->read_fail ? b->read_fail
				    : b->cluster ? KEEP_STORE_OK
						 : KEEP_STORE_NOT_FOUND;
			r.body = b->cluster;
			r.len = b->cluster ? strlen(b->cluster) : 0;
			break;
		case KEEP_NATIVE_ACT_LIST:
			b->lists++;
			r.outcome = b->list_fail;
			r.first = strcmp(act.prefix, "leases/") == 0 ? b->old[0]
				  : strcmp(act.prefix, "wal/") == 0  ? b->old[1]
								     : b->old[2];
			break;
		default:
			b->creates++;
			r.outcome = b->create_fail;
			if (!r.outcome && b->create_lands) {
				snprintf(b->stored, sizeof(b->stored), "%s", act.body);
				b->cluster = b->stored;
			}
			break;
		}
		keep_native_on_reply(m, &r);
	}
	CHECK(steps <= 100);
}

TEST(native_creates_on_an_empty_bucket_then_existing)
{
	struct keep_native m;
	struct nbucket b = {.create_lands = true};

	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_CREATED);
	CHECK_EQ_INT(keep_native_exit_code(&m), 0);
	CHECK_EQ_INT(m.obj.written_at_ms, W0);
	CHECK_EQ_INT(b.reads, 1);
	CHECK_EQ_INT(b.lists, 3);
	CHECK_EQ_INT(b.creates, 1);
	CHECK_EQ_STR(b.stored, "wasmkeep-cluster 1\nformat native\nwritten_at_ms 1700000000000\n");
	memset(&b.reads, 0, 3 * sizeof(int));
	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_EXISTING);
	CHECK_EQ_INT(keep_native_exit_code(&m), 0);
	CHECK_EQ_INT(b.lists, 0);
	CHECK_EQ_INT(b.creates, 0);
}

TEST(native_refuses_old_objects_upgraded_and_bad)
{
	struct keep_native m;
	struct nbucket b = {.old = {NULL, "wal/t/c/a/7/x", "snapshot/t/c/a/7"}};

	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_OLD_OBJECTS);
	CHECK_EQ_INT(keep_native_exit_code(&m), 1);
	CHECK_EQ_STR(m.key, "wal/t/c/a/7/x");
	CHECK_EQ_STR(m.old_prefix, "wal/");
	CHECK_EQ_INT(b.lists, 2);
	CHECK_EQ_INT(b.creates, 0);
	b = (struct nbucket){.cluster = UPGRADED_BODY};
	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_UPGRADED);
	CHECK_EQ_INT(keep_native_exit_code(&m), 1);
	CHECK_EQ_INT(m.obj.written_at_ms, 6);
	b = (struct nbucket){.cluster = "wasmkeep-cluster 2\n"};
	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_BAD_OBJECT);
	CHECK_EQ_INT(keep_native_exit_code(&m), 17);
	CHECK_EQ_STR(m.why, "not a keep cluster object");
}

TEST(native_failed_requests_say_which)
{
	struct keep_native m;
	struct nbucket b = {.read_fail = KEEP_STORE_AMBIGUOUS};

	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_FAILED);
	CHECK_EQ_INT(m.failed_act, KEEP_NATIVE_ACT_READ);
	CHECK_EQ_INT(m.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_native_exit_code(&m), 111);
	b = (struct nbucket){.list_fail = KEEP_STORE_REFUSED};
	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_FAILED);
	CHECK_EQ_INT(m.failed_act, KEEP_NATIVE_ACT_LIST);
	CHECK_EQ_STR(m.old_prefix, "leases/");
	CHECK_EQ_INT(m.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_native_exit_code(&m), 1);
	b = (struct nbucket){.create_fail = KEEP_STORE_AMBIGUOUS};
	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_FAILED);
	CHECK_EQ_INT(m.failed_act, KEEP_NATIVE_ACT_CREATE);
	CHECK_EQ_INT(b.creates, 1);
}

TEST(native_conflict_reads_again_and_is_bounded)
{
	struct keep_native m;
	struct nbucket b = {.create_fail = KEEP_STORE_CONFLICT};

	/* a store that answers every create 412 while a read finds nothing */
	native_run(&m, &b);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_GAVE_UP);
	CHECK_EQ_INT(m.conflicts, KEEP_NATIVE_CONFLICTS_MAX);
	CHECK_EQ_INT(keep_native_exit_code(&m), 111);
	CHECK_EQ_INT(b.creates, KEEP_NATIVE_CONFLICTS_MAX);
	CHECK_EQ_INT(b.reads, KEEP_NATIVE_CONFLICTS_MAX + 1);
	CHECK_EQ_INT(b.lists, 3 * KEEP_NATIVE_CONFLICTS_MAX);
	/* a race with another run: its object is read after the conflict */
	b = (struct nbucket){.create_fail = KEEP_STORE_CONFLICT};
	{
		struct keep_walls now = {W0, W0};
		struct keep_native_act act;
		struct keep_native_reply r = {.outcome = KEEP_STORE_NOT_FOUND};

		keep_native_init(&m);
		keep_native_next(&m, &now, &act);
		keep_native_on_reply(&m, &r); /* absent */
		r.outcome = KEEP_STORE_OK;
		for (int i = 0; i < 3; i++) {
			keep_native_next(&m, &now, &act);
			CHECK_EQ_INT(act.kind, KEEP_NATIVE_ACT_LIST);
			keep_native_on_reply(&m, &r);
		}
		keep_native_next(&m, &now, &act);
		CHECK_EQ_INT(act.kind, KEEP_NATIVE_ACT_CREATE);
		r.outcome = KEEP_STORE_CONFLICT;
		keep_native_on_reply(&m, &r);
		keep_native_next(&m, &now, &act);
		CHECK_EQ_INT(act.kind, KEEP_NATIVE_ACT_READ);
		r.outcome = KEEP_STORE_OK;
		r.body = NATIVE_BODY;
		r.len = strlen(NATIVE_BODY);
		keep_native_on_reply(&m, &r);
		keep_native_next(&m, &now, &act);
		CHECK_EQ_INT(act.kind, KEEP_NATIVE_ACT_DONE);
		CHECK_EQ_INT(m.res, KEEP_NATIVE_EXISTING);
		CHECK_EQ_INT(m.obj.written_at_ms, 5);
	}
}

TEST(native_refuses_to_date_past_year_9999)
{
	struct keep_native m;
	struct keep_walls now = {KEEP_WALL_MAX_MS + 1, KEEP_WALL_MAX_MS + 1};
	struct keep_native_act act;
	struct keep_native_reply r = {.outcome = KEEP_STORE_NOT_FOUND};
	int i;

	keep_native_init(&m);
	keep_native_next(&m, &now, &act);
	keep_native_on_reply(&m, &r);
	r.outcome = KEEP_STORE_OK;
	for (i = 0; i < 3; i++) {
		keep_native_next(&m, &now, &act);
		keep_native_on_reply(&m, &r);
	}
	keep_native_next(&m, &now, &act);
	CHECK_EQ_INT(act.kind, KEEP_NATIVE_ACT_DONE);
	CHECK_EQ_INT(m.res, KEEP_NATIVE_ENCODE);
}

TEST(forget_conflict_unchanged_only_on_the_same_version)
{
	CHECK_EQ_INT(keep_upgrade_forget_on_conflict("v1", KEEP_STORE_OK, "v1"),
		     KEEP_FORGET_UNCHANGED);
	CHECK_EQ_INT(keep_upgrade_forget_on_conflict("v1", KEEP_STORE_OK, "v2"),
		     KEEP_FORGET_CHANGED);
	CHECK_EQ_INT(keep_upgrade_forget_on_conflict("v1", KEEP_STORE_NOT_FOUND, ""),
		     KEEP_FORGET_CHANGED);
	CHECK_EQ_INT(keep_upgrade_forget_on_conflict("v1", KEEP_STORE_AMBIGUOUS, "v1"),
		     KEEP_FORGET_CHANGED);
	CHECK_EQ_STR(keep_forget_conflict_name(KEEP_FORGET_UNCHANGED), "conflict-unchanged");
	CHECK_EQ_STR(keep_forget_conflict_name(KEEP_FORGET_CHANGED), "changed");
}

TEST(app_root_of_listed_keys)
{
	char r[KEEP_APP_ROOT_MAX + 1];

	CHECK_EQ_INT(keep_upgrade_app_root_of("apps/billing/owners/t/c/a", r, sizeof(r)), 0);
	CHECK_EQ_STR(r, "billing");
	CHECK_EQ_INT(keep_upgrade_app_root_of("apps/billing/other/x", r, sizeof(r)),
		     KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_app_root_of("apps/billing", r, sizeof(r)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_app_root_of("owners/t/c/a", r, sizeof(r)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_app_root_of("apps//owners/t/c/a", r, sizeof(r)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_app_root_of("apps/a23456789012345678901234567890123/owners/t/c/a",
					      r, sizeof(r)),
		     KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_upgrade_app_root_of("apps/billing/owners/t/c/a", r, 4), KEEP_ERR_TOOBIG);
}

/* A marking's result as an exit code: the one table upgrade-mark actors
 * and the first acquisition share (docs/exit-codes.md). */
TEST(mark_result_exit_codes)
{
	struct keep_mark_result r;

	memset(&r, 0, sizeof(r));
	r.kind = KEEP_MR_MARKED;
	CHECK_EQ_INT(keep_mark_result_exit_code(&r), KEEP_EXIT_OK);
	r.kind = KEEP_MR_HELD;
	CHECK_EQ_INT(keep_mark_result_exit_code(&r), KEEP_EXIT_NO);
	r.kind = KEEP_MR_BAD_OBJECT;
	CHECK_EQ_INT(keep_mark_result_exit_code(&r), KEEP_EXIT_BAD_OBJECT);
	r.kind = KEEP_MR_BAD_KEY;
	CHECK_EQ_INT(keep_mark_result_exit_code(&r), KEEP_EXIT_BAD_OBJECT);
	/* a failure for now (timeout, 5xx, conflicts): run it again */
	r.kind = KEEP_MR_FAILED;
	CHECK_EQ_INT(keep_mark_result_exit_code(&r), KEEP_EXIT_TEMP);
	/* the store refused (403, no such bucket): retrying cannot help */
	r.refused = true;
	CHECK_EQ_INT(keep_mark_result_exit_code(&r), KEEP_EXIT_NO);
}

/* The reply to forget's conditional DELETE: gone either way, a condition
 * that failed (read again), or a failure. */
TEST(forget_delete_outcomes)
{
	CHECK_EQ_INT(keep_upgrade_forget_on_delete(KEEP_STORE_OK), KEEP_FORGET_DEL_DONE);
	CHECK_EQ_INT(keep_upgrade_forget_on_delete(KEEP_STORE_NOT_FOUND), KEEP_FORGET_DEL_DONE);
	CHECK_EQ_INT(keep_upgrade_forget_on_delete(KEEP_STORE_CONFLICT), KEEP_FORGET_DEL_CONFLICT);
	CHECK_EQ_INT(keep_upgrade_forget_on_delete(KEEP_STORE_REFUSED), KEEP_FORGET_DEL_FAILED);
	CHECK_EQ_INT(keep_upgrade_forget_on_delete(KEEP_STORE_AMBIGUOUS), KEEP_FORGET_DEL_FAILED);
}

/* forget's exit code for one node: kept 1 (17 for a bad object), a
 * failure its request's code, and --stale (quiet) 0 for anything kept. */
TEST(forget_exit_codes)
{
	const enum keep_forget_delete x = KEEP_FORGET_DEL_FAILED; /* ignored */

	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_ABSENT, x, 111, false), 0);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FAILED, x, 111, false), 111);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FAILED, x, 111, true), 111);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FRESH, x, 111, false), 1);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FRESH, x, 111, true), 0);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FORMAT3, x, 111, false), 1);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FORMAT3, x, 111, true), 0);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_BAD_OBJECT, x, 111, false), 17);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_BAD_OBJECT, x, 111, true), 0);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FENCE, x, 111, true), 0); /* untouched */
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_FENCE, KEEP_FORGET_DEL_DONE, 0, false),
		     0);
	CHECK_EQ_INT(
	    keep_upgrade_forget_exit(KEEP_FORGET_DELETE, KEEP_FORGET_DEL_CONFLICT, 0, false), 1);
	CHECK_EQ_INT(
	    keep_upgrade_forget_exit(KEEP_FORGET_DELETE, KEEP_FORGET_DEL_CONFLICT, 0, true), 0);
	CHECK_EQ_INT(
	    keep_upgrade_forget_exit(KEEP_FORGET_DELETE, KEEP_FORGET_DEL_FAILED, 111, true), 111);
	CHECK_EQ_INT(keep_upgrade_forget_exit(KEEP_FORGET_DELETE, KEEP_FORGET_DEL_FAILED, 1, false),
		     1);
}

/* One read of a listed node object as the guard's input: gone since the
 * listing is no input; a failed read holds the pass up; an object the
 * guard cannot judge is an input it ignores. */
TEST(guard_input_of_a_read)
{
	struct keep_guard_input in;
	struct keep_guard g;
	struct keep_timing t;
	struct keep_node_obj o;

	memset(&in, 0, sizeof(in));
	memset(&t, 0, sizeof(t));
	in.node = "unset";
	CHECK(!keep_guard_input_of(&in, "n1", KEEP_STORE_NOT_FOUND, NULL));
	CHECK_EQ_STR(in.node, "unset"); /* untouched */

	CHECK(keep_guard_input_of(&in, "n1", KEEP_STORE_AMBIGUOUS, NULL));
	CHECK_EQ_STR(in.node, "n1");
	CHECK(in.read_failed);
	CHECK(in.obj == NULL);
	timing(&t);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(keep_guard_pass(&g, &in, 1, 100, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT);
	keep_guard_release(&g);

	CHECK(keep_guard_input_of(&in, "n1", KEEP_STORE_OK, NULL));
	CHECK(!in.read_failed);
	CHECK(in.obj == NULL);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(keep_guard_pass(&g, &in, 1, 100, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_PASS);
	keep_guard_release(&g);

	old(&o, "n1", 2, W0);
	CHECK(keep_guard_input_of(&in, "n1", KEEP_STORE_OK, &o));
	CHECK(!in.read_failed);
	CHECK(in.obj == &o);
	keep_guard_init(&g, &t, H);
	CHECK_EQ_INT(keep_guard_pass(&g, &in, 1, 100, W0), 0);
	CHECK_EQ_INT(g.verdict, KEEP_GV_WAIT); /* fresh */
	keep_guard_release(&g);
}

int main(void)
{
	RUN(codec_old_lease_and_marker_round_trip);
	RUN(codec_marker_is_not_an_old_lease);
	RUN(codec_refuses_malformed);
	RUN(codec_encode_refuses_what_decode_refuses);
	RUN(mark_live_old_lease_is_held_whatever_node);
	RUN(mark_absent_marker_bad_failed);
	RUN(seed_is_max_of_old_and_keys);
	RUN(segment_generation_parsing);
	RUN(actor_of_listed_keys);
	RUN(guard_passes_with_no_old_heartbeat);
	RUN(guard_waits_for_a_fresh_old_heartbeat_then_passes);
	RUN(guard_old_heartbeat_rewritten_is_an_old_node_running);
	RUN(guard_rewritten_even_when_stale_or_after_an_absence);
	RUN(guard_future_dated_heartbeat_lapses_on_the_monotonic_count);
	RUN(guard_read_failure_never_passes);
	RUN(guard_two_heartbeats_wait_for_the_longest);
	RUN(forget_only_stale_old_formats);
	RUN(forget_created_fence_only_unnamed);
	RUN(absurd_times_refused_or_saturated);
	RUN(guard_list_failures_wait_then_give_up_refused_at_once);
	RUN(cluster_judge_every_read);
	RUN(native_creates_on_an_empty_bucket_then_existing);
	RUN(native_refuses_old_objects_upgraded_and_bad);
	RUN(native_failed_requests_say_which);
	RUN(native_conflict_reads_again_and_is_bounded);
	RUN(native_refuses_to_date_past_year_9999);
	RUN(forget_conflict_unchanged_only_on_the_same_version);
	RUN(app_root_of_listed_keys);
	RUN(mark_result_exit_codes);
	RUN(forget_delete_outcomes);
	RUN(forget_exit_codes);
	RUN(guard_input_of_a_read);
	return unit_done();
}
