/* Unit tests: the lease state file (lib/codec/statefile.c, lib/local/statedir.c, judged
 * by lib/core/leasestate.c; tests/unit/test_leasestate.c has the judgement
 * on its own): format 2 names its
 * clock and boot; an older lease-write's format 1 decodes but is never
 * comparable; validity is judged against the reader's own boot-clock
 * reading (issue 13; docs/formats.md "Lease state file"). */
#include <string.h>

#include <stdlib.h>

#include "../../lib/base/err.h"
#include "../../lib/base/exitcode.h"
#include "../../lib/local/holds.h"
#include "../../lib/local/statedir.h"
#include "../../lib/platform/clock.h"
#include "unit.h"

static const char *BOOT = "0b6f3c1e-6a77-4c39-9a3e-2b7f0d2f8c11";

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

TEST(format_2_round_trips_with_its_clock_and_boot)
{
	struct keep_lease_state s = live_state(), d;
	struct keep_buf b;

	keep_buf_init(&b, 8192);
	CHECK_EQ_INT(keep_lease_state_encode(&s, &b), 0);
	CHECK(strncmp(keep_buf_str(&b), "keep-lease-state 2\nnode n1\n", 27) == 0);
	CHECK(strstr(keep_buf_str(&b), "\nclock boottime\nboot_id ") != NULL);
	CHECK(strstr(keep_buf_str(&b), "\nvalid_until_ms 5000\n") != NULL);
	CHECK_EQ_INT(keep_lease_state_decode(b.data, b.len, &d), 0);
	CHECK_EQ_INT(d.format, 2);
	CHECK_EQ_STR(d.clock, "boottime");
	CHECK_EQ_STR(d.boot_id, BOOT);
	CHECK_EQ_INT(d.valid_until_ms, 5000);
	CHECK_EQ_INT(d.live_since_ms, 1000);
	CHECK_EQ_INT(d.lapses, 2);
	keep_buf_release(&b);
}

TEST(validity_is_judged_on_the_readers_boot_clock_reading)
{
	struct keep_lease_state s = live_state();

	CHECK(keep_lease_state_incomparable(&s, BOOT) == NULL);
	CHECK(keep_lease_state_valid(&s, 4999, BOOT));
	CHECK(!keep_lease_state_valid(&s, 5000, BOOT));
	snprintf(s.phase, sizeof(s.phase), "stopping");
	CHECK(!keep_lease_state_valid(&s, 10, BOOT));
}

TEST(a_format_1_file_decodes_as_monotonic_and_is_never_valid)
{
	static const char v1[] = "keep-lease-state 1\nnode n1\n"
				 "instance 5f0c2a9e8b7d41c3a6e2f90d1b4c7e58\npid 4242\n"
				 "boot_id 0b6f3c1e-6a77-4c39-9a3e-2b7f0d2f8c11\nphase live\n"
				 "reason -\nversion v1\nwritten_at_ms 1767225600123\n"
				 "valid_until_mono_ms 99999999\nvalid_until_wall_ms 1\n"
				 "live_since_mono_ms 1\nlapses 0\nupdated_wall_ms 1\n";
	struct keep_lease_state s;
	const char *why;

	CHECK_EQ_INT(keep_lease_state_decode(v1, sizeof(v1) - 1, &s), 0);
	CHECK_EQ_INT(s.format, 1);
	CHECK_EQ_STR(s.clock, "monotonic");
	CHECK_EQ_STR(s.phase, "live");
	CHECK_EQ_INT(s.valid_until_ms, 99999999);
	why = keep_lease_state_incomparable(&s, BOOT);
	CHECK(why && strstr(why, "CLOCK_MONOTONIC") && strstr(why, "restart lease-write"));
	CHECK(!keep_lease_state_valid(&s, 1, BOOT));
	/* another format: not ours */
	CHECK_EQ_INT(keep_lease_state_decode("keep-lease-state 3\n", 19, &s), KEEP_ERR_NOTOURS);
}

