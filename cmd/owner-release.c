/* owner-release — release holds, retry pending releases, resolve unresolved
 * acquires, drain (ADR 0020 §1, §3, §4, §5; docs/ownership.md).
 *
 * A driver of the resolver machine (lib/core/resolver.h), which decides
 * every step and its order: a release stops acting first (its pending entry
 * written, then the hold removed, durably), then writes the record naming
 * nobody, generation kept, If-Match the hold's acquire version, never a
 * DELETE (RGW ignores If-Match on DELETE). lib/driver/ownrun.c performs what it
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

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/core/resolver.h"
#include "../lib/driver/batch.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownrun.h"
#include "../lib/driver/supervise.h"
#include "../lib/local/holds.h"
#include "../lib/local/metrics.h"
#include "../lib/local/statedir.h"
#include "../lib/platform/clock.h"
#include "../lib/platform/line.h"

#define JOBS_MAX KEEP_BATCH_JOBS_MAX

static const char usage[] =
    "usage: owner-release [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                     [--app ROOT] [--jobs N] [--stats] [KEY...]\n"
    "       owner-release [common flags] --all [--wait-ms MS]\n"
    "       owner-release [common flags] --pending [--follow]\n"
    "\n"
    "KEY...     release these holds (with no KEY and no mode: keys on stdin,\n"
    "           one a line); each within 1 s of its start (the per-actor lock,\n"
    "           the write, a read after a conflict), then parked as a pending\n"
    "           release; a lock still busy then: nothing done (lock-busy, 111)\n"
    "--all      the drain: release every hold, 32 at once, and wait (MS,\n"
    "           default ttl + grace) until nothing is pending; MS bounds every\n"
    "           lock wait and request of the drain\n"
    "--pending  one pass over pending releases and unresolved acquires, 32 at\n"
    "           once; --follow: a pass every heartbeat period until SIGTERM\n"
    "--jobs N   stdin: up to N (1..32, default 1) keys at once, each thread\n"
    "           with its own store connection; answers in completion order\n"
    "--stats    at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "           put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "           ambiguous=N prog=owner-release`\n"
    "\n"
    "Lines: released key=K generation=G | ended key=K generation=G reason=..\n"
    "  | pending key=K generation=G version=V | dropped key=K generation=G reason=..\n"
    "  | none key=K | error key=K generation=G reason=state-dir\n"
    "  | error key=K reason=lock-busy | drain pending=N\n"
    "A release is sent only once its hold is removed durably (else `error`,\n"
    "nothing sent, the resolver retries it), and once no process of the key's\n"
    "job (owner-run's run lock) lives: they get SIGTERM, SIGKILL after the job's\n"
    "--kill-after; one that outlives it keeps the release pending.\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit: 0 done (nothing left pending); 1 no hold of a KEY; 20 releases\n"
    "still pending; 100 usage; 111 state directory or store unusable, a\n"
    "hold that could not be removed (nothing sent), or a lock busy past 1 s.\n"
    "See docs/exit-codes.md and docs/ownership.md.\n";

static const char *prog = "owner-release";
/* The command's own state, in struct keep_owncmd's extra. */
struct rel {
	struct keep_metrics *metrics; /* --pending --follow */
	const struct keep_reqstats *stats;
	int64_t deadline_mono_ms; /* --all: the drain's bound (progress lines) */
	int64_t next_say_mono_ms; /* --all: the next progress line, once a period */
};

/* Print one event of the resolver as its line (or a warning). */
static void on_event(void *arg, const struct keep_res_event *ev)
{
	struct keep_owncmd *x = arg;
	struct rel *rl = x->extra;

	switch (ev->kind) {
	case KEEP_REV_WARN:
		keep_warn(prog, "%s", ev->text);
		return;
	case KEEP_REV_PASS:
		if (rl->metrics) /* the --follow process owns keep.owner-release.prom */
			keep_owncmd_gauges(x->node_dir, rl->metrics, rl->stats);
		if (rl->deadline_mono_ms && ev->left > 0 &&
		    keep_boot_ms() >= rl->next_say_mono_ms) {
			/* someone waits (a person, the agent's stop): for what, how
			 * long; once a period at most */
			keep_info(
			    prog, "drain: %lld release(s) pending, %lld s left at most",
			    (long long)ev->left,
			    (long long)((rl->deadline_mono_ms - keep_boot_ms() + 999) / 1000));
			rl->next_say_mono_ms =
			    keep_timing_progress_due_ms(keep_boot_ms(), x->cfg.timing.period_ms, 1);
		}
		return;
	default:
		break;
	}
	keep_res_event_line(ev);
}

/* KEY: release one hold now (1 s), then leave it parked. */
static int release_key(struct keep_owncmd *x, const char *key)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int rc;

	if (!keep_owner_key_valid(key)) {
		keep_warn(prog, "invalid key '%s'", key);
		return KEEP_EXIT_USAGE;
	}
	keep_owncmd_resolver_cfg(x, KEEP_RES_RELEASE, &c);
	c.concurrency = 1;
	snprintf(c.key, sizeof(c.key), "%s", key);
	keep_resolver_init(&r, &c);
	keep_resolver_run(&r, x->node_dir, &x->store, 1, &keep_stop_flag, on_event, x);
	rc = keep_resolver_exit_code(&r);
	keep_resolver_release(&r);
	return rc;
}

