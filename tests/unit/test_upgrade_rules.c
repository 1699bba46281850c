/* Unit tests: single rules of ADR 0020 that a machine calls, each one pure
 * function named after its rule: a record deleted by hand under a confirmed
 * marker (lib/core/mark.c; issue 14 item 3), the schedule of --wait
 * (lib/core/acqwait.c; issues 15, 23, 24) and owner-run's stop signals
 * (lib/core/jobstop.c; issue 24). */
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/core/acqwait.h"
#include "../../lib/core/cluster.h"
#include "../../lib/core/jobstop.h"
#include "../../lib/core/mark.h"
#include "unit.h"

/* ---- mark.c: keep_mark_record_deleted ---------------------------------------------- */

TEST(a_record_missing_under_a_confirmed_marker_was_deleted_by_hand)
{
	struct keep_mark_result res;

	memset(&res, 0, sizeof(res));
	res.kind = KEEP_MR_MARKED;
	res.seed = 4;
	res.created = 5;
	CHECK(keep_mark_record_deleted(&res, KEEP_STORE_NOT_FOUND));
	/* the record is there (created meanwhile by another node): decided on it */
	CHECK(!keep_mark_record_deleted(&res, KEEP_STORE_OK));
	/* a read that failed says nothing */
	CHECK(!keep_mark_record_deleted(&res, KEEP_STORE_AMBIGUOUS));
	CHECK(!keep_mark_record_deleted(&res, KEEP_STORE_REFUSED));
	/* an unconfirmed marker: a first acquisition stopped between its writes */
	res.created = 0;
	CHECK(!keep_mark_record_deleted(&res, KEEP_STORE_NOT_FOUND));
	/* no marker in place */
	res.created = 5;
	res.kind = KEEP_MR_FAILED;
	CHECK(!keep_mark_record_deleted(&res, KEEP_STORE_NOT_FOUND));
	res.kind = KEEP_MR_HELD;
	CHECK(!keep_mark_record_deleted(&res, KEEP_STORE_NOT_FOUND));
}

/* ---- acqwait.c: keep_acqwait_held_retry_at, keep_acqwait_backoff_ms ---------------- */

TEST(a_held_key_is_tried_again_right_after_its_free_time_on_the_judging_clock)
{
	/* free at wall 50_300, judged at wall 50_000: 300 ms ahead, +1 */
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 50300, 50000, 1000), 1301);
	/* the judging clock, not the boot clock: the same answer at any now */
	CHECK_EQ_INT(keep_acqwait_held_retry_at(7, 50300, 50000, 1000), 308);
	/* just under a period ahead */
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 50999, 50000, 1000), 2000);
	/* a period or more ahead: one period (at most one attempt a period) */
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 51000, 50000, 1000), 2000);
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 90000, 50000, 1000), 2000);
	/* already passed, or no free time announced: a period, no busy loop */
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 50000, 50000, 1000), 2000);
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 40000, 50000, 1000), 2000);
	CHECK_EQ_INT(keep_acqwait_held_retry_at(1000, 0, 50000, 1000), 2000);
	/* saturating */
	CHECK_EQ_INT(keep_acqwait_held_retry_at(INT64_MAX - 10, 0, 50000, 1000), INT64_MAX);
}

TEST(transient_answers_back_off_with_jitter_up_to_a_period)
{
	/* the first: 100 ms, drawn in [50, 100] */
	CHECK_EQ_INT(keep_acqwait_backoff_ms(1, 1000, 0), 50);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(1, 1000, 50), 100);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(1, 1000, 51), 50); /* folded */
	/* doubling: 200, 400, 800 */
	CHECK_EQ_INT(keep_acqwait_backoff_ms(2, 1000, 0), 100);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(2, 1000, 100), 200);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(3, 1000, 200), 400);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(4, 1000, 0), 400);
	/* capped at one period */
	CHECK_EQ_INT(keep_acqwait_backoff_ms(5, 1000, 500), 1000);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(60, 1000, 0), 500);
	CHECK_EQ_INT(keep_acqwait_backoff_ms(60, 300, 150), 300);
	for (uint32_t r = 0; r < 100000; r += 97) {
		int64_t d = keep_acqwait_backoff_ms(9, 3000, r * 2654435761u);

		CHECK(d >= 1500);
		CHECK(d <= 3000);
	}
	CHECK_EQ_INT(keep_acqwait_backoff_ms(1, 0, 123), 0); /* no period: no wait */
}

