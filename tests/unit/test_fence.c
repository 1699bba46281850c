/* Unit tests: fencing and membership decisions (lib/core/fence.c, ADR 0020 §2, §6). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/err.h"
#include "../../lib/core/fence.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"
#define W0 1700000000000LL
/* both wall clocks of a decision at w (no judging offset) */
#define WALLS(w) (&(struct keep_walls){(w), (w)})

/* ttl 3000, grace 1500, safety 600, skew 300, period 1000:
 * write_every 1000, attempt 800, stale after 1800, takeover 4500 */
static void timing(struct keep_timing *t)
{
	t->ttl_ms = 3000;
	t->grace_ms = 1500;
	t->safety_ms = 600;
	t->max_skew_ms = 300;
	t->period_ms = 1000;
}

static void obj(struct keep_node_obj *o, const char *node, enum keep_node_state st,
		const char *inst, int64_t written_at)
{
	memset(o, 0, sizeof(*o));
	o->format = 3;
	o->state = st;
	snprintf(o->instance, sizeof(o->instance), "%s", inst);
	o->written_at_ms = written_at;
	snprintf(o->node, sizeof(o->node), "%s", node);
	o->seq = 5;
	snprintf(o->host, sizeof(o->host), "h1");
	o->pid = 42;
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

static size_t count_kind(const struct keep_watch *w, enum keep_watch_event_kind k, const char *node)
{
	size_t i, c = 0;

	for (i = 0; i < w->nev; i++)
		if (w->ev[i].kind == k && (!node || strcmp(w->ev[i].node, node) == 0))
			c++;
	return c;
}

/* ---- status ---- */

TEST(status_format3_states)
{
	struct keep_timing t;
	struct keep_node_obj o;

	timing(&t);
	obj(&o, "a", KEEP_NODE_LIVE, IA, W0);
	CHECK_EQ_INT(keep_node_status(&o, W0 + 999999, &t, false), KEEP_STATUS_LIVE);
	o.state = KEEP_NODE_RELEASED;
	CHECK_EQ_INT(keep_node_status(&o, W0, &t, false), KEEP_STATUS_RELEASED);
	o.state = KEEP_NODE_FENCED;
	CHECK_EQ_INT(keep_node_status(&o, W0, &t, false), KEEP_STATUS_FENCED);
	CHECK_EQ_INT(keep_node_status(NULL, W0, &t, false), KEEP_STATUS_UNREADABLE);
	CHECK_EQ_STR(keep_node_status_name(KEEP_STATUS_OLD_RUNNING), "old-running");
	CHECK_EQ_STR(keep_node_status_name(KEEP_STATUS_OLD_RETIRED), "old-retired");
}

TEST(status_old_format_running_or_retired)
{
	struct keep_timing t;
	struct keep_node_obj o;

	timing(&t);
	old(&o, "a", 2, W0);
	CHECK_EQ_INT(keep_node_status(&o, W0 + 4499, &t, false), KEEP_STATUS_OLD_RUNNING);
	CHECK_EQ_INT(keep_node_status(&o, W0 + 4500, &t, false), KEEP_STATUS_OLD_RETIRED);
	CHECK_EQ_INT(keep_node_status(&o, W0 - 100000, &t, false), KEEP_STATUS_OLD_RUNNING);
	/* changing between listings: running whatever its age */
	CHECK_EQ_INT(keep_node_status(&o, W0 + 100000, &t, true), KEEP_STATUS_OLD_RUNNING);
	old(&o, "a", 1, W0);
	CHECK_EQ_INT(keep_node_status(&o, W0 + 100000, &t, false), KEEP_STATUS_OLD_RETIRED);
}

/* ---- watch ---- */

static void pass1(struct keep_watch *w, const struct keep_node_obj *o, const char *node,
		  int64_t now, bool valid, int64_t live_since)
{
	struct keep_watch_input in = {.node = node, .readable = o != NULL, .obj = o};
	CHECK_EQ_INT(keep_watch_pass(w, &in, 1, now, W0 + now, valid, live_since), 0);
}

TEST(watch_join_then_stale_after_period_plus_attempt)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 500);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_JOIN, "a"), 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 2799, true, 500);
	CHECK_EQ_INT(w.nev, 0);
	pass1(&w, &a, "a", 2800, true, 500);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	CHECK_EQ_STR(w.ev[0].instance, IA);
	CHECK_EQ_INT(w.ev[0].written_at_ms, W0);
	CHECK_EQ_INT(w.ev[0].unchanged_ms, 1800);
	/* at most once per write_every while it stays a candidate */
	pass1(&w, &a, "a", 3300, true, 500);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 3800, true, 500);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	keep_watch_release(&w);
}

