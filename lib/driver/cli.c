/* keep — what every command shares: common flags, config, diagnostics (cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../base/parse.h"
#include "../local/holds.h"
#include "../platform/line.h"
#include "../platform/log.h"
#include "../platform/version.h"
#include "batch.h"

#include <sys/stat.h>
#include <unistd.h>

void keep_cli_init(struct keep_cli *cli, const char *prog, const char *usage)
{
	enum keep_log_ts ts = KEEP_LOG_TS_AUTO;

	memset(cli, 0, sizeof(*cli));
	cli->prog = prog;
	cli->usage = usage;
	cli->jobs = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the log's settings before any thread exists: the environment's
	 * default (the configuration's comes later), the journal check */
	keep_log_ts_parse(getenv(KEEP_LOG_TS_ENV), &ts);
	keep_log_set_timestamps(ts);
	keep_log_journal();
}

/* --state-dir DIR: a relative DIR is taken from the working directory, as
 * any command-line path is (the configuration's state_dir must be
 * absolute: a service's working directory is /). Too long: usage error. */
static const char *state_dir_flag(struct keep_cli *cli, const char *arg)
{
	char cwd[sizeof(cli->state_dir_abs)];
	int n;

	if (!arg[0] || arg[0] == '/')
		return arg;
	if (!getcwd(cwd, sizeof(cwd)))
		keep_die(KEEP_EXIT_USAGE, cli->prog,
			 "--state-dir '%s' is relative and the working directory is unknown: %s",
			 arg, strerror(errno));
	n = snprintf(cli->state_dir_abs, sizeof(cli->state_dir_abs), "%s%s%s", cwd,
		     strcmp(cwd, "/") == 0 ? "" : "/", arg);
	if (n < 0 || (size_t)n >= sizeof(cli->state_dir_abs))
		keep_die(KEEP_EXIT_USAGE, cli->prog, "--state-dir '%s': path too long", arg);
	return cli->state_dir_abs;
}

bool keep_cli_common_opt(struct keep_cli *cli, int opt, const char *arg)
{
	switch (opt) {
	case 'h':
		fputs(cli->usage ? cli->usage : "", stdout);
		if (cli->usage && *cli->usage && cli->usage[strlen(cli->usage) - 1] != '\n')
			fputc('\n', stdout);
		fflush(stdout);
		exit(KEEP_EXIT_OK);
	case 'c':
		cli->config_path = arg;
		return true;
	case KEEP_OPT_STORE:
		cli->store = arg;
		return true;
	case KEEP_OPT_NODE_ID:
		cli->node_id = arg;
		return true;
	case KEEP_OPT_STATE_DIR:
		cli->state_dir = state_dir_flag(cli, arg);
		return true;
	case KEEP_OPT_APP:
		cli->app = arg;
		return true;
	case KEEP_OPT_VERSION:
		printf("%s (keep) %s\n", cli->prog, keep_version());
		fflush(stdout);
		exit(KEEP_EXIT_OK);
	case KEEP_OPT_JSON:
		cli->json = true;
		keep_line_set_out_format(KEEP_LINE_JSON);
		return true;
	case KEEP_OPT_TIMESTAMPS:
		cli->timestamps = true;
		keep_log_set_event_timestamps(true);
		return true;
	case KEEP_OPT_CHECK:
		cli->check_only = true;
		return true;
	case KEEP_OPT_JOBS:
		cli->jobs = keep_cli_jobs_arg(cli, arg);
		return true;
	case KEEP_OPT_STATS:
		cli->stats = true;
		return true;
	}
	return false;
}

/* The usage's first synopsis form as one line into out: its first line
 * and the lines continuing it (indented, not naming the program again),
 * spaces collapsed. */
static void first_form(const char *usage, const char *prog, char *out, size_t n)
{
	size_t o = 0, pl = strlen(prog);
	const char *p = usage;
	bool space = false, first = true;

	while (*p && o + 1 < n) {
		const char *eol = strchr(p, '\n'), *q = p;

		if (!eol)
			eol = p + strlen(p);
		if (!first) {
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (q == p || q == eol ||
			    ((size_t)(eol - q) > pl && strncmp(q, prog, pl) == 0 && q[pl] == ' '))
				break; /* not indented, empty, or the next form */
		}
		for (; q < eol && o + 1 < n; q++) {
			if (*q == ' ' || *q == '\t') {
				space = o > 0;
				continue;
			}
			if (space && o + 2 < n)
				out[o++] = ' ';
			space = false;
			out[o++] = *q;
		}
		space = o > 0;
		first = false;
		p = *eol ? eol + 1 : eol;
	}
	out[o] = '\0';
}

