/* Unit tests: every function that dates an object written into the bucket
 * (issue 23 item 1; docs/lease.md "Dates and judgements"). The rule: a
 * date keep writes is never earlier than the writer's wall clock; the
 * judging clock (wall - judging offset) only judges others. Each case
 * runs with a judging offset of 10 s (a state file carried over from a
 * forward step that corrected a clock behind: the wall clock is right, the
 * judging clock 10 s late) and checks the dated fields against the wall.
 *
 * Dated objects, and where their dates come from:
 *   nodes/<id> live          written_at: keep_lease_next (lease.c)
 *   nodes/<id> released      written_at kept from the last live write (§4)
 *   nodes/<id> fenced (peer) fenced_at: keep_fence_peer_judge; written_at kept
 *   nodes/<id> fenced (op.)  fenced_at: keep_fence_operator; written_at kept,
 *                            or, created over an absent object, the wall clock
 *   cluster                  written_at: keep_cluster_native_obj
 * owners/ records and leases/ markers carry no date. */
#include <stdio.h>
#include <string.h>

#include "../../lib/core/cluster.h"
#include "../../lib/core/fence.h"
#include "../../lib/core/lease.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"
#define WALL0 1700000000000LL
#define OFFSET 10000 /* ms: the judging offset every case carries */

/* ttl 3000, grace 1500, safety 600, skew 300, period 1000 */
static struct keep_timing T = {3000, 1500, 600, 300, 1000, 0};

static struct keep_walls walls(int64_t wall)
{
	struct keep_walls w = {wall, wall - OFFSET};

	return w;
}

static void live_obj(struct keep_node_obj *o, const char *node, const char *inst, int64_t w)
{
	memset(o, 0, sizeof(*o));
	o->format = 3;
	o->state = KEEP_NODE_LIVE;
	snprintf(o->node, sizeof(o->node), "%s", node);
	snprintf(o->instance, sizeof(o->instance), "%s", inst);
	o->written_at_ms = w;
	o->seq = 7;
}

/* The case: lease-fence NODE over an absent nodes/NODE, run with a
 * configuration whose node carries a judging offset: the created fence is
 * dated on the operator's wall clock, so the records it frees are free
 * ttl + grace after that, not OFFSET earlier. */
TEST(operator_fence_created_over_absent_is_dated_on_the_wall_clock)
{
	struct keep_walls now = walls(WALL0);
	struct keep_fence_decision d;

	keep_fence_operator("n1", KEEP_STORE_NOT_FOUND, NULL, 0, &now, &T, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_CREATE);
	CHECK_EQ_INT(d.obj.written_at_ms, WALL0);
	CHECK_EQ_INT(d.obj.fenced_at_ms, WALL0);
	CHECK_EQ_INT(d.free_at_ms, WALL0 + 4500);
	CHECK_EQ_STR(d.obj.instance, "-");
}

