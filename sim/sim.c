/* keep-sim — the model: bucket, scheduler, nodes, checker. See sim.h and
 * docs/testing.md "Simulator".
 *
 * Time: one true simulated clock (ms, from 0). Every process has its own
 * wall and monotonic clocks derived from it (offset within max_skew / 2 of
 * the truth, so any two walls are within max_skew; a small rate drift,
 * shared by both clocks of a process). The node lease machine is the real
 * one (lib/core/lease.c), fed its process's clocks. The peer watch, the
 * peer and operator fence decisions and the free rule are the real ones
 * too (lib/core/fence.c). So is every ownership decision (lib/core/owner.c):
 * the acquisition on the record and on its holder's node, the read-back of
 * an unknown outcome, the end of a pending release, the resolution of an
 * unresolved acquire, the stale test, the backoff and the grant check that
 * says when a process acts as owner, driven in the order cmd/owner-acquire.c
 * and cmd/owner-release.c call them. The scheduling around them (the
 * per-actor lock, the resolver's turns, when holds end) is modelled here.
 *
 * The checker runs after every step against true time: never two
 * processes acting as owner of one actor; never one generation for two
 * holds; a record's generation never decreases; a process acts only
 * within ttl - safety of the send of the write its validity rests on and
 * never after its lease was lost. */
#include "sim.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/core/fence.h"
#include "../lib/core/lease.h"
#include "../lib/core/owner.h"
#include "../lib/core/timing.h"
#include "../lib/nodeobj.h"
#include "../lib/store/store.h"

#define MAX_NODES 4
#define MAX_ACTORS 4
#define MAX_PROCS 48
#define MAX_PEND 64
#define MAX_GENS 4096
#define MAX_REQS 4096 /* requests in flight (slots are reused; pointers stay put) */
#define VER_LEN KEEP_VERSION_MAX
#define WALL_EPOCH_MS INT64_C(1790000000000) /* true time 0 on the wall */

/* ---- PRNG: splitmix64 seeding xoshiro256** (never rand()) -------------- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t x = seed;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [lo, hi] (inclusive). */
static int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* True with probability pm / 1000. */
static bool rng_pm(struct rng *r, int pm)
{
	return (int)(rng_next(r) % 1000) < pm;
}

/* ---- the model's types ---------------------------------------------------- */

struct nslot { /* nodes/<id> in the bucket */
	bool exists;
	char ver[VER_LEN];
	struct keep_node_obj o;
};

struct rslot { /* owners/<actor> in the bucket (lib/ownerrec.h's struct) */
	bool exists;
	char ver[VER_LEN];
	struct keep_owner_rec r;
};

enum task { T_LEASE = 0, T_FG, T_BG, T_LIST, T_OP };

struct req {
	bool used;
	int refs; /* pending apply and reply events */
	int proc; /* -1: the operator */
	int task;
	bool write, is_node;
	int idx; /* node or actor */
	enum keep_cond cond;
	char if_match[VER_LEN];
	struct keep_node_obj nbody;
	struct keep_owner_rec rbody;
	int64_t t_send, deadline;
	bool lose_reply, applied;
	int64_t t_reply; /* when the reply (or the timeout) reaches the client */
	/* result, fixed at apply */
	enum keep_outcome out;
	char ver[VER_LEN];
	struct keep_node_obj nread;
	struct keep_owner_rec rread;
};

struct hold {
	bool on;
	int64_t gen;
	char ver[VER_LEN]; /* the acquire's version */
	int64_t epoch;	   /* the lease's lapse count when the acquire was sent */
	int64_t end_mono;  /* when this hold ends (hibernation) */
};

struct pend {
	uint64_t id; /* unique within the process */
	int actor;
	bool unresolved; /* an acquire of unknown outcome (gen tried); else a release */
	int64_t gen;
	char ver[VER_LEN];     /* release: If-Match this; unresolved: the write's If-Match ("" for
				* If-None-Match) */
	int64_t tried_at_wall; /* unresolved: when it was tried (wall) */
	int attempts;	       /* failed tries (keep_owner_backoff_ms) */
	int64_t next_mono;     /* not retried before (mono) */
};

enum fg_state {
	FG_IDLE = 0,
	FG_REC_READ,  /* owners/<a>, then keep_owner_acq_on_record */
	FG_NODE_READ, /* nodes/<holder>, then keep_owner_acq_on_node */
	FG_WRITE,     /* the record write */
	FG_READBACK,  /* the read-back, then keep_owner_readback */
	FG_RB_NODE,   /* nodes/<holder>, then keep_owner_readback_on_node */
	FG_RELEASE,   /* the release write */
	FG_REL_WAIT,  /* between tries of a foreground release (KEEP_RELEASE_TRIES_MS) */
	FG_REL_READ,  /* after a conflict, then keep_owner_pending_on_read */
};
enum bg_state { BG_IDLE = 0, BG_REL, BG_REL_READ, BG_UNRES_READ, BG_UNRES_REL };
enum ls_state { LS_IDLE = 0, LS_BODY, LS_FENCE_READ, LS_FENCE_HOLD, LS_FENCE_WRITE };

struct proc {
	bool alive;
	int node, no; /* node index; process number (trace names) */
	char inst[KEEP_INSTANCE_LEN + 1];
	struct keep_lease sm;
	int64_t wall_off, mono_base, drift_ppm;
	int64_t paused_until, cut_until;
	bool stopping, stop_sent;
	int64_t stop_by_mono;
	bool lost; /* the machine said LOST */
	struct hold hold[MAX_ACTORS];
	struct pend pend[MAX_PEND];
	int npend, bg_cursor;
	uint64_t pend_seq;
	bool lock_fg[MAX_ACTORS], lock_bg[MAX_ACTORS];
	/* foreground: acquisitions and releases, one at a time */
	int fg;
	int fg_actor;
	struct keep_acq_decision fg_d; /* lib/core/owner.c's decision on this acquisition */
	struct keep_rb_decision fg_rb; /* and on its read-back */
	char fg_rver[VER_LEN];	       /* release: the hold's acquire version */
	int64_t fg_gen, fg_epoch, fg_rel_deadline;
	/* background: the resolver of pending releases and unresolved acquires */
	int bg, bg_actor;
	bool bg_locked;
	uint64_t bg_entry; /* the entry's id */
	char bg_ver[VER_LEN];
	/* listing and peer fences */
	int ls, ls_cursor, ls_target, ls_fence_q;
	struct keep_watch kw; /* lib/core/fence.c's watch of the peers */
	bool kw_on;
	int ls_read[MAX_NODES]; /* this pass: 0 absent, 1 read, -1 read failed */
	struct keep_node_obj ls_obj[MAX_NODES];
	struct keep_stale ls_stale; /* the candidate being decided */
	char self_id[KEEP_NODE_ID_MAX + 1];
};

struct ev {
	int64_t t;
	uint64_t seq;
	int kind;
	int a;
	int64_t b;
};

enum ev_kind {
	E_APPLY = 0, /* a = request */
	E_REPLY,     /* a = request */
	E_WAKE,	     /* a = proc, b = task */
	E_CRASH,     /* a = node */
	E_RESTART,   /* a = node */
	E_TWIN,	     /* a = node */
	E_CUT,	     /* a = node, b = duration */
	E_PAUSE,     /* a = node, b = duration */
	E_OPFENCE,   /* a = node */
	E_STOP,	     /* a = node */
	E_SEND,	     /* a = request (the operator's, after its think time), b = timeout */
	E_END,
};

struct sim {
	struct rng rng;
	enum sim_broken broken;
	FILE *trace;
	struct sim_result *res;
	struct keep_timing t;
	int64_t now, end;
	int nnodes, nactors;
	/* scheduler knobs (per mille) */
	int pm_lost, pm_slow, pm_late, pm_refused, pm_slow_reply, pm_drop;
	int64_t op_wall_off;
	/* the bucket */
	struct nslot nodes[MAX_NODES];
	struct rslot recs[MAX_ACTORS];
	uint64_t ver_counter, ver_salt;
	/* processes */
	struct proc *procs;
	int nprocs;
	/* requests */
	struct req *reqs;
	int nreqs;
	/* events */
	struct ev *heap;
	int nheap, heap_alloc;
	uint64_t seq;
	/* checker */
	struct {
		int64_t gen;
		int proc;
	} gens[MAX_ACTORS][MAX_GENS];
	int ngens[MAX_ACTORS];
	bool stop;
};

/* ---- trace and violations ------------------------------------------------ */

__attribute__((format(printf, 2, 3))) static void tr(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->trace)
		return;
	fprintf(s->trace, "t=%09" PRId64 " ", s->now);
	va_start(ap, fmt);
	vfprintf(s->trace, fmt, ap);
	va_end(ap);
	fputc('\n', s->trace);
}

__attribute__((format(printf, 2, 3))) static void violation(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->res->violated)
		return;
	s->res->violated = true;
	s->res->at_ms = s->now;
	va_start(ap, fmt);
	vsnprintf(s->res->why, sizeof(s->res->why), fmt, ap);
	va_end(ap);
	tr(s, "VIOLATION %s", s->res->why);
	s->stop = true;
}