void keep_cli_usage_error(const struct keep_cli *cli, const char *fmt, ...)
{
	char form[512];
	va_list ap;

	va_start(ap, fmt);
	keep_vlog(KEEP_LOG_FATAL, cli->prog, fmt, ap);
	va_end(ap);
	/* the hint: the synopsis' first form, not the whole usage */
	first_form(cli->usage ? cli->usage : "", cli->prog, form, sizeof(form));
	if (form[0])
		keep_info(cli->prog, "%s (`%s -h` prints the whole usage)", form, cli->prog);
	exit(KEEP_EXIT_USAGE);
}

/* Copy a flag's value into a config field of size bytes; over-long values
 * are fatal (never truncated). */
static void set_flag(const struct keep_cli *cli, const char *flag, char *dst, size_t size,
		     const char *v)
{
	size_t n = strlen(v);

	if (n >= size)
		keep_die(KEEP_EXIT_USAGE, cli->prog,
			 "invalid configuration: %s value too long (%zu bytes, at most %zu)", flag,
			 n, size - 1);
	memcpy(dst, v, n + 1);
}

void keep_cli_load_config(const struct keep_cli *cli, struct keep_config *c)
{
	char err[512];
	int rc;

	keep_config_defaults(c);
	rc = keep_config_load(c, cli->config_path, err, sizeof(err));
	if (rc == KEEP_ERR_IO)
		keep_die(KEEP_EXIT_USAGE, cli->prog, "unable to read configuration: %s", err);
	if (rc)
		keep_die(KEEP_EXIT_USAGE, cli->prog, "invalid configuration: %s", err);
	if (cli->store)
		set_flag(cli, "--store", c->store, sizeof(c->store), cli->store);
	if (cli->node_id)
		set_flag(cli, "--node-id", c->node_id, sizeof(c->node_id), cli->node_id);
	if (cli->state_dir)
		set_flag(cli, "--state-dir", c->state_dir, sizeof(c->state_dir), cli->state_dir);
	if (cli->app) {
		if (!keep_app_root_valid(cli->app))
			keep_cli_usage_error(
			    cli,
			    "--app '%.40s' is not a valid application root (want "
			    "[a-z0-9][a-z0-9_-]{0,%d}; no --app is the default root)",
			    cli->app, KEEP_APP_ROOT_MAX - 1);
		set_flag(cli, "--app", c->app, sizeof(c->app), cli->app);
	}
	if (keep_config_check(c, err, sizeof(err)))
		keep_die(KEEP_EXIT_USAGE, cli->prog, "invalid configuration: %s", err);
	/* the root's holds, pending entries, locks and run locks (lib/local/holds.h) */
	if (keep_holds_set_app(c->app) != 0)
		keep_die(KEEP_EXIT_USAGE, cli->prog, "invalid configuration: application root '%s'",
			 c->app);
	keep_log_set_timestamps(c->log_timestamps);
	keep_log_set_event_timestamps(cli->timestamps || c->log_event_timestamps);
}

void keep_die(int code, const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	keep_vlog(KEEP_LOG_FATAL, prog, fmt, ap);
	va_end(ap);
	exit(code);
}

void keep_warn(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	keep_vlog(KEEP_LOG_WARNING, prog, fmt, ap);
	va_end(ap);
}

void keep_info(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	keep_vlog(KEEP_LOG_INFO, prog, fmt, ap);
	va_end(ap);
}

int64_t keep_cli_int_arg(const struct keep_cli *cli, const char *flag, const char *arg, int64_t min,
			 int64_t max)
{
	int64_t v;

	if (!keep_dec_parse_str(arg, max, &v) || v < min)
		keep_cli_usage_error(cli, "%s wants %lld..%lld", flag, (long long)min,
				     (long long)max);
	return v;
}

int64_t keep_cli_wait_arg(const struct keep_cli *cli, const char *arg)
{
	int64_t v;

	if (!arg)
		return -1; /* KEEP_WAIT_FOREVER (ownrun.h) */
	if (!keep_duration_parse(arg, 86400000, &v))
		keep_die(KEEP_EXIT_USAGE, cli->prog,
			 "--wait wants a duration: N (ms) or Nms, Ns, Nm, Nh, at most 24h");
	return v;
}

int keep_cli_jobs_arg(const struct keep_cli *cli, const char *arg)
{
	return (int)keep_cli_int_arg(cli, "--jobs", arg, 1, KEEP_BATCH_JOBS_MAX);
}

volatile sig_atomic_t keep_stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	keep_stop_flag = 1;
}

void keep_cli_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void keep_cli_setup(const struct keep_cli *cli, struct keep_config *c, unsigned need)
{
	keep_cli_load_config(cli, c);
	keep_cli_require(cli, c, need);
}

