/* owner-release — release holds, retry pending releases, resolve unresolved
 * acquires, drain (ADR 0020 §1, §3, §4, §5; docs/ownership.md).
 *
 * A driver of the resolver machine (lib/core/resolver.h), which decides
 * every step and its order: a release stops acting first (its pending entry
 * written, then the hold removed, durably), then writes the record naming
 * nobody, generation kept, If-Match the hold's acquire version, never a
 * DELETE (RGW ignores If-Match on DELETE). lib/ownrun.c performs what it
 * asks, up to 32 actions at once (--all, --pending). This file parses the
 * command line, opens the stores and prints the machine's events.
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
#include "../lib/core/resolver.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/holds.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/ownrun.h"
#include "../lib/statedir.h"

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

struct ctx {
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	struct keep_store *store;
	int64_t store_timeout_ms;
	struct keep_metrics *metrics; /* --pending --follow */
	const struct keep_reqstats *stats;
	int64_t deadline_mono_ms; /* --all: the drain's bound (progress lines) */
};

/* Answer lines from several threads (--jobs): one whole line at a time. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void write_gauges(const struct ctx *x, struct keep_metrics *m,
			 const struct keep_reqstats *stats);

/* Print one event of the resolver as its line (or a warning). */
static void on_event(void *arg, const struct keep_res_event *ev)
{
	struct ctx *x = arg;
	struct keep_buf b;

	switch (ev->kind) {
	case KEEP_REV_WARN:
		keep_warn(prog, "%s", ev->text);
		return;
	case KEEP_REV_PASS:
		if (x->metrics)
			write_gauges(x, x->metrics, x->stats);
		if (x->deadline_mono_ms && ev->left > 0 && isatty(2))
			/* a person waits: for what, how long */
			fprintf(stderr, "%s: drain: %lld release(s) pending, %lld s left at most\n",
				prog, (long long)ev->left,
				(long long)((x->deadline_mono_ms - keep_mono_ms() + 999) / 1000));
		return;
	default:
		break;
	}
	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, keep_res_event_name(ev->kind));
	keep_line_str(&b, "key", ev->key);
	if (ev->generation > 0)
		keep_line_int(&b, "generation", ev->generation);
	if (ev->kind == KEEP_REV_PENDING)
		keep_line_str(&b, "version", ev->version);
	else if (ev->reason)
		keep_line_str(&b, "reason", ev->reason);
	pthread_mutex_lock(&out_lock);
	keep_line_emit(&b);
	pthread_mutex_unlock(&out_lock);
	keep_buf_release(&b);
}

static void base_cfg(const struct ctx *x, enum keep_res_mode mode, struct keep_resolver_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->t = x->cfg.timing;
	c->timeout_ms = x->store_timeout_ms;
	c->concurrency = KEEP_PENDING_CONCURRENCY;
	c->backoff = mode == KEEP_RES_FOLLOW || mode == KEEP_RES_DRAIN;
}

/* KEY: release one hold now (1 s), then leave it parked. */
static int release_key(struct ctx *x, const char *key)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int rc;

	if (!keep_owner_key_valid(key)) {
		keep_warn(prog, "invalid key '%s'", key);
		return KEEP_EXIT_USAGE;
	}
	base_cfg(x, KEEP_RES_RELEASE, &c);
	c.concurrency = 1;
	snprintf(c.key, sizeof(c.key), "%s", key);
	keep_resolver_init(&r, &c);
	keep_resolver_run(&r, x->node_dir, &x->store, 1, &term_flag, on_event, x);
	rc = keep_resolver_exit_code(&r);
	keep_resolver_release(&r);
	return rc;
}

/* --pending [--follow] and --all: the resolver with up to 32 workers. */
static int resolve(struct ctx *x, enum keep_res_mode mode, int64_t wait_ms,
		   struct keep_store *const *stores, int nstores)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_buf b;
	int rc;

	base_cfg(x, mode, &c);
	if (mode == KEEP_RES_DRAIN) {
		c.deadline_mono_ms = keep_mono_ms() + wait_ms;
		x->deadline_mono_ms = c.deadline_mono_ms;
	}
	keep_resolver_init(&r, &c);
	/* a drain is not cut by SIGTERM: it is what a clean stop waits for */
	keep_resolver_run(&r, x->node_dir, stores, nstores,
			  mode == KEEP_RES_DRAIN ? NULL : &term_flag, on_event, x);
	rc = keep_resolver_exit_code(&r);
	if (mode == KEEP_RES_DRAIN) {
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start(&b, "drain");
		keep_line_int(&b, "pending", r.left);
		keep_line_emit(&b);
		keep_buf_release(&b);
	}
	keep_resolver_release(&r);
	return rc;
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
	bool all = false, pending = false, follow = false, opt_stats = false;
	int64_t wait_ms = -1;
	int c, rc, i, jobs = 1, nstores, worst = KEEP_EXIT_OK;
	struct keep_reqstats stats;
	struct keep_store *stores[JOBS_MAX];

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
	/* the resolver keeps up to 32 requests in flight (§5), each worker with
	 * its own connection; named keys go one after another */
	nstores = all || pending ? KEEP_PENDING_CONCURRENCY : optind < argc ? 1 : jobs;
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
		x.metrics = &m;
		x.stats = &stats;
		worst = resolve(&x, follow ? KEEP_RES_FOLLOW : KEEP_RES_PASS, 0, stores, nstores);
		x.metrics = NULL;
	} else if (all) {
		if (wait_ms < 0)
			wait_ms = keep_timing_takeover_ms(&x.cfg.timing);
		worst = resolve(&x, KEEP_RES_DRAIN, wait_ms, stores, nstores);
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
			ctxs[i] = &xs[i];
		}
		worst = keep_batch_run(stdin, jobs, ctxs, release_cb, prog);
	}
	for (i = 0; i < nstores; i++)
		keep_store_free(stores[i]);
	if (opt_stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
