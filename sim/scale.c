/* keep-sim --scale — the request-accounting model (scale.h; docs/scale.md).
 *
 * A driver of lib/core, like sim.c: clocks and the bucket are simulated
 * here, every decision is the machines'. The store answers at once (no
 * latency, no failure): what is counted is what the protocol asks for at
 * steady state, and the death-to-fence time is the protocol's own, with
 * no request time in it. Processes wake 0..jitter_ms late (a timer's
 * lateness, a request's time before the next step), which is what makes a
 * listing now and then fall between two writes of a peer (a GET). */
#include "scale.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/buf.h"
#include "../lib/codec/nodeobj.h"
#include "../lib/core/fence.h"
#include "../lib/core/fencer.h"
#include "../lib/core/lease.h"
#include "../lib/core/listing.h"
#include "../lib/core/timing.h"

/* List prices used (docs/scale.md gives their dates and sources), $ per request. */
#define S3_CLASS_A_USD (0.005 / 1000.0)	 /* S3 Standard PUT, COPY, POST, LIST */
#define S3_CLASS_B_USD (0.0004 / 1000.0) /* S3 Standard GET and the rest */
#define R2_CLASS_A_USD (4.50 / 1e6)	 /* R2 class A: PUT, LIST */
#define R2_CLASS_B_USD (0.36 / 1e6)	 /* R2 class B: GET, HEAD */
#define MONTH_S (30.0 * 86400.0)	 /* a billing month: 30 days */

#define LIST_PAGE_KEYS 1000	      /* keys a LIST page holds (S3 MaxKeys) */
#define BOOT_MS 1000000		      /* every node's boot clock at true time 0 */
#define WALL_EPOCH_MS 1800000000000LL /* every node's wall clock at true time 0 */
#define NEVER INT64_MAX
#define SCALE_SOFTWARE_VERSION "1.10.2" /* the version in the bodies' software token */

/* One node's lease-write and its place in the bucket. */
struct snode {
	struct keep_lease sm;
	char id[KEEP_NODE_ID_MAX + 1];
	bool dead;
	int64_t start_ms; /* true time its lease-write starts */
	int64_t w;	  /* index in watches[], or -1 when its watch is not played */
};

/* What the bucket holds under nodes/<id>. */
struct sobj {
	uint64_t ver; /* 0: absent */
	struct keep_node_obj obj;
	size_t bytes;	   /* encoded size of obj */
	size_t list_entry; /* bytes of its <Contents> entry in a listing */
};

/* What a watcher knows of one peer (node-watch's view, small). */
struct speer {
	uint64_t listed;   /* token of the last listing (0: not listed) */
	uint64_t body_ver; /* version of the body held (0: none) */
	bool decoded;
	int format;
	enum keep_node_state state;
};

/* One played node-watch | lease-fence. */
struct swatch {
	int64_t node;
	struct keep_watch kw;
	struct speer *peers;	       /* [nodes] */
	struct keep_watch_sched sched; /* node-watch's schedule (lib/core/listing.c) */
	bool fencing;
	bool fence_started; /* a fence of the victim was started by this watch */
	struct keep_fencer_m fm;
	int64_t fence_wait; /* true ms, NEVER when none */
};

struct counts {
	uint64_t put, get, list_pages, keys_listed, bytes_sent, bytes_recv;
};

struct hent {
	int64_t t;
	int64_t actor; /* 2*node: its lease; 2*w + 1: watch w */
};

struct scale {
	struct scale_opts o;
	struct keep_timing t;
	int64_t n, nw;
	struct snode *nodes;
	struct sobj *bucket;
	struct swatch *watches;
	struct keep_watch_input *in;
	int64_t *due; /* [2 * max(n, nw)] the due time of each actor */
	struct hent *heap;
	size_t nheap, heapalloc;
	uint64_t rng, vers;
	int64_t now;
	bool counting;
	struct counts lease_c, watch_c; /* the window: leases (all nodes), watches (played) */
	struct counts fence_c;		/* every fence request, any time */
	int64_t victim, kill_at, fenced_at;
	int64_t fencers, landed;
	enum { PH_WARM = 0, PH_STEADY } phase;
	int64_t start_stale; /* stale candidates of live nodes during the warm-up */
	int64_t false_stale; /* ... after it: an error */
	struct keep_buf buf;
	struct keep_node_obj probe; /* format and state only, for keep_listing_need_body */
};

const char *scale_mode_name(enum scale_mode m)
{
	switch (m) {
	case SCALE_RING:
		return "ring";
	case SCALE_FULL:
	case SCALE_MODE_COUNT:
		break;
	}
	return "full";
}