TEST(another_boot_another_clock_or_no_boot_id_is_never_valid)
{
	struct keep_lease_state s = live_state();
	const char *why;

	why = keep_lease_state_incomparable(&s, "ffffffff-0000-0000-0000-000000000000");
	CHECK(why && strstr(why, "another boot"));
	CHECK(!keep_lease_state_valid(&s, 1, "ffffffff-0000-0000-0000-000000000000"));
	CHECK(keep_lease_state_incomparable(&s, "") != NULL);
	CHECK(!keep_lease_state_valid(&s, 1, ""));
	snprintf(s.clock, sizeof(s.clock), "monotonic");
	CHECK(!keep_lease_state_valid(&s, 1, BOOT));
	snprintf(s.clock, sizeof(s.clock), "tai");
	why = keep_lease_state_incomparable(&s, BOOT);
	CHECK(why && strstr(why, "does not read"));
	CHECK(!keep_lease_state_valid(&s, 1, BOOT));
}

TEST(strict_lines)
{
	struct keep_lease_state s = live_state(), d;
	struct keep_buf b;
	char buf[4096], *p;

	keep_buf_init(&b, 8192);
	CHECK_EQ_INT(keep_lease_state_encode(&s, &b), 0);
	/* the clock line missing, or empty: refused */
	memcpy(buf, b.data, b.len);
	buf[b.len] = '\0';
	p = strstr(buf, "clock boottime\n");
	memmove(p, p + 15, strlen(p + 15) + 1);
	CHECK_EQ_INT(keep_lease_state_decode(buf, strlen(buf), &d), KEEP_ERR_PARSE);
	memcpy(buf, b.data, b.len);
	buf[b.len] = '\0';
	p = strstr(buf, "clock boottime\n");
	memmove(p + 6, p + 14, strlen(p + 14) + 1);
	CHECK_EQ_INT(keep_lease_state_decode(buf, strlen(buf), &d), KEEP_ERR_PARSE);
	/* a format 1 key in a format 2 file */
	{
		static const char mixed[] =
		    "keep-lease-state 2\nnode n1\ninstance 5f0c2a9e8b7d41c3a6e2f90d1b4c7e58\n"
		    "pid 4242\nclock boottime\nboot_id b\nphase live\nreason -\nversion v1\n"
		    "written_at_ms 1\nvalid_until_mono_ms 5000\nvalid_until_wall_ms 1\n"
		    "live_since_ms 1\nlapses 0\nupdated_wall_ms 1\n";

		CHECK_EQ_INT(keep_lease_state_decode(mixed, sizeof(mixed) - 1, &d), KEEP_ERR_PARSE);
	}
	keep_buf_release(&b);
}

/* keep_grant_now on a real state directory, this boot, the boot clock
 * (lib/local/holds.c). The registration after an acquisition's write is the
 * acquisition machine's step (tests/unit/test_ownsm.c). */
TEST(grants_and_registrations_are_judged_at_the_moment_they_are_given)
{
	char dir[] = "/tmp/keep-test-statedir-XXXXXX";
	struct keep_lease_state s = live_state(), was;
	struct keep_hold h;
	struct keep_pending p;
	enum keep_grant g;
	const char *why;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	CHECK_EQ_INT(keep_holds_init(dir), 0);
	keep_boot_id(s.boot_id, sizeof(s.boot_id));
	s.valid_until_ms = keep_boot_ms() + 60000;
	CHECK_EQ_INT(keep_lease_state_write(dir, &s), 0);
	memset(&h, 0, sizeof(h));
	snprintf(h.key, sizeof(h.key), "t/c/a");
	snprintf(h.instance, sizeof(h.instance), "%s", s.instance);
	h.generation = 1;
	snprintf(h.version, sizeof(h.version), "v1");
	h.epoch = s.lapses;
	/* valid, same instance and lapses: the grant passes */
	CHECK_EQ_INT(keep_hold_write(dir, &h), KEEP_SD_DURABLE);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 1, &g, &why), KEEP_EXIT_OK);
	CHECK(why == NULL);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 2, &g, NULL), KEEP_EXIT_NO);
	/* a caller's clock reading taken long before is never trusted alone */
	CHECK_EQ_INT(keep_holds_lease(dir, 0, &was), KEEP_EXIT_OK);
	/* the deadline passed: not valid, even for a caller passing an old now */
	s.valid_until_ms = keep_boot_ms() - 1;
	CHECK_EQ_INT(keep_lease_state_write(dir, &s), 0);
	CHECK_EQ_INT(keep_holds_lease(dir, s.valid_until_ms - 1000, &was), KEEP_EXIT_RAN_OUT);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 1, &g, NULL), KEEP_EXIT_RAN_OUT);
	/* valid again but lapsed since: the hold is over */
	s.valid_until_ms = keep_boot_ms() + 60000;
	s.lapses = 3;
	CHECK_EQ_INT(keep_lease_state_write(dir, &s), 0);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 1, &g, NULL), KEEP_EXIT_NO);
	CHECK_EQ_INT(g, KEEP_GRANT_LAPSED);
	/* valid, same epoch, but a release of the hold is pending (issue 18) */
	h.epoch = s.lapses;
	CHECK_EQ_INT(keep_hold_write(dir, &h), KEEP_SD_DURABLE);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 1, &g, NULL), KEEP_EXIT_OK);
	keep_pending_of_hold(&p, &h, 1);
	CHECK_EQ_INT(keep_pending_write(dir, &p), KEEP_SD_DURABLE);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 1, &g, NULL), KEEP_EXIT_NO);
	CHECK_EQ_INT(g, KEEP_GRANT_RELEASING);
	CHECK_EQ_INT(keep_pending_remove(dir, &p), KEEP_SD_DURABLE);
	/* another boot's file: not valid, with the reason */
	snprintf(s.boot_id, sizeof(s.boot_id), "ffffffff-0000-0000-0000-000000000000");
	CHECK_EQ_INT(keep_lease_state_write(dir, &s), 0);
	CHECK_EQ_INT(keep_grant_now(dir, "t/c/a", 1, &g, &why), KEEP_EXIT_NOT_LIVE);
	CHECK(why && strstr(why, "another boot"));
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
}

