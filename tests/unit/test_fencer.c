/* Unit tests: the fencer machine (lib/core/fencer.c, ADR 0020 §2): one
 * test per rule it owns. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/err.h"
#include "../../lib/base/exitcode.h"
#include "../../lib/core/fencer.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"
#define W0 1700000000000LL
#define M0 100000LL /* the fencer's steady clock at its first step */

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

static void live(struct keep_node_obj *o, const char *inst, int64_t written_at)
{
	memset(o, 0, sizeof(*o));
	o->format = 3;
	o->state = KEEP_NODE_LIVE;
	snprintf(o->instance, sizeof(o->instance), "%s", inst);
	o->written_at_ms = written_at;
	snprintf(o->node, sizeof(o->node), "a");
	o->seq = 5;
	snprintf(o->host, sizeof(o->host), "h1");
	o->pid = 42;
}

/* A peer fence of node a (instance IA, written_at W0), watched by b since
 * its live_since 1000. */
static void peer(struct keep_fencer_m *m)
{
	struct keep_fencer_cfg c;

	memset(&c, 0, sizeof(c));
	c.mode = KEEP_FENCER_PEER;
	timing(&c.t);
	snprintf(c.st.node, sizeof(c.st.node), "a");
	snprintf(c.st.instance, sizeof(c.st.instance), IA);
	c.st.written_at_ms = W0;
	c.st.live_since_mono_ms = 1000;
	c.st.watch_since_mono_ms = 1000;
	snprintf(c.self, sizeof(c.self), "b");
	keep_fencer_init(m, &c);
}

static void oper(struct keep_fencer_m *m, bool create)
{
	struct keep_fencer_cfg c;

	memset(&c, 0, sizeof(c));
	c.mode = KEEP_FENCER_OPERATOR;
	timing(&c.t);
	snprintf(c.node, sizeof(c.node), "a");
	c.create = create;
	keep_fencer_init(m, &c);
}

static struct keep_fencer ME_OK = {true, 1000, M0};
static struct keep_fencer ME_LOST = {false, 0, M0};

static enum keep_fencer_act_kind next(struct keep_fencer_m *m, int64_t mono,
				      const struct keep_walls *w, struct keep_fencer_action *a)
{
	keep_fencer_next(m, mono, w, a);
	return a->kind;
}

static void on_read(struct keep_fencer_m *m, enum keep_outcome o, const struct keep_node_obj *obj,
		    const struct keep_walls *w)
{
	struct keep_fencer_read r = {o, false, "v1", o == KEEP_STORE_OK ? NULL : "boom", obj, 0};

	keep_fencer_on_read(m, &r, w);
}

/* The last LINE event of the step, or NULL. */
static const char *line_of(struct keep_fencer_m *m, struct keep_fencer_event *e)
{
	const char *type = NULL;
	struct keep_fencer_event x;

	while (keep_fencer_poll_event(m, &x))
		if (x.kind == KEEP_FNE_LINE) {
			*e = x;
			type = x.type;
		}
	return type;
}

/* Rule: the peer's steps are may -> read -> judge (on the lease read
 * after the read) -> may -> write; the fenced line carries the time the
 * write was allowed at and the live period it was judged under. */
TEST(peer_step_order)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_node_obj o;
	struct keep_walls w = {W0 + 5000, W0 + 4600};
	struct keep_fencer late = {true, 1000, M0 + 7};

	peer(&m);
	live(&o, IA, W0);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_LEASE);
	keep_fencer_on_lease(&m, &ME_OK, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ);
	CHECK_EQ_STR(a.node, "a");
	CHECK_EQ_INT(a.timeout_ms, 800);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_LEASE); /* the judgement's lease */
	keep_fencer_on_lease(&m, &ME_OK, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_LEASE); /* may, right before the write */
	keep_fencer_on_lease(&m, &late, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_WRITE);
	CHECK_EQ_INT(a.cond, KEEP_COND_IF_MATCH);
	CHECK_EQ_STR(a.if_match, "v1");
	CHECK_EQ_INT(a.obj.state, KEEP_NODE_FENCED);
	CHECK_EQ_STR(a.obj.fenced_by, "b");
	CHECK_EQ_INT(a.obj.fenced_at_ms, W0 + 5000); /* dated on the wall clock */
	keep_fencer_on_write(&m, KEEP_STORE_OK, NULL);
	CHECK_EQ_STR(line_of(&m, &e), "fenced");
	CHECK(e.landed);
	CHECK(e.at);
	CHECK_EQ_INT(e.decided_mono_ms, M0 + 7);
	CHECK_EQ_INT(e.live_since_mono_ms, 1000);
	CHECK_EQ_INT(e.free_at_ms, W0 + 4500);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
}

