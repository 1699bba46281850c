/* keep — the node lease state machine (ADR 0020 §1, §4, §5). See lease.h. */
#include "lease.h"

#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;
	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

/* Queue an event; the oldest is dropped when the queue is full. */
static struct keep_lease_event *push(struct keep_lease *sm, enum keep_lease_event_kind kind)
{
	struct keep_lease_event *e;
	int slot;

	if (sm->ev_n == KEEP_LEASE_EVENTS) {
		sm->ev_head = (sm->ev_head + 1) % KEEP_LEASE_EVENTS;
		sm->ev_n--;
	}
	slot = (sm->ev_head + sm->ev_n) % KEEP_LEASE_EVENTS;
	sm->ev_n++;
	e = &sm->ev[slot];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->written_at_ms = sm->written_at_ms;
	e->valid_until_mono_ms = sm->valid_until_mono_ms;
	copy_str(e->version, sizeof(e->version), sm->version);
	return e;
}

bool keep_lease_poll_event(struct keep_lease *sm, struct keep_lease_event *ev)
{
	if (!sm->ev_n)
		return false;
	*ev = sm->ev[sm->ev_head];
	sm->ev_head = (sm->ev_head + 1) % KEEP_LEASE_EVENTS;
	sm->ev_n--;
	return true;
}

/* The smallest retry spacing: a fraction of one attempt (ms). */
static int64_t retry_floor_of(const struct keep_timing *t)
{
	int64_t f = keep_timing_attempt_timeout_ms(t) / 16;
	return f < 10 ? 10 : f > 250 ? 250 : f;
}

static int64_t retry_floor(const struct keep_lease *sm)
{
	return retry_floor_of(&sm->t);
}

int64_t keep_lease_retry_delay_ms(const struct keep_timing *t, enum keep_lease_phase phase,
				  int failures, int64_t valid_until_mono_ms, int64_t now_mono_ms)
{
	int64_t floor = retry_floor_of(t), every = keep_timing_write_every_ms(t);
	int64_t backoff = floor, slack;
	int i;

	for (i = 1; i < failures && backoff < every; i++)
		backoff *= 2;
	backoff = min64(backoff, every);
	if (phase == KEEP_LEASE_LIVE) {
		slack = valid_until_mono_ms - now_mono_ms - keep_timing_attempt_timeout_ms(t);
		if (slack > 0)
			return min64(backoff, slack);
		return floor;
	}
	if (phase == KEEP_LEASE_STOPPING)
		return floor;
	if (phase == KEEP_LEASE_RAN_OUT) {
		/* after an outage every node must renew before its peers' watches
		 * (a write period plus an attempt, counted from their own first
		 * write after the lapse) end: keep recovering nodes close together */
		int64_t cap = every / 2 > floor ? every / 2 : floor;
		return min64(backoff, cap);
	}
	return backoff;
}

/* keep_lease_retry_delay_ms for the machine's own phase and failures. */
static int64_t retry_delay(const struct keep_lease *sm, int64_t now)
{
	return keep_lease_retry_delay_ms(&sm->t, sm->phase, sm->failures, sm->valid_until_mono_ms,
					 now);
}

static void remember_send(struct keep_lease *sm, int64_t written_at, int64_t mono, int64_t seq)
{
	int i;

	if (sm->nsends == KEEP_LEASE_SENDS) {
		for (i = 1; i < KEEP_LEASE_SENDS; i++)
			sm->sends[i - 1] = sm->sends[i];
		sm->nsends--;
	}
	sm->sends[sm->nsends].written_at_ms = written_at;
	sm->sends[sm->nsends].sent_mono_ms = mono;
	sm->sends[sm->nsends].seq = seq;
	sm->nsends++;
}

/* Our remembered write stamped written_at: its index in sends[], or -1. */
static int lookup_send(const struct keep_lease *sm, int64_t written_at)
{
	int i;

	for (i = sm->nsends - 1; i >= 0; i--)
		if (sm->sends[i].written_at_ms == written_at)
			return i;
	return -1;
}

static void start_check(struct keep_lease *sm, int64_t now)
{
	struct keep_lease_event *e;

	sm->phase = KEEP_LEASE_CHECK;
	sm->check_start_mono_ms = now;
	sm->check_deadline_mono_ms = 0;
	sm->next_read_mono_ms = now;
	sm->have_base = false;
	sm->have_last = false;
	sm->check_done = false;
	sm->check_no_shortcut = false;
	sm->readback = false;
	sm->failures = 0;
	e = push(sm, KEEP_LEV_CHECK_START);
	e->wait_ms = keep_timing_takeover_ms(&sm->t);
}

void keep_lease_init(struct keep_lease *sm, const struct keep_timing *t,
		     const struct keep_node_obj *tmpl, int64_t now_mono_ms)
{
	memset(sm, 0, sizeof(*sm));
	sm->t = *t;
	sm->tmpl = *tmpl;
	sm->tmpl.format = 3;
	sm->tmpl.state = KEEP_NODE_LIVE;
	sm->tmpl.fenced_by[0] = '\0';
	sm->tmpl.fenced_at_ms = 0;
	sm->seq = 0;
	start_check(sm, now_mono_ms);
}

static void lose(struct keep_lease *sm, enum keep_lease_reason reason, const char *state,
		 const char *instance)
{
	struct keep_lease_event *e;

	sm->phase = KEEP_LEASE_LOST;
	sm->reason = reason;
	sm->valid_until_mono_ms = 0;
	e = push(sm, KEEP_LEV_LOST);
	e->reason = reason;
	copy_str(e->state, sizeof(e->state), state);
	copy_str(e->other_instance, sizeof(e->other_instance), instance);
}

int64_t keep_lease_validity_end_ms(const struct keep_timing *t, int64_t sent_mono_ms)
{
	return sent_mono_ms + keep_timing_valid_for_ms(t);
}

bool keep_lease_ran_out(const struct keep_lease *sm, int64_t now_mono_ms)
{
	return sm->phase == KEEP_LEASE_LIVE && now_mono_ms >= sm->valid_until_mono_ms;
}