int scale_mode_parse(const char *name, enum scale_mode *out)
{
	if (name && strcmp(name, "full") == 0) {
		*out = SCALE_FULL;
		return 0;
	}
	if (name && strcmp(name, "ring") == 0) {
		*out = SCALE_RING;
		return 0;
	}
	return -1;
}

void scale_opts_defaults(struct scale_opts *o, int64_t nodes)
{
	memset(o, 0, sizeof(*o));
	o->mode = SCALE_FULL;
	o->nodes = nodes;
	o->periods = SCALE_PERIODS_DEFAULT;
	o->sample = nodes <= SCALE_FULL_MAX ? 0 : SCALE_SAMPLE_DEFAULT;
	o->jitter_ms = SCALE_JITTER_DEFAULT_MS;
	o->seed = 1;
	o->successors = 3;
	o->full_every = 10;
}

/* ---- plumbing ------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int64_t rng_upto(struct scale *s, int64_t max)
{
	return max <= 0 ? 0 : (int64_t)(rng_next(&s->rng) % (uint64_t)(max + 1));
}

static int64_t mono_of(int64_t t)
{
	return t + BOOT_MS;
}

static int64_t true_of(int64_t mono)
{
	return mono == NEVER ? NEVER : mono - BOOT_MS;
}

static int64_t wall_of(int64_t t)
{
	return WALL_EPOCH_MS + t;
}

static int heap_push(struct scale *s, int64_t t, int64_t actor)
{
	size_t i;

	if (s->nheap == s->heapalloc) {
		size_t na = s->heapalloc ? 2 * s->heapalloc : 1024;
		struct hent *nh = realloc(s->heap, na * sizeof(*nh));
		if (!nh)
			return -1;
		s->heap = nh;
		s->heapalloc = na;
	}
	i = s->nheap++;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (s->heap[up].t < t || (s->heap[up].t == t && s->heap[up].actor <= actor))
			break;
		s->heap[i] = s->heap[up];
		i = up;
	}
	s->heap[i].t = t;
	s->heap[i].actor = actor;
	return 0;
}

static struct hent heap_pop(struct scale *s)
{
	struct hent top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap &&
		    (s->heap[c + 1].t < s->heap[c].t ||
		     (s->heap[c + 1].t == s->heap[c].t && s->heap[c + 1].actor < s->heap[c].actor)))
			c++;
		if (last.t < s->heap[c].t ||
		    (last.t == s->heap[c].t && last.actor <= s->heap[c].actor))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

/* Schedule actor at true time t (NEVER: not at all), a wake-up late by the
 * jitter. */
static int schedule(struct scale *s, int64_t actor, int64_t t)
{
	if (t == NEVER) {
		s->due[actor] = NEVER;
		return 0;
	}
	if (t < s->now)
		t = s->now;
	t += rng_upto(s, s->o.jitter_ms);
	s->due[actor] = t;
	return heap_push(s, t, actor);
}

static void tok(char *out, size_t n, uint64_t v)
{
	snprintf(out, n, "v%" PRIx64, v);
}

static struct counts *lease_counts(struct scale *s)
{
	static struct counts sink;
	return s->counting ? &s->lease_c : &sink;
}

static struct counts *watch_counts(struct scale *s)
{
	static struct counts sink;
	return s->counting ? &s->watch_c : &sink;
}

/* The bytes of one listing entry for key nodes/<id> and a body of size
 * bytes: S3 ListObjectsV2's <Contents> element (ETag a quoted MD5). */
static size_t list_entry_bytes(const char *id, size_t bytes)
{
	char e[512];
	int n = snprintf(e, sizeof(e),
			 "<Contents><Key>nodes/%s</Key><LastModified>2026-12-02T07:00:00.000Z"
			 "</LastModified><ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag>"
			 "<Size>%zu</Size><StorageClass>STANDARD</StorageClass></Contents>",
			 id, bytes);
	return n > 0 ? (size_t)n : 0;
}

/* The bytes of a listing page's envelope (everything but its entries). */
static size_t list_page_bytes(void)
{
	char e[640];
	int n =
	    snprintf(e, sizeof(e),
		     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
		     "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>keep-bucket</Name>"
		     "<Prefix>nodes/</Prefix><KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys>"
		     "<IsTruncated>true</IsTruncated><ContinuationToken>%s</ContinuationToken>"
		     "<NextContinuationToken>%s</NextContinuationToken></ListBucketResult>",
		     "1Bz0kLvwqfPEXAMPLEcontinuationTokenOfAboutSixtyFourBytes00000000",
		     "1Bz0kLvwqfPEXAMPLEcontinuationTokenOfAboutSixtyFourBytes00000000");
	return n > 0 ? (size_t)n : 0;
}