/* --all for a node that never ran under this state directory (no lease
 * state file: a mistyped --node-id or --state-dir) finds nothing to drain
 * and exits 0 as a drain of an idle node does: one warning line on stderr
 * keeps it from passing for a drain done (issue 27, the operator's
 * walkthrough). Reads the state directory only. */
static void warn_never_ran(const struct keep_config *cfg)
{
	struct keep_lease_state st;
	char dir[4096];

	if (keep_config_node_dir(cfg, dir, sizeof(dir)) != 0)
		return;
	if (keep_lease_state_read(dir, &st) == KEEP_ERR_IO && errno == ENOENT)
		keep_warn(prog,
			  "no lease state for node %s in '%s': no node ran here under this id "
			  "and state directory, so there is nothing to drain (check --node-id "
			  "and --state-dir)",
			  cfg->node_id, dir);
}

/* --pending [--follow] and --all: the resolver with up to 32 workers. */
static int resolve(struct keep_owncmd *x, enum keep_res_mode mode, int64_t wait_ms,
		   struct keep_store *const *stores, int nstores)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_buf b;
	int rc;

	keep_owncmd_resolver_cfg(x, mode, &c);
	if (mode == KEEP_RES_DRAIN) {
		c.deadline_mono_ms = keep_add_sat_ms(keep_boot_ms(), wait_ms);
		((struct rel *)x->extra)->deadline_mono_ms = c.deadline_mono_ms; /* progress */
	}
	keep_resolver_init(&r, &c);
	/* a drain is not cut by SIGTERM: it is what a clean stop waits for */
	keep_resolver_run(&r, x->node_dir, stores, nstores,
			  mode == KEEP_RES_DRAIN ? NULL : &keep_stop_flag, on_event, x);
	rc = keep_resolver_exit_code(&r);
	if (mode == KEEP_RES_DRAIN) {
		keep_line_begin(&b, "drain");
		keep_line_int(&b, "pending", r.left);
		keep_line_end(&b);
	}
	keep_resolver_release(&r);
	return rc;
}

static int release_cb(void *ctx, const char *key)
{
	return release_key(ctx, key);
}

int main(int argc, char **argv)
{
	enum { OPT_ALL = 0x2000, OPT_PENDING, OPT_FOLLOW, OPT_WAIT };
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     KEEP_CLI_APP_LONGOPT,
					     {"all", no_argument, NULL, OPT_ALL},
					     {"pending", no_argument, NULL, OPT_PENDING},
					     {"follow", no_argument, NULL, OPT_FOLLOW},
					     {"wait-ms", required_argument, NULL, OPT_WAIT},
					     KEEP_CLI_BATCH_LONGOPTS,
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_owncmd x;
	struct rel rl;
	bool all = false, pending = false, follow = false;
	int64_t wait_ms = -1;
	int c, nstores, worst = KEEP_EXIT_OK;
	struct keep_reqstats stats;
	struct keep_store *stores[JOBS_MAX];

	keep_supervised_start(prog); /* under keep-agent: never outlive it */
	memset(&x, 0, sizeof(x));
	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
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
		case OPT_WAIT:
			wait_ms = keep_cli_int_arg(&cli, "--wait-ms", optarg, 0, 86400000);
			break;
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
	keep_reqstats_init(&stats);
	/* the resolver keeps up to 32 requests in flight (§5), each worker with
	 * its own connection; named keys go one after another */
	nstores = all || pending ? KEEP_PENDING_CONCURRENCY : optind < argc ? 1 : cli.jobs;
	memset(&rl, 0, sizeof(rl));
	x.extra = &rl;
	keep_owncmd_setup(&x, &cli, &stats, nstores, stores);

	keep_cli_stop_signals();

	if (pending) {
		struct keep_metrics m;

		keep_metrics_init(&m, NULL, x.cfg.node_id);
		keep_metrics_set_prog(&m, follow ? x.cfg.metrics_textfile : NULL, prog);
		keep_metrics_set_app(&m, x.cfg.app); /* each root's resolver its own file */
		keep_metrics_declare_requests(&m);   /* every counter from 0 */
		rl.metrics = &m;
		rl.stats = &stats;
		worst = resolve(&x, follow ? KEEP_RES_FOLLOW : KEEP_RES_PASS, 0, stores, nstores);
		rl.metrics = NULL;
	} else if (all) {
		if (wait_ms < 0)
			wait_ms = keep_timing_takeover_ms(&x.cfg.timing);
		warn_never_ran(&x.cfg);
		worst = resolve(&x, KEEP_RES_DRAIN, wait_ms, stores, nstores);
	} else {
		worst = keep_owncmd_keys(&x, argc - optind, argv + optind, cli.jobs, stores,
					 release_cb, prog);
	}
	keep_owncmd_close(stores, nstores);
	if (cli.stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
