/* keep — lease timing (ADR 0020 §5). Pure; all values in ms. */
#ifndef KEEP_CORE_TIMING_H
#define KEEP_CORE_TIMING_H

#include <stddef.h>
#include <stdint.h>

struct keep_timing {
	int64_t ttl_ms;	     /* lease ttl (default 10000) */
	int64_t grace_ms;    /* takeover grace (default 5000) */
	int64_t safety_ms;   /* owner's safety margin (default 2000) */
	int64_t max_skew_ms; /* clock skew bound between nodes (default 1000) */
	int64_t period_ms;   /* heartbeat period (default 3000) */
};

/* Fill the ADR defaults: 10000/5000/2000/1000/3000. */
void keep_timing_defaults(struct keep_timing *t);

/* Validate: every value > 0 (max_skew >= 0), safety < ttl,
 * grace + safety >= 2 * max_skew, period <= ttl / 3.
 * 0 or KEEP_ERR_CONFIG with a one-line reason in err. */
int keep_timing_check(const struct keep_timing *t, char *err, size_t errlen);

/* Lease write cadence: min(period, ttl / 3) (ms), measured from the previous send. */
int64_t keep_timing_write_every_ms(const struct keep_timing *t);

/* Bound of one lease-write attempt: (ttl - safety) / 3 (ms). */
int64_t keep_timing_attempt_timeout_ms(const struct keep_timing *t);

/* How long an owner may act after the send of its last acknowledged write:
 * ttl - safety (ms). */
int64_t keep_timing_valid_for_ms(const struct keep_timing *t);

/* How long after a node's kept written_at others wait before its records
 * are free: ttl + grace (ms). */
int64_t keep_timing_takeover_ms(const struct keep_timing *t);

#endif
