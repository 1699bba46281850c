/* keep — throttled store replies and their backoff (issue 28). See throttle.h. */
#include "throttle.h"

#include <string.h>

bool keep_throttle_reply(long status, const char *code)
{
	static const char *const codes[] = {
	    "SlowDown",
	    "TooManyRequests",
	    "Throttling",
	    "ThrottlingException",
	    "RequestLimitExceeded",
	    "RequestThrottled",
	};
	size_t i;

	if (status == 503 || status == 429)
		return true;
	if (!code || !code[0])
		return false;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(code, codes[i]) == 0)
			return true;
	return false;
}

int64_t keep_backoff_ceiling_ms(int64_t throttled, int64_t base_ms, int64_t cap_ms)
{
	int64_t c = base_ms;

	if (throttled <= 0 || base_ms <= 0 || cap_ms <= 0)
		return 0;
	for (int64_t i = 1; i < throttled && c < cap_ms; i++)
		c *= 2;
	return c < cap_ms ? c : cap_ms;
}

int64_t keep_backoff_ms(int64_t throttled, uint64_t rnd, int64_t base_ms, int64_t cap_ms)
{
	int64_t c = keep_backoff_ceiling_ms(throttled, base_ms, cap_ms);

	if (c <= 0)
		return 0;
	return (int64_t)(rnd % (uint64_t)(c + 1));
}

int64_t keep_throttle_backoff_ms(int64_t throttled, uint64_t rnd, int64_t bound_ms)
{
	int64_t wait = keep_backoff_ms(throttled, rnd, KEEP_BACKOFF_BASE_MS, KEEP_BACKOFF_CAP_MS);

	if (bound_ms > 0 && wait > bound_ms / 2)
		wait = bound_ms / 2;
	return wait;
}