/* ---- clocks ----------------------------------------------------------------- */

static int64_t drifted(int64_t t, int64_t ppm)
{
	return t + (t * ppm) / 1000000;
}

static int64_t p_mono(const struct proc *p, int64_t t)
{
	return p->mono_base + drifted(t, p->drift_ppm);
}

static int64_t p_wall(const struct proc *p, int64_t t)
{
	return WALL_EPOCH_MS + p->wall_off + drifted(t, p->drift_ppm);
}

/* The true time at or after which p's monotonic clock reads mono. */
static int64_t p_true_at(const struct proc *p, int64_t now, int64_t mono)
{
	int64_t d = mono - p_mono(p, now);
	int64_t slack;

	if (d <= 0)
		return now;
	slack = (d * (p->drift_ppm < 0 ? -p->drift_ppm : p->drift_ppm)) / 1000000 + 1;
	return now + d + slack;
}

/* ---- events ----------------------------------------------------------------- */

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push_ev(struct sim *s, int64_t t, int kind, int a, int64_t b)
{
	struct ev e = {.t = t < s->now ? s->now : t, .seq = s->seq++, .kind = kind, .a = a, .b = b};
	int i;

	if (s->nheap == s->heap_alloc) {
		s->heap_alloc = s->heap_alloc ? 2 * s->heap_alloc : 1024;
		s->heap = realloc(s->heap, (size_t)s->heap_alloc * sizeof(*s->heap));
		if (!s->heap)
			abort();
	}
	i = s->nheap++;
	while (i > 0 && ev_less(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
}

static struct ev pop_ev(struct sim *s)
{
	struct ev top = s->heap[0], last = s->heap[--s->nheap];
	int i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && ev_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static void wake(struct sim *s, struct proc *p, int task, int64_t t)
{
	push_ev(s, t, E_WAKE, (int)(p - s->procs), task);
}

/* ---- names ------------------------------------------------------------------ */

static const char *tname(int task)
{
	static const char *n[] = {"lease", "fg", "bg", "list", "op"};
	return n[task];
}

static void pname(const struct sim *s, int proc, char *buf, size_t n)
{
	if (proc < 0)
		snprintf(buf, n, "operator");
	else
		snprintf(buf, n, "n%d.%d", s->procs[proc].node + 1, s->procs[proc].no);
}

/* ---- the bucket ------------------------------------------------------------- */

static void new_version(struct sim *s, char *out)
{
	/* opaque and never repeating within a run */
	s->ver_counter++;
	snprintf(out, VER_LEN, "\"%08" PRIx64 "-%" PRIx64 "\"",
		 (uint64_t)(s->ver_counter * UINT64_C(2654435761) ^ s->ver_salt) & 0xffffffffu,
		 s->ver_counter);
}

static enum keep_outcome cond_check(bool exists, const char *ver, enum keep_cond cond,
				    const char *if_match)
{
	if (cond == KEEP_COND_IF_NONE_MATCH && exists)
		return KEEP_STORE_CONFLICT;
	if (cond == KEEP_COND_IF_MATCH) {
		if (!exists)
			return KEEP_STORE_NOT_FOUND;
		if (strcmp(ver, if_match) != 0)
			return KEEP_STORE_CONFLICT;
	}
	return KEEP_STORE_OK;
}

static void check_record_write(struct sim *s, int actor, const struct keep_owner_rec *old,
			       bool existed, const struct keep_owner_rec *nw)
{
	if (existed && nw->generation < old->generation)
		violation(s, "generation decreased: owners/a%d from %" PRId64 " to %" PRId64,
			  actor + 1, old->generation, nw->generation);
}

/* Apply a request at the bucket, atomically, now. */
static void bucket_apply(struct sim *s, struct req *q)
{
	if (q->is_node) {
		struct nslot *n = &s->nodes[q->idx];
		if (!q->write) {
			q->out = n->exists ? KEEP_STORE_OK : KEEP_STORE_NOT_FOUND;
			if (n->exists) {
				memcpy(q->ver, n->ver, VER_LEN);
				q->nread = n->o;
			}
			return;
		}
		q->out = cond_check(n->exists, n->ver, q->cond, q->if_match);
		if (q->out != KEEP_STORE_OK)
			return;
		n->exists = true;
		n->o = q->nbody;
		new_version(s, n->ver);
		memcpy(q->ver, n->ver, VER_LEN);
		q->applied = true;
		if (q->nbody.state == KEEP_NODE_FENCED)
			s->res->fences++;
		return;
	} else {
		struct rslot *r = &s->recs[q->idx];
		if (!q->write) {
			q->out = r->exists ? KEEP_STORE_OK : KEEP_STORE_NOT_FOUND;
			if (r->exists) {
				memcpy(q->ver, r->ver, VER_LEN);
				q->rread = r->r;
			}
			return;
		}
		q->out = cond_check(r->exists, r->ver, q->cond, q->if_match);
		if (q->out != KEEP_STORE_OK)
			return;
		check_record_write(s, q->idx, &r->r, r->exists, &q->rbody);
		r->exists = true;
		r->r = q->rbody;
		new_version(s, r->ver);
		memcpy(q->ver, r->ver, VER_LEN);
		q->applied = true;
	}
}

static int new_req(struct sim *s)
{
	int i;

	for (i = 0; i < s->nreqs; i++)
		if (!s->reqs[i].used)
			goto found;
	if (s->nreqs == MAX_REQS) {
		fprintf(stderr, "keep-sim: fatal: more than %d requests in flight\n", MAX_REQS);
		abort();
	}
	i = s->nreqs++;
found:
	memset(&s->reqs[i], 0, sizeof(s->reqs[i]));
	s->reqs[i].used = true;
	return i;
}

static void unref(struct sim *s, struct req *q)
{
	if (--q->refs == 0)
		q->used = false;
}

static bool cut_at(const struct sim *s, int proc, int64_t t)
{
	return proc >= 0 && t < s->procs[proc].cut_until;
}

/* Send request qi now: the scheduler decides when it is applied (if ever)
 * and when (and whether) its reply comes back. */
static void send_req(struct sim *s, int qi, int64_t timeout_ms)
{
	struct req *q = &s->reqs[qi];
	int64_t ta, tr_;
	bool applies = true;

	q->t_send = s->now;
	q->deadline = s->now + timeout_ms;
	q->out = KEEP_STORE_AMBIGUOUS;
	if (cut_at(s, q->proc, s->now) || rng_pm(&s->rng, s->pm_refused / 2) ||
	    rng_pm(&s->rng, s->pm_drop)) { /* never reaches the bucket */
		applies = false;
		ta = s->now;
	} else if (rng_pm(&s->rng, s->pm_late)) {
		ta = s->now + rng_range(&s->rng, timeout_ms / 2, 2 * timeout_ms); /* applied late */
	} else if (rng_pm(&s->rng, s->pm_slow)) {
		ta = s->now + rng_range(&s->rng, 1, timeout_ms);
	} else {
		ta = s->now + rng_range(&s->rng, 1, 40);
	}
	tr_ = ta + (rng_pm(&s->rng, s->pm_slow_reply) ? rng_range(&s->rng, 1, timeout_ms)
						      : rng_range(&s->rng, 1, 40));
	q->lose_reply = !applies || rng_pm(&s->rng, s->pm_lost);
	if (applies) {
		q->refs++;
		push_ev(s, ta, E_APPLY, qi, 0);
	}
	q->t_reply = (q->lose_reply || tr_ > q->deadline) ? q->deadline : tr_;
	q->refs++;
	push_ev(s, q->t_reply, E_REPLY, qi, 0);
}

static void on_apply(struct sim *s, struct req *q)
{
	char who[32];

	if (cut_at(s, q->proc, s->now)) {
		q->lose_reply = true; /* never reached the bucket */
	} else {
		bucket_apply(s, q);
		if (s->trace) {
			pname(s, q->proc, who, sizeof(who));
			tr(s, "bucket %s %s%s%d from %s/%s -> %s %s", q->write ? "put" : "get",
			   q->is_node ? "nodes/n" : "owners/a", "", q->idx + 1, who, tname(q->task),
			   keep_outcome_name(q->out), q->ver);
		}
	}
}

/* The outcome the client sees. */
static enum keep_outcome seen_outcome(struct sim *s, struct req *q)
{
	if (q->lose_reply || s->now >= q->deadline || cut_at(s, q->proc, s->now))
		return KEEP_STORE_AMBIGUOUS;
	if (rng_pm(&s->rng, s->pm_refused / 2) && !q->applied)
		return KEEP_STORE_REFUSED;
	return q->out;
}

/* ---- processes -------------------------------------------------------------- */

static bool lease_valid(const struct sim *s, const struct proc *p)
{
	return keep_lease_valid(&p->sm, p_mono(p, s->now));
}

/* The hold's lease epoch as the grant check and the stale test are fed it:
 * trust-pre-lapse-write feeds the lease's current one (a perturbation). */
static int64_t epoch_fed(const struct sim *s, const struct proc *p, const struct hold *h)
{
	return s->broken == SIM_B_TRUST_PRE_LAPSE ? p->sm.lapses : h->epoch;
}

/* Acting as owner of a: alive, and lib/core/owner.c's grant check (what
 * owner-check asks) says ok for its hold, fed the lease machine's validity
 * and epoch. */
static bool acting(const struct sim *s, const struct proc *p, int a)
{
	const struct hold *h = &p->hold[a];
	struct keep_grant_input in;

	if (!p->alive)
		return false;
	memset(&in, 0, sizeof(in));
	in.have_hold = h->on;
	in.hold_instance = p->inst; /* a process holds only under its own instance */
	in.hold_generation = h->gen;
	in.hold_epoch = epoch_fed(s, p, h);
	in.lease_instance = p->inst;
	in.lease_valid = lease_valid(s, p);
	in.lease_lapses = p->sm.lapses;
	return keep_owner_check(&in, h->gen) == KEEP_GRANT_OK;
}

static void owner_self(const struct proc *p, struct keep_owner_self *self)
{
	self->node = p->self_id;
	self->instance = p->inst;
}

/* nodes/<id> of a record's holder: "nN" -> N - 1 (records only name the
 * simulated nodes). */
static int node_index(const struct sim *s, const char *id)
{
	int n = -1;

	if (id[0] == 'n' && id[1] >= '1' && id[1] <= '9' && !id[2])
		n = id[1] - '1';
	if (n < 0 || n >= s->nnodes)
		abort();
	return n;
}

static void add_pend(struct sim *s, struct proc *p, int a, bool unresolved, int64_t gen,
		     const char *ver)
{
	struct pend *e;

	if (p->npend == MAX_PEND) {
		tr(s, "pending set full: entry dropped (liveness only)");
		return;
	}
	e = &p->pend[p->npend++];
	memset(e, 0, sizeof(*e));
	e->id = ++p->pend_seq;
	e->actor = a;
	e->unresolved = unresolved;
	e->gen = gen;
	snprintf(e->ver, VER_LEN, "%s", ver ? ver : "");
	e->tried_at_wall = p_wall(p, s->now);
}

static int find_pend(const struct proc *p, uint64_t id)
{
	int i;

	for (i = 0; i < p->npend; i++)
		if (p->pend[i].id == id)
			return i;
	return -1;
}

static void del_pend(struct proc *p, int i)
{
	memmove(&p->pend[i], &p->pend[i + 1], (size_t)(p->npend - i - 1) * sizeof(p->pend[0]));
	p->npend--;
	if (p->bg_cursor > i)
		p->bg_cursor--;
}

/* A lapse: every hold ends at once into the pending releases (§1, §3): the
 * stale ones, by keep_owner_hold_stale as owner-release parks them (all of
 * them on a clean stop). */
static void holds_to_pending(struct sim *s, struct proc *p, bool all)
{
	int a;

	for (a = 0; a < s->nactors; a++) {
		if (!p->hold[a].on)
			continue;
		if (!all &&
		    !keep_owner_hold_stale(p->inst, p->hold[a].epoch, p->inst, p->sm.lapses))
			continue;
		add_pend(s, p, a, false, p->hold[a].gen, p->hold[a].ver);
		if (s->broken != SIM_B_TRUST_PRE_LAPSE)
			p->hold[a].on = false;
		tr(s, "n%d.%d hold a%d gen %" PRId64 " -> pending release", p->node + 1, p->no,
		   a + 1, p->hold[a].gen);
	}
}

static void drop_all(struct sim *s, struct proc *p)
{
	int a;

	for (a = 0; a < s->nactors; a++)
		p->hold[a].on = false;
	p->npend = 0;
}

static struct proc *start_proc(struct sim *s, int node, int64_t at);

static void proc_exit(struct sim *s, struct proc *p, const char *why)
{
	int i;
	bool other = false;

	if (!p->alive)
		return;
	p->alive = false;
	drop_all(s, p);
	tr(s, "n%d.%d exits (%s)", p->node + 1, p->no, why);
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].alive && s->procs[i].node == p->node)
			other = true;
	if (!other) /* a supervisor restarts it under the same id */
		push_ev(s, s->now + rng_range(&s->rng, 100, s->t.ttl_ms), E_RESTART, p->node, 0);
}

static void check_acting_backed(struct sim *s, const struct proc *p)
{
	int a;
	int64_t wall = p_wall(p, s->now);

	for (a = 0; a < s->nactors; a++) {
		if (!acting(s, p, a))
			continue;
		if (p->lost || p->sm.phase != KEEP_LEASE_LIVE)
			violation(s, "n%d.%d acts for a%d with its lease %s", p->node + 1, p->no,
				  a + 1, keep_lease_phase_name(p->sm.phase));
		else if (wall >= p->sm.written_at_ms + keep_timing_valid_for_ms(&s->t))
			violation(s,
				  "n%d.%d acts for a%d at wall %" PRId64 " past written_at %" PRId64
				  " + ttl - safety",
				  p->node + 1, p->no, a + 1, wall, p->sm.written_at_ms);
	}
}

/* Handle the machine's events: a run-out drops every hold into the pending
 * releases; a loss drops them all without releasing anything. */
static void drain_lease_events(struct sim *s, struct proc *p)
{
	struct keep_lease_event e;

	while (keep_lease_poll_event(&p->sm, &e)) {
		if (s->trace)
			tr(s, "n%d.%d lease event %s%s%s v=%s", p->node + 1, p->no,
			   keep_lease_event_name(e.kind), e.kind == KEEP_LEV_LOST ? " " : "",
			   e.kind == KEEP_LEV_LOST ? keep_lease_reason_name(e.reason) : "",
			   e.version);
		if (e.kind == KEEP_LEV_RAN_OUT || e.kind == KEEP_LEV_STOPPING)
			holds_to_pending(s, p, e.kind == KEEP_LEV_STOPPING);
		if (e.kind == KEEP_LEV_LOST && e.reason != KEEP_REASON_UNCONFIRMED) {
			p->lost = true;
			s->res->lost++;
			drop_all(s, p);
		}
	}
}

static void lease_step(struct sim *s, struct proc *p);

static int mk_req(struct sim *s, struct proc *p, int task, bool write, bool is_node, int idx)
{
	int qi = new_req(s);
	struct req *q = &s->reqs[qi];

	q->proc = p ? (int)(p - s->procs) : -1;
	q->task = task;
	q->write = write;
	q->is_node = is_node;
	q->idx = idx;
	return qi;
}

static void lease_step(struct sim *s, struct proc *p)
{
	struct keep_lease_action act;
	int64_t mono = p_mono(p, s->now), wall = p_wall(p, s->now);
	int qi;

	if (p->stopping && !p->stop_sent && (p->npend == 0 || mono >= p->stop_by_mono) &&
	    p->fg == FG_IDLE) {
		p->stop_sent = true;
		tr(s, "n%d.%d clean stop: lease locally invalid, writing released", p->node + 1,
		   p->no);
		keep_lease_stop(&p->sm, mono);
		drain_lease_events(s, p);
	}
	keep_lease_next(&p->sm, mono, wall, &act);
	drain_lease_events(s, p);
	switch (act.kind) {
	case KEEP_LACT_WAIT: {
		int64_t until = act.until_mono_ms;
		if (p->stopping && !p->stop_sent && until > mono + 200)
			until = mono + 200;
		wake(s, p, T_LEASE, p_true_at(p, s->now, until));
		return;
	}
	case KEEP_LACT_READ:
		qi = mk_req(s, p, T_LEASE, false, true, p->node);
		send_req(s, qi, act.timeout_ms);
		return;
	case KEEP_LACT_WRITE:
		qi = mk_req(s, p, T_LEASE, true, true, p->node);
		s->reqs[qi].cond = act.cond;
		snprintf(s->reqs[qi].if_match, VER_LEN, "%s", act.if_match);
		s->reqs[qi].nbody = act.obj;
		if (s->trace)
			tr(s, "n%d.%d lease put %s %s %s written_at=%" PRId64, p->node + 1, p->no,
			   act.cond == KEEP_COND_IF_MATCH ? "if-match" : "if-none-match",
			   act.if_match, keep_node_state_name(act.obj.state),
			   act.obj.written_at_ms);
		send_req(s, qi, act.timeout_ms);
		return;
	case KEEP_LACT_DONE:
		proc_exit(s, p, p->lost ? keep_lease_reason_name(p->sm.reason) : "stopped");
		return;
	}
}

static void lease_reply(struct sim *s, struct proc *p, struct req *q, enum keep_outcome out)
{
	int64_t mono = p_mono(p, s->now), wall = p_wall(p, s->now);

	if (q->write) {
		if (s->broken == SIM_B_VALIDITY_REPLY && out == KEEP_STORE_OK)
			p->sm.sent_mono_ms = mono; /* perturbation: validity from the reply */
		keep_lease_on_write(&p->sm, mono, out, out == KEEP_STORE_OK ? q->ver : "");
	} else {
		struct keep_node_obj o = q->nread;
		bool check = p->sm.phase == KEEP_LEASE_CHECK;
		if (s->broken == SIM_B_ADOPT_ANY && out == KEEP_STORE_OK && !check &&
		    p->sm.readback && o.format == 3 && o.state == KEEP_NODE_LIVE)
			memcpy(o.instance, p->inst, sizeof(o.instance)); /* perturbation */
		keep_lease_on_read(&p->sm, mono, wall, out, out == KEEP_STORE_OK ? q->ver : "",
				   out == KEEP_STORE_OK ? &o : NULL, 0);
		if (s->broken == SIM_B_NO_START_WAIT && check && p->sm.phase == KEEP_LEASE_CHECK &&
		    p->sm.have_base) {
			p->sm.check_deadline_mono_ms = mono; /* perturbation: no wait */
			p->sm.next_read_mono_ms = mono;
		}
	}
	if (s->trace)
		tr(s, "n%d.%d lease %s reply %s -> phase %s", p->node + 1, p->no,
		   q->write ? "put" : "get", keep_outcome_name(out),
		   keep_lease_phase_name(p->sm.phase));
	drain_lease_events(s, p);
	lease_step(s, p);
}

/* ---- ownership records: the foreground (acquire, release) --------------------- */

/* Every ownership decision below is lib/core/owner.c's, fed what the
 * simulated bucket answered and the process's own clocks, in the order
 * cmd/owner-acquire.c and cmd/owner-release.c call it. The scheduling
 * around it (the per-actor lock, the resolver, when a hold ends) is the
 * simulator's. */

static void register_hold(struct sim *s, struct proc *p, int a, int64_t gen, const char *ver,
			  int64_t epoch)
{
	struct hold *h = &p->hold[a];
	int i, pi = (int)(p - s->procs);

	for (i = 0; i < s->ngens[a]; i++)
		if (s->gens[a][i].gen == gen) {
			char who[32];
			pname(s, s->gens[a][i].proc, who, sizeof(who));
			violation(s, "generation %" PRId64 " of a%d held twice: by %s and n%d.%d",
				  gen, a + 1, who, p->node + 1, p->no);
			return;
		}
	if (s->ngens[a] < MAX_GENS) {
		s->gens[a][s->ngens[a]].gen = gen;
		s->gens[a][s->ngens[a]].proc = pi;
		s->ngens[a]++;
	}
	s->res->acquisitions++;
	h->on = true;
	h->gen = gen;
	snprintf(h->ver, VER_LEN, "%s", ver);
	h->epoch = epoch;
	h->end_mono = p_mono(p, s->now) + rng_range(&s->rng, 200, 3 * s->t.ttl_ms);
	tr(s, "n%d.%d holds a%d gen %" PRId64 " %s%s", p->node + 1, p->no, a + 1, gen, ver,
	   acting(s, p, a) ? "" : " (not valid: into pending)");
	if (!acting(s, p, a) && s->broken != SIM_B_TRUST_PRE_LAPSE) {
		/* acquired across a lapse (or after the lease went invalid): a lapse
		 * ends every hold, so this one goes to the pending releases */
		h->on = false;
		add_pend(s, p, a, false, gen, ver);
	}
}

static void fg_idle(struct sim *s, struct proc *p, int64_t lo, int64_t hi)
{
	if (p->fg_actor >= 0)
		p->lock_fg[p->fg_actor] = false;
	p->fg = FG_IDLE;
	p->fg_actor = -1;
	wake(s, p, T_FG, s->now + rng_range(&s->rng, lo, hi));
}

/* The write d decided, the lease checked valid right before it, in the
 * epoch the acquisition began in (owner-acquire's second lease check). */
static void fg_try_write(struct sim *s, struct proc *p)
{
	struct keep_acq_decision *d = &p->fg_d;
	struct req *q;
	int qi;

	if (!lease_valid(s, p) || p->stopping || p->sm.lapses != p->fg_epoch) {
		tr(s, "n%d.%d acquire a%d refused: lease not valid", p->node + 1, p->no,
		   p->fg_actor + 1);
		fg_idle(s, p, 50, 500);
		return;
	}
	if (s->broken == SIM_B_REUSE_GEN && !d->absent)
		d->next.generation = d->rec.generation; /* perturbation: owner.c's + 1 undone */
	p->fg_gen = d->next.generation;
	qi = mk_req(s, p, T_FG, true, false, p->fg_actor);
	q = &s->reqs[qi];
	q->cond = d->cond;
	snprintf(q->if_match, VER_LEN, "%s", d->cond == KEEP_COND_IF_MATCH ? d->if_match : "");
	q->rbody = d->next;
	p->fg = FG_WRITE;
	tr(s, "n%d.%d acquire a%d gen %" PRId64 " %s %s (%s)", p->node + 1, p->no, p->fg_actor + 1,
	   p->fg_gen, d->cond == KEEP_COND_IF_MATCH ? "if-match" : "if-none-match", q->if_match,
	   d->reason ? d->reason : "-");
	send_req(s, qi, keep_timing_attempt_timeout_ms(&s->t));
}

/* After keep_owner_acq_on_record (and _on_node): act on the verdict. */
static void fg_acq_decided(struct sim *s, struct proc *p)
{
	struct keep_acq_decision *d = &p->fg_d;
	struct hold *h = &p->hold[p->fg_actor];
	int a = p->fg_actor;

	if (d->verdict == KEEP_ACQ_READ_NODE) {
		/* the free rule: a read of nodes/<holder> issued after the record read */
		p->fg = FG_NODE_READ;
		send_req(s, mk_req(s, p, T_FG, false, true, node_index(s, d->rec.node)),
			 keep_timing_attempt_timeout_ms(&s->t));
		return;
	}
	if (h->on && d->verdict != KEEP_ACQ_SAME && d->verdict != KEEP_ACQ_FAILED) {
		/* owner-acquire: our hold no longer matches the record: stop acting
		 * (a failed read proves nothing changed: the hold stays) */
		h->on = false;
		tr(s, "n%d.%d hold a%d gen %" PRId64 " dropped (%s)", p->node + 1, p->no, a + 1,
		   h->gen, keep_acq_verdict_name(d->verdict));
	}
	switch (d->verdict) {
	case KEEP_ACQ_WRITE:
		fg_try_write(s, p);
		return;
	case KEEP_ACQ_SAME:
		tr(s, "n%d.%d acquire a%d: same hold gen %" PRId64, p->node + 1, p->no, a + 1,
		   h->gen);
		fg_idle(s, p, 50, 500);
		return;
	case KEEP_ACQ_HELD:
		tr(s, "n%d.%d acquire a%d: held by %s %.8s gen %" PRId64 " (%s)", p->node + 1,
		   p->no, a + 1, d->rec.node, d->rec.instance, d->rec.generation,
		   d->reason ? d->reason : "-");
		fg_idle(s, p, 100, 1000);
		return;
	default: /* failed (a read), bad record (never: the bucket stores structs) */
		fg_idle(s, p, 50, 500);
		return;
	}
}

/* After keep_owner_readback (and _on_node). */
static void fg_rb_decided(struct sim *s, struct proc *p)
{
	struct keep_rb_decision *rb = &p->fg_rb;
	int a = p->fg_actor;

	if (rb->verdict == KEEP_RB_READ_NODE) {
		p->fg = FG_RB_NODE;
		send_req(s, mk_req(s, p, T_FG, false, true, node_index(s, rb->rec.node)),
			 keep_timing_attempt_timeout_ms(&s->t));
		return;
	}
	switch (rb->verdict) {
	case KEEP_RB_OURS:
		register_hold(s, p, a, p->fg_gen, rb->version, p->fg_epoch);
		break;
	case KEEP_RB_LOST:
		tr(s, "n%d.%d acquire a%d lost the race to %s %.8s", p->node + 1, p->no, a + 1,
		   rb->rec.node, rb->rec.instance);
		break;
	default:
		add_pend(s, p, a, true, p->fg_gen,
			 p->fg_d.cond == KEEP_COND_IF_MATCH ? p->fg_d.if_match : "");
		tr(s, "n%d.%d acquire a%d gen %" PRId64 " unresolved", p->node + 1, p->no, a + 1,
		   p->fg_gen);
		break;
	}
	fg_idle(s, p, 1, 100); /* the request retries at once */
}

/* One try of a foreground release: the record naming nobody, generation
 * kept, If-Match the hold's acquire version, bounded by what is left of
 * KEEP_RELEASE_TRIES_MS (owner-release's release_key). */
static void fg_release_send(struct sim *s, struct proc *p)
{
	int a = p->fg_actor;
	int64_t left = p->fg_rel_deadline - p_mono(p, s->now);
	int64_t timeout = keep_timing_attempt_timeout_ms(&s->t);
	struct req *q;
	int qi;

	qi = mk_req(s, p, T_FG, true, false, a);
	q = &s->reqs[qi];
	q->cond = KEEP_COND_IF_MATCH;
	snprintf(q->if_match, VER_LEN, "%s", p->fg_rver);
	keep_owner_rec_nobody(&q->rbody, p->fg_gen);
	p->fg = FG_RELEASE;
	tr(s, "n%d.%d release a%d gen %" PRId64 " if-match %s", p->node + 1, p->no, a + 1,
	   p->fg_gen, p->fg_rver);
	send_req(s, qi, left < timeout ? left : timeout);
}

/* The release did not end: it becomes a pending release. */
static void fg_release_park(struct sim *s, struct proc *p)
{
	add_pend(s, p, p->fg_actor, false, p->fg_gen, p->fg_rver);
	tr(s, "n%d.%d release a%d gen %" PRId64 " pending", p->node + 1, p->no, p->fg_actor + 1,
	   p->fg_gen);
	fg_idle(s, p, 50, 500);
}

static void fg_release_retry(struct sim *s, struct proc *p)
{
	if (p->fg_rel_deadline - p_mono(p, s->now) <= 0 || !lease_valid(s, p)) {
		fg_release_park(s, p); /* paused while the lease is invalid */
		return;
	}
	fg_release_send(s, p);
}

static int pend_find_unresolved(const struct proc *p)
{
	int i;

	for (i = 0; i < p->npend; i++)
		if (p->pend[i].unresolved)
			return p->pend[i].actor;
	return -1;
}

static void fg_wake(struct sim *s, struct proc *p)
{
	int a, qi;
	int64_t mono = p_mono(p, s->now);
	struct hold *h;

	if (!lease_valid(s, p)) {
		fg_idle(s, p, 100, 1000);
		return;
	}
	/* hibernation (or a clean stop): release a hold whose time is up */
	for (a = 0; a < s->nactors; a++) {
		h = &p->hold[a];
		if (!h->on || (mono < h->end_mono && !p->stopping))
			continue;
		if (!acting(s, p, a))
			continue;
		h->on = false; /* stops acting before sending, whatever the reply */
		p->fg_actor = a;
		p->lock_fg[a] = true;
		p->fg_gen = h->gen;
		snprintf(p->fg_rver, VER_LEN, "%s", h->ver);
		p->fg_rel_deadline = mono + KEEP_RELEASE_TRIES_MS;
		fg_release_send(s, p);
		return;
	}
	if (p->stopping) {
		fg_idle(s, p, 100, 300);
		return;
	}
	a = pend_find_unresolved(p);
	if (a < 0 || rng_pm(&s->rng, 100))
		a = (int)rng_range(&s->rng, 0, s->nactors - 1);
	h = &p->hold[a];
	/* a held actor is in memory: now and then it is acquired again anyway
	 * (owner-acquire on a live hold: the same grant) */
	if ((h->on && rng_pm(&s->rng, 800)) ||
	    (p->lock_bg[a] && s->broken != SIM_B_NO_ACTOR_LOCK)) {
		fg_idle(s, p, 50, 600);
		return;
	}
	if (h->on && keep_owner_hold_stale(p->inst, epoch_fed(s, p, h), p->inst, p->sm.lapses)) {
		/* a lapse since: the hold is over; release it in the background */
		add_pend(s, p, a, false, h->gen, h->ver);
		h->on = false;
	}
	p->fg_actor = a;
	p->lock_fg[a] = true;
	p->fg_epoch = p->sm.lapses;
	p->fg = FG_REC_READ;
	qi = mk_req(s, p, T_FG, false, false, a);
	send_req(s, qi, keep_timing_attempt_timeout_ms(&s->t));
}

static void fg_reply(struct sim *s, struct proc *p, struct req *q, enum keep_outcome out)
{
	int a = p->fg_actor;
	int64_t wall = p_wall(p, s->now);
	struct keep_owner_self self;

	owner_self(p, &self);
	switch (p->fg) {
	case FG_REC_READ: {
		struct keep_owner_hold_view hv = {false, 0};
		const struct hold *h = &p->hold[a];
		if (h->on &&
		    !keep_owner_hold_stale(p->inst, epoch_fed(s, p, h), p->inst, p->sm.lapses)) {
			hv.live = true;
			hv.generation = h->gen;
		}
		/* §6 seeding is not modelled: the first generation is 1 */
		keep_owner_acq_on_record(&self, &hv, out, out == KEEP_STORE_OK ? q->ver : "",
					 out == KEEP_STORE_OK ? &q->rread : NULL, 0, 1, &p->fg_d);
		fg_acq_decided(s, p);
		return;
	}
	case FG_NODE_READ:
		keep_owner_acq_on_node(&self, out, out == KEEP_STORE_OK ? &q->nread : NULL, wall,
				       &s->t, &p->fg_d);
		if (p->fg_d.verdict == KEEP_ACQ_WRITE)
			tr(s, "n%d.%d a%d is free (nodes/n%d %s %.8s written_at=%" PRId64 ")",
			   p->node + 1, p->no, a + 1, q->idx + 1,
			   keep_node_state_name(q->nread.state), q->nread.instance,
			   q->nread.written_at_ms);
		fg_acq_decided(s, p);
		return;
	case FG_WRITE:
		if (out == KEEP_STORE_OK) {
			register_hold(s, p, a, p->fg_gen, q->ver, p->fg_epoch);
			fg_idle(s, p, 50, 500);
			return;
		}
		if (out == KEEP_STORE_REFUSED) { /* definite: nothing written */
			fg_idle(s, p, 50, 500);
			return;
		}
		/* no reply, a timeout, a conflict: read back once, under the lock */
		p->fg = FG_READBACK;
		send_req(s, mk_req(s, p, T_FG, false, false, a),
			 keep_timing_attempt_timeout_ms(&s->t));
		return;
	case FG_READBACK:
		keep_owner_readback(&self, p->fg_gen, out, out == KEEP_STORE_OK ? q->ver : "",
				    out == KEEP_STORE_OK ? &q->rread : NULL, 0, &p->fg_rb);
		fg_rb_decided(s, p);
		return;
	case FG_RB_NODE:
		keep_owner_readback_on_node(&self, out, out == KEEP_STORE_OK ? &q->nread : NULL,
					    wall, &s->t, &p->fg_rb);
		fg_rb_decided(s, p);
		return;
	case FG_RELEASE:
		if (out == KEEP_STORE_OK) {
			fg_idle(s, p, 50, 500);
			return;
		}
		if (out == KEEP_STORE_CONFLICT) { /* the read that decides whether it ends */
			p->fg = FG_REL_READ;
			send_req(s, mk_req(s, p, T_FG, false, false, a),
				 keep_timing_attempt_timeout_ms(&s->t));
			return;
		}
		/* refused, failed, unknown: tried again within KEEP_RELEASE_TRIES_MS */
		{
			int64_t left = p->fg_rel_deadline - p_mono(p, s->now);
			if (left <= 0) {
				fg_release_park(s, p);
				return;
			}
			p->fg = FG_REL_WAIT;
			wake(s, p, T_FG, s->now + (left < 100 ? left : 100));
		}
		return;
	case FG_REL_READ: {
		struct keep_pend_decision d;
		keep_owner_pending_on_read(p->inst, p->fg_gen, out,
					   out == KEEP_STORE_OK ? &q->rread : NULL, 0, &d);
		if (d.verdict == KEEP_PEND_END) {
			tr(s, "n%d.%d release a%d gen %" PRId64 " ended (%s)", p->node + 1, p->no,
			   a + 1, p->fg_gen, d.reason ? d.reason : "-");
			fg_idle(s, p, 50, 500);
			return;
		}
		fg_release_park(s, p);
		return;
	}
	default:
		return;
	}
}

/* ---- the resolver (background) ------------------------------------------------- */

static void bg_idle(struct sim *s, struct proc *p)
{
	if (p->bg_locked && p->bg_actor >= 0)
		p->lock_bg[p->bg_actor] = false;
	p->bg = BG_IDLE;
	p->bg_actor = -1;
	p->bg_locked = false;
	wake(s, p, T_BG, s->now + rng_range(&s->rng, 20, 300));
}

/* The entry is kept: retried after keep_owner_backoff_ms. */
static void bg_keep(struct sim *s, struct proc *p, struct pend *e)
{
	e->attempts++;
	e->next_mono = p_mono(p, s->now) + keep_owner_backoff_ms(e->attempts);
	bg_idle(s, p);
}

static void bg_release(struct sim *s, struct proc *p, int a, int64_t gen, const char *ver,
		       int state)
{
	int qi = mk_req(s, p, T_BG, true, false, a);
	struct req *q = &s->reqs[qi];

	q->cond = KEEP_COND_IF_MATCH;
	snprintf(q->if_match, VER_LEN, "%s", ver);
	keep_owner_rec_nobody(&q->rbody, gen);
	p->bg = state;
	send_req(s, qi, keep_timing_attempt_timeout_ms(&s->t));
}

static void bg_wake(struct sim *s, struct proc *p)
{
	int i, k;
	int64_t mono = p_mono(p, s->now);
	struct pend *e;

	if (!lease_valid(s, p) || !p->npend) { /* paused while the lease is invalid */
		bg_idle(s, p);
		return;
	}
	for (k = 0; k < p->npend; k++) {
		i = (p->bg_cursor + k) % p->npend;
		e = &p->pend[i];
		if (mono < e->next_mono)
			continue;
		/* the lock orders acquisitions and the resolution of unresolved
		 * acquires (§3); a pending release's retry is the same
		 * conditional write and takes none (owner-release) */
		if (e->unresolved && p->lock_fg[e->actor] && s->broken != SIM_B_NO_ACTOR_LOCK)
			continue;
		p->bg_cursor = (i + 1) % p->npend;
		p->bg_entry = e->id;
		p->bg_actor = e->actor;
		if (e->unresolved) {
			p->bg_locked = true;
			p->lock_bg[e->actor] = true;
			p->bg = BG_UNRES_READ;
			send_req(s, mk_req(s, p, T_BG, false, false, e->actor),
				 keep_timing_attempt_timeout_ms(&s->t));
		} else {
			tr(s, "n%d.%d pending release a%d gen %" PRId64 " if-match %s", p->node + 1,
			   p->no, e->actor + 1, e->gen, e->ver);
			bg_release(s, p, e->actor, e->gen, e->ver, BG_REL);
		}
		return;
	}
	bg_idle(s, p);
}

static void bg_reply(struct sim *s, struct proc *p, struct req *q, enum keep_outcome out)
{
	int i = find_pend(p, p->bg_entry), a = p->bg_actor;
	struct keep_pend_decision d;
	struct pend *e;

	if (i < 0) { /* the set was dropped */
		bg_idle(s, p);
		return;
	}
	e = &p->pend[i];
	switch (p->bg) {
	case BG_REL:
		if (out == KEEP_STORE_OK) {
			tr(s, "n%d.%d pending release a%d gen %" PRId64 " landed", p->node + 1,
			   p->no, a + 1, e->gen);
			del_pend(p, i);
			bg_idle(s, p);
			return;
		}
		if (out != KEEP_STORE_CONFLICT) {
			bg_keep(s, p, e);
			return;
		}
		p->bg = BG_REL_READ;
		send_req(s, mk_req(s, p, T_BG, false, false, a),
			 keep_timing_attempt_timeout_ms(&s->t));
		return;
	case BG_REL_READ:
		keep_owner_pending_on_read(p->inst, e->gen, out,
					   out == KEEP_STORE_OK ? &q->rread : NULL, 0, &d);
		if (d.verdict != KEEP_PEND_END) {
			bg_keep(s, p, e);
			return;
		}
		tr(s, "n%d.%d pending release a%d gen %" PRId64 " ended (%s)", p->node + 1, p->no,
		   a + 1, e->gen, d.reason ? d.reason : "-");
		del_pend(p, i);
		bg_idle(s, p);
		return;
	case BG_UNRES_READ:
		keep_owner_resolve_on_read(p->inst, e->gen, e->ver, true, p->hold[a].on, out,
					   out == KEEP_STORE_OK ? q->ver : "",
					   out == KEEP_STORE_OK ? &q->rread : NULL, 0, &d);
		switch (d.verdict) {
		case KEEP_PEND_RELEASE:
			snprintf(p->bg_ver, VER_LEN, "%s", d.version);
			tr(s, "n%d.%d resolver: a%d gen %" PRId64 " landed, releasing if-match %s",
			   p->node + 1, p->no, a + 1, e->gen, d.version);
			bg_release(s, p, a, e->gen, d.version, BG_UNRES_REL);
			return;
		case KEEP_PEND_END:
			tr(s, "n%d.%d resolver: a%d gen %" PRId64 " ends (%s)", p->node + 1, p->no,
			   a + 1, e->gen, d.reason ? d.reason : "-");
			del_pend(p, i);
			bg_idle(s, p);
			return;
		default:
			bg_keep(s, p, e);
			return;
		}
	case BG_UNRES_REL:
		if (out == KEEP_STORE_OK) {
			del_pend(p, i);
		} else {
			/* an ordinary pending release keyed on that read's version */
			e->unresolved = false;
			snprintf(e->ver, VER_LEN, "%s", p->bg_ver);
			e->attempts = 0;
			e->next_mono = 0;
		}
		bg_idle(s, p);
		return;
	default:
		bg_idle(s, p);
		return;
	}
}

/* ---- the listing and peer fences (§2) ---------------------------------------- */

static void ls_idle(struct sim *s, struct proc *p)
{
	p->ls = LS_IDLE;
	wake(s, p, T_LIST, s->now + keep_timing_write_every_ms(&s->t));
}

static int next_peer(const struct sim *s, const struct proc *p, int from)
{
	int n;

	for (n = from; n < s->nnodes; n++)
		if (n != p->node)
			return n;
	return -1;
}

static void ls_decide(struct sim *s, struct proc *p)
{
	struct keep_watch_input in[MAX_NODES];
	size_t n = 0, i;
	int k;
	int64_t mono = p_mono(p, s->now), wall = p_wall(p, s->now);
	char ids[MAX_NODES][KEEP_NODE_ID_MAX + 1];

	for (k = 0; k < s->nnodes; k++) {
		if (k == p->node || p->ls_read[k] == 0)
			continue;
		snprintf(ids[k], sizeof(ids[k]), "n%d", k + 1);
		memset(&in[n], 0, sizeof(in[n]));
		in[n].node = ids[k];
		in[n].readable = p->ls_read[k] > 0;
		in[n].read_failed = p->ls_read[k] < 0;
		in[n].obj = p->ls_read[k] > 0 ? &p->ls_obj[k] : NULL;
		n++;
	}
	if (keep_watch_pass(&p->kw, in, n, mono, wall, lease_valid(s, p),
			    p->sm.live_since_mono_ms) != 0)
		abort();
	for (i = 0; i < p->kw.nev; i++) {
		const struct keep_watch_event *e = &p->kw.ev[i];
		if (e->kind != KEEP_WEV_STALE)
			continue;
		/* one fresh versioned GET, and the decision on it alone */
		memset(&p->ls_stale, 0, sizeof(p->ls_stale));
		snprintf(p->ls_stale.node, sizeof(p->ls_stale.node), "%s", e->node);
		snprintf(p->ls_stale.instance, sizeof(p->ls_stale.instance), "%s", e->instance);
		p->ls_stale.written_at_ms = e->written_at_ms;
		p->ls = LS_FENCE_READ;
		for (p->ls_target = 0; p->ls_target < s->nnodes; p->ls_target++) {
			char id[KEEP_NODE_ID_MAX + 1];
			snprintf(id, sizeof(id), "n%d", p->ls_target + 1);
			if (strcmp(id, e->node) == 0)
				break;
		}
		if (p->ls_target == s->nnodes)
			abort();
		send_req(s, mk_req(s, p, T_LIST, false, true, p->ls_target),
			 keep_timing_attempt_timeout_ms(&s->t));
		return;
	}
	ls_idle(s, p);
}

static void ls_wake(struct sim *s, struct proc *p)
{
	int n = next_peer(s, p, 0);

	if (p->ls == LS_FENCE_HOLD) {
		struct req *f = &s->reqs[p->ls_fence_q];
		f->refs--;
		if (!lease_valid(s, p)) { /* only while this node's lease is valid */
			f->used = false;
			tr(s, "n%d.%d fence of n%d dropped: lease not valid", p->node + 1, p->no,
			   f->idx + 1);
			ls_idle(s, p);
			return;
		}
		p->ls = LS_FENCE_WRITE;
		send_req(s, p->ls_fence_q, keep_timing_attempt_timeout_ms(&s->t));
		return;
	}
	if (n < 0 || p->sm.phase == KEEP_LEASE_CHECK || p->sm.phase == KEEP_LEASE_FIRST) {
		ls_idle(s, p);
		return;
	}
	p->ls = LS_BODY;
	p->ls_cursor = n;
	send_req(s, mk_req(s, p, T_LIST, false, true, n), keep_timing_attempt_timeout_ms(&s->t));
}

static void ls_reply(struct sim *s, struct proc *p, struct req *q, enum keep_outcome out)
{
	int64_t wall = p_wall(p, s->now);
	int n = q->idx;
	const struct keep_node_obj *o = &q->nread;

	switch (p->ls) {
	case LS_BODY:
		p->ls_read[n] = out == KEEP_STORE_OK ? 1 : out == KEEP_STORE_NOT_FOUND ? 0 : -1;
		if (out == KEEP_STORE_OK)
			p->ls_obj[n] = *o;
		n = next_peer(s, p, n + 1);
		if (n >= 0) {
			p->ls_cursor = n;
			send_req(s, mk_req(s, p, T_LIST, false, true, n),
				 keep_timing_attempt_timeout_ms(&s->t));
			return;
		}
		ls_decide(s, p);
		return;
	case LS_FENCE_READ: {
		struct keep_fence_decision d;
		struct req *f;
		int qi;
		keep_fence_peer_decide(&p->ls_stale, lease_valid(s, p), out,
				       out == KEEP_STORE_OK ? o : NULL, 0, wall, &s->t, p->self_id,
				       &d);
		if (d.verdict != KEEP_FV_FENCE) {
			tr(s, "n%d.%d no fence of n%d: %s", p->node + 1, p->no, n + 1,
			   keep_fence_verdict_name(d.verdict));
			ls_idle(s, p);
			return;
		}
		qi = mk_req(s, p, T_LIST, true, true, n);
		f = &s->reqs[qi];
		f->cond = s->broken == SIM_B_UNCOND_FENCE ? KEEP_COND_NONE : KEEP_COND_IF_MATCH;
		snprintf(f->if_match, VER_LEN, "%s", q->ver);
		f->nbody = d.obj;
		tr(s, "n%d.%d fences n%d (%.8s written_at=%" PRId64 ") if-match %s", p->node + 1,
		   p->no, n + 1, o->instance, o->written_at_ms, q->ver);
		if (rng_pm(&s->rng, 300)) {
			/* the fence task is busy: the write goes a little later (its
			 * condition keeps it safe whenever it goes) */
			p->ls = LS_FENCE_HOLD;
			p->ls_fence_q = qi;
			s->reqs[qi].refs++;
			wake(s, p, T_LIST,
			     s->now + rng_range(&s->rng, 1, keep_timing_attempt_timeout_ms(&s->t)));
			return;
		}
		p->ls = LS_FENCE_WRITE;
		send_req(s, qi, keep_timing_attempt_timeout_ms(&s->t));
		return;
	}
	case LS_FENCE_WRITE:
	default:
		ls_idle(s, p);
		return;
	}
}

/* ---- the operator's fence (§2: no watch) -------------------------------------- */

static int64_t op_wall(const struct sim *s)
{
	return WALL_EPOCH_MS + s->op_wall_off + s->now;
}

static void op_reply(struct sim *s, struct req *q, enum keep_outcome out)
{
	struct keep_fence_decision d;
	char node[KEEP_NODE_ID_MAX + 1];
	struct req *f;
	int qi;

	if (q->write) {
		tr(s, "operator fence n%d -> %s", q->idx + 1, keep_outcome_name(out));
		return;
	}
	snprintf(node, sizeof(node), "n%d", q->idx + 1);
	keep_fence_operator(node, out, out == KEEP_STORE_OK ? &q->nread : NULL, 0, op_wall(s),
			    &s->t, &d);
	if (d.verdict != KEEP_FV_FENCE && d.verdict != KEEP_FV_CREATE) {
		tr(s, "operator: no fence of n%d: %s", q->idx + 1,
		   keep_fence_verdict_name(d.verdict));
		return;
	}
	qi = mk_req(s, NULL, T_OP, true, true, q->idx);
	f = &s->reqs[qi];
	f->cond = d.verdict == KEEP_FV_FENCE ? KEEP_COND_IF_MATCH : KEEP_COND_IF_NONE_MATCH;
	snprintf(f->if_match, VER_LEN, "%s", q->ver);
	if (s->broken == SIM_B_UNCOND_FENCE)
		f->cond = KEEP_COND_NONE;
	f->nbody = d.obj;
	tr(s, "operator fences n%d (%s)", q->idx + 1, keep_fence_verdict_name(d.verdict));
	/* a person: the command runs a few seconds after the read */
	f->refs++;
	push_ev(s, s->now + rng_range(&s->rng, 0, 5000), E_SEND, qi, 3000);
}

/* ---- process lifecycle --------------------------------------------------------- */

static struct proc *start_proc(struct sim *s, int node, int64_t at)
{
	struct proc *p;
	struct keep_node_obj tmpl;
	int64_t half = s->t.max_skew_ms / 2, span = s->end / 1000 * 50 / 1000 + 2;
	int i;

	if (s->nprocs == MAX_PROCS)
		return NULL;
	p = &s->procs[s->nprocs];
	memset(p, 0, sizeof(*p));
	p->alive = true;
	p->node = node;
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].node == node)
			p->no++;
	s->nprocs++;
	p->no++;
	for (i = 0; i < KEEP_INSTANCE_LEN; i++)
		p->inst[i] = "0123456789abcdef"[rng_next(&s->rng) & 15];
	p->inst[KEEP_INSTANCE_LEN] = '\0';
	/* skew at the bound half of the time; drift at most 50 ppm */
	p->drift_ppm = rng_range(&s->rng, -50, 50);
	p->wall_off = half - span > 0 ? rng_range(&s->rng, -(half - span), half - span) : 0;
	if (rng_pm(&s->rng, 500))
		p->wall_off = rng_pm(&s->rng, 500) ? half - span : -(half - span);
	p->mono_base = rng_range(&s->rng, 1000000, 1000000000);
	p->fg_actor = p->bg_actor = -1;
	snprintf(p->self_id, sizeof(p->self_id), "n%d", node + 1);
	keep_watch_init(&p->kw, &s->t, p->self_id);
	p->kw_on = true;
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.format = 3;
	memcpy(tmpl.instance, p->inst, sizeof(tmpl.instance));
	snprintf(tmpl.node, sizeof(tmpl.node), "n%d", node + 1);
	snprintf(tmpl.host, sizeof(tmpl.host), "sim%d", node + 1);
	tmpl.pid = 1000 + s->nprocs;
	snprintf(tmpl.software, sizeof(tmpl.software), "keep-sim");
	tmpl.seq = 0;
	keep_lease_init(&p->sm, &s->t, &tmpl, p_mono(p, at));
	tr(s, "n%d.%d starts: instance %.8s wall_off=%" PRId64 " drift=%" PRId64 "ppm", node + 1,
	   p->no, p->inst, p->wall_off, p->drift_ppm);
	drain_lease_events(s, p);
	wake(s, p, T_LEASE, at);
	wake(s, p, T_FG, at + rng_range(&s->rng, 0, 500));
	wake(s, p, T_BG, at + rng_range(&s->rng, 0, 500));
	wake(s, p, T_LIST, at + rng_range(&s->rng, 0, 1000));
	return p;
}