static void enter_ran_out(struct keep_lease *sm)
{
	sm->phase = KEEP_LEASE_RAN_OUT;
	sm->lapses++;
	sm->live_since_mono_ms = 0;
	push(sm, KEEP_LEV_RAN_OUT);
}

/* Become (or stay) LIVE on a write sent at sent_mono that the store holds,
 * if it is still valid at now; the event says how we got here. */
static void hold_write(struct keep_lease *sm, int64_t now, int64_t sent_mono, int64_t sent_seq,
		       enum keep_lease_event_kind kind)
{
	enum keep_lease_phase prev = sm->phase;

	if (keep_lease_ran_out(sm, now)) {
		/* the validity ran out while this reply was outstanding: readers
		 * saw the lease invalid, so it is a lapse (§1: every hold ends,
		 * new acquisitions get new generations), even though this write
		 * makes it valid again */
		enter_ran_out(sm);
		prev = KEEP_LEASE_RAN_OUT;
	}
	if (sm->clock_steps > 0 && sent_seq <= sm->step_seq) {
		/* sent before a wall-clock step was noticed: peers judge it by a
		 * written_at from the wall clock as it was; it validates nothing,
		 * and the next write (on the clock as it is) goes at once */
		sm->valid_until_mono_ms = 0;
		sm->next_write_mono_ms = now;
	} else {
		sm->valid_until_mono_ms = keep_lease_validity_end_ms(&sm->t, sent_mono);
		sm->next_write_mono_ms = max64(now, sent_mono + keep_timing_write_every_ms(&sm->t));
	}
	sm->failures = 0;
	if (sm->valid_until_mono_ms > now) {
		if (prev != KEEP_LEASE_LIVE)
			sm->live_since_mono_ms = now;
		sm->phase = KEEP_LEASE_LIVE;
		if (kind == KEEP_LEV_RENEWED && prev == KEEP_LEASE_FIRST)
			kind = KEEP_LEV_LIVE;
		else if (kind == KEEP_LEV_RENEWED && prev == KEEP_LEASE_RAN_OUT)
			kind = KEEP_LEV_RECOVERED;
		push(sm, kind);
		if (kind == KEEP_LEV_ADOPTED && prev == KEEP_LEASE_RAN_OUT)
			push(sm, KEEP_LEV_RECOVERED);
	} else {
		/* acknowledged, but its validity already passed: not valid */
		if (prev == KEEP_LEASE_LIVE)
			enter_ran_out(sm);
		else
			sm->phase = KEEP_LEASE_RAN_OUT;
		push(sm, kind);
	}
}

static void begin_stopping(struct keep_lease *sm, int64_t now)
{
	sm->phase = KEEP_LEASE_STOPPING;
	sm->valid_until_mono_ms = 0;
	sm->live_since_mono_ms = 0;
	sm->stop_deadline_mono_ms = now + keep_timing_valid_for_ms(&sm->t);
	sm->next_write_mono_ms = now;
	sm->failures = 0;
	push(sm, KEEP_LEV_STOPPING);
}

void keep_lease_stop(struct keep_lease *sm, int64_t now_mono_ms)
{
	switch (sm->phase) {
	case KEEP_LEASE_CHECK:
		sm->phase = KEEP_LEASE_STOPPED;
		push(sm, KEEP_LEV_STOPPED);
		break;
	case KEEP_LEASE_FIRST:
		if (sm->readback || sm->inflight) {
			sm->stop_requested =
			    true; /* decided once the first write's fate is known */
		} else {
			sm->phase = KEEP_LEASE_STOPPED;
			push(sm, KEEP_LEV_STOPPED);
		}
		break;
	case KEEP_LEASE_LIVE:
	case KEEP_LEASE_RAN_OUT:
		begin_stopping(sm, now_mono_ms);
		break;
	default:
		break;
	}
}

/* The written_at of a live write sent at now: the wall clock, but never
 * earlier than the previous live send's written_at carried forward on the
 * steady clock. So written_at never goes back within one process, and a
 * wall clock stepped back does not date our writes earlier than the clock
 * that dated them before: peers free our records at written_at + ttl +
 * grace on their clocks, and an early date would free them while we still
 * count ourselves valid on the steady clock (docs/lease.md "Clocks"). A
 * wall clock stepped forward is followed at once (later dates only make
 * peers wait longer). Between two readings the carried value and the wall
 * clock differ only by the readings' rounding: no drift accumulates. */
static int64_t live_written_at(const struct keep_lease *sm, int64_t now, int64_t wall)
{
	int64_t floor = KEEP_DATE_NO_FLOOR;

	if (sm->nsends > 0)
		floor = sm->sends[sm->nsends - 1].written_at_ms +
			(now - sm->sends[sm->nsends - 1].sent_mono_ms);
	/* never at or below a written_at read on nodes/<id> (another
	 * process of this node wrote it, on a wall clock since stepped
	 * back): written_at never goes back across processes either */
	if (sm->floor_written_at_ms > 0)
		floor = max64(floor, keep_add_sat_ms(sm->floor_written_at_ms, 1));
	return keep_date_written_ms(wall, floor);
}

/* Raise the floor to what a read of nodes/<id> showed (format 3, any
 * instance, any state: a released or fenced object keeps its written_at). */
static void see_floor(struct keep_lease *sm, const struct keep_node_obj *o)
{
	if (o && o->format == 3 && o->written_at_ms > sm->floor_written_at_ms)
		sm->floor_written_at_ms = o->written_at_ms;
}

/* The start check is over at now (wall: the reply's wall clock): true
 * when the wall clock is behind the floor, so the first write must not go
 * yet; it waits (reads go on) or gives up (docs/lease.md "A wall clock
 * behind the last write"). */
