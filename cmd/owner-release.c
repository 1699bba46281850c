/* owner-release — release holds, retry pending releases, resolve unresolved
 * acquires, drain (ADR 0020 §1, §3, §4, §5; docs/ownership.md).
 *
 * A driver of lib/core/owner.c. Every release stops acting first (the hold
 * is removed from the state directory, a pending entry written), then
 * writes the record naming nobody, generation kept, If-Match the hold's
 * acquire version; never a DELETE (RGW ignores If-Match on DELETE).
 *
 * Keys on stdin may be released --jobs N at once (N <= 32): N threads,
 * each with its own store handle (one connection kept alive per thread),
 * each key under its per-actor flock; answers in completion order. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/batch.h"
#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/core/owner.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/holds.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/statedir.h"
#include "../lib/supervise.h"

#define JOBS_MAX KEEP_BATCH_JOBS_MAX

static const char usage[] =
    "usage: owner-release [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                     [--jobs N] [--stats] [KEY...]\n"
    "       owner-release [common flags] --all [--wait-ms MS]\n"
    "       owner-release [common flags] --pending [--follow]\n"
    "\n"
    "KEY...     release these holds (with no KEY and no mode: keys on stdin,\n"
    "           one a line); each waits 1 s, then is parked as a pending release\n"
    "--all      the drain: release every hold and wait (MS, default ttl + grace)\n"
    "           until nothing is pending\n"
    "--pending  one pass over pending releases and unresolved acquires;\n"
    "           --follow: a pass every heartbeat period until SIGTERM\n"
    "--jobs N   stdin: up to N (1..32, default 1) keys at once, each thread\n"
    "           with its own store connection; answers in completion order\n"
    "--stats    at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "           put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "           ambiguous=N prog=owner-release`\n"
    "\n"
    "Lines: released key=K generation=G | ended key=K generation=G reason=..\n"
    "  | pending key=K generation=G version=V | dropped key=K generation=G reason=..\n"
    "  | none key=K | drain pending=N\n"
    "\n"
    "exit: 0 done (nothing left pending); 1 no hold of a KEY; 20 releases\n"
    "still pending; 100 usage; 111 state directory or store unusable.\n"
    "See docs/exit-codes.md.\n";

static const char *prog = "owner-release";
static volatile sig_atomic_t term_flag;

static void on_signal(int sig)
{
	(void)sig;
	term_flag = 1;
}

/* Backoff of one pending entry (in memory, per process). */
struct backoff {
	struct keep_pending id;
	int attempts;
	int64_t next_mono_ms;
};

struct ctx {
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	struct keep_store *store;
	int64_t store_timeout_ms;
	struct backoff *bo;
	size_t nbo, abo;
	bool use_backoff;
};

/* ---- lines ------------------------------------------------------------------ */

/* Answer lines from several threads (--jobs): one whole line at a time. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void emit(const char *type, const char *key, int64_t gen, const char *k2, const char *v2)
{
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, type);
	if (key)
		keep_line_str(&b, "key", key);
	if (gen > 0)
		keep_line_int(&b, "generation", gen);
	if (k2)
		keep_line_str(&b, k2, v2);
	pthread_mutex_lock(&out_lock);
	keep_line_emit(&b);
	pthread_mutex_unlock(&out_lock);
	keep_buf_release(&b);
}

/* ---- backoff ------------------------------------------------------------------- */

static bool same_entry(const struct keep_pending *a, const struct keep_pending *b)
{
	return a->kind == b->kind && a->generation == b->generation &&
	       strcmp(a->key, b->key) == 0 && strcmp(a->instance, b->instance) == 0;
}

static struct backoff *bo_find(struct ctx *x, const struct keep_pending *p)
{
	for (size_t i = 0; i < x->nbo; i++)
		if (same_entry(&x->bo[i].id, p))
			return &x->bo[i];
	return NULL;
}

static bool bo_due(struct ctx *x, const struct keep_pending *p, int64_t now)
{
	struct backoff *b;

	if (!x->use_backoff)
		return true;
	b = bo_find(x, p);
	return !b || now >= b->next_mono_ms;
}

