/* Unit tests of the node lease's rules as decisions of their own
 * (lib/core/lease.h, "the rules' decisions"): each public function the
 * machine runs on, called alone with the inputs it decides on (ADR 0020
 * §1, §4, §5, §6; issues 13, 18, 23, 24, 28). The machine's behaviour on
 * them is tests/unit/test_lease.c's. */
#include <stdio.h>
#include <string.h>

#include "../../lib/core/lease.h"
#include "unit.h"

/* ttl 3000, grace 1500, safety 600, skew 300, period 1000:
 * write every 1000, attempt 800 (retry floor 50), valid 2400,
 * takeover 4500, clock step 150 */
static struct keep_timing T = {3000, 1500, 600, 300, 1000, 0};
static const char *ME = "0123456789abcdef0123456789abcdef";
static const char *OTHER = "fedcba9876543210fedcba9876543210";
#define W 1700000000000LL

static struct keep_lease sm;

static void init(void)
{
	struct keep_node_obj tmpl;

	memset(&tmpl, 0, sizeof(tmpl));
	snprintf(tmpl.node, sizeof(tmpl.node), "n1");
	snprintf(tmpl.instance, sizeof(tmpl.instance), "%s", ME);
	keep_lease_init(&sm, &T, &tmpl, 1000);
}

static struct keep_node_obj obj(enum keep_node_state st, const char *inst, int64_t written_at)
{
	struct keep_node_obj o;

	memset(&o, 0, sizeof(o));
	o.format = 3;
	o.state = st;
	snprintf(o.instance, sizeof(o.instance), "%s", inst);
	o.written_at_ms = written_at;
	snprintf(o.node, sizeof(o.node), "n1");
	o.seq = 1;
	return o;
}

TEST(validity_ends_ttl_minus_safety_after_the_send)
{
	struct keep_timing d;

	CHECK_EQ_INT(keep_lease_validity_end_ms(&T, 1000), 3400);
	CHECK_EQ_INT(keep_lease_validity_end_ms(&T, 0), 2400);
	keep_timing_defaults(&d);
	CHECK_EQ_INT(keep_lease_validity_end_ms(&d, 5), 8005);
}

TEST(retries_come_within_the_validity_left)
{
	/* live, plenty left: the backoff from the floor, doubling */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 1, 2400, 0), 50);
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 3, 2400, 0), 200);
	/* capped at one write period */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 10, 2400, 0), 1000);
	/* never later than the last moment a whole attempt still fits */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 10, 1500, 0), 700);
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 10, 10500, 9000), 700);
	/* past that point: at the floor */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 10, 800, 0), 50);
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_LIVE, 10, 100, 0), 50);
	/* stopping: at the floor */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_STOPPING, 10, 0, 0), 50);
	/* ran out: at most half a write period */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_RAN_OUT, 10, 0, 0), 500);
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_RAN_OUT, 1, 0, 0), 50);
	/* the first write: the backoff alone */
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_FIRST, 10, 0, 0), 1000);
	CHECK_EQ_INT(keep_lease_retry_delay_ms(&T, KEEP_LEASE_FIRST, 2, 0, 0), 100);
}

TEST(every_attempt_ends_by_its_bound)
{
	init();
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1000), 800);
	/* the clean stop's bound cuts it */
	sm.phase = KEEP_LEASE_STOPPING;
	sm.stop_deadline_mono_ms = 1300;
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1000), 300);
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1300), 1);
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 2000), 1);
	sm.stop_deadline_mono_ms = 5000;
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1000), 800);
	/* an orphan's bound too, whichever is sooner */
	sm.orphan_deadline_mono_ms = 1200;
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1000), 200);
	sm.stop_deadline_mono_ms = 1100;
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1000), 100);
	/* a stop deadline left over does not cut an attempt outside the stop */
	sm.phase = KEEP_LEASE_LIVE;
	sm.orphan_deadline_mono_ms = 0;
	CHECK_EQ_INT(keep_lease_attempt_timeout_ms(&sm, 1000), 800);
}

TEST(the_start_check_waits_ttl_plus_grace_from_its_first_read)
{
	CHECK_EQ_INT(keep_lease_start_check_end_ms(&T, 1000), 5500);
	CHECK_EQ_INT(keep_lease_start_check_end_ms(&T, 0), 4500);
}