/* Rule: nothing is read while this node's own lease is not valid. */
TEST(peer_not_valid_skips)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_walls w = {W0 + 5000, W0 + 5000};

	peer(&m);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_LEASE);
	keep_fencer_on_lease(&m, &ME_LOST, &w);
	CHECK_EQ_STR(line_of(&m, &e), "skipped");
	CHECK(!e.landed);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
}

/* Rule: the lease is asked again right before the write; lost: no write. */
TEST(peer_may_again_before_write)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_node_obj o;
	struct keep_walls w = {W0 + 5000, W0 + 5000};

	peer(&m);
	live(&o, IA, W0);
	next(&m, M0, &w, &a);
	keep_fencer_on_lease(&m, &ME_OK, &w);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	next(&m, M0, &w, &a);
	keep_fencer_on_lease(&m, &ME_OK, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_LEASE);
	keep_fencer_on_lease(&m, &ME_LOST, &w);
	CHECK_EQ_STR(line_of(&m, &e), "skipped");
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
}

/* Drive a peer fence up to its write. */
static void to_write(struct keep_fencer_m *m, const struct keep_walls *w)
{
	struct keep_fencer_action a;
	struct keep_node_obj o;

	peer(m);
	live(&o, IA, W0);
	next(m, M0, w, &a);
	keep_fencer_on_lease(m, &ME_OK, w);
	next(m, M0, w, &a);
	on_read(m, KEEP_STORE_OK, &o, w);
	next(m, M0, w, &a);
	keep_fencer_on_lease(m, &ME_OK, w);
	next(m, M0, w, &a);
	keep_fencer_on_lease(m, &ME_OK, w);
	next(m, M0, w, &a);
}

/* Rule: a fence that failed its condition is read once more, and the line
 * says what that read shows: unchanged -> failed conflict-unchanged. */
TEST(peer_conflict_reread)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_node_obj o;
	struct keep_walls w = {W0 + 5000, W0 + 5000};

	to_write(&m, &w);
	keep_fencer_on_write(&m, KEEP_STORE_CONFLICT, "412");
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ);
	live(&o, IA, W0);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	CHECK_EQ_STR(line_of(&m, &e), "failed");
	CHECK_EQ_STR(e.reason, "conflict-unchanged");
	CHECK(!e.landed);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
}

/* Rule: an ambiguous fence is read back; our own fence there: fenced;
 * the node's own new write: alive. */
TEST(peer_ambiguous_readback)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_node_obj o;
	struct keep_walls w = {W0 + 5000, W0 + 5000};

	to_write(&m, &w);
	keep_fencer_next(&m, M0, &w, &a);
	CHECK_EQ_INT(a.kind, KEEP_FNA_WRITE);
	o = a.obj;
	keep_fencer_on_write(&m, KEEP_STORE_AMBIGUOUS, "timeout");
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	CHECK_EQ_STR(line_of(&m, &e), "fenced");
	CHECK(e.landed);
	CHECK_EQ_INT(e.free_at_ms, W0 + 4500);

	to_write(&m, &w);
	keep_fencer_on_write(&m, KEEP_STORE_AMBIGUOUS, "timeout");
	next(&m, M0, &w, &a);
	live(&o, IA, W0 + 1000);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	CHECK_EQ_STR(line_of(&m, &e), "alive");
	CHECK(!e.landed);
}

