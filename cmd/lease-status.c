/* lease-status — is this node's lease valid now? (readiness; ADR §1)
 *
 * Reads the lease state file lease-write keeps (state_dir/<id>/lease) and
 * the monotonic clock; no store I/O. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/line.h"
#include "../lib/statedir.h"

static const char usage[] =
    "usage: lease-status [-c FILE] [--node-id ID] [--state-dir DIR]\n"
    "\n"
    "Print this node's lease state as one line and exit 0 only while the\n"
    "lease is valid (readiness). No store I/O.\n"
    "  lease node=ID phase=starting|live|ran-out|stopping|stopped|lost reason=..\n"
    "        instance=.. valid_ms=.. written_at_ms=.. lapses=..\n"
    "\n"
    "exit: 0 valid; 10 fenced; 11 replaced (twin); 12 released by another;\n"
    "13 removed; 14 ran out; 15 not live (starting, stopping, stopped, no\n"
    "state); 100 usage. See docs/exit-codes.md.\n";

static int code_for(const struct keep_lease_state *s)
{
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_config cfg;
	struct keep_lease_state st;
	struct keep_buf b;
	char dir[KEEP_PATH_MAX + 80], boot[64];
	int64_t now;
	int c, rc;
	bool valid;

	keep_cli_init(&cli, "lease-status", usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1)
		keep_cli_usage_error(&cli, "unknown option");
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	keep_cli_load_config(&cli, &cfg);
	if (!cfg.node_id[0])
		keep_cli_usage_error(&cli, "no node id (--node-id or node_id: in the config)");
	if (keep_config_node_dir(&cfg, dir, sizeof(dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, "lease-status", "state directory path too long");

	keep_line_begin(&b, "lease");
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
	now = keep_mono_ms();
	keep_boot_id(boot, sizeof(boot));
	valid = keep_lease_state_valid(&st, now, boot);
	keep_line_str(&b, "phase", valid || strcmp(st.phase, "live") != 0 ? st.phase : "ran-out");
	keep_line_str(&b, "reason", st.reason);
	keep_line_str(&b, "instance", st.instance);
	keep_line_int(&b, "valid_ms", valid ? st.valid_until_mono_ms - now : 0);
	keep_line_int(&b, "written_at_ms", st.written_at_ms);
	keep_line_int(&b, "lapses", st.lapses);
	keep_line_end(&b);
	return valid ? KEEP_EXIT_OK : code_for(&st);
}
