/* keep — lease timing (ADR 0020 §5). Pure; all values in ms. */
#ifndef KEEP_CORE_TIMING_H
#define KEEP_CORE_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/parse.h"

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

/* KEEP_WALL_MAX_MS: parse.h (vocabulary: decoders check it) */

/* a + b and a - b (ms), saturated at INT64_MIN / INT64_MAX instead of
 * overflowing. Every deadline computed from a time that came from the
 * store, a line or a file goes through these, so a hostile or corrupt
 * value can push a deadline to "never", not wrap it into the past: a
 * deadline that saturated at INT64_MAX is never reached (the decisions
 * test for it). Pure. */
int64_t keep_add_sat_ms(int64_t a, int64_t b);
int64_t keep_sub_sat_ms(int64_t a, int64_t b);

/* The two wall clocks of one decision, read together (lib/local/holds.h
 * keep_walls_now; ms since the epoch). The rule every dated write keeps
 * (issue 23; docs/lease.md "Dates and judgements"): a date this node
 * writes into the bucket (the written_at of a live write or of a created
 * fence, a fence's fenced_at, the cluster object's written_at) is never
 * earlier than wall_ms, the writer's wall clock. judge_wall_ms (wall_ms
 * less the judging offset and any forward step not noticed yet,
 * docs/lease.md "Judging others after a step"; <= wall_ms) only judges
 * OTHER nodes' freedom, where being late costs delay, never safety. A
 * date taken from the judging clock would let others judge this node's
 * write free that much early: two owners. */
struct keep_walls {
	int64_t wall_ms;
	int64_t judge_wall_ms;
};

/* keep_date_written_ms's floor_ms when the writer has none. */
#define KEEP_DATE_NO_FLOOR INT64_MIN

/* The date this node writes into the bucket (ms since the epoch): the
 * writer's wall clock wall_ms, raised to floor_ms when that is later
 * (KEEP_DATE_NO_FLOOR: none; the lease machine's floor keeps written_at
 * from going back across a step or a process). Never earlier than
 * wall_ms, whatever its value (a wall clock before 1970 included), and
 * never taken from judge_wall_ms: a date from the judging clock would
 * let others judge this node's write free that much early (two owners).
 * Every dated field of a write goes through here: a live write's
 * written_at, a fence's fenced_at, a created fence's written_at, the
 * cluster object's written_at. Pure. ADR 0020 §1, §2; issue 23. */
int64_t keep_date_written_ms(int64_t wall_ms, int64_t floor_ms);

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

/* The age (ms) past which a heartbeat of a node's fencing pipeline
 * (STATE_DIR/ID/watch of node-watch, STATE_DIR/ID/fence of lease-fence) is
 * stalled: two heartbeat periods (one missed beat) plus the attempt
 * timeout (a request in flight when the beat was due): 2 * period +
 * (ttl - safety) / 3. lease-status --progress judges the files with it,
 * and keep-agent reads it from lease-status --paths (docs/operations.md
 * "Readiness"; ADR 0020 §2: the watch and the fence a node runs). */
int64_t keep_timing_stall_ms(const struct keep_timing *t);

/* Is a heartbeat file due again (node-watch's watch state, ms on the boot
 * clock): a period has passed since its last write (now - last >=
 * period), checked between passes, between the pages of a listing and
 * between reads, so a long pass still beats (docs/operations.md
 * "Readiness"; keep_timing_heartbeat_stalled judges it). */
bool keep_timing_heartbeat_due(int64_t last_beat_mono_ms, int64_t now_mono_ms,
			       const struct keep_timing *t);

/* Is a heartbeat file of the fencing pipeline stalled now (lease-status
 * --progress; docs/operations.md "Readiness")? file_boot: the boot id the
 * file names (NULL when absent); boot: this boot's id ("" when unknown,
 * which a file names "-"); updated_ms: the file's updated_mono_ms and
 * now_ms this boot's clock read after the file (ms). A file of another
 * boot is stalled (its clock is not ours; *age_ms = -1: no age); else
 * *age_ms = now - updated (0 when the file is ahead) and the file is
 * stalled past keep_timing_stall_ms. Strings borrowed. */
bool keep_timing_heartbeat_stalled(const char *file_boot, const char *boot, int64_t updated_ms,
				   int64_t now_ms, const struct keep_timing *t, int64_t *age_ms);

/* When the n-th progress line of a wait that began at since_mono_ms is
 * due (n >= 1): since + n * period_ms, saturated; a period <= 0 is one
 * heartbeat period of the defaults (3000 ms). Progress lines say what a
 * command waits for, once per period, while it waits (issue 27: never
 * silent for longer than a period; docs/operations.md "Logs"). */
int64_t keep_timing_progress_due_ms(int64_t since_mono_ms, int64_t period_ms, int64_t n);

#endif
