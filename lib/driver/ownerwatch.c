/* keep — owner-watch's driver (ADR 0020 §2, §3; docs/ownership.md
 * "Watching owners"). See ownerwatch.h. */
#include "ownerwatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../core/fence.h"
#include "../core/listing.h"
#include "../core/watchlist.h"
#include "../local/holds.h"
#include "../platform/clock.h"
#include "cli.h"
#include "ownstore.h"
#include "storecmd.h"

/* One record as a pass left it. */
struct keep_ownerwatch_rec {
	char key[KEEP_OWNER_KEY_MAX + 1]; /* the actor key (owners/ stripped) */
	char version[KEEP_VERSION_MAX];	  /* the body's version; "" none held */
	struct keep_owner_view v;
	bool read_failed;		/* --once: the read failed (shown unreadable) */
	char why[KEEP_DETAIL_MAX + 64]; /* unreadable: why */
};

/* A holder's node object as a pass left it. */
struct keep_ownerwatch_node {
	char node[KEEP_NODE_ID_MAX + 1];
	char version[KEEP_VERSION_MAX]; /* the body's version; "" none held */
	bool known;			/* present/obj below say what it is */
	bool present;			/* listed and read (false: absent) */
	bool decoded;			/* obj holds the object */
	struct keep_node_obj obj;
};

/* GET owners/<key> into r (keep_owner_read). *outcome gets the GET's
 * outcome. listed: the version token the listing showed. A body that is not
 * a record is named on stderr, once per version: an object no object of
 * keep's can be (over KEEP_BODY_MAX) reads with no version, so the listed
 * token stands for it and it is not read again until it changes (issue 16:
 * reported and skipped, --once exits 17). */
static void read_record(struct keep_ownerwatch *d, const char *key, const char *listed,
			struct keep_ownerwatch_rec *r, enum keep_outcome *outcome)
{
	char shown[KEEP_OWNER_KEY_MAX * 4 + 8];

	struct keep_owner_read orr;

	memset(&r->v, 0, sizeof(r->v));
	keep_owner_read(d->store, key, &r->v.rec, &orr);
	*outcome = orr.reply.outcome;
	r->version[0] = '\0';
	r->why[0] = '\0';
	r->read_failed = false;
	r->v.seen = true;
	r->v.readable = orr.ok;
	if (orr.reply.outcome != KEEP_STORE_OK) {
		snprintf(r->why, sizeof(r->why), "read %s", orr.why);
		r->read_failed = true;
		return;
	}
	snprintf(r->version, sizeof(r->version), "%s",
		 keep_watchlist_body_version(orr.reply.not_ours, listed, orr.reply.version));
	if (orr.ok)
		return;
	if (orr.reply.not_ours)
		snprintf(r->why, sizeof(r->why), "%s", orr.why);
	else
		snprintf(r->why, sizeof(r->why), "%s",
			 orr.derr == KEEP_ERR_NOTOURS ? "not an ownership record" : orr.why);
	keep_warn(d->prog, "owners/%s is not a keep ownership record: %s",
		  keep_line_escaped(key, shown, sizeof(shown)), r->why);
}

