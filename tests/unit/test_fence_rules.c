/* Unit tests: the rules of ADR 0020 §2 that fence.c and fencer.c decide
 * in one function each (docs/design.md, "Where each rule of ADR 0020
 * lives"; issue 25): one test per function. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/core/fence.h"
#include "../../lib/core/fencer.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"
#define W0 1700000000000LL

/* ttl 3000, grace 1500, safety 600, skew 300, period 1000:
 * write_every 1000, attempt 800, takeover 4500 */
static void timing(struct keep_timing *t)
{
	memset(t, 0, sizeof(*t));
	t->ttl_ms = 3000;
	t->grace_ms = 1500;
	t->safety_ms = 600;
	t->max_skew_ms = 300;
	t->period_ms = 1000;
}

static void live_obj(struct keep_node_obj *o, const char *inst, int64_t written_at)
{
	memset(o, 0, sizeof(*o));
	o->format = 3;
	o->state = KEEP_NODE_LIVE;
	snprintf(o->instance, sizeof(o->instance), "%s", inst);
	o->written_at_ms = written_at;
	snprintf(o->node, sizeof(o->node), "a");
}

/* A live format-3 peer "a" of a watch by "b", first seen at since. */
static void live_peer(struct keep_watch_peer *p, int64_t since)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->node, sizeof(p->node), "a");
	p->readable = true;
	p->format = 3;
	p->status = KEEP_STATUS_LIVE;
	snprintf(p->instance, sizeof(p->instance), IA);
	p->written_at_ms = W0;
	p->since_mono_ms = since;
	p->watched = true;
}

TEST(line_lapsed_on_another_live_period)
{
	struct keep_stale st;
	struct keep_fencer me = {.valid = true, .live_since_mono_ms = 5000, .now_mono_ms = 9000};

	memset(&st, 0, sizeof(st));
	CHECK(!keep_fence_peer_line_lapsed(&st, &me)); /* a line without them */
	st.live_since_mono_ms = 5000;
	st.watch_since_mono_ms = 5000;
	CHECK(!keep_fence_peer_line_lapsed(&st, &me));
	st.watch_since_mono_ms = 6000; /* a watch started after live_since */
	CHECK(!keep_fence_peer_line_lapsed(&st, &me));
	st.live_since_mono_ms = 4000; /* produced under an earlier live period */
	CHECK(keep_fence_peer_line_lapsed(&st, &me));
	st.live_since_mono_ms = 0;
	st.watch_since_mono_ms = 4999; /* a watch from before this live period */
	CHECK(keep_fence_peer_line_lapsed(&st, &me));
	/* and keep_fence_peer_may drops it as own-lapse */
	{
		struct keep_timing t;
		struct keep_fence_decision d;

		timing(&t);
		me.now_mono_ms = 100000;
		CHECK(!keep_fence_peer_may(&st, &me, &t, &d));
		CHECK_EQ_INT(d.verdict, KEEP_FV_REWATCH);
		CHECK_EQ_STR(d.reason, "own-lapse");
	}
}

TEST(watch_stale_due_from_the_later_start)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_watch_peer p;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	live_peer(&p, 10000);
	/* write_every + attempt_timeout = 1800 after the later of the two */
	CHECK_EQ_INT(keep_watch_stale_due_mono_ms(&w, &p, 2000), 11800);
	CHECK_EQ_INT(keep_watch_stale_due_mono_ms(&w, &p, 12000), 13800);
	/* once a candidate, again a write_every after the last line */
	p.last_stale_mono_ms = 20000;
	CHECK_EQ_INT(keep_watch_stale_due_mono_ms(&w, &p, 2000), 21000);
	/* saturated: never */
	p.last_stale_mono_ms = 0;
	p.since_mono_ms = INT64_MAX - 5;
	CHECK_EQ_INT(keep_watch_stale_due_mono_ms(&w, &p, 0), INT64_MAX);
	keep_watch_release(&w);
}

TEST(watch_peer_judged_only_when_looked_at)
{
	struct keep_timing t;
	struct keep_watch w;
	struct keep_watch_peer p;

	timing(&t);
	keep_watch_init(&w, &t, "b");
	live_peer(&p, 0);
	CHECK(keep_watch_peer_judged(&w, &p, false)); /* watched, read since */
	CHECK(keep_watch_peer_judged(&w, &p, true));
	p.unread = true; /* watched, but no pass looked at it yet */
	CHECK(!keep_watch_peer_judged(&w, &p, false));
	CHECK(keep_watch_peer_judged(&w, &p, true)); /* this pass observed it */
	p.unread = false;
	p.watched = false; /* ring mode, not a successor */
	CHECK(!keep_watch_peer_judged(&w, &p, false));
	CHECK(keep_watch_peer_judged(&w, &p, true));
	/* never one that cannot be fenced */
	p.watched = true;
	p.read_failed = true;
	CHECK(!keep_watch_peer_judged(&w, &p, true));
	p.read_failed = false;
	p.status = KEEP_STATUS_FENCED;
	CHECK(!keep_watch_peer_judged(&w, &p, true));
	p.status = KEEP_STATUS_LIVE;
	p.format = 2;
	CHECK(!keep_watch_peer_judged(&w, &p, true));
	p.format = 3;
	p.readable = false;
	CHECK(!keep_watch_peer_judged(&w, &p, true));
	p.readable = true;
	snprintf(p.node, sizeof(p.node), "b"); /* this node */
	CHECK(!keep_watch_peer_judged(&w, &p, true));
	keep_watch_release(&w);
}

