/* Unit tests: the `stale` line's one codec (lib/driver/staleline.c; ADR 0020 §2):
 * what node-watch writes is what lease-fence reads. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/base/buf.h"
#include "../../lib/driver/staleline.h"
#include "../../lib/platform/line.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"

/* Rule: a stale event encoded by node-watch decodes to the same candidate. */
TEST(round_trip)
{
	struct keep_watch_event e;
	struct keep_stale st;
	struct keep_buf b;
	char err[256];

	memset(&e, 0, sizeof(e));
	e.kind = KEEP_WEV_STALE;
	snprintf(e.node, sizeof(e.node), "n-1.a");
	snprintf(e.instance, sizeof(e.instance), IA);
	e.written_at_ms = 1700000000123LL;
	e.unchanged_ms = 1800;
	e.live_since_mono_ms = 5000;
	e.watch_since_mono_ms = 6000;
	keep_stale_line_begin(&b, &e);
	CHECK_EQ_INT(keep_stale_line_decode(b.data, b.len, &st, err, sizeof(err)), 1);
	CHECK_EQ_STR(st.node, "n-1.a");
	CHECK_EQ_STR(st.instance, IA);
	CHECK_EQ_INT(st.written_at_ms, 1700000000123LL);
	CHECK_EQ_INT(st.live_since_mono_ms, 5000);
	CHECK_EQ_INT(st.watch_since_mono_ms, 6000);
	keep_buf_release(&b);

	e.live_since_mono_ms = 0; /* unknown: not written, read back as 0 */
	e.watch_since_mono_ms = 0;
	keep_stale_line_begin(&b, &e);
	CHECK(strstr(b.data, "live_since_mono_ms") == NULL);
	CHECK_EQ_INT(keep_stale_line_decode(b.data, b.len, &st, err, sizeof(err)), 1);
	CHECK_EQ_INT(st.live_since_mono_ms, 0);
	CHECK_EQ_INT(st.watch_since_mono_ms, 0);
	keep_buf_release(&b);
}

/* Rule: node-watch's other records are ignored, anything else is malformed. */
TEST(other_records_and_malformed)
{
	struct keep_stale st;
	char err[256], big[KEEP_LINE_MAX + 2];
	const char *join = "join node=a state=live instance=" IA " written_at_ms=5 format=3";

	CHECK_EQ_INT(keep_stale_line_decode(join, strlen(join), &st, err, sizeof(err)), 0);
	CHECK_EQ_INT(keep_stale_line_decode("hello node=a", 12, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "unknown record type") != NULL);
	CHECK_EQ_INT(keep_stale_line_decode("stale node=a instance=" IA, 54, &st, err, sizeof(err)),
		     -1);
	CHECK(strstr(err, "written_at_ms") != NULL);
	CHECK_EQ_INT(
	    keep_stale_line_decode("stale node=a instance=" IA " written_at_ms=5 x=1",
				   strlen("stale node=a instance=" IA " written_at_ms=5 x=1"), &st,
				   err, sizeof(err)),
	    -1);
	CHECK(strstr(err, "unknown key 'x'") != NULL);
	memset(big, 'a', sizeof(big));
	CHECK_EQ_INT(keep_stale_line_decode(big, sizeof(big), &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "line longer than") != NULL);
}

int main(void)
{
	RUN(round_trip);
	RUN(other_records_and_malformed);
	return unit_done();
}
