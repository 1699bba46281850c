/* keep — the acquisition machine (acquire.h; ADR 0020 §2, §3, §6). */
#include "acquire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"

const char *keep_acq_result_name(enum keep_acq_result_kind k)
{
	switch (k) {
	case KEEP_AR_ACQUIRED:
		return "acquired";
	case KEEP_AR_HELD:
		return "held";
	case KEEP_AR_UNKNOWN:
		return "unknown";
	case KEEP_AR_REFUSED:
		return "refused";
	case KEEP_AR_ERROR:
		return "error";
	}
	return "error";
}

__attribute__((format(printf, 2, 3))) static void warn(struct keep_acquire *sm, const char *fmt,
						       ...)
{
	va_list ap;

	if (sm->nmsg == KEEP_ACQ_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(sm->msg[sm->nmsg++], KEEP_ACQ_MSG_MAX, fmt, ap);
	va_end(ap);
}

void keep_acquire_init(struct keep_acquire *sm, const char *node, const char *key,
		       const struct keep_timing *t, int64_t timeout_ms)
{
	memset(sm, 0, sizeof(*sm));
	sm->t = *t;
	sm->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
	keep_copy_str(sm->node, sizeof(sm->node), node);
	keep_copy_str(sm->key, sizeof(sm->key), key);
	sm->phase = KEEP_AP_LOCK;
}

/* The answer is decided: release the lock, then DONE. */
static void answer(struct keep_acquire *sm, enum keep_acq_result_kind kind, int code,
		   const char *reason)
{
	sm->res.kind = kind;
	sm->res.exit_code = code;
	sm->res.reason = reason;
	sm->phase = KEEP_AP_UNLOCK;
}

static void self_of(const struct keep_acquire *sm, struct keep_owner_self *self)
{
	self->node = sm->node;
	self->instance = sm->lease.instance;
}

static void pending_acquire(const struct keep_acquire *sm, int64_t now_wall_ms,
			    struct keep_pending *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = KEEP_PENDING_ACQUIRE;
	keep_copy_str(p->key, sizeof(p->key), sm->key);
	keep_copy_str(p->instance, sizeof(p->instance), sm->lease.instance);
	p->generation = sm->gen;
	keep_copy_str(p->version, sizeof(p->version),
		      sm->d.cond == KEEP_COND_IF_MATCH ? sm->d.if_match : "-");
	p->at_ms = now_wall_ms;
}

/* The hold this acquisition registers (or parks, if it cannot). */
static void new_hold(const struct keep_acquire *sm, int64_t now_wall_ms, struct keep_hold *h)
{
	memset(h, 0, sizeof(*h));
	keep_copy_str(h->key, sizeof(h->key), sm->key);
	keep_copy_str(h->instance, sizeof(h->instance), sm->lease.instance);
	h->generation = sm->gen;
	keep_copy_str(h->version, sizeof(h->version), sm->version);
	h->epoch = sm->lease.lapses;
	h->acquired_at_ms = now_wall_ms;
}

void keep_acquire_next(struct keep_acquire *sm, int64_t now_mono_ms, int64_t now_wall_ms,
		       struct keep_oact *act)
{
	(void)now_mono_ms;
	memset(act, 0, sizeof(*act));
	if (sm->inflight) {
		act->kind = KEEP_OACT_NONE;
		return;
	}
	keep_copy_str(act->key, sizeof(act->key), sm->key);
	act->timeout_ms = sm->timeout_ms;
	switch (sm->phase) {
	case KEEP_AP_LOCK:
		act->kind = KEEP_OACT_LOCK;
		act->timeout_ms = 0; /* an acquisition waits for the lock as it always did */
		break;
	case KEEP_AP_LEASE:
	case KEEP_AP_LEASE2:
	case KEEP_AP_LEASE_SAME:
	case KEEP_AP_LEASE_REG:
		act->kind = KEEP_OACT_LEASE;
		break;
	case KEEP_AP_HOLD:
		act->kind = KEEP_OACT_HOLD_READ;
		break;
	case KEEP_AP_HOLD_DROP:
	case KEEP_AP_PARK_HOLD:
	case KEEP_AP_DROP_STALE:
		act->kind = KEEP_OACT_HOLD_REMOVE;
		break;
	case KEEP_AP_PARK_PEND:
		act->kind = KEEP_OACT_PEND_WRITE;
		keep_pending_of_hold(&act->pend, &sm->hold, now_wall_ms);
		break;
	case KEEP_AP_REGRANT:
		act->kind = KEEP_OACT_PEND_READ;
		keep_pending_of_hold(&act->pend, &sm->hold, now_wall_ms);
		break;
	case KEEP_AP_REC:
	case KEEP_AP_RECHECK:
	case KEEP_AP_RB:
		act->kind = KEEP_OACT_REC_READ;
		break;
	case KEEP_AP_CLUSTER:
		act->kind = KEEP_OACT_CLUSTER_READ;
		break;
	case KEEP_AP_MARK:
		keep_mark_next(&sm->mark, act);
		act->timeout_ms = sm->timeout_ms;
		break;
	case KEEP_AP_NODE:
		act->kind = KEEP_OACT_NODE_READ;
		keep_copy_str(act->node, sizeof(act->node), sm->d.rec.node);
		break;
	case KEEP_AP_RB_NODE:
		act->kind = KEEP_OACT_NODE_READ;
		keep_copy_str(act->node, sizeof(act->node), sm->rb.rec.node);
		break;
	case KEEP_AP_WRITE:
		act->kind = KEEP_OACT_REC_WRITE;
		act->rec = sm->d.next;
		act->cond = sm->d.cond;
		if (sm->d.cond == KEEP_COND_IF_MATCH)
			keep_copy_str(act->if_match, sizeof(act->if_match), sm->d.if_match);
		break;
	case KEEP_AP_CONFIRM:
		act->kind = KEEP_OACT_MARK_WRITE;
		keep_mark_confirm_obj(&sm->mark.res, sm->gen, &act->lobj);
		act->cond = KEEP_COND_IF_MATCH;
		keep_copy_str(act->if_match, sizeof(act->if_match), sm->mark.res.version);
		break;
	case KEEP_AP_REGISTER:
		act->kind = KEEP_OACT_HOLD_WRITE;
		new_hold(sm, now_wall_ms, &act->hold);
		break;
	case KEEP_AP_REG_PARK: {
		struct keep_hold h;

		act->kind = KEEP_OACT_PEND_WRITE;
		new_hold(sm, now_wall_ms, &h);
		keep_pending_of_hold(&act->pend, &h, now_wall_ms);
		break;
	}
	case KEEP_AP_UNRESOLVED:
		act->kind = KEEP_OACT_PEND_WRITE;
		pending_acquire(sm, now_wall_ms, &act->pend);
		break;
	case KEEP_AP_UNLOCK:
		act->kind = KEEP_OACT_UNLOCK;
		break;
	case KEEP_AP_DONE:
		act->kind = KEEP_OACT_DONE;
		return;
	}
	sm->inflight = act->kind != KEEP_OACT_DONE && act->kind != KEEP_OACT_NONE;
}

/* ---- after the record (and holder) reads --------------------------------------- */

static void go_verdict(struct keep_acquire *sm);

/* Act on sm->d (keep_owner_acq_on_record / _on_node). */
static void decided(struct keep_acquire *sm)
{
	if (sm->d.verdict == KEEP_ACQ_READ_NODE) {
		/* the free rule: a read of nodes/<holder> issued after the record read */
		sm->phase = KEEP_AP_NODE;
		return;
	}
	if (sm->hv.live && sm->d.verdict != KEEP_ACQ_SAME && sm->d.verdict != KEEP_ACQ_FAILED) {
		/* our hold no longer matches the record: stop acting on it. A failed
		 * read proves nothing changed: the hold stays (dropping it would
		 * leave the record naming us with no hold and no pending release) */
		sm->phase = KEEP_AP_DROP_STALE;
		return;
	}
	go_verdict(sm);
}

static void go_verdict(struct keep_acquire *sm)
{
	struct keep_acq_decision *d = &sm->d;

	switch (d->verdict) {
	case KEEP_ACQ_SAME:
		/* the same grant: judged again now that the record read came */
		sm->phase = KEEP_AP_LEASE_SAME;
		return;
	case KEEP_ACQ_HELD:
		sm->res.holder = d->rec;
		sm->res.free_at_ms = d->free_at_ms;
		answer(sm, KEEP_AR_HELD, KEEP_EXIT_NO, NULL);
		return;
	case KEEP_ACQ_BAD_RECORD:
		warn(sm, "owners/%s is not a keep ownership record (%s): nothing written", sm->key,
		     d->reason ? d->reason : "-");
		answer(sm, KEEP_AR_ERROR, KEEP_EXIT_BAD_OBJECT, "bad-record");
		return;
	case KEEP_ACQ_FAILED:
		warn(sm, "unable to read owners/%s or its holder: %s: %s", sm->key,
		     d->reason ? d->reason : "-", sm->detail[0] ? sm->detail : "-");
		/* refused (403, no such bucket): 1; for now (timeout, 5xx): 111 */
		answer(sm, KEEP_AR_ERROR, keep_exit_of_outcome(sm->read_outcome, false), "store");
		return;
	case KEEP_ACQ_WRITE:
		sm->gen = d->next.generation;
		sm->phase = KEEP_AP_LEASE2;
		return;
	case KEEP_ACQ_READ_NODE:
		sm->phase = KEEP_AP_NODE;
		return;
	}
}

/* The marker step ended (mark.h): a first generation, or an answer. */
static void marked(struct keep_acquire *sm)
{
	const struct keep_mark_result *m = &sm->mark.res;
	struct keep_owner_self self;

	switch (m->kind) {
	case KEEP_MR_MARKED:
		if (m->created) {
			/* the first record was created at m->created: maybe since our
			 * read of owners/KEY (another node's first acquisition), or
			 * deleted out of band. A read issued now tells */
			sm->phase = KEEP_AP_RECHECK;
			return;
		}
		if (m->seed >= KEEP_OWNER_GEN_MAX) {
			warn(sm, "first acquisition of '%s': seed %lld out of range", sm->key,
			     (long long)m->seed);
			answer(sm, KEEP_AR_ERROR, KEEP_EXIT_BAD_OBJECT, "bad-lease");
			return;
		}
		sm->first = true;
		sm->first_gen = m->seed + 1;
		self_of(sm, &self);
		keep_owner_acq_on_record(&self, &sm->hv, KEEP_STORE_NOT_FOUND, "", NULL, 0,
					 sm->first_gen, &sm->d);
		decided(sm);
		return;
	case KEEP_MR_HELD:
		keep_owner_rec_held(&sm->after_drop.holder, m->old.node, "-", m->old.generation);
		sm->after_drop.free_at_ms = m->live_until_ms;
		sm->after_drop.kind = KEEP_AR_HELD;
		sm->after_drop.exit_code = keep_mark_result_exit_code(m);
		break;
	case KEEP_MR_BAD_OBJECT:
	case KEEP_MR_BAD_KEY:
		warn(sm, "first acquisition of '%s': %s: nothing written", sm->key, m->detail);
		sm->after_drop.kind = KEEP_AR_ERROR;
		sm->after_drop.exit_code = keep_mark_result_exit_code(m);
		sm->after_drop.reason = "bad-lease";
		break;
	case KEEP_MR_FAILED:
		warn(sm, "first acquisition of '%s': %s", sm->key, m->detail);
		sm->after_drop.kind = KEEP_AR_ERROR;
		sm->after_drop.exit_code = keep_mark_result_exit_code(m);
		sm->after_drop.reason = "store";
		break;
	}
	/* no record and no first generation: a live hold of ours names
	 * nothing any more: stop acting on it */
	if (sm->hv.live) {
		sm->answer_after_drop = true;
		sm->phase = KEEP_AP_DROP_STALE;
		return;
	}
	sm->res = sm->after_drop;
	sm->phase = KEEP_AP_UNLOCK;
}

/* The read-back decided (keep_owner_readback / _on_node). */
static void rb_decided(struct keep_acquire *sm)
{
	switch (sm->rb.verdict) {
	case KEEP_RB_READ_NODE:
		sm->phase = KEEP_AP_RB_NODE;
		return;
	case KEEP_RB_OURS:
		keep_copy_str(sm->version, sizeof(sm->version), sm->rb.version);
		sm->phase = sm->first ? KEEP_AP_CONFIRM : KEEP_AP_LEASE_REG;
		return;
	case KEEP_RB_LOST:
		sm->res.holder = sm->rb.rec;
		sm->res.free_at_ms = sm->rb.free_at_ms;
		answer(sm, KEEP_AR_HELD, KEEP_EXIT_NO, NULL);
		return;
	case KEEP_RB_UNRESOLVED:
		sm->phase = KEEP_AP_UNRESOLVED;
		return;
	}
}

/* ---- replies ----------------------------------------------------------------- */

int keep_acquire_lease_refusal(const struct keep_lease_view *begun,
			       const struct keep_lease_view *now)
{
	if (!begun)
		return now->code != KEEP_EXIT_OK || !now->instance[0]
			   ? (now->code ? now->code : KEEP_EXIT_NOT_LIVE)
			   : KEEP_EXIT_OK;
	if (now->code != KEEP_EXIT_OK)
		return now->code;
	if (strcmp(now->instance, begun->instance) != 0 ||
	    keep_owner_hold_lapsed(begun->lapses, now->lapses))
		return KEEP_EXIT_RAN_OUT;
	return KEEP_EXIT_OK;
}

static void on_lease(struct keep_acquire *sm, const struct keep_oreply *r)
{
	const struct keep_lease_view *l = &r->lease;
	/* step 1 (begun NULL), or a later look at the lease (begun: step 1's) */
	int code = keep_acquire_lease_refusal(sm->phase == KEEP_AP_LEASE ? NULL : &sm->lease, l);

	if (sm->phase == KEEP_AP_LEASE) {
		if (code) {
			answer(sm, KEEP_AR_REFUSED, code, "lease-not-valid");
			return;
		}
		if (l->draining) {
			answer(sm, KEEP_AR_REFUSED, KEEP_EXIT_NOT_LIVE, "draining");
			return;
		}
		sm->lease = *l;
		sm->phase = KEEP_AP_HOLD;
		return;
	}
	/* LEASE2, right before the write; LEASE_SAME, after the record read of
	 * a regrant; LEASE_REG, after the write's reply: still valid, same
	 * instance, same epoch (no lapse since the acquisition began: §3 "only
	 * while this node's lease is valid, checked right before the record
	 * write"; issue 13: the answer is about the moment it is given) */
	if (code) {
		if (sm->phase == KEEP_AP_LEASE_REG) {
			/* written, but the lease ran out, lapsed or stopped while
			 * the write was in flight: the hold never starts; the
			 * record goes to the pending releases, as a lapse parks
			 * every hold (§1, §3) */
			warn(sm,
			     "owners/%s was written at generation %lld, but the node lease was "
			     "not valid when the reply came: not held; its release is pending",
			     sm->key, (long long)sm->gen);
			sm->lapsed_code = code;
			sm->phase = KEEP_AP_REG_PARK;
			return;
		}
		answer(sm, KEEP_AR_REFUSED, code, "lease-not-valid");
		return;
	}
	if (sm->phase == KEEP_AP_LEASE_SAME) {
		sm->res.generation = sm->hold.generation;
		keep_copy_str(sm->res.version, sizeof(sm->res.version), sm->hold.version);
		sm->res.fresh = false;
		answer(sm, KEEP_AR_ACQUIRED, KEEP_EXIT_OK, NULL);
		return;
	}
	if (sm->phase == KEEP_AP_LEASE_REG) {
		/* a drain that began since the write parks the hold on its next
		 * pass: registering it is what the drain expects */
		sm->phase = KEEP_AP_REGISTER;
		return;
	}
	if (l->draining) {
		/* a drain began meanwhile: nothing new may start (§4) */
		answer(sm, KEEP_AR_REFUSED, KEEP_EXIT_NOT_LIVE, "draining");
		return;
	}
	sm->phase = KEEP_AP_WRITE;
}

static void on_hold(struct keep_acquire *sm, const struct keep_oreply *r)
{
	if (r->hold_rc < 0) {
		warn(sm, "unreadable hold of '%s' dropped", sm->key);
		sm->phase = KEEP_AP_HOLD_DROP;
		return;
	}
	if (r->hold_rc > 0) {
		sm->phase = KEEP_AP_REC;
		return;
	}
	sm->hold = r->hold;
	if (strcmp(sm->hold.instance, sm->lease.instance) != 0) {
		/* an earlier process's hold: that process is gone, and our instance
		 * frees its records (§2) */
		sm->phase = KEEP_AP_HOLD_DROP;
		return;
	}
	if (keep_owner_hold_stale(sm->hold.instance, sm->hold.epoch, sm->lease.instance,
				  sm->lease.lapses)) {
		/* a lapse since: the hold is over; release it in the background */
		sm->phase = KEEP_AP_PARK_PEND;
		return;
	}
	sm->phase = KEEP_AP_REGRANT;
}

static void on_store_read(struct keep_acquire *sm, int64_t now_wall_ms, const struct keep_oreply *r)
{
	struct keep_owner_self self;
	bool ok = r->outcome == KEEP_STORE_OK && !r->decode_err;

	self_of(sm, &self);
	sm->read_outcome = r->outcome;
	switch (sm->phase) {
	case KEEP_AP_REC:
		if (r->outcome == KEEP_STORE_NOT_FOUND) {
			/* no record: a native cluster's first generation is 1; any
			 * other's comes from leases/ (§6) */
			sm->phase = KEEP_AP_CLUSTER;
			return;
		}
		keep_owner_acq_on_record(&self, &sm->hv, r->outcome, r->version,
					 ok ? &r->rec : NULL, r->decode_err, 1, &sm->d);
		decided(sm);
		return;
	case KEEP_AP_RECHECK:
		if (keep_mark_record_deleted(&sm->mark.res, r->outcome)) {
			/* still absent after the marker said its first record was
			 * created: it was deleted out of band. Its generations are
			 * unknown here: handing out seed + 1 again could repeat one
			 * (issue 14 item 3) */
			warn(sm,
			     "owners/%s is missing but leases/%s says its first record was "
			     "created at generation %lld: it was deleted out of band; nothing "
			     "written (see docs/runbooks/record-missing.md)",
			     sm->key, sm->key, (long long)sm->mark.res.created);
			sm->after_drop.kind = KEEP_AR_ERROR;
			sm->after_drop.exit_code = KEEP_EXIT_BAD_OBJECT;
			sm->after_drop.reason = "record-missing";
			if (sm->hv.live) {
				sm->answer_after_drop = true;
				sm->phase = KEEP_AP_DROP_STALE;
				return;
			}
			sm->res = sm->after_drop;
			sm->phase = KEEP_AP_UNLOCK;
			return;
		}
		/* created meanwhile by another node: decide on this read */
		keep_owner_acq_on_record(&self, &sm->hv, r->outcome, r->version,
					 ok ? &r->rec : NULL, r->decode_err, 1, &sm->d);
		decided(sm);
		return;
	case KEEP_AP_NODE:
		keep_owner_acq_on_node(&self, r->outcome, ok ? &r->node : NULL, now_wall_ms, &sm->t,
				       &sm->d);
		decided(sm);
		return;
	case KEEP_AP_RB:
		keep_owner_readback(
		    &self, sm->gen, sm->d.cond == KEEP_COND_IF_MATCH ? sm->d.if_match : "",
		    r->outcome, r->version, ok ? &r->rec : NULL, r->decode_err, &sm->rb);
		rb_decided(sm);
		return;
	case KEEP_AP_RB_NODE:
		keep_owner_readback_on_node(&self, r->outcome, ok ? &r->node : NULL, now_wall_ms,
					    &sm->t, &sm->rb);
		rb_decided(sm);
		return;
	default:
		return;
	}
}

static void on_write(struct keep_acquire *sm, const struct keep_oreply *r)
{
	if (r->outcome == KEEP_STORE_OK) {
		keep_copy_str(sm->version, sizeof(sm->version), r->version);
		sm->phase = sm->first ? KEEP_AP_CONFIRM : KEEP_AP_LEASE_REG;
		return;
	}
	if (r->outcome == KEEP_STORE_REFUSED) {
		/* a definite answer, nothing written (403, no such bucket): 1 */
		warn(sm, "write of owners/%s refused: %s", sm->key, r->detail[0] ? r->detail : "-");
		answer(sm, KEEP_AR_ERROR, keep_exit_of_outcome(r->outcome, false), "store");
		return;
	}
	/* unknown outcome (ambiguous, or a conflict that may hide our own landed
	 * write): read back once, still under the lock (§3) */
	sm->phase = KEEP_AP_RB;
}

void keep_acquire_on_reply(struct keep_acquire *sm, int64_t now_mono_ms, int64_t now_wall_ms,
			   const struct keep_oreply *r)
{
	(void)now_mono_ms;
	if (!sm->inflight)
		return;
	sm->inflight = false;
	keep_copy_str(sm->detail, sizeof(sm->detail), r->detail);
	switch (sm->phase) {
	case KEEP_AP_LOCK:
		if (r->failed) {
			warn(sm, "unable to lock '%s': %s", sm->key, strerror(r->err));
			sm->res.kind = KEEP_AR_ERROR;
			sm->res.exit_code = KEEP_EXIT_TEMP;
			sm->res.reason = "state-dir";
			sm->phase = KEEP_AP_DONE; /* no lock to release */
			return;
		}
		sm->phase = KEEP_AP_LEASE;
		return;
	case KEEP_AP_LEASE:
	case KEEP_AP_LEASE2:
	case KEEP_AP_LEASE_SAME:
	case KEEP_AP_LEASE_REG:
		on_lease(sm, r);
		return;
	case KEEP_AP_HOLD:
		on_hold(sm, r);
		return;
	case KEEP_AP_HOLD_DROP:
		if (r->sd == KEEP_SD_UNCHANGED)
			warn(sm, "unable to remove the old hold of '%s': %s", sm->key,
			     strerror(r->err));
		sm->phase = KEEP_AP_REC;
		return;
	case KEEP_AP_PARK_PEND:
		if (r->sd == KEEP_SD_UNCHANGED) {
			/* its release cannot be remembered: keep the hold file (it is
			 * of an earlier epoch: owner-check refuses it, and the
			 * resolver parks it later) */
			warn(sm, "unable to record the pending release of '%s': %s", sm->key,
			     strerror(r->err));
			sm->phase = KEEP_AP_REC;
			return;
		}
		sm->phase = KEEP_AP_PARK_HOLD;
		return;
	case KEEP_AP_PARK_HOLD:
		if (r->sd != KEEP_SD_DURABLE)
			warn(sm, "removal of the lapsed hold of '%s' not durable: %s", sm->key,
			     strerror(r->err));
		sm->phase = KEEP_AP_REC;
		return;
	case KEEP_AP_REGRANT:
		if (r->exists) {
			/* a release of this very hold is pending: the hold ended; it is
			 * never granted again (issue 18): take a new generation */
			warn(sm, "a release of '%s' generation %lld is pending: not regranted",
			     sm->key, (long long)sm->hold.generation);
		} else {
			sm->hv.live = true;
			sm->hv.generation = sm->hold.generation;
		}
		sm->phase = KEEP_AP_REC;
		return;
	case KEEP_AP_REC:
	case KEEP_AP_RECHECK:
	case KEEP_AP_NODE:
	case KEEP_AP_RB:
	case KEEP_AP_RB_NODE:
		on_store_read(sm, now_wall_ms, r);
		return;
	case KEEP_AP_CLUSTER:
		if (r->cluster == KEEP_CLUSTER_NATIVE) {
			struct keep_owner_self self;

			/* no actor of this cluster ever had an old lease: no marker
			 * to read, seed or confirm; the record is created at 1 */
			self_of(sm, &self);
			keep_owner_acq_on_record(&self, &sm->hv, KEEP_STORE_NOT_FOUND, "", NULL, 0,
						 1, &sm->d);
			decided(sm);
			return;
		}
		if (r->detail[0])
			warn(sm, "%s: not a native cluster; first acquisitions go through leases/",
			     r->detail);
		keep_mark_init(&sm->mark, sm->key, &sm->t);
		sm->phase = KEEP_AP_MARK;
		return;
	case KEEP_AP_MARK:
		keep_mark_on_reply(&sm->mark, now_wall_ms, r);
		if (sm->mark.phase == KEEP_MK_DONE)
			marked(sm);
		return;
	case KEEP_AP_DROP_STALE:
		if (r->sd == KEEP_SD_UNCHANGED)
			warn(sm, "unable to remove the hold of '%s': %s", sm->key,
			     strerror(r->err));
		sm->hv.live = false;
		if (sm->answer_after_drop) {
			/* after the marker step: its answer */
			sm->res = sm->after_drop;
			sm->phase = KEEP_AP_UNLOCK;
			return;
		}
		go_verdict(sm);
		return;
	case KEEP_AP_WRITE:
		on_write(sm, r);
		return;
	case KEEP_AP_CONFIRM:
		if (r->outcome == KEEP_STORE_OK) {
			sm->phase = KEEP_AP_LEASE_REG;
			return;
		}
		/* the record was created but the marker does not say so: a later
		 * deletion of the record could not be told from a first acquisition
		 * stopped between its writes. This hold never acts: release it */
		warn(sm, "unable to confirm leases/%s (created %lld): %s: %s; releasing", sm->key,
		     (long long)sm->gen, keep_outcome_name(r->outcome),
		     r->detail[0] ? r->detail : "-");
		sm->res.reason = "store";
		sm->phase = KEEP_AP_REG_PARK;
		return;
	case KEEP_AP_REGISTER:
		if (r->sd == KEEP_SD_UNCHANGED) {
			/* nothing written: we hold a record we cannot remember; park
			 * its release so the resolver frees it */
			warn(sm, "unable to register the hold of '%s': %s; releasing it", sm->key,
			     strerror(r->err));
			sm->res.reason = "state-dir";
			sm->phase = KEEP_AP_REG_PARK;
			return;
		}
		if (r->sd == KEEP_SD_VISIBLE)
			/* renamed into place: registered (owner-check sees it); only a
			 * crash of the machine could undo it, and that ends this
			 * lease-write instance, which frees the record (§2) */
			warn(sm,
			     "the hold of '%s' is registered but its directory was not synced: %s",
			     sm->key, strerror(r->err));
		sm->res.generation = sm->gen;
		keep_copy_str(sm->res.version, sizeof(sm->res.version), sm->version);
		sm->res.fresh = true;
		answer(sm, KEEP_AR_ACQUIRED, KEEP_EXIT_OK, NULL);
		return;
	case KEEP_AP_REG_PARK:
		if (r->sd == KEEP_SD_UNCHANGED)
			warn(sm,
			     "unable to record the pending release of '%s' generation %lld: %s; "
			     "the record stays held until this lease-write instance stops",
			     sm->key, (long long)sm->gen, strerror(r->err));
		if (sm->lapsed_code) {
			answer(sm, KEEP_AR_REFUSED, sm->lapsed_code, "lease-lapsed");
			return;
		}
		answer(sm, KEEP_AR_ERROR, KEEP_EXIT_TEMP,
		       sm->res.reason ? sm->res.reason : "state-dir");
		return;
	case KEEP_AP_UNRESOLVED:
		if (r->sd == KEEP_SD_UNCHANGED)
			warn(sm, "unable to record the unresolved acquire of '%s': %s", sm->key,
			     strerror(r->err));
		sm->res.generation = sm->gen;
		answer(sm, KEEP_AR_UNKNOWN, KEEP_EXIT_UNKNOWN, NULL);
		return;
	case KEEP_AP_UNLOCK:
		sm->phase = KEEP_AP_DONE;
		return;
	case KEEP_AP_DONE:
		return;
	}
}