TEST(watch_renewal_restarts_the_watch)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	a.written_at_ms += 1000; /* a renewed */
	pass1(&w, &a, "a", 2000, true, 1);
	CHECK_EQ_INT(w.nev, 0); /* a renewal is not a change event */
	pass1(&w, &a, "a", 3000, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 3800, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	keep_watch_release(&w);
}

TEST(watch_same_written_at_new_instance_restarts)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	snprintf(a.instance, sizeof(a.instance), "%s", IB);
	pass1(&w, &a, "a", 2000, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_CHANGE, "a"), 1);
	pass1(&w, &a, "a", 3700, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 3800, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	keep_watch_release(&w);
}

TEST(watch_counts_from_own_live_since)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	/* our own first ack after a lapse at 5000: a has been unchanged since
	 * 1000, but we judge only from 5000 */
	pass1(&w, &a, "a", 6000, true, 5000);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 6799, true, 5000);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 6800, true, 5000);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	keep_watch_release(&w);
}

TEST(watch_not_valid_no_stale_and_restart)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	pass1(&w, &a, "a", 9000, false, 0);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	/* valid again, live_since unknown (0): the watch restarted at 9000 */
	pass1(&w, &a, "a", 10000, true, 0);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	pass1(&w, &a, "a", 10800, true, 0);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	keep_watch_release(&w);
}

TEST(watch_never_stale_self_nonlive_old_unreadable)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj o[5];
	struct keep_watch_input in[6];
	int64_t now;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&o[0], "b", KEEP_NODE_LIVE, IA, W0);
	obj(&o[1], "c", KEEP_NODE_RELEASED, IA, W0);
	obj(&o[2], "d", KEEP_NODE_FENCED, IA, W0);
	old(&o[3], "e", 2, W0);
	old(&o[4], "f", 1, W0 - 1000000);
	for (int i = 0; i < 5; i++)
		in[i] =
		    (struct keep_watch_input){.node = o[i].node, .readable = true, .obj = &o[i]};
	in[5] = (struct keep_watch_input){.node = "g", .readable = false};
	for (now = 1000; now <= 20000; now += 1000) {
		CHECK_EQ_INT(keep_watch_pass(&w, in, 6, now, W0 + now, true, 1), 0);
		CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	}
	keep_watch_release(&w);
}

TEST(watch_no_self_never_stale)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, NULL);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	pass1(&w, &a, "a", 9000, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, NULL), 0);
	keep_watch_release(&w);
}

TEST(watch_failed_read_keeps_watch_no_stale)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;
	struct keep_watch_input in = {.node = "a", .read_failed = true};

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	CHECK_EQ_INT(keep_watch_pass(&w, &in, 1, 5000, W0 + 5000, true, 1), 0);
	CHECK_EQ_INT(w.nev, 0); /* no leave, no stale */
	pass1(&w, &a, "a", 5100, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_STALE, "a"), 1);
	keep_watch_release(&w);
}

TEST(watch_change_and_leave)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 1);
	a.state = KEEP_NODE_FENCED; /* same instance and written_at */
	pass1(&w, &a, "a", 2000, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_CHANGE, "a"), 1);
	CHECK_EQ_INT(w.ev[0].status, KEEP_STATUS_FENCED);
	CHECK_EQ_INT(keep_watch_pass(&w, NULL, 0, 3000, W0 + 3000, true, 1), 0);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_LEAVE, "a"), 1);
	CHECK_EQ_INT(w.n, 0);
	keep_watch_release(&w);
}

TEST(watch_old_format_rewritten_is_running)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj e;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	old(&e, "e", 2, W0 - 1000000); /* dated long ago: retired at first sight */
	pass1(&w, &e, "e", 1000, true, 1);
	CHECK_EQ_INT(w.ev[0].status, KEEP_STATUS_OLD_RETIRED);
	e.written_at_ms++; /* rewritten: an old version running */
	pass1(&w, &e, "e", 2000, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_CHANGE, "e"), 1);
	CHECK_EQ_INT(w.ev[0].status, KEEP_STATUS_OLD_RUNNING);
	/* unchanged for ttl + grace: retired again */
	pass1(&w, &e, "e", 6500, true, 1);
	CHECK_EQ_INT(count_kind(&w, KEEP_WEV_CHANGE, "e"), 1);
	CHECK_EQ_INT(w.ev[0].status, KEEP_STATUS_OLD_RETIRED);
	keep_watch_release(&w);
}

