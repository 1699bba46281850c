/* node-watch — membership, cluster status and fence candidates (ADR 0020 §2, §6).
 *
 * A driver of the watch in lib/core/fence.c: every heartbeat period it
 * lists nodes/ and reads only the bodies it needs (a new node, one whose
 * listed version token stopped changing, one not live-and-changing: a
 * node whose token changed since the last listing wrote, and is alive),
 * reads this node's lease state file, feeds the pass to the watch and
 * prints its events; between listings it wakes when a watch bound passes
 * and prints the stale candidate then. --once reads every body and prints
 * one status line per node (cluster status). See docs/fencing.md. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/core/fence.h"
#include "../lib/core/listing.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/statedir.h"

static const char usage[] =
    "usage: node-watch [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                  [--follow | --once [--table]] [--stats]\n"
    "\n"
    "List nodes/ every heartbeat period; read a node's object only when needed\n"
    "(new, or its listed version token stopped changing).\n"
    "\n"
    "  --follow   (default) run until SIGTERM/SIGINT; print change events\n"
    "             `join|change|leave node=ID state=.. instance=.. written_at_ms=.. format=..`\n"
    "             and fence candidates `stale node=ID instance=.. written_at_ms=..\n"
    "             unchanged_ms=..` (only with a node id whose lease is valid: see\n"
    "             STATE_DIR/ID/lease), for `lease-fence --stdin`\n"
    "  --once     one pass, one line per node (cluster status):\n"
    "             `node id=ID state=live|released|fenced|old-running|old-retired|unreadable\n"
    "             instance=.. written_at_ms=.. age_ms=.. format=3|1|2 [fenced_by=..\n"
    "             fenced_at_ms=..] [free_at_ms=..] [reason=..]`\n"
    "  --table    with --once: a table for people instead\n"
    "  --stats    at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "             put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "             ambiguous=N prog=node-watch`\n"
    "  --check    validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit: 0 done (--once) or stopped by a signal; 100 usage or configuration;\n"
    "111 the store could not be listed or a node could not be read (--once), or\n"
    "stdout closed. See docs/fencing.md.\n";

enum { OPT_ONCE = 0x2000, OPT_FOLLOW, OPT_TABLE, OPT_STATS };

/* One node listed by a pass, and what is known of its body. */
struct seen {
	char node[KEEP_NODE_ID_MAX + 1];
	char listed[KEEP_VERSION_MAX];	     /* the version token this pass's listing showed */
	char body_version[KEEP_VERSION_MAX]; /* the GET's version of obj ("" if none) */
	enum keep_outcome outcome;	     /* of the last GET */
	bool decoded;
	bool wrote; /* not read this pass: the listed token changed (a write landed) */
	struct keep_node_obj obj;
	char why[160]; /* unreadable: why */
};

struct driver {
	const char *prog;
	struct keep_config cfg;
	struct keep_store *store;
	struct keep_reqstats stats;
	struct keep_metrics metrics;
	char node_dir[KEEP_PATH_MAX + 80];
	char boot_id[64];
	struct seen *v, *prev; /* this pass, the last pass (both sorted by node) */
	size_t n, alloc, nprev, prevalloc;
};