/* Run a peer fence to its first judgement at walls w (a not-yet). */
static void to_not_yet(struct keep_fencer_m *m, int64_t mono, const struct keep_walls *w)
{
	struct keep_fencer_action a;
	struct keep_node_obj o;
	struct keep_fencer me = ME_OK;

	me.now_mono_ms = mono;
	live(&o, IA, W0);
	next(m, mono, w, &a);
	keep_fencer_on_lease(m, &me, w);
	next(m, mono, w, &a);
	on_read(m, KEEP_STORE_OK, &o, w);
	next(m, mono, w, &a);
	keep_fencer_on_lease(m, &me, w);
}

/* Rule: a not-yet is decided again on a fresh read at free_at + 1 on the
 * judging clock (here 1000 ms behind the wall clock). */
TEST(peer_not_yet_retry_at_free_at)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_walls w = {W0 + 4000, W0 + 3000}; /* free_at W0 + 4500 */

	peer(&m);
	to_not_yet(&m, M0, &w);
	CHECK_EQ_STR(line_of(&m, &e), "not-yet");
	CHECK_EQ_INT(e.free_at_ms, W0 + 4500);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_WAIT);
	CHECK_EQ_INT(a.until_mono_ms, M0 + 1501);
	CHECK_EQ_INT(next(&m, M0 + 1500, &w, &a), KEEP_FNA_WAIT);
	CHECK_EQ_INT(next(&m, M0 + 1501, &w, &a), KEEP_FNA_LEASE); /* a new decision */
	keep_fencer_on_lease(&m, &ME_OK, &w);
	CHECK_EQ_INT(next(&m, M0 + 1501, &w, &a), KEEP_FNA_READ);
}

/* Rule: a free_at further than takeover + max_skew away is not waited for. */
TEST(peer_not_yet_bound)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	/* free_at W0 + 4500: 4801 ms away on the judging clock (> 4500 + 300) */
	struct keep_walls w = {W0 - 301, W0 - 301};
	struct keep_walls w2 = {W0 - 300, W0 - 300};

	peer(&m);
	to_not_yet(&m, M0, &w);
	CHECK_EQ_STR(line_of(&m, &e), "not-yet");
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
	peer(&m);
	to_not_yet(&m, M0, &w2);
	CHECK_EQ_INT(next(&m, M0, &w2, &a), KEEP_FNA_WAIT);
	CHECK_EQ_INT(a.until_mono_ms, M0 + 4801);
}

/* Rule: at most KEEP_FENCER_NOT_YET_RETRIES decisions again after the first. */
TEST(peer_not_yet_retries)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_walls w = {W0 + 4000, W0 + 4000};
	int64_t mono = M0;
	int i;

	peer(&m);
	for (i = 0; i <= KEEP_FENCER_NOT_YET_RETRIES; i++) {
		to_not_yet(&m, mono, &w);
		if (i < KEEP_FENCER_NOT_YET_RETRIES) {
			CHECK_EQ_INT(next(&m, mono, &w, &a), KEEP_FNA_WAIT);
			mono = a.until_mono_ms;
		}
	}
	CHECK_EQ_INT(next(&m, mono, &w, &a), KEEP_FNA_DONE);
	CHECK_EQ_INT(m.decisions, KEEP_FENCER_NOT_YET_RETRIES + 1);
}

/* Rule: the operator fences over its read (If-Match), dated on the wall. */
TEST(operator_fences)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_node_obj o;
	struct keep_walls w = {W0 + 10, W0 - 990};

	oper(&m, false);
	live(&o, IA, W0);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_WRITE);
	CHECK_EQ_INT(a.cond, KEEP_COND_IF_MATCH);
	CHECK_EQ_STR(a.if_match, "v1");
	CHECK_EQ_STR(a.obj.fenced_by, "operator");
	CHECK_EQ_INT(a.obj.fenced_at_ms, W0 + 10);
	keep_fencer_on_write(&m, KEEP_STORE_OK, NULL);
	CHECK_EQ_STR(line_of(&m, &e), "fenced");
	CHECK(e.landed);
	CHECK_EQ_STR(e.instance, IA);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
	CHECK_EQ_INT(m.exit_code, KEEP_EXIT_OK);
	CHECK_EQ_STR(m.text, "");
}