TEST(operator_fence_over_live_keeps_written_at_and_dates_fenced_at_on_the_wall)
{
	struct keep_walls now = walls(WALL0);
	struct keep_fence_decision d;
	struct keep_node_obj o;

	live_obj(&o, "n1", IA, WALL0 - 500);
	keep_fence_operator("n1", KEEP_STORE_OK, &o, 0, &now, &T, &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	CHECK_EQ_INT(d.obj.written_at_ms, WALL0 - 500); /* kept (§2) */
	CHECK_EQ_INT(d.obj.fenced_at_ms, WALL0);
}

/* A peer judges on the judging clock (the fence waits OFFSET longer) and
 * dates its fence on the wall clock. */
TEST(peer_fence_is_judged_on_the_judging_clock_and_dated_on_the_wall)
{
	struct keep_stale st;
	struct keep_fencer me = {true, 1000, 1000 + 1800};
	struct keep_fence_decision d;
	struct keep_node_obj o;
	struct keep_walls now;

	live_obj(&o, "n2", IB, WALL0);
	memset(&st, 0, sizeof(st));
	snprintf(st.node, sizeof(st.node), "n2");
	snprintf(st.instance, sizeof(st.instance), "%s", IB);
	st.written_at_ms = WALL0;
	/* free at WALL0 + 4500 on the judging clock: the wall clock must be
	 * OFFSET further on */
	now = walls(WALL0 + 4500 + OFFSET - 1);
	keep_fence_peer_judge(&st, &me, KEEP_STORE_OK, &o, 0, &now, &T, "n1", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_NOT_YET);
	now = walls(WALL0 + 4500 + OFFSET);
	keep_fence_peer_judge(&st, &me, KEEP_STORE_OK, &o, 0, &now, &T, "n1", &d);
	CHECK_EQ_INT(d.verdict, KEEP_FV_FENCE);
	CHECK_EQ_INT(d.obj.written_at_ms, WALL0); /* kept (§2) */
	CHECK_EQ_INT(d.obj.fenced_at_ms, WALL0 + 4500 + OFFSET);
}

TEST(cluster_object_is_dated_on_the_wall_clock)
{
	struct keep_walls now = walls(WALL0);
	struct keep_cluster_obj o;

	keep_cluster_native_obj(&now, &o);
	CHECK_EQ_INT(o.format, KEEP_CLUSTER_FMT_NATIVE);
	CHECK_EQ_INT(o.written_at_ms, WALL0);
}

/* lease-write carries the judging offset of its state file into the
 * machine (step_sum_ms): its own writes are still dated on the wall
 * clock, the first one, the renewals and, kept, the released one. */
TEST(lease_writes_are_dated_on_the_wall_clock_under_a_carried_offset)
{
	struct keep_lease sm;
	struct keep_lease_action act;
	struct keep_node_obj tmpl;
	int64_t now = 1000, last_live = 0;
	int writes = 0, i;

	memset(&tmpl, 0, sizeof(tmpl));
	snprintf(tmpl.node, sizeof(tmpl.node), "n1");
	snprintf(tmpl.instance, sizeof(tmpl.instance), "%s", IA);
	keep_lease_init(&sm, &T, &tmpl, now);
	sm.step_sum_ms = OFFSET; /* lease-write: the previous state file's offset */
	CHECK_EQ_INT(keep_lease_judge_offset_ms(&sm), OFFSET);
	for (i = 0; i < 10000 && writes < 4; i++) {
		int64_t wall = WALL0 + now;

		keep_lease_next(&sm, now, wall, &act);
		if (act.kind == KEEP_LACT_WAIT) {
			now = act.until_mono_ms;
			continue;
		}
		if (act.kind == KEEP_LACT_READ) {
			keep_lease_on_read(&sm, now, wall, KEEP_STORE_NOT_FOUND, "", NULL, 0);
			continue;
		}
		CHECK_EQ_INT(act.kind, KEEP_LACT_WRITE);
		CHECK(act.obj.written_at_ms >= wall);
		CHECK_EQ_INT(act.obj.state, KEEP_NODE_LIVE);
		last_live = act.obj.written_at_ms;
		keep_lease_on_write(&sm, now + 5, KEEP_STORE_OK, "v");
		now += 5;
		writes++;
	}
	CHECK_EQ_INT(writes, 4);
	CHECK_EQ_INT(sm.phase, KEEP_LEASE_LIVE);
	/* the clean stop's released keeps the last live written_at (§4): a
	 * date the wall clock gave when that write was sent */
	keep_lease_stop(&sm, now);
	keep_lease_next(&sm, now, WALL0 + now, &act);
	CHECK_EQ_INT(act.kind, KEEP_LACT_WRITE);
	CHECK_EQ_INT(act.obj.state, KEEP_NODE_RELEASED);
	CHECK_EQ_INT(act.obj.written_at_ms, last_live);
}

/* The one rule every dated write goes through: the writer's wall clock,
 * raised to a floor only when the floor is later; never earlier. */
TEST(date_written_is_the_wall_clock_raised_to_its_floor)
{
	CHECK_EQ_INT(keep_date_written_ms(WALL0, KEEP_DATE_NO_FLOOR), WALL0);
	CHECK_EQ_INT(keep_date_written_ms(WALL0, 0), WALL0);
	CHECK_EQ_INT(keep_date_written_ms(WALL0, -5), WALL0);
	/* a wall clock before the epoch is still the date, never raised to
	 * 0 by the absence of a floor (fuzz_nodeobj found it) */
	CHECK_EQ_INT(keep_date_written_ms(-5000, KEEP_DATE_NO_FLOOR), -5000);
	CHECK_EQ_INT(keep_date_written_ms(INT64_MIN, KEEP_DATE_NO_FLOOR), INT64_MIN);
	CHECK_EQ_INT(keep_date_written_ms(WALL0, WALL0 - 1), WALL0);
	CHECK_EQ_INT(keep_date_written_ms(WALL0, WALL0), WALL0);
	CHECK_EQ_INT(keep_date_written_ms(WALL0, WALL0 + 7), WALL0 + 7);
}

int main(void)
{
	RUN(date_written_is_the_wall_clock_raised_to_its_floor);
	RUN(operator_fence_created_over_absent_is_dated_on_the_wall_clock);
	RUN(operator_fence_over_live_keeps_written_at_and_dates_fenced_at_on_the_wall);
	RUN(peer_fence_is_judged_on_the_judging_clock_and_dated_on_the_wall);
	RUN(cluster_object_is_dated_on_the_wall_clock);
	RUN(lease_writes_are_dated_on_the_wall_clock_under_a_carried_offset);
	return unit_done();
}
