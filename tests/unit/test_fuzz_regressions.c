/* keep — every input the fuzzers (fuzz/) found that broke a property,
 * kept as a unit test so it stays fixed. One TEST per finding, named for
 * the harness, with the crash file's bytes inline (docs/testing.md,
 * "Fuzzing"). */
#include <stdint.h>
#include <string.h>

#include "../../lib/base/err.h"
#include "../../lib/local/statedir.h"
#include "../../lib/store/s3_internal.h"
#include "unit.h"

/* fuzz_s3_error: an ETag with a NUL inside was accepted (0) with an empty
 * version token: "\0\"abC/\"abc\"" -> out "" and rc 0. */
TEST(etag_with_nul_is_refused)
{
	static const char in[] = "\0\"abC/\"abc\"";
	char out[KEEP_VERSION_MAX];

	CHECK_EQ_INT(keep_s3_version_from_etag(in, sizeof(in) - 1, out, sizeof(out)),
		     KEEP_ERR_PARSE);
	CHECK_EQ_STR(out, "");
	CHECK_EQ_INT(keep_s3_version_from_etag("\"a\001b\"", 6, out, sizeof(out)), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_s3_version_from_etag("\"a\nb\"", 5, out, sizeof(out)), KEEP_ERR_PARSE);
	/* still fine: quotes, weak marker, trailing CRLF of a header line */
	CHECK_EQ_INT(keep_s3_version_from_etag("W/\"abc\"\r\n", 9, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "abc");
}

static const char state_ok[] = "keep-lease-state 2\n"
			       "node n1\n"
			       "instance 5f0c2a9e8b7d41c3a6e2f90d1b4c7e58\n"
			       "pid 4242\n"
			       "clock boottime\n"
			       "boot_id 0b6f3c1e\n"
			       "phase live\n"
			       "reason -\n"
			       "version \"1a2b3c\"\n"
			       "written_at_ms 1767225600123\n"
			       "valid_until_ms 123456789\n"
			       "valid_until_wall_ms 1767225608123\n"
			       "live_since_ms 123000000\n"
			       "lapses 0\n"
			       "updated_wall_ms 1767225600200\n";

/* fuzz_lease_state: a NUL inside a value of the lease state file cut the
 * value short and was accepted ("instance \0\0\1\036..." -> instance "";
 * "phase li\0e" -> phase "li"). */
TEST(lease_state_with_nul_is_refused)
{
	struct keep_lease_state s;
	char buf[sizeof(state_ok)];
	char *p;

	CHECK_EQ_INT(keep_lease_state_decode(state_ok, sizeof(state_ok) - 1, &s), 0);
	CHECK_EQ_STR(s.phase, "live");

	memcpy(buf, state_ok, sizeof(buf));
	p = strstr(buf, "instance 5f");
	p[strlen("instance ")] = '\0';
	CHECK_EQ_INT(keep_lease_state_decode(buf, sizeof(buf) - 1, &s), KEEP_ERR_PARSE);

	memcpy(buf, state_ok, sizeof(buf));
	p = strstr(buf, "phase live");
	p[strlen("phase li")] = '\0'; /* was accepted as phase "li" */
	CHECK_EQ_INT(keep_lease_state_decode(buf, sizeof(buf) - 1, &s), KEEP_ERR_PARSE);
}

int main(void)
{
	RUN(etag_with_nul_is_refused);
	RUN(lease_state_with_nul_is_refused);
	return unit_done();
}
