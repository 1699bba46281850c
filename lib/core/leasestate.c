/* keep — the judgement of a node's lease state file (see leasestate.h). */
#include "leasestate.h"

#include <stdio.h>
#include <string.h>

#include "../base/exitcode.h"
#include "timing.h"

const char *keep_lease_state_incomparable(const struct keep_lease_state *s, const char *boot_id)
{
	if (s->format == 1 || strcmp(s->clock, "monotonic") == 0)
		return "its deadlines are on CLOCK_MONOTONIC (keep-lease-state 1, written by an "
		       "older lease-write): restart lease-write";
	if (strcmp(s->clock, KEEP_CLOCK_NAME) != 0)
		return "its deadlines are on a clock this version does not read";
	if (!boot_id || !boot_id[0] || strcmp(s->boot_id, "-") == 0 || !s->boot_id[0])
		return "no boot id (/proc/sys/kernel/random/boot_id) to tell which boot its "
		       "deadlines belong to";
	if (strcmp(s->boot_id, boot_id) != 0)
		return "it was written on another boot";
	return NULL;
}

bool keep_lease_state_valid(const struct keep_lease_state *s, int64_t now_ms, const char *boot_id)
{
	return !keep_lease_state_incomparable(s, boot_id) && strcmp(s->phase, "live") == 0 &&
	       now_ms < s->valid_until_ms;
}

int keep_lease_phase_code(const char *phase, const char *reason)
{
	static const struct {
		const char *reason;
		int code;
	} lost[] = {
	    {"fenced", KEEP_EXIT_FENCED},
	    {"replaced", KEEP_EXIT_REPLACED},
	    {"released", KEEP_EXIT_RELEASED},
	    {"removed", KEEP_EXIT_REMOVED},
	    {"old-version-running", KEEP_EXIT_OLD_RUNNING},
	    {"bad-object", KEEP_EXIT_BAD_OBJECT},
	};

	if (!phase)
		return KEEP_EXIT_NOT_LIVE;
	if (strcmp(phase, "ran-out") == 0 || strcmp(phase, "live") == 0)
		return KEEP_EXIT_RAN_OUT; /* live but past its validity: ran out */
	if (strcmp(phase, "lost") == 0 && reason)
		for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
			if (strcmp(reason, lost[i].reason) == 0)
				return lost[i].code;
	return KEEP_EXIT_NOT_LIVE;
}

int keep_lease_state_code(const struct keep_lease_state *s, int64_t now_ms, const char *boot_id)
{
	if (!s)
		return KEEP_EXIT_NOT_LIVE;
	if (keep_lease_state_valid(s, now_ms, boot_id))
		return KEEP_EXIT_OK;
	if (keep_lease_state_incomparable(s, boot_id))
		return KEEP_EXIT_NOT_LIVE; /* its deadlines cannot be compared here */
	return keep_lease_phase_code(s->phase, s->reason);
}

const char *keep_lease_state_shown_phase(const struct keep_lease_state *s, int64_t now_ms,
					 const char *boot_id)
{
	if (strcmp(s->phase, "live") == 0 && !keep_lease_state_incomparable(s, boot_id) &&
	    !keep_lease_state_valid(s, now_ms, boot_id))
		return "ran-out";
	return s->phase;
}

int64_t keep_lease_state_judge_wall(const struct keep_lease_state *s, int64_t boot_ms,
				    int64_t wall_ms, const char *boot_id)
{
	int64_t j = wall_ms;

	if (!s || !s->have_judge)
		return j;
	j = keep_sub_sat_ms(j, s->judge_offset_ms);
	if (s->clock_base_ms > 0 && keep_lease_state_incomparable(s, boot_id) == NULL) {
		int64_t ahead =
		    keep_sub_sat_ms(keep_sub_sat_ms(wall_ms, boot_ms), s->clock_base_ms);

		if (ahead > 0)
			j = keep_sub_sat_ms(j, ahead);
	}
	return j;
}