TEST(a_fence_or_release_of_the_first_read_instance_shortcuts_the_check)
{
	struct keep_node_obj o;

	init();
	sm.have_base = true;
	sm.base_absent = false;
	sm.base = obj(KEEP_NODE_LIVE, OTHER, W);
	sm.sent_mono_ms = 2000;
	sm.check_deadline_mono_ms = 5500;
	o = obj(KEEP_NODE_FENCED, OTHER, W);
	CHECK(keep_lease_start_check_shortcut(&sm, &o, W + 4500));
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 4499));
	o.state = KEEP_NODE_RELEASED;
	CHECK(keep_lease_start_check_shortcut(&sm, &o, W + 4500));
	/* live, another instance, absent, "-": no shortcut */
	o.state = KEEP_NODE_LIVE;
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 9000));
	o = obj(KEEP_NODE_FENCED, ME, W);
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 9000));
	CHECK(!keep_lease_start_check_shortcut(&sm, NULL, W + 9000));
	o = obj(KEEP_NODE_FENCED, "-", W);
	sm.base = obj(KEEP_NODE_LIVE, "-", W);
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 9000));
	sm.base = obj(KEEP_NODE_LIVE, OTHER, W);
	o = obj(KEEP_NODE_FENCED, OTHER, W);
	/* the first read showed nothing: no instance to shortcut on */
	sm.base_absent = true;
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 9000));
	sm.base_absent = false;
	/* the judging offset delays it */
	sm.step_sum_ms = 100;
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 4599));
	CHECK(keep_lease_start_check_shortcut(&sm, &o, W + 4600));
	sm.step_sum_ms = 0;
	/* a step during this check cancels it */
	sm.check_no_shortcut = true;
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 9000));
	sm.check_no_shortcut = false;
	/* a read sent at or after the wait's end needs no shortcut */
	sm.sent_mono_ms = 5500;
	CHECK(!keep_lease_start_check_shortcut(&sm, &o, W + 9000));
}

TEST(a_failed_condition_is_re_read_once)
{
	CHECK(keep_lease_write_reread(KEEP_LEASE_LIVE, KEEP_STORE_CONFLICT));
	CHECK(keep_lease_write_reread(KEEP_LEASE_LIVE, KEEP_STORE_NOT_FOUND));
	CHECK(keep_lease_write_reread(KEEP_LEASE_FIRST, KEEP_STORE_CONFLICT));
	CHECK(keep_lease_write_reread(KEEP_LEASE_STOPPING, KEEP_STORE_CONFLICT));
	/* a first write whose fate is unknown: read back */
	CHECK(keep_lease_write_reread(KEEP_LEASE_FIRST, KEEP_STORE_AMBIGUOUS));
	/* a renewal whose fate is unknown: retried in place */
	CHECK(!keep_lease_write_reread(KEEP_LEASE_LIVE, KEEP_STORE_AMBIGUOUS));
	CHECK(!keep_lease_write_reread(KEEP_LEASE_RAN_OUT, KEEP_STORE_AMBIGUOUS));
	CHECK(!keep_lease_write_reread(KEEP_LEASE_FIRST, KEEP_STORE_REFUSED));
	CHECK(!keep_lease_write_reread(KEEP_LEASE_LIVE, KEEP_STORE_REFUSED));
}

TEST(a_failed_first_write_goes_back_to_the_start_check)
{
	/* refused: at once, never retried in place */
	CHECK(keep_lease_first_write_back_to_check(KEEP_LEASE_FIRST, KEEP_STORE_REFUSED, false));
	/* a conflict: only once its re-read shows it is not ours */
	CHECK(!keep_lease_first_write_back_to_check(KEEP_LEASE_FIRST, KEEP_STORE_AMBIGUOUS, false));
	CHECK(!keep_lease_first_write_back_to_check(KEEP_LEASE_FIRST, KEEP_STORE_CONFLICT, false));
	CHECK(keep_lease_first_write_back_to_check(KEEP_LEASE_FIRST, KEEP_STORE_CONFLICT, true));
	CHECK(keep_lease_first_write_back_to_check(KEEP_LEASE_FIRST, KEEP_STORE_OK, true));
	/* only a first write */
	CHECK(!keep_lease_first_write_back_to_check(KEEP_LEASE_LIVE, KEEP_STORE_REFUSED, false));
	CHECK(!keep_lease_first_write_back_to_check(KEEP_LEASE_LIVE, KEEP_STORE_CONFLICT, true));
	CHECK(!keep_lease_first_write_back_to_check(KEEP_LEASE_RAN_OUT, KEEP_STORE_REFUSED, true));
	CHECK(
	    !keep_lease_first_write_back_to_check(KEEP_LEASE_STOPPING, KEEP_STORE_REFUSED, false));
}

TEST(our_own_live_instance_is_adopted_anything_else_is_not)
{
	struct keep_node_obj o;

	init();
	o = obj(KEEP_NODE_LIVE, ME, W);
	CHECK(keep_lease_read_adopts(&sm, &o));
	o = obj(KEEP_NODE_LIVE, OTHER, W);
	CHECK(!keep_lease_read_adopts(&sm, &o));
	o = obj(KEEP_NODE_RELEASED, ME, W);
	CHECK(!keep_lease_read_adopts(&sm, &o));
	o = obj(KEEP_NODE_FENCED, ME, W);
	CHECK(!keep_lease_read_adopts(&sm, &o));
	o = obj(KEEP_NODE_LIVE, ME, W);
	o.format = 2;
	CHECK(!keep_lease_read_adopts(&sm, &o));
	CHECK(!keep_lease_read_adopts(&sm, NULL));
}