void keep_cli_require(const struct keep_cli *cli, const struct keep_config *c, unsigned need)
{
	if ((need & KEEP_NEED_NODE) && !c->node_id[0])
		keep_cli_usage_error(cli, "no node id (--node-id or node_id: in the config)");
	if ((need & KEEP_NEED_STORE) && !c->store[0])
		keep_cli_usage_error(cli, "no store (--store or store: in the config)");
	if (cli->check_only) {
		struct stat sb;

		/* the one store check that needs no network: a file:// store's
		 * directory is never created, and the command would exit 111
		 * at start without it (issue 27: `keep check` said OK) */
		if ((need & KEEP_NEED_STORE) && strncmp(c->store, "file://", 7) == 0) {
			int st = stat(c->store + 7, &sb);

			/* missing or not a directory; anything else (EACCES: the
			 * wrong user) the command's start names in its own words */
			if ((st != 0 && (errno == ENOENT || errno == ENOTDIR)) ||
			    (st == 0 && !S_ISDIR(sb.st_mode)))
				keep_die(KEEP_EXIT_TEMP, cli->prog,
					 "store directory '%s': %s (a file:// store is never "
					 "created: create it or fix store:)",
					 c->store + 7,
					 st != 0 ? strerror(errno) : "not a directory");
		}
		printf("configuration OK\n");
		exit(KEEP_EXIT_OK);
	}
}

void keep_cli_node_dir(const struct keep_cli *cli, const struct keep_config *c, char *dir, size_t n)
{
	if (keep_config_node_dir(c, dir, n) != 0)
		keep_die(KEEP_EXIT_USAGE, cli->prog, "state directory path too long");
	if (keep_holds_init(dir) != 0)
		keep_die(KEEP_EXIT_TEMP, cli->prog, "unable to create the state directory '%s': %s",
			 dir, strerror(errno));
}

int keep_cli_next(struct keep_cli *cli, int argc, char **argv, const char *shortopts,
		  const struct option *opts)
{
	char so[64];
	int c;

	/* a leading ':' tells a missing value (':') from an unknown option
	 * ('?'); getopt's own messages are off: ours name the option */
	snprintf(so, sizeof(so), ":%s", shortopts[0] == ':' ? shortopts + 1 : shortopts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, opts, NULL)) != -1) {
		const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
		char shown[200];

		if (keep_cli_common_opt(cli, c, optarg))
			continue;
		if (c == ':')
			keep_cli_usage_error(cli, "option '%s' needs a value",
					     keep_line_escaped(arg, shown, sizeof(shown)));
		if (c == '?') {
			if (optopt && !(arg[0] == '-' && arg[1] == '-'))
				keep_cli_usage_error(cli, "unknown option '-%c'", optopt);
			keep_cli_usage_error(cli, "unknown option '%s'",
					     keep_line_escaped(arg, shown, sizeof(shown)));
		}
		return c;
	}
	return -1;
}

int keep_cli_invalid_key(const char *prog, const char *key)
{
	struct keep_buf b;

	char shown[300];

	keep_warn(prog,
		  "invalid key '%s' (tenant/class/name, each [A-Za-z0-9._-]{1,128}, not "
		  "starting with '.')",
		  keep_line_escaped(key, shown, sizeof(shown)));
	keep_line_begin(&b, "error");
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "reason", "invalid-key");
	keep_line_end(&b);
	return KEEP_EXIT_USAGE;
}

void keep_cli_watch_parse(struct keep_cli *cli, int argc, char **argv, struct keep_watch_opts *o)
{
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS, KEEP_CLI_WATCH_LONGOPTS, KEEP_CLI_APP_LONGOPT, {NULL, 0, NULL, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = keep_cli_next(cli, argc, argv, "hc:", opts)) != -1) {
		o->once |= c == KEEP_OPT_ONCE;
		o->follow |= c == KEEP_OPT_FOLLOW;
		o->table |= c == KEEP_OPT_TABLE;
	}
	o->stats = cli->stats; /* --stats, --json: taken by keep_cli_common_opt */
	o->json = cli->json;
	if (o->once && o->follow)
		keep_cli_usage_error(cli, "--once and --follow exclude each other");
	if (o->table && !o->once)
		keep_cli_usage_error(cli, "--table needs --once");
	if (o->table && o->json)
		keep_cli_usage_error(cli, "--table and --json exclude each other");
}

int keep_read_all(int fd, struct keep_buf *b)
{
	char chunk[8192];
	ssize_t n;
	int rc;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return KEEP_ERR_IO;
		if (n == 0)
			return 0;
		rc = keep_buf_add(b, chunk, (size_t)n);
		if (rc)
			return rc;
	}
}