static bool floor_holds_back(struct keep_lease *sm, int64_t now, int64_t wall)
{
	int64_t gap = keep_sub_sat_ms(sm->floor_written_at_ms, wall);
	struct keep_lease_event *e;

	if (sm->floor_written_at_ms <= 0)
		return false;
	/* noticed beyond the step threshold (readings of two processes
	 * differ by their rounding); once waiting, until the wall passes it */
	if (gap <= keep_timing_clock_step_ms(&sm->t) && !(sm->floor_waiting && gap >= 0)) {
		sm->floor_waiting = false;
		return false;
	}
	if (gap > keep_timing_takeover_ms(&sm->t)) {
		sm->phase = KEEP_LEASE_STOPPED;
		sm->reason = KEEP_REASON_CLOCK_BEHIND;
		e = push(sm, KEEP_LEV_LOST);
		e->reason = KEEP_REASON_CLOCK_BEHIND;
		e->written_at_ms = sm->floor_written_at_ms;
		e->wait_ms = gap;
		return true;
	}
	if (!sm->floor_waiting) {
		sm->floor_waiting = true;
		e = push(sm, KEEP_LEV_CLOCK_BEHIND);
		e->written_at_ms = sm->floor_written_at_ms;
		e->wait_ms = gap;
	}
	sm->check_done = false;
	sm->next_read_mono_ms =
	    now + max64(retry_floor(sm), min64(sm->t.period_ms, keep_add_sat_ms(gap, 1)));
	return true;
}

int64_t keep_lease_attempt_timeout_ms(const struct keep_lease *sm, int64_t now_mono_ms)
{
	int64_t b = keep_timing_attempt_timeout_ms(&sm->t);

	/* the clean stop's bound holds every attempt: none ends after it
	 * (issue 23 item 3: the agent's stop fits systemd's limit) */
	if (sm->phase == KEEP_LEASE_STOPPING && sm->stop_deadline_mono_ms - now_mono_ms < b)
		b = max64(1, sm->stop_deadline_mono_ms - now_mono_ms);
	if (sm->orphan_deadline_mono_ms && sm->orphan_deadline_mono_ms - now_mono_ms < b)
		b = max64(1, sm->orphan_deadline_mono_ms - now_mono_ms);
	return b;
}

static void make_write(struct keep_lease *sm, int64_t now, int64_t wall,
		       struct keep_lease_action *act)
{
	act->kind = KEEP_LACT_WRITE;
	act->timeout_ms = keep_lease_attempt_timeout_ms(sm, now);
	act->obj = sm->tmpl;
	act->obj.seq = ++sm->seq;
	sm->inflight_released = sm->phase == KEEP_LEASE_STOPPING;
	if (sm->phase == KEEP_LEASE_STOPPING) {
		act->obj.state = KEEP_NODE_RELEASED;
		act->obj.written_at_ms = sm->written_at_ms; /* kept (§1, §4) */
	} else {
		act->obj.state = KEEP_NODE_LIVE;
		act->obj.written_at_ms = live_written_at(sm, now, wall);
		remember_send(sm, act->obj.written_at_ms, now, act->obj.seq);
	}
	if (sm->phase == KEEP_LEASE_FIRST && sm->last_absent) {
		act->cond = KEEP_COND_IF_NONE_MATCH;
	} else {
		act->cond = KEEP_COND_IF_MATCH;
		copy_str(act->if_match, sizeof(act->if_match),
			 sm->phase == KEEP_LEASE_FIRST ? sm->last_version : sm->version);
	}
	sm->inflight = true;
	sm->inflight_write = true;
	sm->sent_mono_ms = now;
	sm->sent_written_at_ms = act->obj.written_at_ms;
	sm->last_send_mono_ms = now;
}

static void make_read(struct keep_lease *sm, int64_t now, struct keep_lease_action *act)
{
	act->kind = KEEP_LACT_READ;
	act->timeout_ms = keep_lease_attempt_timeout_ms(sm, now);
	sm->inflight = true;
	sm->inflight_write = false;
	sm->sent_mono_ms = now;
}

/* A wall-clock step of step_ms noticed at now (docs/lease.md "Clocks"). */
static void clock_step(struct keep_lease *sm, int64_t now, int64_t step_ms)
{
	push(sm, KEEP_LEV_CLOCK_STEP)->step_ms = step_ms;
	sm->clock_steps++;
	sm->step_sum_ms = keep_add_sat_ms(sm->step_sum_ms, step_ms);
	sm->step_seq = sm->seq;
	switch (sm->phase) {
	case KEEP_LEASE_LIVE:
		/* a lapse: every hold ends (§1), peers may have judged our last
		 * writes by a wall clock that was wrong */
		enter_ran_out(sm);
		if (!sm->inflight && !sm->readback) {
			sm->next_write_mono_ms = now;
			sm->failures = 0;
		}
		break;
	case KEEP_LEASE_CHECK:
		sm->check_no_shortcut = true;
		break;
	default:
		break;
	}
}

void keep_lease_lapse(struct keep_lease *sm, int64_t now)
{
	if (sm->phase != KEEP_LEASE_LIVE)
		return;
	enter_ran_out(sm);
	if (!sm->inflight && !sm->readback) {
		sm->next_write_mono_ms = now;
		sm->failures = 0;
	}
}

int keep_lease_on_state_write(struct keep_lease *sm, int64_t now, bool ok)
{
	int r = 0;

	if (ok) {
		sm->state_fail_since_mono_ms = 0;
		return 0;
	}
	if (!sm->state_fail_since_mono_ms)
		sm->state_fail_since_mono_ms = now;
	if (sm->phase == KEEP_LEASE_STOPPING || sm->stop_requested)
		return 0; /* the clean stop goes on: released is what matters now */
	if (sm->phase == KEEP_LEASE_LIVE) {
		/* what readers see cannot be kept current: a lapse, then the
		 * file again (ran-out, lapses + 1) if it can be written */
		keep_lease_lapse(sm, now);
		r |= KEEP_LEASE_SAVE_AGAIN;
	}
	if (sm->inflight && sm->inflight_write &&
	    (sm->phase == KEEP_LEASE_FIRST || sm->phase == KEEP_LEASE_LIVE ||
	     sm->phase == KEEP_LEASE_RAN_OUT)) {
		/* handed out, not sent: answered as a write whose fate is
		 * unknown (read back once the file can be written again) */
		keep_lease_on_write(sm, now, KEEP_STORE_AMBIGUOUS, "");
		r |= KEEP_LEASE_WITHDRAWN | KEEP_LEASE_SAVE_AGAIN;
	}
	return r;
}