TEST(a_re_read_of_our_write_no_newer_than_the_one_held_proves_nothing)
{
	struct keep_node_obj o;

	init();
	sm.written_at_ms = W + 5000;
	snprintf(sm.version, sizeof(sm.version), "v2");
	/* older than the write held: stale */
	o = obj(KEEP_NODE_LIVE, ME, W + 4999);
	CHECK(keep_lease_reread_stale(&sm, "v9", &o));
	/* the very write held under the version the failed If-Match named */
	o = obj(KEEP_NODE_LIVE, ME, W + 5000);
	CHECK(keep_lease_reread_stale(&sm, "v2", &o));
	/* the same written_at under another version, or newer: it decides */
	CHECK(!keep_lease_reread_stale(&sm, "v3", &o));
	CHECK(!keep_lease_reread_stale(&sm, NULL, &o));
	o = obj(KEEP_NODE_LIVE, ME, W + 5001);
	CHECK(!keep_lease_reread_stale(&sm, "v2", &o));
	/* not ours, not live, absent: not this rule */
	o = obj(KEEP_NODE_LIVE, OTHER, W + 4000);
	CHECK(!keep_lease_reread_stale(&sm, "v2", &o));
	o = obj(KEEP_NODE_FENCED, ME, W + 4000);
	CHECK(!keep_lease_reread_stale(&sm, "v2", &o));
	CHECK(!keep_lease_reread_stale(&sm, "v2", NULL));
	/* no version held yet: only an older written_at is stale */
	sm.version[0] = '\0';
	o = obj(KEEP_NODE_LIVE, ME, W + 5000);
	CHECK(!keep_lease_reread_stale(&sm, "v2", &o));
	o = obj(KEEP_NODE_LIVE, ME, W + 1);
	CHECK(keep_lease_reread_stale(&sm, "v2", &o));
}

TEST(a_fence_found_by_the_clean_stop_ends_it)
{
	struct keep_node_obj o;

	o = obj(KEEP_NODE_FENCED, OTHER, W);
	CHECK(keep_lease_stop_fenced(&o));
	o = obj(KEEP_NODE_FENCED, ME, W);
	CHECK(keep_lease_stop_fenced(&o));
	o.format = 2;
	CHECK(!keep_lease_stop_fenced(&o));
	o = obj(KEEP_NODE_RELEASED, ME, W);
	CHECK(!keep_lease_stop_fenced(&o));
	o = obj(KEEP_NODE_LIVE, ME, W);
	CHECK(!keep_lease_stop_fenced(&o));
	CHECK(!keep_lease_stop_fenced(NULL));
}

TEST(a_live_lease_runs_out_at_not_before_its_end)
{
	init();
	sm.phase = KEEP_LEASE_LIVE;
	sm.valid_until_mono_ms = 3400;
	CHECK(!keep_lease_ran_out(&sm, 3399));
	CHECK(keep_lease_ran_out(&sm, 3400));
	CHECK(keep_lease_ran_out(&sm, 9000));
	CHECK(keep_lease_valid(&sm, 3399) && !keep_lease_valid(&sm, 3400));
	/* only a live lease runs out */
	sm.phase = KEEP_LEASE_RAN_OUT;
	CHECK(!keep_lease_ran_out(&sm, 9000));
	sm.phase = KEEP_LEASE_CHECK;
	CHECK(!keep_lease_ran_out(&sm, 9000));
	sm.phase = KEEP_LEASE_STOPPING;
	CHECK(!keep_lease_ran_out(&sm, 9000));
}

TEST(a_wall_step_beyond_the_threshold_is_a_step)
{
	struct keep_timing t = T;

	CHECK_EQ_INT(keep_lease_wall_step_ms(&T, 1000, W, 2000, W + 1000), 0);
	CHECK_EQ_INT(keep_lease_wall_step_ms(&T, 1000, W, 2000, W + 1150), 0);
	CHECK_EQ_INT(keep_lease_wall_step_ms(&T, 1000, W, 2000, W + 1151), 151);
	CHECK_EQ_INT(keep_lease_wall_step_ms(&T, 1000, W, 2000, W + 850), 0);
	CHECK_EQ_INT(keep_lease_wall_step_ms(&T, 1000, W, 2000, W + 849), -151);
	/* a suspend advances both clocks: not a step */
	CHECK_EQ_INT(keep_lease_wall_step_ms(&T, 1000, W, 61000, W + 60000), 0);
	/* the threshold is the configured one */
	t.clock_step_ms = 500;
	CHECK_EQ_INT(keep_lease_wall_step_ms(&t, 1000, W, 2000, W + 1400), 0);
	CHECK_EQ_INT(keep_lease_wall_step_ms(&t, 1000, W, 2000, W + 1501), 501);
}

