/* keep — fencing and membership decisions (ADR 0020 §2, §6). See fence.h. */
#include "fence.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;
	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* ---- status ---------------------------------------------------------------- */

const char *keep_node_status_name(enum keep_node_status s)
{
	switch (s) {
	case KEEP_STATUS_LIVE:
		return "live";
	case KEEP_STATUS_RELEASED:
		return "released";
	case KEEP_STATUS_FENCED:
		return "fenced";
	case KEEP_STATUS_OLD_RUNNING:
		return "old-running";
	case KEEP_STATUS_OLD_RETIRED:
		return "old-retired";
	case KEEP_STATUS_UNREADABLE:
		return "unreadable";
	}
	return "unreadable";
}

enum keep_node_status keep_node_status(const struct keep_node_obj *o, int64_t now_wall_ms,
				       const struct keep_timing *t, bool changed_recently)
{
	if (!o)
		return KEEP_STATUS_UNREADABLE;
	if (o->format == 3) {
		switch (o->state) {
		case KEEP_NODE_LIVE:
			return KEEP_STATUS_LIVE;
		case KEEP_NODE_RELEASED:
			return KEEP_STATUS_RELEASED;
		case KEEP_NODE_FENCED:
			return KEEP_STATUS_FENCED;
		}
		return KEEP_STATUS_UNREADABLE;
	}
	if (o->format != 1 && o->format != 2)
		return KEEP_STATUS_UNREADABLE;
	/* §6: fresh by the start guard's test (or rewritten) = an old version running */
	if (changed_recently ||
	    keep_sub_sat_ms(now_wall_ms, o->written_at_ms) < keep_timing_takeover_ms(t))
		return KEEP_STATUS_OLD_RUNNING;
	return KEEP_STATUS_OLD_RETIRED;
}

/* ---- the watch --------------------------------------------------------------- */

void keep_watch_init(struct keep_watch *w, const struct keep_timing *t, const char *self)
{
	memset(w, 0, sizeof(*w));
	w->t = *t;
	copy_str(w->self, sizeof(w->self), self);
}

void keep_watch_release(struct keep_watch *w)
{
	free(w->peers);
	free(w->ev);
	w->peers = NULL;
	w->ev = NULL;
	w->n = w->alloc = w->nev = w->evalloc = 0;
}

int64_t keep_watch_stale_after_ms(const struct keep_timing *t)
{
	return keep_timing_write_every_ms(t) + keep_timing_attempt_timeout_ms(t);
}

const char *keep_watch_event_name(enum keep_watch_event_kind k)
{
	switch (k) {
	case KEEP_WEV_JOIN:
		return "join";
	case KEEP_WEV_CHANGE:
		return "change";
	case KEEP_WEV_LEAVE:
		return "leave";
	case KEEP_WEV_STALE:
		return "stale";
	}
	return "change";
}

/* Index of node in the sorted peers, or -(insertion point) - 1. */
static long find_peer(const struct keep_watch *w, const char *node)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(w->peers[mid].node, node);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

