/* keep — node-watch's driver (ADR 0020 §2, §6; docs/fencing.md). See
 * nodewatch.h. */
#include "nodewatch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../core/fence.h"
#include "../core/fencer.h"
#include "../core/listing.h"
#include "../local/holds.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "batch.h"
#include "cli.h"
#include "staleline.h"
#include "storecmd.h"

static int cmp_seen(const void *key, const void *elem)
{
	return strcmp(key, ((const struct keep_nodewatch_seen *)elem)->node);
}

/* The last pass's entry for node (bsearch(3): d->prev is sorted), or NULL. */
static const struct keep_nodewatch_seen *prev_of(const struct keep_nodewatch *d, const char *node)
{
	return d->nprev ? bsearch(node, d->prev, d->nprev, sizeof(*d->prev), cmp_seen) : NULL;
}

/* Does this pass need node's body? The rule is lib/core/listing.c's
 * (docs/fencing.md, "Reading only what changed"); every: --once. */
static bool need_body(const struct keep_nodewatch_seen *p, const char *listed, bool every,
		      bool *wrote)
{
	struct keep_listed k;

	if (p) {
		k.listed = p->listed;
		k.body_version = p->body_version;
		k.decoded = p->decoded;
		k.obj = &p->obj;
	}
	return keep_listing_need_body(p ? &k : NULL, listed, every, wrote);
}

/* Warn about the keys a listing of nodes/ skipped, once per change of
 * what was skipped (not every period), and gauge how many. */
static void report_skipped(struct keep_nodewatch *d, const struct keep_list *l)
{
	char fp[sizeof(d->skipped_seen)];

	snprintf(fp, sizeof(fp), "%zu %s", l->nskipped, l->nskipped ? l->skipped[0].key : "");
	if (strcmp(fp, d->skipped_seen) != 0) {
		keep_warn_skipped(d->prog, "nodes/", l);
		snprintf(d->skipped_seen, sizeof(d->skipped_seen), "%s", fp);
	}
	keep_metrics_set(&d->metrics, "keep_list_skipped_keys", (int64_t)l->nskipped);
}

static void write_watch_state(struct keep_nodewatch *d);

/* --follow: rewrite the watch state when a heartbeat period has passed
 * since its last write (nothing else changed: the heartbeat alone). Also
 * in the reads of the first pass, before any state was written: a first
 * pass that reads every node of a large cluster is progress too (its
 * listing succeeded: listing=ok, the truth so far). */
static void watch_beat(struct keep_nodewatch *d)
{
	if (d->beating &&
	    keep_timing_heartbeat_due(d->beat_mono_ms, keep_boot_ms(), &d->cfg.timing))
		write_watch_state(d);
}

void keep_nodewatch_on_page(void *arg, size_t pages)
{
	(void)pages;
	watch_beat(arg);
}

/* List nodes/ and read the bodies needed (every one when every). 0, or the
 * listing's exit code (keep_exit_of_reply: 1 refused, 111 ambiguous) when
 * it failed: the last pass is kept, the failure in d->last_failure. */
