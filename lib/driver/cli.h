/* keep — what every command shares: common flags, config, diagnostics.
 *
 * Every command takes: -h/--help, --version, -c/--config FILE, --store URL,
 * --node-id ID, --state-dir DIR (flags override the file; a relative
 * --state-dir is taken from the working directory), --json (stdout's lines
 * as JSON objects, lib/platform/line.h) and --timestamps (stdout's lines end with
 * ts=TIME, lib/platform/log.h).
 * Diagnostics go to stderr as "prog: LEVEL: message" (keep_die / keep_warn
 * / keep_info, lib/platform/log.h); never a secret. */
#ifndef KEEP_CLI_H
#define KEEP_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../local/config.h"

/* Option values for the common long options (use in getopt_long tables
 * through KEEP_CLI_LONGOPTS). */
enum {
	KEEP_OPT_STORE = 0x1000,
	KEEP_OPT_NODE_ID,
	KEEP_OPT_STATE_DIR,
	KEEP_OPT_CHECK,
	KEEP_OPT_JOBS,	/* --jobs N (KEEP_CLI_BATCH_LONGOPTS) */
	KEEP_OPT_STATS, /* --stats (KEEP_CLI_BATCH_LONGOPTS, KEEP_CLI_WATCH_LONGOPTS) */
	KEEP_OPT_ONCE,	/* the rest: KEEP_CLI_WATCH_LONGOPTS */
	KEEP_OPT_FOLLOW,
	KEEP_OPT_TABLE,
	KEEP_OPT_JSON,	     /* the common --json */
	KEEP_OPT_VERSION,    /* --version */
	KEEP_OPT_TIMESTAMPS, /* --timestamps */
	KEEP_OPT_APP,	     /* --app ROOT (KEEP_CLI_APP_LONGOPT) */
};

/* --app ROOT: the application root of the ownership commands (owner-*,
 * ADR 0022; docs/ownership.md "Several applications on one cluster"). */
#define KEEP_CLI_APP_LONGOPT                                                                       \
	{                                                                                          \
		"app", required_argument, NULL, KEEP_OPT_APP                                       \
	}

/* --once, --follow, --table, --stats and --check: the options of the two
 * watchers (node-watch, owner-watch; docs/fencing.md, docs/ownership.md),
 * one table for both (--json is common). */
#define KEEP_CLI_WATCH_LONGOPTS                                                                    \
	{"once", no_argument, NULL, KEEP_OPT_ONCE},                                                \
	    {"follow", no_argument, NULL, KEEP_OPT_FOLLOW},                                        \
	    {"table", no_argument, NULL, KEEP_OPT_TABLE},                                          \
	    {"stats", no_argument, NULL, KEEP_OPT_STATS},                                          \
	{                                                                                          \
		"check", no_argument, NULL, KEEP_OPT_CHECK                                         \
	}

/* --jobs N and --stats, for the commands that take keys on stdin in batches
 * (owner-acquire, owner-release). */
#define KEEP_CLI_BATCH_LONGOPTS                                                                    \
	{"jobs", required_argument, NULL, KEEP_OPT_JOBS},                                          \
	{                                                                                          \
		"stats", no_argument, NULL, KEEP_OPT_STATS                                         \
	}

#define KEEP_CLI_LONGOPTS                                                                          \
	{"help", no_argument, NULL, 'h'}, {"config", required_argument, NULL, 'c'},                \
	    {"store", required_argument, NULL, KEEP_OPT_STORE},                                    \
	    {"node-id", required_argument, NULL, KEEP_OPT_NODE_ID},                                \
	    {"version", no_argument, NULL, KEEP_OPT_VERSION},                                      \
	    {"json", no_argument, NULL, KEEP_OPT_JSON},                                            \
	    {"timestamps", no_argument, NULL, KEEP_OPT_TIMESTAMPS},                                \
	{                                                                                          \
		"state-dir", required_argument, NULL, KEEP_OPT_STATE_DIR                           \
	}

struct keep_cli {
	const char *prog;	 /* program name for diagnostics (borrowed) */
	const char *usage;	 /* full usage text (borrowed) */
	const char *config_path; /* -c value or NULL (borrowed from argv) */
	const char *store;	 /* flag values or NULL (borrowed from argv) */
	const char *node_id;
	const char *state_dir;
	const char *app; /* --app value or NULL (borrowed from argv) */
	bool check_only; /* --check was given (commands that list it in their options) */
	int jobs;	 /* --jobs N (1..KEEP_BATCH_JOBS_MAX), 1 when not given */
	bool stats;	 /* --stats was given */
	bool json;	 /* --json was given: stdout's lines are JSON (keep_line_out_format) */
	bool timestamps; /* --timestamps was given: stdout's lines end with ts= */
	char state_dir_abs[4096]; /* a relative --state-dir made absolute (state_dir points here) */
};

/* What a command needs from the configuration (keep_cli_setup). */
enum {
	KEEP_NEED_NODE = 1,  /* a node id */
	KEEP_NEED_STORE = 2, /* a store URL */
};

/* Set prog and usage; stdout line-buffered; the diagnostics' settings
 * taken from the environment ($KEEP_LOG_TIMESTAMPS, the journal check of
 * lib/platform/log.h) while the process has one thread. The usage's first line is
 * its synopsis ("usage: prog ..."): misuse prints it as the hint. */
