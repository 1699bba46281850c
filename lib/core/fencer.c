/* keep — the fencer machine (fencer.h; ADR 0020 §2). */
#include "fencer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"

static struct keep_fencer_event *ev_add(struct keep_fencer_m *m, enum keep_fencer_ev_kind k)
{
	struct keep_fencer_event *e;

	if (m->nev == KEEP_FENCER_EVENTS) /* never: a step leaves at most two */
		return &m->ev[KEEP_FENCER_EVENTS - 1];
	e = &m->ev[m->nev++];
	memset(e, 0, sizeof(*e));
	e->kind = k;
	return e;
}

/* A peer's answer line on its stale line (instance and written_at of the
 * line; the decision time when at is given). */
static void peer_line(struct keep_fencer_m *m, const char *type, int64_t free_at,
		      const char *reason, const struct keep_fencer *at)
{
	struct keep_fencer_event *e = ev_add(m, KEEP_FNE_LINE);

	e->type = type;
	snprintf(e->node, sizeof(e->node), "%s", m->cfg.st.node);
	snprintf(e->instance, sizeof(e->instance), "%s", m->cfg.st.instance);
	e->written_at_ms = m->cfg.st.written_at_ms;
	e->free_at_ms = free_at;
	e->reason = reason;
	if (at) {
		e->at = true;
		e->decided_mono_ms = at->now_mono_ms;
		e->live_since_mono_ms = at->live_since_mono_ms;
	}
}

/* An operator's answer line on object o (NULL: none; a created fence's
 * instance "-" prints as "-"). */
static void op_line(struct keep_fencer_m *m, const char *type, const struct keep_node_obj *o,
		    int64_t free_at, const char *reason)
{
	struct keep_fencer_event *e = ev_add(m, KEEP_FNE_LINE);

	e->type = type;
	snprintf(e->node, sizeof(e->node), "%s", m->cfg.node);
	if (o && strcmp(o->instance, "-") != 0)
		snprintf(e->instance, sizeof(e->instance), "%s", o->instance);
	e->written_at_ms = o ? o->written_at_ms : 0;
	e->free_at_ms = free_at;
	if (strcmp(type, "already-fenced") == 0 && o)
		snprintf(e->fenced_by, sizeof(e->fenced_by), "%s", o->fenced_by);
	e->reason = reason;
}

