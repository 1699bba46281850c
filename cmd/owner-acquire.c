/* owner-acquire — acquire ownership records (ADR 0020 §2, §3, §6;
 * docs/ownership.md).
 *
 * A driver of the acquisition machine (lib/core/acquire.h), which decides
 * every step and its order; lib/driver/ownrun.c performs what it asks on the state
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

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/core/acquire.h"
#include "../lib/driver/batch.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownrun.h"
#include "../lib/local/holds.h"
#include "../lib/local/metrics.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: owner-acquire [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                     [--app ROOT] [--jobs N] [--stats] [--wait[=DURATION]]\n"
    "                     [KEY...]\n"
    "\n"
    "Acquire the ownership record owners/KEY for this node (KEY is\n"
    "tenant/class/name; with no KEY, keys are read from stdin, one a line).\n"
    "  --jobs N  stdin: up to N (1..32, default 1) keys at once, each thread\n"
    "            with its own store connection; answers in completion order\n"
    "  --wait[=DURATION]  while a key is held elsewhere, wait for it: try again\n"
    "            at its free_at_ms (on the judging clock), else once a heartbeat\n"
    "            period; through transient errors too (unknown, a timeout, 5xx,\n"
    "            429, this node's lease ran out or is starting): again after a\n"
    "            backoff with jitter, 100 ms doubling up to a period; give up\n"
    "            after DURATION (N or Nms, Ns, Nm, Nh; bare --wait: never) with\n"
    "            the last answer's code (held: 1), or at once at a definite one\n"
    "            (refused, draining, a lost lease, 17). Prints `waiting key=K\n"
    "            node=N free_at_ms=T|-` when it starts waiting on a holder (and\n"
    "            when the holder or its free time changes), and `retrying key=K\n"
    "            reason=R code=C in_ms=N` after each transient answer.\n"
    "            A batch tries its keys in input order, each worker waiting for\n"
    "            its key: with --jobs 1 a held key delays the keys after it (use\n"
    "            --jobs N). SIGINT/SIGTERM end the waits (answer held) and the\n"
    "            keys not tried yet get `error key=K reason=interrupted` (111).\n"
    "  --stats   at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "            put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "            ambiguous=N prog=owner-acquire`\n"
    "One answer line per key:\n"
    "  acquired key=K generation=G version=V new=yes|no\n"
    "  held key=K node=N instance=I generation=G [free_at_ms=T]\n"
    "  unknown key=K generation=G        outcome unknown, kept for the resolver\n"
    "  refused key=K reason=..           not held: lease-not-valid or draining (nothing\n"
    "                                    written), lease-lapsed (written, but the lease\n"
    "                                    was not valid at the reply: released in the\n"
    "                                    background)\n"
    "  error key=K reason=..             not held: store, state-dir, bad-record,\n"
    "                                    bad-lease, record-missing, invalid-key,\n"
    "                                    interrupted (--wait, not tried)\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit (the first that applies over all keys): 100 bad key or usage;\n"
    "17 a record or leases/ object keep cannot read, or a record deleted by\n"
    "hand (record-missing); 10..16 the node lease is not valid (as\n"
    "lease-status); 111 store (for now: timeout, 5xx) or state directory\n"
    "failure; 20 unknown outcome (kept pending); 1 held elsewhere, or the store\n"
    "refused a request (403, no such bucket); 0 every key acquired.\n"
    "See docs/exit-codes.md and docs/ownership.md.\n";

static const char *prog = "owner-acquire";

#define JOBS_MAX KEEP_BATCH_JOBS_MAX

/* --wait: 0 none, KEEP_WAIT_FOREVER, else ms (read-only once parsed) */
static int64_t wait_ms;

static int acquire_one(struct keep_owncmd *x, const char *key)
{
	struct keep_acquire sm;

	if (!keep_owner_key_valid(key))
		return keep_cli_invalid_key(prog, key);
	if (wait_ms && keep_stop_flag) {
		/* --wait was interrupted (SIGINT, SIGTERM): the keys not tried
		 * yet are not tried at all, nothing written */
		struct keep_buf b;

		keep_line_begin(&b, "error");
		keep_line_str(&b, "key", key);
		keep_line_str(&b, "reason", "interrupted");
		keep_line_end(&b);
		return KEEP_EXIT_TEMP;
	}
	if (x->never_ran && !wait_ms)
		return keep_acquire_never_ran(prog, key);
	keep_acquire_wait(&sm, x, key, wait_ms, &keep_stop_flag, prog);
	return keep_acquire_answer(prog, &sm);
}

static int acquire_cb(void *ctx, const char *key)
{
	return acquire_one(ctx, key);
}

int main(int argc, char **argv)
{
	enum { OPT_WAIT = 0x2000 };
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     KEEP_CLI_APP_LONGOPT,
					     KEEP_CLI_BATCH_LONGOPTS,
					     {"wait", optional_argument, NULL, OPT_WAIT},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_owncmd x;
	struct keep_reqstats stats;
	struct keep_store *stores[JOBS_MAX];
	int nstores, worst;

	memset(&x, 0, sizeof(x));
	keep_cli_init(&cli, prog, usage);
	while (keep_cli_next(&cli, argc, argv, "hc:", opts) != -1) /* only OPT_WAIT */
		wait_ms = keep_cli_wait_arg(&cli, optarg);
	if (wait_ms)
		keep_cli_stop_signals(); /* SIGTERM, SIGINT: stop waiting, answer held */
	keep_reqstats_init(&stats);
	nstores = optind < argc ? 1 : cli.jobs;
	/* a node that never ran holds nothing: without --wait every key is
	 * refused and nothing is created; with --wait it may be starting */
	x.keep_absent = !wait_ms;
	keep_owncmd_setup(&x, &cli, &stats, nstores, stores);
	keep_owncmd_warn_never_ran(&x, prog);

	worst =
	    keep_owncmd_keys(&x, argc - optind, argv + optind, cli.jobs, stores, acquire_cb, prog);
	keep_owncmd_close(stores, nstores);
	if (cli.stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
