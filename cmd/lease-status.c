/* lease-status — is this node's lease valid now? (readiness; ADR §1)
 *
 * Reads the lease state file lease-write keeps (state_dir/<id>/lease), then
 * the boot clock (lib/platform/clock.h); no store I/O. A state whose deadlines this
 * reader cannot compare (an older lease-write's monotonic file, another
 * boot) is not valid, with a warning saying why. The driver is
 * lib/driver/leasestatus.c; this file: the usage, the flags, the calls. */
#include <getopt.h>
#include <stdbool.h>

#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/leasestatus.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: lease-status [-c FILE] [--node-id ID] [--state-dir DIR] [--json]\n"
    "                    [--paths | --progress]\n"
    "       lease-status --notify VAR=VALUE...\n"
    "\n"
    "Print this node's lease state as one line and exit 0 only while the\n"
    "lease is valid (readiness). No store I/O.\n"
    "  lease node=ID phase=starting|live|ran-out|stopping|stopped|lost reason=..\n"
    "        instance=.. valid_ms=.. written_at_ms=.. lapses=..\n"
    "\n"
    "  --json    the line as one JSON object, same fields (docs/formats.md)\n"
    "  --paths   print what keep-agent needs from the configuration, one a line,\n"
    "            and exit 0: `node ID`, `dir STATE_DIR/ID`, `metrics FILE` (the\n"
    "            agent's metrics textfile, empty when metrics are off),\n"
    "            `period_ms N` (the heartbeat period), `stall_ms N` (2 periods +\n"
    "            the attempt timeout: a heartbeat older than that is stalled),\n"
    "            `log_timestamps auto|always|never` (log.timestamps)\n"
    "  --progress  the heartbeats of the peer-fencing pipeline (STATE_DIR/ID/watch,\n"
    "            STATE_DIR/ID/fence), one line each, and exit 0 (keep-agent status\n"
    "            judges them against its children's pids):\n"
    "            progress node=ID part=node-watch|lease-fence\n"
    "              state=ok|stalled|absent|bad pid=.. age_ms=.. stall_ms=..\n"
    "              [listing=ok|failing|failed]   (node-watch only)\n"
    "  --notify  send VAR=VALUE... (READY=1, STOPPING=1, STATUS=text) as one\n"
    "            message to systemd's notify socket, $NOTIFY_SOCKET, for\n"
    "            keep-agent under Type=notify; then wait half a second, so that\n"
    "            systemd finds the sender still in the unit; nothing without the\n"
    "            variable. No configuration read.\n"
    "\n"
    "exit: 0 valid; 10 fenced; 11 replaced (twin); 12 released by another;\n"
    "13 removed; 14 ran out; 15 not live (starting, stopping, stopped, no\n"
    "state, or a state this version cannot compare: an older lease-write's, another\n"
    "boot's); 100 usage. See docs/exit-codes.md. With no state (phase=none),\n"
    "one warning says why: no node ran under this id and state directory\n"
    "(naming the nodes that did), or the state cannot be read (the wrong user).\n";

enum { OPT_PATHS = 0x2000, OPT_PROGRESS, OPT_NOTIFY };

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"paths", no_argument, NULL, OPT_PATHS},
					     {"progress", no_argument, NULL, OPT_PROGRESS},
					     {"notify", no_argument, NULL, OPT_NOTIFY},
					     {NULL, 0, NULL, 0}};
	enum keep_line_format fmt = KEEP_LINE_TEXT;
	struct keep_cli cli;
	struct keep_config cfg;
	char dir[KEEP_PATH_MAX + 80];
	int c;
	bool paths = false, progress = false, sd = false;

	keep_cli_init(&cli, "lease-status", usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		if (c == OPT_PATHS)
			paths = true;
		else if (c == OPT_PROGRESS)
			progress = true;
		else if (c == OPT_NOTIFY)
			sd = true;
		else
			keep_cli_usage_error(&cli, "unknown option");
	}
	if (sd)
		return keep_leasestatus_notify(&cli, argc, argv, optind);
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	fmt = keep_line_out_format();
	keep_cli_load_config(&cli, &cfg);
	if (!cfg.node_id[0])
		keep_cli_usage_error(&cli, "no node id (--node-id or node_id: in the config)");
	if (keep_config_node_dir(&cfg, dir, sizeof(dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, "lease-status", "state directory path too long");
	if (paths && progress)
		keep_cli_usage_error(&cli, "--paths and --progress exclude each other");
	if (paths)
		return keep_leasestatus_paths(&cfg, dir);
	if (progress)
		return keep_leasestatus_progress(&cfg, dir, fmt);
	return keep_leasestatus_show(&cfg, dir, fmt);
}