static void op_info(struct keep_fencer_m *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void op_info(struct keep_fencer_m *m, const char *fmt, ...)
{
	struct keep_fencer_event *e = ev_add(m, KEEP_FNE_INFO);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

static void done(struct keep_fencer_m *m, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void done(struct keep_fencer_m *m, int code, const char *fmt, ...)
{
	va_list ap;

	m->phase = KEEP_FNP_DONE;
	m->exit_code = code;
	m->text[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(m->text, sizeof(m->text), fmt, ap);
		va_end(ap);
	}
}

static const char *detail_of(const char *detail)
{
	return detail && detail[0] ? detail : "-";
}

/* The line type of a peer decision that ends the job ("skipped" for a
 * node whose own lease is not valid). */
static const char *peer_type(enum keep_fence_verdict v)
{
	return v == KEEP_FV_NOT_VALID ? "skipped" : keep_fence_verdict_name(v);
}

void keep_fencer_init(struct keep_fencer_m *m, const struct keep_fencer_cfg *cfg)
{
	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	if (cfg->mode == KEEP_FENCER_PEER)
		snprintf(m->cfg.node, sizeof(m->cfg.node), "%s", cfg->st.node);
	snprintf(m->last, sizeof(m->last), "-");
	m->phase = cfg->mode == KEEP_FENCER_PEER ? KEEP_FNP_MAY : KEEP_FNP_READ;
	m->decisions = 1;
}

enum keep_fencer_phase keep_fencer_peer_step(enum keep_fencer_phase at, bool go_on)
{
	if (!go_on)
		return KEEP_FNP_DONE;
	switch (at) {
	case KEEP_FNP_MAY:
		return KEEP_FNP_READ;
	case KEEP_FNP_READ:
		return KEEP_FNP_JUDGE;
	case KEEP_FNP_JUDGE:
		return KEEP_FNP_MAY_AGAIN;
	case KEEP_FNP_MAY_AGAIN:
		return KEEP_FNP_WRITE;
	case KEEP_FNP_WRITE:
		return KEEP_FNP_REREAD;
	default:
		return KEEP_FNP_DONE;
	}
}

bool keep_fencer_not_yet_retry_at(int decisions, int64_t free_at_ms, int64_t judge_wall_ms,
				  int64_t now_mono_ms, const struct keep_timing *t,
				  int64_t *until_mono_ms)
{
	/* free_at on our judging clock, measured on the steady clock from
	 * now; a free_at further than takeover + max_skew away is not waited
	 * for (the next stale line comes) */
	int64_t left = keep_sub_sat_ms(free_at_ms, judge_wall_ms);

	if (decisions > KEEP_FENCER_NOT_YET_RETRIES ||
	    left > keep_add_sat_ms(keep_timing_takeover_ms(t), t->max_skew_ms))
		return false;
	*until_mono_ms = keep_add_sat_ms(now_mono_ms, (left > 0 ? left : 0) + 1);
	return true;
}

bool keep_fencer_operator_try_again(int tries)
{
	return tries < KEEP_FENCER_OPERATOR_TRIES;
}

void keep_fencer_next(struct keep_fencer_m *m, int64_t now_mono_ms, const struct keep_walls *now,
		      struct keep_fencer_action *act)
{
	memset(act, 0, sizeof(*act));
	act->node = m->cfg.node;
	act->timeout_ms = keep_timing_attempt_timeout_ms(&m->cfg.t);
	if (m->phase == KEEP_FNP_NOT_YET)
		m->phase =
		    keep_fencer_not_yet_retry_at(m->decisions, m->d.free_at_ms, now->judge_wall_ms,
						 now_mono_ms, &m->cfg.t, &m->until_mono_ms)
			? KEEP_FNP_WAIT
			: KEEP_FNP_DONE;
	if (m->phase == KEEP_FNP_WAIT) {
		if (now_mono_ms < m->until_mono_ms) {
			act->kind = KEEP_FNA_WAIT;
			act->until_mono_ms = m->until_mono_ms;
			return;
		}
		m->decisions++;
		m->phase = KEEP_FNP_MAY;
	}
	switch (m->phase) {
	case KEEP_FNP_MAY:
	case KEEP_FNP_JUDGE:
	case KEEP_FNP_MAY_AGAIN:
		act->kind = KEEP_FNA_LEASE;
		return;
	case KEEP_FNP_READ:
	case KEEP_FNP_REREAD:
		act->kind = KEEP_FNA_READ;
		return;
	case KEEP_FNP_WRITE:
		act->kind = KEEP_FNA_WRITE;
		act->obj = m->d.obj;
		act->cond =
		    m->d.verdict == KEEP_FV_CREATE ? KEEP_COND_IF_NONE_MATCH : KEEP_COND_IF_MATCH;
		if (act->cond == KEEP_COND_IF_MATCH)
			snprintf(act->if_match, sizeof(act->if_match), "%s", m->version);
		return;
	case KEEP_FNP_LIST:
		act->kind = KEEP_FNA_LIST;
		return;
	default:
		act->kind = KEEP_FNA_DONE;
		return;
	}
}

void keep_fencer_on_lease(struct keep_fencer_m *m, const struct keep_fencer *me,
			  const struct keep_walls *now)
{
	struct keep_fence_decision d;

	m->nev = m->evhead = 0;
	if (m->phase == KEEP_FNP_MAY || m->phase == KEEP_FNP_MAY_AGAIN) {
		/* asked before the read and again right before the write (§2) */
		bool may = keep_fence_peer_may(&m->cfg.st, me, &m->cfg.t, &d);

		if (!may)
			peer_line(m, peer_type(d.verdict), 0, d.reason, NULL);
		else
			m->me = *me;
		m->phase = keep_fencer_peer_step(m->phase, may);
		return;
	}
	if (m->phase != KEEP_FNP_JUDGE)
		return;
	/* judged on the judging clock, dated on the wall (issue 23) */
	keep_fence_peer_judge(&m->cfg.st, me, m->read_outcome, m->have_seen ? &m->seen : NULL,
			      m->read_derr, now, &m->cfg.t, m->cfg.self, &m->d);
	if (m->d.verdict == KEEP_FV_FENCE) {
		m->phase = keep_fencer_peer_step(KEEP_FNP_JUDGE, true);
		return;
	}
	peer_line(m, peer_type(m->d.verdict),
		  m->d.verdict == KEEP_FV_NOT_YET || m->d.verdict == KEEP_FV_ALREADY
		      ? m->d.free_at_ms
		      : 0,
		  m->d.reason, NULL);
	m->phase = m->d.verdict == KEEP_FV_NOT_YET ? KEEP_FNP_NOT_YET
						   : keep_fencer_peer_step(KEEP_FNP_JUDGE, false);
}

/* The operator's decision on its read r. */
static void operator_decide(struct keep_fencer_m *m, const struct keep_fencer_read *r,
			    const struct keep_walls *now)
{
	const char *node = m->cfg.node;

	/* a created fence is dated on the wall clock, never the judging
	 * clock of the node the configuration names (issue 23) */
	keep_fence_operator(node, r->outcome, r->outcome == KEEP_STORE_OK ? r->obj : NULL, r->derr,
			    now, &m->cfg.t, &m->d);
	keep_fence_operator_absent(&m->d, m->cfg.create);
	switch (m->d.verdict) {
	case KEEP_FV_FENCE:
	case KEEP_FV_CREATE:
		m->phase = KEEP_FNP_WRITE;
		return;
	case KEEP_FV_ALREADY:
		op_line(m, "already-fenced", r->obj, m->d.free_at_ms, NULL);
		op_info(m, "nodes/%s is already fenced (by %s)", node,
			r->obj && r->obj->fenced_by[0] ? r->obj->fenced_by : "?");
		done(m, KEEP_EXIT_NO, NULL);
		return;
	case KEEP_FV_REFUSED:
		if (m->d.reason && strcmp(m->d.reason, "absent") == 0) {
			op_line(m, "refused", NULL, 0, "absent");
			m->phase = KEEP_FNP_LIST;
			return;
		}
		op_line(m, "refused", r->obj, 0, m->d.reason);
		if (m->d.reason && strcmp(m->d.reason, "released") == 0)
			op_info(
			    m,
			    "nodes/%s is released (a clean stop): nothing to fence; its records "
			    "are free at %lld",
			    node, (long long)m->d.free_at_ms);
		else
			op_info(
			    m,
			    "nodes/%s is an old-format heartbeat: never fenced (ADR 0020 section "
			    "6)",
			    node);
		done(m, KEEP_EXIT_NO, NULL);
		return;
	case KEEP_FV_BAD_OBJECT:
		done(m, KEEP_EXIT_BAD_OBJECT,
		     "nodes/%s is not a keep node object (%s): nothing written", node,
		     m->d.reason ? m->d.reason : "unreadable");
		return;
	default:
		/* 403, no such bucket: 1; a timeout or 5xx: 111 */
		done(m, keep_exit_of_outcome(r->outcome, r->not_ours),
		     "unable to read nodes/%s: %s: %s", node, keep_outcome_name(r->outcome),
		     r->detail ? r->detail : "");
		return;
	}
}

/* The next operator try after a fence that did not land, or the end. */
static void operator_again(struct keep_fencer_m *m)
{
	if (keep_fencer_operator_try_again(++m->tries)) {
		m->phase = KEEP_FNP_READ;
		return;
	}
	done(m, KEEP_EXIT_TEMP, "nodes/%s: %d fences did not land (the last: %s): run it again",
	     m->cfg.node, KEEP_FENCER_OPERATOR_TRIES, m->last);
}

void keep_fencer_on_read(struct keep_fencer_m *m, const struct keep_fencer_read *r,
			 const struct keep_walls *now)
{
	const struct keep_node_obj *obj = r->outcome == KEEP_STORE_OK ? r->obj : NULL;
	struct keep_fence_decision d2;
	const char *reason;

	m->nev = m->evhead = 0;
	if (m->phase == KEEP_FNP_READ) {
		snprintf(m->version, sizeof(m->version), "%s",
			 r->outcome == KEEP_STORE_OK && r->version ? r->version : "");
		m->have_seen = obj != NULL;
		if (obj)
			m->seen = *obj;
		if (m->cfg.mode == KEEP_FENCER_OPERATOR) {
			operator_decide(m, r, now);
			return;
		}
		/* PEER: judged on the lease read after this read (§2) */
		m->read_outcome = r->outcome;
		m->read_derr = r->derr;
		m->phase = keep_fencer_peer_step(KEEP_FNP_READ, true);
		return;
	}
	if (m->phase != KEEP_FNP_REREAD)
		return;
	keep_fence_read_back(&m->d.obj, r->outcome, obj, r->derr, &m->cfg.t, &d2);
	if (m->cfg.mode == KEEP_FENCER_OPERATOR) {
		if (d2.verdict == KEEP_FV_FENCED) {
			op_line(m, "fenced", &m->d.obj, m->d.free_at_ms, NULL);
			m->ev[m->nev - 1].landed = true;
			done(m, KEEP_EXIT_OK, NULL);
		} else if (d2.verdict == KEEP_FV_FAILED && r->outcome != KEEP_STORE_OK) {
			done(m, KEEP_EXIT_TEMP,
			     "fence of nodes/%s: outcome unknown (%s), and the read-back failed: "
			     "run "
			     "it again",
			     m->cfg.node, m->last);
		} else {
			operator_again(m);
		}
		return;
	}
	/* PEER: the line says what that read shows, never more */
	reason = d2.reason;
	if (d2.verdict == KEEP_FV_FENCED)
		d2.free_at_ms = m->d.free_at_ms; /* our fence landed (a lost reply) */
	else if (d2.verdict == KEEP_FV_FAILED && r->outcome == KEEP_STORE_OK)
		/* A did not write and our fence is not there: the write was
		 * refused by another request (a 409), or never landed */
		reason =
		    m->wrote == KEEP_STORE_CONFLICT ? "conflict-unchanged" : "ambiguous-unchanged";
	peer_line(m, keep_fence_verdict_name(d2.verdict),
		  d2.verdict == KEEP_FV_FENCED || d2.verdict == KEEP_FV_ALREADY ? d2.free_at_ms : 0,
		  reason, d2.verdict == KEEP_FV_FENCED ? &m->me : NULL);
	m->ev[m->nev - 1].landed = d2.verdict == KEEP_FV_FENCED;
	m->phase = keep_fencer_peer_step(KEEP_FNP_REREAD, true);
}

void keep_fencer_on_write(struct keep_fencer_m *m, enum keep_outcome outcome, const char *detail)
{
	m->nev = m->evhead = 0;
	if (m->phase != KEEP_FNP_WRITE)
		return;
	m->wrote = outcome;
	if (outcome == KEEP_STORE_OK) {
		if (m->cfg.mode == KEEP_FENCER_OPERATOR) {
			op_line(m, "fenced", &m->d.obj, m->d.free_at_ms, NULL);
			done(m, KEEP_EXIT_OK, NULL);
		} else {
			peer_line(m, "fenced", m->d.free_at_ms, NULL, &m->me);
			m->phase = keep_fencer_peer_step(KEEP_FNP_WRITE, false);
		}
		m->ev[m->nev - 1].landed = true;
		return;
	}
	if (m->cfg.mode == KEEP_FENCER_PEER) {
		/* the condition failed (or the reply was lost): read once more (§2) */
		bool again = outcome == KEEP_STORE_CONFLICT || outcome == KEEP_STORE_AMBIGUOUS;

		if (!again)
			peer_line(m, "failed", 0, keep_outcome_name(outcome), NULL);
		m->phase = keep_fencer_peer_step(KEEP_FNP_WRITE, again);
		return;
	}
	snprintf(m->last, sizeof(m->last), "%s: %s", keep_outcome_name(outcome), detail_of(detail));
	if (outcome == KEEP_STORE_REFUSED) {
		done(m, keep_exit_of_outcome(outcome, false),
		     "unable to fence nodes/%s: the store refused the write: %s", m->cfg.node,
		     detail ? detail : "");
		return;
	}
	if (outcome == KEEP_STORE_AMBIGUOUS) {
		/* the fence may have landed: read it back once */
		m->phase = KEEP_FNP_REREAD;
		return;
	}
	/* a conflict (the object changed since our read, or another request
	 * refused ours): decide again on a fresh read */
	operator_again(m);
}

size_t keep_fencer_closest_listed(const char *node, const char *const *keys, size_t n,
				  const char *best[KEEP_FENCER_CLOSEST], size_t *total)
{
	const char *ids[256];
	size_t idx[KEEP_FENCER_CLOSEST], i, nids = 0, got, nbest = 0;

	*total = 0;
	/* the closest among every listed id, in windows of 256 (the closest
	 * of each window's closest and the best so far) */
	for (i = 0; i <= n; i++) {
		if (i < n && strncmp(keys[i], "nodes/", 6) == 0 &&
		    keep_node_id_valid(keys[i] + 6)) {
			ids[nids++] = keys[i] + 6;
			(*total)++;
		}
		if (nids == sizeof(ids) / sizeof(ids[0]) || (i == n && nids)) {
			size_t j, k = 0;
			const char *merged[256 + KEEP_FENCER_CLOSEST];

			for (j = 0; j < nbest; j++)
				merged[k++] = best[j];
			for (j = 0; j < nids; j++)
				merged[k++] = ids[j];
			got = keep_fence_closest(node, merged, k, idx, KEEP_FENCER_CLOSEST);
			for (j = 0; j < got; j++)
				best[j] = merged[idx[j]];
			nbest = got;
			nids = 0;
		}
	}
	return nbest;
}

void keep_fencer_on_list(struct keep_fencer_m *m, enum keep_outcome outcome, const char *detail,
			 const char *const *keys, size_t n)
{
	char known[KEEP_FENCER_TEXT_MAX / 2];
	size_t i, off = 0, total = 0;
	const char *node = m->cfg.node;

	m->nev = m->evhead = 0;
	if (m->phase != KEEP_FNP_LIST)
		return;
	known[0] = '\0';
	if (outcome == KEEP_STORE_OK) {
		const char *best[KEEP_FENCER_CLOSEST];
		size_t nbest = keep_fencer_closest_listed(node, keys, n, best, &total);

		for (i = 0; i < nbest; i++)
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
						i ? ", " : "", best[i]);
		if (!nbest)
			snprintf(known, sizeof(known), "none: the bucket has no node");
		else if (total > nbest && off < sizeof(known))
			snprintf(known + off, sizeof(known) - off, " (of %zu)", total);
	} else {
		snprintf(known, sizeof(known), "unknown: the listing of nodes/ failed: %s: %s",
			 keep_outcome_name(outcome), detail_of(detail));
	}
	done(m, KEEP_EXIT_NO,
	     "nodes/%s does not exist: nothing written (known nodes closest to %s: %s); "
	     "`lease-fence --create %s` fences an id that never wrote",
	     node, node, known, node);
}

bool keep_fencer_poll_event(struct keep_fencer_m *m, struct keep_fencer_event *e)
{
	if (m->evhead >= m->nev)
		return false;
	*e = m->ev[m->evhead++];
	return true;
}

void keep_fencer_view(bool read_ok, bool valid, int64_t live_since_mono_ms, int64_t now_mono_ms,
		      struct keep_fencer *me)
{
	memset(me, 0, sizeof(*me));
	me->now_mono_ms = now_mono_ms;
	if (!read_ok)
		return;
	me->valid = valid;
	me->live_since_mono_ms = live_since_mono_ms;
}

bool keep_fencer_queue_admit(struct keep_fencer_queue *q, const struct keep_stale *st,
			     struct keep_fencer_event *skipped)
{
	size_t i, slot = (size_t)-1;
	const char *why = NULL;

	for (i = 0; i < sizeof(q->busy) / sizeof(q->busy[0]); i++) {
		if (strcmp(q->busy[i], st->node) == 0) {
			why = "a fence of this node is in flight";
			break;
		}
		if (!q->busy[i][0] && slot == (size_t)-1)
			slot = i;
	}
	if (!why && (q->n == KEEP_FENCER_QUEUE_MAX || slot == (size_t)-1))
		why = "busy";
	if (why) {
		memset(skipped, 0, sizeof(*skipped));
		skipped->kind = KEEP_FNE_LINE;
		skipped->type = "skipped";
		snprintf(skipped->node, sizeof(skipped->node), "%s", st->node);
		snprintf(skipped->instance, sizeof(skipped->instance), "%s", st->instance);
		skipped->written_at_ms = st->written_at_ms;
		skipped->reason = why;
		return false;
	}
	snprintf(q->busy[slot], sizeof(q->busy[slot]), "%s", st->node);
	q->q[(q->head + q->n) % KEEP_FENCER_QUEUE_MAX] = *st;
	q->n++;
	return true;
}

bool keep_fencer_queue_take(struct keep_fencer_queue *q, struct keep_stale *st)
{
	if (!q->n)
		return false;
	*st = q->q[q->head];
	q->head = (q->head + 1) % KEEP_FENCER_QUEUE_MAX;
	q->n--;
	return true;
}

void keep_fencer_queue_done(struct keep_fencer_queue *q, const char *node)
{
	size_t i;

	for (i = 0; i < sizeof(q->busy) / sizeof(q->busy[0]); i++)
		if (strcmp(q->busy[i], node) == 0) {
			q->busy[i][0] = '\0';
			return;
		}
}
