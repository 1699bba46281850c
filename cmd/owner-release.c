/* owner-release — release holds, retry pending releases, resolve unresolved
 * acquires, drain (ADR 0020 §1, §3, §4, §5; docs/ownership.md).
 *
 * A driver of the resolver machine (lib/core/resolver.h), which decides
 * every step and its order: a release stops acting first (its pending entry
 * written, then the hold removed, durably), then writes the record naming
 * nobody, generation kept, If-Match the hold's acquire version, never a
 * DELETE (RGW ignores If-Match on DELETE). lib/driver/ownrun.c performs what it
 * asks, up to 32 actions at once (--all, --pending), and
 * lib/driver/releaserun.c runs it per mode and prints the machine's events.
 * This file parses the command line and opens the stores.
 *
 * Keys on stdin may be released --jobs N at once (N <= 32): N threads,
 * each with its own store handle (one connection kept alive per thread),
 * each key under its per-actor flock; answers in completion order. */
#include <getopt.h>
#include <string.h>

#include "../lib/base/exitcode.h"
#include "../lib/driver/batch.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownrun.h"
#include "../lib/driver/releaserun.h"
#include "../lib/driver/supervise.h"

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
	struct keep_releaserun rl;
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
	rl.prog = prog;
	x.extra = &rl;
	keep_owncmd_setup(&x, &cli, &stats, nstores, stores);

	keep_cli_stop_signals();

	if (pending)
		worst = keep_releaserun_pending(&x, follow, &stats, stores, nstores);
	else if (all)
		worst = keep_releaserun_drain(&x, wait_ms, stores, nstores);
	else
		worst = keep_owncmd_keys(&x, argc - optind, argv + optind, cli.jobs, stores,
					 keep_releaserun_key, prog);
	keep_owncmd_close(stores, nstores);
	if (cli.stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
