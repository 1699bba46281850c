/* keep — what every command shares: common flags, config, diagnostics (cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "exitcode.h"

void keep_cli_init(struct keep_cli *cli, const char *prog, const char *usage)
{
	memset(cli, 0, sizeof(*cli));
	cli->prog = prog;
	cli->usage = usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
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
		cli->state_dir = arg;
		return true;
	}
	return false;
}

static void put_usage(FILE *f, const char *usage)
{
	if (!usage || !*usage)
		return;
	fputs(usage, f);
	if (usage[strlen(usage) - 1] != '\n')
		fputc('\n', f);
}

void keep_cli_usage_error(const struct keep_cli *cli, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	put_usage(stderr, cli->usage);
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
	if (keep_config_check(c, err, sizeof(err)))
		keep_die(KEEP_EXIT_USAGE, cli->prog, "invalid configuration: %s", err);
}

static void vsay(const char *prog, const char *what, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s", prog ? prog : "keep", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void keep_die(int code, const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(prog, "fatal: ", fmt, ap);
	va_end(ap);
	exit(code);
}

void keep_warn(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(prog, "warning: ", fmt, ap);
	va_end(ap);
}

void keep_info(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(prog, "", fmt, ap);
	va_end(ap);
}