/* Rule: a conflict is decided again on a fresh read, 5 tries in all, then
 * exit 111 naming the last failure. */
TEST(operator_five_tries)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_node_obj o;
	struct keep_walls w = {W0, W0};
	int i;

	oper(&m, false);
	live(&o, IA, W0);
	for (i = 0; i < KEEP_FENCER_OPERATOR_TRIES; i++) {
		CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ);
		on_read(&m, KEEP_STORE_OK, &o, &w);
		CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_WRITE);
		keep_fencer_on_write(&m, KEEP_STORE_CONFLICT, "412 try");
	}
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
	CHECK_EQ_INT(m.exit_code, KEEP_EXIT_TEMP);
	CHECK(strstr(m.text, "5 fences did not land (the last: conflict: 412 try)") != NULL);
}

/* Rule: an ambiguous operator fence is read back once: ours -> fenced;
 * the read-back failing too -> exit 111; unchanged -> a fresh try. */
TEST(operator_readback)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_node_obj o, sent;
	struct keep_walls w = {W0, W0};

	oper(&m, false);
	live(&o, IA, W0);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	next(&m, M0, &w, &a);
	sent = a.obj;
	keep_fencer_on_write(&m, KEEP_STORE_AMBIGUOUS, "timeout");
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ);
	on_read(&m, KEEP_STORE_OK, &o, &w);		   /* unchanged: not landed */
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_READ); /* try 2 */
	on_read(&m, KEEP_STORE_OK, &o, &w);
	next(&m, M0, &w, &a);
	keep_fencer_on_write(&m, KEEP_STORE_AMBIGUOUS, "timeout");
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_OK, &sent, &w);
	CHECK_EQ_STR(line_of(&m, &e), "fenced");
	CHECK(e.landed);
	CHECK_EQ_INT(m.exit_code, KEEP_EXIT_OK);

	oper(&m, false);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	next(&m, M0, &w, &a);
	keep_fencer_on_write(&m, KEEP_STORE_AMBIGUOUS, "timeout");
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_AMBIGUOUS, NULL, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
	CHECK_EQ_INT(m.exit_code, KEEP_EXIT_TEMP);
	CHECK(strstr(m.text, "read-back failed") != NULL);
}

/* Rule: a write the store refused ends it (exit 1), never retried. */
TEST(operator_refused_write)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_node_obj o;
	struct keep_walls w = {W0, W0};

	oper(&m, false);
	live(&o, IA, W0);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_OK, &o, &w);
	next(&m, M0, &w, &a);
	keep_fencer_on_write(&m, KEEP_STORE_REFUSED, "403");
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
	CHECK_EQ_INT(m.exit_code, KEEP_EXIT_NO);
}

/* Rule: an absent node without --create: refused, one LIST, the closest
 * known ids named, nothing written. */
TEST(operator_absent_refused)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_walls w = {W0, W0};
	const char *keys[] = {"nodes/zzzzz", "nodes/b", "nodes/ab", "nodes/.bad", "nodes/aa"};

	oper(&m, false);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_NOT_FOUND, NULL, &w);
	CHECK_EQ_STR(line_of(&m, &e), "refused");
	CHECK_EQ_STR(e.reason, "absent");
	CHECK_EQ_INT(e.written_at_ms, 0);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_LIST);
	keep_fencer_on_list(&m, KEEP_STORE_OK, NULL, keys, 5);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_DONE);
	CHECK_EQ_INT(m.exit_code, KEEP_EXIT_NO);
	CHECK(strstr(m.text, "closest to a: b, ab, aa (of 4)") != NULL);

	oper(&m, false);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_NOT_FOUND, NULL, &w);
	next(&m, M0, &w, &a);
	keep_fencer_on_list(&m, KEEP_STORE_AMBIGUOUS, "timeout", NULL, 0);
	CHECK(strstr(m.text, "unknown: the listing of nodes/ failed: ambiguous: timeout") != NULL);
}