/* GET nodes/<n->node> into n (keep_node_read: the object must name it). */
static void read_node(struct keep_ownerwatch *d, struct keep_ownerwatch_node *n)
{
	struct keep_node_read nr;

	keep_node_read(d->store, n->node, KEEP_NODE_READ_ANY_FORMAT, &n->obj, &nr);
	n->version[0] = '\0';
	n->known = n->present = n->decoded = false;
	if (nr.reply.outcome == KEEP_STORE_NOT_FOUND) {
		n->known = true; /* gone since the listing: absent */
		return;
	}
	if (nr.reply.outcome != KEEP_STORE_OK)
		return; /* unknown: retried next pass */
	snprintf(n->version, sizeof(n->version), "%s", nr.reply.version);
	n->known = n->present = true;
	n->decoded = nr.ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* bsearch(3) comparators: a key (const char *) against an element. */
static int cmp_nd(const void *key, const void *elem)
{
	return strcmp(key, ((const struct keep_ownerwatch_node *)elem)->node);
}

static int cmp_listed(const void *key, const void *elem)
{
	return strcmp(key, ((const struct keep_list_entry *)elem)->key);
}

/* The index of node in the sorted nodes[], or -1. */
static long find_node(const struct keep_ownerwatch_node *v, size_t n, const char *node)
{
	const struct keep_ownerwatch_node *x = n ? bsearch(node, v, n, sizeof(*v), cmp_nd) : NULL;

	return x ? (long)(x - v) : -1;
}

/* The listed entry of key in the sorted l, or NULL. */
static const struct keep_list_entry *find_listed(const struct keep_list *l, const char *key)
{
	return l->n ? bsearch(key, l->v, l->n, sizeof(*l->v), cmp_listed) : NULL;
}

static int list(struct keep_ownerwatch *d, const char *prefix, struct keep_list *l)
{
	struct keep_reply r;

	keep_store_set_timeout(d->store, keep_timing_attempt_timeout_ms(&d->cfg.timing));
	keep_store_list(d->store, prefix, l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(d->prog, "unable to list %s: %s: %s", prefix,
			  keep_outcome_name(r.outcome), r.detail);
		return keep_exit_of_reply(&r); /* 1 refused, 111 for now */
	}
	return 0;
}

/* The holders of this pass: nodes/ listed once, each holder's object read
 * when keep_listing_need_read says so. *nout owned by the caller. */
static int read_holders(struct keep_ownerwatch *d, struct keep_ownerwatch_rec *recs, size_t n,
			struct keep_ownerwatch_node **out, size_t *nout)
{
	struct keep_list l;
	const char **ids = NULL;
	struct keep_ownerwatch_node *nv = NULL;
	size_t i, nids = 0, m = 0;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < n; i++)
		if (recs[i].v.readable && recs[i].v.rec.held)
			nids++;
	if (nids == 0)
		return 0;
	ids = calloc(nids, sizeof(*ids));
	nv = calloc(nids, sizeof(*nv));
	if (!ids || !nv) {
		free(ids);
		free(nv);
		keep_warn(d->prog, "out of memory");
		return KEEP_EXIT_TEMP;
	}
	nids = 0;
	for (i = 0; i < n; i++)
		if (recs[i].v.readable && recs[i].v.rec.held)
			ids[nids++] = recs[i].v.rec.node;
	qsort(ids, nids, sizeof(*ids), cmp_str);
	keep_list_init(&l);
	rc = list(d, "nodes/", &l);
	if (rc)
		goto out;
	for (i = 0; i < nids; i++) {
		char key[KEEP_NODE_ID_MAX + 8];
		const struct keep_list_entry *e;
		long p;
		struct keep_ownerwatch_node *x;

		if (i > 0 && strcmp(ids[i], ids[i - 1]) == 0)
			continue;
		x = &nv[m++];
		snprintf(x->node, sizeof(x->node), "%s", ids[i]);
		snprintf(key, sizeof(key), "nodes/%s", ids[i]);
		p = find_node(d->nodes, d->nnodes, ids[i]);
		e = find_listed(&l, key);
		if (!e) {
			x->known = true; /* absent */
			continue;
		}
		if (!keep_listing_need_read(p >= 0 ? d->nodes[p].version : NULL, e->version,
					    true)) {
			*x = d->nodes[p];
			continue;
		}
		read_node(d, x); /* not found: known absent, a result */
		if (keep_watchlist_keep(false, !x->known, p >= 0 && d->nodes[p].known, false,
					false) == KEEP_WL_KEEP_PREV)
			*x = d->nodes[p]; /* the read failed: what we knew, retried next pass */
	}
out:
	keep_list_release(&l);
	free(ids);
	if (rc) {
		free(nv);
		return rc;
	}
	*out = nv;
	*nout = m;
	return 0;
}

/* One pass: the new records and holders into *recs_out and *nodes_out (owned by
 * the caller). every: --once (a failed read is kept as an unreadable line).
 * 0, or KEEP_EXIT_TEMP when a listing failed (nothing kept). */
