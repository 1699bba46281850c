/* Unit tests: the ownership machines (lib/core/acquire.c, lib/core/resolver.c,
 * lib/core/mark.c; ADR 0020 §3, §4, §5, §6; issues 14 and 18), driven by a
 * small in-memory world: one node's state directory and one bucket. Each
 * test checks the order of the actions, not only the answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/exitcode.h"
#include "../../lib/core/acquire.h"
#include "../../lib/core/acqwait.h"
#include "../../lib/core/resolver.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define W0 1700000000000LL
#define MAXK 64

/* ---- the world ------------------------------------------------------------------- */

struct world {
	/* the state directory of node n1 */
	bool hold[MAXK];
	struct keep_hold h[MAXK];
	struct keep_pending pend[4 * MAXK];
	int npend;
	bool draining;
	/* the bucket */
	bool rec_exists[MAXK];
	struct keep_owner_rec rec[MAXK];
	int rec_ver[MAXK];
	bool mark_exists[MAXK];
	struct keep_lease_obj mark[MAXK];
	int mark_ver[MAXK];
	int vers;
	/* knobs */
	enum keep_sd hold_write_sd, hold_remove_sd, sync_sd;
	enum keep_outcome rec_write_out; /* OK: applied; else not applied, answered so */
	int race_key;			 /* MARK_READ of this key: another node's first
					    acquisition lands just before it */
	const char *rewrite_version;	 /* LIST: the listing's copy is answered, then the
					    stored entries get this version (a new write) */
	enum keep_cluster_view cluster;	 /* CLUSTER_READ's answer */
	const char *cluster_detail;	 /* ... and its warning ("" none) */
	int64_t lapses;
	int lease_code;		   /* the lease state's code (0: valid) */
	int write_sets_lease_code; /* a landed record write sets lease_code to this ... */
	bool write_lapses;	   /* ... or counts a lapse (the lease lapsed in flight) */
	int read_sets_lease_code;  /* a record read sets lease_code to this */
	/* owner-run's job of key job_key (its run lock): its generation, the
	 * signal that ends it (0: none; 1 SIGTERM, 2 SIGKILL), when it ended */
	int job_key;
	int64_t job_gen;
	int job_dies_of;
	bool job_alive;
	int job_terms, job_kills;
	int64_t job_end_at, *clock;
	int64_t first_write_at;
	/* runs/ as a LIST answers it */
	struct keep_run_entry runs[4];
	int nruns;
	bool lock_busy;	 /* LOCK: another process holds it past any bound */
	int64_t step_ms; /* resolve(): how long a lock wait or a store request
			    takes at most (its own bound cuts it); 0: 1 ms */
	int64_t bound;	 /* resolve(): no action may wait past it (0: none) */
	/* what was done */
	char log[4096];
	int rec_writes, outstanding, max_outstanding, syncs;
	int64_t last_timeout;
	int64_t lock_timeout; /* the last LOCK's bound */
	int over;	      /* actions whose bound ends past w->bound */
	int store_after;      /* store requests issued at or past w->bound */
};

static int key_index(const char *key)
{
	const char *p = strrchr(key, 'k');
	return p ? (int)strtol(p + 1, NULL, 10) : 0;
}

static void ver(char *out, int v)
{
	snprintf(out, KEEP_VERSION_MAX, "\"v%d\"", v);
}

static int pend_find(struct world *w, const struct keep_pending *p)
{
	for (int i = 0; i < w->npend; i++)
		if (keep_pending_same(&w->pend[i], p))
			return i;
	return -1;
}

static void logact(struct world *w, const struct keep_oact *a)
{
	size_t n = strlen(w->log);

	snprintf(w->log + n, sizeof(w->log) - n, "%s%s", n ? " " : "", keep_oact_name(a->kind));
}