static void bo_fail(struct ctx *x, const struct keep_pending *p, int64_t now)
{
	struct backoff *b = bo_find(x, p);

	if (!b) {
		if (x->nbo == x->abo) {
			size_t na = x->abo ? x->abo * 2 : 32;
			struct backoff *nv = realloc(x->bo, na * sizeof(*nv));

			if (!nv)
				return; /* no backoff memory: retried at the next pass */
			x->bo = nv;
			x->abo = na;
		}
		b = &x->bo[x->nbo++];
		memset(b, 0, sizeof(*b));
		b->id = *p;
	}
	b->attempts++;
	b->next_mono_ms = now + keep_owner_backoff_ms(b->attempts);
}

static void bo_forget(struct ctx *x, const struct keep_pending *p)
{
	struct backoff *b = bo_find(x, p);

	if (b)
		*b = x->bo[--x->nbo];
}

static int64_t bo_next_due(struct ctx *x, int64_t dflt)
{
	int64_t m = dflt;

	for (size_t i = 0; i < x->nbo; i++)
		if (x->bo[i].next_mono_ms < m)
			m = x->bo[i].next_mono_ms;
	return m;
}

/* ---- one pending release -------------------------------------------------------- */

enum step {
	STEP_DONE = 0, /* the entry ended (landed, or no longer names us) */
	STEP_KEEP,     /* kept: the store refused or failed (counts as a refusal) */
	STEP_STILL,    /* kept: the record still names us at g with another version */
};

/* The release write of p, If-Match p->version, and on a conflict the read
 * that decides whether the entry ends. Removes the entry when it ends. */
static enum step release_try(struct ctx *x, const struct keep_pending *p)
{
	struct keep_owner_rec nobody, rec;
	struct keep_pend_decision d;
	struct keep_reply r;
	int derr;

	keep_owner_rec_nobody(&nobody, p->generation);
	keep_owner_put(x->store, p->key, &nobody, KEEP_COND_IF_MATCH, p->version, &r);
	if (r.outcome == KEEP_STORE_OK) {
		(void)keep_pending_remove(x->node_dir, p);
		emit("released", p->key, p->generation, NULL, NULL);
		return STEP_DONE;
	}
	if (r.outcome != KEEP_STORE_CONFLICT) {
		keep_warn(prog, "release of owners/%s (generation %lld): %s: %s", p->key,
			  (long long)p->generation, keep_outcome_name(r.outcome),
			  r.detail[0] ? r.detail : "-");
		return STEP_KEEP;
	}
	keep_owner_get(x->store, p->key, &rec, &derr, &r);
	keep_owner_pending_on_read(p->instance, p->generation, r.outcome,
				   r.outcome == KEEP_STORE_OK && !derr ? &rec : NULL, derr, &d);
	if (d.verdict == KEEP_PEND_END) {
		(void)keep_pending_remove(x->node_dir, p);
		emit("ended", p->key, p->generation, "reason", d.reason);
		return STEP_DONE;
	}
	return r.outcome == KEEP_STORE_OK ? STEP_STILL : STEP_KEEP;
}

/* An unresolved acquire, under the actor's lock from the read until the
 * release's reply (§3). */
static enum step resolve_try(struct ctx *x, const struct keep_pending *p)
{
	struct keep_owner_rec rec, nobody;
	struct keep_pend_decision d;
	struct keep_reply r;
	struct keep_hold h;
	enum step out = STEP_KEEP;
	int fd, derr, hh;
	int64_t settle = 2 * x->store_timeout_ms;

