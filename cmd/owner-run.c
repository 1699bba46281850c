/* owner-run — run a command while this node holds a key, and not a moment
 * longer; and release the key only once the job is gone (issues 15, 24;
 * ADR 0020 §3 "Own", "Release"; docs/ownership.md "owner-run"). The
 * command line; the run is lib/driver/ownerrun.c. */
#include <getopt.h>
#include <string.h>

#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownerrun.h"
#include "../lib/driver/ownrun.h"

static const char usage[] =
    "usage: owner-run [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                 [--app ROOT] [--wait[=DURATION]] [--kill-after=MS]\n"
    "                 KEY -- CMD [ARGS...]\n"
    "\n"
    "Acquire KEY (as owner-acquire; --wait as owner-acquire --wait: through\n"
    "store errors too, until DURATION), run CMD in its own process group with\n"
    "KEEP_OWNER_KEY, KEEP_OWNER_GENERATION (the fencing token) and KEEP_NODE_ID\n"
    "set, and watch the grant (owner-check's rule) while it runs. The job is\n"
    "CMD's process group, owner-run's descendants and every process holding\n"
    "KEY's run lock (runs/ in the state directory, inherited by CMD). It is\n"
    "stopped the moment the grant ends (fence, twin, lapse, run-out, clock\n"
    "step, clean stop): SIGTERM, then SIGKILL after --kill-after MS (default\n"
    "min(safety_ms / 2, 1000); at most safety_ms / 2), then waited for. A\n"
    "signal that would end owner-run (TERM, INT, HUP, QUIT, PIPE, USR1, ...)\n"
    "stops the job the same way, that signal first. When CMD exits, the rest\n"
    "of the job is killed. Then KEY is released, on every exit after the\n"
    "acquisition (a failure included). Every release of KEY on this node, the\n"
    "agent's clean stop and a restart stop the job first; a second owner-run\n"
    "of KEY is refused.\n"
    "Lines on stdout (CMD's own output shares it): the acquisition's answer\n"
    "(acquired, held, refused, error, unknown; waiting, retrying; refused\n"
    "key=K reason=running: KEY already runs here), then\n"
    "  grant-ended key=K generation=G reason=R code=C ended_mono_ms=T  (R as\n"
    "      owner-check's; T when the job was sent SIGTERM, boot clock)\n"
    "  exited key=K status=S                           (S: CMD's exit status)\n"
    "and the release's line (released, pending, dropped, ...).\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit: CMD's status (128 + N when killed by signal N); 21 the grant ended\n"
    "(CMD was stopped, or never started); 128 + N signal N came before CMD\n"
    "started (KEY released); 1 KEY already runs here; when KEY was not\n"
    "acquired, owner-acquire's code (1 held, 10..16, 17, 20, 111); 100 usage;\n"
    "126 or 127 CMD could not be executed or was not found (checked before\n"
    "acquiring); 111 no process, timer, inotify watch, poll or run lock (KEY\n"
    "released first), or a process of the job survived SIGKILL (KEY kept).\n"
    "See docs/exit-codes.md and docs/ownership.md.\n";

static const char *prog = "owner-run";

int main(int argc, char **argv)
{
	enum { OPT_WAIT = 0x2000, OPT_KILL_AFTER };
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS,
	    KEEP_CLI_APP_LONGOPT,
	    {"wait", optional_argument, NULL, OPT_WAIT},
	    {"kill-after", required_argument, NULL, OPT_KILL_AFTER},
	    {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	const char *key;
	char **cmd;
	int64_t wait_ms = 0, kill_after = -1;
	int c, code;

	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "+hc:", opts)) != -1) {
		if (c == OPT_WAIT)
			wait_ms = keep_cli_wait_arg(&cli, optarg);
		else
			kill_after = keep_cli_int_arg(&cli, "--kill-after", optarg, 0, 86400000);
	}
	if (argc - optind < 1)
		keep_cli_usage_error(&cli, "KEY and CMD expected");
	key = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		keep_cli_usage_error(&cli, "CMD expected after KEY --");
	cmd = argv + optind;
	if (!keep_owner_key_valid(key))
		return keep_cli_invalid_key(prog, key);
	code = keep_owner_run_cmd_check(cmd[0]);
	if (code != 0)
		return code;
	return keep_owner_run(&cli, key, cmd, wait_ms, kill_after);
}
