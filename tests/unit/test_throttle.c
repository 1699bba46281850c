/* Unit tests: throttled replies and the full-jitter backoff
 * (lib/core/throttle.c; issue 28 item 4; docs/s3.md "Throttling"), and the
 * classification that stays beside them (lib/store/s3.c: a throttled reply
 * stays ambiguous for the protocol). */
#include "../../lib/core/throttle.h"
#include "../../lib/local/metrics.h"
#include "../../lib/store/s3_internal.h"
#include "unit.h"

TEST(throttle_replies_are_503_429_and_the_throttling_codes)
{
	CHECK(keep_throttle_reply(503, "SlowDown"));
	CHECK(keep_throttle_reply(503, "ServiceUnavailable"));
	CHECK(keep_throttle_reply(503, NULL)); /* a 503 without a body */
	CHECK(keep_throttle_reply(429, "TooManyRequests"));
	CHECK(keep_throttle_reply(429, ""));
	CHECK(keep_throttle_reply(400, "Throttling"));
	CHECK(keep_throttle_reply(400, "ThrottlingException"));
	CHECK(keep_throttle_reply(403, "RequestLimitExceeded"));
	CHECK(keep_throttle_reply(500, "SlowDown"));
	CHECK(!keep_throttle_reply(500, "InternalError"));
	CHECK(!keep_throttle_reply(502, ""));
	CHECK(!keep_throttle_reply(504, NULL));
	CHECK(!keep_throttle_reply(412, "PreconditionFailed"));
	CHECK(!keep_throttle_reply(404, "NoSuchKey"));
	CHECK(!keep_throttle_reply(200, ""));
	CHECK(!keep_throttle_reply(0, NULL));	      /* no reply (timeout, reset) */
	CHECK(!keep_throttle_reply(400, "slowdown")); /* codes are case-sensitive */
}

/* The outcome the protocol decides on is unchanged: a throttled write may
 * have been applied on some stores, so it is never taken for "not done". */
TEST(throttled_replies_stay_ambiguous_for_the_protocol)
{
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, KEEP_COND_IF_MATCH, 503, "SlowDown"),
		     KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, KEEP_COND_NONE, 429, "TooManyRequests"),
		     KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, KEEP_COND_NONE, 503, "SlowDown"),
		     KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_LIST, KEEP_COND_NONE, 429, ""), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_DEL, KEEP_COND_IF_MATCH, 503, ""),
		     KEEP_STORE_AMBIGUOUS);
}

TEST(backoff_ceiling_doubles_from_the_base_to_the_cap)
{
	CHECK_EQ_INT(keep_backoff_ceiling_ms(0, 100, 10000), 0);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(-3, 100, 10000), 0);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(1, 100, 10000), 100);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(2, 100, 10000), 200);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(3, 100, 10000), 400);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(7, 100, 10000), 6400);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(8, 100, 10000), 10000);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(1000000, 100, 10000), 10000); /* no overflow */
	CHECK_EQ_INT(keep_backoff_ceiling_ms(1, KEEP_BACKOFF_BASE_MS, KEEP_BACKOFF_CAP_MS), 100);
	CHECK_EQ_INT(keep_backoff_ceiling_ms(99, KEEP_BACKOFF_BASE_MS, KEEP_BACKOFF_CAP_MS), 10000);
}

/* Full jitter: the delay is the random input folded into [0, ceiling]; it
 * reaches both ends and never passes the ceiling. */
