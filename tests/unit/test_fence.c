/* Unit tests: fencing and membership decisions (lib/core/fence.c, ADR 0020 §2, §6). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/core/fence.h"
#include "../../lib/err.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"
#define W0 1700000000000LL

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

TEST(peer_fences_after_bound)
{
	struct keep_timing t;
	struct keep_stale s;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	stale(&s, "a", IA, W0);
	obj(&a, "a", KEEP_NODE_LIVE, IA, W0);
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 4499, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_YET);
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 4500, &t, "b", &d);
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
	keep_fence_peer_decide(&s, false, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
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
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "changed");
	obj(&a, "a", KEEP_NODE_LIVE, IB, W0); /* another instance, same written_at */
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	obj(&a, "a", KEEP_NODE_FENCED, IA, W0);
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_ALREADY);
	obj(&a, "a", KEEP_NODE_RELEASED, IA, W0);
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "released");
	keep_fence_peer_decide(&s, true, KEEP_STORE_NOT_FOUND, NULL, 0, W0 + 99999, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
	CHECK_EQ_STR(d.reason, "absent");
	keep_fence_peer_decide(&s, true, KEEP_STORE_AMBIGUOUS, NULL, 0, W0 + 99999, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FAILED);
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, NULL, KEEP_ERR_PARSE, W0 + 99999, &t, "b",
			       &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_BAD_OBJECT);
	obj(&a, "x", KEEP_NODE_LIVE, IA, W0); /* names another node */
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
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
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 99999, &t, "b", &d);
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
	keep_fence_peer_decide(&s, true, KEEP_STORE_OK, &a, 0, W0 + 5000, &t, "b", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	/* a renewed in between: alive */
	obj(&r, "a", KEEP_NODE_LIVE, IA, W0 + 3000);
	keep_fence_after_write(&d.obj, KEEP_STORE_OK, &r, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_ALIVE);
	CHECK_EQ_STR(d2.reason, "wrote");
	/* a 409 from another request (or a write that never landed): the node
	 * did not write, it is not `alive` */
	keep_fence_after_write(&d.obj, KEEP_STORE_OK, &a, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_FAILED);
	CHECK_EQ_STR(d2.reason, "unchanged");
	/* another fencer landed first */
	r = d.obj;
	snprintf(r.fenced_by, sizeof(r.fenced_by), "c");
	keep_fence_after_write(&d.obj, KEEP_STORE_OK, &r, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_ALREADY);
	/* our own fence landed (ambiguous reply) */
	keep_fence_after_write(&d.obj, KEEP_STORE_OK, &d.obj, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_FENCED);
	keep_fence_after_write(&d.obj, KEEP_STORE_AMBIGUOUS, NULL, 0, &t, &d2);
	CHECK_EQ_INT(d2.verdict, KEEP_FV_FAILED);
	keep_fence_after_write(&d.obj, KEEP_STORE_NOT_FOUND, NULL, 0, &t, &d2);
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
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, W0 + 10, &t, &d);
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
	keep_fence_operator("n9", KEEP_STORE_NOT_FOUND, NULL, 0, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_CREATE);
	CHECK_EQ_STR(d.obj.instance, "-");
	CHECK_EQ_STR(d.obj.node, "n9");
	CHECK_EQ_INT(d.obj.written_at_ms, W0);
	CHECK_EQ_INT(d.obj.state, KEEP_NODE_FENCED);
	CHECK_EQ_INT(d.obj.seq, 0);
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
}

TEST(operator_refuses_fence_released_old)
{
	struct keep_timing t;
	struct keep_node_obj a;
	struct keep_fence_decision d;

	timing(&t);
	obj(&a, "a", KEEP_NODE_FENCED, IA, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_ALREADY);
	obj(&a, "a", KEEP_NODE_RELEASED, IA, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REFUSED);
	old(&a, "a", 2, W0);
	keep_fence_operator("a", KEEP_STORE_OK, &a, 0, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_REFUSED);
	CHECK_EQ_STR(d.reason, "old-format");
	keep_fence_operator("a", KEEP_STORE_OK, NULL, KEEP_ERR_NOTOURS, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_BAD_OBJECT);
	keep_fence_operator("a", KEEP_STORE_REFUSED, NULL, 0, W0, &t, &d);
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
	RUN(operator_refuses_fence_released_old);
	RUN(free_rule);
	return unit_done();
}
