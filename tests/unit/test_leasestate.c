/* Unit tests: the judgement of a lease state file (lib/core/leasestate.c):
 * comparability, validity, the exit code a state means, the phase
 * lease-status shows, the judging wall clock, and a node's own lease as
 * its fencer sees it (ADR 0020 §1, §2, §3 "Own"; docs/lease.md "The state
 * file", "Clocks"; docs/exit-codes.md). Pure functions: no files, no
 * clocks. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/base/exitcode.h"
#include "../../lib/core/lease.h"
#include "../../lib/core/leasestate.h"
#include "unit.h"

static const char *BOOT = "0b6f3c1e-6a77-4c39-9a3e-2b7f0d2f8c11";
static const char *OTHER_BOOT = "ffffffff-0000-0000-0000-000000000000";

static struct keep_lease_state live_state(void)
{
	struct keep_lease_state s;

	memset(&s, 0, sizeof(s));
	s.format = 2;
	snprintf(s.node, sizeof(s.node), "n1");
	snprintf(s.instance, sizeof(s.instance), "5f0c2a9e8b7d41c3a6e2f90d1b4c7e58");
	s.pid = 4242;
	snprintf(s.clock, sizeof(s.clock), "%s", KEEP_CLOCK_NAME);
	snprintf(s.boot_id, sizeof(s.boot_id), "%s", BOOT);
	snprintf(s.phase, sizeof(s.phase), "live");
	snprintf(s.reason, sizeof(s.reason), "-");
	snprintf(s.version, sizeof(s.version), "v1");
	s.written_at_ms = 1767225600123;
	s.valid_until_ms = 5000;
	s.valid_until_wall_ms = 1767225602523;
	s.live_since_ms = 1000;
	s.lapses = 2;
	s.updated_wall_ms = 1767225600200;
	return s;
}

static void set_phase(struct keep_lease_state *s, const char *phase, const char *reason)
{
	snprintf(s->phase, sizeof(s->phase), "%s", phase);
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
}

TEST(comparable_only_on_this_boot_and_clock)
{
	struct keep_lease_state s = live_state();
	const char *why;

	CHECK(keep_lease_state_incomparable(&s, BOOT) == NULL);
	why = keep_lease_state_incomparable(&s, OTHER_BOOT);
	CHECK(why && strstr(why, "another boot"));
	/* no boot id on this host, or none in the file */
	CHECK(keep_lease_state_incomparable(&s, NULL) != NULL);
	CHECK(keep_lease_state_incomparable(&s, "") != NULL);
	snprintf(s.boot_id, sizeof(s.boot_id), "-");
	why = keep_lease_state_incomparable(&s, BOOT);
	CHECK(why && strstr(why, "no boot id"));
	s = live_state();
	s.format = 1;
	why = keep_lease_state_incomparable(&s, BOOT);
	CHECK(why && strstr(why, "CLOCK_MONOTONIC"));
	s = live_state();
	snprintf(s.clock, sizeof(s.clock), "tai");
	why = keep_lease_state_incomparable(&s, BOOT);
	CHECK(why && strstr(why, "does not read"));
}

TEST(valid_up_to_not_at_its_end)
{
	struct keep_lease_state s = live_state();

	CHECK(keep_lease_state_valid(&s, 4999, BOOT));
	CHECK(!keep_lease_state_valid(&s, 5000, BOOT)); /* exactly at now: not valid */
	CHECK(!keep_lease_state_valid(&s, 5001, BOOT));
	CHECK(!keep_lease_state_valid(&s, 1, OTHER_BOOT)); /* boot id mismatch */
	s.valid_until_ms = 0;				   /* a zero validity */
	CHECK(!keep_lease_state_valid(&s, 0, BOOT));
	s = live_state();
	set_phase(&s, "stopping", "-"); /* a stopping state is never valid */
	CHECK(!keep_lease_state_valid(&s, 10, BOOT));
	set_phase(&s, "ran-out", "-");
	CHECK(!keep_lease_state_valid(&s, 10, BOOT));
}