/* The machine's step runs these very rules. */
TEST(the_wait_machine_follows_the_rules)
{
	struct keep_acqwait w;
	struct keep_acqwait_step st;
	struct keep_acquire_result res;

	keep_acqwait_init(&w, 1000, 60000, 1000);
	memset(&res, 0, sizeof(res));
	res.kind = KEEP_AR_HELD;
	res.free_at_ms = 50300;
	keep_acqwait_after(&w, &res, 1000, 50000, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_RETRY);
	CHECK_EQ_INT(st.until_mono_ms, keep_acqwait_held_retry_at(1000, 50300, 50000, 1000));
	memset(&res, 0, sizeof(res));
	res.kind = KEEP_AR_UNKNOWN;
	keep_acqwait_after(&w, &res, 2000, 50000, 77, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_RETRY);
	CHECK_EQ_INT(st.until_mono_ms, 2000 + keep_acqwait_backoff_ms(1, 1000, 77));
	keep_acqwait_after(&w, &res, 3000, 50000, 77, &st);
	CHECK_EQ_INT(st.until_mono_ms, 3000 + keep_acqwait_backoff_ms(2, 1000, 77));
}

/* ---- jobstop.c: keep_jobstop_stop_signal -------------------------------------------- */

TEST(owner_run_stops_its_job_at_every_signal_that_would_end_it)
{
	static const int stop[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,	 SIGUSR1, SIGUSR2, SIGPIPE,
				   SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,   SIGSYS};
	static const int not_stop[] = {SIGKILL,	 SIGSTOP, SIGCHLD, SIGCONT, SIGURG,
				       SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU, SIGSEGV,
				       SIGBUS,	 SIGILL,  SIGFPE,  SIGTRAP};
	size_t i;

	for (i = 0; i < sizeof(stop) / sizeof(stop[0]); i++)
		CHECK(keep_jobstop_stop_signal(stop[i]));
	for (i = 0; i < sizeof(not_stop) / sizeof(not_stop[0]); i++)
		CHECK(!keep_jobstop_stop_signal(not_stop[i]));
	CHECK(keep_jobstop_stop_signal(SIGRTMIN));
	CHECK(keep_jobstop_stop_signal(SIGRTMIN + 1));
	CHECK(keep_jobstop_stop_signal(SIGRTMAX));
	/* out of range */
	CHECK(!keep_jobstop_stop_signal(0));
	CHECK(!keep_jobstop_stop_signal(-1));
	CHECK(!keep_jobstop_stop_signal(SIGRTMAX + 1));
}

/* Only a read that found format native lets a first record skip the
 * marker; a failed read is not kept (the next acquisition reads again),
 * every other answer is. */
TEST(cluster_first_record_view)
{
	bool keep = false;

	CHECK_EQ_INT(keep_cluster_first_record_view(KEEP_CLUSTER_READ_NATIVE, &keep),
		     KEEP_CLUSTER_NATIVE);
	CHECK(keep);
	CHECK_EQ_INT(keep_cluster_first_record_view(KEEP_CLUSTER_READ_UPGRADED, &keep),
		     KEEP_CLUSTER_NOT_NATIVE);
	CHECK(keep);
	CHECK_EQ_INT(keep_cluster_first_record_view(KEEP_CLUSTER_READ_ABSENT, &keep),
		     KEEP_CLUSTER_NOT_NATIVE);
	CHECK(keep);
	CHECK_EQ_INT(keep_cluster_first_record_view(KEEP_CLUSTER_READ_BAD, &keep),
		     KEEP_CLUSTER_NOT_NATIVE);
	CHECK(keep);
	CHECK_EQ_INT(keep_cluster_first_record_view(KEEP_CLUSTER_READ_FAILED, &keep),
		     KEEP_CLUSTER_NOT_NATIVE);
	CHECK(!keep);
	CHECK_EQ_INT(keep_cluster_first_record_view(KEEP_CLUSTER_READ_NATIVE, NULL),
		     KEEP_CLUSTER_NATIVE);
}

int main(void)
{
	RUN(cluster_first_record_view);
	RUN(a_record_missing_under_a_confirmed_marker_was_deleted_by_hand);
	RUN(a_held_key_is_tried_again_right_after_its_free_time_on_the_judging_clock);
	RUN(transient_answers_back_off_with_jitter_up_to_a_period);
	RUN(the_wait_machine_follows_the_rules);
	RUN(owner_run_stops_its_job_at_every_signal_that_would_end_it);
	return unit_done();
}