/* The last pass's entry for node, or NULL. */
static const struct seen *prev_of(const struct driver *d, const char *node)
{
	size_t lo = 0, hi = d->nprev;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(d->prev[mid].node, node);
		if (c == 0)
			return &d->prev[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Does this pass need node's body? The rule is lib/core/listing.c's
 * (docs/fencing.md, "Reading only what changed"); every: --once. */
static bool need_body(const struct seen *p, const char *listed, bool every, bool *wrote)
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

/* List nodes/ and read the bodies needed (every one when every). 0, or
 * KEEP_EXIT_TEMP when the listing failed (the last pass is kept). */
static int read_all(struct driver *d, bool every)
{
	struct keep_list l;
	struct keep_reply r;
	struct keep_buf body;
	size_t i;
	int rc;

	keep_list_init(&l);
	memset(&r, 0, sizeof(r));
	keep_store_set_timeout(d->store, keep_timing_attempt_timeout_ms(&d->cfg.timing));
	rc = keep_store_list(d->store, "nodes/", &l, &r);
	if (rc)
		keep_reply_set(&r, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(d->prog, "unable to list nodes/: %s: %s", keep_outcome_name(r.outcome),
			  r.detail);
		keep_list_release(&l);
		return KEEP_EXIT_TEMP;
	}
	/* this pass's array: the last pass's becomes d->prev */
	{
		struct seen *t = d->prev;
		size_t ta = d->prevalloc;

		d->prev = d->v;
		d->prevalloc = d->alloc;
		d->nprev = d->n;
		d->v = t;
		d->alloc = ta;
		d->n = 0;
	}
	if (l.n > d->alloc) {
		struct seen *nv = realloc(d->v, l.n * sizeof(*nv));
		if (!nv) {
			keep_list_release(&l);
			keep_warn(d->prog, "out of memory");
			return KEEP_EXIT_TEMP;
		}
		d->v = nv;
		d->alloc = l.n;
	}
	keep_buf_init(&body, KEEP_BODY_MAX);
	for (i = 0; i < l.n; i++) {
		const char *id = l.v[i].key + strlen("nodes/");
		const struct seen *p;
		struct seen *s;
		char err[160];
		bool wrote;
		int derr;

		if (strncmp(l.v[i].key, "nodes/", 6) != 0 || !keep_node_id_valid(id))
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
		keep_buf_reset(&body);
		memset(&r, 0, sizeof(r));
		rc = keep_store_get(d->store, l.v[i].key, &body, &r);
		if (rc)
			keep_reply_set(&r, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
		s->outcome = r.outcome;
		if (r.outcome == KEEP_STORE_OK)
			snprintf(s->body_version, sizeof(s->body_version), "%s", r.version);
		if (r.outcome == KEEP_STORE_NOT_FOUND)
			continue; /* gone since the listing */
		d->n++;
		if (r.outcome != KEEP_STORE_OK) {
			snprintf(s->why, sizeof(s->why), "read %s", keep_outcome_name(r.outcome));
			continue;
		}
		derr = keep_node_obj_decode(body.data ? body.data : "", body.len, &s->obj, err,
					    sizeof(err));
		if (!derr && strcmp(s->obj.node, id) != 0) {
			derr = KEEP_ERR_PARSE;
			snprintf(err, sizeof(err), "object names node '%s'", s->obj.node);
		}
		if (derr) {
			snprintf(s->why, sizeof(s->why), "%s",
				 derr == KEEP_ERR_NOTOURS ? "not a node object" : err);
			continue;
		}
		s->decoded = true;
	}
	keep_buf_release(&body);
	keep_list_release(&l);
	return 0;
}

static void self_lease(struct driver *d, int64_t now, bool *valid, int64_t *live_since)
{
	struct keep_lease_state st;

	*valid = false;
	*live_since = 0;
	if (!d->cfg.node_id[0])
		return;
	if (keep_lease_state_read(d->node_dir, &st) != 0)
		return;
	if (strcmp(st.node, d->cfg.node_id) != 0)
		return;
	*valid = keep_lease_state_valid(&st, now, d->boot_id);
	*live_since = st.live_since_mono_ms;
}

static int print_status_line(struct driver *d, const struct seen *s, int64_t wall)
{
	struct keep_buf b;
	enum keep_node_status st;
	int rc;

	st = keep_node_status(s->decoded ? &s->obj : NULL, wall, &d->cfg.timing, false);
	keep_line_begin(&b, "node");
	keep_line_str(&b, "id", s->node);
	keep_line_str(&b, "state", keep_node_status_name(st));
	if (!s->decoded) {
		keep_line_str(&b, "instance", NULL);
		keep_line_str(&b, "written_at_ms", NULL);
		keep_line_str(&b, "age_ms", NULL);
		keep_line_str(&b, "format", NULL);
		keep_line_str(&b, "reason", s->why);
	} else {
		keep_line_str(&b, "instance", s->obj.instance);
		keep_line_int(&b, "written_at_ms", s->obj.written_at_ms);
		keep_line_int(&b, "age_ms", wall - s->obj.written_at_ms);
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
				      s->obj.written_at_ms +
					  keep_timing_takeover_ms(&d->cfg.timing));
	}
	rc = keep_line_end(&b) == 0 ? 0 : KEEP_EXIT_TEMP;
	return rc;
}

static void age_text(char *out, size_t n, int64_t ms)
{
	if (ms < 0)
		snprintf(out, n, "-%lld.%01llds", (long long)(-ms / 1000),
			 (long long)((-ms % 1000) / 100));
	else if (ms < 100000)
		snprintf(out, n, "%lld.%01llds", (long long)(ms / 1000),
			 (long long)((ms % 1000) / 100));
	else
		snprintf(out, n, "%llds", (long long)(ms / 1000));
}

static int print_table(struct driver *d, int64_t wall)
{
	size_t i;

	printf("%-20s %-12s %-6s %-32s %-15s %-9s %s\n", "NODE", "STATE", "FORMAT", "INSTANCE",
	       "WRITTEN_AT_MS", "AGE", "NOTE");
	for (i = 0; i < d->n; i++) {
		const struct seen *s = &d->v[i];
		enum keep_node_status st =
		    keep_node_status(s->decoded ? &s->obj : NULL, wall, &d->cfg.timing, false);
		char age[32], note[200];

		if (!s->decoded) {
			printf("%-20s %-12s %-6s %-32s %-15s %-9s %s\n", s->node,
			       keep_node_status_name(st), "-", "-", "-", "-", s->why);
			continue;
		}
		age_text(age, sizeof(age), wall - s->obj.written_at_ms);
		note[0] = '\0';
		if (st == KEEP_STATUS_FENCED)
			snprintf(
			    note, sizeof(note), "by %s, free in %llds",
			    s->obj.fenced_by[0] ? s->obj.fenced_by : "?",
			    (long long)((s->obj.written_at_ms +
					 keep_timing_takeover_ms(&d->cfg.timing) - wall + 999) /
					1000));
		else if (st == KEEP_STATUS_RELEASED)
			snprintf(note, sizeof(note), "clean stop");
		else if (st == KEEP_STATUS_OLD_RUNNING)
			snprintf(note, sizeof(note), "ERROR: an old version is running");
		else if (st == KEEP_STATUS_OLD_RETIRED)
			snprintf(note, sizeof(note), "retired (old format)");
		printf("%-20s %-12s %-6d %-32s %-15lld %-9s %s\n", s->node,
		       keep_node_status_name(st), s->obj.format, s->obj.instance,
		       (long long)s->obj.written_at_ms, age, note);
	}
	return fflush(stdout) == 0 ? 0 : KEEP_EXIT_TEMP;
}

static int once(struct driver *d, bool table)
{
	int64_t wall;
	size_t i;
	int rc = read_all(d, true), prc = 0;
	bool failed = false;

	if (rc)
		return rc;
	wall = keep_wall_ms();
	if (table) {
		prc = print_table(d, wall);
	} else {
		for (i = 0; i < d->n && !prc; i++)
			prc = print_status_line(d, &d->v[i], wall);
	}
	for (i = 0; i < d->n; i++)
		if (!d->v[i].decoded && d->v[i].outcome != KEEP_STORE_OK)
			failed = true;
	keep_reqstats_to_metrics(&d->stats, &d->metrics);
	keep_metrics_flush(&d->metrics);
	return prc ? prc : failed ? KEEP_EXIT_TEMP : KEEP_EXIT_OK;
}

static int print_event(struct driver *d, const struct keep_watch_event *e)
{
	struct keep_buf b;
	int rc;

	keep_line_begin(&b, keep_watch_event_name(e->kind));
	keep_line_str(&b, "node", e->node);
	if (e->kind != KEEP_WEV_STALE)
		keep_line_str(&b, "state", keep_node_status_name(e->status));
	keep_line_str(&b, "instance", e->instance);
	if (e->written_at_ms)
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
	else
		keep_line_str(&b, "written_at_ms", NULL);
	if (e->kind == KEEP_WEV_STALE) {
		keep_line_int(&b, "unchanged_ms", e->unchanged_ms);
	} else if (e->format) {
		keep_line_int(&b, "format", e->format);
	} else {
		keep_line_str(&b, "format", NULL);
	}
	rc = keep_line_end(&b) == 0 ? 0 : KEEP_EXIT_TEMP;
	if (e->kind != KEEP_WEV_LEAVE && e->kind != KEEP_WEV_STALE &&
	    e->status == KEEP_STATUS_OLD_RUNNING)
		fprintf(stderr,
			"%s: error: nodes/%s is an old-format heartbeat that is fresh or "
			"rewritten: an old version is running (ADR 0020 section 6)\n",
			d->prog, e->node);
	return rc;
}

/* Print a pass's or a tick's events. 0, or KEEP_EXIT_TEMP (stdout closed). */
static int print_events(struct driver *d, const struct keep_watch *w)
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

/* One listing pass fed to the watch. 0, or an exit code to stop with.
 * *listed: the listing succeeded. */
static int follow_pass(struct driver *d, struct keep_watch *w, struct keep_watch_input **in,
		       size_t *inalloc, int64_t *live_since, bool *listed)
{
	int64_t now, wall;
	bool valid;
	size_t i;

	*listed = read_all(d, false) == 0;
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
	for (i = 0; i < d->n; i++) {
		struct keep_watch_input *x = &(*in)[i];

		memset(x, 0, sizeof(*x));
		x->node = d->v[i].node;
		x->wrote = d->v[i].wrote;
		x->readable = !x->wrote && d->v[i].decoded;
		x->read_failed = !x->wrote && !d->v[i].decoded && d->v[i].outcome != KEEP_STORE_OK;
		x->obj = x->readable ? &d->v[i].obj : NULL;
	}
	now = keep_mono_ms();
	wall = keep_wall_ms();
	/* the lease state is read after the listing: a valid lease now covers
	 * the whole pass */
	self_lease(d, now, &valid, live_since);
	if (keep_watch_pass(w, *in, d->n, now, wall, valid, *live_since) != 0)
		keep_warn(d->prog, "watch pass incomplete (memory or too many nodes)");
	keep_metrics_set(&d->metrics, "keep_nodes_listed", (int64_t)d->n);
	return print_events(d, w);
}

static int follow(struct driver *d)
{
	struct keep_watch w;
	struct keep_watch_input *in = NULL;
	size_t inalloc = 0;
	int64_t next_pass = keep_mono_ms(), live_since = 0;
	bool listed = false;
	int rc = 0;

	keep_watch_init(&w, &d->cfg.timing, d->cfg.node_id);
	while (!keep_stop_flag) {
		int64_t now = keep_mono_ms(), wake, due;

		if (now >= next_pass) {
			next_pass = now + d->cfg.timing.period_ms;
			rc = follow_pass(d, &w, &in, &inalloc, &live_since, &listed);
		} else if (listed) {
			/* a watch bound passed between listings: the candidate
			 * goes now, not at the next listing (docs/fencing.md) */
			bool valid;

			self_lease(d, now, &valid, &live_since);
			if (keep_watch_tick(&w, now, valid, live_since) != 0)
				keep_warn(d->prog, "watch tick incomplete (memory)");
			rc = print_events(d, &w);
		}
		if (rc) {
			keep_warn(d->prog, "stdout closed: stopping");
			break;
		}
		keep_reqstats_to_metrics(&d->stats, &d->metrics);
		keep_metrics_flush(&d->metrics);
		wake = next_pass;
		/* between listings only while the last one succeeded: a
		 * candidate is never judged across a failed listing */
		due = listed ? keep_watch_next_stale_mono_ms(&w, live_since) : 0;
		if (due && due < wake)
			wake = due;
		keep_sleep_until_mono(wake);
	}
	free(in);
	keep_watch_release(&w);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"once", no_argument, NULL, OPT_ONCE},
					     {"follow", no_argument, NULL, OPT_FOLLOW},
					     {"table", no_argument, NULL, OPT_TABLE},
					     {"stats", no_argument, NULL, OPT_STATS},
					     {"check", no_argument, NULL, KEEP_OPT_CHECK},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct driver d;
	struct keep_store_opts so;
	char err[512];
	bool opt_once = false, opt_follow = false, opt_table = false, opt_stats = false;
	int c, rc;

	memset(&d, 0, sizeof(d));
	d.prog = "node-watch";
	keep_cli_init(&cli, d.prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		switch (c) {
		case OPT_ONCE:
			opt_once = true;
			break;
		case OPT_FOLLOW:
			opt_follow = true;
			break;
		case OPT_TABLE:
			opt_table = true;
			break;
		case OPT_STATS:
			opt_stats = true;
			break;
		}
	}
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (opt_once && opt_follow)
		keep_cli_usage_error(&cli, "--once and --follow exclude each other");
	if (opt_table && !opt_once)
		keep_cli_usage_error(&cli, "--table needs --once");
	keep_cli_setup(&cli, &d.cfg, KEEP_NEED_STORE);
	if (d.cfg.node_id[0] && keep_config_node_dir(&d.cfg, d.node_dir, sizeof(d.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, d.prog, "state directory path too long");
	keep_boot_id(d.boot_id, sizeof(d.boot_id));
	keep_metrics_init(&d.metrics, NULL, d.cfg.node_id[0] ? d.cfg.node_id : "-");
	/* only --follow (the agent's) owns the metrics file: a one-shot status
	 * run on a node host must not wipe the agent's counters */
	keep_metrics_set_prog(&d.metrics, opt_once ? NULL : d.cfg.metrics_textfile, d.prog);

	keep_config_store_opts(&d.cfg, &so);
	keep_reqstats_init(&d.stats);
	rc = keep_store_open(d.cfg.store, &so, &d.store, err, sizeof(err));
	if (rc == 0) {
		rc = keep_store_counted(d.store, &d.stats, &d.store);
		if (rc)
			snprintf(err, sizeof(err), "out of memory");
	}
	if (rc)
		keep_die(rc == KEEP_ERR_INVAL || rc == KEEP_ERR_PERM ? KEEP_EXIT_USAGE
								     : KEEP_EXIT_TEMP,
			 d.prog, "unable to open store '%s': %s", d.cfg.store, err);

	keep_cli_stop_signals();

	if (opt_once) {
		rc = once(&d, opt_table);
	} else {
		if (!d.cfg.node_id[0])
			keep_warn(d.prog, "no node id: no stale candidates will be printed");
		rc = follow(&d);
	}
	if (opt_stats)
		keep_reqstats_print(&d.stats, d.prog);
	free(d.v);
	free(d.prev);
	keep_store_free(d.store);
	keep_metrics_release(&d.metrics);
	return rc;
}