/* A PUT of obj to nodes/<k> under cond; the outcome, the new version in ver. */
static enum keep_outcome bucket_put(struct scale *s, int64_t k, enum keep_cond cond,
				    const char *if_match, const struct keep_node_obj *obj,
				    struct counts *c, char *ver, size_t vn)
{
	struct sobj *b = &s->bucket[k];
	char cur[32];

	keep_buf_reset(&s->buf);
	if (keep_node_obj_encode(obj, &s->buf) != 0)
		abort(); /* the machines hand out only valid objects */
	c->put++;
	c->bytes_sent += s->buf.len;
	tok(cur, sizeof(cur), b->ver);
	if ((cond == KEEP_COND_IF_NONE_MATCH && b->ver) ||
	    (cond == KEEP_COND_IF_MATCH && (!b->ver || strcmp(cur, if_match) != 0)))
		return KEEP_STORE_CONFLICT;
	b->ver = ++s->vers;
	b->obj = *obj;
	b->bytes = s->buf.len;
	b->list_entry = list_entry_bytes(s->nodes[k].id, b->bytes);
	tok(ver, vn, b->ver);
	if (k == s->victim && obj->state == KEEP_NODE_FENCED && s->fenced_at == NEVER)
		s->fenced_at = s->now;
	return KEEP_STORE_OK;
}

/* A GET of nodes/<k>: counted; NOT_FOUND or OK with *obj and ver. */
static enum keep_outcome bucket_get(struct scale *s, int64_t k, struct counts *c,
				    const struct keep_node_obj **obj, char *ver, size_t vn)
{
	const struct sobj *b = &s->bucket[k];

	c->get++;
	if (!b->ver) {
		*obj = NULL;
		return KEEP_STORE_NOT_FOUND;
	}
	c->bytes_recv += b->bytes;
	*obj = &b->obj;
	tok(ver, vn, b->ver);
	return KEEP_STORE_OK;
}

/* ---- lease-write ----------------------------------------------------------------- */

static int lease_step(struct scale *s, int64_t i)
{
	struct snode *nd = &s->nodes[i];
	struct keep_lease_event ev;

	for (;;) {
		struct keep_lease_action act;
		int64_t mono = mono_of(s->now), wall = wall_of(s->now);
		const struct keep_node_obj *o;
		enum keep_outcome out;
		char ver[32];

		keep_lease_next(&nd->sm, mono, wall, &act);
		while (keep_lease_poll_event(&nd->sm, &ev))
			; /* lease-write prints and persists them; nothing to count */
		switch (act.kind) {
		case KEEP_LACT_WAIT:
			return schedule(s, 2 * i, true_of(act.until_mono_ms));
		case KEEP_LACT_READ:
			out = bucket_get(s, i, lease_counts(s), &o, ver, sizeof(ver));
			keep_lease_on_read(&nd->sm, mono, wall, out,
					   out == KEEP_STORE_OK ? ver : "", o, 0);
			continue;
		case KEEP_LACT_WRITE:
			out = bucket_put(s, i, act.cond, act.if_match, &act.obj, lease_counts(s),
					 ver, sizeof(ver));
			keep_lease_clocks(&nd->sm, mono, wall);
			keep_lease_on_write(&nd->sm, mono, out, out == KEEP_STORE_OK ? ver : "");
			continue;
		default: /* DONE (no RUNS_* without keep_lease_guard_runs) */
			return schedule(s, 2 * i, NEVER);
		}
	}
}

/* ---- node-watch | lease-fence ------------------------------------------------------ */

static void fencer_walls(const struct scale *s, const struct snode *nd, struct keep_walls *w)
{
	w->wall_ms = wall_of(s->now);
	w->judge_wall_ms = w->wall_ms - keep_lease_judge_offset_ms(&nd->sm);
}

/* Run watch w's fence (lib/core/fencer.c, as lease-fence --stdin does) until
 * it waits or ends. */