static struct proc *node_proc(struct sim *s, int node)
{
	int i;

	for (i = s->nprocs - 1; i >= 0; i--)
		if (s->procs[i].alive && s->procs[i].node == node)
			return &s->procs[i];
	return NULL;
}

/* ---- the checker ---------------------------------------------------------------- */

static void check(struct sim *s)
{
	int a, i, owner;

	for (a = 0; a < s->nactors && !s->stop; a++) {
		owner = -1;
		for (i = 0; i < s->nprocs; i++) {
			if (!acting(s, &s->procs[i], a))
				continue;
			if (owner >= 0) {
				char w1[32], w2[32];
				pname(s, owner, w1, sizeof(w1));
				pname(s, i, w2, sizeof(w2));
				violation(s,
					  "two owners of a%d: %s (gen %" PRId64
					  ") and %s (gen %" PRId64 ")",
					  a + 1, w1, s->procs[owner].hold[a].gen, w2,
					  s->procs[i].hold[a].gen);
				return;
			}
			owner = i;
		}
	}
	for (i = 0; i < s->nprocs && !s->stop; i++)
		if (s->procs[i].alive)
			check_acting_backed(s, &s->procs[i]);
}

/* ---- the run -------------------------------------------------------------------- */

static void schedule_faults(struct sim *s)
{
	int i, k;
	int64_t tt = s->t.ttl_ms + s->t.grace_ms;

#define AT() rng_range(&s->rng, 2 * tt, s->end - tt)
#define NODE() ((int)rng_range(&s->rng, 0, s->nnodes - 1))
	k = (int)rng_range(&s->rng, 1, 6);
	for (i = 0; i < k; i++) /* the bucket cut off from a node for a while: half of
				 * the cuts end near the takeover bound, where fences race
				 * the recovery write */
		push_ev(s, AT(), E_CUT, NODE(),
			rng_pm(&s->rng, 500)
			    ? tt + rng_range(&s->rng, -s->t.period_ms, 2 * s->t.period_ms)
			    : rng_range(&s->rng, s->t.period_ms, 2 * tt + s->t.ttl_ms));
	k = (int)rng_range(&s->rng, 0, 4);
	for (i = 0; i < k; i++) /* a process stalls (GC, VM) */
		push_ev(s, AT(), E_PAUSE, NODE(), rng_range(&s->rng, 100, 2 * tt));
	k = (int)rng_range(&s->rng, 0, 3);
	for (i = 0; i < k; i++)
		push_ev(s, AT(), E_CRASH, NODE(), 0);
	k = (int)rng_range(&s->rng, 0, 2);
	for (i = 0; i < k; i++) /* two processes, one id */
		push_ev(s, AT(), E_TWIN, NODE(), 0);
	if (rng_pm(&s->rng, 400))
		push_ev(s, AT(), E_OPFENCE, NODE(), 0);
	if (rng_pm(&s->rng, 100)) /* before anything was written: a created fence */
		push_ev(s, rng_range(&s->rng, 0, 100), E_OPFENCE, NODE(), 0);
	if (rng_pm(&s->rng, 300))
		push_ev(s, AT(), E_STOP, NODE(), 0);
#undef AT
#undef NODE
}