/* ---- peer fence ---- */

static void stale(struct keep_stale *s, const char *node, const char *inst, int64_t w)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->node, sizeof(s->node), "%s", node);
	snprintf(s->instance, sizeof(s->instance), "%s", inst);
	s->written_at_ms = w;
}

/* A fencer long live (since mono 1000), at mono 1000000: every watch bound passed. */
static const struct keep_fencer ME = {
    .valid = true, .live_since_mono_ms = 1000, .now_mono_ms = 1000000};
static const struct keep_fencer NOT_ME = {.valid = false, .now_mono_ms = 1000000};

static struct keep_fencer fencer(bool valid, int64_t live_since, int64_t now)
{
	struct keep_fencer m = {
	    .valid = valid, .live_since_mono_ms = live_since, .now_mono_ms = now};
	return m;
}

TEST(peer_fences_after_bound)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	stale(&s, "a", IA, W0);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 4499), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_YET);
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 4500), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	CHECK_EQ_INT(d.obj.format, 3);
	CHECK_EQ_INT(d.obj.state, KEEP_NODE_FENCED);
	CHECK_EQ_STR(d.obj.instance, IA);
	CHECK_EQ_INT(d.obj.written_at_ms, W0);
	CHECK_EQ_STR(d.obj.node, "a");
	CHECK_EQ_INT(d.obj.seq, 6);
	CHECK_EQ_STR(d.obj.host, "h1");
	CHECK_EQ_STR(d.obj.fenced_by, "b");
	CHECK_EQ_INT(d.obj.fenced_at_ms, W0 + 4500);
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
}

TEST(peer_only_while_own_lease_valid)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	stale(&s, "a", IA, W0);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	keep_fence_peer_judge(&s, &NOT_ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_VALID);
}

TEST(peer_decides_on_the_read_not_the_watch)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	stale(&s, "a", IA, W0);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0 + 1000); /* a wrote since */
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "changed");
	obj(&a, "a", KEEP_NODE_LIVE, IB, W0); /* another instance, same written_at */
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	obj(&a, "a", KEEP_NODE_FENCED, IA, W0);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_ALREADY);
	obj(&a, "a", KEEP_NODE_RELEASED, IA, W0);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "released");
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_NOT_FOUND, NULL, 0, WALLS(W0 + 99999), &t, "b",
			      &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "absent");
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_AMBIGUOUS, NULL, 0, WALLS(W0 + 99999), &t, "b",
			      &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FAILED);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, NULL, KEEP_ERR_PARSE, WALLS(W0 + 99999), &t,
			      "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_BAD_OBJECT);
	obj(&a, "x", KEEP_NODE_LIVE, IA, W0); /* names another node */
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_BAD_OBJECT);
}

TEST(peer_never_fences_old_format)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	stale(&s, "a", "-", W0);
	old(&a, "a", 2, W0);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "old-format");
}

TEST(after_write_conflict)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a, r;
	struct keep_fence_decision d, d2;

	timing(&t);
	stale(&s, "a", IA, W0);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0 + 5000), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	/* a renewed in between: alive */
	obj(&r, "a", KEEP_NODE_LIVE, IA, W0 + 3000);
	keep_fence_read_back(&d.obj, KEEP_STORE_OK, &r, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_ALIVE);
	CHECK_EQ_STR(d2.reason, "wrote");
	/* a 409 from another request (or a write that never landed): the node
	 * did not write, it is not `alive` */
	keep_fence_read_back(&d.obj, KEEP_STORE_OK, &a, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_FAILED);
	CHECK_EQ_STR(d2.reason, "unchanged");
	/* another fencer landed first */
	r = d.obj;
	snprintf(r.fenced_by, sizeof(r.fenced_by), "c");
	keep_fence_read_back(&d.obj, KEEP_STORE_OK, &r, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_ALREADY);
	/* our own fence landed (ambiguous reply) */
	keep_fence_read_back(&d.obj, KEEP_STORE_OK, &d.obj, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_FENCED);
	keep_fence_read_back(&d.obj, KEEP_STORE_AMBIGUOUS, NULL, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_FAILED);
	keep_fence_read_back(&d.obj, KEEP_STORE_NOT_FOUND, NULL, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_REWATCH);
}