TEST(phase_codes)
{
	CHECK_EQ_INT(keep_lease_phase_code("ran-out", "-"), KEEP_EXIT_RAN_OUT);
	CHECK_EQ_INT(keep_lease_phase_code("live", "-"), KEEP_EXIT_RAN_OUT);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "fenced"), KEEP_EXIT_FENCED);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "replaced"), KEEP_EXIT_REPLACED);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "released"), KEEP_EXIT_RELEASED);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "removed"), KEEP_EXIT_REMOVED);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "old-version-running"), KEEP_EXIT_OLD_RUNNING);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "bad-object"), KEEP_EXIT_BAD_OBJECT);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "release-unconfirmed"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code("lost", "-"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code("lost", NULL), KEEP_EXIT_NOT_LIVE);
	/* a reason only counts with phase lost */
	CHECK_EQ_INT(keep_lease_phase_code("stopped", "fenced"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code("starting", "-"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code("stopping", "-"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code("stopped", "-"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code("", "-"), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code(NULL, NULL), KEEP_EXIT_NOT_LIVE);
}

/* The names lease-write writes are the names the codes are read from. */
TEST(phase_codes_of_the_lease_machines_names)
{
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_LIVE),
					   keep_lease_reason_name(KEEP_REASON_NONE)),
		     KEEP_EXIT_RAN_OUT);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_RAN_OUT),
					   keep_lease_reason_name(KEEP_REASON_NONE)),
		     KEEP_EXIT_RAN_OUT);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_LOST),
					   keep_lease_reason_name(KEEP_REASON_FENCED)),
		     KEEP_EXIT_FENCED);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_LOST),
					   keep_lease_reason_name(KEEP_REASON_REPLACED)),
		     KEEP_EXIT_REPLACED);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_LOST),
					   keep_lease_reason_name(KEEP_REASON_OLD_RUNNING)),
		     KEEP_EXIT_OLD_RUNNING);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_LOST),
					   keep_lease_reason_name(KEEP_REASON_BAD_OBJECT)),
		     KEEP_EXIT_BAD_OBJECT);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_CHECK),
					   keep_lease_reason_name(KEEP_REASON_NONE)),
		     KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_STOPPING),
					   keep_lease_reason_name(KEEP_REASON_NONE)),
		     KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_phase_code(keep_lease_phase_name(KEEP_LEASE_STOPPED),
					   keep_lease_reason_name(KEEP_REASON_CLOCK_BEHIND)),
		     KEEP_EXIT_NOT_LIVE);
}

TEST(state_codes)
{
	struct keep_lease_state s = live_state();

	CHECK_EQ_INT(keep_lease_state_code(NULL, 1, BOOT), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_state_code(&s, 4999, BOOT), KEEP_EXIT_OK);
	/* validity exactly at now: ran out */
	CHECK_EQ_INT(keep_lease_state_code(&s, 5000, BOOT), KEEP_EXIT_RAN_OUT);
	/* boot id mismatch: not live, never ran out (its deadlines mean nothing here) */
	CHECK_EQ_INT(keep_lease_state_code(&s, 1, OTHER_BOOT), KEEP_EXIT_NOT_LIVE);
	CHECK_EQ_INT(keep_lease_state_code(&s, 1, ""), KEEP_EXIT_NOT_LIVE);
	/* a zero validity of a live state: ran out */
	s.valid_until_ms = 0;
	CHECK_EQ_INT(keep_lease_state_code(&s, 0, BOOT), KEEP_EXIT_RAN_OUT);
	/* a stopping state: not live, whatever its validity says */
	s = live_state();
	set_phase(&s, "stopping", "-");
	CHECK_EQ_INT(keep_lease_state_code(&s, 10, BOOT), KEEP_EXIT_NOT_LIVE);
	set_phase(&s, "lost", "fenced");
	CHECK_EQ_INT(keep_lease_state_code(&s, 10, BOOT), KEEP_EXIT_FENCED);
	/* a lost state of another boot: its reason is not read */
	CHECK_EQ_INT(keep_lease_state_code(&s, 10, OTHER_BOOT), KEEP_EXIT_NOT_LIVE);
	s.format = 1; /* an older lease-write's file */
	CHECK_EQ_INT(keep_lease_state_code(&s, 10, BOOT), KEEP_EXIT_NOT_LIVE);
}