TEST(backoff_is_full_jitter_within_the_ceiling)
{
	uint64_t rnd = 0x243f6a8885a308d3ull; /* splitmix-ish walk below */
	int64_t n, lo_seen = 1 << 30, hi_seen = -1;

	CHECK_EQ_INT(keep_backoff_ms(0, 12345, 100, 10000), 0);
	CHECK_EQ_INT(keep_backoff_ms(1, 0, 100, 10000), 0);
	CHECK_EQ_INT(keep_backoff_ms(1, 100, 100, 10000), 100);
	CHECK_EQ_INT(keep_backoff_ms(1, 101, 100, 10000), 0);
	CHECK_EQ_INT(keep_backoff_ms(3, 401, 100, 10000), 0);
	CHECK_EQ_INT(keep_backoff_ms(3, 399, 100, 10000), 399);
	for (n = 0; n < 20000; n++) {
		int64_t d;

		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		d = keep_backoff_ms(9, rnd >> 11, 100, 10000);
		CHECK(d >= 0);
		CHECK(d <= 10000);
		if (d < lo_seen)
			lo_seen = d;
		if (d > hi_seen)
			hi_seen = d;
	}
	CHECK(lo_seen < 100);  /* reaches near 0 */
	CHECK(hi_seen > 9900); /* and near the cap */
}

/* The rule a handle's next request follows: full jitter from the base to
 * the cap, never more than half the request's own bound. */
TEST(throttle_backoff_is_full_jitter_within_half_the_bound)
{
	CHECK_EQ_INT(keep_throttle_backoff_ms(0, 12345, 1000), 0); /* not throttled */
	CHECK_EQ_INT(keep_throttle_backoff_ms(-1, 77, 0), 0);
	CHECK_EQ_INT(keep_throttle_backoff_ms(1, 100, 0), 100);	     /* no bound: the draw */
	CHECK_EQ_INT(keep_throttle_backoff_ms(1, 100, 1000), 100);   /* under half */
	CHECK_EQ_INT(keep_throttle_backoff_ms(1, 100, 150), 75);     /* cut to half */
	CHECK_EQ_INT(keep_throttle_backoff_ms(99, 10000, 0), 10000); /* the cap */
	CHECK_EQ_INT(keep_throttle_backoff_ms(99, 10000, 5000), 2500);
	CHECK_EQ_INT(keep_throttle_backoff_ms(3, 401, 100000), 0); /* folded into [0, 400] */
	CHECK_EQ_INT(keep_throttle_backoff_ms(3, 399, -5), 399);   /* a negative bound: none */
	for (uint64_t r = 0; r < 3000; r += 7) {
		int64_t d = keep_throttle_backoff_ms(8, r * 2654435761u, 3000);

		CHECK(d >= 0);
		CHECK(d <= 1500);
		CHECK(d <= keep_backoff_ceiling_ms(8, KEEP_BACKOFF_BASE_MS, KEEP_BACKOFF_CAP_MS));
	}
}

TEST(reqstats_count_throttled_replies_by_operation)
{
	struct keep_reqstats st;

	keep_reqstats_init(&st);
	CHECK_EQ_INT(keep_reqstats_throttled_op(&st, KEEP_REQ_PUT), 0);
	keep_reqstats_throttled(&st, KEEP_REQ_PUT);
	keep_reqstats_throttled(&st, KEEP_REQ_PUT);
	keep_reqstats_throttled(&st, KEEP_REQ_LIST);
	keep_reqstats_throttled(&st, (enum keep_req_op)99); /* ignored */
	CHECK_EQ_INT(keep_reqstats_throttled_op(&st, KEEP_REQ_PUT), 2);
	CHECK_EQ_INT(keep_reqstats_throttled_op(&st, KEEP_REQ_LIST), 1);
	CHECK_EQ_INT(keep_reqstats_throttled_op(&st, KEEP_REQ_GET), 0);
}

int main(void)
{
	RUN(throttle_replies_are_503_429_and_the_throttling_codes);
	RUN(throttled_replies_stay_ambiguous_for_the_protocol);
	RUN(backoff_ceiling_doubles_from_the_base_to_the_cap);
	RUN(backoff_is_full_jitter_within_the_ceiling);
	RUN(throttle_backoff_is_full_jitter_within_half_the_bound);
	RUN(reqstats_count_throttled_replies_by_operation);
	return unit_done();
}
