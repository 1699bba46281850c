/* lease-status — is this node's lease valid now? (readiness; ADR §1)
 *
 * Reads the lease state file lease-write keeps (state_dir/<id>/lease), then
 * the boot clock (lib/clock.h); no store I/O. A state whose deadlines this
 * reader cannot compare (an older lease-write's monotonic file, another
 * boot) is not valid, with a warning saying why. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/statedir.h"

static const char usage[] =
    "usage: lease-status [-c FILE] [--node-id ID] [--state-dir DIR] [--json] [--paths]\n"
    "\n"
    "Print this node's lease state as one line and exit 0 only while the\n"
    "lease is valid (readiness). No store I/O.\n"
    "  lease node=ID phase=starting|live|ran-out|stopping|stopped|lost reason=..\n"
    "        instance=.. valid_ms=.. written_at_ms=.. lapses=..\n"
    "\n"
    "  --json    the line as one JSON object, same fields (docs/formats.md)\n"
    "  --paths   print what keep-agent needs from the configuration, one a line,\n"
    "            and exit 0: `node ID`, `dir STATE_DIR/ID`, `metrics FILE` (the\n"
    "            agent's metrics textfile, empty when metrics are off)\n"
    "\n"
    "exit: 0 valid; 10 fenced; 11 replaced (twin); 12 released by another;\n"
    "13 removed; 14 ran out; 15 not live (starting, stopping, stopped, no\n"
    "state, or a state this version cannot compare: an older lease-write's, another\n"
    "boot's); 100 usage. See docs/exit-codes.md.\n";

static int code_for(const struct keep_lease_state *s, const char *why)
{
	if (why)
		return KEEP_EXIT_NOT_LIVE; /* its deadlines cannot be compared here */
	if (strcmp(s->phase, "ran-out") == 0)
		return KEEP_EXIT_RAN_OUT;
	if (strcmp(s->phase, "live") == 0)
		return KEEP_EXIT_RAN_OUT; /* live but past its validity: ran out */
	if (strcmp(s->phase, "lost") == 0) {
		if (strcmp(s->reason, "fenced") == 0)
			return KEEP_EXIT_FENCED;
		if (strcmp(s->reason, "replaced") == 0)
			return KEEP_EXIT_REPLACED;
		if (strcmp(s->reason, "released") == 0)
			return KEEP_EXIT_RELEASED;
		if (strcmp(s->reason, "removed") == 0)
			return KEEP_EXIT_REMOVED;
		if (strcmp(s->reason, "old-version-running") == 0)
			return KEEP_EXIT_OLD_RUNNING;
		if (strcmp(s->reason, "bad-object") == 0)
			return KEEP_EXIT_BAD_OBJECT;
	}
	return KEEP_EXIT_NOT_LIVE;
}

/* --paths: the lines keep-agent reads with `read` (a path with a newline
 * cannot be one line: refused). */
static int print_paths(const struct keep_config *cfg, const char *dir)
{
	struct keep_metrics m;

	keep_metrics_init(&m, NULL, cfg->node_id);
	keep_metrics_set_prog(&m, cfg->metrics_textfile, "keep-agent");
	if (strchr(dir, '\n') || strchr(m.path, '\n'))
		keep_die(KEEP_EXIT_USAGE, "lease-status", "a path with a newline: refused");
	printf("node %s\ndir %s\nmetrics %s\n", cfg->node_id, dir, m.path);
	keep_metrics_release(&m);
	return KEEP_EXIT_OK;
}

enum { OPT_JSON = 0x2000, OPT_PATHS };

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"json", no_argument, NULL, OPT_JSON},
					     {"paths", no_argument, NULL, OPT_PATHS},
					     {NULL, 0, NULL, 0}};
	enum keep_line_format fmt = KEEP_LINE_TEXT;
	struct keep_cli cli;
	struct keep_config cfg;
	struct keep_lease_state st;
	struct keep_buf b;
	char dir[KEEP_PATH_MAX + 80], boot[64];
	int64_t now;
	int c, rc;
	bool valid, paths = false;
	const char *why;

	keep_cli_init(&cli, "lease-status", usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		if (c == OPT_PATHS)
			paths = true;
		else if (c == OPT_JSON)
			fmt = KEEP_LINE_JSON;
		else
			keep_cli_usage_error(&cli, "unknown option");
	}
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	keep_cli_load_config(&cli, &cfg);
	if (!cfg.node_id[0])
		keep_cli_usage_error(&cli, "no node id (--node-id or node_id: in the config)");
	if (keep_config_node_dir(&cfg, dir, sizeof(dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, "lease-status", "state directory path too long");
	if (paths)
		return print_paths(&cfg, dir);

	keep_line_begin_fmt(&b, "lease", fmt);
	keep_line_str(&b, "node", cfg.node_id);
	rc = keep_lease_state_read(dir, &st);
	if (rc) {
		keep_line_str(&b, "phase", "none");
		keep_line_end(&b);
		if (!(rc == KEEP_ERR_IO && errno == ENOENT))
			fprintf(stderr, "lease-status: warning: unreadable lease state in '%s'\n",
				dir);
		return KEEP_EXIT_NOT_LIVE;
	}
	now = keep_boot_ms(); /* after the read: the answer is about now */
	keep_boot_id(boot, sizeof(boot));
	why = keep_lease_state_incomparable(&st, boot);
	if (why)
		fprintf(stderr,
			"lease-status: warning: the lease state in '%s' is not valid here: %s\n",
			dir, why);
	valid = keep_lease_state_valid(&st, now, boot);
	keep_line_str(&b, "phase",
		      valid || why || strcmp(st.phase, "live") != 0 ? st.phase : "ran-out");
	/* the state file's "-" is an absent value (null in JSON) */
	keep_line_str(&b, "reason", strcmp(st.reason, "-") != 0 ? st.reason : NULL);
	keep_line_str(&b, "instance", strcmp(st.instance, "-") != 0 ? st.instance : NULL);
	keep_line_int(&b, "valid_ms", valid ? st.valid_until_ms - now : 0);
	keep_line_int(&b, "written_at_ms", st.written_at_ms);
	keep_line_int(&b, "lapses", st.lapses);
	keep_line_end(&b);
	return valid ? KEEP_EXIT_OK : code_for(&st, why);
}
