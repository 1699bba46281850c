#include "timing.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"

void keep_timing_defaults(struct keep_timing *t)
{
	t->ttl_ms = 10000;
	t->grace_ms = 5000;
	t->safety_ms = 2000;
	t->max_skew_ms = 1000;
	t->period_ms = 3000;
	t->clock_step_ms = 0;
}

int64_t keep_timing_clock_step_ms(const struct keep_timing *t)
{
	int64_t half = t->max_skew_ms / 2;

	if (t->clock_step_ms > 0)
		return t->clock_step_ms;
	return half > KEEP_CLOCK_STEP_MIN_MS ? half : KEEP_CLOCK_STEP_MIN_MS;
}

int keep_timing_check(const struct keep_timing *t, char *err, size_t errlen)
{
	if (t->ttl_ms <= 0 || t->grace_ms <= 0 || t->safety_ms <= 0 || t->period_ms <= 0 ||
	    t->max_skew_ms < 0) {
		snprintf(err, errlen, "lease timings must be positive (max_skew_ms may be 0)");
		return KEEP_ERR_CONFIG;
	}
	if (t->ttl_ms > 86400000 || t->grace_ms > 86400000 || t->max_skew_ms > 86400000) {
		snprintf(err, errlen, "lease timings above one day are refused");
		return KEEP_ERR_CONFIG;
	}
	if (t->safety_ms >= t->ttl_ms) {
		snprintf(err, errlen, "safety_ms (%lld) must be below ttl_ms (%lld)",
			 (long long)t->safety_ms, (long long)t->ttl_ms);
		return KEEP_ERR_CONFIG;
	}
	if (t->grace_ms + t->safety_ms < 2 * t->max_skew_ms) {
		snprintf(err, errlen,
			 "grace_ms + safety_ms (%lld) must be at least 2 * max_skew_ms (%lld)",
			 (long long)(t->grace_ms + t->safety_ms), (long long)(2 * t->max_skew_ms));
		return KEEP_ERR_CONFIG;
	}
	if (t->period_ms > t->ttl_ms / 3) {
		snprintf(err, errlen,
			 "heartbeat_period_ms (%lld) must not exceed ttl_ms / 3 (%lld)",
			 (long long)t->period_ms, (long long)(t->ttl_ms / 3));
		return KEEP_ERR_CONFIG;
	}
	if (t->clock_step_ms < 0 || t->clock_step_ms > 86400000 ||
	    (t->clock_step_ms > 0 && t->clock_step_ms < KEEP_CLOCK_STEP_MIN_MS)) {
		snprintf(err, errlen, "clock_step_ms (%lld) must be 0 (the default) or %d..%d",
			 (long long)t->clock_step_ms, KEEP_CLOCK_STEP_MIN_MS, 86400000);
		return KEEP_ERR_CONFIG;
	}
	if (keep_timing_clock_step_ms(t) > t->grace_ms + t->safety_ms - t->max_skew_ms) {
		snprintf(err, errlen,
			 "clock_step_ms (%lld%s) must not exceed grace_ms + safety_ms - "
			 "max_skew_ms (%lld)",
			 (long long)keep_timing_clock_step_ms(t),
			 t->clock_step_ms ? "" : ", the default",
			 (long long)(t->grace_ms + t->safety_ms - t->max_skew_ms));
		return KEEP_ERR_CONFIG;
	}
	if ((t->ttl_ms - t->safety_ms) / 3 < 1) {
		snprintf(err, errlen, "ttl_ms - safety_ms leaves no time for a lease write");
		return KEEP_ERR_CONFIG;
	}
	return 0;
}

int64_t keep_timing_write_every_ms(const struct keep_timing *t)
{
	int64_t third = t->ttl_ms / 3;
	return t->period_ms < third ? t->period_ms : third;
}

int64_t keep_timing_attempt_timeout_ms(const struct keep_timing *t)
{
	return (t->ttl_ms - t->safety_ms) / 3;
}

int64_t keep_timing_stall_ms(const struct keep_timing *t)
{
	return 2 * t->period_ms + keep_timing_attempt_timeout_ms(t);
}

int64_t keep_timing_valid_for_ms(const struct keep_timing *t)
{
	return t->ttl_ms - t->safety_ms;
}

int64_t keep_timing_takeover_ms(const struct keep_timing *t)
{
	return t->ttl_ms + t->grace_ms;
}

int64_t keep_add_sat_ms(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t keep_sub_sat_ms(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t keep_timing_progress_due_ms(int64_t since_mono_ms, int64_t period_ms, int64_t n)
{
	int64_t step = period_ms > 0 ? period_ms : 3000, off;

	if (n < 1)
		n = 1;
	off = n > INT64_MAX / step ? INT64_MAX : n * step;
	return keep_add_sat_ms(since_mono_ms, off);
}

bool keep_timing_heartbeat_stalled(const char *file_boot, const char *boot, int64_t updated_ms,
				   int64_t now_ms, const struct keep_timing *t, int64_t *age_ms)
{
	*age_ms = -1;
	if (!file_boot || strcmp(file_boot, boot[0] ? boot : "-") != 0)
		return true; /* another boot's: its clock is not ours */
	*age_ms = now_ms > updated_ms ? now_ms - updated_ms : 0;
	return *age_ms > keep_timing_stall_ms(t);
}

bool keep_timing_heartbeat_due(int64_t last_beat_mono_ms, int64_t now_mono_ms,
			       const struct keep_timing *t)
{
	return keep_sub_sat_ms(now_mono_ms, last_beat_mono_ms) >= t->period_ms;
}

int64_t keep_date_written_ms(int64_t wall_ms, int64_t floor_ms)
{
	return floor_ms > wall_ms ? floor_ms : wall_ms;
}