static int pass(struct keep_ownerwatch *d, bool every, struct keep_ownerwatch_rec **recs_out,
		size_t *nrecs_out, struct keep_ownerwatch_node **nodes_out, size_t *nnodes_out)
{
	struct keep_list l;
	struct keep_wl_prev *prev = NULL;
	struct keep_wl_item *items = NULL;
	struct keep_ownerwatch_rec *nr = NULL;
	struct keep_ownerwatch_node *nodes = NULL;
	size_t i, n = 0, m = 0, nnodes = 0;
	int rc;

	*recs_out = NULL;
	*nodes_out = NULL;
	*nrecs_out = *nnodes_out = 0;
	keep_list_init(&l);
	rc = list(d, d->list_prefix, &l);
	if (rc)
		goto out;
	prev = calloc(d->nrecs + 1, sizeof(*prev));
	items = calloc(l.n + 1, sizeof(*items));
	nr = calloc(l.n + 1, sizeof(*nr));
	if (!prev || !items || !nr) {
		keep_warn(d->prog, "out of memory");
		rc = KEEP_EXIT_TEMP;
		goto out;
	}
	for (i = 0; i < d->nrecs; i++) {
		prev[i].key = d->recs[i].key;
		prev[i].body_version = d->recs[i].version;
	}
	for (i = 0; i < l.n; i++) {
		/* under PREFIX, and a valid actor key; anything else (a
		 * deeper key, a stray object) is not a record: skipped */
		const char *k = keep_watchlist_record(l.v[i].key, d->want_prefix);

		if (!k)
			continue;
		items[n].key = k;
		items[n].listed = l.v[i].version;
		items[n].wanted = true;
		n++;
	}
	keep_watchlist_plan(prev, every ? 0 : d->nrecs, items, n);
	for (i = 0; i < n; i++) {
		struct keep_ownerwatch_rec *r = &nr[m];
		const struct keep_ownerwatch_rec *p =
		    items[i].prev != KEEP_WL_NONE && !every ? &d->recs[items[i].prev] : NULL;
		enum keep_outcome o;

		if (!items[i].read) {
			*r = *p; /* the body held is at the listed version */
			m++;
			continue;
		}
		snprintf(r->key, sizeof(r->key), "%s", items[i].key);
		read_record(d, items[i].key, items[i].listed, r, &o);
		switch (keep_watchlist_keep(o == KEEP_STORE_NOT_FOUND, r->read_failed, p != NULL,
					    true, every)) {
		case KEEP_WL_KEEP_DROP:
			continue; /* gone since the listing, or not seen yet: next pass */
		case KEEP_WL_KEEP_PREV:
			*r = *p; /* what we knew; read again next pass */
			break;
		case KEEP_WL_KEEP_NEW:
			break;
		}
		m++;
	}
	rc = read_holders(d, nr, m, &nodes, &nnodes);
	if (rc)
		goto out;
	for (i = 0; i < m; i++) {
		struct keep_owner_view *v = &nr[i].v;
		const struct keep_ownerwatch_node *x;
		long p;

		v->holder = KEEP_HOLDER_NONE;
		if (!v->readable || !v->rec.held)
			continue;
		p = find_node(nodes, nnodes, v->rec.node);
		x = p >= 0 ? &nodes[p] : NULL;
		v->holder = keep_holder_of_known(v->rec.instance, x && x->known, x && x->present,
						 x && x->decoded ? &x->obj : NULL, every);
	}
	*recs_out = nr;
	*nrecs_out = m;
	*nodes_out = nodes;
	*nnodes_out = nnodes;
	nr = NULL;
out:
	free(nr);
	free(items);
	free(prev);
	keep_list_release(&l);
	return rc;
}

/* Emit the line begun in b: 0, or KEEP_EXIT_TEMP when stdout is closed. */
static int emit(struct keep_buf *b)
{
	return keep_line_end(b) == 0 ? 0 : KEEP_EXIT_TEMP;
}

/* Is the record of r free now (owner-show's free=)? keep_owner_view_free
 * on what the last pass knows of its holder's node. */
static bool is_free(const struct keep_ownerwatch *d, const struct keep_ownerwatch_rec *r,
		    int64_t wall)
{
	long p =
	    r->v.readable && r->v.rec.held ? find_node(d->nodes, d->nnodes, r->v.rec.node) : -1;
	const struct keep_ownerwatch_node *x = p >= 0 ? &d->nodes[p] : NULL;

	return keep_owner_view_free(&r->v, x && x->known, x && x->present,
				    x && x->decoded ? &x->obj : NULL, wall, &d->cfg.timing);
}

static const char *state_of(const struct keep_ownerwatch_rec *r)
{
	return !r->v.readable ? "unreadable" : r->v.rec.held ? "held" : "nobody";
}