enum keep_lease_state_gate keep_lease_state_fail_gate(const struct keep_lease *sm,
						      int64_t now_mono_ms)
{
	if (!sm->state_fail_since_mono_ms || sm->state_gave_up || sm->stop_requested ||
	    sm->phase == KEEP_LEASE_STOPPING || sm->phase == KEEP_LEASE_STOPPED ||
	    sm->phase == KEEP_LEASE_LOST)
		return KEEP_LEASE_GATE_OPEN;
	if (now_mono_ms - sm->state_fail_since_mono_ms >= keep_timing_valid_for_ms(&sm->t))
		return KEEP_LEASE_GATE_GIVE_UP;
	return KEEP_LEASE_GATE_HOLD;
}

/* keep_lease_next's gate while the state file fails: true when it
 * answered (WAIT, or the give-up's first step). */
static bool state_gate(struct keep_lease *sm, int64_t now, struct keep_lease_action *act)
{
	switch (keep_lease_state_fail_gate(sm, now)) {
	case KEEP_LEASE_GATE_OPEN:
		return false;
	case KEEP_LEASE_GATE_GIVE_UP:
		/* given up: the clean stop, exit 111 (keep_lease_exit_code) */
		sm->state_gave_up = true;
		keep_lease_stop(sm, now);
		return false;
	case KEEP_LEASE_GATE_HOLD:
		break;
	}
	act->kind = KEEP_LACT_WAIT;
	act->until_mono_ms = now + KEEP_LEASE_STATE_RETRY_MS;
	return true;
}

void keep_lease_hold_first(struct keep_lease *sm)
{
	sm->go_held = true;
}

void keep_lease_go(struct keep_lease *sm)
{
	sm->go_held = false;
}

bool keep_lease_first_waits_go(const struct keep_lease *sm)
{
	return sm->phase == KEEP_LEASE_FIRST && sm->go_held;
}

void keep_lease_go_closed(struct keep_lease *sm, int64_t now_mono_ms)
{
	if (sm->go_held)
		keep_lease_stop(sm, now_mono_ms);
}

void keep_lease_orphan(struct keep_lease *sm, int64_t now)
{
	if (sm->orphan_deadline_mono_ms)
		return;
	sm->orphan_deadline_mono_ms = now + keep_timing_write_every_ms(&sm->t);
	keep_lease_stop(sm, now);
}

int64_t keep_lease_judge_offset_ms(const struct keep_lease *sm)
{
	return sm->step_sum_ms > 0 ? sm->step_sum_ms : 0;
}

int64_t keep_lease_wall_step_ms(const struct keep_timing *t, int64_t last_mono_ms,
				int64_t last_wall_ms, int64_t now_mono_ms, int64_t now_wall_ms)
{
	int64_t d = (now_wall_ms - last_wall_ms) - (now_mono_ms - last_mono_ms);
	int64_t limit = keep_timing_clock_step_ms(t);

	return d > limit || d < -limit ? d : 0;
}

void keep_lease_clocks(struct keep_lease *sm, int64_t now, int64_t wall)
{
	if (sm->have_clocks) {
		int64_t d = keep_lease_wall_step_ms(&sm->t, sm->clocks_mono_ms, sm->clocks_wall_ms,
						    now, wall);

		if (d)
			clock_step(sm, now, d);
	}
	sm->have_clocks = true;
	sm->clocks_mono_ms = now;
	sm->clocks_wall_ms = wall;
}

void keep_lease_guard_runs(struct keep_lease *sm, int64_t default_kill_after_ms)
{
	sm->runs_guard = true;
	sm->runs_kill_after_ms = default_kill_after_ms;
}

bool keep_lease_write_waits_jobs(const struct keep_lease *sm)
{
	if (!sm->runs_guard)
		return false;
	if (sm->phase == KEEP_LEASE_FIRST)
		return !sm->runs_first_ok;
	if (sm->phase == KEEP_LEASE_STOPPING)
		return !sm->runs_stop_ok;
	return false;
}

/* Before a write that frees the node's records (the first write of this
 * instance, released): no job may hold a run lock of the node
 * (keep_lease_guard_runs). true when act was filled (a RUNS_* action, a
 * WAIT, or DONE after giving up); false: the write goes now. */
static bool runs_gate(struct keep_lease *sm, int64_t now, struct keep_lease_action *act)
{
	struct keep_jobstop_step st;
	struct keep_lease_event *e;
	bool *ok;

	if (!keep_lease_write_waits_jobs(sm))
		return false;
	ok = sm->phase == KEEP_LEASE_FIRST ? &sm->runs_first_ok : &sm->runs_stop_ok;
	if (!sm->runs_active) {
		keep_jobstop_init(&sm->runs_js, sm->runs_kill_after_ms,
				  sm->phase == KEEP_LEASE_STOPPING ? sm->stop_deadline_mono_ms : 0);
		sm->runs_active = true;
	}
	keep_jobstop_next(&sm->runs_js, now, &st);
	switch (st.kind) {
	case KEEP_JOBSTOP_PROBE:
		act->kind = KEEP_LACT_RUNS_PROBE;
		return true;
	case KEEP_JOBSTOP_SIGNAL:
		act->kind = KEEP_LACT_RUNS_SIGNAL;
		act->sig = st.sig;
		return true;
	case KEEP_JOBSTOP_WAIT:
		act->kind = KEEP_LACT_WAIT;
		act->until_mono_ms = st.until_mono_ms;
		return true;
	case KEEP_JOBSTOP_FREE:
		sm->runs_active = false;
		*ok = true;
		return false;
	case KEEP_JOBSTOP_HELD:
		break;
	}
	/* a job's process outlived its SIGKILL (or the stop's bound): write
	 * nothing that frees the node's records; they free by a fence or the
	 * lapse, after that process is gone or cut off from every grant */
	sm->runs_active = false;
	sm->phase = KEEP_LEASE_STOPPED;
	sm->reason = KEEP_REASON_JOB_RUNNING;
	sm->valid_until_mono_ms = 0;
	e = push(sm, KEEP_LEV_LOST);
	e->reason = KEEP_REASON_JOB_RUNNING;
	e->pid = sm->runs_js.pid;
	act->kind = KEEP_LACT_DONE;
	return true;
}