TEST(the_judging_lines_round_trip_and_are_optional)
{
	struct keep_lease_state s = live_state(), d;
	struct keep_buf b;
	const char *tail;

	s.have_judge = true;
	s.judge_offset_ms = 10000;
	s.clock_base_ms = 1767000000000;
	keep_buf_init(&b, 8192);
	CHECK_EQ_INT(keep_lease_state_encode(&s, &b), 0);
	CHECK(strstr(keep_buf_str(&b), "\nupdated_wall_ms 1767225600200\njudge_offset_ms "
				       "10000\nclock_base_ms 1767000000000\n") != NULL);
	CHECK_EQ_INT(keep_lease_state_decode(b.data, b.len, &d), 0);
	CHECK(d.have_judge);
	CHECK_EQ_INT(d.judge_offset_ms, 10000);
	CHECK_EQ_INT(d.clock_base_ms, 1767000000000);
	/* an older lease-write's file: no judging lines, offset 0 */
	tail = strstr(keep_buf_str(&b), "judge_offset_ms");
	CHECK_EQ_INT(keep_lease_state_decode(b.data, (size_t)(tail - b.data), &d), 0);
	CHECK(!d.have_judge);
	CHECK_EQ_INT(keep_lease_state_judge_wall(&d, 100, 5000, BOOT), 5000);
	/* one of the two alone is malformed */
	CHECK_EQ_INT(keep_lease_state_decode(b.data, (size_t)(tail - b.data) + 22, &d),
		     KEEP_ERR_PARSE);
	keep_buf_release(&b);
}

TEST(others_are_judged_on_the_wall_clock_less_the_steps)
{
	struct keep_lease_state s = live_state();

	s.have_judge = true;
	s.judge_offset_ms = 10000;
	s.clock_base_ms = 1000000; /* wall - boot at lease-write's last reading */
	/* no step since: wall - offset */
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 500, 1000500, BOOT), 990500);
	/* a forward step of 7000 not noticed yet: subtracted too */
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 500, 1007500, BOOT), 990500);
	/* a step back: never later than the wall clock less the offset */
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 500, 995500, BOOT), 985500);
	/* another boot: the base is not comparable, the offset still counts */
	CHECK_EQ_INT(keep_lease_state_judge_wall(&s, 500, 1007500, "other-boot"), 997500);
	/* no state: the wall clock */
	CHECK_EQ_INT(keep_lease_state_judge_wall(NULL, 500, 1007500, BOOT), 1007500);
}

int main(void)
{
	RUN(format_2_round_trips_with_its_clock_and_boot);
	RUN(validity_is_judged_on_the_readers_boot_clock_reading);
	RUN(a_format_1_file_decodes_as_monotonic_and_is_never_valid);
	RUN(another_boot_another_clock_or_no_boot_id_is_never_valid);
	RUN(strict_lines);
	RUN(grants_and_registrations_are_judged_at_the_moment_they_are_given);
	RUN(the_judging_lines_round_trip_and_are_optional);
	RUN(others_are_judged_on_the_wall_clock_less_the_steps);
	return unit_done();
}