static int print_owner_line(struct keep_ownerwatch *d, const struct keep_ownerwatch_rec *r,
			    int64_t wall)
{
	const struct keep_owner_rec *x = &r->v.rec;
	bool held = r->v.readable && x->held;
	struct keep_buf b;

	keep_line_begin_fmt(&b, "owner", d->fmt);
	keep_line_str(&b, "key", r->key);
	keep_line_str(&b, "state", state_of(r));
	keep_line_str(&b, "node", held ? x->node : NULL);
	keep_line_str(&b, "instance", held ? x->instance : NULL);
	if (r->v.readable)
		keep_line_int(&b, "generation", x->generation);
	else
		keep_line_str(&b, "generation", NULL);
	/* a holder not read yet (its read failed) shows as unreadable */
	keep_line_str(&b, "holder",
		      !held ? NULL
		      : r->v.holder == KEEP_HOLDER_UNKNOWN
			  ? keep_holder_name(KEEP_HOLDER_UNREADABLE)
			  : keep_holder_name(r->v.holder));
	keep_line_bool(&b, "free", is_free(d, r, wall));
	if (!r->v.readable)
		keep_line_str(&b, "reason", r->why);
	return emit(&b);
}

static int print_table(struct keep_ownerwatch *d, int64_t wall)
{
	size_t i;

	printf("%-40s %-10s %-20s %-10s %-20s %-4s %s\n", "KEY", "STATE", "NODE", "GENERATION",
	       "HOLDER", "FREE", "NOTE");
	for (i = 0; i < d->nrecs; i++) {
		const struct keep_ownerwatch_rec *r = &d->recs[i];
		bool held = r->v.readable && r->v.rec.held;
		char gen[32];

		snprintf(gen, sizeof(gen), "%lld", (long long)r->v.rec.generation);
		printf("%-40s %-10s %-20s %-10s %-20s ", r->key, state_of(r),
		       held ? r->v.rec.node : "-", r->v.readable ? gen : "-",
		       held ? keep_holder_name(r->v.holder) : "-");
		if (r->v.readable)
			printf("%s\n", is_free(d, r, wall) ? "yes" : "no");
		else
			printf("%-4s %s\n", "no", r->why);
	}
	return fflush(stdout) == 0 ? 0 : KEEP_EXIT_TEMP;
}

static int print_event(struct keep_ownerwatch *d, const char *key, const struct keep_owe *e,
		       const char *why)
{
	struct keep_buf b;

	keep_line_begin_fmt(&b, keep_owe_name(e->kind, e->holder), d->fmt);
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "node", e->node[0] ? e->node : NULL);
	keep_line_str(&b, "instance", e->instance[0] ? e->instance : NULL);
	if (e->generation > 0)
		keep_line_int(&b, "generation", e->generation);
	else
		keep_line_str(&b, "generation", NULL);
	if (e->kind == KEEP_OWE_ACQUIRED || e->kind == KEEP_OWE_RECREATED)
		keep_line_str(&b, "previous_node", e->previous_node[0] ? e->previous_node : NULL);
	if (e->kind == KEEP_OWE_RECREATED)
		keep_line_int(&b, "previous_generation", e->previous_generation);
	if (e->kind == KEEP_OWE_ACQUIRED || e->kind == KEEP_OWE_RELEASED)
		keep_line_int(&b, "missed", e->missed);
	if (e->kind == KEEP_OWE_UNREADABLE)
		keep_line_str(&b, "reason", why);
	return emit(&b);
}

/* The events between the last pass (d->recs) and this one (nr), in key
 * order. 0 or KEEP_EXIT_TEMP (stdout closed). */
static int print_events(struct keep_ownerwatch *d, struct keep_ownerwatch_rec *nr, size_t n)
{
	static const struct keep_owner_view unseen;
	size_t i = 0, j = 0, k, ne;
	int rc = 0;

	while (!rc && (i < d->nrecs || j < n)) {
		struct keep_owe ev[KEEP_OWE_MAX];
		struct keep_owner_view gone = unseen;
		int c = i >= d->nrecs ? 1 : j >= n ? -1 : strcmp(d->recs[i].key, nr[j].key);
		const char *key, *why = "";

		if (c < 0) {
			ne = keep_owner_watch_diff(&d->recs[i].v, &gone, ev);
			key = d->recs[i++].key;
		} else if (c > 0) {
			ne = keep_owner_watch_diff(&unseen, &nr[j].v, ev);
			why = nr[j].why;
			key = nr[j++].key;
		} else {
			ne = keep_owner_watch_diff(&d->recs[i++].v, &nr[j].v, ev);
			why = nr[j].why;
			key = nr[j++].key;
		}
		for (k = 0; k < ne && !rc; k++)
			rc = print_event(d, key, &ev[k], why);
	}
	return rc;
}