/* ---- operator fence ---- */

TEST(operator_fence_live_keeps_written_at)
{
	struct keep_timing t;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	/* no watch and no bound needed: written_at just now */
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, WALLS(W0 + 10), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	CHECK_EQ_STR(d.obj.instance, IA);
	CHECK_EQ_INT(d.obj.written_at_ms, W0);
	CHECK_EQ_INT(d.obj.state, KEEP_NODE_FENCED);
	CHECK_EQ_STR(d.obj.fenced_by, "operator");
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
}

TEST(operator_fence_absent_creates)
{
	struct keep_timing t;
	struct keep_fence_decision d;

	timing(&t);
	keep_fence_operator("n9", KEEP_STORE_NOT_FOUND, NULL, 0, WALLS(W0), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_CREATE);
	CHECK_EQ_STR(d.obj.instance, "-");
	CHECK_EQ_STR(d.obj.node, "n9");
	CHECK_EQ_INT(d.obj.written_at_ms, W0);
	CHECK_EQ_INT(d.obj.state, KEEP_NODE_FENCED);
	CHECK_EQ_INT(d.obj.seq, 0);
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
}

/* issue 27: without --create an absent object is refused, nothing else
 * changes */
TEST(operator_absent_needs_create)
{
	struct keep_timing t;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	keep_fence_operator("n11", KEEP_STORE_NOT_FOUND, NULL, 0, WALLS(W0), &t, &d);
	keep_fence_operator_absent(&d, false);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REFUSED);
	CHECK_EQ_STR(d.reason, "absent");
	CHECK_EQ_INT(d.free_at_ms, 0);
	keep_fence_operator("n11", KEEP_STORE_NOT_FOUND, NULL, 0, WALLS(W0), &t, &d);
	keep_fence_operator_absent(&d, true);
	CHECK_EQ_INT(d.verdict, KEEP_FV_CREATE);
	/* a live object is fenced either way */
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, WALLS(W0), &t, &d);
	keep_fence_operator_absent(&d, false);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
}

TEST(closest_ids)
{
	const char *ids[] = {"n1", "n2", "web-3", "n12", "db", "n11x"};
	size_t out[3], n;

	n = keep_fence_closest("n11", ids, 6, out, 3);
	CHECK_EQ_INT(n, 3);
	/* n1 (1: one deletion), n12 (1), n11x (1): ties in the given order */
	CHECK_EQ_STR(ids[out[0]], "n1");
	CHECK_EQ_STR(ids[out[1]], "n12");
	CHECK_EQ_STR(ids[out[2]], "n11x");
	/* a swap of two neighbours counts one */
	n = keep_fence_closest("wbe-3", ids, 6, out, 1);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_STR(ids[out[0]], "web-3");
	CHECK_EQ_INT(keep_fence_closest("n1", ids, 0, out, 3), 0);
	CHECK_EQ_INT(keep_fence_closest("n1", ids, 2, out, 3), 2);
}

TEST(operator_refuses_fence_released_old)
{
	struct keep_timing t;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	obj(&a, "a", KEEP_NODE_FENCED, IA, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, WALLS(W0), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_ALREADY);
	obj(&a, "a", KEEP_NODE_RELEASED, IA, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, WALLS(W0), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REFUSED);
	old(&a, "a", 2, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, WALLS(W0), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REFUSED);
	CHECK_EQ_STR(d.reason, "old-format");
	keep_fence_operator("a", KEEP_STORE_OK, NULL, KEEP_ERR_NOTOURS, WALLS(W0), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_BAD_OBJECT);
	keep_fence_operator("a", KEEP_STORE_REFUSED, NULL, 0, WALLS(W0), &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FAILED);
}

/* ---- free rule ---- */

