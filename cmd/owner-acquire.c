/* owner-acquire — acquire ownership records (ADR 0020 §2, §3, §6;
 * docs/ownership.md).
 *
 * A driver of the acquisition machine (lib/core/acquire.h), which decides
 * every step and its order; lib/ownrun.c performs what it asks on the state
 * directory and the store. This file parses the command line, opens the
 * store and prints the machine's answer, one line per key.
 *
 * A batch on stdin may run --jobs N acquisitions at once (N <= 32): N
 * threads, each with its own store handle (one connection kept alive per
 * thread), each key still under its own per-actor flock (a lock per open
 * file: two threads on one key take turns). Answer lines are tagged with
 * their key, in completion order. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/batch.h"
#include "../lib/cli.h"
#include "../lib/core/acquire.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/holds.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/ownrun.h"

static const char usage[] =
    "usage: owner-acquire [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                     [--jobs N] [--stats] [KEY...]\n"
    "\n"
    "Acquire the ownership record owners/KEY for this node (KEY is\n"
    "tenant/class/name; with no KEY, keys are read from stdin, one a line).\n"
    "  --jobs N  stdin: up to N (1..32, default 1) keys at once, each thread\n"
    "            with its own store connection; answers in completion order\n"
    "  --stats   at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "            put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "            ambiguous=N prog=owner-acquire`\n"
    "One answer line per key:\n"
    "  acquired key=K generation=G version=V new=yes|no\n"
    "  held key=K node=N instance=I generation=G [free_at_ms=T]\n"
    "  unknown key=K generation=G        outcome unknown, kept for the resolver\n"
    "  refused key=K reason=..           nothing written (lease not valid, draining)\n"
    "  error key=K reason=..             nothing written (store, bad record, bad key)\n"
    "\n"
    "exit (the first that applies over all keys): 100 bad key or usage;\n"
    "17 a record is not ours; 10..16 the node lease is not valid (as\n"
    "lease-status); 111 store failure; 20 unknown outcome (kept pending);\n"
    "1 held elsewhere; 0 every key acquired. See docs/exit-codes.md.\n";

static const char *prog = "owner-acquire";

#define JOBS_MAX KEEP_BATCH_JOBS_MAX

enum { OPT_JOBS = 0x2000, OPT_STATS };

/* Answer lines from several threads: one whole line at a time. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void emit(struct keep_buf *b)
{
	pthread_mutex_lock(&out_lock);
	keep_line_emit(b);
	pthread_mutex_unlock(&out_lock);
}

struct ctx {
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	struct keep_store *store;
	int64_t store_timeout_ms;
};

/* Print the machine's warnings and its answer line; its exit code. */
static int answer(const struct keep_acquire *sm)
{
	const struct keep_acquire_result *r = &sm->res;
	struct keep_buf b;
	int i;

	for (i = 0; i < sm->nmsg; i++)
		keep_warn(prog, "%s", sm->msg[i]);
	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, keep_acq_result_name(r->kind));
	keep_line_str(&b, "key", sm->key);
	switch (r->kind) {
	case KEEP_AR_ACQUIRED:
		keep_line_int(&b, "generation", r->generation);
		keep_line_str(&b, "version", r->version);
		keep_line_str(&b, "new", r->fresh ? "yes" : "no");
		break;
	case KEEP_AR_HELD:
		keep_line_str(&b, "node", r->holder.node);
		keep_line_str(&b, "instance", r->holder.instance);
		keep_line_int(&b, "generation", r->holder.generation);
		if (r->free_at_ms)
			keep_line_int(&b, "free_at_ms", r->free_at_ms);
		break;
	case KEEP_AR_UNKNOWN:
		keep_line_int(&b, "generation", r->generation);
		break;
	case KEEP_AR_REFUSED:
	case KEEP_AR_ERROR:
		keep_line_str(&b, "reason", r->reason);
		break;
	}
	emit(&b);
	keep_buf_release(&b);
	return r->exit_code;
}

static int acquire_one(struct ctx *x, const char *key)
{
	struct keep_acquire sm;
	struct keep_ownio io = {x->node_dir, x->store};
	struct keep_buf b;

	if (!keep_owner_key_valid(key)) {
		keep_warn(prog,
			  "invalid key '%s' (tenant/class/name, each [A-Za-z0-9._-]{1,128}, "
			  "not starting with '.')",
			  key);
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start(&b, "error");
		keep_line_str(&b, "key", key);
		keep_line_str(&b, "reason", "invalid-key");
		emit(&b);
		keep_buf_release(&b);
		return KEEP_EXIT_USAGE;
	}
	keep_acquire_init(&sm, x->cfg.node_id, key, &x->cfg.timing, x->store_timeout_ms);
	keep_acquire_run(&sm, &io);
	return answer(&sm);
}

static int acquire_cb(void *ctx, const char *key)
{
	return acquire_one(ctx, key);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"jobs", required_argument, NULL, OPT_JOBS},
					     {"stats", no_argument, NULL, OPT_STATS},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct ctx x;
	struct keep_store_opts so;
	struct keep_reqstats stats;
	struct keep_store *stores[JOBS_MAX];
	char err[512];
	bool opt_stats = false;
	int c, rc, i, jobs = 1, nstores, worst = KEEP_EXIT_OK;

	memset(&x, 0, sizeof(x));
	keep_cli_init(&cli, prog, usage);
	while ((c = getopt_long(argc, argv, "hc:", opts, NULL)) != -1) {
		if (keep_cli_common_opt(&cli, c, optarg))
			continue;
		switch (c) {
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
	nstores = optind < argc ? 1 : jobs;
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

	if (optind < argc) {
		for (i = optind; i < argc; i++)
			keep_exit_worst(&worst, acquire_one(&x, argv[i]));
	} else {
		/* keys on stdin: worker i has its own store connection */
		struct ctx xs[JOBS_MAX];
		void *ctxs[JOBS_MAX];

		ctxs[0] = &x;
		for (i = 0; jobs > 1 && i < jobs; i++) {
			xs[i] = x;
			xs[i].store = stores[i];
			ctxs[i] = &xs[i];
		}
		worst = keep_batch_run(stdin, jobs, ctxs, acquire_cb, prog);
	}
	for (i = 0; i < nstores; i++)
		keep_store_free(stores[i]);
	if (opt_stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
