/* owner-check — the grant check before a commit (ADR 0020 §3 "Own"; R2: a
 * stale grant never commits; docs/ownership.md).
 *
 * No store I/O: the hold in the state directory and the lease state file,
 * judged on the boot clock (lib/platform/clock.h) read after both were read. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/core/owner.h"
#include "../lib/driver/cli.h"
#include "../lib/local/holds.h"
#include "../lib/local/statedir.h"
#include "../lib/platform/clock.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: owner-check [-c FILE] [--node-id ID] [--state-dir DIR] [--app ROOT]\n"
    "                   [--json] KEY GENERATION\n"
    "\n"
    "Exit 0 only if this node holds KEY at exactly GENERATION, acquired by\n"
    "the current lease-write instance with no lapse of the node lease since,\n"
    "and the lease is valid now. Prints\n"
    "  check key=K generation=G ok=yes|no reason=ok|no-hold|other-generation|\n"
    "        old-instance|lapsed|releasing|not-valid\n"
    "No store I/O.\n"
    "  --json  the line as one JSON object, ok a boolean (docs/formats.md)\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit: 0 the grant may act; 1 no such hold (none, another generation, an\n"
    "earlier instance, a lapse since, its release pending); 14 the lease ran\n"
    "out; 10..13, 15 the lease is not valid (as lease-status); 100 usage.\n";

static const char *prog = "owner-check";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS, KEEP_CLI_APP_LONGOPT, {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_config cfg;
	struct keep_buf b;
	char dir[KEEP_PATH_MAX + 80], shown[300];
	const char *key, *why;
	int64_t gen;
	int c, code;
	enum keep_grant g;

	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1)
		keep_cli_usage_error(&cli, "unknown option");
	if (argc - optind != 2)
		keep_cli_usage_error(&cli, "KEY and GENERATION expected");
	key = argv[optind];
	if (!keep_owner_key_valid(key))
		keep_cli_usage_error(&cli, "invalid key '%s'",
				     keep_line_escaped(key, shown, sizeof(shown)));
	gen = keep_cli_int_arg(&cli, "GENERATION", argv[optind + 1], 1, KEEP_OWNER_GEN_MAX);
	keep_cli_load_config(&cli, &cfg);
	if (!cfg.node_id[0])
		keep_cli_usage_error(&cli, "no node id (--node-id or node_id: in the config)");
	if (keep_config_node_dir(&cfg, dir, sizeof(dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, prog, "state directory path too long");

	code = keep_grant_now(dir, key, gen, &g, &why);
	if (why)
		keep_warn(prog, "the lease state in '%s' is not valid here: %s", dir, why);
	keep_line_begin(&b, "check");
	keep_line_str(&b, "key", key);
	keep_line_int(&b, "generation", gen);
	keep_line_bool(&b, "ok", g == KEEP_GRANT_OK);
	keep_line_str(&b, "reason", keep_grant_name(g));
	keep_line_end(&b);
	return code;
}