void keep_lease_state_fencer_view(const struct keep_lease_state *s, const char *node_id,
				  int64_t now_mono_ms, const char *boot_id, struct keep_fencer *me)
{
	bool ok = s && node_id && node_id[0] && strcmp(s->node, node_id) == 0;

	keep_fencer_view(ok, ok && keep_lease_state_valid(s, now_mono_ms, boot_id),
			 ok ? s->live_since_ms : 0, now_mono_ms, me);
}

void keep_lease_state_project(const struct keep_lease *sm, int64_t now_mono_ms, int64_t wall_ms,
			      struct keep_lease_state *st)
{
	memset(st, 0, sizeof(*st));
	st->format = 2;
	snprintf(st->phase, sizeof(st->phase), "%s", keep_lease_phase_name(sm->phase));
	snprintf(st->reason, sizeof(st->reason), "%s", keep_lease_reason_name(sm->reason));
	snprintf(st->version, sizeof(st->version), "%s", sm->version[0] ? sm->version : "-");
	st->written_at_ms = sm->written_at_ms;
	if (keep_lease_valid(sm, now_mono_ms)) {
		st->valid_until_ms = sm->valid_until_mono_ms;
		st->valid_until_wall_ms =
		    keep_add_sat_ms(wall_ms, keep_sub_sat_ms(sm->valid_until_mono_ms, now_mono_ms));
		st->live_since_ms = sm->live_since_mono_ms;
	} else if (sm->phase == KEEP_LEASE_LIVE) {
		/* live but past its validity (the next tick counts the lapse):
		 * say so now, a reader must not wait for that tick */
		snprintf(st->phase, sizeof(st->phase), "%s",
			 keep_lease_phase_name(KEEP_LEASE_RAN_OUT));
	}
	st->lapses = sm->lapses + (sm->phase == KEEP_LEASE_LOST ? 1 : 0);
	st->updated_wall_ms = wall_ms;
	st->have_judge = true;
	st->judge_offset_ms = keep_lease_judge_offset_ms(sm);
	st->clock_base_ms = sm->have_clocks ? sm->clocks_wall_ms - sm->clocks_mono_ms : 0;
}

bool keep_lease_state_stopping(struct keep_lease_state *st)
{
	if (strcmp(st->phase, "live") != 0)
		return false;
	snprintf(st->phase, sizeof(st->phase), "stopping");
	st->valid_until_ms = 0;
	st->valid_until_wall_ms = 0;
	st->live_since_ms = 0;
	return true;
}

bool keep_lease_state_due(const struct keep_lease *sm)
{
	return sm->ev_n > 0 || sm->phase == KEEP_LEASE_LIVE || sm->state_fail_since_mono_ms;
}

int64_t keep_lease_restart_carry(struct keep_lease *sm, const struct keep_lease_state *prev,
				 const char *boot_id, int64_t now_mono_ms, int64_t wall_ms)
{
	int64_t thr = keep_timing_clock_step_ms(&sm->t), moved, sum;

	if (!prev || !prev->have_judge)
		return 0;
	sum = prev->judge_offset_ms > 0 ? prev->judge_offset_ms : 0;
	if (prev->clock_base_ms > 0 && keep_lease_state_incomparable(prev, boot_id) == NULL) {
		moved = keep_sub_sat_ms(wall_ms - now_mono_ms, prev->clock_base_ms);
		if (moved > thr || moved < -thr)
			sum = keep_add_sat_ms(sum, moved);
	}
	sm->step_sum_ms = sum < 0 ? 0 : sum;
	return sm->step_sum_ms;
}

int64_t keep_lease_state_clear_offset(struct keep_lease_state *st, int64_t now_mono_ms,
				      int64_t wall_ms, const char *boot_id)
{
	int64_t was = wall_ms - keep_lease_state_judge_wall(st, now_mono_ms, wall_ms, boot_id);

	st->have_judge = true;
	st->judge_offset_ms = 0;
	st->clock_base_ms = wall_ms - now_mono_ms;
	if (!boot_id || strcmp(st->boot_id, boot_id) != 0)
		st->clock_base_ms = 0; /* another boot's file: no base to compare */
	return was;
}