static void fence_drive(struct scale *s, struct swatch *w)
{
	struct snode *nd = &s->nodes[w->node];
	struct keep_fencer_event e;

	w->fence_wait = NEVER;
	while (w->fencing) {
		struct keep_fencer_action a;
		struct keep_fencer me;
		struct keep_fencer_read r;
		struct keep_walls wl;
		int64_t mono = mono_of(s->now);
		const struct keep_node_obj *o;
		char ver[32];
		int64_t k;

		fencer_walls(s, nd, &wl);
		keep_fencer_next(&w->fm, mono, &wl, &a);
		switch (a.kind) {
		case KEEP_FNA_DONE:
			w->fencing = false;
			break;
		case KEEP_FNA_WAIT:
			w->fence_wait = true_of(a.until_mono_ms);
			return;
		case KEEP_FNA_LEASE:
			keep_fencer_view(true, keep_lease_valid(&nd->sm, mono),
					 nd->sm.live_since_mono_ms, mono, &me);
			keep_fencer_on_lease(&w->fm, &me, &wl);
			break;
		case KEEP_FNA_READ:
			k = strtoll(a.node + 1, NULL, 10); /* ids are "n" and the index */
			memset(&r, 0, sizeof(r));
			r.outcome = bucket_get(s, k, &s->fence_c, &o, ver, sizeof(ver));
			r.version = r.outcome == KEEP_STORE_OK ? ver : NULL;
			r.obj = o;
			keep_fencer_on_read(&w->fm, &r, &wl);
			break;
		case KEEP_FNA_WRITE:
			k = strtoll(a.node + 1, NULL, 10);
			keep_fencer_on_write(&w->fm,
					     bucket_put(s, k, a.cond, a.if_match, &a.obj,
							&s->fence_c, ver, sizeof(ver)),
					     NULL);
			break;
		default: /* LIST: the operator's only */
			abort();
		}
		while (keep_fencer_poll_event(&w->fm, &e))
			if (e.kind == KEEP_FNE_LINE && e.landed)
				s->landed++;
	}
}

/* A stale line of w's watch: its lease-fence takes it, one fence at a time
 * (a line for a node whose fence is in flight is dropped, as
 * keep_fencer_queue_admit does). */
static void fence_start(struct scale *s, struct swatch *w, const struct keep_watch_event *ev)
{
	struct keep_fencer_cfg cfg;

	if (w->fencing)
		return;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = KEEP_FENCER_PEER;
	cfg.t = s->t;
	keep_stale_of_event(ev, &cfg.st);
	snprintf(cfg.self, sizeof(cfg.self), "%s", s->nodes[w->node].id);
	keep_fencer_init(&w->fm, &cfg);
	w->fencing = true;
	if (!w->fence_started) {
		w->fence_started = true;
		s->fencers++;
	}
	fence_drive(s, w);
}

static void stale_events(struct scale *s, struct swatch *w)
{
	size_t i;

	for (i = 0; i < w->kw.nev; i++) {
		if (w->kw.ev[i].kind != KEEP_WEV_STALE)
			continue;
		int64_t k = strtoll(w->kw.ev[i].node + 1, NULL, 10); /* "n%07d": its index */

		if (k < 0 || k >= s->n || !s->nodes[k].dead) {
			/* a live node taken for a candidate: at the start of a
			 * watch (docs/scale.md), never at steady state (the
			 * victim, and the watchers killed with it, are dead) */
			if (s->phase == PH_WARM)
				s->start_stale++;
			else
				s->false_stale++;
		}
		fence_start(s, w, &w->kw.ev[i]);
	}
}

/* One listing pass of watch w (node-watch's follow_pass): LIST nodes/ in
 * pages, read the bodies lib/core/listing.c asks for, feed the watch. */
