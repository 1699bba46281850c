/* owner-watch — follow the ownership records owners/PREFIX... (ADR 0020 §2, §3;
 * docs/ownership.md "Watching owners").
 *
 * A thin command over lib/driver/ownerwatch.c, the driver of
 * lib/core/watchlist.c: every heartbeat period it lists owners/PREFIX,
 * reads a record only when its listed version token is not the version of
 * the body it holds (lib/core/listing.c, node-watch's rule too), then
 * lists nodes/ and reads the node object of each holder of a watched
 * record the same way (at most one read per node per pass), and prints the
 * events between this pass's view of each key and the last one. --once is
 * one pass that prints the table. Writes nothing. Here: the usage, the
 * flags and the calls. */
#include <getopt.h>
#include <string.h>

#include "../lib/codec/ownerrec.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownerwatch.h"
#include "../lib/driver/storecmd.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: owner-watch [-c FILE] [--store URL] [--follow | --once [--table]]\n"
    "                   [--app ROOT] [--json] [--stats] [--check] [PREFIX]\n"
    "\n"
    "Follow the ownership records owners/PREFIX... (PREFIX: the start of a\n"
    "tenant/class/name key; none: every record). Each heartbeat period, list\n"
    "them and read a record only when its listed version token changed; read\n"
    "a holder's nodes/ID the same way, once a period at most.\n"
    "\n"
    "  --follow  (default) print the table (as --once), then `synced keys=N`,\n"
    "            then one line per change, until SIGTERM/SIGINT:\n"
    "            `acquired key=K node=N instance=I generation=G previous_node=P\n"
    "            missed=M`, `released key=K node=N instance=I generation=G\n"
    "            missed=M`, `holder-STATE key=K node=N instance=I generation=G`\n"
    "            (STATE: fenced, released, absent, live-other-instance, live,\n"
    "            old-format, unreadable), `removed key=K ...` (a record deleted\n"
    "            by hand: its holder may still act), `recreated key=K node=N\n"
    "            instance=I generation=G previous_node=P previous_generation=PG`\n"
    "            (its generation went back: deleted and created again between\n"
    "            two listings), `unreadable key=K ... reason=..`\n"
    "  --once    one pass, one line per record:\n"
    "            `owner key=K state=held|nobody|unreadable node=N instance=I\n"
    "            generation=G holder=live|live-other-instance|fenced|released|\n"
    "            absent|old-format|unreadable|- free=yes|no [reason=..]`\n"
    "  --table   with --once: a table for people instead\n"
    "  --json    each line as one JSON object, same fields (docs/formats.md)\n"
    "  --stats   at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "            put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "            ambiguous=N prog=owner-watch`\n"
    "  --check   validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit: 0 done (--once) or stopped by a signal; 17 a record is not ours or\n"
    "malformed (--once); 100 usage or configuration; 111 a listing or a read\n"
    "failed (--once), or stdout closed. See docs/ownership.md.\n";

static const char *prog = "owner-watch";

int main(int argc, char **argv)
{
	struct keep_cli cli;
	struct keep_watch_opts o;
	struct keep_ownerwatch d;
	const char *prefix;
	char shown[300];
	int rc;

	keep_ownerwatch_init(&d, prog);
	keep_cli_init(&cli, prog, usage);
	keep_cli_watch_parse(&cli, argc, argv, &o);
	if (argc - optind > 1)
		keep_cli_usage_error(&cli, "at most one PREFIX");
	prefix = optind < argc ? argv[optind] : "";
	if (!keep_owner_key_prefix_valid(prefix))
		keep_cli_usage_error(&cli, "invalid prefix '%s' (the start of tenant/class/name)",
				     keep_line_escaped(prefix, shown, sizeof(shown)));
	d.fmt = keep_line_out_format();
	keep_cli_setup(&cli, &d.cfg, KEEP_NEED_STORE);
	keep_ownerwatch_scope(&d, prefix);

	keep_reqstats_init(&d.stats);
	d.store = keep_store_open_or_die(prog, &d.cfg, &d.stats);
	keep_cli_stop_signals();

	rc = o.once ? keep_ownerwatch_once(&d, o.table) : keep_ownerwatch_follow(&d);
	if (o.stats)
		keep_reqstats_print(&d.stats, prog);
	keep_ownerwatch_release(&d);
	return rc;
}
