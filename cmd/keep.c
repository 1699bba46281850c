/* keep — the umbrella command: `keep fence n1`, `keep status`, `keep help`
 * (issue 27; like git: a short name for each of the small programs, which
 * stay the programs, usable on their own).
 *
 * `keep NAME ARGS...` runs the program NAME stands for with ARGS (after the
 * subcommand word some names imply: `keep status` is `keep-agent status`,
 * `keep init` is `upgrade-mark native`), by execv: its output, exit code
 * and signals are the program's own. A program's full name works too
 * (`keep lease-fence n1`). The program is looked up in $KEEP_BINDIR, then
 * beside this binary, then in PATH, as keep-agent finds its children. No
 * configuration is read here and nothing is written. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/platform/version.h"

static const char usage[] =
    "usage: keep COMMAND [ARGS...]\n"
    "       keep help [COMMAND]\n"
    "       keep --version\n"
    "\n"
    "Run one of keep's programs by a short name; ARGS are the program's own\n"
    "(`keep help COMMAND` prints its usage). The programs stay usable by their\n"
    "names (`keep fence n1` is `lease-fence n1`).\n"
    "\n"
    "  init      upgrade-mark native: make a fresh bucket a native cluster\n"
    "            (refused on a bucket holding old formats; docs/operations.md)\n"
    "  agent     keep-agent: run this node\n"
    "  status    keep-agent status: is this node ready (exit 0), each part\n"
    "  check     keep-agent --check: validate the configuration\n"
    "  nodes     node-watch --once: the cluster, one line per node (--table)\n"
    "  watch     node-watch: follow the cluster\n"
    "  fence     lease-fence: fence a node (--create for an absent one)\n"
    "  forget    upgrade-mark forget: remove an old heartbeat or a created fence\n"
    "  lease     lease-status: this node's lease, no store I/O\n"
    "  acquire   owner-acquire: take ownership records\n"
    "  release   owner-release: release holds, drain, pending releases\n"
    "  show      owner-show: who owns a key\n"
    "  grant     owner-check: may this node's grant act now\n"
    "  run       owner-run: run a command while this node holds a key\n"
    "  commit    owner-commit: write an object fenced by this node's generation\n"
    "  owners    owner-watch: follow the ownership records\n"
    "  upgrade   upgrade-mark: the upgrade from per-actor leases\n"
    "  store     keep-store: raw access to the bucket\n"
    "  probe     store-probe: does the store honour conditional writes\n"
    "  help      this list, or a command's usage\n"
    "\n"
    "exit: the program's; 100 an unknown command; 111 the program cannot be\n"
    "started (not found: set KEEP_BINDIR).\n";

static const char *prog = "keep";

/* A short name: the program, and the word it implies first (or NULL). */
static const struct alias {
	const char *name, *program, *first;
} aliases[] = {
    {"init", "upgrade-mark", "native"}, {"agent", "keep-agent", NULL},
    {"status", "keep-agent", "status"}, {"check", "keep-agent", "--check"},
    {"nodes", "node-watch", "--once"},	{"watch", "node-watch", NULL},
    {"fence", "lease-fence", NULL},	{"forget", "upgrade-mark", "forget"},
    {"lease", "lease-status", NULL},	{"acquire", "owner-acquire", NULL},
    {"release", "owner-release", NULL}, {"show", "owner-show", NULL},
    {"grant", "owner-check", NULL},	{"run", "owner-run", NULL},
    {"owners", "owner-watch", NULL},	{"upgrade", "upgrade-mark", NULL},
    {"store", "keep-store", NULL},	{"probe", "store-probe", NULL},
    {"commit", "owner-commit", NULL},
};

/* The programs a full name may name. */
static const char *const programs[] = {
    "keep-agent", "keep-store",	   "lease-fence", "lease-status", "lease-write",
    "node-watch", "owner-acquire", "owner-check", "owner-commit", "owner-release",
    "owner-run",  "owner-show",	   "owner-watch", "store-probe",  "upgrade-mark",
};

/* The alias or program name resolves to (*program, *first); false for an
 * unknown name. */
static bool resolve(const char *name, const char **program, const char **first)
{
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i].name, name) == 0) {
			*program = aliases[i].program;
			*first = aliases[i].first;
			return true;
		}
	for (i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (strcmp(programs[i], name) == 0) {
			*program = programs[i];
			*first = NULL;
			return true;
		}
	return false;
}

/* Try DIR/program: execv (returns only when it failed). */
static void try_dir(const char *dir, size_t dlen, const char *program, char **argv)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%.*s/%s", (int)dlen, dir, program);
	if (n > 0 && (size_t)n < sizeof(path) && access(path, X_OK) == 0)
		execv(path, argv);
}

/* Run program with argv (argv[0] its name): $KEEP_BINDIR, beside this
 * binary, PATH. Never returns. */
static void run(const char *program, char **argv)
{
	const char *bindir = getenv("KEEP_BINDIR");
	char self[PATH_MAX];
	ssize_t n;

	if (bindir && *bindir)
		try_dir(bindir, strlen(bindir), program, argv);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			try_dir(self, (size_t)(slash - self), program, argv);
	}
	execvp(program, argv);
	keep_die(KEEP_EXIT_TEMP, prog, "unable to run %s: %s (set KEEP_BINDIR)", program,
		 strerror(errno));
}

int main(int argc, char **argv)
{
	const char *name, *program, *first;
	struct keep_cli cli;
	char **args;
	int i, n = 0;

	keep_cli_init(&cli, prog, usage);
	if (argc < 2)
		keep_cli_usage_error(&cli, "no command (`keep help` lists them)");
	name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 ||
	    (strcmp(name, "help") == 0 && argc == 2)) {
		fputs(usage, stdout);
		return fflush(stdout) == 0 ? KEEP_EXIT_OK : KEEP_EXIT_TEMP;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("%s (keep) %s\n", prog, keep_version());
		return fflush(stdout) == 0 ? KEEP_EXIT_OK : KEEP_EXIT_TEMP;
	}
	if (strcmp(name, "help") == 0) {
		char *hargv[3];

		if (argc != 3)
			keep_cli_usage_error(&cli, "help takes one COMMAND");
		if (!resolve(argv[2], &program, &first))
			keep_cli_usage_error(&cli, "unknown command '%s' (`keep help` lists them)",
					     argv[2]);
		hargv[0] = (char *)program;
		hargv[1] = (char *)"-h";
		hargv[2] = NULL;
		run(program, hargv);
	}
	if (name[0] == '-')
		keep_cli_usage_error(&cli, "unknown option '%s' (a command's options go after it)",
				     name);
	if (!resolve(name, &program, &first))
		keep_cli_usage_error(&cli, "unknown command '%s' (`keep help` lists them)", name);
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		keep_die(KEEP_EXIT_TEMP, prog, "out of memory");
	args[n++] = (char *)program;
	if (first)
		args[n++] = (char *)first;
	for (i = 2; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	run(program, args);
	return KEEP_EXIT_TEMP; /* not reached */
}