static struct keep_watch_event *add_event(struct keep_watch *w, enum keep_watch_event_kind kind,
					  const struct keep_watch_peer *p)
{
	struct keep_watch_event *e;

	if (w->nev == w->evalloc) {
		size_t na = w->evalloc ? w->evalloc * 2 : 16;
		struct keep_watch_event *nv = realloc(w->ev, na * sizeof(*nv));
		if (!nv)
			return NULL;
		w->ev = nv;
		w->evalloc = na;
	}
	e = &w->ev[w->nev++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	copy_str(e->node, sizeof(e->node), p->node);
	e->status = p->status;
	e->format = p->readable ? p->format : 0;
	copy_str(e->instance, sizeof(e->instance), p->readable ? p->instance : "-");
	e->written_at_ms = p->readable ? p->written_at_ms : 0;
	return e;
}

/* Fill a peer's observed fields from an input (not a failed read). */
static void observe(struct keep_watch_peer *p, const struct keep_watch_input *in)
{
	p->readable = in->readable && in->obj;
	if (p->readable) {
		p->format = in->obj->format;
		copy_str(p->instance, sizeof(p->instance), in->obj->instance);
		p->written_at_ms = in->obj->written_at_ms;
	} else {
		p->format = 0;
		copy_str(p->instance, sizeof(p->instance), "-");
		p->written_at_ms = 0;
	}
}

static bool recently(const struct keep_watch *w, const struct keep_watch_peer *p, int64_t now)
{
	return p->changed_mono_ms &&
	       keep_sub_sat_ms(now, p->changed_mono_ms) < keep_timing_takeover_ms(&w->t);
}

static int stale_pass(struct keep_watch *w, int64_t now, bool self_valid, int64_t live_since,
		      int rc);

bool keep_watch_observed_write(const struct keep_watch_peer *p, const struct keep_watch_input *x)
{
	return !x->wrote && !x->read_failed && x->readable && x->obj && p->readable &&
	       x->obj->format == 3 && p->format == 3 &&
	       (x->obj->written_at_ms != p->written_at_ms ||
		strcmp(x->obj->instance, p->instance) != 0) &&
	       x->obj->written_at_ms != p->noticed_written_at_ms;
}

/* Apply one input to the watch at now (wall: the judging wall clock).
 * may_join: a peer not known joins (a listing); otherwise it is ignored
 * (a ring observation). 0 or KEEP_ERR_NOMEM (an event lost). The peers
 * array has room for one more (keep_watch_pass made it). */
static int apply_input(struct keep_watch *w, const struct keep_watch_input *x, int64_t now,
		       int64_t wall, bool may_join)
{
	struct keep_watch_peer *p, old;
	long at = find_peer(w, x->node);
	bool stat_changed;
	int rc = 0;

	if (at < 0) {
		size_t pos = (size_t)(-at - 1);
		if (x->wrote || !may_join)
			return 0; /* no body of an unknown peer: not watched yet */
		memmove(&w->peers[pos + 1], &w->peers[pos], (w->n - pos) * sizeof(w->peers[0]));
		w->n++;
		p = &w->peers[pos];
		memset(p, 0, sizeof(*p));
		copy_str(p->node, sizeof(p->node), x->node);
		observe(p, x);
		p->since_mono_ms = now;
		p->seen = true;
		p->observed = true;
		p->watched = w->ring_k == 0;
		p->read_failed = x->read_failed;
		p->status = keep_node_status(p->readable ? x->obj : NULL, wall, &w->t, false);
		if (!add_event(w, KEEP_WEV_JOIN, p))
			rc = KEEP_ERR_NOMEM;
		return rc;
	}
	p = &w->peers[at];
	if (p->seen)
		return 0; /* listed twice: the first wins */
	p->seen = true;
	p->observed = true;
	p->read_failed = x->read_failed;
	if (x->read_failed)
		return 0; /* unknown: the watch stays as it was */
	p->unread = false;
	if (!may_join && keep_watch_observed_write(p, x)) {
		/* a ring observation showing a newer write: a write seen, as a
		 * listing's changed token (the body is taken at the next
		 * observation): the watch counts from the same moments in
		 * both modes, and two reads in one gap between a peer's
		 * writes never make a candidate of a live peer */
		p->noticed_written_at_ms = x->obj->written_at_ms;
		p->since_mono_ms = now;
		p->last_stale_mono_ms = 0;
		p->changed_mono_ms = now;
		return 0;
	}
	if (x->wrote) {
		/* a write landed: alive; the body is read once the
		 * token stops changing, and the watch starts again */
		p->since_mono_ms = now;
		p->last_stale_mono_ms = 0;
		p->changed_mono_ms = now;
		old = *p;
		if (p->readable && p->format != 3) {
			/* an old-format heartbeat rewritten: old-running (§6) */
			p->status = KEEP_STATUS_OLD_RUNNING;
			if (p->status != old.status && !add_event(w, KEEP_WEV_CHANGE, p))
				rc = KEEP_ERR_NOMEM;
		}
		return rc;
	}
	old = *p;
	observe(p, x);
	if (p->readable != old.readable || p->format != old.format ||
	    p->written_at_ms != old.written_at_ms || strcmp(p->instance, old.instance) != 0 ||
	    (p->readable && x->obj->format == 3 &&
	     keep_node_status(x->obj, wall, &w->t, false) != old.status)) {
		p->since_mono_ms = now;
		p->last_stale_mono_ms = 0;
		p->changed_mono_ms = now;
	}
	p->status = keep_node_status(p->readable ? x->obj : NULL, wall, &w->t, recently(w, p, now));
	stat_changed = p->status != old.status || p->readable != old.readable ||
		       p->format != old.format || strcmp(p->instance, old.instance) != 0;
	if (stat_changed && !add_event(w, KEEP_WEV_CHANGE, p))
		rc = KEEP_ERR_NOMEM;
	return rc;
}

int keep_watch_pass(struct keep_watch *w, const struct keep_watch_input *in, size_t n, int64_t now,
		    int64_t wall, bool self_valid, int64_t live_since)
{
	size_t i, j;
	int rc = 0;

	w->nev = 0;
	/* make room first, so a failure leaves the peers as they were */
	if (w->n + n > KEEP_WATCH_PEERS_MAX)
		return KEEP_ERR_TOOBIG;
	if (w->alloc < w->n + n) {
		size_t na = w->n + n + 16;
		struct keep_watch_peer *np = realloc(w->peers, na * sizeof(*np));
		if (!np)
			return KEEP_ERR_NOMEM;
		w->peers = np;
		w->alloc = na;
	}
	for (i = 0; i < w->n; i++)
		w->peers[i].seen = false;

	for (i = 0; i < w->n; i++)
		w->peers[i].observed = false;
	for (i = 0; i < n; i++) {
		int r = apply_input(w, &in[i], now, wall, true);

		if (r)
			rc = r;
	}

	/* leaves */
	for (i = 0, j = 0; i < w->n; i++) {
		if (!w->peers[i].seen) {
			if (!add_event(w, KEEP_WEV_LEAVE, &w->peers[i]))
				rc = KEEP_ERR_NOMEM;
			continue;
		}
		if (i != j)
			w->peers[j] = w->peers[i];
		j++;
	}
	w->n = j;

	return stale_pass(w, now, self_valid, live_since, rc);
}

bool keep_watch_peer_judged(const struct keep_watch *w, const struct keep_watch_peer *p,
			    bool observed)
{
	/* one that can be fenced, and its last read did not fail */
	if (p->read_failed || !p->readable || p->format != 3 || p->status != KEEP_STATUS_LIVE ||
	    strcmp(p->node, w->self) == 0)
		return false;
	/* looked at: on this pass, or watched and read since it became so */
	return observed || (p->watched && !p->unread);
}

int64_t keep_watch_stale_due_mono_ms(const struct keep_watch *w, const struct keep_watch_peer *p,
				     int64_t live_since)
{
	int64_t due =
	    keep_add_sat_ms(max64(p->since_mono_ms, live_since), keep_watch_stale_after_ms(&w->t));

	if (p->last_stale_mono_ms)
		due = max64(
		    due, keep_add_sat_ms(p->last_stale_mono_ms, keep_timing_write_every_ms(&w->t)));
	return due;
}

/* The stale candidates (§2) at now, after a pass or on a tick; rc is passed
 * through (or KEEP_ERR_NOMEM). */
static int stale_pass(struct keep_watch *w, int64_t now, bool self_valid, int64_t live_since,
		      int rc)
{
	size_t i;

	if (!self_valid || !w->self[0]) {
		/* not valid: judge nobody, and start every watch again */
		for (i = 0; i < w->n; i++) {
			w->peers[i].since_mono_ms = now;
			w->peers[i].last_stale_mono_ms = 0;
		}
		w->was_valid = false;
		return rc;
	}
	w->was_valid = true;
	for (i = 0; i < w->n; i++) {
		struct keep_watch_peer *p = &w->peers[i];
		struct keep_watch_event *e;

		if (!keep_watch_peer_judged(w, p, p->observed) ||
		    now < keep_watch_stale_due_mono_ms(w, p, live_since))
			continue;
		p->last_stale_mono_ms = now;
		e = add_event(w, KEEP_WEV_STALE, p);
		if (!e) {
			rc = KEEP_ERR_NOMEM;
			continue;
		}
		e->watch_since_mono_ms = max64(p->since_mono_ms, live_since);
		e->live_since_mono_ms = live_since > 0 ? live_since : 0;
		e->unchanged_ms = keep_sub_sat_ms(now, e->watch_since_mono_ms);
	}
	return rc;
}

int keep_watch_tick(struct keep_watch *w, int64_t now, bool self_valid, int64_t live_since)
{
	size_t i;

	w->nev = 0;
	for (i = 0; i < w->n; i++)
		w->peers[i].observed = false; /* a tick judges the watched peers only */
	return stale_pass(w, now, self_valid, live_since, 0);
}

void keep_watch_set_ring(struct keep_watch *w, int k)
{
	size_t i;

	w->ring_k = k < 0 ? 0 : k > KEEP_WATCH_RING_MAX ? KEEP_WATCH_RING_MAX : k;
	for (i = 0; i < w->n; i++)
		w->peers[i].watched = w->ring_k == 0;
}

/* A peer the ring counts: one that could be fenced (keep_watch_ring). */
static bool ring_member(const struct keep_watch *w, const struct keep_watch_peer *p)
{
	return p->readable && p->format == 3 && p->status == KEEP_STATUS_LIVE &&
	       strcmp(p->node, w->self) != 0;
}

size_t keep_watch_ring(struct keep_watch *w, const char **ids, size_t max)
{
	size_t i, start, out = 0;
	long at;
	int counted = 0;

	for (i = 0; i < w->n; i++) {
		struct keep_watch_peer *p = &w->peers[i];

		if (w->ring_k && !p->watched)
			p->unread = true; /* judged on time only once a pass looked at it */
		p->watched = w->ring_k == 0;
	}
	if (w->ring_k == 0 || w->n == 0)
		return 0;
	at = find_peer(w, w->self);
	start = at >= 0 ? (size_t)at + 1 : (size_t)(-at - 1);
	for (i = 0; i < w->n && counted < w->ring_k; i++) {
		struct keep_watch_peer *p = &w->peers[(start + i) % w->n];

		if (!ring_member(w, p))
			continue;
		p->watched = true;
		if (out < max)
			ids[out++] = p->node;
		if (!p->last_stale_mono_ms)
			counted++; /* a candidate now does not count: one more is watched */
	}
	return out;
}

int keep_watch_observe(struct keep_watch *w, const struct keep_watch_input *in, size_t n,
		       int64_t now, int64_t wall, bool self_valid, int64_t live_since)
{
	size_t i;
	int rc = 0;

	w->nev = 0;
	for (i = 0; i < w->n; i++) {
		w->peers[i].observed = false;
		w->peers[i].seen = false;
	}
	for (i = 0; i < n; i++) {
		int r = apply_input(w, &in[i], now, wall, false);

		if (r)
			rc = r;
	}
	for (i = 0; i < w->n; i++)
		w->peers[i].seen = true; /* nobody leaves on an observation */
	return stale_pass(w, now, self_valid, live_since, rc);
}

int64_t keep_watch_next_stale_mono_ms(const struct keep_watch *w, int64_t live_since)
{
	int64_t best = 0;
	size_t i;

	if (!w->self[0])
		return 0;
	for (i = 0; i < w->n; i++) {
		int64_t due;

		if (!keep_watch_peer_judged(w, &w->peers[i], false))
			continue;
		due = keep_watch_stale_due_mono_ms(w, &w->peers[i], live_since);
		if (!best || due < best)
			best = due;
	}
	return best;
}

/* ---- fence decisions ------------------------------------------------------- */

const char *keep_fence_verdict_name(enum keep_fence_verdict v)
{
	switch (v) {
	case KEEP_FV_FENCE:
		return "fence";
	case KEEP_FV_CREATE:
		return "create";
	case KEEP_FV_FENCED:
		return "fenced";
	case KEEP_FV_REWATCH:
		return "rewatch";
	case KEEP_FV_NOT_YET:
		return "not-yet";
	case KEEP_FV_ALIVE:
		return "alive";
	case KEEP_FV_ALREADY:
		return "already-fenced";
	case KEEP_FV_NOT_VALID:
		return "not-valid";
	case KEEP_FV_REFUSED:
		return "refused";
	case KEEP_FV_BAD_OBJECT:
		return "bad-object";
	case KEEP_FV_FAILED:
		return "failed";
	}
	return "failed";
}

static void verdict(struct keep_fence_decision *d, enum keep_fence_verdict v, const char *why)
{
	d->verdict = v;
	d->reason = why;
}

/* The fence written over a live object o: the instance, written_at and
 * heartbeat fields kept, state fenced, seq + 1 (the body always differs). */
static void make_fence(struct keep_fence_decision *d, const struct keep_node_obj *o, const char *by,
		       int64_t now_wall)
{
	d->obj = *o;
	d->obj.format = 3;
	d->obj.state = KEEP_NODE_FENCED;
	if (d->obj.seq < 0)
		d->obj.seq = 0;
	else if (d->obj.seq < INT64_MAX)
		d->obj.seq++;
	copy_str(d->obj.fenced_by, sizeof(d->obj.fenced_by), by);
	d->obj.fenced_at_ms = keep_date_written_ms(now_wall, KEEP_DATE_NO_FLOOR);
}

/* Common checks of a read reply: true when obj is a format-3 object
 * naming node; otherwise d holds the verdict. */
static bool read_usable(enum keep_outcome outcome, const struct keep_node_obj *obj, int derr,
			const char *node, const struct keep_timing *t,
			enum keep_fence_verdict on_old, struct keep_fence_decision *d)
{
	if (outcome == KEEP_STORE_NOT_FOUND) {
		verdict(d, KEEP_FV_REWATCH, "absent");
		return false;
	}
	if (outcome != KEEP_STORE_OK) {
		verdict(d, KEEP_FV_FAILED, keep_outcome_name(outcome));
		return false;
	}
	if (derr || !obj) {
		verdict(d, KEEP_FV_BAD_OBJECT, "unreadable");
		return false;
	}
	if (node && strcmp(obj->node, node) != 0) {
		verdict(d, KEEP_FV_BAD_OBJECT, "names another node");
		return false;
	}
	d->free_at_ms = keep_node_free_at_ms(obj, t);
	if (obj->format != 3) {
		d->free_at_ms = 0;
		verdict(d, on_old, "old-format");
		return false;
	}
	return true;
}

void keep_stale_of_event(const struct keep_watch_event *e, struct keep_stale *st)
{
	memset(st, 0, sizeof(*st));
	copy_str(st->node, sizeof(st->node), e->node);
	copy_str(st->instance, sizeof(st->instance), e->instance);
	st->written_at_ms = e->written_at_ms;
	st->live_since_mono_ms = e->live_since_mono_ms;
	st->watch_since_mono_ms = e->watch_since_mono_ms;
}

int64_t keep_fence_earliest_mono_ms(const struct keep_stale *st, const struct keep_fencer *me,
				    const struct keep_timing *t)
{
	return keep_add_sat_ms(max64(me->live_since_mono_ms, st->watch_since_mono_ms),
			       keep_watch_stale_after_ms(t));
}

bool keep_fence_peer_line_lapsed(const struct keep_stale *st, const struct keep_fencer *me)
{
	return (st->live_since_mono_ms > 0 && st->live_since_mono_ms != me->live_since_mono_ms) ||
	       (st->watch_since_mono_ms > 0 && st->watch_since_mono_ms < me->live_since_mono_ms);
}

bool keep_fence_peer_may(const struct keep_stale *st, const struct keep_fencer *me,
			 const struct keep_timing *t, struct keep_fence_decision *d)
{
	int64_t earliest;

	memset(d, 0, sizeof(*d));
	if (!me->valid) {
		verdict(d, KEEP_FV_NOT_VALID, "own lease not valid");
		return false;
	}
	if (me->live_since_mono_ms <= 0) {
		/* valid, but from when? nothing to count a watch from */
		verdict(d, KEEP_FV_NOT_VALID, "own live_since unknown");
		return false;
	}
	/* the line was produced under another live period of this node: it
	 * lapsed (and recovered) since, so that watch counts for nothing */
	if (keep_fence_peer_line_lapsed(st, me)) {
		verdict(d, KEEP_FV_REWATCH, "own-lapse");
		return false;
	}
	/* never before a full watch counted from our own live_since (a line
	 * that carries no watch start, or one that claims too much) */
	earliest = keep_fence_earliest_mono_ms(st, me, t);
	if (earliest == INT64_MAX || me->now_mono_ms < earliest) { /* saturated: never */
		verdict(d, KEEP_FV_REWATCH, "watch-too-short");
		return false;
	}
	return true;
}

/* The decision on the fresh read alone, once the fencer may act. */
static void decide_on_read(const struct keep_stale *st, enum keep_outcome outcome,
			   const struct keep_node_obj *obj, int derr, const struct keep_walls *now,
			   const struct keep_timing *t, const char *self,
			   struct keep_fence_decision *d)
{
	if (!read_usable(outcome, obj, derr, st->node, t, KEEP_FV_REWATCH, d))
		return;
	if (obj->state == KEEP_NODE_FENCED) {
		verdict(d, KEEP_FV_ALREADY, NULL);
		return;
	}
	if (obj->state == KEEP_NODE_RELEASED) {
		verdict(d, KEEP_FV_REWATCH, "released");
		return;
	}
	/* never on the listing or the watch: on this read alone */
	if (strcmp(obj->instance, st->instance) != 0 || obj->written_at_ms != st->written_at_ms) {
		verdict(d, KEEP_FV_REWATCH, "changed");
		return;
	}
	/* judged on the judging clock; dated on the wall clock (issue 23) */
	if (d->free_at_ms == INT64_MAX || now->judge_wall_ms < d->free_at_ms) { /* never */
		verdict(d, KEEP_FV_NOT_YET, NULL);
		return;
	}
	make_fence(d, obj, self, now->wall_ms);
	verdict(d, KEEP_FV_FENCE, NULL);
}

void keep_fence_peer_judge(const struct keep_stale *st, const struct keep_fencer *me,
			   enum keep_outcome outcome, const struct keep_node_obj *obj, int derr,
			   const struct keep_walls *now, const struct keep_timing *t,
			   const char *self, struct keep_fence_decision *d)
{
	if (!keep_fence_peer_may(st, me, t, d))
		return;
	decide_on_read(st, outcome, obj, derr, now, t, self, d);
}

void keep_fence_read_back(const struct keep_node_obj *sent, enum keep_outcome outcome,
			  const struct keep_node_obj *obj, int derr, const struct keep_timing *t,
			  struct keep_fence_decision *d)
{
	memset(d, 0, sizeof(*d));
	if (!read_usable(outcome, obj, derr, sent->node, t, KEEP_FV_REWATCH, d))
		return;
	switch (obj->state) {
	case KEEP_NODE_FENCED:
		if (strcmp(obj->instance, sent->instance) == 0 &&
		    obj->written_at_ms == sent->written_at_ms &&
		    strcmp(obj->fenced_by, sent->fenced_by) == 0 &&
		    obj->fenced_at_ms == sent->fenced_at_ms && obj->seq == sent->seq)
			verdict(d, KEEP_FV_FENCED, "landed");
		else
			verdict(d, KEEP_FV_ALREADY, NULL);
		return;
	case KEEP_NODE_RELEASED:
		verdict(d, KEEP_FV_REWATCH, "released");
		return;
	case KEEP_NODE_LIVE:
		/* the node changes written_at on every write (§1): the same
		 * instance and written_at means it did not write, and the
		 * fence did not land: another request refused it (409), or an
		 * ambiguous write never landed. Not `alive`. */
		if (strcmp(obj->instance, sent->instance) == 0 &&
		    obj->written_at_ms == sent->written_at_ms)
			verdict(d, KEEP_FV_FAILED, "unchanged");
		else
			verdict(d, KEEP_FV_ALIVE, "wrote");
		return;
	}
	verdict(d, KEEP_FV_BAD_OBJECT, "unreadable");
}

void keep_fence_operator(const char *node, enum keep_outcome outcome,
			 const struct keep_node_obj *obj, int derr, const struct keep_walls *now,
			 const struct keep_timing *t, struct keep_fence_decision *d)
{
	memset(d, 0, sizeof(*d));
	if (outcome == KEEP_STORE_NOT_FOUND) {
		/* §2: created with the operator's clock and no instance. The
		 * wall clock, never the judging clock (issue 23): records
		 * naming the node are free written_at + ttl + grace later, and
		 * its last write came before this moment on the operator's
		 * clock, within the skew bound */
		d->obj.format = 3;
		d->obj.state = KEEP_NODE_FENCED;
		copy_str(d->obj.instance, sizeof(d->obj.instance), "-");
		d->obj.written_at_ms = keep_date_written_ms(now->wall_ms, KEEP_DATE_NO_FLOOR);
		copy_str(d->obj.node, sizeof(d->obj.node), node);
		d->obj.seq = 0;
		copy_str(d->obj.fenced_by, sizeof(d->obj.fenced_by), "operator");
		d->obj.fenced_at_ms = keep_date_written_ms(now->wall_ms, KEEP_DATE_NO_FLOOR);
		d->free_at_ms = keep_add_sat_ms(now->wall_ms, keep_timing_takeover_ms(t));
		verdict(d, KEEP_FV_CREATE, "absent");
		return;
	}
	if (!read_usable(outcome, obj, derr, node, t, KEEP_FV_REFUSED, d))
		return;
	switch (obj->state) {
	case KEEP_NODE_FENCED:
		verdict(d, KEEP_FV_ALREADY, NULL);
		return;
	case KEEP_NODE_RELEASED:
		verdict(d, KEEP_FV_REFUSED, "released");
		return;
	case KEEP_NODE_LIVE:
		make_fence(d, obj, "operator", now->wall_ms);
		verdict(d, KEEP_FV_FENCE, NULL);
		return;
	}
	verdict(d, KEEP_FV_BAD_OBJECT, "unreadable");
}

void keep_fence_operator_absent(struct keep_fence_decision *d, bool create)
{
	if (d->verdict == KEEP_FV_CREATE && !create) {
		memset(&d->obj, 0, sizeof(d->obj));
		d->free_at_ms = 0;
		verdict(d, KEEP_FV_REFUSED, "absent");
	}
}

/* Edit distance of a and b (optimal string alignment: a swap of two
 * neighbours counts 1), both at most KEEP_NODE_ID_MAX bytes. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t rows[3][KEEP_NODE_ID_MAX + 1], *pp = rows[0], *p = rows[1], *c = rows[2], *t;
	size_t i, j;

	for (j = 0; j <= lb; j++)
		p[j] = j;
	for (i = 1; i <= la; i++) {
		c[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = p[j] + 1, x = c[j - 1] + 1;

			if (x < best)
				best = x;
			x = p[j - 1] + (a[i - 1] != b[j - 1]);
			if (x < best)
				best = x;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			c[j] = best;
		}
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb];
}

size_t keep_fence_closest(const char *node, const char *const *ids, size_t n, size_t *out, size_t k)
{
	size_t dist[16], got = 0, i, ln = strnlen(node, KEEP_NODE_ID_MAX + 1);

	if (k > sizeof(dist) / sizeof(dist[0]))
		k = sizeof(dist) / sizeof(dist[0]);
	if (ln > KEEP_NODE_ID_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		size_t li = strnlen(ids[i], KEEP_NODE_ID_MAX + 1), dd, pos;

		if (li > KEEP_NODE_ID_MAX)
			continue;
		dd = edit_distance(node, ln, ids[i], li);
		/* insertion into the sorted top k (stable: later ties go after) */
		for (pos = got; pos > 0 && dist[pos - 1] > dd; pos--)
			;
		if (pos >= k)
			continue;
		if (got < k)
			got++;
		memmove(&out[pos + 1], &out[pos], (got - 1 - pos) * sizeof(out[0]));
		memmove(&dist[pos + 1], &dist[pos], (got - 1 - pos) * sizeof(dist[0]));
		out[pos] = i;
		dist[pos] = dd;
	}
	return got;
}

