/* keep — the schedule of `--wait`: when an acquisition is tried again, and
 * when the wait ends, a sans-I/O machine (issue 15; issue 24 item 4;
 * issue 23 item 4; docs/ownership.md "Waiting for a key").
 *
 * A driver (lib/driver/ownrun.c keep_acquire_wait, for owner-acquire --wait and
 * owner-run --wait) loops:
 *
 *   keep_acqwait_init(w, now_mono, wait_ms, period_ms)
 *   loop: run one acquisition (acquire.h) to its result res
 *         keep_acqwait_after(w, &res, now_mono, judge_wall, rnd, &st)
 *         DONE    -> answer res
 *         RETRY   -> print st.line, sleep until st.until_mono_ms (a stop
 *                    signal ends the wait: answer res), try again
 *         GIVE_UP -> print st.line, sleep until st.until_mono_ms (the
 *                    deadline), then answer res
 *
 * The rules:
 *   - acquired, or a definite answer (held past the deadline; refused:
 *     draining, a lost lease 10-13, 16, 17; error: the store refused (1),
 *     a record or object keep cannot read (17)): DONE;
 *   - held: try again at the holder's free time (free_at_ms + 1, judged on
 *     the clock the acquisition judged it with: the judging wall clock,
 *     wall - the judging offset, docs/lease.md "Judging others after a
 *     step"), else after one heartbeat period (at most one attempt a
 *     period while nothing announced a free time); line WAITING when the
 *     holder or its free time changed;
 *   - a transient answer (keep_acqwait_transient: unknown, an error for
 *     now (111: a timeout, 5xx, 429, the state directory), this node's own
 *     lease ran out or is starting (14, 15)): try again after a backoff
 *     with jitter, KEEP_ACQWAIT_BACKOFF_MS doubling per failure in a row,
 *     at most one period, drawn in [half, all] of it; line RETRYING every
 *     time;
 *   - never past the deadline (init's now + wait_ms; KEEP_ACQWAIT_FOREVER:
 *     none): the last sleep ends at it (GIVE_UP) and the last answer
 *     stands. wait_ms 0: no wait at all.
 * Times: *_mono_ms the boot clock, *_wall_ms the judging wall clock (ms). */
#ifndef KEEP_CORE_ACQWAIT_H
#define KEEP_CORE_ACQWAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "acquire.h"

#define KEEP_ACQWAIT_FOREVER (-1)   /* wait_ms: no bound */
#define KEEP_ACQWAIT_BACKOFF_MS 100 /* ms: the first retry after a transient answer */

enum keep_acqwait_kind {
	KEEP_ACQWAIT_DONE = 0,
	KEEP_ACQWAIT_RETRY,
	KEEP_ACQWAIT_GIVE_UP,
};

enum keep_acqwait_line {
	KEEP_ACQWAIT_LINE_NONE = 0,
	KEEP_ACQWAIT_LINE_WAITING,  /* waiting key=K node=N free_at_ms=T|- */
	KEEP_ACQWAIT_LINE_RETRYING, /* retrying key=K reason=R code=C in_ms=N */
};

struct keep_acqwait_step {
	enum keep_acqwait_kind kind;
	int64_t until_mono_ms;	     /* RETRY, GIVE_UP: sleep until then (boot clock) */
	enum keep_acqwait_line line; /* what to print before sleeping */
	int64_t in_ms;		     /* RETRYING: until_mono_ms - now */
	const char *reason;	     /* RETRYING: the answer's reason (static) */
	int code;		     /* RETRYING: the answer's exit code */
};

/* The machine. Fields are readable by drivers and tests. */
struct keep_acqwait {
	int64_t deadline_mono_ms; /* INT64_MAX: none */
	int64_t period_ms;
	int errors;	  /* transient answers in a row */
	int64_t attempts; /* acquisitions judged */
	bool shown;	  /* a WAITING line was printed */
	int64_t shown_free_at_ms;
	char shown_node[KEEP_NODE_ID_MAX + 1];
};

/* Start waiting at now_mono_ms for wait_ms (ms; 0: no wait;
 * KEEP_ACQWAIT_FOREVER: no bound), trying a held key again at most once a
 * period_ms (> 0; the heartbeat period). */
void keep_acqwait_init(struct keep_acqwait *w, int64_t now_mono_ms, int64_t wait_ms,
		       int64_t period_ms);

/* Is this acquisition answer one that waiting can outlive (file comment)? */
bool keep_acqwait_transient(const struct keep_acquire_result *res);

/* When a held key is tried again (boot clock, ms; issue 15, issue 23 item
 * 4): right after the holder's free time free_at_ms (free_at_ms + 1),
 * judged on the clock the acquisition judged it with (judge_wall_ms, the
 * judging wall clock: docs/lease.md "Judging others after a step"), when
 * that time is still ahead by less than period_ms; else one period
 * (period_ms > 0, the heartbeat period) after now_mono_ms: at most one
 * attempt a period while nothing announced a free time, and no busy loop
 * on a free time already passed (a new holder, say). Saturating. Pure. */
int64_t keep_acqwait_held_retry_at(int64_t now_mono_ms, int64_t free_at_ms, int64_t judge_wall_ms,
				   int64_t period_ms);

/* The backoff (ms) after errors (>= 1) transient answers in a row (issue
 * 24 item 4): KEEP_ACQWAIT_BACKOFF_MS doubling per answer, at most
 * period_ms (> 0), drawn with jitter in [half, all] of it from rnd (a
 * uniform random 32-bit value from the driver): waiters that failed
 * together do not come back together. Pure. */
int64_t keep_acqwait_backoff_ms(int errors, int64_t period_ms, uint32_t rnd);

/* The attempt ended with res (borrowed) at now_mono_ms, the acquisition
 * having judged other nodes on judge_wall_ms (the same clock: its free
 * times are compared with it); rnd is a uniform random 32-bit value from
 * the driver (the jitter). Fills *st (file comment). */
void keep_acqwait_after(struct keep_acqwait *w, const struct keep_acquire_result *res,
			int64_t now_mono_ms, int64_t judge_wall_ms, uint32_t rnd,
			struct keep_acqwait_step *st);

#endif
