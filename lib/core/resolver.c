/* keep — the resolver machine (resolver.h; ADR 0020 §1, §3, §4, §5). */
#include "resolver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"

const char *keep_res_event_name(enum keep_res_event_kind k)
{
	switch (k) {
	case KEEP_REV_RELEASED:
		return "released";
	case KEEP_REV_ENDED:
		return "ended";
	case KEEP_REV_PENDING:
		return "pending";
	case KEEP_REV_DROPPED:
		return "dropped";
	case KEEP_REV_NONE:
		return "none";
	case KEEP_REV_ERROR:
		return "error";
	case KEEP_REV_WARN:
		return "warn";
	case KEEP_REV_PASS:
		return "pass";
	}
	return "warn";
}

/* ---- events ------------------------------------------------------------------ */

static struct keep_res_event *push(struct keep_resolver *r, enum keep_res_event_kind kind,
				   const char *key, int64_t gen)
{
	static struct keep_res_event lost; /* written when out of memory, never read */
	struct keep_res_event *e;

	if (r->ev_head + r->nev == r->aev) {
		if (r->ev_head > 0) {
			memmove(r->ev, r->ev + r->ev_head, r->nev * sizeof(*r->ev));
			r->ev_head = 0;
		} else {
			size_t na = r->aev ? 2 * r->aev : 64;
			struct keep_res_event *nv = realloc(r->ev, na * sizeof(*nv));

			if (!nv) {
				r->oom = true;
				return &lost;
			}
			r->ev = nv;
			r->aev = na;
		}
	}
	e = &r->ev[r->ev_head + r->nev++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	keep_copy_str(e->key, sizeof(e->key), key ? key : "");
	e->generation = gen;
	return e;
}

__attribute__((format(printf, 2, 3))) static void warn(struct keep_resolver *r, const char *fmt,
						       ...)
{
	struct keep_res_event *e = push(r, KEEP_REV_WARN, NULL, 0);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

bool keep_resolver_poll_event(struct keep_resolver *r, struct keep_res_event *ev)
{
	if (!r->nev)
		return false;
	*ev = r->ev[r->ev_head++];
	r->nev--;
	if (!r->nev)
		r->ev_head = 0;
	return true;
}

/* ---- backoff (per entry, across passes) --------------------------------------- */

static struct keep_res_backoff *bo_find(struct keep_resolver *r, const struct keep_pending *p)
{
	for (size_t i = 0; i < r->nbo; i++)
		if (keep_pending_same(&r->bo[i].id, p))
			return &r->bo[i];
	return NULL;
}

static bool bo_due(struct keep_resolver *r, const struct keep_pending *p, int64_t now)
{
	struct keep_res_backoff *b;

	if (!r->cfg.backoff)
		return true;
	b = bo_find(r, p);
	return !b || now >= b->next_mono_ms;
}

static void bo_fail(struct keep_resolver *r, const struct keep_pending *p, int64_t now)
{
	struct keep_res_backoff *b;

	if (!r->cfg.backoff)
		return;
	b = bo_find(r, p);
	if (!b) {
		if (r->nbo == r->abo) {
			size_t na = r->abo ? r->abo * 2 : 32;
			struct keep_res_backoff *nv = realloc(r->bo, na * sizeof(*nv));

			if (!nv)
				return; /* no backoff memory: retried at the next pass */
			r->bo = nv;
			r->abo = na;
		}
		b = &r->bo[r->nbo++];
		memset(b, 0, sizeof(*b));
		b->id = *p;
	}
	b->attempts++;
	b->next_mono_ms = now + keep_owner_backoff_ms(b->attempts);
}

static void bo_forget(struct keep_resolver *r, const struct keep_pending *p)
{
	struct keep_res_backoff *b = bo_find(r, p);

	if (b)
		*b = r->bo[--r->nbo];
}

/* The earliest retry of an entry due after `after` (ms), or dflt. FOLLOW
 * passes the pass's end: an entry already due then was passed over by the
 * pass (its pending entry gone, removed by another process; retries paused
 * while the lease is invalid; the pass stopped after refusals), which is no
 * reason to start the next pass at once: counted, a backoff left behind by
 * an entry that is gone put every later pass in the past, and a resolver
 * listed holds/ and pending/ a thousand times a second (the RGW soak with
 * host events, docs/testing.md "Soak"). */
static int64_t bo_next_due(const struct keep_resolver *r, int64_t after, int64_t dflt)
{
	int64_t m = dflt;

	for (size_t i = 0; i < r->nbo; i++)
		if (r->bo[i].next_mono_ms > after && r->bo[i].next_mono_ms < m)
			m = r->bo[i].next_mono_ms;
	return m;
}

/* ---- set up ------------------------------------------------------------------ */

int keep_resolver_jobs_at_once(const struct keep_resolver_cfg *cfg)
{
	if (cfg->mode == KEEP_RES_RELEASE)
		return 1; /* one key: its steps in order */
	if (cfg->concurrency < 1)
		return 1;
	return cfg->concurrency > KEEP_PENDING_CONCURRENCY ? KEEP_PENDING_CONCURRENCY
							   : cfg->concurrency;
}

void keep_resolver_init(struct keep_resolver *r, const struct keep_resolver_cfg *cfg)
{
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	r->cfg.concurrency = keep_resolver_jobs_at_once(cfg);
	if (r->cfg.timeout_ms < 1)
		r->cfg.timeout_ms = 1;
	r->phase = KEEP_RP_START;
	r->left = -1;
	r->exit_code = KEEP_EXIT_OK;
}

void keep_resolver_release(struct keep_resolver *r)
{
	free(r->queue);
	free(r->bo);
	free(r->ev);
	r->queue = NULL;
	r->bo = NULL;
	r->ev = NULL;
	r->nqueue = r->aqueue = r->nbo = r->abo = r->nev = r->aev = 0;
}

void keep_resolver_stop(struct keep_resolver *r)
{
	if (r->cfg.mode == KEEP_RES_DRAIN)
		return; /* a drain is what a clean stop waits for: bounded by its deadline */
	r->stop = true;
}

static bool enqueue(struct keep_resolver *r, const struct keep_res_job *j)
{
	if (r->nqueue == r->aqueue) {
		size_t na = r->aqueue ? 2 * r->aqueue : 64;
		struct keep_res_job *nv = realloc(r->queue, na * sizeof(*nv));

		if (!nv) {
			r->oom = true;
			return false;
		}
		r->queue = nv;
		r->aqueue = na;
	}
	r->queue[r->nqueue++] = *j;
	return true;
}

/* ---- jobs --------------------------------------------------------------------- */

static const char *job_key(const struct keep_res_job *j)
{
	return j->kind == KEEP_JOB_PARK || (j->kind == KEEP_JOB_DROP && j->drop_hold) ? j->hold.key
										      : j->p.key;
}

/* End the job: release its lock first (if any), then free the slot. */
static void job_end(struct keep_res_slot *s, enum keep_job_end end)
{
	s->end = end;
	s->phase = s->locked ? KEEP_JP_UNLOCK : KEEP_JP_FREE;
}

int64_t keep_resolver_wait_deadline_ms(const struct keep_resolver *r)
{
	return r->cfg.mode == KEEP_RES_DRAIN || r->cfg.mode == KEEP_RES_RELEASE
		   ? r->cfg.deadline_mono_ms
		   : 0;
}

/* The bound of an action that may wait (ms, >= 1): the store's timeout,
 * never past the deadline dl (0: none). */
static int64_t bounded(const struct keep_resolver *r, int64_t dl, int64_t now)
{
	int64_t t = r->cfg.timeout_ms;

	if (dl && dl - now < t)
		t = dl - now;
	return t < 1 ? 1 : t;
}

/* The hold is provably gone: the release write is next, once the key's job
 * is stopped (KEEP_JP_RUN, once per job: the slot keeps the actor's lock,
 * so no acquisition of the key starts a job meanwhile). */
static void go_write(const struct keep_resolver *r, struct keep_res_slot *s)
{
	if (s->run_done) {
		s->phase = KEEP_JP_WRITE;
		return;
	}
	keep_jobstop_init(&s->js, keep_jobstop_default_kill_after_ms(r->cfg.t.safety_ms),
			  keep_resolver_wait_deadline_ms(r));
	s->wait_until_mono_ms = 0;
	s->phase = KEEP_JP_RUN;
}

/* RUN: a process of the key's job still holds its run lock at the bound:
 * nothing is sent; the release stays pending (docs/ownership.md "The
 * job"). */
static void run_held(struct keep_resolver *r, struct keep_res_slot *s)
{
	struct keep_res_job *j = &s->job;
	struct keep_res_event *e;

	if (s->js.pid > 0)
		warn(r,
		     "a process of the job of '%s' (pid %lld) still holds its run lock %s: "
		     "release of generation %lld not sent",
		     j->p.key, (long long)s->js.pid,
		     s->js.cut ? "at the release's bound" : "after SIGKILL",
		     (long long)j->p.generation);
	else
		warn(r,
		     "a process this user cannot see or signal holds the run lock of '%s' %s: "
		     "release of generation %lld not sent",
		     j->p.key, s->js.cut ? "at the release's bound" : "after SIGKILL",
		     (long long)j->p.generation);
	if (r->cfg.mode == KEEP_RES_RELEASE) {
		e = push(r, KEEP_REV_PENDING, j->p.key, j->p.generation);
		keep_copy_str(e->version, sizeof(e->version), j->p.version);
		r->exit_code = KEEP_EXIT_UNKNOWN;
		job_end(s, KEEP_JE_LOCAL);
		return;
	}
	job_end(s, s->js.cut ? KEEP_JE_SKIPPED : KEEP_JE_LOCAL);
}

bool keep_resolver_job_takes_lock(const struct keep_res_job *j)
{
	return !(j->kind == KEEP_JOB_DROP && !j->drop_hold);
}

static void start_job(struct keep_resolver *r, struct keep_res_slot *s,
		      const struct keep_res_job *j)
{
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->after = KEEP_JE_DONE;
	s->job = *j;
	s->phase = keep_resolver_job_takes_lock(j) ? KEEP_JP_LOCK : KEEP_JP_PEND_REMOVE;
	(void)r;
}

/* A slot's account when it frees: the pass's bounds and the backoff. */
static void account(struct keep_resolver *r, struct keep_res_slot *s, int64_t now)
{
	const struct keep_pending *id = &s->job.p;

	if (s->end != KEEP_JE_DONE)
		r->pass_left++;
	switch (s->end) {
	case KEEP_JE_DONE:
		bo_forget(r, id);
		break;
	case KEEP_JE_STILL:
	case KEEP_JE_FAILED:
		bo_fail(r, id, now);
		break;
	case KEEP_JE_LOCAL:
		bo_fail(r, id, now);
		break;
	case KEEP_JE_SKIPPED:
		break;
	}
}

/* A foreground release whose per-actor lock could not be taken by its
 * deadline (waited_ms; 0: not tried, the deadline had passed): nothing was
 * done, the hold acts on; exit 111 and one line (`error key=K
 * reason=lock-busy`): another process of this node holds the lock (an
 * acquisition or a release of the key, issue 23 item 3). */
static void lock_busy(struct keep_resolver *r, struct keep_res_slot *s, int64_t waited_ms)
{
	warn(r,
	     "unable to take the lock of '%s' within %lld ms (another process of this node "
	     "holds it: an acquisition or a release of it): nothing done, the hold acts on",
	     job_key(&s->job), (long long)waited_ms);
	push(r, KEEP_REV_ERROR, job_key(&s->job), 0)->reason = "lock-busy";
	r->exit_code = KEEP_EXIT_TEMP;
	job_end(s, KEEP_JE_LOCAL);
}

void keep_resolver_release_write(const struct keep_res_job *j, struct keep_oact *act)
{
	act->kind = KEEP_OACT_REC_WRITE;
	keep_owner_rec_nobody(&act->rec, j->p.generation);
	act->cond = KEEP_COND_IF_MATCH;
	keep_copy_str(act->if_match, sizeof(act->if_match),
		      j->kind == KEEP_JOB_RESOLVE ? j->rel_version : j->p.version);
}

/* The action for slot i in its phase, or false when it has none now. */
static bool slot_action(struct keep_resolver *r, int i, int64_t now, int64_t now_wall,
			struct keep_oact *act)
{
	struct keep_res_slot *s = &r->slot[i];
	struct keep_res_job *j = &s->job;
	int64_t dl;

	if (!s->used || s->inflight)
		return false;
	memset(act, 0, sizeof(*act));
	act->slot = i;
	keep_copy_str(act->key, sizeof(act->key), job_key(j));
	act->timeout_ms = r->cfg.timeout_ms;
	dl = keep_resolver_wait_deadline_ms(r);
	switch (s->phase) {
	case KEEP_JP_LOCK:
		if ((dl && now >= dl) || (r->stop && r->cfg.mode != KEEP_RES_RELEASE)) {
			/* past the deadline, or stopped: the job does not start
			 * (a foreground release: nothing done, its hold acts on) */
			if (r->cfg.mode == KEEP_RES_RELEASE) {
				lock_busy(r, s, 0);
				return slot_action(r, i, now, now_wall, act);
			}
			job_end(s, KEEP_JE_SKIPPED);
			return slot_action(r, i, now, now_wall, act);
		}
		/* the lock wait is bounded too: by the deadline, else by one
		 * store timeout (a process holding it for longer is stuck) */
		act->kind = KEEP_OACT_LOCK;
		act->timeout_ms = dl ? dl - now : r->cfg.timeout_ms;
		break;
	case KEEP_JP_LEASE:
		act->kind = KEEP_OACT_LEASE;
		break;
	case KEEP_JP_PEND_CHECK:
		act->kind = KEEP_OACT_PEND_READ;
		act->pend = j->p;
		break;
	case KEEP_JP_HOLD_READ:
		act->kind = KEEP_OACT_HOLD_READ;
		break;
	case KEEP_JP_PARK_PEND:
		act->kind = KEEP_OACT_PEND_WRITE;
		keep_pending_of_hold(&j->p, &j->hold, now_wall);
		act->pend = j->p;
		break;
	case KEEP_JP_PARK_HOLD:
	case KEEP_JP_HOLD_REMOVE:
		act->kind = KEEP_OACT_HOLD_REMOVE;
		break;
	case KEEP_JP_SYNC:
		return false; /* the pass's fsync of holds/ covers it */
	case KEEP_JP_RUN: {
		struct keep_jobstop_step st;

		keep_jobstop_next(&s->js, now, &st);
		switch (st.kind) {
		case KEEP_JOBSTOP_PROBE:
			act->kind = KEEP_OACT_RUN_PROBE;
			break;
		case KEEP_JOBSTOP_SIGNAL:
			act->kind = KEEP_OACT_RUN_SIGNAL;
			act->sig = st.sig;
			break;
		case KEEP_JOBSTOP_WAIT:
			s->wait_until_mono_ms = st.until_mono_ms;
			return false;
		case KEEP_JOBSTOP_FREE:
			s->run_done = true;
			s->wait_until_mono_ms = 0;
			s->phase = KEEP_JP_WRITE;
			return slot_action(r, i, now, now_wall, act);
		case KEEP_JOBSTOP_HELD:
			run_held(r, s);
			return slot_action(r, i, now, now_wall, act);
		}
		break;
	}
	case KEEP_JP_REC_READ:
		if ((dl && now >= dl) || r->stop) {
			/* no request starts past the deadline, or once stopped */
			if (r->cfg.mode == KEEP_RES_RELEASE)
				goto park;
			job_end(s, KEEP_JE_SKIPPED);
			return slot_action(r, i, now, now_wall, act);
		}
		act->kind = KEEP_OACT_REC_READ;
		act->timeout_ms = bounded(r, dl, now);
		break;
	case KEEP_JP_WRITE:
		if ((dl && now >= dl) || r->refused_stop || r->stop) {
			/* past the deadline, or the bucket refused 32 in a row, or
			 * stopped: nothing more is sent (§4, §5 bounds) */
			if (r->cfg.mode == KEEP_RES_RELEASE)
				goto park;
			job_end(s, KEEP_JE_SKIPPED);
			return slot_action(r, i, now, now_wall, act);
		}
		if (keep_resolver_refusals_stop(r->refusals + r->writes_inflight))
			return false; /* wait: never more than 32 failures in a row (§5) */
		r->writes_inflight++;
		keep_resolver_release_write(j, act);
		act->timeout_ms = bounded(r, dl, now);
		break;
	case KEEP_JP_PEND_REMOVE:
		act->kind = KEEP_OACT_PEND_REMOVE;
		act->pend = j->p;
		break;
	case KEEP_JP_PEND_WRITE:
		act->kind = KEEP_OACT_PEND_WRITE;
		act->pend = j->p;
		act->pend.kind = KEEP_PENDING_RELEASE;
		keep_copy_str(act->pend.version, sizeof(act->pend.version), j->rel_version);
		act->pend.at_ms = now_wall;
		break;
	case KEEP_JP_WAIT:
		if (now < s->wait_until_mono_ms)
			return false;
		s->phase = KEEP_JP_LEASE;
		act->kind = KEEP_OACT_LEASE;
		break;
	case KEEP_JP_UNLOCK:
		act->kind = KEEP_OACT_UNLOCK;
		break;
	case KEEP_JP_FREE:
		return false;
	}
	s->inflight = true;
	return true;
park : {
	struct keep_res_event *e = push(r, KEEP_REV_PENDING, j->p.key, j->p.generation);

	keep_copy_str(e->version, sizeof(e->version), j->p.version);
	r->exit_code = KEEP_EXIT_UNKNOWN;
	job_end(s, KEEP_JE_FAILED);
	return slot_action(r, i, now, now_wall, act);
}
}

/* ---- the pass ------------------------------------------------------------------ */

bool keep_resolver_refusals_stop(int in_a_row)
{
	return in_a_row >= KEEP_PENDING_REFUSALS;
}

/* May job j start now? Nothing starts past the drain's deadline (§4: the
 * drain returns by it; the clean stop that follows makes the lease locally
 * invalid, which ends every hold left). Before it, a hold is always parked
 * (stopping to act is local and never waits on the bucket), its release
 * write gated like the others' (slot_action); entries wait for the next
 * pass once the bucket refused 32 in a row (§5). */
static bool can_start(const struct keep_resolver *r, const struct keep_res_job *j, int64_t now)
{
	if (r->stop || r->oom)
		return false;
	if (r->cfg.mode == KEEP_RES_DRAIN && now >= r->cfg.deadline_mono_ms)
		return false;
	if (j->kind == KEEP_JOB_PARK || j->kind == KEEP_JOB_DROP)
		return true;
	return !r->refused_stop;
}

/* Is live hold h the hold of an owner-run that died (SIGKILL: nothing ran
 * its release) after it started CMD: a run lock of h's key records h's
 * generation and names an owner-run that no longer runs? Its job is
 * unsupervised (nothing stops it when the grant ends) and the key would
 * stay held until the node stops: the pass releases it, its job stopped
 * first (KEEP_JP_RUN). Issue 24; docs/ownership.md "The job". */
static bool orphaned_run(struct keep_resolver *r, const struct keep_oreply *rp,
			 const struct keep_hold *h)
{
	for (size_t k = 0; k < rp->nruns; k++) {
		const struct keep_run_entry *e = &rp->runs[k];

		if (e->owner_alive || e->generation != h->generation || strcmp(e->key, h->key) != 0)
			continue;
		warn(r,
		     "the owner-run of '%s' (generation %lld) is gone: its job is stopped and "
		     "the key released",
		     h->key, (long long)h->generation);
		return true;
	}
	return false;
}

static void build_queue(struct keep_resolver *r, const struct keep_oreply *rp, int64_t now)
{
	struct keep_res_job j;
	size_t i, k;

	r->nqueue = r->next_job = 0;
	r->pass_left = 0;
	r->refusals = 0;
	r->refused_stop = false;
	r->oom = false;
	if (r->lease.lost) {
		/* the lease was lost: drop every hold and entry without writing
		 * (the fence, or the other instance, frees the records: §1) */
		for (i = 0; i < rp->nholds; i++) {
			memset(&j, 0, sizeof(j));
			j.kind = KEEP_JOB_DROP;
			j.drop_hold = true;
			j.hold = rp->holds[i];
			enqueue(r, &j);
		}
		for (i = 0; i < rp->npend; i++) {
			memset(&j, 0, sizeof(j));
			j.kind = KEEP_JOB_DROP;
			j.p = rp->pend[i];
			enqueue(r, &j);
		}
		return;
	}
	for (i = 0; i < rp->nholds; i++) {
		const struct keep_hold *h = &rp->holds[i];

		bool orphan = false;

		if (r->cfg.mode != KEEP_RES_DRAIN &&
		    !keep_owner_hold_stale(h->instance, h->epoch, r->lease.instance,
					   r->lease.lapses) &&
		    !(orphan = orphaned_run(r, rp, h)))
			continue;
		memset(&j, 0, sizeof(j));
		j.kind = KEEP_JOB_PARK;
		j.hold = *h;
		j.orphan = orphan;
		enqueue(r, &j);
	}
	for (i = 0; i < rp->npend; i++) {
		const struct keep_pending *p = &rp->pend[i];
		bool dup = false;

		/* the entry a park of this pass writes again */
		for (k = 0; k < r->nqueue && !dup; k++) {
			struct keep_pending q;

			if (r->queue[k].kind != KEEP_JOB_PARK)
				continue;
			keep_pending_of_hold(&q, &r->queue[k].hold, 0);
			dup = keep_pending_same(&q, p);
		}
		if (dup)
			continue;
		if (r->paused || !bo_due(r, p, now)) {
			r->pass_left++; /* §3: retries pause while the lease is invalid */
			continue;
		}
		memset(&j, 0, sizeof(j));
		j.kind = p->kind == KEEP_PENDING_RELEASE ? KEEP_JOB_RELEASE : KEEP_JOB_RESOLVE;
		j.p = *p;
		enqueue(r, &j);
	}
}

bool keep_resolver_retries_paused(const struct keep_lease_view *l)
{
	return !l->lost && l->code != KEEP_EXIT_OK;
}

bool keep_resolver_drained(int64_t left)
{
	return left == 0;
}

/* The pass ended (no job running, none to start). */
static void pass_end(struct keep_resolver *r, int64_t now)
{
	struct keep_res_event *e;
	int64_t next;

	r->pass_left += (int64_t)(r->nqueue - r->next_job); /* not started */
	r->left = r->oom ? -1 : r->pass_left;
	r->passes++;
	e = push(r, KEEP_REV_PASS, NULL, 0);
	e->left = r->left;
	switch (r->cfg.mode) {
	case KEEP_RES_PASS:
	case KEEP_RES_RELEASE:
		r->phase = KEEP_RP_DONE;
		return;
	case KEEP_RES_FOLLOW:
		next = bo_next_due(r, now, now + keep_timing_write_every_ms(&r->cfg.t));
		r->next_pass_mono_ms = next;
		r->phase = r->stop ? KEEP_RP_DONE : KEEP_RP_IDLE;
		return;
	case KEEP_RES_DRAIN:
		if (keep_resolver_drained(r->left) || now >= r->cfg.deadline_mono_ms) {
			r->phase = KEEP_RP_DONE;
			return;
		}
		next = bo_next_due(r, INT64_MIN, now + 200); /* at least now + 20, below */
		if (next > r->cfg.deadline_mono_ms)
			next = r->cfg.deadline_mono_ms;
		if (next < now + 20)
			next = now + 20;
		r->next_pass_mono_ms = next;
		r->phase = KEEP_RP_IDLE;
		return;
	}
}

static bool pass_slot(struct keep_oact *act, enum keep_oact_kind kind)
{
	memset(act, 0, sizeof(*act));
	act->kind = kind;
	act->slot = KEEP_RES_PASS_SLOT;
	return true;
}

void keep_resolver_next(struct keep_resolver *r, int64_t now_mono_ms, int64_t now_wall_ms,
			struct keep_oact *act)
{
	int64_t until = 0;
	int i, used = 0;

	memset(act, 0, sizeof(*act));
	for (;;) {
		switch (r->phase) {
		case KEEP_RP_DONE:
			act->kind = KEEP_OACT_DONE;
			return;
		case KEEP_RP_START:
			if (r->cfg.mode != KEEP_RES_RELEASE && r->cfg.mode != KEEP_RES_DRAIN) {
				r->phase = KEEP_RP_LEASE;
				continue;
			}
			if (r->cfg.mode == KEEP_RES_RELEASE) {
				struct keep_res_job j;

				/* §5: 1 s from the start bounds everything it waits on
				 * (the lock included), then the hold is parked */
				r->cfg.deadline_mono_ms =
				    keep_resolver_release_deadline_ms(now_mono_ms);
				memset(&j, 0, sizeof(j));
				j.kind = KEEP_JOB_PARK;
				keep_copy_str(j.hold.key, sizeof(j.hold.key), r->cfg.key);
				r->nqueue = r->next_job = 0;
				enqueue(r, &j);
				r->phase = KEEP_RP_RUN;
				continue;
			}
			if (r->pass_inflight) {
				act->kind = KEEP_OACT_NONE;
				return;
			}
			r->pass_inflight = pass_slot(act, KEEP_OACT_LEASE);
			return;
		case KEEP_RP_MARK:
			if (r->pass_inflight) {
				act->kind = KEEP_OACT_NONE;
				return;
			}
			r->pass_inflight = pass_slot(act, KEEP_OACT_DRAIN_MARK);
			keep_copy_str(act->pend.instance, sizeof(act->pend.instance),
				      r->lease.instance);
			return;
		case KEEP_RP_IDLE:
			if (r->stop) {
				r->phase = KEEP_RP_DONE;
				continue;
			}
			if (now_mono_ms < r->next_pass_mono_ms) {
				act->kind = KEEP_OACT_WAIT;
				act->until_mono_ms = r->next_pass_mono_ms;
				return;
			}
			r->phase = KEEP_RP_LEASE;
			continue;
		case KEEP_RP_LEASE:
		case KEEP_RP_LIST:
			if (r->pass_inflight) {
				act->kind = KEEP_OACT_NONE;
				return;
			}
			r->pass_inflight = pass_slot(
			    act, r->phase == KEEP_RP_LEASE ? KEEP_OACT_LEASE : KEEP_OACT_LIST);
			return;
		case KEEP_RP_RUN:
			break;
		}
		break;
	}

	/* the pass runs: first the fsync of holds/ that jobs wait on */
	if (!r->sync_inflight) {
		bool want = false;

		for (i = 0; i < KEEP_RES_SLOTS; i++)
			if (r->slot[i].used && r->slot[i].phase == KEEP_JP_SYNC &&
			    !r->slot[i].sync_covered)
				want = true;
		if (want) {
			for (i = 0; i < KEEP_RES_SLOTS; i++)
				if (r->slot[i].used && r->slot[i].phase == KEEP_JP_SYNC)
					r->slot[i].sync_covered = true;
			r->sync_inflight = pass_slot(act, KEEP_OACT_HOLDS_SYNC);
			return;
		}
	}
	for (i = 0; i < KEEP_RES_SLOTS; i++) {
		struct keep_res_slot *s = &r->slot[i];

		if (s->used && s->phase == KEEP_JP_FREE) {
			account(r, s, now_mono_ms);
			s->used = false;
		}
		if (slot_action(r, i, now_mono_ms, now_wall_ms, act))
			return;
		if (s->used && s->phase == KEEP_JP_FREE) {
			account(r, s, now_mono_ms);
			s->used = false;
		}
	}
	/* start new jobs, up to cfg.concurrency at once */
	for (i = 0; i < KEEP_RES_SLOTS; i++)
		if (r->slot[i].used)
			used++;
	while (used < r->cfg.concurrency && r->next_job < r->nqueue &&
	       can_start(r, &r->queue[r->next_job], now_mono_ms)) {
		for (i = 0; i < KEEP_RES_SLOTS && r->slot[i].used; i++)
			;
		start_job(r, &r->slot[i], &r->queue[r->next_job++]);
		used++;
		if (slot_action(r, i, now_mono_ms, now_wall_ms, act))
			return;
	}
	if (used == 0) {
		pass_end(r, now_mono_ms);
		keep_resolver_next(r, now_mono_ms, now_wall_ms, act);
		return;
	}
	for (i = 0; i < KEEP_RES_SLOTS; i++) {
		const struct keep_res_slot *s = &r->slot[i];

		if (s->used && !s->inflight &&
		    (s->phase == KEEP_JP_WAIT ||
		     (s->phase == KEEP_JP_RUN && s->wait_until_mono_ms)) &&
		    (!until || s->wait_until_mono_ms < until))
			until = s->wait_until_mono_ms;
	}
	if (until) {
		act->kind = KEEP_OACT_WAIT;
		act->until_mono_ms = until;
		return;
	}
	act->kind = KEEP_OACT_NONE;
}

/* ---- replies to a job's actions ---------------------------------------------------- */

/* RELEASE mode: the hold could not be released within its bound: parked. */
static void parked(struct keep_resolver *r, struct keep_res_slot *s, enum keep_job_end end)
{
	struct keep_res_event *e = push(r, KEEP_REV_PENDING, s->job.p.key, s->job.p.generation);

	keep_copy_str(e->version, sizeof(e->version), s->job.p.version);
	r->exit_code = KEEP_EXIT_UNKNOWN;
	job_end(s, end);
}

static void state_dir_error(struct keep_resolver *r, struct keep_res_slot *s, const char *what,
			    const struct keep_oreply *rp)
{
	struct keep_res_job *j = &s->job;

	warn(r, "%s of '%s' generation %lld %s (%s): nothing sent", what, job_key(j),
	     (long long)(j->kind == KEEP_JOB_PARK ? j->hold.generation : j->p.generation),
	     keep_sd_name(rp->sd), rp->err ? strerror(rp->err) : "-");
	push(r, KEEP_REV_ERROR, job_key(j),
	     j->kind == KEEP_JOB_PARK ? j->hold.generation : j->p.generation)
	    ->reason = "state-dir";
	if (r->cfg.mode == KEEP_RES_RELEASE)
		r->exit_code = KEEP_EXIT_TEMP;
	job_end(s, KEEP_JE_LOCAL);
}

bool keep_resolver_release_hold_may_live(int hold_rc, const struct keep_hold *h,
					 const struct keep_pending *p)
{
	if (hold_rc < 0)
		return true; /* unreadable: it may name the release */
	return hold_rc == 0 && strcmp(h->instance, p->instance) == 0 &&
	       h->generation == p->generation;
}

static void on_hold_read(struct keep_resolver *r, struct keep_res_slot *s,
			 const struct keep_oreply *rp)
{
	struct keep_res_job *j = &s->job;

	switch (j->kind) {
	case KEEP_JOB_PARK:
		if (r->cfg.mode == KEEP_RES_RELEASE) {
			if (rp->hold_rc != 0) {
				push(r, KEEP_REV_NONE, j->hold.key, 0);
				r->exit_code = KEEP_EXIT_NO;
				job_end(s, KEEP_JE_DONE);
				return;
			}
			j->hold = rp->hold;
			if (r->lease.lost) {
				s->phase = KEEP_JP_PARK_HOLD; /* dropped, nothing written */
				return;
			}
			s->phase = KEEP_JP_PARK_PEND;
			return;
		}
		/* re-read under the lock: an acquisition may have replaced it (an
		 * orphaned run's hold: the same generation still) */
		if (rp->hold_rc != 0 ||
		    (r->cfg.mode != KEEP_RES_DRAIN && !j->orphan &&
		     !keep_owner_hold_stale(rp->hold.instance, rp->hold.epoch, r->lease.instance,
					    r->lease.lapses)) ||
		    (j->orphan && rp->hold.generation != j->hold.generation)) {
			job_end(s, KEEP_JE_DONE);
			return;
		}
		j->hold = rp->hold;
		s->phase = KEEP_JP_PARK_PEND;
		return;
	case KEEP_JOB_RELEASE:
		if (keep_resolver_release_hold_may_live(rp->hold_rc, &rp->hold, &j->p)) {
			/* a hold names this release (or may: unreadable): it must be
			 * gone, durably, before the release is sent (issue 18) */
			s->phase = KEEP_JP_HOLD_REMOVE;
			return;
		}
		s->phase = KEEP_JP_SYNC;
		return;
	case KEEP_JOB_RESOLVE:
		if (rp->hold_rc == 0 && rp->hold.generation >= j->p.generation) {
			struct keep_pend_decision d;

			/* §3: a hold for it exists here (a later acquisition, at this
			 * generation or after): the entry ends, before any read
			 * (keep_owner_resolve_on_read's has_hold). A hold of an
			 * earlier generation is not one for it: it ended (its release
			 * is pending, or it is of an earlier epoch), and the record
			 * says whether this generation landed */
			keep_owner_resolve_on_read(j->p.instance, j->p.generation, "", false, true,
						   KEEP_STORE_OK, NULL, NULL, 0, &d);
			push(r, KEEP_REV_ENDED, j->p.key, j->p.generation)->reason = d.reason;
			s->phase = KEEP_JP_PEND_REMOVE;
			return;
		}
		if (rp->hold_rc < 0) {
			warn(r, "unreadable hold of '%s': unresolved acquire kept", j->p.key);
			job_end(s, KEEP_JE_LOCAL);
			return;
		}
		s->phase = KEEP_JP_REC_READ;
		return;
	case KEEP_JOB_DROP:
		s->phase = KEEP_JP_HOLD_REMOVE;
		return;
	}
}

static void on_write_reply(struct keep_resolver *r, struct keep_res_slot *s, int64_t now,
			   const struct keep_oreply *rp)
{
	struct keep_res_job *j = &s->job;
	int64_t dl;

	if (rp->outcome == KEEP_STORE_OK) {
		push(r, KEEP_REV_RELEASED, j->p.key, j->p.generation)->reason =
		    j->kind == KEEP_JOB_RESOLVE ? "unresolved-acquire" : NULL;
		s->phase = KEEP_JP_PEND_REMOVE;
		return;
	}
	if (j->kind == KEEP_JOB_RESOLVE) {
		/* an ordinary pending release keyed on that read's version */
		warn(r, "release of owners/%s (generation %lld): %s: %s", j->p.key,
		     (long long)j->p.generation, keep_outcome_name(rp->outcome),
		     rp->detail[0] ? rp->detail : "-");
		s->after = rp->outcome == KEEP_STORE_CONFLICT ? KEEP_JE_STILL : KEEP_JE_FAILED;
		s->phase = KEEP_JP_PEND_WRITE;
		return;
	}
	if (rp->outcome == KEEP_STORE_CONFLICT) {
		s->phase = KEEP_JP_REC_READ; /* the read that decides whether it ends */
		return;
	}
	warn(r, "release of owners/%s (generation %lld): %s: %s", j->p.key,
	     (long long)j->p.generation, keep_outcome_name(rp->outcome),
	     rp->detail[0] ? rp->detail : "-");
	if (r->cfg.mode != KEEP_RES_RELEASE) {
		job_end(s, KEEP_JE_FAILED);
		return;
	}
	/* a foreground release tries again within its bound (§5 RELEASE_TRIES) */
	dl = keep_resolver_wait_deadline_ms(r);
	if (now >= dl || r->stop) {
		parked(r, s, KEEP_JE_FAILED);
		return;
	}
	s->wait_until_mono_ms = now + (dl - now < 100 ? dl - now : 100);
	s->phase = KEEP_JP_WAIT;
}

static void on_rec_read(struct keep_resolver *r, struct keep_res_slot *s,
			const struct keep_oreply *rp)
{
	struct keep_res_job *j = &s->job;
	struct keep_pend_decision d;
	bool ok = rp->outcome == KEEP_STORE_OK && !rp->decode_err;

	if (j->kind == KEEP_JOB_RESOLVE) {
		keep_owner_resolve_on_read(j->p.instance, j->p.generation,
					   strcmp(j->p.version, "-") == 0 ? "" : j->p.version,
					   strcmp(j->p.instance, r->lease.instance) == 0, false,
					   rp->outcome, rp->version, ok ? &rp->rec : NULL,
					   rp->decode_err, &d);
		switch (d.verdict) {
		case KEEP_PEND_END:
			push(r, KEEP_REV_ENDED, j->p.key, j->p.generation)->reason = d.reason;
			s->phase = KEEP_JP_PEND_REMOVE;
			return;
		case KEEP_PEND_KEEP:
			job_end(s,
				rp->outcome == KEEP_STORE_OK || rp->outcome == KEEP_STORE_NOT_FOUND
				    ? KEEP_JE_STILL
				    : KEEP_JE_FAILED);
			return;
		case KEEP_PEND_RELEASE:
			/* only this node could have written this instance at that
			 * generation: release it If-Match that read's version, once no
			 * hold can name it (checked above, made durable next) */
			keep_copy_str(j->rel_version, sizeof(j->rel_version), d.version);
			j->resolved = true;
			s->phase = KEEP_JP_SYNC;
			return;
		}
		return;
	}
	keep_owner_pending_on_read(j->p.instance, j->p.generation, rp->outcome,
				   ok ? &rp->rec : NULL, rp->decode_err, &d);
	if (d.verdict == KEEP_PEND_END) {
		push(r, KEEP_REV_ENDED, j->p.key, j->p.generation)->reason = d.reason;
		s->phase = KEEP_JP_PEND_REMOVE;
		return;
	}
	if (r->cfg.mode == KEEP_RES_RELEASE) {
		parked(r, s, rp->outcome == KEEP_STORE_OK ? KEEP_JE_STILL : KEEP_JE_FAILED);
		return;
	}
	job_end(s, rp->outcome == KEEP_STORE_OK ? KEEP_JE_STILL : KEEP_JE_FAILED);
}

/* The lease was lost: the hold was removed, nothing written (§1). */
static void dropped(struct keep_resolver *r, struct keep_res_slot *s)
{
	push(r, KEEP_REV_DROPPED, s->job.hold.key, s->job.hold.generation)->reason = "lease-lost";
	job_end(s, KEEP_JE_DONE);
}

static void slot_on_reply(struct keep_resolver *r, struct keep_res_slot *s, int64_t now,
			  const struct keep_oreply *rp)
{
	struct keep_res_job *j = &s->job;

	switch (s->phase) {
	case KEEP_JP_LOCK:
		if (rp->failed && rp->err == ETIMEDOUT && r->cfg.mode == KEEP_RES_RELEASE) {
			lock_busy(r, s, KEEP_RELEASE_TRIES_MS);
			return;
		}
		if (rp->failed) {
			warn(r, "unable to lock '%s': %s", job_key(j),
			     rp->err == ETIMEDOUT ? "busy past the bound of the wait"
						  : strerror(rp->err));
			if (r->cfg.mode == KEEP_RES_RELEASE)
				r->exit_code = KEEP_EXIT_TEMP;
			job_end(s, KEEP_JE_LOCAL);
			return;
		}
		s->locked = true;
		if (r->cfg.mode == KEEP_RES_RELEASE)
			s->phase = KEEP_JP_LEASE;
		else if (j->kind == KEEP_JOB_RELEASE || j->kind == KEEP_JOB_RESOLVE)
			s->phase = KEEP_JP_PEND_CHECK;
		else
			s->phase = KEEP_JP_HOLD_READ;
		return;
	case KEEP_JP_LEASE:
		r->lease = rp->lease;
		if (s->tries++ == 0) {
			/* the start of a foreground release: a lost lease drops the
			 * hold without writing (§1); the first try goes whatever the
			 * lease (a release extends nothing), only retries pause */
			r->paused = false;
			s->phase = KEEP_JP_HOLD_READ;
			return;
		}
		/* a retry: paused while the lease is invalid (§3); the resolver
		 * goes on with it */
		if (rp->lease.code != KEEP_EXIT_OK) {
			parked(r, s, KEEP_JE_SKIPPED);
			return;
		}
		go_write(r, s);
		return;
	case KEEP_JP_PEND_CHECK:
		/* the listing's copy may be stale: an acquisition may have written
		 * the same entry again (another condition) or the entry may have
		 * ended; under the lock, what is stored now is what counts */
		if (!rp->exists) {
			job_end(s, KEEP_JE_DONE);
			return;
		}
		j->p = rp->pend_now;
		s->phase = KEEP_JP_HOLD_READ;
		return;
	case KEEP_JP_HOLD_READ:
		on_hold_read(r, s, rp);
		return;
	case KEEP_JP_PARK_PEND:
		if (rp->sd == KEEP_SD_UNCHANGED) {
			/* its release cannot be remembered: the hold stays live and
			 * nothing is sent */
			state_dir_error(r, s, "the pending release", rp);
			return;
		}
		s->phase = KEEP_JP_PARK_HOLD;
		return;
	case KEEP_JP_PARK_HOLD:
		if (r->lease.lost) { /* RELEASE mode on a lost lease */
			dropped(r, s);
			return;
		}
		if (rp->sd != KEEP_SD_DURABLE) {
			/* the hold may still live (or come back): no release; the
			 * entry stays, and the next pass removes the hold first */
			state_dir_error(r, s, "removal of the hold", rp);
			return;
		}
		if (r->paused) {
			job_end(s, KEEP_JE_SKIPPED); /* §3: nothing sent while not valid */
			return;
		}
		go_write(r, s); /* removed durably: the hold is provably gone */
		return;
	case KEEP_JP_HOLD_REMOVE:
		if (j->kind == KEEP_JOB_DROP) {
			dropped(r, s);
			return;
		}
		if (rp->sd != KEEP_SD_DURABLE) {
			state_dir_error(r, s, "removal of the hold", rp);
			return;
		}
		go_write(r, s);
		return;
	case KEEP_JP_RUN:
		if (s->js.out == KEEP_JOBSTOP_PROBE) {
			/* a job of this release's generation or an earlier one (or
			 * of one the file does not say: an older owner-run's, or a
			 * probe that could not tell) must be gone first; one of a
			 * later generation is another grant's (file comment) */
			const struct keep_run_view *v = &rp->run;
			bool job = keep_run_is_job(v) && (v->err || v->generation < 0 ||
							  v->generation <= j->p.generation);

			keep_jobstop_on_probe(&s->js, now, job, v->kill_after_ms, v->generation);
		} else {
			keep_jobstop_on_signal(&s->js, now, rp->npids, rp->nrefused, rp->pid);
		}
		return;
	case KEEP_JP_REC_READ:
		on_rec_read(r, s, rp);
		return;
	case KEEP_JP_WRITE:
		on_write_reply(r, s, now, rp);
		return;
	case KEEP_JP_PEND_REMOVE:
		if (j->kind == KEEP_JOB_DROP) {
			push(r, KEEP_REV_DROPPED, j->p.key, j->p.generation)->reason = "lease-lost";
		} else if (rp->sd == KEEP_SD_UNCHANGED) {
			/* the entry stays: its next try ends it (conflict, then read) */
			warn(r, "unable to remove the pending entry of '%s': %s", j->p.key,
			     strerror(rp->err));
		}
		job_end(s, s->after);
		return;
	case KEEP_JP_PEND_WRITE: {
		/* RESOLVE: its release failed; the pending release was written */
		struct keep_res_event *e;

		if (rp->sd == KEEP_SD_UNCHANGED) {
			warn(r, "unable to record the pending release of '%s': %s", j->p.key,
			     strerror(rp->err));
			job_end(s, KEEP_JE_LOCAL);
			return;
		}
		e = push(r, KEEP_REV_PENDING, j->p.key, j->p.generation);
		keep_copy_str(e->version, sizeof(e->version), j->rel_version);
		/* the pending release stands for it now: the unresolved entry goes,
		 * and the job counts as the failed release it became */
		s->phase = KEEP_JP_PEND_REMOVE;
		return;
	}
	case KEEP_JP_UNLOCK:
		s->locked = false;
		s->phase = KEEP_JP_FREE;
		return;
	case KEEP_JP_SYNC:
	case KEEP_JP_WAIT:
	case KEEP_JP_FREE:
		return;
	}
}

void keep_resolver_on_reply(struct keep_resolver *r, int slot, int64_t now_mono_ms,
			    int64_t now_wall_ms, const struct keep_oreply *rp)
{
	(void)now_wall_ms;
	if (slot == KEEP_RES_PASS_SLOT) {
		if (r->sync_inflight) {
			r->sync_inflight = false;
			for (int i = 0; i < KEEP_RES_SLOTS; i++) {
				struct keep_res_slot *s = &r->slot[i];

				if (!s->used || s->phase != KEEP_JP_SYNC || !s->sync_covered)
					continue;
				s->sync_covered = false;
				if (rp->sd != KEEP_SD_DURABLE)
					state_dir_error(
					    r, s, "the fsync of holds/ before the release", rp);
				else
					go_write(r, s);
			}
			return;
		}
		if (!r->pass_inflight)
			return;
		r->pass_inflight = false;
		switch (r->phase) {
		case KEEP_RP_START:
			r->lease = rp->lease;
			if (r->lease.instance[0] && !r->lease.lost) {
				r->phase = KEEP_RP_MARK;
				return;
			}
			r->phase = KEEP_RP_LEASE;
			return;
		case KEEP_RP_MARK:
			if (rp->sd == KEEP_SD_UNCHANGED)
				warn(r, "unable to mark the drain: %s", strerror(rp->err));
			r->marked = rp->sd != KEEP_SD_UNCHANGED;
			r->phase = KEEP_RP_LEASE;
			return;
		case KEEP_RP_LEASE:
			r->lease = rp->lease;
			r->paused = keep_resolver_retries_paused(&rp->lease);
			r->phase = KEEP_RP_LIST;
			return;
		case KEEP_RP_LIST:
			if (rp->failed) {
				warn(r, "unable to list the state directory: %s",
				     strerror(rp->err));
				r->nqueue = r->next_job = 0;
				r->pass_left = 0;
				r->oom = true; /* left unknown */
				r->phase = KEEP_RP_RUN;
				return;
			}
			build_queue(r, rp, now_mono_ms);
			r->phase = KEEP_RP_RUN;
			return;
		default:
			return;
		}
	}
	if (slot < 0 || slot >= KEEP_RES_SLOTS || !r->slot[slot].used || !r->slot[slot].inflight)
		return;
	r->slot[slot].inflight = false;
	if (r->slot[slot].phase == KEEP_JP_WRITE || r->slot[slot].phase == KEEP_JP_REC_READ) {
		/* the refusal bound counts store failures in a row as they come
		 * back (§5): a success or a conflict (the bucket answered) resets it */
		if (r->slot[slot].phase == KEEP_JP_WRITE)
			r->writes_inflight--;
		if (rp->outcome == KEEP_STORE_OK || rp->outcome == KEEP_STORE_CONFLICT ||
		    rp->outcome == KEEP_STORE_NOT_FOUND) {
			r->refusals = 0;
		} else if (keep_resolver_refusals_stop(++r->refusals)) {
			r->refused_stop = true; /* a refusing bucket gets no burst (§5) */
		}
	}
	slot_on_reply(r, &r->slot[slot], now_mono_ms, rp);
}

int64_t keep_resolver_release_deadline_ms(int64_t start_mono_ms)
{
	return keep_add_sat_ms(start_mono_ms, KEEP_RELEASE_TRIES_MS);
}

int64_t keep_resolver_drain_deadline_ms(const struct keep_timing *t, int64_t now_mono_ms,
					int64_t wait_ms)
{
	if (wait_ms < 0)
		wait_ms = keep_timing_takeover_ms(t);
	return keep_add_sat_ms(now_mono_ms, wait_ms);
}

int keep_resolver_exit_code(const struct keep_resolver *r)
{
	switch (r->cfg.mode) {
	case KEEP_RES_FOLLOW:
		return KEEP_EXIT_OK;
	case KEEP_RES_RELEASE:
		return r->exit_code;
	case KEEP_RES_PASS:
	case KEEP_RES_DRAIN:
		break;
	}
	return keep_resolver_drained(r->left) ? KEEP_EXIT_OK : KEEP_EXIT_UNKNOWN;
}