/* ---- the free rule ------------------------------------------------------------ */

int64_t keep_node_free_at_ms(const struct keep_node_obj *o, const struct keep_timing *t)
{
	return keep_add_sat_ms(o->written_at_ms, keep_timing_takeover_ms(t));
}

enum keep_free keep_node_free(const char *node, const char *instance, bool present,
			      const struct keep_node_obj *obj, int64_t now_wall,
			      const struct keep_timing *t, int64_t *free_at_ms)
{
	int64_t at;

	if (free_at_ms)
		*free_at_ms = 0;
	/* absent, unreadable and old formats free nothing (§2) */
	if (!present || !obj || obj->format != 3 || !node || strcmp(obj->node, node) != 0)
		return KEEP_FREE_NO;
	if (obj->state == KEEP_NODE_LIVE)
		return instance && strcmp(obj->instance, instance) == 0 ? KEEP_FREE_NO
									: KEEP_FREE_YES;
	at = keep_node_free_at_ms(obj, t);
	if (free_at_ms)
		*free_at_ms = at;
	/* a saturated deadline (a written_at no decoder passes) is never reached */
	return at != INT64_MAX && now_wall >= at ? KEEP_FREE_YES : KEEP_FREE_LATER;
}

void keep_node_age(int64_t written_at_ms, int64_t now_wall_ms, int64_t *age_ms, int64_t *ahead_ms)
{
	int64_t d = keep_sub_sat_ms(now_wall_ms, written_at_ms);

	*age_ms = d > 0 ? d : 0;
	*ahead_ms = written_at_ms > now_wall_ms ? keep_sub_sat_ms(written_at_ms, now_wall_ms) : 0;
}