/* Perform a on w (every action completes at once). */
static void perform(struct world *w, const struct keep_oact *a, struct keep_oreply *r)
{
	int k = key_index(a->key), i;
	char v[KEEP_VERSION_MAX];

	memset(r, 0, sizeof(*r));
	logact(w, a);
	switch (a->kind) {
	case KEEP_OACT_LOCK:
		w->lock_timeout = a->timeout_ms;
		if (w->lock_busy) {
			r->failed = true;
			r->err = ETIMEDOUT;
		}
		break;
	case KEEP_OACT_LEASE:
		r->lease.code = w->lease_code;
		snprintf(r->lease.instance, sizeof(r->lease.instance), "%s", IA);
		r->lease.lapses = w->lapses;
		r->lease.draining = w->draining;
		break;
	case KEEP_OACT_HOLD_READ:
		r->hold_rc = w->hold[k] ? 0 : 1;
		r->hold = w->h[k];
		break;
	case KEEP_OACT_HOLD_WRITE:
		r->sd = w->hold_write_sd;
		if (r->sd != KEEP_SD_UNCHANGED) {
			w->hold[k] = true;
			w->h[k] = a->hold;
		}
		break;
	case KEEP_OACT_HOLD_REMOVE:
		r->sd = w->hold_remove_sd;
		if (r->sd != KEEP_SD_UNCHANGED)
			w->hold[k] = false;
		break;
	case KEEP_OACT_HOLDS_SYNC:
		w->syncs++;
		r->sd = w->sync_sd;
		break;
	case KEEP_OACT_PEND_READ:
		i = pend_find(w, &a->pend);
		r->exists = i >= 0;
		if (i >= 0)
			r->pend_now = w->pend[i];
		break;
	case KEEP_OACT_PEND_WRITE:
		i = pend_find(w, &a->pend);
		if (i < 0)
			i = w->npend++;
		w->pend[i] = a->pend;
		break;
	case KEEP_OACT_PEND_REMOVE:
		i = pend_find(w, &a->pend);
		if (i >= 0)
			w->pend[i] = w->pend[--w->npend];
		break;
	case KEEP_OACT_DRAIN_MARK:
		w->draining = true;
		break;
	case KEEP_OACT_CLUSTER_READ:
		r->outcome = KEEP_STORE_OK;
		r->cluster = w->cluster;
		snprintf(r->detail, sizeof(r->detail), "%s",
			 w->cluster_detail ? w->cluster_detail : "");
		break;
	case KEEP_OACT_LIST: {
		static struct keep_hold hs[MAXK];
		size_t n = 0;

		for (i = 0; i < MAXK; i++)
			if (w->hold[i])
				hs[n++] = w->h[i];
		static struct keep_pending ps[4 * MAXK];

		r->holds = hs;
		r->nholds = n;
		memcpy(ps, w->pend, (size_t)w->npend * sizeof(ps[0]));
		r->pend = ps;
		r->npend = (size_t)w->npend;
		r->runs = w->runs;
		r->nruns = (size_t)w->nruns;
		if (w->rewrite_version)
			for (i = 0; i < w->npend; i++)
				snprintf(w->pend[i].version, sizeof(w->pend[i].version), "%s",
					 w->rewrite_version);
		break;
	}
	case KEEP_OACT_REC_READ:
		if (w->read_sets_lease_code)
			w->lease_code = w->read_sets_lease_code;
		r->outcome = w->rec_exists[k] ? KEEP_STORE_OK : KEEP_STORE_NOT_FOUND;
		r->rec = w->rec[k];
		ver(r->version, w->rec_ver[k]);
		break;
	case KEEP_OACT_REC_WRITE:
		w->rec_writes++;
		w->last_timeout = a->timeout_ms;
		ver(v, w->rec_ver[k]);
		if ((a->cond == KEEP_COND_IF_NONE_MATCH && w->rec_exists[k]) ||
		    (a->cond == KEEP_COND_IF_MATCH &&
		     (!w->rec_exists[k] || strcmp(v, a->if_match) != 0))) {
			r->outcome = KEEP_STORE_CONFLICT;
			break;
		}
		r->outcome = w->rec_write_out;
		if (r->outcome != KEEP_STORE_OK)
			break;
		w->rec_exists[k] = true;
		w->rec[k] = a->rec;
		w->rec_ver[k] = ++w->vers;
		ver(r->version, w->rec_ver[k]);
		if (w->write_sets_lease_code)
			w->lease_code = w->write_sets_lease_code;
		if (w->write_lapses)
			w->lapses++;
		break;
	case KEEP_OACT_MARK_READ:
		if (w->race_key == k) {
			w->race_key = 0;
			w->rec_exists[k] = true;
			keep_owner_rec_held(&w->rec[k], "n2", "fedcba9876543210fedcba9876543210",
					    1);
			w->rec_ver[k] = ++w->vers;
			w->mark_exists[k] = true;
			memset(&w->mark[k], 0, sizeof(w->mark[k]));
			w->mark[k].format = 2;
			w->mark[k].created = 1;
			w->mark_ver[k] = ++w->vers;
		}
		r->outcome = w->mark_exists[k] ? KEEP_STORE_OK : KEEP_STORE_NOT_FOUND;
		r->lobj = w->mark[k];
		ver(r->version, w->mark_ver[k]);
		break;
	case KEEP_OACT_MARK_WRITE:
		w->mark_exists[k] = true;
		w->mark[k] = a->lobj;
		w->mark_ver[k] = ++w->vers;
		r->outcome = KEEP_STORE_OK;
		ver(r->version, w->mark_ver[k]);
		break;
	case KEEP_OACT_KEYS_MAX:
		r->outcome = KEEP_STORE_OK;
		break;
	case KEEP_OACT_RUN_PROBE:
		r->run.held = k == w->job_key && w->job_alive;
		r->run.generation = r->run.held ? w->job_gen : 0;
		r->run.kill_after_ms = r->run.held ? 300 : -1;
		break;
	case KEEP_OACT_RUN_SIGNAL:
		if (k != w->job_key || !w->job_alive)
			break;
		r->npids = 2;
		r->pid = 4242;
		if (a->sig == KEEP_JOBSTOP_TERM)
			w->job_terms++;
		else
			w->job_kills++;
		if (w->job_dies_of && (int)a->sig + 1 >= w->job_dies_of) {
			w->job_alive = false;
			w->job_end_at = w->clock ? *w->clock : 0;
		}
		break;
	default:
		break;
	}
	if (a->kind == KEEP_OACT_REC_WRITE && !w->first_write_at)
		w->first_write_at = w->clock ? *w->clock : 1;
}

static void timing(struct keep_timing *t)
{
	t->ttl_ms = 3000;
	t->grace_ms = 1500;
	t->safety_ms = 600;
	t->max_skew_ms = 300;
	t->period_ms = 1000;
}

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->hold_write_sd = KEEP_SD_DURABLE;
	w->hold_remove_sd = KEEP_SD_DURABLE;
	w->sync_sd = KEEP_SD_DURABLE;
	w->rec_write_out = KEEP_STORE_OK;
}

static void acquire(struct world *w, const char *key, struct keep_acquire *sm)
{
	struct keep_timing t;
	struct keep_oact a;
	struct keep_oreply r;

	timing(&t);
	w->log[0] = '\0';
	keep_acquire_init(sm, "n1", key, &t, 1000);
	for (int i = 0; i < 100; i++) {
		keep_acquire_next(sm, 1000, W0, &a);
		if (a.kind == KEEP_OACT_DONE)
			return;
		perform(w, &a, &r);
		keep_acquire_on_reply(sm, 1000, W0, &r);
	}
	CHECK(!"the acquisition did not end");
}

/* Run a resolver to DONE; replies are delayed so that several actions are
 * outstanding at once (the order of completion is the order of issue). */
static void resolve(struct world *w, struct keep_resolver *r, int64_t *now)
{
	struct keep_oact q[KEEP_RES_SLOTS + 1], a;
	struct keep_oreply rp;
	int nq = 0;

	w->log[0] = '\0';
	for (int steps = 0; steps < 100000; steps++) {
		keep_resolver_next(r, *now, W0 + *now, &a);
		if (a.kind == KEEP_OACT_DONE)
			return;
		if (a.kind == KEEP_OACT_WAIT) {
			*now = a.until_mono_ms;
			continue;
		}
		if (a.kind != KEEP_OACT_NONE) {
			bool store = a.kind == KEEP_OACT_REC_READ || a.kind == KEEP_OACT_REC_WRITE;

			if (w->bound && (store || a.kind == KEEP_OACT_LOCK) &&
			    (a.timeout_ms <= 0 || *now + a.timeout_ms > w->bound))
				w->over++;
			if (w->bound && store && *now >= w->bound)
				w->store_after++;
			q[nq++] = a;
			if (nq > w->max_outstanding)
				w->max_outstanding = nq;
			continue;
		}
		/* nothing more to hand out: complete the oldest */
		CHECK(nq > 0);
		if (!nq)
			return;
		perform(w, &q[0], &rp);
		/* step_ms: how long a lock wait or a store request takes (local
		 * actions: 1 ms), never longer than the action's own bound */
		if (w->step_ms && (q[0].kind == KEEP_OACT_LOCK || q[0].kind == KEEP_OACT_REC_READ ||
				   q[0].kind == KEEP_OACT_REC_WRITE))
			*now += q[0].timeout_ms > 0 && q[0].timeout_ms < w->step_ms
				    ? q[0].timeout_ms
				    : w->step_ms;
		else
			*now += 1;
		keep_resolver_on_reply(r, q[0].slot, *now, W0 + *now, &rp);
		memmove(q, q + 1, (size_t)--nq * sizeof(q[0]));
	}
	CHECK(!"the resolver did not end");
}

