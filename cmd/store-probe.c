/* store-probe — prove a store honours conditional writes (docs/store.md).
 *
 * On a scratch key probe/<16 random hex>: create with If-None-Match (ok),
 * create again (conflict), update with If-Match v1 (ok, v2), stale update
 * with If-Match v1 (conflict), get (body and version of the update), stat
 * (v2), delete (ok), stat again (not-found). The scratch key is always
 * deleted at the end, whatever happened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/storecmd.h"
#include "../lib/local/config.h"
#include "../lib/platform/line.h"
#include "../lib/store/store.h"

static const char USAGE[] =
    "usage: store-probe [-c FILE] [--store URL]\n"
    "\n"
    "Check that the store honours conditional writes, on a scratch key\n"
    "probe/<random hex> that is deleted afterwards. Prints one line per step,\n"
    "'probe step=NAME outcome=OUTCOME', then 'probe result=ok store=URL' or\n"
    "'probe result=failed step=NAME want=WANT got=GOT'.\n"
    "\n"
    "exit: 0 the store passed; 1 a step failed; 100 usage or configuration;\n"
    "      111 the store was unreachable (an ambiguous reply)\n";

static const char *prog = "store-probe";

struct probe {
	struct keep_store *s;
	struct keep_buf line;
	char key[64];
	const char *url;
};

static void emit(struct probe *p)
{
	if (keep_line_emit(&p->line))
		keep_die(KEEP_EXIT_TEMP, prog, "unable to write to stdout");
}

static void say_step(struct probe *p, const char *step, enum keep_outcome o)
{
	keep_line_start_out(&p->line, "probe");
	keep_line_str(&p->line, "step", step);
	keep_line_str(&p->line, "outcome", keep_outcome_name(o));
	emit(p);
}

/* Best-effort removal of the scratch key. */
static void cleanup(struct probe *p)
{
	struct keep_reply r;

	if (keep_store_del(p->s, p->key, NULL, &r) == 0 && r.outcome != KEEP_STORE_OK &&
	    r.outcome != KEEP_STORE_NOT_FOUND)
		keep_warn(prog, "unable to delete '%s': %s: %s", p->key,
			  keep_outcome_name(r.outcome), r.detail);
}

/* Report a failed step, clean up, and return the exit code. */
static int failed(struct probe *p, const char *step, const char *want, const char *got,
		  const struct keep_reply *r)
{
	keep_line_start_out(&p->line, "probe");
	keep_line_str(&p->line, "result", "failed");
	keep_line_str(&p->line, "step", step);
	keep_line_str(&p->line, "want", want);
	keep_line_str(&p->line, "got", got);
	emit(p);
	if (r && r->detail[0])
		keep_warn(prog, "step %s: %s", step, r->detail);
	cleanup(p);
	return r && r->outcome == KEEP_STORE_AMBIGUOUS ? KEEP_EXIT_TEMP : KEEP_EXIT_NO;
}

/* Check a reply's outcome against want. 0 when it matches, else the exit
 * code (after reporting and cleanup). A local error (rc < 0) is fatal. */
static int expect(struct probe *p, const char *step, int rc, const struct keep_reply *r,
		  enum keep_outcome want)
{
	if (rc)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to run step %s on '%s': %s", step, p->key,
			 keep_strerror(rc));
	say_step(p, step, r->outcome);
	if (r->outcome != want)
		return failed(p, step, keep_outcome_name(want), keep_outcome_name(r->outcome), r);
	return 0;
}