	if (keep_holds_lock(x->node_dir, p->key, &fd) != 0) {
		keep_warn(prog, "unable to lock '%s': %s", p->key, strerror(errno));
		return STEP_KEEP;
	}
	hh = keep_hold_read(x->node_dir, p->key, &h);
	keep_owner_get(x->store, p->key, &rec, &derr, &r);
	keep_owner_resolve_on_read(
	    p->instance, p->generation, strcmp(p->version, "-") == 0 ? "" : p->version, p->at_ms,
	    settle, hh == 0, r.outcome, r.version,
	    r.outcome == KEEP_STORE_OK && !derr ? &rec : NULL, derr, keep_wall_ms(), &d);
	switch (d.verdict) {
	case KEEP_PEND_END:
		(void)keep_pending_remove(x->node_dir, p);
		emit("ended", p->key, p->generation, "reason", d.reason);
		out = STEP_DONE;
		break;
	case KEEP_PEND_KEEP:
		out = r.outcome == KEEP_STORE_OK || r.outcome == KEEP_STORE_NOT_FOUND ? STEP_STILL
										      : STEP_KEEP;
		break;
	case KEEP_PEND_RELEASE:
		keep_owner_rec_nobody(&nobody, p->generation);
		keep_owner_put(x->store, p->key, &nobody, KEEP_COND_IF_MATCH, d.version, &r);
		if (r.outcome == KEEP_STORE_OK) {
			(void)keep_pending_remove(x->node_dir, p);
			emit("released", p->key, p->generation, "reason", "unresolved-acquire");
			out = STEP_DONE;
		} else {
			/* an ordinary pending release keyed on that read's version */
			struct keep_pending q = *p;

			q.kind = KEEP_PENDING_RELEASE;
			snprintf(q.version, sizeof(q.version), "%s", d.version);
			q.at_ms = keep_wall_ms();
			if (keep_pending_write(x->node_dir, &q) == 0)
				(void)keep_pending_remove(x->node_dir, p);
			emit("pending", q.key, q.generation, "version", q.version);
			out = r.outcome == KEEP_STORE_CONFLICT ? STEP_STILL : STEP_KEEP;
		}
		break;
	}
	keep_holds_unlock(fd);
	return out;
}

/* ---- holds -> pending ------------------------------------------------------------- */

/* Stop acting on hold h (under its lock): write its pending release, then
 * remove the hold. Nothing is written to the store here. */
static int park_hold(struct ctx *x, const struct keep_hold *h, struct keep_pending *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = KEEP_PENDING_RELEASE;
	snprintf(p->key, sizeof(p->key), "%s", h->key);
	snprintf(p->instance, sizeof(p->instance), "%s", h->instance);
	p->generation = h->generation;
	snprintf(p->version, sizeof(p->version), "%s", h->version);
	p->at_ms = keep_wall_ms();
	if (keep_pending_write(x->node_dir, p) != 0) {
		keep_warn(prog, "unable to record the pending release of '%s': %s", h->key,
			  strerror(errno));
		/* stop acting anyway: the hold must end first (§3) */
	}
	return keep_hold_remove(x->node_dir, h->key);
}

/* The lease was lost: drop every hold and entry without writing (the
 * fence, or the other instance, frees the records: §1). */
static void drop_all(struct ctx *x)
{
	struct keep_hold *hs = NULL;
	struct keep_pending *ps = NULL;
	size_t n = 0, i;

	if (keep_holds_list(x->node_dir, &hs, &n, NULL) == 0)
		for (i = 0; i < n; i++) {
			int fd;

			if (keep_holds_lock(x->node_dir, hs[i].key, &fd) != 0)
				continue;
			(void)keep_hold_remove(x->node_dir, hs[i].key);
			keep_holds_unlock(fd);
			emit("dropped", hs[i].key, hs[i].generation, "reason", "lease-lost");
		}
	free(hs);
	if (keep_pending_list(x->node_dir, &ps, &n, NULL) == 0)
		for (i = 0; i < n; i++) {
			(void)keep_pending_remove(x->node_dir, &ps[i]);
			emit("dropped", ps[i].key, ps[i].generation, "reason", "lease-lost");
		}
	free(ps);
}

/* Move every hold that is stale (another instance, or a lapse since) or,
 * with all, every hold, into the pending releases. */
static void park_holds(struct ctx *x, const struct keep_lease_state *st, bool all)
{
	struct keep_hold *hs = NULL;
	size_t n = 0, i;

	if (keep_holds_list(x->node_dir, &hs, &n, NULL) != 0)
		return;
	for (i = 0; i < n; i++) {
		struct keep_hold h;
		struct keep_pending p;
		int fd;

		if (!all &&
		    !keep_owner_hold_stale(hs[i].instance, hs[i].epoch, st->instance, st->lapses))
			continue;
		if (keep_holds_lock(x->node_dir, hs[i].key, &fd) != 0)
			continue;
		/* re-read under the lock: an acquisition may have replaced it */
		if (keep_hold_read(x->node_dir, hs[i].key, &h) == 0 &&
		    (all || keep_owner_hold_stale(h.instance, h.epoch, st->instance, st->lapses)))
			(void)park_hold(x, &h, &p);
		keep_holds_unlock(fd);
	}
	free(hs);
}