static void give_hold(struct world *w, int k, int64_t gen)
{
	char v[KEEP_VERSION_MAX];

	w->rec_exists[k] = true;
	keep_owner_rec_held(&w->rec[k], "n1", IA, gen);
	w->rec_ver[k] = ++w->vers;
	w->hold[k] = true;
	memset(&w->h[k], 0, sizeof(w->h[k]));
	snprintf(w->h[k].key, sizeof(w->h[k].key), "t/c/k%d", k);
	snprintf(w->h[k].instance, sizeof(w->h[k].instance), "%s", IA);
	w->h[k].generation = gen;
	ver(v, w->rec_ver[k]);
	snprintf(w->h[k].version, sizeof(w->h[k].version), "%s", v);
}

/* ---- the acquisition -------------------------------------------------------------- */

TEST(acquire_first_record_marks_then_confirms)
{
	struct world w;
	struct keep_acquire sm;

	world_init(&w);
	acquire(&w, "t/c/k1", &sm);
	CHECK_EQ_STR(
	    w.log, "lock lease hold-read rec-read cluster-read mark-read keys-max mark-write lease "
		   "rec-write mark-write lease hold-write unlock");
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(sm.res.generation, 1);
	CHECK(sm.res.fresh);
	CHECK_EQ_INT(w.mark[1].created, 1);
	CHECK(w.hold[1]);
	/* the same again: the same grant, nothing written */
	acquire(&w, "t/c/k1", &sm);
	CHECK_EQ_STR(w.log, "lock lease hold-read pend-read rec-read lease unlock");
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK(!sm.res.fresh);
}

TEST(acquire_first_record_on_a_native_cluster_skips_the_marker)
{
	struct world w;
	struct keep_acquire sm;

	world_init(&w);
	w.cluster = KEEP_CLUSTER_NATIVE;
	acquire(&w, "t/c/k1", &sm);
	/* the store: the record read and its creation, nothing under leases/ */
	CHECK_EQ_STR(w.log, "lock lease hold-read rec-read cluster-read lease rec-write lease "
			    "hold-write unlock");
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(sm.res.generation, 1);
	CHECK(!w.mark_exists[1]);
	CHECK(w.hold[1]);
	/* not native (no cluster object, `upgraded`, garbled): the marker path,
	 * and a garbled object is named once */
	world_init(&w);
	w.cluster_detail = "the object 'cluster' is not a keep cluster object (x)";
	acquire(&w, "t/c/k2", &sm);
	CHECK(strstr(w.log, "rec-read cluster-read mark-read keys-max mark-write") != NULL);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(w.mark[2].created, 1);
	CHECK_EQ_INT(sm.nmsg, 1);
	CHECK(strstr(sm.msg[0], "not a keep cluster object") != NULL);
}

TEST(acquire_refuses_a_record_deleted_under_a_confirmed_marker)
{
	struct world w;
	struct keep_acquire sm;

	world_init(&w);
	acquire(&w, "t/c/k1", &sm);
	w.hold[1] = false;
	w.rec_exists[1] = false; /* deleted by hand */
	acquire(&w, "t/c/k1", &sm);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ERROR);
	CHECK_EQ_STR(sm.res.reason, "record-missing");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_BAD_OBJECT);
	CHECK(strstr(w.log, "rec-write") == NULL);
	/* an unconfirmed marker (a first acquisition stopped between its writes)
	 * seeds the same way, as ADR §6 says */
	w.mark[1].created = 0;
	w.mark[1].seed = 6;
	acquire(&w, "t/c/k1", &sm);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(sm.res.generation, 7);
	CHECK_EQ_INT(w.mark[1].created, 7);
	/* another node's first acquisition lands between our record read and
	 * our marker read: the record is read again, not taken for deleted */
	world_init(&w);
	w.race_key = 2;
	acquire(&w, "t/c/k2", &sm);
	CHECK(strstr(w.log, "rec-read cluster-read mark-read keys-max rec-read node-read") != NULL);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_HELD);
	CHECK_EQ_STR(sm.res.holder.node, "n2");
}

TEST(acquire_regrant_refused_while_its_release_is_pending)
{
	struct world w;
	struct keep_acquire sm;
	struct keep_pending p;

	world_init(&w);
	give_hold(&w, 2, 4);
	keep_pending_of_hold(&p, &w.h[2], W0);
	w.pend[w.npend++] = p;
	acquire(&w, "t/c/k2", &sm);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(sm.res.generation, 5);
	CHECK(sm.res.fresh);
	CHECK(strstr(w.log, "pend-read rec-read lease rec-write lease hold-write") != NULL);
}

/* issue 13: an answer is about the moment it is given. The lease is judged
 * again after the write's reply (before the hold is registered) and, for a
 * regrant, after the record read. */
TEST(acquire_rechecks_the_lease_after_the_write_and_on_a_regrant)
{
	struct world w;
	struct keep_acquire sm;
	char v[KEEP_VERSION_MAX];

	/* the lease lapsed (a run-out, a clock step) while the write was in
	 * flight: written, not held, its release pending; 14 */
	world_init(&w);
	give_hold(&w, 5, 3);
	w.hold[5] = false; /* the record names us, no hold: take it afresh */
	w.write_lapses = true;
	acquire(&w, "t/c/k5", &sm);
	CHECK(strstr(w.log, "rec-write lease pend-write unlock") != NULL);
	CHECK(strstr(w.log, "hold-write") == NULL);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_REFUSED);
	CHECK_EQ_STR(sm.res.reason, "lease-lapsed");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_RAN_OUT);
	CHECK(!w.hold[5]);
	CHECK_EQ_INT(w.rec[5].generation, 4);
	CHECK_EQ_INT(w.npend, 1);
	CHECK_EQ_INT(w.pend[0].kind, KEEP_PENDING_RELEASE);
	CHECK_EQ_INT(w.pend[0].generation, 4);
	ver(v, w.rec_ver[5]);
	CHECK_EQ_STR(w.pend[0].version, v);
	CHECK_EQ_STR(w.pend[0].instance, IA);
	/* lost meanwhile (fenced): the lease's own code */
	world_init(&w);
	w.write_sets_lease_code = KEEP_EXIT_FENCED;
	acquire(&w, "t/c/k6", &sm);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_REFUSED);
	CHECK_EQ_STR(sm.res.reason, "lease-lapsed");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_FENCED);
	CHECK(!w.hold[6]);
	CHECK_EQ_INT(w.npend, 1);
	/* a first record: the marker is confirmed first (the record exists) */
	CHECK(strstr(w.log, "rec-write mark-write lease pend-write unlock") != NULL);
	CHECK_EQ_INT(w.mark[6].created, 1);
	/* a regrant whose lease ran out after the record read: refused, the
	 * hold left as it is (owner-check refuses it as well), nothing written */
	world_init(&w);
	give_hold(&w, 7, 2);
	w.read_sets_lease_code = KEEP_EXIT_RAN_OUT;
	acquire(&w, "t/c/k7", &sm);
	CHECK_EQ_STR(w.log, "lock lease hold-read pend-read rec-read lease unlock");
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_REFUSED);
	CHECK_EQ_STR(sm.res.reason, "lease-not-valid");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_RAN_OUT);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(w.npend, 0);
	CHECK(w.hold[7]);
}