static int run(struct probe *p)
{
	static const char b1[] = "store-probe 1\n", b2[] = "store-probe 2\n";
	static const char b3[] = "store-probe 3\n", b4[] = "store-probe 4\n";
	char v1[KEEP_VERSION_MAX], v2[KEEP_VERSION_MAX];
	struct keep_reply r;
	struct keep_buf body;
	int rc, x;

	rc = keep_store_put(p->s, p->key, b1, strlen(b1), KEEP_COND_IF_NONE_MATCH, NULL, &r);
	if ((x = expect(p, "create", rc, &r, KEEP_STORE_OK)))
		return x;
	memcpy(v1, r.version, sizeof(v1));
	if (!v1[0])
		return failed(p, "create", "version", "-", NULL);

	rc = keep_store_put(p->s, p->key, b2, strlen(b2), KEEP_COND_IF_NONE_MATCH, NULL, &r);
	if ((x = expect(p, "create-again", rc, &r, KEEP_STORE_CONFLICT)))
		return x;

	rc = keep_store_put(p->s, p->key, b3, strlen(b3), KEEP_COND_IF_MATCH, v1, &r);
	if ((x = expect(p, "update", rc, &r, KEEP_STORE_OK)))
		return x;
	memcpy(v2, r.version, sizeof(v2));
	if (!v2[0] || strcmp(v1, v2) == 0)
		return failed(p, "update", "new-version", v2[0] ? "same-version" : "-", NULL);

	rc = keep_store_put(p->s, p->key, b4, strlen(b4), KEEP_COND_IF_MATCH, v1, &r);
	if ((x = expect(p, "stale-update", rc, &r, KEEP_STORE_CONFLICT)))
		return x;

	keep_buf_init(&body, KEEP_BODY_MAX);
	rc = keep_store_get(p->s, p->key, &body, &r);
	x = expect(p, "get", rc, &r, KEEP_STORE_OK);
	if (!x && (body.len != strlen(b3) || memcmp(body.data, b3, body.len) != 0))
		x = failed(p, "get", "update-body", "other-body", NULL);
	keep_buf_release(&body);
	if (x)
		return x;
	if (strcmp(r.version, v2) != 0)
		return failed(p, "get", "update-version", "other-version", NULL);

	rc = keep_store_head(p->s, p->key, &r);
	if ((x = expect(p, "stat", rc, &r, KEEP_STORE_OK)))
		return x;
	if (strcmp(r.version, v2) != 0)
		return failed(p, "stat", "update-version", "other-version", NULL);

	rc = keep_store_del(p->s, p->key, NULL, &r);
	if ((x = expect(p, "delete", rc, &r, KEEP_STORE_OK)))
		return x;

	rc = keep_store_head(p->s, p->key, &r);
	if ((x = expect(p, "gone", rc, &r, KEEP_STORE_NOT_FOUND)))
		return x;

	keep_line_start_out(&p->line, "probe");
	keep_line_str(&p->line, "result", "ok");
	keep_line_str(&p->line, "store", p->url);
	emit(p);
	return KEEP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    KEEP_CLI_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	struct keep_cli cli;
	struct keep_config cfg;
	struct probe p;
	unsigned char rnd[8];
	size_t got = 0, i;
	ssize_t k;
	int opt, rc;

	keep_cli_init(&cli, prog, USAGE);
	while ((opt = keep_cli_next(&cli, argc, argv, "hc:", longopts)) != -1)
		keep_cli_usage_error(&cli, "unknown option");
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	keep_cli_load_config(&cli, &cfg);
	if (!cfg.store[0])
		keep_die(KEEP_EXIT_USAGE, prog, "no store configured (use --store or -c FILE)");

	while (got < sizeof(rnd)) {
		k = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			keep_die(KEEP_EXIT_TEMP, prog, "unable to get random bytes");
		got += (size_t)k;
	}
	memcpy(p.key, "probe/", 6);
	for (i = 0; i < sizeof(rnd); i++) {
		p.key[6 + 2 * i] = "0123456789abcdef"[rnd[i] >> 4];
		p.key[7 + 2 * i] = "0123456789abcdef"[rnd[i] & 15];
	}
	p.key[6 + 2 * sizeof(rnd)] = '\0';
	p.url = cfg.store;

	p.s = keep_store_open_or_die(prog, &cfg, NULL);
	keep_buf_init(&p.line, KEEP_LINE_MAX * 2);
	rc = run(&p);
	keep_buf_release(&p.line);
	keep_store_free(p.s);
	return rc;
}
