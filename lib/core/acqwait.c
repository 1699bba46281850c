/* keep — the schedule of --wait (acqwait.h). */
#include "acqwait.h"

#include <string.h>

#include "../base/exitcode.h"
#include "ownio.h"
#include "timing.h"

void keep_acqwait_init(struct keep_acqwait *w, int64_t now_mono_ms, int64_t wait_ms,
		       int64_t period_ms)
{
	memset(w, 0, sizeof(*w));
	w->deadline_mono_ms = wait_ms == KEEP_ACQWAIT_FOREVER ? INT64_MAX
			      : wait_ms <= 0		      ? now_mono_ms
					     : keep_add_sat_ms(now_mono_ms, wait_ms);
	w->period_ms = period_ms > 0 ? period_ms : 1000;
}

bool keep_acqwait_transient(const struct keep_acquire_result *res)
{
	switch (res->kind) {
	case KEEP_AR_UNKNOWN:
		/* the write's fate is unknown (kept for the resolver): the next
		 * attempt reads the record again */
		return true;
	case KEEP_AR_ERROR:
		/* a timeout, a 5xx, a 429, a lost reply, the state directory:
		 * for now (111); the store refused (1) or a record keep cannot
		 * read (17) is definite */
		return res->exit_code == KEEP_EXIT_TEMP;
	case KEEP_AR_REFUSED:
		/* this node's own lease ran out (the store's outage) or is not
		 * live yet; a drain (the node stops) and a lost lease are not
		 * waited out */
		if (res->reason && strcmp(res->reason, "draining") == 0)
			return false;
		return res->exit_code == KEEP_EXIT_RAN_OUT || res->exit_code == KEEP_EXIT_NOT_LIVE;
	case KEEP_AR_ACQUIRED:
	case KEEP_AR_HELD:
		return false;
	}
	return false;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

int64_t keep_acqwait_held_retry_at(int64_t now, int64_t free_at_ms, int64_t judge_wall,
				   int64_t period_ms)
{
	/* a free time still ahead on the clock it was judged with: try again
	 * right after it (one already passed and still held waits a period:
	 * no busy loop; a new holder, say) */
	if (free_at_ms > judge_wall && free_at_ms - judge_wall < period_ms)
		return now + (free_at_ms - judge_wall) + 1;
	return keep_add_sat_ms(now, period_ms);
}

int64_t keep_acqwait_backoff_ms(int errors, int64_t period_ms, uint32_t rnd)
{
	int64_t base = KEEP_ACQWAIT_BACKOFF_MS;

	for (int i = 1; i < errors && base < period_ms; i++)
		base *= 2;
	base = min64(base, period_ms);
	if (base <= 0)
		return 0;
	return base / 2 + (int64_t)(rnd % (uint32_t)(base / 2 + 1));
}

void keep_acqwait_after(struct keep_acqwait *w, const struct keep_acquire_result *res, int64_t now,
			int64_t judge_wall, uint32_t rnd, struct keep_acqwait_step *st)
{
	int64_t next;

	memset(st, 0, sizeof(*st));
	w->attempts++;
	if (res->kind == KEEP_AR_ACQUIRED || now >= w->deadline_mono_ms) {
		st->kind = KEEP_ACQWAIT_DONE;
		return;
	}
	if (res->kind == KEEP_AR_HELD) {
		w->errors = 0;
		next = keep_acqwait_held_retry_at(now, res->free_at_ms, judge_wall, w->period_ms);
		if (!w->shown || w->shown_free_at_ms != res->free_at_ms ||
		    strcmp(w->shown_node, res->holder.node) != 0) {
			w->shown = true;
			w->shown_free_at_ms = res->free_at_ms;
			keep_copy_str(w->shown_node, sizeof(w->shown_node), res->holder.node);
			st->line = KEEP_ACQWAIT_LINE_WAITING;
		}
	} else if (keep_acqwait_transient(res)) {
		/* back off, with jitter: waiters that failed together do not
		 * come back together */
		w->errors++;
		next = now + keep_acqwait_backoff_ms(w->errors, w->period_ms, rnd);
		st->line = KEEP_ACQWAIT_LINE_RETRYING;
		st->reason = res->kind == KEEP_AR_UNKNOWN ? "unknown"
			     : res->reason		  ? res->reason
							  : "-";
		st->code = res->exit_code;
	} else {
		st->kind = KEEP_ACQWAIT_DONE; /* definite */
		return;
	}
	if (next >= w->deadline_mono_ms) {
		st->kind = KEEP_ACQWAIT_GIVE_UP;
		st->until_mono_ms = w->deadline_mono_ms;
	} else {
		st->kind = KEEP_ACQWAIT_RETRY;
		st->until_mono_ms = next;
	}
	st->in_ms = st->until_mono_ms - now;
}