TEST(acquire_register_visible_is_held_unchanged_is_parked)
{
	struct world w;
	struct keep_acquire sm;

	world_init(&w);
	w.hold_write_sd = KEEP_SD_VISIBLE; /* renamed, the directory fsync failed */
	acquire(&w, "t/c/k3", &sm);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(w.npend, 0);
	CHECK(sm.nmsg >= 1);
	world_init(&w);
	w.hold_write_sd = KEEP_SD_UNCHANGED; /* not written */
	acquire(&w, "t/c/k3", &sm);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ERROR);
	CHECK_EQ_STR(sm.res.reason, "state-dir");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_TEMP);
	CHECK_EQ_INT(w.npend, 1);
	CHECK_EQ_INT(w.pend[0].kind, KEEP_PENDING_RELEASE);
	CHECK_EQ_INT(w.pend[0].generation, 1);
}

TEST(acquire_stale_hold_parked_before_the_read)
{
	struct world w;
	struct keep_acquire sm;

	world_init(&w);
	give_hold(&w, 4, 2);
	w.lapses = 1; /* a lapse since the hold was acquired */
	acquire(&w, "t/c/k4", &sm);
	CHECK(strstr(w.log, "hold-read pend-write hold-remove rec-read") != NULL);
	CHECK_EQ_INT(sm.res.kind, KEEP_AR_ACQUIRED);
	CHECK_EQ_INT(sm.res.generation, 3);
}

/* ---- the resolver ------------------------------------------------------------------ */

static void res_cfg(struct keep_resolver_cfg *c, enum keep_res_mode mode)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	timing(&c->t);
	c->timeout_ms = 1000;
	c->concurrency = KEEP_PENDING_CONCURRENCY;
}

TEST(release_stops_acting_first_and_never_sends_with_the_hold_left)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_res_event ev;
	int64_t now = 1000;
	bool error = false;

	world_init(&w);
	give_hold(&w, 5, 1);
	res_cfg(&c, KEEP_RES_RELEASE);
	snprintf(c.key, sizeof(c.key), "t/c/k5");
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_STR(w.log, "lock lease hold-read pend-write hold-remove run-probe rec-write "
			    "pend-remove unlock");
	CHECK_EQ_INT(keep_resolver_exit_code(&r), 0);
	CHECK(!w.rec[5].held);
	keep_resolver_release(&r);
	/* the unlink fails: nothing is sent, the entry stays, exit 111 */
	world_init(&w);
	give_hold(&w, 5, 1);
	w.hold_remove_sd = KEEP_SD_UNCHANGED;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_TEMP);
	CHECK_EQ_INT(w.npend, 1);
	while (keep_resolver_poll_event(&r, &ev))
		if (ev.kind == KEEP_REV_ERROR)
			error = true;
	CHECK(error);
	keep_resolver_release(&r);
	/* removed but not durable: nothing sent either */
	world_init(&w);
	give_hold(&w, 5, 1);
	w.hold_remove_sd = KEEP_SD_VISIBLE;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_TEMP);
	keep_resolver_release(&r);
}

TEST(pass_removes_a_hold_naming_the_release_then_syncs_before_sending)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_pending p;
	int64_t now = 1000;

	/* a pending release whose hold is still there (its removal failed) */
	world_init(&w);
	give_hold(&w, 6, 3);
	keep_pending_of_hold(&p, &w.h[6], W0);
	w.pend[w.npend++] = p;
	res_cfg(&c, KEEP_RES_PASS);
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK(strstr(w.log, "lock pend-read hold-read hold-remove run-probe rec-write pend-remove "
			    "unlock") != NULL);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), 0);
	keep_resolver_release(&r);
	/* no hold: the absence is made durable (fsync of holds/) first */
	world_init(&w);
	give_hold(&w, 6, 3);
	w.hold[6] = false;
	w.pend[w.npend++] = p;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK(strstr(w.log, "hold-read holds-sync run-probe rec-write") != NULL);
	keep_resolver_release(&r);
	/* the sync fails: nothing sent */
	world_init(&w);
	give_hold(&w, 6, 3);
	w.hold[6] = false;
	w.pend[w.npend++] = p;
	w.sync_sd = KEEP_SD_UNCHANGED;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	keep_resolver_release(&r);
}

TEST(pass_keeps_32_in_flight_shares_one_sync_and_stops_after_32_failures)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_pending p;
	int64_t now = 1000;
	int k;

	world_init(&w);
	for (k = 1; k <= 40; k++) {
		give_hold(&w, k, 1);
		w.hold[k] = false;
		keep_pending_of_hold(&p, &w.h[k], W0);
		w.pend[w.npend++] = p;
	}
	res_cfg(&c, KEEP_RES_PASS);
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.max_outstanding, KEEP_PENDING_CONCURRENCY);
	CHECK(w.syncs < 10); /* one fsync of holds/ covers every job waiting on it */
	CHECK_EQ_INT(w.rec_writes, 40);
	CHECK_EQ_INT(w.npend, 0);
	keep_resolver_release(&r);
	/* a bucket failing every write: 32 writes, then the pass stops */
	world_init(&w);
	for (k = 1; k <= 40; k++) {
		give_hold(&w, k, 1);
		w.hold[k] = false;
		keep_pending_of_hold(&p, &w.h[k], W0);
		w.pend[w.npend++] = p;
	}
	w.rec_write_out = KEEP_STORE_AMBIGUOUS;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, KEEP_PENDING_REFUSALS);
	CHECK_EQ_INT(r.left, 40);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	keep_resolver_release(&r);
}

/* FOLLOW: an entry whose retry failed (backoff) and then vanished from
 * pending/ (another process removed it) never makes a pass start at once:
 * every wait is for a time to come, one pass a write period. */
TEST(follow_backoff_of_a_vanished_entry_never_spins)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_oact a;
	struct keep_oreply rp;
	struct keep_pending p;
	int64_t now = 1000, end;
	int steps;

	world_init(&w);
	give_hold(&w, 3, 1);
	w.hold[3] = false;
	keep_pending_of_hold(&p, &w.h[3], W0);
	w.pend[w.npend++] = p;
	w.rec_write_out = KEEP_STORE_AMBIGUOUS;
	res_cfg(&c, KEEP_RES_FOLLOW);
	c.backoff = true;
	keep_resolver_init(&r, &c);
	end = now + 20000;
	for (steps = 0; steps < 100000 && now < end; steps++) {
		keep_resolver_next(&r, now, W0 + now, &a);
		if (a.kind == KEEP_OACT_WAIT) {
			CHECK(a.until_mono_ms > now);
			if (a.until_mono_ms <= now)
				break;
			now = a.until_mono_ms;
			continue;
		}
		CHECK(a.kind != KEEP_OACT_NONE && a.kind != KEEP_OACT_DONE);
		if (a.kind == KEEP_OACT_NONE || a.kind == KEEP_OACT_DONE)
			break;
		perform(&w, &a, &rp);
		now += 1;
		keep_resolver_on_reply(&r, a.slot, now, W0 + now, &rp);
		if (w.rec_writes == 1)
			w.npend = 0; /* after the failed write: the entry is removed elsewhere */
	}
	CHECK_EQ_INT(w.rec_writes, 1);
	CHECK(r.nbo <= 1);
	/* 20 s of a 1000 ms period: about 20 passes (a pass every write period) */
	CHECK(r.passes >= 10);
	CHECK(r.passes <= 25);
	keep_resolver_release(&r);
}

