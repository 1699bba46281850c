/* lease-fence — fence a node (ADR 0020 §2).
 *
 * Operator mode, `lease-fence NODE`: fence nodes/NODE over its current
 * object (If-Match the version read); refuse over a fence, a released
 * object or an old format, and over an absent object unless told
 * `--create` (then the fence is created, If-None-Match: *): a mistyped id
 * is refused with the known ids closest to it (issue 27).
 *
 * Peer mode, `lease-fence --stdin`: read node-watch's lines, and for each
 * `stale` candidate decide on one fresh versioned GET (lib/core/fence.c),
 * only while this node's own lease is valid and has been live long enough
 * for the line's watch to count: a line produced before a lapse of this
 * node (its live_since changed since) is dropped, and no fence goes before
 * live_since + write_every + attempt_timeout (keep_fence_peer_may, asked
 * before the read, on the decision, and right before the write; ADR 0020
 * §2, docs/fencing.md "After the fencer's own lapse"). Fences run on a pool of
 * KEEP_FENCE_CONCURRENCY threads, each with its own store handle and each
 * request bounded by (ttl - safety) / 3, so a hung fence never holds up
 * the others (and node-watch is another process). A `not-yet` decision is
 * taken again, on a new fresh read, at the moment its free_at_ms passes
 * (bounded), so a fence lands at the protocol's floor rather than at the
 * next stale line. See docs/fencing.md. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/fencerun.h"
#include "../lib/driver/storecmd.h"
#include "../lib/driver/supervise.h"
#include "../lib/local/statedir.h"
#include "../lib/platform/clock.h"

static const char usage[] =
    "usage: lease-fence [-c FILE] [--store URL] [--state-dir DIR] [--stats] [--json]\n"
    "                   [--create] NODE\n"
    "       lease-fence [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR] [--stats]\n"
    "                   [--json] --stdin\n"
    "\n"
    "NODE     operator fence of nodes/NODE over its live object (instance and\n"
    "         written_at kept). Prints `fenced node=.. instance=.. written_at_ms=..\n"
    "         free_at_ms=..`: records naming the node are free at free_at_ms.\n"
    "         Refuses a fenced, released or old-format object, and an absent one\n"
    "         (`refused ... reason=absent`, exit 1, with the known node ids closest\n"
    "         to NODE on stderr: a mistyped id). No node id or lease needed.\n"
    "  --create  fence NODE also when nodes/NODE is absent (a node that never\n"
    "         wrote, an object deleted): the fence is created with instance `-`.\n"
    "         `upgrade-mark forget NODE` removes such a fence again while no\n"
    "         ownership record names NODE.\n"
    "--stdin  peer fencing, fed by `node-watch --follow`: acts on `stale` lines\n"
    "         (other node-watch lines are ignored; a malformed line is reported\n"
    "         and skipped), only while this node's lease is valid, and never\n"
    "         before its live_since + write_every + attempt timeout: a line judged\n"
    "         before a lapse of this node is dropped (rewatch reason=own-lapse);\n"
    "         at most 8 fences at once. One line per stale line:\n"
    "         fenced|rewatch|not-yet|alive|already-fenced|skipped|failed|bad-object\n"
    "         node=.. instance=.. written_at_ms=.. [free_at_ms=..] [reason=..]\n"
    "         (a `fenced` line ends with decided_mono_ms=.. live_since_mono_ms=..:\n"
    "         the boot-clock time the write was allowed at, and this node's\n"
    "         live_since it was judged under)\n"
    "         (after a fence that did not land, the line says what a fresh read\n"
    "         shows: alive reason=wrote, already-fenced, or failed\n"
    "         reason=conflict-unchanged|ambiguous-unchanged when the node did not\n"
    "         write)\n"
    "         A not-yet is decided again on a fresh read when free_at_ms passes\n"
    "         (its own answer line follows), unless the input ended meanwhile.\n"
    "  --stats  at exit, one line on stderr: `stats requests=N get=N head=N put=N\n"
    "         delete=N list=N ok=N conflict=N not_found=N refused=N ambiguous=N\n"
    "         prog=lease-fence`\n"
    "  --check  validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit (NODE): 0 fenced; 1 refused (already fenced, released, old format), or\n"
    "the store refused the request (403, no such bucket); 17 nodes/NODE is not a\n"
    "keep node object; 100 usage or configuration; 111 store unreachable, the\n"
    "outcome unknown, or 5 fences that did not land (run it again).\n"
    "exit (--stdin): 0 at end of input or on SIGTERM; 100 usage; 111 store unusable.\n"
    "See docs/fencing.md.\n";

enum { OPT_STDIN = 0x2000, OPT_STATS, OPT_CREATE };

static const char *prog = "lease-fence";
static struct keep_fencerun C;

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"stdin", no_argument, NULL, OPT_STDIN},
					     {"stats", no_argument, NULL, OPT_STATS},
					     {"create", no_argument, NULL, OPT_CREATE},
					     {"check", no_argument, NULL, KEEP_OPT_CHECK},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_store *stores[KEEP_FENCE_CONCURRENCY];
	const char *target = NULL;
	bool from_stdin = false, opt_stats = false, create = false;
	int c, rc, i, nstores;

	keep_supervised_start(prog); /* under keep-agent: never outlive it */
	keep_fencerun_init(&C, prog);
	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		switch (c) {
		case OPT_STDIN:
			from_stdin = true;
			break;
		case OPT_STATS:
			opt_stats = true;
			break;
		case OPT_CREATE:
			create = true;
			break;
		}
	}
	if (optind < argc)
		target = argv[optind++];
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (!cli.check_only && !!target == from_stdin)
		keep_cli_usage_error(&cli, "give either NODE or --stdin");
	if (target && !keep_node_id_valid(target))
		keep_cli_usage_error(&cli, "invalid node id '%s'", target);
	if (create && from_stdin)
		keep_cli_usage_error(&cli,
				     "--create is for an operator's fence of NODE, not --stdin");
	keep_cli_load_config(&cli, &C.cfg);
	if (from_stdin && !C.cfg.node_id[0])
		keep_cli_usage_error(&cli, "--stdin needs a node id (--node-id or node_id:)");
	keep_cli_setup(&cli, &C.cfg, KEEP_NEED_STORE);
	if (from_stdin && keep_config_node_dir(&C.cfg, C.node_dir, sizeof(C.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, prog, "state directory path too long");
	keep_boot_id(C.boot_id, sizeof(C.boot_id));
	keep_metrics_init(&C.metrics, NULL, C.cfg.node_id[0] ? C.cfg.node_id : "operator");
	/* only the long-running peer mode owns the metrics file: an operator's
	 * one-shot fence on a node host must not wipe the agent's counters */
	keep_metrics_set_prog(&C.metrics, from_stdin ? C.cfg.metrics_textfile : NULL, prog);
	/* every counter from 0, written now: a fencer that never fences (it
	 * lost every race) still shows keep_fences_total, and increase() sees
	 * the first fence (docs/metrics.md) */
	keep_metrics_inc(&C.metrics, "keep_fences_total", 0);
	keep_metrics_inc(&C.metrics, "keep_fence_candidates_total", 0);
	keep_metrics_inc(&C.metrics, "keep_fence_bad_lines_total", 0);
	keep_metrics_declare_requests(&C.metrics);
	keep_metrics_flush(&C.metrics);

	keep_cli_stop_signals();

	nstores = from_stdin ? KEEP_FENCE_CONCURRENCY : 1;
	for (i = 0; i < nstores; i++)
		stores[i] = keep_store_open_or_die(prog, &C.cfg, &C.stats);
	rc = from_stdin ? keep_fencerun_peer(stores)
			: keep_fencerun_operator(stores[0], target, create);
	for (i = 0; i < nstores; i++)
		keep_store_free(stores[i]);
	if (opt_stats)
		keep_reqstats_print(&C.stats, prog);
	keep_fencerun_flush();
	keep_metrics_release(&C.metrics);
	return rc;
}