void keep_cli_init(struct keep_cli *cli, const char *prog, const char *usage);

/* The next option of the command line that is the command's own: common
 * options are handled on the way (keep_cli_common_opt), an unknown one, or
 * one without its value, is a usage error naming it (exit 100). -1 at the
 * end (optind is then the first operand). shortopts: "hc:" plus the
 * command's own short options (getopt's own messages are off). */
int keep_cli_next(struct keep_cli *cli, int argc, char **argv, const char *shortopts,
		  const struct option *opts);

/* The watchers' options (KEEP_CLI_WATCH_LONGOPTS), as given. */
struct keep_watch_opts {
	bool once, follow, table, json, stats;
};

/* Parse argv for a watcher (node-watch, owner-watch): the common options
 * and KEEP_CLI_WATCH_LONGOPTS into *o (zeroed first; o->json is the common
 * --json); --app (KEEP_CLI_APP_LONGOPT) into cli->app, which node-watch
 * refuses. A usage error (exit 100) for --once with --follow, --table
 * without --once, --table with --json. optind is then the first operand. */
void keep_cli_watch_parse(struct keep_cli *cli, int argc, char **argv, struct keep_watch_opts *o);

/* An invalid actor key given to a command: the warning on stderr (what a
 * key is) and the line `error key=K reason=invalid-key` on stdout. Returns
 * KEEP_EXIT_USAGE. */
int keep_cli_invalid_key(const char *prog, const char *key);

/* Handle a common option returned by getopt_long. true if it was one
 * (and was consumed); 'h' prints usage to stdout and exits 0; --version
 * prints `PROG (keep) VERSION` (lib/platform/version.h) and exits 0. */
bool keep_cli_common_opt(struct keep_cli *cli, int opt, const char *arg);

/* Misuse: two lines on stderr, exit KEEP_EXIT_USAGE: "prog: fatal: why",
 * then "prog: info: usage: SYNOPSIS (`prog -h` prints the whole usage)"
 * with the first line of the usage text (not the whole text). */
void keep_cli_usage_error(const struct keep_cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Load defaults, the config file, then the flags into c; validate; apply
 * log.timestamps and log.event_timestamps (or --timestamps) to the
 * diagnostics and stdout's lines (lib/platform/log.h). On any error prints "prog:
 * fatal: ..." and exits KEEP_EXIT_USAGE. */
void keep_cli_load_config(const struct keep_cli *cli, struct keep_config *c);

/* keep_cli_load_config, then keep_cli_require. */
void keep_cli_setup(const struct keep_cli *cli, struct keep_config *c, unsigned need);

/* After the configuration was loaded (and any flag applied to it): what
 * need (KEEP_NEED_*) asks for, each missing one a usage error (exit 100);
 * with --check, "configuration OK" on stdout and exit 0 once the
 * configuration passed. */
void keep_cli_require(const struct keep_cli *cli, const struct keep_config *c, unsigned need);

/* The node's state directory (state_dir/<node-id>) into dir (n bytes), its
 * holds/, pending/ and locks/ created: exit 100 when the path is too long,
 * 111 when it cannot be created. */
void keep_cli_node_dir(const struct keep_cli *cli, const struct keep_config *c, char *dir,
		       size_t n);

/* A flag option's value as an integer in [min, max] (keep_dec_parse: digits
 * only, no sign, no leading zero); misuse otherwise: "prog: FLAG wants
 * MIN..MAX" and the usage, exit KEEP_EXIT_USAGE. arg and flag borrowed. */
int64_t keep_cli_int_arg(const struct keep_cli *cli, const char *flag, const char *arg, int64_t min,
			 int64_t max);

/* --wait[=DURATION] (owner-acquire, owner-run): arg NULL (bare --wait)
 * is KEEP_WAIT_FOREVER (-1); else keep_duration_parse up to one day
 * (86400000 ms), 0 allowed (no wait); misuse otherwise (exit 100). ms. */
int64_t keep_cli_wait_arg(const struct keep_cli *cli, const char *arg);

/* --jobs N: 1..KEEP_BATCH_JOBS_MAX (batch.h), as keep_cli_int_arg. */
int keep_cli_jobs_arg(const struct keep_cli *cli, const char *arg);

/* Set by SIGTERM and SIGINT once keep_cli_stop_signals ran (a long-running
 * command's loop watches it); SIGPIPE is ignored (a closed stdout is an
 * error of the write, not a death). */
extern volatile sig_atomic_t keep_stop_flag;
void keep_cli_stop_signals(void);

/* "prog: fatal: <msg>" to stderr (keep_log) and exit(code). */
/* Read fd to its end into b (bounded by b's maximum), through EINTR: 0;
 * KEEP_ERR_TOOBIG past b's maximum, KEEP_ERR_NOMEM, KEEP_ERR_IO a read
 * error (errno set). What was read stays in b. One reader of stdin for
 * the commands that take a body (keep-store put, owner-commit). */
int keep_read_all(int fd, struct keep_buf *b);

void keep_die(int code, const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* "prog: warning: <msg>" to stderr (keep_log). */
void keep_warn(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "prog: info: <msg>" to stderr (keep_log): what it does or waits for. */
void keep_info(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