TEST(drain_parks_every_hold_and_keeps_its_deadline)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int64_t now = 1000;
	int k;

	world_init(&w);
	for (k = 1; k <= 10; k++)
		give_hold(&w, k, 2);
	res_cfg(&c, KEEP_RES_DRAIN);
	c.deadline_mono_ms = now + 5000;
	c.backoff = true;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK(w.draining);
	CHECK_EQ_INT(r.left, 0);
	CHECK_EQ_INT(w.rec_writes, 10);
	CHECK(w.last_timeout <= 1000);
	keep_resolver_release(&r);
	/* writes that never land: every hold still parked, writes bounded by the
	 * time left, done at the deadline */
	world_init(&w);
	for (k = 1; k <= 10; k++)
		give_hold(&w, k, 2);
	w.rec_write_out = KEEP_STORE_AMBIGUOUS;
	now = 1000;
	c.deadline_mono_ms = now + 300;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	for (k = 1; k <= 10; k++)
		CHECK(!w.hold[k]);
	CHECK_EQ_INT(w.npend, 10);
	CHECK_EQ_INT(r.left, 10);
	CHECK(now <= 1000 + 300 + 50);
	CHECK(w.last_timeout <= 300);
	keep_resolver_release(&r);
}

/* A stop signal does not cut a drain (it is what a clean stop waits for;
 * its deadline bounds it), and a release of one key runs one job at a
 * time whatever concurrency it is given. */
TEST(a_stop_never_cuts_a_drain_and_a_release_runs_alone)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int64_t now = 1000;
	int k;

	world_init(&w);
	for (k = 1; k <= 10; k++)
		give_hold(&w, k, 2);
	res_cfg(&c, KEEP_RES_DRAIN);
	c.deadline_mono_ms = now + 5000;
	c.backoff = true;
	keep_resolver_init(&r, &c);
	keep_resolver_stop(&r);
	CHECK(!r.stop);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(r.left, 0);
	CHECK_EQ_INT(w.rec_writes, 10); /* every hold parked */
	keep_resolver_release(&r);
	res_cfg(&c, KEEP_RES_RELEASE);
	c.concurrency = 32;
	keep_resolver_init(&r, &c);
	CHECK_EQ_INT(r.cfg.concurrency, 1);
	keep_resolver_stop(&r); /* a pass stops */
	CHECK(r.stop);
	keep_resolver_release(&r);
}

/* Issue 23 item 3: a deadline bounds everything a job waits on. */
TEST(release_bound_covers_the_lock_and_the_read_after_a_conflict)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_res_event ev;
	int64_t now = 1000;
	bool busy = false;

	/* the record moved on (its version is not the hold's: every release
	 * write is a conflict, then a read), and every action takes 150 ms:
	 * no lock wait, read or write ends past start + 1 s, none starts
	 * after it, and the hold ends parked */
	world_init(&w);
	give_hold(&w, 5, 1);
	w.rec_ver[5] = ++w.vers;
	w.step_ms = 150;
	w.bound = now + KEEP_RELEASE_TRIES_MS;
	res_cfg(&c, KEEP_RES_RELEASE);
	c.concurrency = 1;
	snprintf(c.key, sizeof(c.key), "t/c/k5");
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.lock_timeout, KEEP_RELEASE_TRIES_MS);
	CHECK_EQ_INT(w.over, 0);
	CHECK_EQ_INT(w.store_after, 0);
	CHECK(strstr(w.log, "rec-write rec-read") != NULL);
	CHECK(now <= 1000 + KEEP_RELEASE_TRIES_MS + 10);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	CHECK(!w.hold[5]);
	CHECK_EQ_INT(w.npend, 1);
	keep_resolver_release(&r);
	/* the lock is busy past the bound: nothing done, the hold acts on,
	 * `error key=K reason=lock-busy`, exit 111 */
	world_init(&w);
	give_hold(&w, 5, 1);
	w.lock_busy = true;
	now = 1000;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_STR(w.log, "lock");
	CHECK(w.hold[5]);
	CHECK_EQ_INT(w.npend, 0);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_TEMP);
	while (keep_resolver_poll_event(&r, &ev))
		if (ev.kind == KEEP_REV_ERROR && ev.reason && strcmp(ev.reason, "lock-busy") == 0)
			busy = true;
	CHECK(busy);
	keep_resolver_release(&r);
}

TEST(drain_deadline_covers_locks_and_reads)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int64_t now = 1000;
	int k;

	/* conflicts on every release, slow actions: the drain's locks and
	 * reads end by its deadline too, and nothing starts past it */
	world_init(&w);
	for (k = 1; k <= 6; k++) {
		give_hold(&w, k, 2);
		w.rec_ver[k] = ++w.vers;
	}
	w.step_ms = 120;
	res_cfg(&c, KEEP_RES_DRAIN);
	c.concurrency = 1; /* the world completes one action at a time */
	c.deadline_mono_ms = now + 700;
	c.backoff = true;
	w.bound = c.deadline_mono_ms;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.over, 0);
	CHECK_EQ_INT(w.store_after, 0);
	CHECK(now <= 1000 + 700 + 20);
	CHECK(r.left > 0);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	keep_resolver_release(&r);
	/* no deadline (a pass): the lock wait is bounded by one store timeout */
	world_init(&w);
	give_hold(&w, 3, 1);
	w.hold[3] = false;
	{
		struct keep_pending p;

		keep_pending_of_hold(&p, &w.h[3], W0);
		w.pend[w.npend++] = p;
	}
	res_cfg(&c, KEEP_RES_PASS);
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.lock_timeout, c.timeout_ms);
	keep_resolver_release(&r);
}