TEST(nothing_is_sent_while_the_state_file_fails_and_it_gives_up_after_ttl_minus_safety)
{
	init();
	sm.phase = KEEP_LEASE_LIVE;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 1000), KEEP_LEASE_GATE_OPEN);
	sm.state_fail_since_mono_ms = 1000;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 1000), KEEP_LEASE_GATE_HOLD);
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 3399), KEEP_LEASE_GATE_HOLD);
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 3400), KEEP_LEASE_GATE_GIVE_UP);
	sm.phase = KEEP_LEASE_CHECK;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 2000), KEEP_LEASE_GATE_HOLD);
	/* the clean stop goes on: released is what matters */
	sm.phase = KEEP_LEASE_STOPPING;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 2000), KEEP_LEASE_GATE_OPEN);
	sm.phase = KEEP_LEASE_FIRST;
	sm.stop_requested = true;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 2000), KEEP_LEASE_GATE_OPEN);
	sm.stop_requested = false;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 2000), KEEP_LEASE_GATE_HOLD);
	sm.state_gave_up = true;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 2000), KEEP_LEASE_GATE_OPEN);
	sm.state_gave_up = false;
	sm.phase = KEEP_LEASE_LOST;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 2000), KEEP_LEASE_GATE_OPEN);
	sm.phase = KEEP_LEASE_STOPPED;
	CHECK_EQ_INT(keep_lease_state_fail_gate(&sm, 9000), KEEP_LEASE_GATE_OPEN);
}

TEST(the_first_write_waits_for_go)
{
	init();
	sm.phase = KEEP_LEASE_FIRST;
	CHECK(!keep_lease_first_waits_go(&sm)); /* no --go-fd */
	keep_lease_hold_first(&sm);
	CHECK(keep_lease_first_waits_go(&sm));
	sm.phase = KEEP_LEASE_CHECK; /* the start check first */
	CHECK(!keep_lease_first_waits_go(&sm));
	sm.phase = KEEP_LEASE_FIRST;
	keep_lease_go(&sm);
	CHECK(!keep_lease_first_waits_go(&sm));
}

TEST(no_write_that_frees_the_records_while_a_job_may_hold_a_run_lock)
{
	init();
	sm.phase = KEEP_LEASE_FIRST;
	CHECK(!keep_lease_write_waits_jobs(&sm)); /* no guard */
	keep_lease_guard_runs(&sm, 1000);
	CHECK(keep_lease_write_waits_jobs(&sm));
	sm.runs_first_ok = true;
	CHECK(!keep_lease_write_waits_jobs(&sm));
	sm.phase = KEEP_LEASE_STOPPING;
	CHECK(keep_lease_write_waits_jobs(&sm));
	sm.runs_stop_ok = true;
	CHECK(!keep_lease_write_waits_jobs(&sm));
	/* renewals free nothing */
	sm.runs_stop_ok = false;
	sm.runs_first_ok = false;
	sm.phase = KEEP_LEASE_LIVE;
	CHECK(!keep_lease_write_waits_jobs(&sm));
	sm.phase = KEEP_LEASE_RAN_OUT;
	CHECK(!keep_lease_write_waits_jobs(&sm));
}

int main(void)
{
	RUN(validity_ends_ttl_minus_safety_after_the_send);
	RUN(retries_come_within_the_validity_left);
	RUN(every_attempt_ends_by_its_bound);
	RUN(the_start_check_waits_ttl_plus_grace_from_its_first_read);
	RUN(a_fence_or_release_of_the_first_read_instance_shortcuts_the_check);
	RUN(a_failed_condition_is_re_read_once);
	RUN(a_failed_first_write_goes_back_to_the_start_check);
	RUN(our_own_live_instance_is_adopted_anything_else_is_not);
	RUN(a_re_read_of_our_write_no_newer_than_the_one_held_proves_nothing);
	RUN(a_fence_found_by_the_clean_stop_ends_it);
	RUN(a_live_lease_runs_out_at_not_before_its_end);
	RUN(a_wall_step_beyond_the_threshold_is_a_step);
	RUN(nothing_is_sent_while_the_state_file_fails_and_it_gives_up_after_ttl_minus_safety);
	RUN(the_first_write_waits_for_go);
	RUN(no_write_that_frees_the_records_while_a_job_may_hold_a_run_lock);
	return unit_done();
}