static void pick_timing(struct sim *s)
{
	switch (rng_range(&s->rng, 0, 3)) {
	case 0: /* the ADR's defaults */
	case 1:
		keep_timing_defaults(&s->t);
		break;
	case 2: /* the tightest margin the check allows: grace + safety = 2 * max_skew */
		keep_timing_defaults(&s->t);
		s->t.grace_ms = 1000;
		s->t.safety_ms = 1000;
		break;
	default: /* the short timings of the end-to-end tests */
		s->t.ttl_ms = 3000;
		s->t.grace_ms = 1500;
		s->t.safety_ms = 600;
		s->t.max_skew_ms = 300;
		s->t.period_ms = 1000;
		break;
	}
}

static void dispatch(struct sim *s, struct ev *e)
{
	struct proc *p = NULL;
	char who[32];

	switch (e->kind) {
	case E_APPLY:
		on_apply(s, &s->reqs[e->a]);
		unref(s, &s->reqs[e->a]);
		return;
	case E_REPLY: {
		struct req *q = &s->reqs[e->a];
		enum keep_outcome out;
		if (q->proc >= 0) {
			p = &s->procs[q->proc];
			if (!p->alive) {
				unref(s, q);
				return;
			}
			if (s->now < p->paused_until) { /* handled when the pause ends */
				push_ev(s, p->paused_until, E_REPLY, e->a, 0);
				return;
			}
		}
		out = seen_outcome(s, q);
		if (s->trace) {
			pname(s, q->proc, who, sizeof(who));
			tr(s, "%s/%s %s %s%d reply %s", who, tname(q->task),
			   q->write ? "put" : "get", q->is_node ? "nodes/n" : "owners/a",
			   q->idx + 1, keep_outcome_name(out));
		}
		if (!p)
			op_reply(s, q, out);
		else if (q->task == T_LEASE)
			lease_reply(s, p, q, out);
		else if (q->task == T_FG)
			fg_reply(s, p, q, out);
		else if (q->task == T_BG)
			bg_reply(s, p, q, out);
		else
			ls_reply(s, p, q, out);
		unref(s, &s->reqs[e->a]);
		return;
	}
	case E_WAKE:
		p = &s->procs[e->a];
		if (!p->alive)
			return;
		if (s->now < p->paused_until) {
			push_ev(s, p->paused_until, E_WAKE, e->a, e->b);
			return;
		}
		if (e->b == T_LEASE)
			lease_step(s, p);
		else if (e->b == T_FG && p->fg == FG_IDLE)
			fg_wake(s, p);
		else if (e->b == T_FG && p->fg == FG_REL_WAIT)
			fg_release_retry(s, p);
		else if (e->b == T_BG && p->bg == BG_IDLE)
			bg_wake(s, p);
		else if (e->b == T_LIST && (p->ls == LS_IDLE || p->ls == LS_FENCE_HOLD))
			ls_wake(s, p);
		return;
	case E_CRASH:
		p = node_proc(s, e->a);
		if (p) {
			tr(s, "n%d.%d crashes", p->node + 1, p->no);
			proc_exit(s, p, "crash");
		}
		return;
	case E_RESTART:
		if (!node_proc(s, e->a))
			start_proc(s, e->a, s->now);
		return;
	case E_TWIN:
		tr(s, "twin of n%d", e->a + 1);
		start_proc(s, e->a, s->now);
		return;
	case E_CUT:
		p = node_proc(s, e->a);
		if (p) {
			p->cut_until = s->now + e->b;
			tr(s, "n%d.%d cut off from the bucket for %" PRId64 " ms", p->node + 1,
			   p->no, e->b);
		}
		return;
	case E_PAUSE:
		p = node_proc(s, e->a);
		if (p) {
			p->paused_until = s->now + e->b;
			tr(s, "n%d.%d paused for %" PRId64 " ms", p->node + 1, p->no, e->b);
		}
		return;
	case E_OPFENCE:
		tr(s, "operator reads nodes/n%d to fence it", e->a + 1);
		send_req(s, mk_req(s, NULL, T_OP, false, true, e->a), 3000);
		return;
	case E_STOP:
		p = node_proc(s, e->a);
		if (p && !p->stopping && p->sm.phase == KEEP_LEASE_LIVE) {
			int a;
			p->stopping = true;
			p->stop_by_mono =
			    p_mono(p, s->now) + 2 * keep_timing_attempt_timeout_ms(&s->t);
			for (a = 0; a < s->nactors; a++) /* releases go first (§4) */
				if (p->hold[a].on && p->hold[a].end_mono > p_mono(p, s->now))
					p->hold[a].end_mono = p_mono(p, s->now);
			tr(s, "n%d.%d clean stop begins", p->node + 1, p->no);
		}
		return;
	case E_SEND:
		s->reqs[e->a].refs--;
		send_req(s, e->a, e->b);
		return;
	case E_END:
		s->stop = true;
		return;
	}
}