TEST(unresolved_acquire_released_once_landed_never_under_a_hold)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_pending u;
	int64_t now = 1000;

	world_init(&w);
	w.rec_exists[7] = true;
	keep_owner_rec_held(&w.rec[7], "n1", IA, 3);
	w.rec_ver[7] = ++w.vers;
	memset(&u, 0, sizeof(u));
	u.kind = KEEP_PENDING_ACQUIRE;
	snprintf(u.key, sizeof(u.key), "t/c/k7");
	snprintf(u.instance, sizeof(u.instance), "%s", IA);
	u.generation = 3;
	snprintf(u.version, sizeof(u.version), "-");
	w.pend[w.npend++] = u;
	res_cfg(&c, KEEP_RES_PASS);
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_STR(w.log, "lease list lock pend-read hold-read rec-read holds-sync run-probe "
			    "rec-write pend-remove unlock");
	CHECK(!w.rec[7].held);
	keep_resolver_release(&r);
	/* a hold of the key here: the entry ends, nothing written */
	world_init(&w);
	give_hold(&w, 7, 3);
	w.pend[w.npend++] = u;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(w.npend, 0);
	CHECK(w.rec[7].held);
	keep_resolver_release(&r);
	/* a hold of an earlier generation (it ended: its release pending) is not
	 * one for this entry: the landed generation is released */
	world_init(&w);
	give_hold(&w, 7, 2);
	w.rec_exists[7] = true;
	keep_owner_rec_held(&w.rec[7], "n1", IA, 3);
	w.rec_ver[7] = ++w.vers;
	w.pend[w.npend++] = u;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK(!w.rec[7].held);
	CHECK_EQ_INT(w.rec[7].generation, 3);
	keep_resolver_release(&r);
	/* the listing's copy is stale: a second attempt at the same generation
	 * wrote the entry again with its own condition, and the record is still
	 * at that condition: the entry is kept (the write may land), never
	 * ended on the stale copy */
	world_init(&w);
	w.rec_exists[7] = true;
	keep_owner_rec_nobody(&w.rec[7], 2);
	w.rec_ver[7] = 42;
	snprintf(u.version, sizeof(u.version), "\"v41\"");
	w.pend[w.npend++] = u;
	w.rewrite_version = "\"v42\"";
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.npend, 1);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(r.left, 1);
	keep_resolver_release(&r);
}

/* ---- the key's job (issue 24) ------------------------------------------------------- */

/* A job of the key holds its run lock (owner-run died, its worker runs
 * on): the release stops it first, SIGTERM then SIGKILL after the lock
 * file's kill_after_ms, and is sent only once the lock is free. */
TEST(release_stops_the_keys_job_first)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_res_event ev;
	int64_t now = 1000;
	bool pending = false;

	/* the job ignores SIGTERM: SIGKILL 300 ms later ends it, then the write */
	world_init(&w);
	give_hold(&w, 5, 2);
	w.job_key = 5;
	w.job_gen = 2;
	w.job_alive = true;
	w.job_dies_of = 2;
	w.clock = &now;
	res_cfg(&c, KEEP_RES_RELEASE);
	snprintf(c.key, sizeof(c.key), "t/c/k5");
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.job_terms, 1);
	CHECK_EQ_INT(w.job_kills, 1);
	CHECK(!w.job_alive);
	CHECK(w.first_write_at > w.job_end_at);
	CHECK(w.job_end_at - 1000 >= 300);
	CHECK(!w.rec[5].held);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), 0);
	CHECK(strstr(w.log, "hold-remove run-probe run-signal run-probe") != NULL);
	keep_resolver_release(&r);

	/* a job of a LATER generation is another grant's: not stopped, the
	 * release of the earlier one goes (its If-Match cannot apply) */
	world_init(&w);
	give_hold(&w, 5, 2);
	w.job_key = 5;
	w.job_gen = 3;
	w.job_alive = true;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.job_terms + w.job_kills, 0);
	CHECK_EQ_INT(w.rec_writes, 1);
	keep_resolver_release(&r);

	/* an owner-run that has not started CMD (generation 0) is no job */
	world_init(&w);
	give_hold(&w, 5, 2);
	w.job_key = 5;
	w.job_gen = 0;
	w.job_alive = true;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.job_terms + w.job_kills, 0);
	CHECK_EQ_INT(w.rec_writes, 1);
	keep_resolver_release(&r);

	/* a job that outlives SIGKILL: the foreground release's 1 s bound
	 * passes, nothing is sent, the release stays pending (exit 20) */
	world_init(&w);
	give_hold(&w, 5, 2);
	w.job_key = 5;
	w.job_gen = 2;
	w.job_alive = true;
	keep_resolver_init(&r, &c);
	now = 1000;
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK_EQ_INT(w.job_kills, 1);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	CHECK_EQ_INT(w.npend, 1);
	CHECK(now - 1000 <= KEEP_RELEASE_TRIES_MS + 20);
	while (keep_resolver_poll_event(&r, &ev))
		pending = pending || ev.kind == KEEP_REV_PENDING;
	CHECK(pending);
	keep_resolver_release(&r);

	/* the resolver retries it (no bound but the exit wait): still not sent
	 * while the job lives; sent once it is gone */
	res_cfg(&c, KEEP_RES_PASS);
	keep_resolver_init(&r, &c);
	now = 5000;
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK(now - 5000 >= 300 + KEEP_JOBSTOP_EXIT_MS);
	CHECK_EQ_INT(r.left, 1);
	keep_resolver_release(&r);
	w.job_alive = false;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 1);
	CHECK_EQ_INT(r.left, 0);
	keep_resolver_release(&r);
}

/* A live hold whose owner-run died after starting CMD (its run lock names
 * the hold's generation and an owner-run that no longer runs): a pass
 * releases it, its job stopped first. A live owner-run's, or another
 * generation's, is left alone. */
TEST(pass_releases_the_hold_of_a_dead_owner_run)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int64_t now = 1000;

	world_init(&w);
	give_hold(&w, 8, 3);
	w.nruns = 1;
	snprintf(w.runs[0].key, sizeof(w.runs[0].key), "t/c/k8");
	w.runs[0].generation = 3;
	w.runs[0].owner_alive = true;
	res_cfg(&c, KEEP_RES_PASS);
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK(w.hold[8]);
	keep_resolver_release(&r);
	/* another generation's run: not this hold's */
	w.runs[0].owner_alive = false;
	w.runs[0].generation = 2;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK(w.hold[8]);
	keep_resolver_release(&r);
	/* its owner-run is gone: parked, its job stopped, released */
	w.runs[0].generation = 3;
	w.job_key = 8;
	w.job_gen = 3;
	w.job_alive = true;
	w.job_dies_of = 1; /* its worker ends at SIGTERM */
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK(!w.hold[8]);
	CHECK_EQ_INT(w.job_terms, 1);
	CHECK(!w.job_alive);
	CHECK_EQ_INT(w.rec_writes, 1);
	CHECK(!w.rec[8].held);
	CHECK_EQ_INT(r.left, 0);
	keep_resolver_release(&r);
}

/* The drain's deadline bounds the job's stop too: past it nothing starts
 * and nothing is sent. */