TEST(free_rule)
{
	struct keep_timing t;
	struct keep_node_obj a;
	int64_t at;

	timing(&t);
	/* absent frees nothing */
	CHECK_EQ_INT(keep_node_free("a", IA, false, NULL, W0 + 99999, &t, &at), KEEP_FREE_NO);
	/* unreadable frees nothing */
	CHECK_EQ_INT(keep_node_free("a", IA, true, NULL, W0 + 99999, &t, &at), KEEP_FREE_NO);
	/* live naming i: held */
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 99999, &t, &at), KEEP_FREE_NO);
	/* live naming another instance: free at once */
	CHECK_EQ_INT(keep_node_free("a", IB, true, &a, W0, &t, &at), KEEP_FREE_YES);
	/* fenced or released naming any instance: after written_at + ttl + grace */
	obj(&a, "a", KEEP_NODE_FENCED, IB, W0);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 4499, &t, &at), KEEP_FREE_LATER);
	CHECK_EQ_INT(at, W0 + 4500);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 4500, &t, &at), KEEP_FREE_YES);
	/* the free time alone (node-watch's free_at_ms= and NOTE): the same sum */
	CHECK_EQ_INT(keep_node_free_at_ms(&a, &t), W0 + 4500);
	obj(&a, "a", KEEP_NODE_FENCED, "-", W0);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 4500, &t, NULL), KEEP_FREE_YES);
	obj(&a, "a", KEEP_NODE_RELEASED, IA, W0);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 100, &t, &at), KEEP_FREE_LATER);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 4500, &t, &at), KEEP_FREE_YES);
	/* old formats free nothing, whatever their age */
	old(&a, "a", 2, W0);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 9999999, &t, &at), KEEP_FREE_NO);
	old(&a, "a", 1, W0);
	CHECK_EQ_INT(keep_node_free("a", "-", true, &a, W0 + 9999999, &t, &at), KEEP_FREE_NO);
	/* an object naming another node frees nothing */
	obj(&a, "x", KEEP_NODE_FENCED, IA, W0);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0 + 9999999, &t, &at), KEEP_FREE_NO);
}

/* ---- after the fencer's own lapse (§2; issue 18 item 3) ---- */

/* The first stale event of w (NULL when none). */
static const struct keep_watch_event *first_stale(const struct keep_watch *w)
{
	size_t i;

	for (i = 0; i < w->nev; i++)
		if (w->ev[i].kind == KEEP_WEV_STALE)
			return &w->ev[i];
	return NULL;
}

TEST(stale_event_carries_live_since_and_watch_start)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;
	struct keep_stale s;
	const struct keep_watch_event *e;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	pass1(&w, &a, "a", 1000, true, 500); /* watch since 1000 (after live_since 500) */
	pass1(&w, &a, "a", 2800, true, 500);
	e = first_stale(&w);
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_EQ_INT(e->live_since_mono_ms, 500);
	CHECK_EQ_INT(e->watch_since_mono_ms, 1000);
	CHECK_EQ_INT(e->unchanged_ms, 1800);
	keep_stale_of_event(e, &s);
	CHECK_EQ_STR(s.node, "a");
	CHECK_EQ_STR(s.instance, IA);
	CHECK_EQ_INT(s.written_at_ms, W0);
	CHECK_EQ_INT(s.live_since_mono_ms, 500);
	CHECK_EQ_INT(s.watch_since_mono_ms, 1000);
	keep_watch_release(&w);

	/* counted from live_since when it is later than the first read */
	keep_watch_init(&w, &t, "b");
	pass1(&w, &a, "a", 1000, true, 1500);
	pass1(&w, &a, "a", 3300, true, 1500);
	e = first_stale(&w);
	CHECK(e != NULL);
	if (e) {
		CHECK_EQ_INT(e->live_since_mono_ms, 1500);
		CHECK_EQ_INT(e->watch_since_mono_ms, 1500);
		CHECK_EQ_INT(e->unchanged_ms, 1800);
	}
	keep_watch_release(&w);
}

/* The reproduction, through the core: b's stale line for a is
 * answered not-yet; b lapses and recovers at R before free_at; the retry at
 * free_at must not fence (the old decision, on self_valid alone, did), and
 * the fence comes only from a new watch, at R + write_every + attempt. */