static int read_all(struct keep_nodewatch *d, bool every)
{
	struct keep_list l;
	struct keep_reply r;
	size_t i;

	keep_list_init(&l);
	keep_store_set_timeout(d->store, keep_timing_attempt_timeout_ms(&d->cfg.timing));
	keep_store_list(d->store, "nodes/", &l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		snprintf(d->last_failure, sizeof(d->last_failure), "%s: %s",
			 keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
		keep_warn(d->prog, "unable to list nodes/: %s", d->last_failure);
		keep_list_release(&l);
		return keep_exit_of_reply(&r);
	}
	report_skipped(d, &l);
	/* this pass's array: the last pass's becomes d->prev */
	{
		struct keep_nodewatch_seen *t = d->prev;
		size_t ta = d->prevalloc;

		d->prev = d->v;
		d->prevalloc = d->alloc;
		d->nprev = d->n;
		d->v = t;
		d->alloc = ta;
		d->n = 0;
	}
	if (l.n > d->alloc) {
		struct keep_nodewatch_seen *nv = realloc(d->v, l.n * sizeof(*nv));
		if (!nv) {
			keep_list_release(&l);
			keep_warn(d->prog, "out of memory");
			snprintf(d->last_failure, sizeof(d->last_failure), "out of memory");
			return KEEP_EXIT_TEMP;
		}
		d->v = nv;
		d->alloc = l.n;
	}
	for (i = 0; i < l.n; i++) {
		const char *id = keep_listing_node_id(l.v[i].key);
		const struct keep_nodewatch_seen *p;
		struct keep_node_read nr;
		struct keep_nodewatch_seen *s;
		bool wrote;

		if (!id)
			continue; /* not a node key (nodes/x/y, a bad id): not ours */
		s = &d->v[d->n];
		p = prev_of(d, id);
		if (!need_body(p, l.v[i].version, every, &wrote)) {
			/* known, and either a write landed (wrote) or the body we
			 * hold is at this very token and not live: keep it */
			*s = *p;
			snprintf(s->listed, sizeof(s->listed), "%s", l.v[i].version);
			s->wrote = wrote;
			d->n++;
			continue;
		}
		memset(s, 0, sizeof(*s));
		snprintf(s->node, sizeof(s->node), "%s", id);
		snprintf(s->listed, sizeof(s->listed), "%s", l.v[i].version);
		keep_node_read(d->store, id, KEEP_NODE_READ_ANY_FORMAT, &s->obj, &nr);
		watch_beat(d); /* a pass of many slow reads still beats each period */
		s->outcome = nr.reply.outcome;
		if (nr.reply.outcome == KEEP_STORE_OK)
			snprintf(s->body_version, sizeof(s->body_version), "%s", nr.reply.version);
		if (nr.reply.outcome == KEEP_STORE_NOT_FOUND)
			continue; /* gone since the listing */
		d->n++;
		if (nr.reply.outcome != KEEP_STORE_OK) {
			snprintf(s->why, sizeof(s->why), "read %s",
				 keep_outcome_name(nr.reply.outcome));
			s->read_exit = keep_exit_of_reply(&nr.reply);
			continue;
		}
		if (!nr.ok) {
			snprintf(s->why, sizeof(s->why), "%s",
				 nr.derr == KEEP_ERR_NOTOURS ? "not a node object" : nr.why);
			continue;
		}
		s->decoded = true;
	}
	keep_list_release(&l);
	return 0;
}

/* This node's lease now, from its lease state file, as its fencer sees it
 * (keep_lease_state_fencer_view): not valid without a node id or a file of
 * this node. */
static void self_lease(struct keep_nodewatch *d, int64_t now, bool *valid, int64_t *live_since)
{
	struct keep_lease_state st;
	struct keep_fencer me;
	bool ok = d->cfg.node_id[0] && keep_lease_state_read(d->node_dir, &st) == 0;

	/* on the boot clock read after the file, never earlier than now */
	now = keep_boot_ms() > now ? keep_boot_ms() : now;
	keep_lease_state_fencer_view(ok ? &st : NULL, d->cfg.node_id, now, d->boot_id, &me);
	*valid = me.valid;
	*live_since = me.live_since_mono_ms;
}

static int print_status_line(struct keep_nodewatch *d, const struct keep_nodewatch_seen *s,
			     int64_t wall)
{
	struct keep_buf b;
	enum keep_node_status st;
	int64_t age = 0, ahead = 0;
	int rc;

	st = keep_node_status(s->decoded ? &s->obj : NULL, wall, &d->cfg.timing, false);
	if (s->decoded)
		keep_node_age(s->obj.written_at_ms, wall, &age, &ahead);
	keep_line_begin_fmt(&b, "node", d->fmt);
	keep_line_str(&b, "id", s->node);
	keep_line_str(&b, "state", keep_node_status_name(st));
	if (!s->decoded) {
		keep_line_str(&b, "instance", NULL);
		keep_line_str(&b, "written_at_ms", NULL);
		keep_line_str(&b, "age_ms", NULL);
		keep_line_str(&b, "format", NULL);
		keep_line_str(&b, "reason", s->why);
	} else {
		/* "-": an operator fence of an absent object names no instance */
		keep_line_str(&b, "instance",
			      strcmp(s->obj.instance, "-") != 0 ? s->obj.instance : NULL);
		keep_line_int(&b, "written_at_ms", s->obj.written_at_ms);
		/* dated ahead of this clock: age 0, and ahead_ms at the end
		 * (keep_node_age) */
		keep_line_int(&b, "age_ms", age);
		keep_line_int(&b, "format", s->obj.format);
		if (st == KEEP_STATUS_FENCED) {
			keep_line_str(&b, "fenced_by",
				      s->obj.fenced_by[0] ? s->obj.fenced_by : NULL);
			if (s->obj.fenced_at_ms)
				keep_line_int(&b, "fenced_at_ms", s->obj.fenced_at_ms);
			else
				keep_line_str(&b, "fenced_at_ms", NULL);
		}
		if (st == KEEP_STATUS_FENCED || st == KEEP_STATUS_RELEASED)
			keep_line_int(&b, "free_at_ms",
				      keep_node_free_at_ms(&s->obj, &d->cfg.timing));
		if (ahead)
			keep_line_int(&b, "ahead_ms", ahead);
	}
	rc = keep_line_end(&b) == 0 ? 0 : KEEP_EXIT_TEMP;
	return rc;
}

/* AGE: ms (keep_node_age), or "ahead" when dated ahead of this clock
 * (NOTE says by how much). */
static void age_text(char *out, size_t n, int64_t ms, int64_t ahead)
{
	if (ahead)
		snprintf(out, n, "ahead");
	else if (ms < 100000)
		snprintf(out, n, "%lld.%01llds", (long long)(ms / 1000),
			 (long long)((ms % 1000) / 100));
	else
		snprintf(out, n, "%llds", (long long)(ms / 1000));
}

static int print_table(struct keep_nodewatch *d, int64_t wall)
{
	size_t i;

	printf("%-20s %-12s %-6s %-20s %-32s %-15s %-9s %s\n", "NODE", "STATE", "FORMAT", "HOST",
	       "INSTANCE", "WRITTEN_AT_MS", "AGE", "NOTE");
	for (i = 0; i < d->n; i++) {
		const struct keep_nodewatch_seen *s = &d->v[i];
		enum keep_node_status st =
		    keep_node_status(s->decoded ? &s->obj : NULL, wall, &d->cfg.timing, false);
		char age[32], note[200];
		int64_t age_ms, ahead;

		if (!s->decoded) {
			printf("%-20s %-12s %-6s %-20s %-32s %-15s %-9s %s\n", s->node,
			       keep_node_status_name(st), "-", "-", "-", "-", "-", s->why);
			continue;
		}
		keep_node_age(s->obj.written_at_ms, wall, &age_ms, &ahead);
		age_text(age, sizeof(age), age_ms, ahead);
		note[0] = '\0';
		if (st == KEEP_STATUS_FENCED) {
			/* when its records are free: ahead (in) or passed (since),
			 * never a negative count */
			int64_t left =
			    keep_sub_sat_ms(keep_node_free_at_ms(&s->obj, &d->cfg.timing), wall);

			if (left > 0)
				snprintf(note, sizeof(note), "by %s, free in %llds",
					 s->obj.fenced_by[0] ? s->obj.fenced_by : "?",
					 (long long)(keep_add_sat_ms(left, 999) / 1000));
			else
				snprintf(note, sizeof(note), "by %s, free since %llds",
					 s->obj.fenced_by[0] ? s->obj.fenced_by : "?",
					 (long long)(-left / 1000));
		} else if (st == KEEP_STATUS_RELEASED)
			snprintf(note, sizeof(note), "clean stop");
		else if (st == KEEP_STATUS_OLD_RUNNING)
			snprintf(note, sizeof(note), "ERROR: an old version is running");
		else if (st == KEEP_STATUS_OLD_RETIRED)
			snprintf(note, sizeof(note), "retired (old format)");
		if (ahead) {
			size_t l = strlen(note);

			snprintf(note + l, sizeof(note) - l,
				 "%swritten_at %llds ahead of this clock", l ? "; " : "",
				 (long long)(ahead / 1000));
		}
		printf("%-20s %-12s %-6d %-20s %-32s %-15lld %-9s %s\n", s->node,
		       keep_node_status_name(st), s->obj.format, s->obj.host[0] ? s->obj.host : "-",
		       s->obj.instance, (long long)s->obj.written_at_ms, age, note);
	}
	return fflush(stdout) == 0 ? 0 : KEEP_EXIT_TEMP;
}

int keep_nodewatch_once(struct keep_nodewatch *d, bool table)
{
	int64_t wall;
	size_t i;
	int rc = read_all(d, true), prc = 0, worst = KEEP_EXIT_OK;

	if (rc)
		return rc;
	wall = keep_judge_wall_cfg(&d->cfg);
	if (table) {
		prc = print_table(d, wall);
	} else {
		for (i = 0; i < d->n && !prc; i++)
			prc = print_status_line(d, &d->v[i], wall);
	}
	for (i = 0; i < d->n; i++)
		if (!d->v[i].decoded && d->v[i].read_exit)
			keep_exit_worst(&worst, d->v[i].read_exit);
	keep_reqstats_to_metrics(&d->stats, &d->metrics);
	keep_metrics_flush(&d->metrics);
	return prc ? prc : worst;
}

static int print_event(struct keep_nodewatch *d, const struct keep_watch_event *e)
{
	struct keep_buf b;
	int rc;

	if (e->kind == KEEP_WEV_STALE) {
		keep_stale_line_begin(&b, e); /* the one codec lease-fence decodes */
	} else {
		keep_line_begin(&b, keep_watch_event_name(e->kind));
		keep_line_str(&b, "node", e->node);
		keep_line_str(&b, "state", keep_node_status_name(e->status));
		keep_line_str(&b, "instance", e->instance);
		if (e->written_at_ms)
			keep_line_int(&b, "written_at_ms", e->written_at_ms);
		else
			keep_line_str(&b, "written_at_ms", NULL);
		if (e->format)
			keep_line_int(&b, "format", e->format);
		else
			keep_line_str(&b, "format", NULL);
	}
	rc = keep_line_end(&b) == 0 ? 0 : KEEP_EXIT_TEMP;
	if (e->kind != KEEP_WEV_LEAVE && e->kind != KEEP_WEV_STALE &&
	    e->status == KEEP_STATUS_OLD_RUNNING)
		keep_log(KEEP_LOG_ERROR, d->prog,
			 "nodes/%s is an old-format heartbeat that is fresh or "
			 "rewritten: an old version is running (ADR 0020 section 6)",
			 e->node);
	return rc;
}

/* Print a pass's or a tick's events. 0, or KEEP_EXIT_TEMP (stdout closed). */
static int print_events(struct keep_nodewatch *d, const struct keep_watch *w)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < w->nev && !rc; i++) {
		rc = print_event(d, &w->ev[i]);
		if (w->ev[i].kind == KEEP_WEV_STALE)
			keep_metrics_inc(&d->metrics, "keep_stale_candidates_total", 1);
	}
	return rc;
}

