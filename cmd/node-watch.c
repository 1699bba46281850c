/* node-watch — membership, cluster status and fence candidates (ADR 0020 §2, §6).
 *
 * A thin command over lib/driver/nodewatch.c, the driver of the watch in
 * lib/core/fence.c: every heartbeat period it lists nodes/ and reads only
 * the bodies it needs (a new node, one whose listed version token stopped
 * changing, one not live-and-changing: a node whose token changed since
 * the last listing wrote, and is alive), reads this node's lease state
 * file, feeds the pass to the watch and prints its events; between
 * listings it wakes when a watch bound passes and prints the stale
 * candidate then. --once reads every body and prints one status line per
 * node (cluster status). Here: the usage, the flags and the calls. See
 * docs/fencing.md. */
#include <getopt.h>
#include <string.h>

#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/nodewatch.h"
#include "../lib/driver/storecmd.h"
#include "../lib/driver/supervise.h"
#include "../lib/local/statedir.h"
#include "../lib/platform/clock.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: node-watch [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                  [--follow | --once [--table]] [--json] [--stats]\n"
    "\n"
    "List nodes/ every heartbeat period; read a node's object only when needed\n"
    "(new, or its listed version token stopped changing).\n"
    "\n"
    "  --follow   (default) run until SIGTERM/SIGINT; print change events\n"
    "             `join|change|leave node=ID state=.. instance=.. written_at_ms=.. format=..`\n"
    "             and fence candidates `stale node=ID instance=.. written_at_ms=..\n"
    "             unchanged_ms=.. live_since_mono_ms=.. watch_since_mono_ms=..` (only\n"
    "             with a node id whose lease is valid: see STATE_DIR/ID/lease), for\n"
    "             `lease-fence --stdin`\n"
    "  --once     one pass, one line per node (cluster status):\n"
    "             `node id=ID state=live|released|fenced|old-running|old-retired|unreadable\n"
    "             instance=.. written_at_ms=.. age_ms=.. format=3|1|2 [fenced_by=..\n"
    "             fenced_at_ms=..] [free_at_ms=..] [reason=..] [ahead_ms=..]`\n"
    "             (age_ms 0 and ahead_ms when written_at is ahead of this clock)\n"
    "  --table    with --once: a table for people instead (NODE STATE FORMAT HOST\n"
    "             INSTANCE WRITTEN_AT_MS AGE NOTE; a fence's NOTE says when its\n"
    "             records are free: `free in Ns`, or `free since Ns`)\n"
    "  --json     each line as one JSON object, same fields (docs/formats.md);\n"
    "             lease-fence --stdin reads the text lines only\n"
    "  --stats    at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "             put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "             ambiguous=N prog=node-watch`\n"
    "  --check    validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit: 0 done (--once) or stopped by a signal; 1 the store refused the listing\n"
    "or a read (--once: 403, no such bucket); 100 usage or configuration; 111 the\n"
    "listing or a read failed for now (--once: timeout, 5xx), or stdout closed.\n"
    "See docs/fencing.md.\n";

int main(int argc, char **argv)
{
	struct keep_cli cli;
	struct keep_watch_opts o;
	struct keep_nodewatch d;
	int rc;

	keep_nodewatch_init(&d, "node-watch");
	keep_supervised_start(d.prog); /* under keep-agent: never outlive it */
	keep_cli_init(&cli, d.prog, usage);
	keep_cli_watch_parse(&cli, argc, argv, &o);
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (cli.app)
		keep_cli_usage_error(&cli, "--app: nodes/ is shared by every application root "
					   "(owner-watch --app lists a root's records)");
	d.fmt = keep_line_out_format();
	keep_cli_setup(&cli, &d.cfg, KEEP_NEED_STORE);
	if (d.cfg.node_id[0] && keep_config_node_dir(&d.cfg, d.node_dir, sizeof(d.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, d.prog, "state directory path too long");
	keep_boot_id(d.boot_id, sizeof(d.boot_id));
	keep_metrics_init(&d.metrics, NULL, d.cfg.node_id[0] ? d.cfg.node_id : "-");
	/* only --follow (the agent's) owns the metrics file: a one-shot status
	 * run on a node host must not wipe the agent's counters */
	keep_metrics_set_prog(&d.metrics, o.once ? NULL : d.cfg.metrics_textfile, d.prog);

	keep_reqstats_init(&d.stats);
	d.store = keep_store_open_or_die(d.prog, &d.cfg, &d.stats);
	keep_store_set_on_page(d.store, keep_nodewatch_on_page, &d); /* beats only in --follow */

	keep_cli_stop_signals();

	if (o.once) {
		rc = keep_nodewatch_once(&d, o.table);
	} else {
		if (!d.cfg.node_id[0])
			keep_warn(d.prog, "no node id: no stale candidates will be printed");
		rc = keep_nodewatch_follow(&d);
	}
	if (o.stats)
		keep_reqstats_print(&d.stats, d.prog);
	keep_nodewatch_release(&d);
	return rc;
}