TEST(peer_fencer_lapse_between_stale_and_free_at)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_node_obj a;
	struct keep_stale s, s2;
	struct keep_fence_decision d;
	struct keep_fencer me;
	const struct keep_watch_event *e;
	int64_t now, R = 4900;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0 + 1000); /* a's last write, wall at mono 1000 */
	pass1(&w, &a, "a", 1000, true, 500);
	pass1(&w, &a, "a", 2800, true, 500);
	e = first_stale(&w);
	CHECK(e != NULL);
	if (!e)
		return;
	keep_stale_of_event(e, &s);
	me = fencer(true, 500, 2800);
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 2800), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_YET);
	CHECK_EQ_INT(d.free_at_ms, W0 + 5500);

	/* b's own lease runs out (no stale, every watch restarts), and b
	 * recovers at R = 4900, before free_at (mono 5500) */
	pass1(&w, &a, "a", 3800, false, 0);
	CHECK(first_stale(&w) == NULL);

	/* the retry at free_at: b is valid again, but under another live period */
	me = fencer(true, R, 5500);
	CHECK(!keep_fence_peer_may(&s, &me, &t, &d));
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "own-lapse");
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 5500), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "own-lapse");
	/* the broken variant, "fence without re-watch after own lapse" (the
	 * decision on the lease's validity alone, sim/'s fence-without-rewatch):
	 * the same read fences here, at R + 600 */
	me.live_since_mono_ms = s.live_since_mono_ms;
	me.now_mono_ms = INT64_MAX - 1;
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 5500), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);

	/* the same line queued and handled late, long after every bound: its
	 * watch was before the lapse and still counts for nothing */
	me = fencer(true, R, 99999);
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "own-lapse");

	/* the watch, run again from R: no candidate before R + 1800 */
	for (now = 5800; now < R + 1800; now += 300) {
		pass1(&w, &a, "a", now, true, R);
		CHECK(first_stale(&w) == NULL);
	}
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, R), R + 1800);
	CHECK_EQ_INT(keep_watch_tick(&w, R + 1799, true, R), 0);
	CHECK(first_stale(&w) == NULL);
	CHECK_EQ_INT(keep_watch_tick(&w, R + 1800, true, R), 0);
	e = first_stale(&w);
	CHECK(e != NULL);
	if (!e)
		return;
	keep_stale_of_event(e, &s2);
	CHECK_EQ_INT(s2.live_since_mono_ms, R);
	CHECK_EQ_INT(s2.watch_since_mono_ms, R);
	me = fencer(true, R, R + 1800);
	keep_fence_peer_judge(&s2, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + R + 1800), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	CHECK_EQ_INT(d.obj.fenced_at_ms, W0 + R + 1800);
	keep_watch_release(&w);
}

TEST(peer_never_before_live_since_plus_watch)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;
	struct keep_fencer me;

	timing(&t);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	/* a line without the watcher's fields (older node-watch, by hand):
	 * counted from our own live_since alone */
	stale(&s, "a", IA, W0);
	CHECK_EQ_INT(keep_fence_earliest_mono_ms(&s, &ME, &t), 1000 + 1800);
	me = fencer(true, 7000, 8799);
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "watch-too-short");
	CHECK_EQ_INT(d.obj.state, 0); /* nothing to write */
	me.now_mono_ms = 8800;
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);

	/* a line claiming a watch that started later: counted from its start */
	s.live_since_mono_ms = 7000;
	s.watch_since_mono_ms = 9000;
	me.now_mono_ms = 10799;
	CHECK(!keep_fence_peer_may(&s, &me, &t, &d));
	CHECK_EQ_STR(d.reason, "watch-too-short");
	me.now_mono_ms = 10800;
	CHECK(keep_fence_peer_may(&s, &me, &t, &d));

	/* a watch that started before our live_since: a lapse in between */
	s.live_since_mono_ms = 0;
	s.watch_since_mono_ms = 6999;
	CHECK(!keep_fence_peer_may(&s, &me, &t, &d));
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "own-lapse");
	/* produced under an earlier (or a later) live period */
	s.watch_since_mono_ms = 0;
	s.live_since_mono_ms = 6000;
	CHECK(!keep_fence_peer_may(&s, &me, &t, &d));
	CHECK_EQ_STR(d.reason, "own-lapse");
	s.live_since_mono_ms = 7001;
	CHECK(!keep_fence_peer_may(&s, &me, &t, &d));
	CHECK_EQ_STR(d.reason, "own-lapse");

	/* not valid, or valid with no live_since: nothing */
	stale(&s, "a", IA, W0);
	me = fencer(false, 7000, 99999);
	CHECK(!keep_fence_peer_may(&s, &me, &t, &d));
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_VALID);
	me = fencer(true, 0, 99999);
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_VALID);
	CHECK_EQ_STR(d.reason, "own live_since unknown");
}