/* Write STATE_DIR/ID/watch (one line, the stdout line format):
 *   watch node=ID pid=P boot=B updated_mono_ms=U listing=ok|failing|failed
 *         since_mono_ms=M since_wall_ms=W failures=N reason=..
 * updated_mono_ms: now, on the boot clock (the heartbeat: readiness wants
 * it younger than 2 periods + the attempt timeout, docs/operations.md
 * "Readiness"); since_*: when the listings started failing (0 while ok). */
static void write_watch_state(struct keep_nodewatch *d)
{
	char path[KEEP_PATH_MAX + 100];
	struct keep_buf b;

	if (!d->cfg.node_id[0] || !d->node_dir[0])
		return;
	d->beat_mono_ms = keep_boot_ms();
	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, "watch");
	keep_line_str(&b, "node", d->cfg.node_id);
	keep_line_int(&b, "pid", (int64_t)getpid());
	keep_line_str(&b, "boot", d->boot_id);
	keep_line_int(&b, "updated_mono_ms", d->beat_mono_ms);
	keep_line_str(&b, "listing", keep_listing_health_name(d->sched.health));
	keep_line_int(&b, "since_mono_ms", d->sched.failing_since_mono_ms);
	keep_line_int(&b, "since_wall_ms", d->sched.failing_since_wall_ms);
	keep_line_int(&b, "failures", d->sched.failures);
	keep_line_str(&b, "reason", d->sched.health == KEEP_LISTING_OK ? NULL : d->last_failure);
	keep_buf_add(&b, "\n", 1);
	snprintf(path, sizeof(path), "%s/watch", d->node_dir);
	/* one warning when the writes start failing (or fail otherwise), one
	 * line when they succeed again: not one a period (issue 27: a full
	 * disk logged each period's failure twice) */
	if (keep_mkdirs(d->node_dir) != 0 || keep_write_atomic(path, b.data, b.len) != 0) {
		int e = errno ? errno : EIO;

		if (e != d->state_errno)
			keep_warn(d->prog,
				  "unable to write '%s': %s (said once until it changes; "
				  "readiness checks see the file grow old)",
				  path, strerror(e));
		d->state_errno = e;
	} else if (d->state_errno) {
		keep_info(d->prog, "the watch state file '%s' is written again", path);
		d->state_errno = 0;
	}
	keep_buf_release(&b);
}