/* One pass over the pending set. Returns how many entries are left
 * (SIZE_MAX when the set could not be listed); *paused when the lease is
 * not valid (nothing was written). */
static size_t pass(struct ctx *x, bool all, bool *paused)
{
	struct keep_lease_state st;
	struct keep_pending *ps = NULL;
	size_t n = 0, i, left = 0;
	int refusals = 0, lc;

	*paused = false;
	lc = keep_holds_lease(x->node_dir, keep_mono_ms(), &st);
	if (strcmp(st.phase, "lost") == 0) {
		drop_all(x);
		return 0;
	}
	park_holds(x, &st, all);
	if (keep_pending_list(x->node_dir, &ps, &n, NULL) != 0) {
		keep_warn(prog, "unable to list pending entries in '%s': %s", x->node_dir,
			  strerror(errno));
		return (size_t)-1;
	}
	if (lc != KEEP_EXIT_OK) {
		*paused = true; /* §3: retries pause while the node lease is invalid */
		free(ps);
		return n;
	}
	for (i = 0; i < n; i++) {
		const struct keep_pending *p = &ps[i];
		int64_t now = keep_mono_ms();
		enum step s;

		if (term_flag && !all) {
			left += n - i;
			break;
		}
		if (refusals >= KEEP_PENDING_REFUSALS) {
			/* a refusing bucket gets no burst of writes (§5) */
			left += n - i;
			break;
		}
		if (!bo_due(x, p, now)) {
			left++;
			continue;
		}
		s = p->kind == KEEP_PENDING_RELEASE ? release_try(x, p) : resolve_try(x, p);
		if (s == STEP_DONE) {
			bo_forget(x, p);
			refusals = 0;
			continue;
		}
		left++;
		bo_fail(x, p, keep_mono_ms());
		refusals = s == STEP_KEEP ? refusals + 1 : 0;
	}
	free(ps);
	return left;
}

/* ---- foreground release of named keys ---------------------------------------------- */

static int release_key(struct ctx *x, const char *key)
{
	struct keep_lease_state st;
	struct keep_hold h;
	struct keep_pending p;
	int fd, rc, code = KEEP_EXIT_UNKNOWN;
	int64_t deadline, tries = 0;

	if (!keep_owner_key_valid(key)) {
		keep_warn(prog, "invalid key '%s'", key);
		return KEEP_EXIT_USAGE;
	}
	if (keep_holds_lock(x->node_dir, key, &fd) != 0) {
		keep_warn(prog, "unable to lock '%s': %s", key, strerror(errno));
		return KEEP_EXIT_TEMP;
	}
	rc = keep_hold_read(x->node_dir, key, &h);
	if (rc != 0) {
		keep_holds_unlock(fd);
		emit("none", key, 0, NULL, NULL);
		return KEEP_EXIT_NO;
	}
	(void)keep_holds_lease(x->node_dir, keep_mono_ms(), &st);
	if (strcmp(st.phase, "lost") == 0) {
		(void)keep_hold_remove(x->node_dir, key);
		keep_holds_unlock(fd);
		emit("dropped", key, h.generation, "reason", "lease-lost");
		return KEEP_EXIT_OK;
	}
	/* stop acting first, whatever the reply (§3) */
	park_hold(x, &h, &p);
	deadline = keep_mono_ms() + KEEP_RELEASE_TRIES_MS;
	for (;;) {
		int64_t now = keep_mono_ms(), left = deadline - now;
		enum step s;

		if (left <= 0 || term_flag)
			break;
		if (tries++ > 0 && keep_holds_lease(x->node_dir, now, &st) != KEEP_EXIT_OK)
			break; /* paused while the lease is invalid: the resolver retries */
		keep_store_set_timeout(x->store, left);
		s = release_try(x, &p);
		if (s == STEP_DONE) {
			code = KEEP_EXIT_OK;
			break;
		}
		if (s == STEP_STILL)
			break;
		keep_sleep_until_mono(keep_mono_ms() + (left < 100 ? left : 100));
	}
	keep_store_set_timeout(x->store, x->store_timeout_ms);
	keep_holds_unlock(fd);
	if (code != KEEP_EXIT_OK)
		emit("pending", key, p.generation, "version", p.version);
	return code;
}

/* The resolver's gauges after a pass (--pending --follow only: it is the
 * long-running process that owns keep.owner-release.prom). */