void keep_lease_on_runs_probe(struct keep_lease *sm, int64_t now_mono_ms,
			      const struct keep_run_view *v)
{
	if (sm->runs_active)
		keep_jobstop_on_probe(&sm->runs_js, now_mono_ms, v->held, v->kill_after_ms,
				      v->generation);
}

void keep_lease_on_runs_signal(struct keep_lease *sm, int64_t now_mono_ms, int npids, int failed,
			       int64_t pid)
{
	struct keep_lease_event *e;
	enum keep_jobstop_sig sig =
	    sm->runs_js.phase == KEEP_JS_TERM ? KEEP_JOBSTOP_TERM : KEEP_JOBSTOP_KILL;

	if (!sm->runs_active)
		return;
	keep_jobstop_on_signal(&sm->runs_js, now_mono_ms, npids, failed, pid);
	if (npids > 0) {
		e = push(sm, KEEP_LEV_JOBS_SIGNALLED);
		e->sig = sig;
		e->npids = npids;
		e->pid = pid;
	}
}

void keep_lease_next(struct keep_lease *sm, int64_t now, int64_t wall,
		     struct keep_lease_action *act)
{
	keep_lease_clocks(sm, now, wall);
	memset(act, 0, sizeof(*act));
	act->kind = KEEP_LACT_WAIT;
	act->until_mono_ms = now + retry_floor(sm);
	if (sm->inflight)
		return;

	if (keep_lease_ran_out(sm, now))
		enter_ran_out(sm);
	if ((sm->phase == KEEP_LEASE_STOPPING && now >= sm->stop_deadline_mono_ms &&
	     !sm->runs_active) ||
	    (sm->orphan_deadline_mono_ms && now >= sm->orphan_deadline_mono_ms &&
	     sm->phase != KEEP_LEASE_STOPPED && sm->phase != KEEP_LEASE_LOST)) {
		sm->phase = KEEP_LEASE_STOPPED;
		sm->reason = KEEP_REASON_UNCONFIRMED;
		sm->valid_until_mono_ms = 0;
		push(sm, KEEP_LEV_LOST)->reason = KEEP_REASON_UNCONFIRMED;
	}
	if (state_gate(sm, now, act))
		return;

	switch (sm->phase) {
	case KEEP_LEASE_CHECK:
		if (now >= sm->next_read_mono_ms)
			make_read(sm, now, act);
		else
			act->until_mono_ms = sm->next_read_mono_ms;
		return;
	case KEEP_LEASE_FIRST:
	case KEEP_LEASE_LIVE:
	case KEEP_LEASE_RAN_OUT:
	case KEEP_LEASE_STOPPING:
		if (sm->readback) {
			if (now >= sm->next_read_mono_ms)
				make_read(sm, now, act);
			else
				act->until_mono_ms = sm->next_read_mono_ms;
			return;
		}
		if (keep_lease_first_waits_go(sm)) {
			act->kind = KEEP_LACT_WAIT_GO;
			act->until_mono_ms = now + KEEP_LEASE_STATE_RETRY_MS;
			return;
		}
		if (now >= sm->next_write_mono_ms) {
			if (runs_gate(sm, now, act))
				return;
			make_write(sm, now, wall, act);
			return;
		}
		act->until_mono_ms = sm->next_write_mono_ms;
		if (sm->phase == KEEP_LEASE_LIVE)
			act->until_mono_ms = min64(act->until_mono_ms, sm->valid_until_mono_ms);
		return;
	case KEEP_LEASE_STOPPED:
	case KEEP_LEASE_LOST:
		act->kind = KEEP_LACT_DONE;
		return;
	}
}

bool keep_lease_read_adopts(const struct keep_lease *sm, const struct keep_node_obj *o)
{
	return o && o->format == 3 && o->state == KEEP_NODE_LIVE &&
	       strcmp(o->instance, sm->tmpl.instance) == 0;
}

bool keep_lease_reread_stale(const struct keep_lease *sm, const char *version,
			     const struct keep_node_obj *o)
{
	/* our own live object, but older than a write we know landed
	 * (acknowledged or adopted; our written_at never goes back), or
	 * that very write under the version the failed If-Match named */
	return keep_lease_read_adopts(sm, o) &&
	       (o->written_at_ms < sm->written_at_ms ||
		(o->written_at_ms == sm->written_at_ms && version && sm->version[0] &&
		 strcmp(version, sm->version) == 0));
}

bool keep_lease_stop_fenced(const struct keep_node_obj *o)
{
	return o && o->format == 3 && o->state == KEEP_NODE_FENCED;
}

bool keep_lease_write_reread(enum keep_lease_phase phase, enum keep_outcome outcome)
{
	return outcome == KEEP_STORE_CONFLICT || outcome == KEEP_STORE_NOT_FOUND ||
	       (outcome == KEEP_STORE_AMBIGUOUS && phase == KEEP_LEASE_FIRST);
}

bool keep_lease_first_write_back_to_check(enum keep_lease_phase phase, enum keep_outcome outcome,
					  bool reread_not_ours)
{
	return phase == KEEP_LEASE_FIRST && (reread_not_ours || outcome == KEEP_STORE_REFUSED);
}

/* What a read shows as a lost reason (the object is not our live write). */
static enum keep_lease_reason lost_reason(enum keep_outcome outcome, const struct keep_node_obj *o,
					  int derr)
{
	if (outcome == KEEP_STORE_NOT_FOUND)
		return KEEP_REASON_REMOVED;
	if (derr || !o)
		return KEEP_REASON_BAD_OBJECT;
	if (o->format != 3)
		return KEEP_REASON_OLD_RUNNING;
	if (o->state == KEEP_NODE_FENCED)
		return KEEP_REASON_FENCED;
	if (o->state == KEEP_NODE_RELEASED)
		return KEEP_REASON_RELEASED;
	return KEEP_REASON_REPLACED;
}