TEST(drain_bounds_the_job_stop)
{
	struct world w;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int64_t now = 1000;

	world_init(&w);
	give_hold(&w, 4, 1);
	w.job_key = 4;
	w.job_gen = 1;
	w.job_alive = true; /* never dies */
	res_cfg(&c, KEEP_RES_DRAIN);
	c.deadline_mono_ms = now + 1500;
	keep_resolver_init(&r, &c);
	resolve(&w, &r, &now);
	CHECK_EQ_INT(w.rec_writes, 0);
	CHECK(now <= 1000 + 1500 + 20);
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	CHECK(!w.hold[4]); /* parked: it stopped acting */
	keep_resolver_release(&r);
}

/* owner-run's --kill-after against safety_ms (keep_jobstop_kill_after_ms):
 * the default without one, the request up to safety_ms / 2, refused above;
 * and when a grant that holds must be checked again
 * (keep_owner_grant_recheck_ms): just past the validity deadline. */
TEST(owner_run_bounds)
{
	CHECK_EQ_INT(keep_jobstop_kill_after_ms(-1, 600), 300);
	CHECK_EQ_INT(keep_jobstop_kill_after_ms(-1, 6000), 1000);
	CHECK_EQ_INT(keep_jobstop_kill_after_ms(0, 600), 0);
	CHECK_EQ_INT(keep_jobstop_kill_after_ms(300, 600), 300);
	CHECK_EQ_INT(keep_jobstop_kill_after_ms(301, 600), -1);
	CHECK_EQ_INT(keep_jobstop_kill_after_ms(1000, 600), -1);
	CHECK_EQ_INT(keep_owner_grant_recheck_ms(5000), 5001);
	CHECK_EQ_INT(keep_owner_grant_recheck_ms(0), 0);
	CHECK_EQ_INT(keep_owner_grant_recheck_ms(-3), 0);
	CHECK_EQ_INT(keep_owner_grant_recheck_ms(INT64_MAX), INT64_MAX);
}

/* The schedule itself (lib/core/jobstop.c). */
TEST(jobstop_schedule)
{
	struct keep_jobstop js;
	struct keep_jobstop_step st;

	/* free at once */
	keep_jobstop_init(&js, 500, 0);
	keep_jobstop_next(&js, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_PROBE);
	keep_jobstop_on_probe(&js, 1, false, -1, 0);
	keep_jobstop_next(&js, 1, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_FREE);
	/* held: TERM at once, KILL at the file's kill_after, HELD after the exit bound */
	keep_jobstop_init(&js, 500, 0);
	keep_jobstop_next(&js, 0, &st);
	keep_jobstop_on_probe(&js, 0, true, 200, 3);
	keep_jobstop_next(&js, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_SIGNAL);
	CHECK_EQ_INT(st.sig, KEEP_JOBSTOP_TERM);
	keep_jobstop_on_signal(&js, 0, 2, 0, 77);
	keep_jobstop_next(&js, 5, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_WAIT);
	CHECK_EQ_INT(st.until_mono_ms, KEEP_JOBSTOP_POLL_MS);
	keep_jobstop_next(&js, 199, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_PROBE);
	keep_jobstop_on_probe(&js, 199, true, -1, 3);
	keep_jobstop_next(&js, 200, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_SIGNAL);
	CHECK_EQ_INT(st.sig, KEEP_JOBSTOP_KILL);
	keep_jobstop_on_signal(&js, 200, 1, 0, 78);
	keep_jobstop_next(&js, 200 + KEEP_JOBSTOP_EXIT_MS - 1, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_PROBE);
	keep_jobstop_on_probe(&js, 200 + KEEP_JOBSTOP_EXIT_MS - 1, true, -1, 3);
	keep_jobstop_next(&js, 200 + KEEP_JOBSTOP_EXIT_MS, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_HELD);
	CHECK_EQ_INT(js.pid, 78);
	CHECK(!js.cut);
	/* the caller's deadline cuts it */
	keep_jobstop_init(&js, 500, 100);
	keep_jobstop_next(&js, 0, &st);
	keep_jobstop_on_probe(&js, 0, true, -1, 3);
	keep_jobstop_next(&js, 0, &st);
	keep_jobstop_on_signal(&js, 0, 1, 0, 9);
	keep_jobstop_next(&js, 50, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_PROBE);
	keep_jobstop_on_probe(&js, 50, true, -1, 3);
	keep_jobstop_next(&js, 60, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_WAIT);
	CHECK(st.until_mono_ms <= 100);
	keep_jobstop_next(&js, 100, &st);
	CHECK_EQ_INT(st.kind, KEEP_JOBSTOP_HELD);
	CHECK(js.cut);
	/* what counts as a job */
	{
		struct keep_run_view v = {.held = true, .generation = 0};

		CHECK(!keep_run_is_job(&v));
		v.generation = -1;
		CHECK(keep_run_is_job(&v));
		v.generation = 4;
		CHECK(keep_run_is_job(&v));
		v.held = false;
		CHECK(!keep_run_is_job(&v));
	}
}

/* ---- the --wait schedule (lib/core/acqwait.c) ---------------------------------------- */

static struct keep_acquire_result held_by(const char *node, int64_t free_at)
{
	struct keep_acquire_result r;

	memset(&r, 0, sizeof(r));
	r.kind = KEEP_AR_HELD;
	r.exit_code = KEEP_EXIT_NO;
	keep_owner_rec_held(&r.holder, node, IA, 3);
	r.free_at_ms = free_at;
	return r;
}

/* Issue 23 item 4: the retry comes right after the free time on the clock
 * the acquisition judged it with (the judging wall clock), not on the raw
 * wall clock a forward step moved ahead. */
TEST(wait_retries_at_the_free_time_on_the_judging_clock)
{
	struct keep_acqwait w;
	struct keep_acqwait_step st;
	struct keep_acquire_result r = held_by("n2", 0);

	keep_acqwait_init(&w, 1000, 60000, 1000);
	/* live holder: one period, line once */
	keep_acqwait_after(&w, &r, 1000, W0, 7, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_RETRY);
	CHECK_EQ_INT(st.until_mono_ms, 2000);
	CHECK_EQ_INT(st.line, KEEP_ACQWAIT_LINE_WAITING);
	keep_acqwait_after(&w, &r, 2000, W0 + 1000, 7, &st);
	CHECK_EQ_INT(st.line, KEEP_ACQWAIT_LINE_NONE);
	/* fenced: free 400 ms ahead of the judging clock (which a 5 s forward
	 * step left 5 s behind the wall clock: the driver passes the judging
	 * clock, the retry is 401 ms away, not at once) */
	r = held_by("n2", W0 + 2000 + 400);
	keep_acqwait_after(&w, &r, 3000, W0 + 2000, 7, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_RETRY);
	CHECK_EQ_INT(st.until_mono_ms, 3401);
	CHECK_EQ_INT(st.line, KEEP_ACQWAIT_LINE_WAITING);
	/* a free time already passed and still held: a period */
	keep_acqwait_after(&w, &r, 3401, W0 + 2401, 7, &st);
	CHECK_EQ_INT(st.until_mono_ms, 4401);
	/* acquired: done */
	r.kind = KEEP_AR_ACQUIRED;
	keep_acqwait_after(&w, &r, 4401, W0, 7, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_DONE);
}