static int watch_pass(struct scale *s, struct swatch *w)
{
	struct snode *nd = &s->nodes[w->node];
	struct counts *c = watch_counts(s);
	int64_t mono = mono_of(s->now), k, listed = 0;
	size_t n = 0;

	for (k = 0; k < s->n; k++) {
		const struct sobj *b = &s->bucket[k];
		struct speer *p = &w->peers[k];
		struct keep_watch_input *x;
		const struct keep_node_obj *o;
		struct keep_listed prev;
		char ltok[32], ptok[32], bver[32];
		bool wrote, need;

		if (!b->ver) {
			memset(p, 0, sizeof(*p)); /* not listed: it left */
			continue;
		}
		listed++;
		c->bytes_recv += b->list_entry;
		/* its own key too, as node-watch's read_all: the watch never
		 * takes it for a candidate (fence.c), but its body is read by
		 * the same rule */
		tok(ltok, sizeof(ltok), b->ver);
		tok(ptok, sizeof(ptok), p->listed);
		tok(bver, sizeof(bver), p->body_ver);
		s->probe.format = p->format;
		s->probe.state = p->state;
		prev.listed = ptok;
		prev.body_version = p->body_ver ? bver : "";
		prev.decoded = p->decoded;
		prev.obj = &s->probe;
		need = keep_listing_need_body(p->listed ? &prev : NULL, ltok, false, &wrote);
		p->listed = b->ver;
		x = &s->in[n++];
		o = NULL;
		if (need) {
			char ver[32];

			if (bucket_get(s, k, c, &o, ver, sizeof(ver)) == KEEP_STORE_OK) {
				p->body_ver = b->ver;
				p->decoded = true;
				p->format = o->format;
				p->state = o->state;
			} else {
				o = NULL;
				memset(p, 0, sizeof(*p));
			}
		}
		/* a body kept from an earlier pass is not held here (the model
		 * keeps its format and state only): read this pass, or none */
		keep_watch_input_of(x, s->nodes[k].id, wrote, o != NULL, false, o);
	}
	c->list_pages += listed ? (uint64_t)((listed + LIST_PAGE_KEYS - 1) / LIST_PAGE_KEYS) : 1;
	c->bytes_recv += (listed ? (uint64_t)((listed + LIST_PAGE_KEYS - 1) / LIST_PAGE_KEYS) : 1) *
			 list_page_bytes();
	c->keys_listed += (uint64_t)listed;
	if (keep_watch_pass(&w->kw, s->in, n, mono,
			    wall_of(s->now) - keep_lease_judge_offset_ms(&nd->sm),
			    keep_lease_valid(&nd->sm, mono), nd->sm.live_since_mono_ms) != 0)
		return -1;
	keep_watch_sched_listed(&w->sched, true, mono, wall_of(s->now));
	keep_watch_ring(&w->kw, NULL, 0);
	stale_events(s, w);
	return 0;
}

/* Ring mode between listings (node-watch's ring_pass): one GET of each
 * peer keep_watch_ring names, fed to the watch. */
static int ring_pass(struct scale *s, struct swatch *w)
{
	struct snode *nd = &s->nodes[w->node];
	struct counts *c = watch_counts(s);
	const struct keep_node_obj *objs[KEEP_WATCH_RING_READS_MAX];
	const char *ids[KEEP_WATCH_RING_READS_MAX];
	int64_t mono = mono_of(s->now);
	size_t i, n = keep_watch_ring(&w->kw, ids, KEEP_WATCH_RING_READS_MAX);

	for (i = 0; i < n; i++) {
		int64_t k = strtoll(ids[i] + 1, NULL, 10); /* ids are "n" and the index */
		char ver[32];

		if (bucket_get(s, k, c, &objs[i], ver, sizeof(ver)) != KEEP_STORE_OK)
			objs[i] = NULL;
		keep_watch_input_of(&s->in[i], s->nodes[k].id, false, objs[i] != NULL,
				    objs[i] == NULL, objs[i]);
	}
	if (keep_watch_observe(&w->kw, s->in, n, mono,
			       wall_of(s->now) - keep_lease_judge_offset_ms(&nd->sm),
			       keep_lease_valid(&nd->sm, mono), nd->sm.live_since_mono_ms) != 0)
		return -1;
	keep_watch_ring(&w->kw, NULL, 0);
	stale_events(s, w);
	return 0;
}

static int watch_step(struct scale *s, int64_t wi)
{
	struct swatch *w = &s->watches[wi];
	struct snode *nd = &s->nodes[w->node];
	int64_t mono = mono_of(s->now), next;

	if (nd->dead)
		return schedule(s, 2 * wi + 1, NEVER);
	switch (keep_watch_sched_due(&w->sched, mono)) {
	case KEEP_WATCH_LIST:
		if (watch_pass(s, w) != 0)
			return -1;
		break;
	case KEEP_WATCH_RING:
		if (ring_pass(s, w) != 0)
			return -1;
		break;
	case KEEP_WATCH_TICK:
		if (keep_watch_tick(&w->kw, mono, keep_lease_valid(&nd->sm, mono),
				    nd->sm.live_since_mono_ms) != 0)
			return -1;
		stale_events(s, w);
		break;
	case KEEP_WATCH_SLEEP:
		break;
	}
	if (w->fencing && w->fence_wait != NEVER && s->now >= w->fence_wait)
		fence_drive(s, w);
	next = true_of(keep_watch_sched_wake_mono_ms(&w->sched, &w->kw, nd->sm.live_since_mono_ms));
	if (w->fencing && w->fence_wait < next)
		next = w->fence_wait;
	return schedule(s, 2 * wi + 1, next);
}

/* ---- the run ------------------------------------------------------------------------ */