TEST(peer_hostile_line_times_saturate)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;
	struct keep_fencer me = fencer(true, 1000, INT64_MAX);

	timing(&t);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	stale(&s, "a", IA, W0);
	s.watch_since_mono_ms = INT64_MAX; /* a watch start "never": never a fence */
	CHECK_EQ_INT(keep_fence_earliest_mono_ms(&s, &me, &t), INT64_MAX);
	me.now_mono_ms = INT64_MAX - 1;
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "watch-too-short");
	s.watch_since_mono_ms = 0;
	s.live_since_mono_ms = INT64_MAX;
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_STR(d.reason, "own-lapse");
	/* our own live_since near the end of time */
	s.live_since_mono_ms = 0;
	me = fencer(true, INT64_MAX - 5, INT64_MAX);
	keep_fence_peer_judge(&s, &me, KEEP_STORE_OK, &a, 0, WALLS(W0 + 99999), &t, "b", &d);
	CHECK_EQ_STR(d.reason, "watch-too-short");
}

/* ---- time arithmetic on absurd objects (issue 18 item 4) ---- */

TEST(saturating_add_sub)
{
	CHECK_EQ_INT(keep_add_sat_ms(1, 2), 3);
	CHECK_EQ_INT(keep_add_sat_ms(INT64_MAX, 1), INT64_MAX);
	CHECK_EQ_INT(keep_add_sat_ms(INT64_MAX - 4500, 4500), INT64_MAX);
	CHECK_EQ_INT(keep_add_sat_ms(INT64_MAX - 4499, 4500), INT64_MAX);
	CHECK_EQ_INT(keep_add_sat_ms(INT64_MIN, -1), INT64_MIN);
	CHECK_EQ_INT(keep_add_sat_ms(INT64_MIN, INT64_MAX), -1);
	CHECK_EQ_INT(keep_sub_sat_ms(5, 7), -2);
	CHECK_EQ_INT(keep_sub_sat_ms(INT64_MIN, 1), INT64_MIN);
	CHECK_EQ_INT(keep_sub_sat_ms(0, INT64_MIN), INT64_MAX);
	CHECK_EQ_INT(keep_sub_sat_ms(INT64_MAX, -1), INT64_MAX);
	CHECK_EQ_INT(keep_sub_sat_ms(1, INT64_MAX), INT64_MIN + 2);
	/* the static bound leaves every deadline far inside int64 */
	CHECK(KEEP_WALL_MAX_MS + 2 * 86400000LL < INT64_MAX / 2);
}

/* The core never overflows on a time it is handed, even one no decoder
 * would pass (the bound at decode is the first line; this is the second). */
TEST(absurd_written_at_never_frees_or_overflows)
{
	struct keep_timing t;
	struct keep_node_obj a;
	struct keep_stale s;
	struct keep_fence_decision d;
	struct keep_watch w;
	int64_t at;

	timing(&t);
	/* fenced / released at INT64_MAX: LATER, at "never", not free */
	obj(&a, "a", KEEP_NODE_FENCED, IB, INT64_MAX);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0, &t, &at), KEEP_FREE_LATER);
	CHECK_EQ_INT(at, INT64_MAX);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, INT64_MAX, &t, &at), KEEP_FREE_LATER);
	obj(&a, "a", KEEP_NODE_RELEASED, IA, INT64_MAX - 100);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0, &t, &at), KEEP_FREE_LATER);
	CHECK_EQ_INT(at, INT64_MAX);
	/* live naming the record's instance: held, whatever its written_at */
	obj(&a, "a", KEEP_NODE_LIVE, IA, INT64_MAX);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, W0, &t, &at), KEEP_FREE_NO);
	obj(&a, "a", KEEP_NODE_LIVE, IA, 1);
	CHECK_EQ_INT(keep_node_free("a", IA, true, &a, INT64_MAX, &t, &at), KEEP_FREE_NO);

	/* the peer fence: not-yet, free at "never" */
	obj(&a, "a", KEEP_NODE_LIVE, IA, INT64_MAX);
	stale(&s, "a", IA, INT64_MAX);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_YET);
	CHECK_EQ_INT(d.free_at_ms, INT64_MAX);
	/* already fenced, and the operator's view */
	obj(&a, "a", KEEP_NODE_FENCED, IA, INT64_MAX);
	keep_fence_peer_judge(&s, &ME, KEEP_STORE_OK, &a, 0, WALLS(W0), &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_ALREADY);
	CHECK_EQ_INT(d.free_at_ms, INT64_MAX);
	keep_fence_operator("a", KEEP_STORE_NOT_FOUND, NULL, 0, WALLS(INT64_MAX - 1), &t, &d);
	CHECK_EQ_INT(d.free_at_ms, INT64_MAX);
	/* the free time alone saturates: never */
	obj(&a, "a", KEEP_NODE_RELEASED, IA, INT64_MAX - 1);
	CHECK_EQ_INT(keep_node_free_at_ms(&a, &t), INT64_MAX);

	/* status: an old heartbeat at either end of time */
	old(&a, "a", 1, INT64_MAX);
	CHECK_EQ_INT(keep_node_status(&a, INT64_MIN, &t, false), KEEP_STATUS_OLD_RUNNING);
	CHECK_EQ_INT(keep_node_status(&a, W0, &t, false), KEEP_STATUS_OLD_RUNNING);
	old(&a, "a", 1, 1);
	CHECK_EQ_INT(keep_node_status(&a, INT64_MAX, &t, false), KEEP_STATUS_OLD_RETIRED);

	/* the watch, with monotonic times near the end of time */
	keep_watch_init(&w, &t, "b");
	obj(&a, "a", KEEP_NODE_LIVE, IA, INT64_MAX);
	{
		struct keep_watch_input in = {.node = "a", .readable = true, .obj = &a};
		CHECK_EQ_INT(
		    keep_watch_pass(&w, &in, 1, INT64_MAX - 1000, W0, true, INT64_MAX - 2000), 0);
	}
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, INT64_MAX - 2000), INT64_MAX);
	CHECK_EQ_INT(keep_watch_tick(&w, INT64_MAX - 1, true, INT64_MAX - 2000), 0);
	CHECK(first_stale(&w) == NULL);
	keep_watch_release(&w);
}