static const char *shown_state(enum keep_outcome outcome, const struct keep_node_obj *o, int derr)
{
	if (outcome == KEEP_STORE_NOT_FOUND)
		return "absent";
	if (derr || !o)
		return "unreadable";
	if (o->format != 3)
		return "old-format";
	return keep_node_state_name(o->state);
}

/* Adopt our own live write found by a read (§1): its version (the read's
 * token) and its written_at; validity from that write's send. */
static void adopt(struct keep_lease *sm, int64_t now, int64_t wall, const char *version,
		  const struct keep_node_obj *o)
{
	int i = lookup_send(sm, o->written_at_ms);
	int64_t sent, seq = 0; /* seq 0: older than any step noticed */

	if (i >= 0) {
		sent = sm->sends[i].sent_mono_ms;
		seq = sm->sends[i].seq;
	} else {
		/* not a send we remember: count from its written_at,
		 * conservatively, and never later than the oldest send we do
		 * remember (a wall-clock step must not make it look recent) */
		sent = keep_sub_sat_ms(now, max64(0, keep_sub_sat_ms(wall, o->written_at_ms)));
		if (sm->nsends > 0)
			sent = min64(sent, sm->sends[0].sent_mono_ms - 1);
	}
	copy_str(sm->version, sizeof(sm->version), version);
	sm->written_at_ms = o->written_at_ms;
	if (o->seq > sm->seq)
		sm->seq = o->seq;
	hold_write(sm, now, sent, seq, KEEP_LEV_ADOPTED);
}

int64_t keep_lease_start_check_end_ms(const struct keep_timing *t, int64_t first_read_sent_mono_ms)
{
	return first_read_sent_mono_ms + keep_timing_takeover_ms(t);
}

bool keep_lease_start_check_shortcut(const struct keep_lease *sm, const struct keep_node_obj *seen,
				     int64_t now_wall_ms)
{
	/* a fence or release of the instance first read, whose kept
	 * written_at + ttl + grace has passed on our clock (§1), less the
	 * judging offset (a forward step must not make it pass early) */
	return !sm->check_no_shortcut && seen && sm->have_base && !sm->base_absent &&
	       seen->format == 3 && seen->state != KEEP_NODE_LIVE && sm->base.format == 3 &&
	       strcmp(seen->instance, sm->base.instance) == 0 && strcmp(seen->instance, "-") != 0 &&
	       keep_sub_sat_ms(now_wall_ms, keep_lease_judge_offset_ms(sm)) >=
		   keep_add_sat_ms(seen->written_at_ms, keep_timing_takeover_ms(&sm->t)) &&
	       sm->sent_mono_ms < sm->check_deadline_mono_ms;
}

static void on_check_read(struct keep_lease *sm, int64_t now, int64_t wall,
			  enum keep_outcome outcome, const char *version,
			  const struct keep_node_obj *o, int derr)
{
	struct keep_lease_event *e;
	bool absent = outcome == KEEP_STORE_NOT_FOUND;
	int64_t sent = sm->sent_mono_ms;
	int64_t period = sm->t.period_ms;

	e = push(sm, KEEP_LEV_CHECK_READ);
	e->outcome = outcome;
	if (outcome != KEEP_STORE_OK && !absent) {
		sm->next_read_mono_ms = now + max64(period / 2, retry_floor(sm));
		return;
	}
	copy_str(e->state, sizeof(e->state), shown_state(outcome, o, derr));
	if (o && !derr) {
		e->written_at_ms = o->written_at_ms;
		copy_str(e->other_instance, sizeof(e->other_instance), o->instance);
		see_floor(sm, o);
	}
	if (!absent && derr) {
		lose(sm, KEEP_REASON_BAD_OBJECT, "unreadable", NULL);
		return;
	}
	/* our own first write, landed after we gave up on it */
	if (!absent && keep_lease_read_adopts(sm, o)) {
		adopt(sm, now, wall, version, o);
		return;
	}
	if (!sm->have_base) {
		sm->have_base = true;
		sm->base_absent = absent;
		if (!absent)
			sm->base = *o;
		sm->check_deadline_mono_ms = keep_lease_start_check_end_ms(&sm->t, sent);
	} else if (!absent) {
		bool same = !sm->base_absent && sm->base.format == o->format &&
			    sm->base.written_at_ms == o->written_at_ms &&
			    strcmp(sm->base.instance, o->instance) == 0;
		if (o->format != 3 && !same) {
			lose(sm, KEEP_REASON_OLD_RUNNING, "old-format", NULL);
			return;
		}
		if (o->format == 3 && o->state == KEEP_NODE_LIVE && !same) {
			/* a live object that changed during the check: a twin */
			lose(sm, KEEP_REASON_REPLACED, "live", o->instance);
			return;
		}
	}
	sm->have_last = true;
	sm->last_absent = absent;
	copy_str(sm->last_version, sizeof(sm->last_version), absent ? "" : version);

	if (keep_lease_start_check_shortcut(sm, absent ? NULL : o, wall)) {
		push(sm, KEEP_LEV_CHECK_SHORTCUT);
		sm->check_done = true;
	}
	if (sent >= sm->check_deadline_mono_ms)
		sm->check_done = true;
	if (sm->check_done && floor_holds_back(sm, now, wall))
		return;
	if (sm->check_done) {
		sm->phase = KEEP_LEASE_FIRST;
		sm->next_write_mono_ms = now;
		sm->failures = 0;
	} else {
		sm->next_read_mono_ms = min64(sent + period, sm->check_deadline_mono_ms);
	}
}