/* After each listing (--follow): the health moves (keep_watch_sched_listed:
 * ok -> failing -> failed -> ok), each change said once; the state file is
 * rewritten after every pass (the heartbeat); the metrics follow. */
static void listing_health(struct keep_nodewatch *d, bool listed)
{
	int64_t now = keep_boot_ms();
	const struct keep_watch_sched *h = &d->sched;
	enum keep_listing_health was;

	if (!listed)
		keep_metrics_inc(&d->metrics, "keep_watch_list_failures_total", 1);
	was = keep_watch_sched_listed(&d->sched, listed, now, keep_wall_ms());
	keep_metrics_set_ms(&d->metrics, "keep_watch_listing_failing_seconds",
			    h->failing_since_mono_ms ? now - h->failing_since_mono_ms : 0);
	if (h->health != was || !d->health_said) {
		if (h->health == KEEP_LISTING_FAILED)
			keep_warn(d->prog,
				  "listings of nodes/ have failed for %lld ms (%lld in a row): no "
				  "peer can be fenced; this node should not be ready",
				  (long long)(now - h->failing_since_mono_ms),
				  (long long)h->failures);
		else if (h->health == KEEP_LISTING_OK && was != KEEP_LISTING_OK)
			keep_info(d->prog, "listing nodes/ again");
		d->health_said = true;
	}
	write_watch_state(d); /* one small atomic write a period: the heartbeat */
}