/* Rule: with --create, a fence is created over an absent node
 * (If-None-Match), dated on the wall clock, never the judging clock. */
TEST(operator_absent_create)
{
	struct keep_fencer_m m;
	struct keep_fencer_action a;
	struct keep_fencer_event e;
	struct keep_walls w = {W0, W0 - 5000};

	oper(&m, true);
	next(&m, M0, &w, &a);
	on_read(&m, KEEP_STORE_NOT_FOUND, NULL, &w);
	CHECK_EQ_INT(next(&m, M0, &w, &a), KEEP_FNA_WRITE);
	CHECK_EQ_INT(a.cond, KEEP_COND_IF_NONE_MATCH);
	CHECK_EQ_INT(a.obj.written_at_ms, W0);
	keep_fencer_on_write(&m, KEEP_STORE_OK, NULL);
	CHECK_EQ_STR(line_of(&m, &e), "fenced");
	CHECK_EQ_STR(e.instance, ""); /* printed "-" */
	CHECK_EQ_INT(e.free_at_ms, W0 + 4500);
}

/* Rule: one fence per node at a time; at most 64 lines wait. */
TEST(queue_admission)
{
	static struct keep_fencer_queue q;
	struct keep_fencer_event e;
	struct keep_stale st, got;
	int i;

	memset(&st, 0, sizeof(st));
	snprintf(st.instance, sizeof(st.instance), IA);
	st.written_at_ms = W0;
	snprintf(st.node, sizeof(st.node), "a");
	CHECK(keep_fencer_queue_admit(&q, &st, &e));
	CHECK(!keep_fencer_queue_admit(&q, &st, &e));
	CHECK_EQ_STR(e.type, "skipped");
	CHECK_EQ_STR(e.reason, "a fence of this node is in flight");
	CHECK(keep_fencer_queue_take(&q, &got));
	CHECK_EQ_STR(got.node, "a");
	CHECK(!keep_fencer_queue_admit(&q, &st, &e)); /* in flight */
	keep_fencer_queue_done(&q, "a");
	CHECK(keep_fencer_queue_admit(&q, &st, &e));
	for (i = 1; i < KEEP_FENCER_QUEUE_MAX; i++) {
		snprintf(st.node, sizeof(st.node), "n%d", i);
		CHECK(keep_fencer_queue_admit(&q, &st, &e));
	}
	snprintf(st.node, sizeof(st.node), "z");
	CHECK(!keep_fencer_queue_admit(&q, &st, &e));
	CHECK_EQ_STR(e.reason, "busy");
	CHECK_EQ_STR(e.node, "z");
}

/* Rule: a fencer's view of its own lease: valid only from a readable file
 * of this node; its live_since kept either way. */
TEST(fencer_view)
{
	struct keep_fencer me;

	keep_fencer_view(true, true, 500, 9000, &me);
	CHECK(me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 500);
	CHECK_EQ_INT(me.now_mono_ms, 9000);
	keep_fencer_view(true, false, 500, 9000, &me);
	CHECK(!me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 500);
	keep_fencer_view(false, true, 500, 9000, &me);
	CHECK(!me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 0);
}

int main(void)
{
	RUN(peer_step_order);
	RUN(peer_not_valid_skips);
	RUN(peer_may_again_before_write);
	RUN(peer_conflict_reread);
	RUN(peer_ambiguous_readback);
	RUN(peer_not_yet_retry_at_free_at);
	RUN(peer_not_yet_bound);
	RUN(peer_not_yet_retries);
	RUN(operator_fences);
	RUN(operator_five_tries);
	RUN(operator_readback);
	RUN(operator_refused_write);
	RUN(operator_absent_refused);
	RUN(operator_absent_create);
	RUN(queue_admission);
	RUN(fencer_view);
	return unit_done();
}