TEST(shown_phase)
{
	struct keep_lease_state s = live_state();

	CHECK_EQ_STR(keep_lease_state_shown_phase(&s, 4999, BOOT), "live");
	CHECK_EQ_STR(keep_lease_state_shown_phase(&s, 5000, BOOT), "ran-out");
	/* not comparable here: the file's own phase, with its warning */
	CHECK_EQ_STR(keep_lease_state_shown_phase(&s, 5000, OTHER_BOOT), "live");
	set_phase(&s, "stopping", "-");
	CHECK_EQ_STR(keep_lease_state_shown_phase(&s, 5000, BOOT), "stopping");
	set_phase(&s, "lost", "fenced");
	CHECK_EQ_STR(keep_lease_state_shown_phase(&s, 1, BOOT), "lost");
}

TEST(judging_wall)
{
	struct keep_lease_state s = live_state();

	/* no state, or one without the judging lines: the wall clock itself */
	CHECK_EQ_INT(keep_lease_state_judge_wall(NULL, 100, 1000000, BOOT), 1000000);
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 100, 1000000, BOOT), 1000000);
	s.have_judge = true;
	s.judge_offset_ms = 3000;
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 100, 1000000, BOOT), 997000);
	/* a forward step lease-write has not noticed: wall - boot grew by 500 */
	s.clock_base_ms = 1000000 - 100 - 500;
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 100, 1000000, BOOT), 996500);
	/* a backward difference is no step to subtract */
	s.clock_base_ms = 1000000 - 100 + 500;
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 100, 1000000, BOOT), 997000);
	/* another boot's base is not compared: the offset only */
	s.clock_base_ms = 1000000 - 100 - 500;
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 100, 1000000, OTHER_BOOT), 997000);
	/* no base (0): the offset only */
	s.clock_base_ms = 0;
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 100, 1000000, BOOT), 997000);
	/* saturating, never later than the wall clock */
	s.judge_offset_ms = INT64_MAX;
	CHECK(keep_lease_state_judge_wall(&s, 100, 1000000, BOOT) <= 1000000);
}

TEST(own_lease_as_its_fencer_sees_it)
{
	struct keep_lease_state s = live_state();
	struct keep_fencer me;

	keep_lease_state_fencer_view(&s, "n1", 4999, BOOT, &me);
	CHECK(me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 1000);
	CHECK_EQ_INT(me.now_mono_ms, 4999);
	/* validity exactly at now: not valid, live_since kept */
	keep_lease_state_fencer_view(&s, "n1", 5000, BOOT, &me);
	CHECK(!me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 1000);
	/* boot id mismatch: not valid */
	keep_lease_state_fencer_view(&s, "n1", 10, OTHER_BOOT, &me);
	CHECK(!me.valid);
	/* another node's file, no node id, no file: not valid, no live_since */
	keep_lease_state_fencer_view(&s, "n2", 10, BOOT, &me);
	CHECK(!me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 0);
	CHECK_EQ_INT(me.now_mono_ms, 10);
	keep_lease_state_fencer_view(&s, "", 10, BOOT, &me);
	CHECK(!me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 0);
	keep_lease_state_fencer_view(&s, NULL, 10, BOOT, &me);
	CHECK(!me.valid);
	keep_lease_state_fencer_view(NULL, "n1", 10, BOOT, &me);
	CHECK(!me.valid);
	CHECK_EQ_INT(me.live_since_mono_ms, 0);
	/* a stopping state: not valid */
	set_phase(&s, "stopping", "-");
	keep_lease_state_fencer_view(&s, "n1", 10, BOOT, &me);
	CHECK(!me.valid);
	/* a zero validity: not valid */
	s = live_state();
	s.valid_until_ms = 0;
	keep_lease_state_fencer_view(&s, "n1", 0, BOOT, &me);
	CHECK(!me.valid);
}

int main(void)
{
	RUN(comparable_only_on_this_boot_and_clock);
	RUN(valid_up_to_not_at_its_end);
	RUN(phase_codes);
	RUN(phase_codes_of_the_lease_machines_names);
	RUN(state_codes);
	RUN(shown_phase);
	RUN(judging_wall);
	RUN(own_lease_as_its_fencer_sees_it);
	return unit_done();
}