void keep_lease_on_read(struct keep_lease *sm, int64_t now, int64_t wall, enum keep_outcome outcome,
			const char *version, const struct keep_node_obj *o, int derr)
{
	struct keep_lease_event *e;

	if (!sm->inflight)
		return;
	keep_lease_clocks(sm, now, wall);
	sm->inflight = false;
	if (outcome != KEEP_STORE_OK)
		o = NULL;
	if (sm->phase == KEEP_LEASE_CHECK) {
		on_check_read(sm, now, wall, outcome, version, o, derr);
		return;
	}
	if (!sm->readback)
		return;
	if (outcome != KEEP_STORE_OK && outcome != KEEP_STORE_NOT_FOUND) {
		sm->failures++;
		sm->next_read_mono_ms = now + retry_delay(sm, now);
		e = push(sm, KEEP_LEV_READ_FAILED);
		e->outcome = outcome;
		e->wait_ms = sm->next_read_mono_ms - now;
		return;
	}
	if (!derr && keep_lease_reread_stale(sm, version, o)) {
		/* our own live object, but older than a write we know landed,
		 * or that very write under the version the failed If-Match named:
		 * a stale replica or cache answered, or the conflict changed
		 * nothing. It proves neither our write nor a loss: keep the
		 * write we hold and retry it on the failed-write pacing, never
		 * at once (adopting it and writing again at once looped at 55
		 * writes a second behind a cache serving one period stale:
		 * issue 28); a read that shows something newer decides */
		sm->failures++;
		sm->readback = false;
		sm->next_write_mono_ms = now + retry_delay(sm, now);
		e = push(sm, KEEP_LEV_READ_STALE);
		e->written_at_ms = o->written_at_ms;
		e->wait_ms = sm->next_write_mono_ms - now;
		return;
	}
	sm->readback = false;
	if (!derr)
		see_floor(sm, o);

	if (sm->phase == KEEP_LEASE_STOPPING) {
		if (o && !derr && o->format == 3 && o->state == KEEP_NODE_RELEASED &&
		    strcmp(o->instance, sm->tmpl.instance) == 0) {
			/* our released write landed, its reply was lost */
			copy_str(sm->version, sizeof(sm->version), version);
			sm->phase = KEEP_LEASE_STOPPED;
			push(sm, KEEP_LEV_RELEASED);
			return;
		}
		if (!derr && keep_lease_stop_fenced(o)) {
			/* §4: "a fence, done (it frees the records too)": the stop
			 * is complete, its outcome is the stop's (exit 0), and the
			 * fence is reported (STOPPED, reason FENCED): it frees the
			 * records at the same bound released would, ttl + grace
			 * after the kept written_at (issue 23 item 5) */
			sm->phase = KEEP_LEASE_STOPPED;
			e = push(sm, KEEP_LEV_STOPPED);
			e->reason = KEEP_REASON_FENCED;
			copy_str(e->state, sizeof(e->state), "fenced");
			copy_str(e->other_instance, sizeof(e->other_instance), o->instance);
			return;
		}
		if (!derr && keep_lease_read_adopts(sm, o)) {
			/* a live write of ours landed late: release over it */
			copy_str(sm->version, sizeof(sm->version), version);
			sm->written_at_ms = o->written_at_ms;
			if (o->seq > sm->seq)
				sm->seq = o->seq;
			sm->next_write_mono_ms = now;
			push(sm, KEEP_LEV_ADOPTED);
			return;
		}
		lose(sm, lost_reason(outcome, o, derr), shown_state(outcome, o, derr),
		     o && !derr ? o->instance : NULL);
		return;
	}

	if (!derr && keep_lease_read_adopts(sm, o)) {
		adopt(sm, now, wall, version, o);
		if (sm->stop_requested) {
			sm->stop_requested = false;
			begin_stopping(sm, now);
		}
		return;
	}
	if (keep_lease_first_write_back_to_check(sm->phase, outcome, true)) {
		if (sm->stop_requested) {
			sm->phase = KEEP_LEASE_STOPPED;
			push(sm, KEEP_LEV_STOPPED);
			return;
		}
		push(sm, KEEP_LEV_BACK_TO_CHECK);
		start_check(sm, now);
		return;
	}
	lose(sm, lost_reason(outcome, o, derr), shown_state(outcome, o, derr),
	     o && !derr ? o->instance : NULL);
}

void keep_lease_on_write(struct keep_lease *sm, int64_t now, enum keep_outcome outcome,
			 const char *version)
{
	struct keep_lease_event *e;

	if (!sm->inflight)
		return;
	sm->inflight = false;

	if (outcome == KEEP_STORE_OK) {
		copy_str(sm->version, sizeof(sm->version), version);
		if (sm->phase == KEEP_LEASE_STOPPING && sm->inflight_released) {
			sm->phase = KEEP_LEASE_STOPPED;
			push(sm, KEEP_LEV_RELEASED);
			return;
		}
		if (sm->phase == KEEP_LEASE_STOPPING) {
			/* a renewal sent before the stop landed: the lease stays
			 * invalid; released goes over it, keeping its written_at */
			sm->written_at_ms = sm->sent_written_at_ms;
			sm->next_write_mono_ms = now;
			sm->failures = 0;
			return;
		}
		sm->written_at_ms = sm->sent_written_at_ms;
		hold_write(sm, now, sm->sent_mono_ms, sm->seq, KEEP_LEV_RENEWED);
		if (sm->stop_requested) {
			sm->stop_requested = false;
			begin_stopping(sm, now);
		}
		return;
	}

	sm->failures++;
	/* a failed condition is not proof of a fence (§1): re-read once. A
	 * first write whose reply was lost follows the same rule. */
	if (keep_lease_write_reread(sm->phase, outcome)) {
		sm->readback = true;
		sm->next_read_mono_ms = now;
		e = push(sm, KEEP_LEV_WRITE_FAILED);
		e->outcome = outcome;
		return;
	}
	if (keep_lease_first_write_back_to_check(sm->phase, outcome, false)) {
		if (sm->stop_requested) {
			/* refused: nothing written */
			sm->phase = KEEP_LEASE_STOPPED;
			push(sm, KEEP_LEV_STOPPED);
			return;
		}
		/* §1: "If that write fails, the node goes back to the start
		 * check" (same instance): a refusal (4xx) is a definite failure,
		 * nothing landed; never retried in place (issue 23 item 5) */
		e = push(sm, KEEP_LEV_WRITE_FAILED);
		e->outcome = outcome;
		e->wait_ms = keep_timing_takeover_ms(&sm->t); /* the check's wait first */
		push(sm, KEEP_LEV_BACK_TO_CHECK);
		start_check(sm, now);
		return;
	}
	/* ambiguous or refused: retry the same If-Match against the validity
	 * left; a landed write shows up as a conflict, then a re-read */
	sm->next_write_mono_ms = now + retry_delay(sm, now);
	e = push(sm, KEEP_LEV_WRITE_FAILED);
	e->outcome = outcome;
	e->wait_ms = sm->next_write_mono_ms - now;
}

