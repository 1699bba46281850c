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
	/* a wall-clock step beyond this, against the boot clock between two
	 * lease-write ticks, ends every hold (docs/lease.md "Clocks"); 0: the
	 * default, max_skew / 2 but at least KEEP_CLOCK_STEP_MIN_MS. Last, so
	 * a positional initialiser of the five above leaves it at its default. */
	int64_t clock_step_ms;
};

/* The smallest step threshold (ms): two clock readings, their rounding to
 * ms and a preemption between them must never look like a step. */
#define KEEP_CLOCK_STEP_MIN_MS 20

/* Fill the ADR defaults: 10000/5000/2000/1000/3000, clock_step_ms 0
 * (default). */
void keep_timing_defaults(struct keep_timing *t);

/* Validate: every value > 0 (max_skew >= 0), safety < ttl,
 * grace + safety >= 2 * max_skew, period <= ttl / 3; clock_step_ms 0 or
 * KEEP_CLOCK_STEP_MIN_MS .. grace + safety - max_skew (an undetected step
 * shifts this node's written_at by up to that much; the margin left by
 * the skew bound must cover it), and the default it stands for must be
 * within the same bound.
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

/* The wall-clock step threshold in force (ms): clock_step_ms, or its
 * default max(max_skew / 2, KEEP_CLOCK_STEP_MIN_MS). */
int64_t keep_timing_clock_step_ms(const struct keep_timing *t);

#endif