/* Replace the last pass with this one. */
static void commit(struct keep_ownerwatch *d, struct keep_ownerwatch_rec *nr, size_t n,
		   struct keep_ownerwatch_node *nodes, size_t nn)
{
	free(d->recs);
	free(d->nodes);
	d->recs = nr;
	d->nrecs = n;
	d->nodes = nodes;
	d->nnodes = nn;
}

int keep_ownerwatch_once(struct keep_ownerwatch *d, bool table)
{
	struct keep_ownerwatch_rec *nr;
	struct keep_ownerwatch_node *nodes;
	size_t n, nn, i;
	int64_t wall;
	int rc, prc = 0;
	struct keep_owner_once once = {0};

	rc = pass(d, true, &nr, &n, &nodes, &nn);
	if (rc)
		return rc;
	commit(d, nr, n, nodes, nn);
	wall = keep_judge_wall_cfg(&d->cfg);
	if (table)
		prc = print_table(d, wall);
	for (i = 0; i < d->nrecs; i++) {
		const struct keep_ownerwatch_rec *r = &d->recs[i];

		if (!table && !prc)
			prc = print_owner_line(d, r, wall);
		long p = r->v.readable && r->v.rec.held && r->v.holder == KEEP_HOLDER_UNREADABLE
			     ? find_node(d->nodes, d->nnodes, r->v.rec.node)
			     : -1; /* only asked of such a record */

		keep_owner_once_add(&once, r->read_failed, &r->v, p >= 0 && d->nodes[p].known);
	}
	return prc ? prc : keep_owner_once_exit(&once);
}

int keep_ownerwatch_follow(struct keep_ownerwatch *d)
{
	int64_t next_pass = keep_boot_ms();
	bool synced = false;
	int rc = 0;

	while (!keep_stop_flag && !rc) {
		int64_t now = keep_boot_ms();
		struct keep_ownerwatch_rec *nr;
		struct keep_ownerwatch_node *nodes;
		size_t n, nn, i;

		if (now < next_pass) {
			keep_sleep_until_boot(next_pass);
			continue;
		}
		next_pass = keep_owner_watch_next_pass_ms(now, &d->cfg.timing);
		if (pass(d, false, &nr, &n, &nodes, &nn) != 0)
			continue; /* warned; the last pass stays as it was */
		if (synced) {
			rc = print_events(d, nr, n);
			commit(d, nr, n, nodes, nn);
			continue;
		}
		/* the first pass: the table, then `synced`; events from here on */
		for (i = 0; i < n; i++)
			keep_owner_watch_baseline(&nr[i].v);
		commit(d, nr, n, nodes, nn);
		{
			int64_t wall = keep_judge_wall_cfg(&d->cfg);
			struct keep_buf b;

			for (i = 0; i < d->nrecs && !rc; i++)
				rc = print_owner_line(d, &d->recs[i], wall);
			keep_line_begin_fmt(&b, "synced", d->fmt);
			keep_line_int(&b, "keys", (int64_t)d->nrecs);
			if (!rc)
				rc = emit(&b);
			else
				keep_buf_release(&b);
		}
		synced = true;
	}
	if (rc)
		keep_warn(d->prog, "stdout closed: stopping");
	return rc;
}

void keep_ownerwatch_init(struct keep_ownerwatch *d, const char *prog)
{
	memset(d, 0, sizeof(*d));
	d->prog = prog;
}

void keep_ownerwatch_scope(struct keep_ownerwatch *d, const char *prefix)
{
	d->prefix = prefix;
	keep_watchlist_scope(prefix, d->list_prefix, sizeof(d->list_prefix), d->want_prefix,
			     sizeof(d->want_prefix));
}

void keep_ownerwatch_release(struct keep_ownerwatch *d)
{
	commit(d, NULL, 0, NULL, 0);
	keep_store_free(d->store);
	d->store = NULL;
}