/* Issue 24 item 4: transient answers are waited through, backing off with
 * jitter up to a period, a line each; a definite one or the deadline ends
 * the wait. */
TEST(wait_backs_off_through_transient_answers_until_the_deadline)
{
	struct keep_acqwait w;
	struct keep_acqwait_step st;
	struct keep_acquire_result r;
	int64_t now = 1000, lo, hi;
	int i;

	memset(&r, 0, sizeof(r));
	r.kind = KEEP_AR_ERROR;
	r.exit_code = KEEP_EXIT_TEMP;
	r.reason = "store";
	keep_acqwait_init(&w, now, 10000, 1000);
	for (i = 0; i < 6; i++) {
		lo = (i == 0 ? 100 : i == 1 ? 200 : i == 2 ? 400 : i == 3 ? 800 : 1000) / 2;
		hi = lo * 2;
		keep_acqwait_after(&w, &r, now, W0, i % 2 ? 0 : UINT32_MAX, &st);
		CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_RETRY);
		CHECK_EQ_INT(st.line, KEEP_ACQWAIT_LINE_RETRYING);
		CHECK_EQ_STR(st.reason, "store");
		CHECK_EQ_INT(st.code, KEEP_EXIT_TEMP);
		CHECK(st.in_ms >= lo);
		CHECK(st.in_ms <= hi);
		now = st.until_mono_ms;
	}
	/* unknown, a lease that ran out, one not live yet: transient too */
	r.kind = KEEP_AR_UNKNOWN;
	r.exit_code = KEEP_EXIT_UNKNOWN;
	keep_acqwait_after(&w, &r, now, W0, 3, &st);
	CHECK_EQ_STR(st.reason, "unknown");
	r.kind = KEEP_AR_REFUSED;
	r.exit_code = KEEP_EXIT_RAN_OUT;
	r.reason = "lease-not-valid";
	CHECK(keep_acqwait_transient(&r));
	r.exit_code = KEEP_EXIT_NOT_LIVE;
	CHECK(keep_acqwait_transient(&r));
	/* definite: draining, a lost lease, a refusal, an unreadable record */
	r.reason = "draining";
	CHECK(!keep_acqwait_transient(&r));
	r.reason = "lease-not-valid";
	r.exit_code = KEEP_EXIT_FENCED;
	CHECK(!keep_acqwait_transient(&r));
	r.kind = KEEP_AR_ERROR;
	r.exit_code = KEEP_EXIT_NO;
	CHECK(!keep_acqwait_transient(&r));
	keep_acqwait_after(&w, &r, now, W0, 3, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_DONE);
	r.exit_code = KEEP_EXIT_BAD_OBJECT;
	CHECK(!keep_acqwait_transient(&r));
	/* a held answer resets the backoff */
	keep_acqwait_init(&w, 0, 10000, 1000);
	r.kind = KEEP_AR_ERROR;
	r.exit_code = KEEP_EXIT_TEMP;
	for (i = 0; i < 4; i++)
		keep_acqwait_after(&w, &r, 0, W0, 0, &st);
	CHECK_EQ_INT(w.errors, 4);
	r = held_by("n2", 0);
	keep_acqwait_after(&w, &r, 0, W0, 0, &st);
	CHECK_EQ_INT(w.errors, 0);
	/* the deadline: the last sleep ends at it, then the last answer */
	keep_acqwait_init(&w, 0, 1500, 1000);
	keep_acqwait_after(&w, &r, 800, W0, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_GIVE_UP);
	CHECK_EQ_INT(st.until_mono_ms, 1500);
	keep_acqwait_after(&w, &r, 1500, W0, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_DONE);
	/* no wait at all */
	keep_acqwait_init(&w, 0, 0, 1000);
	keep_acqwait_after(&w, &r, 0, W0, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_DONE);
	/* no bound */
	keep_acqwait_init(&w, 0, KEEP_ACQWAIT_FOREVER, 1000);
	keep_acqwait_after(&w, &r, INT64_C(1) << 50, W0, 0, &st);
	CHECK_EQ_INT(st.kind, KEEP_ACQWAIT_RETRY);
}

/* The drain's deadline: --wait-ms from now, ttl + grace without it,
 * saturating on the boot clock. */
TEST(drain_deadline_defaults_to_takeover_and_saturates)
{
	struct keep_timing t;

	memset(&t, 0, sizeof(t));
	timing(&t);
	CHECK_EQ_INT(keep_resolver_drain_deadline_ms(&t, 1000, 250), 1250);
	CHECK_EQ_INT(keep_resolver_drain_deadline_ms(&t, 1000, 0), 1000);
	CHECK_EQ_INT(keep_resolver_drain_deadline_ms(&t, 1000, -1), 1000 + 3000 + 1500);
	CHECK_EQ_INT(keep_resolver_drain_deadline_ms(&t, INT64_MAX - 10, 250), INT64_MAX);
}

int main(void)
{
	RUN(acquire_first_record_marks_then_confirms);
	RUN(acquire_first_record_on_a_native_cluster_skips_the_marker);
	RUN(acquire_refuses_a_record_deleted_under_a_confirmed_marker);
	RUN(acquire_regrant_refused_while_its_release_is_pending);
	RUN(acquire_rechecks_the_lease_after_the_write_and_on_a_regrant);
	RUN(acquire_register_visible_is_held_unchanged_is_parked);
	RUN(acquire_stale_hold_parked_before_the_read);
	RUN(release_stops_acting_first_and_never_sends_with_the_hold_left);
	RUN(pass_removes_a_hold_naming_the_release_then_syncs_before_sending);
	RUN(pass_keeps_32_in_flight_shares_one_sync_and_stops_after_32_failures);
	RUN(follow_backoff_of_a_vanished_entry_never_spins);
	RUN(drain_parks_every_hold_and_keeps_its_deadline);
	RUN(a_stop_never_cuts_a_drain_and_a_release_runs_alone);
	RUN(release_bound_covers_the_lock_and_the_read_after_a_conflict);
	RUN(drain_deadline_covers_locks_and_reads);
	RUN(unresolved_acquire_released_once_landed_never_under_a_hold);
	RUN(release_stops_the_keys_job_first);
	RUN(pass_releases_the_hold_of_a_dead_owner_run);
	RUN(drain_bounds_the_job_stop);
	RUN(owner_run_bounds);
	RUN(jobstop_schedule);
	RUN(wait_retries_at_the_free_time_on_the_judging_clock);
	RUN(wait_backs_off_through_transient_answers_until_the_deadline);
	RUN(drain_deadline_defaults_to_takeover_and_saturates);
	return unit_done();
}