static int run_until(struct scale *s, int64_t until, bool stop_at_fence)
{
	while (s->nheap && s->heap[0].t < until) {
		struct hent h = heap_pop(s);
		int rc;

		if (s->due[h.actor] != h.t)
			continue; /* rescheduled since */
		s->now = h.t;
		if (h.actor % 2 == 0) {
			if (s->nodes[h.actor / 2].dead)
				continue;
			rc = lease_step(s, h.actor / 2);
		} else {
			rc = watch_step(s, h.actor / 2);
		}
		if (rc)
			return rc;
		if (stop_at_fence && s->fenced_at != NEVER)
			return 0;
	}
	s->now = until;
	return 0;
}

static double per(uint64_t v, double d)
{
	return d > 0 ? (double)v / d : 0;
}

static void scale_free(struct scale *s)
{
	int64_t i;

	if (s->watches)
		for (i = 0; i < s->nw; i++) {
			keep_watch_release(&s->watches[i].kw);
			free(s->watches[i].peers);
		}
	free(s->watches);
	free(s->nodes);
	free(s->bucket);
	free(s->in);
	free(s->due);
	free(s->heap);
	keep_buf_release(&s->buf);
}

static int setup(struct scale *s)
{
	int64_t i, wi = 0;

	s->nodes = calloc((size_t)s->n, sizeof(*s->nodes));
	s->bucket = calloc((size_t)s->n, sizeof(*s->bucket));
	s->watches = calloc((size_t)s->nw, sizeof(*s->watches));
	s->in = calloc((size_t)s->n, sizeof(*s->in));
	s->due = calloc((size_t)(2 * s->n), sizeof(*s->due));
	if (!s->nodes || !s->bucket || !s->watches || !s->in || !s->due)
		return -1;
	keep_buf_init(&s->buf, KEEP_NODEOBJ_MAX);
	for (i = 0; i < s->n; i++) {
		struct snode *nd = &s->nodes[i];
		struct keep_node_obj tmpl;
		uint64_t a = rng_next(&s->rng), b = rng_next(&s->rng);

		/* ids sort as their index: "n" and 7 digits (lease-write's
		 * template: a 32-hex instance, a host name of a cloud VM, a pid
		 * and a software token as lib/platform/version.c's keep_software() makes
		 * it, at a fixed version: the bytes counted do not move with
		 * VERSION, and docs/scale.md's table stays the model's) */
		snprintf(nd->id, sizeof(nd->id), "n%07" PRId64, i);
		memset(&tmpl, 0, sizeof(tmpl));
		snprintf(tmpl.node, sizeof(tmpl.node), "%s", nd->id);
		snprintf(tmpl.instance, sizeof(tmpl.instance), "%016" PRIx64 "%016" PRIx64, a, b);
		snprintf(tmpl.host, sizeof(tmpl.host), "ip-10-%d-%d-%d.ec2.internal",
			 (int)(i >> 16 & 255), (int)(i >> 8 & 255), (int)(i & 255));
		tmpl.pid = 100000 + i % 900000;
		snprintf(tmpl.software, sizeof(tmpl.software), "keep/%s", SCALE_SOFTWARE_VERSION);
		nd->start_ms = rng_upto(s, s->t.period_ms - 1);
		nd->w = -1;
		keep_lease_init(&nd->sm, &s->t, &tmpl, mono_of(nd->start_ms));
		s->due[2 * i] = NEVER;
		s->due[2 * i + 1] = NEVER;
	}
	for (wi = 0; wi < s->nw; wi++) {
		struct swatch *w = &s->watches[wi];

		/* evenly spaced: node wi * n / nw */
		w->node = wi * s->n / s->nw;
		s->nodes[w->node].w = wi;
		w->peers = calloc((size_t)s->n, sizeof(*w->peers));
		if (!w->peers)
			return -1;
		keep_watch_init(&w->kw, &s->t, s->nodes[w->node].id);
		w->fence_wait = NEVER;
		/* node-watch starts beside lease-write and lists at once */
		keep_watch_sched_init(&w->sched, &s->t, mono_of(s->nodes[w->node].start_ms));
		if (s->o.mode == SCALE_RING) {
			keep_watch_set_ring(&w->kw, (int)s->o.successors);
			keep_watch_sched_ring(&w->sched, s->o.full_every);
		}
	}
	for (i = 0; i < s->n; i++) {
		s->now = 0;
		if (heap_push(s, s->nodes[i].start_ms, 2 * i))
			return -1;
		s->due[2 * i] = s->nodes[i].start_ms;
	}
	for (wi = 0; wi < s->nw; wi++) {
		int64_t first = true_of(s->watches[wi].sched.next_pass_mono_ms);

		if (heap_push(s, first, 2 * wi + 1))
			return -1;
		s->due[2 * wi + 1] = first;
	}
	return 0;
}