/* One listing pass fed to the watch. 0, or an exit code to stop with.
 * *listed: the listing succeeded. */
static int follow_pass(struct keep_nodewatch *d, struct keep_watch *w, struct keep_watch_input **in,
		       size_t *inalloc, int64_t *live_since, bool *listed)
{
	int64_t now, wall;
	bool valid;
	size_t i;

	*listed = read_all(d, false) == 0;
	listing_health(d, *listed);
	if (!*listed)
		return 0; /* the listing failed: the watch stays as it was */
	if (d->n > *inalloc) {
		struct keep_watch_input *ni = realloc(*in, d->n * sizeof(*ni));
		if (!ni) {
			keep_warn(d->prog, "out of memory");
			return KEEP_EXIT_TEMP;
		}
		*in = ni;
		*inalloc = d->n;
	}
	for (i = 0; i < d->n; i++)
		keep_watch_input_of(&(*in)[i], d->v[i].node, d->v[i].wrote, d->v[i].decoded,
				    d->v[i].outcome != KEEP_STORE_OK, &d->v[i].obj);
	keep_clocks_now(&now, &wall);
	wall = keep_judge_wall_cfg(&d->cfg);
	/* the lease state is read after the listing: a valid lease now covers
	 * the whole pass */
	self_lease(d, now, &valid, live_since);
	if (keep_watch_pass(w, *in, d->n, now, wall, valid, *live_since) != 0)
		keep_warn(d->prog, "watch pass incomplete (memory or too many nodes)");
	keep_metrics_set(&d->metrics, "keep_nodes_listed", (int64_t)d->n);
	if (strcmp(d->cfg.watch_mode, "auto") == 0 &&
	    keep_watch_choose_mode(w, &d->sched, d->n, d->cfg.watch_ring_from,
				   (int)d->cfg.watch_successors, d->cfg.watch_full_every))
		keep_info(d->prog, "watch mode %s: %zu nodes listed (ring from %" PRId64 ")",
			  w->ring_k ? "ring" : "full", d->n, d->cfg.watch_ring_from);
	keep_metrics_set(&d->metrics, "keep_watch_ring", w->ring_k ? 1 : 0);
	keep_watch_ring(w, NULL, 0); /* ring mode: the successors of the new ring */
	return print_events(d, w);
}

/* Ring mode, between listings (docs/fencing.md "Ring mode"): one GET of
 * each peer the watch names (its successors), fed to the watch. 0, or an
 * exit code to stop with. */