bool keep_lease_valid(const struct keep_lease *sm, int64_t now_mono_ms)
{
	return sm->phase == KEEP_LEASE_LIVE && now_mono_ms < sm->valid_until_mono_ms;
}

int keep_lease_exit_code(const struct keep_lease *sm)
{
	switch (sm->reason) {
	case KEEP_REASON_NONE:
		if (sm->phase == KEEP_LEASE_STOPPED && sm->state_gave_up)
			return KEEP_EXIT_TEMP; /* gave the lease up: the state file failed */
		return sm->phase == KEEP_LEASE_STOPPED ? KEEP_EXIT_OK : KEEP_EXIT_NOT_LIVE;
	case KEEP_REASON_FENCED:
		return KEEP_EXIT_FENCED;
	case KEEP_REASON_REPLACED:
		return KEEP_EXIT_REPLACED;
	case KEEP_REASON_RELEASED:
		return KEEP_EXIT_RELEASED;
	case KEEP_REASON_REMOVED:
		return KEEP_EXIT_REMOVED;
	case KEEP_REASON_BAD_OBJECT:
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_REASON_OLD_RUNNING:
		return KEEP_EXIT_OLD_RUNNING;
	case KEEP_REASON_UNCONFIRMED:
	case KEEP_REASON_CLOCK_BEHIND:
		return KEEP_EXIT_TEMP;
	case KEEP_REASON_JOB_RUNNING:
		return KEEP_EXIT_JOB_RUNNING;
	}
	return KEEP_EXIT_TEMP;
}

const char *keep_lease_phase_name(enum keep_lease_phase p)
{
	switch (p) {
	case KEEP_LEASE_CHECK:
		return "starting";
	case KEEP_LEASE_FIRST:
		return "starting";
	case KEEP_LEASE_LIVE:
		return "live";
	case KEEP_LEASE_RAN_OUT:
		return "ran-out";
	case KEEP_LEASE_STOPPING:
		return "stopping";
	case KEEP_LEASE_STOPPED:
		return "stopped";
	case KEEP_LEASE_LOST:
		return "lost";
	}
	return "lost";
}

const char *keep_lease_reason_name(enum keep_lease_reason r)
{
	switch (r) {
	case KEEP_REASON_NONE:
		return "-";
	case KEEP_REASON_FENCED:
		return "fenced";
	case KEEP_REASON_REPLACED:
		return "replaced";
	case KEEP_REASON_RELEASED:
		return "released";
	case KEEP_REASON_REMOVED:
		return "removed";
	case KEEP_REASON_BAD_OBJECT:
		return "bad-object";
	case KEEP_REASON_OLD_RUNNING:
		return "old-version-running";
	case KEEP_REASON_UNCONFIRMED:
		return "release-unconfirmed";
	case KEEP_REASON_CLOCK_BEHIND:
		return "clock-behind";
	case KEEP_REASON_JOB_RUNNING:
		return "job-running";
	}
	return "-";
}

const char *keep_lease_event_name(enum keep_lease_event_kind k)
{
	static const char *names[] = {
	    [KEEP_LEV_CHECK_START] = "check-start",
	    [KEEP_LEV_CHECK_READ] = "check-read",
	    [KEEP_LEV_CHECK_SHORTCUT] = "check-shortcut",
	    [KEEP_LEV_LIVE] = "live",
	    [KEEP_LEV_RENEWED] = "renewed",
	    [KEEP_LEV_ADOPTED] = "adopted",
	    [KEEP_LEV_WRITE_FAILED] = "write-failed",
	    [KEEP_LEV_READ_FAILED] = "read-failed",
	    [KEEP_LEV_RAN_OUT] = "ran-out",
	    [KEEP_LEV_RECOVERED] = "recovered",
	    [KEEP_LEV_BACK_TO_CHECK] = "back-to-check",
	    [KEEP_LEV_STOPPING] = "stopping",
	    [KEEP_LEV_RELEASED] = "released",
	    [KEEP_LEV_STOPPED] = "stopped",
	    [KEEP_LEV_LOST] = "lost",
	    [KEEP_LEV_CLOCK_STEP] = "clock-step",
	    [KEEP_LEV_CLOCK_BEHIND] = "clock-behind",
	    [KEEP_LEV_JOBS_SIGNALLED] = "jobs-signalled",
	    [KEEP_LEV_READ_STALE] = "read-stale",
	};
	if ((unsigned)k < sizeof(names) / sizeof(names[0]) && names[k])
		return names[k];
	return "unknown";
}

int64_t keep_lease_valid_gauge_ms(const struct keep_lease *sm, int64_t now_mono_ms, bool stop_asked)
{
	if (stop_asked || !keep_lease_valid(sm, now_mono_ms))
		return 0;
	return sm->valid_until_mono_ms - now_mono_ms;
}

bool keep_lease_ever_wrote(const struct keep_lease *sm)
{
	return sm->written_at_ms != 0;
}

bool keep_lease_twin_at_start(const struct keep_lease *sm, const struct keep_lease_event *e)
{
	return e->kind == KEEP_LEV_LOST && e->reason == KEEP_REASON_REPLACED &&
	       !keep_lease_ever_wrote(sm);
}