TEST(watch_observed_write_is_a_newer_body)
{
	struct keep_watch_peer p;
	struct keep_watch_input x;
	struct keep_node_obj o;

	live_peer(&p, 0);
	live_obj(&o, IA, W0);
	memset(&x, 0, sizeof(x));
	x.node = "a";
	x.readable = true;
	x.obj = &o;
	CHECK(!keep_watch_observed_write(&p, &x)); /* the same body */
	o.written_at_ms = W0 + 1000;
	CHECK(keep_watch_observed_write(&p, &x)); /* a newer written_at */
	p.noticed_written_at_ms = W0 + 1000;
	CHECK(!keep_watch_observed_write(&p, &x)); /* noticed already */
	o.written_at_ms = W0;
	snprintf(o.instance, sizeof(o.instance), IB);
	CHECK(keep_watch_observed_write(&p, &x)); /* another instance */
	x.wrote = true;				  /* a changed token is not a body */
	CHECK(!keep_watch_observed_write(&p, &x));
	x.wrote = false;
	o.format = 2;
	CHECK(!keep_watch_observed_write(&p, &x));
	o.format = 3;
	x.readable = false;
	x.obj = NULL;
	CHECK(!keep_watch_observed_write(&p, &x));
}

TEST(peer_step_order_of_phases)
{
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_MAY, true), KEEP_FNP_READ);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_READ, true), KEEP_FNP_JUDGE);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_JUDGE, true), KEEP_FNP_MAY_AGAIN);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_MAY_AGAIN, true), KEEP_FNP_WRITE);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_WRITE, true), KEEP_FNP_REREAD);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_REREAD, true), KEEP_FNP_DONE);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_MAY, false), KEEP_FNP_DONE);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_MAY_AGAIN, false), KEEP_FNP_DONE);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_WRITE, false), KEEP_FNP_DONE);
	CHECK_EQ_INT(keep_fencer_peer_step(KEEP_FNP_DONE, true), KEEP_FNP_DONE);
}

TEST(not_yet_retry_at_free_at_plus_one)
{
	struct keep_timing t;
	int64_t until = -1;

	timing(&t);
	/* free_at 700 ms ahead on the judging clock: at now + 701 */
	CHECK(keep_fencer_not_yet_retry_at(1, W0 + 700, W0, 5000, &t, &until));
	CHECK_EQ_INT(until, 5701);
	/* free_at passed already: at once + 1 */
	CHECK(keep_fencer_not_yet_retry_at(3, W0 - 50, W0, 5000, &t, &until));
	CHECK_EQ_INT(until, 5001);
	/* at most takeover + max_skew (4800) ahead */
	CHECK(keep_fencer_not_yet_retry_at(1, W0 + 4800, W0, 5000, &t, &until));
	CHECK_EQ_INT(until, 9801);
	until = -1;
	CHECK(!keep_fencer_not_yet_retry_at(1, W0 + 4801, W0, 5000, &t, &until));
	CHECK_EQ_INT(until, -1);
	/* three retries at most */
	CHECK(!keep_fencer_not_yet_retry_at(KEEP_FENCER_NOT_YET_RETRIES + 1, W0 + 10, W0, 5000, &t,
					    &until));
	CHECK_EQ_INT(until, -1);
	/* a saturated free_at is never waited for */
	CHECK(!keep_fencer_not_yet_retry_at(1, INT64_MAX, W0, 5000, &t, &until));
}

TEST(operator_five_tries_in_all)
{
	int tries = 0, fresh = 1;

	CHECK_EQ_INT(KEEP_FENCER_OPERATOR_TRIES, 5);
	while (keep_fencer_operator_try_again(++tries))
		fresh++;
	CHECK_EQ_INT(fresh, 5);
	CHECK(keep_fencer_operator_try_again(4));
	CHECK(!keep_fencer_operator_try_again(5));
}

TEST(closest_listed_ids)
{
	const char *keys[600] = {0};
	char names[600][16];
	const char *best[KEEP_FENCER_CLOSEST];
	size_t total = 99, i, got;

	got = keep_fencer_closest_listed("web-1", keys, 0, best, &total);
	CHECK_EQ_INT(got, 0);
	CHECK_EQ_INT(total, 0);
	for (i = 0; i < 600; i++) {
		snprintf(names[i], sizeof(names[i]), "nodes/n%03zu", i);
		keys[i] = names[i];
	}
	snprintf(names[10], sizeof(names[10]), "nodes/web-2");
	snprintf(names[400], sizeof(names[400]), "nodes/web-1x");
	snprintf(names[599], sizeof(names[599]), "nodes/web1");
	snprintf(names[20], sizeof(names[20]), "other/web-1"); /* not a node object */
	snprintf(names[21], sizeof(names[21]), "nodes/a/b");   /* deeper: not one */
	got = keep_fencer_closest_listed("web-1", keys, 600, best, &total);
	CHECK_EQ_INT(got, 3);
	CHECK_EQ_INT(total, 598);
	/* distance 1 each, ties in listing order, across windows of 256 */
	CHECK_EQ_STR(best[0], "web-2");
	CHECK_EQ_STR(best[1], "web-1x");
	CHECK_EQ_STR(best[2], "web1");
}

int main(void)
{
	RUN(line_lapsed_on_another_live_period);
	RUN(watch_stale_due_from_the_later_start);
	RUN(watch_peer_judged_only_when_looked_at);
	RUN(watch_observed_write_is_a_newer_body);
	RUN(peer_step_order_of_phases);
	RUN(not_yet_retry_at_free_at_plus_one);
	RUN(operator_five_tries_in_all);
	RUN(closest_listed_ids);
	return unit_done();
}