static int ring_pass(struct keep_nodewatch *d, struct keep_watch *w, struct keep_watch_input *in,
		     int64_t *live_since)
{
	static struct keep_node_obj obj[KEEP_WATCH_RING_READS_MAX];
	const char *ids[KEEP_WATCH_RING_READS_MAX];
	size_t i, n = keep_watch_ring(w, ids, KEEP_WATCH_RING_READS_MAX);
	int64_t now, wall;
	bool valid;

	keep_store_set_timeout(d->store, keep_timing_attempt_timeout_ms(&d->cfg.timing));
	for (i = 0; i < n; i++) {
		struct keep_node_read nr;

		keep_node_read(d->store, ids[i], KEEP_NODE_READ_ANY_FORMAT, &obj[i], &nr);
		if (nr.reply.outcome != KEEP_STORE_OK && nr.reply.outcome != KEEP_STORE_NOT_FOUND)
			keep_warn(d->prog, "unable to read nodes/%s: %s", ids[i], nr.why);
		keep_watch_input_of(&in[i], ids[i], false, nr.ok, nr.reply.outcome != KEEP_STORE_OK,
				    &obj[i]);
	}
	keep_clocks_now(&now, &wall);
	wall = keep_judge_wall_cfg(&d->cfg);
	self_lease(d, now, &valid, live_since);
	if (keep_watch_observe(w, in, n, now, wall, valid, *live_since) != 0)
		keep_warn(d->prog, "watch pass incomplete (memory)");
	keep_watch_ring(w, NULL, 0);
	write_watch_state(d); /* the heartbeat, as after a listing */
	return print_events(d, w);
}

int keep_nodewatch_follow(struct keep_nodewatch *d)
{
	struct keep_watch w;
	struct keep_watch_input *in = NULL;
	size_t inalloc = 0;
	int64_t live_since = 0;
	bool listed = false;
	int rc = 0;

	keep_watch_init(&w, &d->cfg.timing, d->cfg.node_id);
	keep_watch_sched_init(&d->sched, &d->cfg.timing, keep_boot_ms());
	if (strcmp(d->cfg.watch_mode, "full") != 0) { /* ring, or auto: maybe ring */
		if (strcmp(d->cfg.watch_mode, "ring") == 0) {
			keep_watch_set_ring(&w, (int)d->cfg.watch_successors);
			keep_watch_sched_ring(&d->sched, d->cfg.watch_full_every);
		}
		in = calloc(KEEP_WATCH_RING_READS_MAX, sizeof(*in));
		inalloc = in ? KEEP_WATCH_RING_READS_MAX : 0;
		if (!in) {
			keep_warn(d->prog, "out of memory");
			return KEEP_EXIT_TEMP;
		}
	}
	d->beating = true;
	/* counters exist from the start: an alert on the first increase sees it */
	keep_metrics_inc(&d->metrics, "keep_watch_list_failures_total", 0);
	keep_metrics_inc(&d->metrics, "keep_stale_candidates_total", 0);
	keep_metrics_declare_requests(&d->metrics);
	keep_metrics_flush(&d->metrics);
	while (!keep_stop_flag) {
		int64_t now = keep_boot_ms();
		bool valid;

		switch (keep_watch_sched_due(&d->sched, now)) {
		case KEEP_WATCH_LIST:
			rc = follow_pass(d, &w, &in, &inalloc, &live_since, &listed);
			break;
		case KEEP_WATCH_RING:
			rc = ring_pass(d, &w, in, &live_since);
			break;
		case KEEP_WATCH_TICK:
			/* a watch bound passed between listings: the candidate
			 * goes now, not at the next listing (docs/fencing.md) */
			self_lease(d, now, &valid, &live_since);
			if (keep_watch_tick(&w, now, valid, live_since) != 0)
				keep_warn(d->prog, "watch tick incomplete (memory)");
			rc = print_events(d, &w);
			break;
		case KEEP_WATCH_SLEEP:
			break;
		}
		if (rc) {
			keep_warn(d->prog, "stdout closed: stopping");
			break;
		}
		keep_reqstats_to_metrics(&d->stats, &d->metrics);
		keep_metrics_flush(&d->metrics);
		keep_sleep_until_boot(keep_watch_sched_wake_mono_ms(&d->sched, &w, live_since));
	}
	free(in);
	keep_watch_release(&w);
	return rc;
}

void keep_nodewatch_init(struct keep_nodewatch *d, const char *prog)
{
	memset(d, 0, sizeof(*d));
	d->prog = prog;
}

void keep_nodewatch_release(struct keep_nodewatch *d)
{
	free(d->v);
	free(d->prev);
	d->v = d->prev = NULL;
	keep_store_free(d->store);
	d->store = NULL;
	keep_metrics_release(&d->metrics);
}