/* The victim: a node in the middle whose watch is not played (so the
 * sample stays whole), or the middle node when every watch is played; in
 * ring mode the node right after a played watch, whose first successor it
 * is (the ids sort as their index). */
static int64_t pick_victim(const struct scale *s)
{
	int64_t v = s->n / 2;

	if (s->o.mode == SCALE_RING && s->nw < s->n) {
		v = s->watches[s->nw / 2].node + 1;
		if (v < s->n && s->nodes[v].w < 0)
			return v;
		v = s->n / 2;
	}
	while (s->nw < s->n && s->nodes[v].w >= 0)
		v = (v + 1) % s->n;
	return v;
}

int scale_run(const struct scale_opts *o, FILE *out)
{
	struct scale s;
	int64_t i, period, warm, end, deadline, floor_ms, last_written, cand_ms, bound_ms;
	double periods, pw, rq, secs;
	struct counts *l, *wc;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	s.o = *o;
	keep_timing_defaults(&s.t);
	s.n = o->nodes;
	s.nw = o->sample > 0 && o->sample < o->nodes ? o->sample : o->nodes;
	s.rng = o->seed;
	s.victim = -1;
	s.fenced_at = NEVER;
	period = s.t.period_ms;
	if (setup(&s) != 0) {
		scale_free(&s);
		return -1;
	}
	/* warm-up: every lease through its start check (ttl + grace) and
	 * live, then three periods: every watch has seen every node by one
	 * period after its first write, and a watch that first saw a node
	 * right after one of its writes may take it for a candidate up to
	 * write_every + attempt_timeout later (start_candidates;
	 * docs/scale.md "Candidates at the start of a watch") */
	warm = 0;
	for (;;) {
		bool all = true;

		warm += period;
		if (run_until(&s, warm, false) != 0)
			goto nomem;
		for (i = 0; i < s.n && all; i++)
			all = s.nodes[i].sm.phase == KEEP_LEASE_LIVE;
		if (all)
			break;
		if (warm > 20 * keep_timing_takeover_ms(&s.t)) {
			fprintf(out, "scale-model error: not every lease went live\n");
			scale_free(&s);
			return 1;
		}
	}
	warm += 3 * period;
	if (o->mode == SCALE_RING)
		warm += o->full_every * period; /* every watch listed the whole cluster */
	if (run_until(&s, warm, false) != 0)
		goto nomem;
	/* the counted window */
	s.phase = PH_STEADY;
	s.counting = true;
	end = warm + o->periods * period;
	if (run_until(&s, end, false) != 0)
		goto nomem;
	s.counting = false;
	for (i = 0; i < s.n; i++) {
		if (s.nodes[i].sm.phase != KEEP_LEASE_LIVE) {
			fprintf(out, "scale-model error: node %s not live at steady state (%s)\n",
				s.nodes[i].id, keep_lease_phase_name(s.nodes[i].sm.phase));
			rc = 1;
		}
	}
	/* kill one node at a random phase of a period: its lease-write and its
	 * watch stop; run until its fence lands (or the bound is long past) */
	s.victim = pick_victim(&s);
	s.kill_at = end + rng_upto(&s, period - 1);
	if (run_until(&s, s.kill_at, false) != 0)
		goto nomem;
	s.nodes[s.victim].dead = true;
	if (o->kill_watchers) /* its watchers: the K nodes before it (ids sort as index) */
		for (i = 1; i <= o->successors; i++)
			s.nodes[(s.victim - i + s.n) % s.n].dead = true;
	memset(&s.fence_c, 0, sizeof(s.fence_c)); /* the death's fence requests */
	s.landed = 0;
	last_written = s.bucket[s.victim].obj.written_at_ms;
	/* the liveness bound (docs/fencing.md "Ring mode"), on the wall clock
	 * of the writes: a candidate within 2 periods + write_every + attempt
	 * timeout of the last write while a watcher lives (full mode: every
	 * peer watches), within 3 x full_every periods when they all died with
	 * it; the fence at max(that, the floor) + a read and a write (an
	 * attempt timeout each) */
	floor_ms = last_written + keep_timing_takeover_ms(&s.t);
	cand_ms = o->mode == SCALE_RING && o->kill_watchers
		      ? last_written + 3 * o->full_every * period
		      : last_written + 2 * period + keep_timing_write_every_ms(&s.t) +
			    keep_timing_attempt_timeout_ms(&s.t);
	bound_ms =
	    (cand_ms > floor_ms ? cand_ms : floor_ms) + 2 * keep_timing_attempt_timeout_ms(&s.t);
	deadline = s.kill_at + (bound_ms - last_written) + 10 * period;
	if (run_until(&s, deadline, true) != 0)
		goto nomem;
	/* the fencers still racing finish their reads and writes */
	if (s.fenced_at != NEVER && run_until(&s, s.fenced_at + period, false) != 0)
		goto nomem;

	periods = (double)o->periods;
	pw = periods * (double)s.nw;
	l = &s.lease_c;
	wc = &s.watch_c;
	secs = (double)period / 1000.0;
	{
		double put = per(l->put + wc->put, periods * (double)s.n);
		double get = per(l->get, periods * (double)s.n) + per(wc->get, pw);
		double lst = per(wc->list_pages, pw);
		double keys = per(wc->keys_listed, pw);
		double sent = per(l->bytes_sent, periods * (double)s.n) + per(wc->bytes_sent, pw);
		double recv = per(l->bytes_recv, periods * (double)s.n) + per(wc->bytes_recv, pw);
		double cn = (double)s.n;
		double s3, r2;
		char ringdesc[64] = "";

		if (o->mode == SCALE_RING)
			snprintf(ringdesc, sizeof(ringdesc),
				 " successors=%" PRId64 " full_every=%" PRId64, o->successors,
				 o->full_every);

		rq = put + get + lst;
		s3 = cn / secs * MONTH_S * ((put + lst) * S3_CLASS_A_USD + get * S3_CLASS_B_USD);
		r2 = cn / secs * MONTH_S * ((put + lst) * R2_CLASS_A_USD + get * R2_CLASS_B_USD);
		fprintf(out,
			"scale-model mode=%s%s nodes=%" PRId64 " played=%" PRId64
			" periods=%" PRId64 " period_ms=%" PRId64 " jitter_ms=%" PRId64
			" put_per_node_period=%.3f get_per_node_period=%.3f"
			" list_pages_per_node_period=%.3f keys_listed_per_node_period=%.1f"
			" requests_per_node_period=%.3f bytes_sent_per_node_period=%.0f"
			" bytes_received_per_node_period=%.0f cluster_put_per_s=%.1f"
			" cluster_get_per_s=%.1f cluster_list_per_s=%.1f"
			" cluster_requests_per_s=%.1f cluster_keys_listed_per_period=%.0f"
			" s3_usd_month=%.0f r2_usd_month=%.0f",
			scale_mode_name(o->mode), ringdesc, s.n, s.nw, o->periods, period,
			o->jitter_ms, put, get, lst, keys, rq, sent, recv, cn * put / secs,
			cn * get / secs, cn * lst / secs, cn * rq / secs, cn * keys, s3, r2);
		if (s.fenced_at != NEVER)
			fprintf(out, " death_to_fence_ms=%" PRId64 " over_floor_ms=%" PRId64,
				s.fenced_at - s.kill_at, wall_of(s.fenced_at) - floor_ms);
		else
			fprintf(out, " death_to_fence_ms=- over_floor_ms=-");
		fprintf(out,
			" fencers=%" PRId64 " fence_reads=%" PRIu64 " fence_writes=%" PRIu64
			" fences_landed=%" PRId64 " start_candidates=%" PRId64
			" false_candidates=%" PRId64 " bound_over_floor_ms=%" PRId64,
			s.fencers, s.fence_c.get, s.fence_c.put, s.landed, s.start_stale,
			s.false_stale, bound_ms - floor_ms);
		if (o->kill_watchers)
			fprintf(out, " watchers_killed=%" PRId64, o->successors);
		fprintf(out, "\n");
		if (s.false_stale) {
			fprintf(out,
				"scale-model error: %" PRId64
				" stale candidates of live nodes at steady state\n",
				s.false_stale);
			rc = 1;
		}
		if (s.fenced_at == NEVER) {
			fprintf(out,
				"scale-model error: node %s killed at %" PRId64
				" ms was not fenced within its liveness bound + 10 periods\n",
				s.nodes[s.victim].id, s.kill_at);
			rc = 1;
		} else if (wall_of(s.fenced_at) > bound_ms) {
			fprintf(out,
				"scale-model error: node %s fenced %" PRId64
				" ms after its liveness bound (docs/fencing.md \"Ring mode\")\n",
				s.nodes[s.victim].id, wall_of(s.fenced_at) - bound_ms);
			rc = 1;
		} else if (wall_of(s.fenced_at) < floor_ms) {
			fprintf(out,
				"scale-model error: node %s fenced %" PRId64
				" ms before its last written_at + ttl + grace\n",
				s.nodes[s.victim].id, floor_ms - wall_of(s.fenced_at));
			rc = 1;
		}
	}
	scale_free(&s);
	return rc;
nomem:
	scale_free(&s);
	return -1;
}