const char *sim_broken_name(enum sim_broken b)
{
	static const char *n[SIM_B_COUNT] = {
	    [SIM_REAL] = "real",
	    [SIM_B_UNCOND_FENCE] = "unconditional-fence",
	    [SIM_B_REUSE_GEN] = "reuse-generation",
	    [SIM_B_ADOPT_ANY] = "adopt-any-instance",
	    [SIM_B_VALIDITY_REPLY] = "validity-from-reply",
	    [SIM_B_NO_ACTOR_LOCK] = "no-actor-lock",
	    [SIM_B_TRUST_PRE_LAPSE] = "trust-pre-lapse-write",
	    [SIM_B_NO_START_WAIT] = "no-start-wait",
	};
	if ((unsigned)b < SIM_B_COUNT)
		return n[b];
	return "unknown";
}

int sim_broken_parse(const char *name, enum sim_broken *out)
{
	int b;

	for (b = 0; b < SIM_B_COUNT; b++)
		if (strcmp(name, sim_broken_name((enum sim_broken)b)) == 0) {
			*out = (enum sim_broken)b;
			return 0;
		}
	return -1;
}

void sim_run(uint64_t seed, enum sim_broken b, FILE *trace, struct sim_result *res)
{
	struct sim *s = calloc(1, sizeof(*s));
	char err[256];
	int n;

	if (!s)
		abort();
	memset(res, 0, sizeof(*res));
	s->res = res;
	s->broken = b;
	s->trace = trace;
	rng_seed(&s->rng, seed ^ UINT64_C(0x6b656570));
	s->ver_salt = rng_next(&s->rng);
	pick_timing(s);
	if (keep_timing_check(&s->t, err, sizeof(err)) != 0)
		abort();
	s->procs = calloc(MAX_PROCS, sizeof(*s->procs));
	s->reqs = calloc(MAX_REQS, sizeof(*s->reqs));
	if (!s->procs || !s->reqs)
		abort();
	s->nnodes = (int)rng_range(&s->rng, 2, MAX_NODES);
	s->nactors = (int)rng_range(&s->rng, 1, MAX_ACTORS);
	s->end = 40 * s->t.ttl_ms;
	s->pm_lost = (int)rng_range(&s->rng, 0, 100);
	s->pm_slow = (int)rng_range(&s->rng, 0, 200);
	s->pm_late = (int)rng_range(&s->rng, 0, 80);
	s->pm_refused = (int)rng_range(&s->rng, 0, 20);
	s->pm_slow_reply = (int)rng_range(&s->rng, 0, 200);
	s->pm_drop = (int)rng_range(&s->rng, 0, 100);
	s->op_wall_off = rng_range(&s->rng, -s->t.max_skew_ms / 2, s->t.max_skew_ms / 2);
	tr(s,
	   "seed %" PRIu64 " model %s: ttl=%" PRId64 " grace=%" PRId64 " safety=%" PRId64
	   " skew=%" PRId64 " period=%" PRId64 " nodes=%d actors=%d lost=%d slow=%d late=%d",
	   seed, sim_broken_name(b), s->t.ttl_ms, s->t.grace_ms, s->t.safety_ms, s->t.max_skew_ms,
	   s->t.period_ms, s->nnodes, s->nactors, s->pm_lost, s->pm_slow, s->pm_late);
	for (n = 0; n < s->nnodes; n++)
		start_proc(s, n, rng_range(&s->rng, 0, 2000));
	schedule_faults(s);
	push_ev(s, s->end, E_END, 0, 0);
	while (!s->stop && s->nheap) {
		struct ev e = pop_ev(s);
		s->now = e.t;
		res->events++;
		dispatch(s, &e);
		if (!s->stop)
			check(s);
	}
	for (n = 0; n < s->nprocs; n++)
		if (s->procs[n].kw_on)
			keep_watch_release(&s->procs[n].kw);
	free(s->heap);
	free(s->reqs);
	free(s->procs);
	free(s);
}