static void write_gauges(const struct ctx *x, struct keep_metrics *m,
			 const struct keep_reqstats *stats)
{
	struct keep_hold *holds = NULL;
	struct keep_pending *pend = NULL;
	size_t nh = 0, np = 0, i;
	int64_t releases = 0, acquires = 0;

	if (keep_holds_list(x->node_dir, &holds, &nh, NULL) == 0)
		keep_metrics_set(m, "keep_holds", (int64_t)nh);
	if (keep_pending_list(x->node_dir, &pend, &np, NULL) == 0) {
		for (i = 0; i < np; i++) {
			if (pend[i].kind == KEEP_PENDING_ACQUIRE)
				acquires++;
			else
				releases++;
		}
		keep_metrics_set(m, "keep_pending_releases", releases);
		keep_metrics_set(m, "keep_unresolved_acquires", acquires);
	}
	free(holds);
	free(pend);
	keep_reqstats_to_metrics(stats, m);
	keep_metrics_flush(m);
}

static int release_cb(void *ctx, const char *key)
{
	return release_key(ctx, key);
}

int main(int argc, char **argv)
{
	enum { OPT_ALL = 0x2000, OPT_PENDING, OPT_FOLLOW, OPT_WAIT, OPT_JOBS, OPT_STATS };
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"all", no_argument, NULL, OPT_ALL},
					     {"pending", no_argument, NULL, OPT_PENDING},
					     {"follow", no_argument, NULL, OPT_FOLLOW},
					     {"wait-ms", required_argument, NULL, OPT_WAIT},
					     {"jobs", required_argument, NULL, OPT_JOBS},
					     {"stats", no_argument, NULL, OPT_STATS},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct ctx x;
	struct keep_store_opts so;
	struct sigaction sa;
	char err[512];
	bool all = false, pending = false, follow = false, paused, opt_stats = false;
	int64_t wait_ms = -1;
	int c, rc, i, jobs = 1, nstores, worst = KEEP_EXIT_OK;
	struct keep_reqstats stats;
	struct keep_store *stores[JOBS_MAX];
	size_t left;

	keep_supervised_start(prog); /* under keep-agent: never outlive it */
	memset(&x, 0, sizeof(x));
	keep_cli_init(&cli, prog, usage);
	while ((c = getopt_long(argc, argv, "hc:", opts, NULL)) != -1) {
		if (keep_cli_common_opt(&cli, c, optarg))
			continue;
		switch (c) {
		case OPT_ALL:
			all = true;
			break;
		case OPT_PENDING:
			pending = true;
			break;
		case OPT_FOLLOW:
			follow = true;
			break;
		case OPT_WAIT: {
			char *end;
			long long v;

			errno = 0;
			v = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 || v > 86400000)
				keep_cli_usage_error(&cli, "--wait-ms needs 0..86400000");
			wait_ms = v;
			break;
		}
		case OPT_JOBS: {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > JOBS_MAX)
				keep_cli_usage_error(&cli, "--jobs wants 1..%d", JOBS_MAX);
			jobs = (int)v;
			break;
		}
		case OPT_STATS:
			opt_stats = true;
			break;
		default:
			keep_cli_usage_error(&cli, "unknown option");
		}
	}
	if (all && pending)
		keep_cli_usage_error(&cli, "--all and --pending exclude each other");
	if (follow && !pending)
		keep_cli_usage_error(&cli, "--follow only applies to --pending");
	if (wait_ms >= 0 && !all)
		keep_cli_usage_error(&cli, "--wait-ms only applies to --all");
	if ((all || pending) && optind < argc)
		keep_cli_usage_error(&cli, "KEY arguments exclude --all and --pending");
	keep_cli_load_config(&cli, &x.cfg);
	if (!x.cfg.node_id[0])
		keep_cli_usage_error(&cli, "no node id (--node-id or node_id: in the config)");
	if (!x.cfg.store[0])
		keep_cli_usage_error(&cli, "no store (--store or store: in the config)");
	if (keep_config_node_dir(&x.cfg, x.node_dir, sizeof(x.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, prog, "state directory path too long");
	if (keep_holds_init(x.node_dir) != 0)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to create the state directory '%s': %s",
			 x.node_dir, strerror(errno));
	keep_config_store_opts(&x.cfg, &so);
	keep_reqstats_init(&stats);
	nstores = all || pending || optind < argc ? 1 : jobs;
	for (i = 0; i < nstores; i++) {
		rc = keep_store_open(x.cfg.store, &so, &stores[i], err, sizeof(err));
		if (rc == 0) {
			rc = keep_store_counted(stores[i], &stats, &stores[i]);
			if (rc)
				snprintf(err, sizeof(err), "out of memory");
		}
		if (rc)
			keep_die(rc == KEEP_ERR_INVAL || rc == KEEP_ERR_PERM ? KEEP_EXIT_USAGE
									     : KEEP_EXIT_TEMP,
				 prog, "unable to open store '%s': %s", x.cfg.store, err);
	}
	x.store = stores[0];
	x.store_timeout_ms = x.cfg.s3_timeout_ms > 0 ? x.cfg.s3_timeout_ms : 10000;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (pending) {
		struct keep_metrics m;

		keep_metrics_init(&m, NULL, x.cfg.node_id);
		keep_metrics_set_prog(&m, follow ? x.cfg.metrics_textfile : NULL, prog);
		x.use_backoff = follow;
		for (;;) {
			int64_t next;

			left = pass(&x, false, &paused);
			write_gauges(&x, &m, &stats);
			if (!follow || term_flag)
				break;
			next = keep_mono_ms() + keep_timing_write_every_ms(&x.cfg.timing);
			next = bo_next_due(&x, next);
			while (!term_flag && keep_mono_ms() < next)
				keep_sleep_until_mono(next);
			if (term_flag)
				break;
		}
		worst = follow || left == 0 ? KEEP_EXIT_OK : KEEP_EXIT_UNKNOWN;
	} else if (all) {
		struct keep_lease_state st;
		int64_t deadline;

		if (wait_ms < 0)
			wait_ms = keep_timing_takeover_ms(&x.cfg.timing);
		deadline = keep_mono_ms() + wait_ms;
		(void)keep_holds_lease(x.node_dir, keep_mono_ms(), &st);
		if (st.instance[0] && keep_drain_mark(x.node_dir, st.instance) != 0)
			keep_warn(prog, "unable to mark the drain in '%s': %s", x.node_dir,
				  strerror(errno));
		x.use_backoff = true;
		for (;;) {
			int64_t next;

			left = pass(&x, true, &paused);
			if (left == 0 || keep_mono_ms() >= deadline)
				break;
			if (left != (size_t)-1 &&
			    isatty(2)) /* a person waits: for what, how long */
				fprintf(stderr,
					"%s: drain: %zu release(s) pending, %lld s left at most\n",
					prog, left,
					(long long)((deadline - keep_mono_ms() + 999) / 1000));
			next = bo_next_due(&x, keep_mono_ms() + 200);
			if (next > deadline)
				next = deadline;
			if (next < keep_mono_ms() + 20)
				next = keep_mono_ms() + 20;
			keep_sleep_until_mono(next);
		}
		{
			struct keep_buf b;

			keep_buf_init(&b, KEEP_LINE_MAX);
			keep_line_start(&b, "drain");
			keep_line_int(&b, "pending", left == (size_t)-1 ? -1 : (int64_t)left);
			keep_line_emit(&b);
			keep_buf_release(&b);
		}
		worst = left == 0 ? KEEP_EXIT_OK : KEEP_EXIT_UNKNOWN;
	} else if (optind < argc) {
		for (i = optind; i < argc; i++)
			keep_exit_worst(&worst, release_key(&x, argv[i]));
	} else {
		/* keys on stdin: worker i has its own store connection; the
		 * backoff is the pending passes' only */
		struct ctx xs[KEEP_BATCH_JOBS_MAX];
		void *ctxs[KEEP_BATCH_JOBS_MAX];

		ctxs[0] = &x;
		for (i = 0; jobs > 1 && i < jobs; i++) {
			xs[i] = x;
			xs[i].store = stores[i];
			xs[i].bo = NULL;
			xs[i].nbo = xs[i].abo = 0;
			ctxs[i] = &xs[i];
		}
		worst = keep_batch_run(stdin, jobs, ctxs, release_cb, prog);
	}
	free(x.bo);
	for (i = 0; i < nstores; i++)
		keep_store_free(stores[i]);
	if (opt_stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
