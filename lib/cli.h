/* keep — what every command shares: common flags, config, diagnostics.
 *
 * Every command takes: -h/--help, -c/--config FILE, --store URL,
 * --node-id ID, --state-dir DIR (flags override the file).
 * Diagnostics go to stderr as "prog: message" (keep_die / keep_warn);
 * never a secret. */
#ifndef KEEP_CLI_H
#define KEEP_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "config.h"

/* Option values for the common long options (use in getopt_long tables
 * through KEEP_CLI_LONGOPTS). */
enum {
	KEEP_OPT_STORE = 0x1000,
	KEEP_OPT_NODE_ID,
	KEEP_OPT_STATE_DIR,
	KEEP_OPT_CHECK,
};

#define KEEP_CLI_LONGOPTS                                                                          \
	{"help", no_argument, NULL, 'h'}, {"config", required_argument, NULL, 'c'},                \
	    {"store", required_argument, NULL, KEEP_OPT_STORE},                                    \
	    {"node-id", required_argument, NULL, KEEP_OPT_NODE_ID},                                \
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
};

/* Set prog and usage; stdout line-buffered. */
void keep_cli_init(struct keep_cli *cli, const char *prog, const char *usage);

/* Handle a common option returned by getopt_long. true if it was one
 * (and was consumed); 'h' prints usage to stdout and exits 0. */
bool keep_cli_common_opt(struct keep_cli *cli, int opt, const char *arg);

/* Misuse: "prog: why" plus the usage to stderr, exit KEEP_EXIT_USAGE. */
void keep_cli_usage_error(const struct keep_cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Load defaults, the config file, then the flags into c; validate.
 * On any error prints "prog: fatal: ..." and exits KEEP_EXIT_USAGE. */
void keep_cli_load_config(const struct keep_cli *cli, struct keep_config *c);

/* "prog: fatal: <msg>" to stderr and exit(code). */
void keep_die(int code, const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* "prog: warning: <msg>" to stderr. */
void keep_warn(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "prog: <msg>" to stderr (informational). */
void keep_info(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