/* node-watch's age_ms and ahead_ms: one is 0 whenever the other is not;
 * absurd dates saturate instead of wrapping. */
TEST(node_age_and_ahead)
{
	int64_t age, ahead;

	keep_node_age(1000, 4500, &age, &ahead);
	CHECK_EQ_INT(age, 3500);
	CHECK_EQ_INT(ahead, 0);
	keep_node_age(4500, 1000, &age, &ahead);
	CHECK_EQ_INT(age, 0);
	CHECK_EQ_INT(ahead, 3500);
	keep_node_age(1000, 1000, &age, &ahead);
	CHECK_EQ_INT(age, 0);
	CHECK_EQ_INT(ahead, 0);
	keep_node_age(INT64_MIN, INT64_MAX, &age, &ahead);
	CHECK(age == INT64_MAX);
	CHECK_EQ_INT(ahead, 0);
	keep_node_age(INT64_MAX, INT64_MIN, &age, &ahead);
	CHECK_EQ_INT(age, 0);
	CHECK(ahead == INT64_MAX);
}

int main(void)
{
	RUN(status_format3_states);
	RUN(status_old_format_running_or_retired);
	RUN(watch_join_then_stale_after_period_plus_attempt);
	RUN(watch_renewal_restarts_the_watch);
	RUN(watch_same_written_at_new_instance_restarts);
	RUN(watch_counts_from_own_live_since);
	RUN(watch_not_valid_no_stale_and_restart);
	RUN(watch_never_stale_self_nonlive_old_unreadable);
	RUN(watch_no_self_never_stale);
	RUN(watch_failed_read_keeps_watch_no_stale);
	RUN(watch_change_and_leave);
	RUN(watch_old_format_rewritten_is_running);
	RUN(peer_fences_after_bound);
	RUN(peer_only_while_own_lease_valid);
	RUN(peer_decides_on_the_read_not_the_watch);
	RUN(peer_never_fences_old_format);
	RUN(after_write_conflict);
	RUN(operator_fence_live_keeps_written_at);
	RUN(operator_fence_absent_creates);
	RUN(operator_absent_needs_create);
	RUN(closest_ids);
	RUN(operator_refuses_fence_released_old);
	RUN(free_rule);
	RUN(stale_event_carries_live_since_and_watch_start);
	RUN(peer_fencer_lapse_between_stale_and_free_at);
	RUN(peer_never_before_live_since_plus_watch);
	RUN(peer_hostile_line_times_saturate);
	RUN(saturating_add_sub);
	RUN(absurd_written_at_never_frees_or_overflows);
	RUN(node_age_and_ahead);
	return unit_done();
}
