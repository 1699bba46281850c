/* keep-store — raw access to the store, for operators and tests
 * (docs/store.md). Works on every backend through keep_store_open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/core/cluster.h"
#include "../lib/core/owner.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/storecmd.h"
#include "../lib/local/config.h"
#include "../lib/platform/line.h"
#include "../lib/store/store.h"

static const char USAGE[] =
    "usage: keep-store [-c FILE] [--store URL] get KEY\n"
    "       keep-store [-c FILE] [--store URL] stat KEY\n"
    "       keep-store [-c FILE] [--store URL] put KEY [--if-match VERSION | --if-none-match]\n"
    "       keep-store [-c FILE] [--store URL] del KEY [--if-match VERSION] [--force]\n"
    "       keep-store [-c FILE] [--store URL] list [PREFIX]\n"
    "\n"
    "  get   write the object's body, raw, to stdout\n"
    "  stat  print 'object key=KEY version=VERSION'\n"
    "  put   store stdin (at most 65536 bytes) as KEY; print\n"
    "        'put key=KEY outcome=OUTCOME version=VERSION'\n"
    "  del   delete KEY; print 'del key=KEY outcome=OUTCOME'. A key under nodes/ or\n"
    "        owners/ (a node lease, an ownership record) is refused without --force:\n"
    "        keep never deletes one, and deleting one breaks fencing (docs/operations.md)\n"
    "  list  print 'object key=KEY version=VERSION' for every key starting with PREFIX\n"
    "  --json  the lines as JSON objects (docs/formats.md); get still writes the raw body\n"
    "\n"
    "exit: 0 ok; 1 conflict, not found or refused; 100 usage or configuration (also\n"
    "      del under nodes/ or owners/ without --force: nothing deleted);\n"
    "      111 ambiguous (store unreachable, timeout, 5xx: the write may have landed)\n";

enum { OPT_IF_MATCH = 0x2000, OPT_IF_NONE_MATCH, OPT_FORCE };

static const char *prog = "keep-store";

/* What deleting a key under a protocol prefix breaks (issue 23 item 6;
 * docs/operations.md "Deleting objects by hand"), or NULL for any other
 * key. One line each, for the refusal. */
static const char *del_breaks(const char *key)
{
	switch (keep_hand_delete_judge(key)) {
	case KEEP_HAND_DELETE_NODE:
		return "a node lease: the node loses its lease at its next write (exit 13), "
		       "every record it holds stays held until someone runs `lease-fence` on "
		       "it, and its written_at floor is gone; fence it instead";
	case KEEP_HAND_DELETE_RECORD:
		return "an ownership record: its holder keeps acting while the next "
		       "acquisition creates it again at a lower generation (1 on a native "
		       "cluster): two owners, and fencing tokens that go backwards; release "
		       "it instead";
	case KEEP_HAND_DELETE_OK:
		break;
	}
	return NULL;
}

/* A local refusal (rc < 0 from the store layer) is fatal. */
static void check_rc(int rc, const char *verb, const char *key)
{
	char shown[300];

	if (rc == KEEP_ERR_INVAL)
		keep_die(KEEP_EXIT_USAGE, prog, "unable to %s '%s': invalid key", verb,
			 keep_line_escaped(key, shown, sizeof(shown)));
	if (rc)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to %s '%s': %s", verb,
			 keep_line_escaped(key, shown, sizeof(shown)), keep_strerror(rc));
}

/* Diagnose a reply that is not OK and return its exit code. */
static int fail_reply(const char *verb, const char *key, const struct keep_reply *r)
{
	if (r->outcome == KEEP_STORE_NOT_FOUND)
		keep_log(KEEP_LOG_FATAL, prog, "unable to %s '%s': not found", verb, key);
	else
		keep_log(KEEP_LOG_FATAL, prog, "unable to %s '%s': %s%s%s", verb, key,
			 keep_outcome_name(r->outcome), r->detail[0] ? ": " : "", r->detail);
	/* a raw tool: an object it cannot read is a refusal (1) like any other */
	return r->outcome == KEEP_STORE_REFUSED ? KEEP_EXIT_NO : keep_exit_of_reply(r);
}

static void emit(struct keep_buf *b)
{
	if (keep_line_emit(b))
		keep_die(KEEP_EXIT_TEMP, prog, "unable to write to stdout");
}

/* Read all of stdin into body (bounded by KEEP_BODY_MAX). */
static void read_stdin(struct keep_buf *body)
{
	char chunk[8192];
	ssize_t n;
	int rc;

	for (;;) {
		n = read(0, chunk, sizeof(chunk));
		if (n < 0)
			keep_die(KEEP_EXIT_USAGE, prog, "unable to read stdin: %s",
				 strerror(errno));
		if (n == 0)
			return;
		rc = keep_buf_add(body, chunk, (size_t)n);
		if (rc == KEEP_ERR_TOOBIG)
			keep_die(KEEP_EXIT_USAGE, prog, "unable to put: body exceeds %d bytes",
				 KEEP_BODY_MAX);
		if (rc)
			keep_die(KEEP_EXIT_TEMP, prog, "unable to read stdin: %s",
				 keep_strerror(rc));
	}
}

static int do_get(struct keep_store *s, const char *key)
{
	struct keep_reply r;
	struct keep_buf body;
	int rc;

	keep_buf_init(&body, KEEP_BODY_MAX);
	check_rc(keep_store_get(s, key, &body, &r), "get", key);
	if (r.outcome != KEEP_STORE_OK) {
		keep_buf_release(&body);
		return fail_reply("get", key, &r);
	}
	rc = KEEP_EXIT_OK;
	if ((body.len && fwrite(body.data, 1, body.len, stdout) != body.len) || fflush(stdout)) {
		keep_log(KEEP_LOG_FATAL, prog, "unable to write to stdout");
		rc = KEEP_EXIT_TEMP;
	}
	keep_buf_release(&body);
	return rc;
}

static int do_stat(struct keep_store *s, const char *key, struct keep_buf *b)
{
	struct keep_reply r;

	check_rc(keep_store_head(s, key, &r), "stat", key);
	if (r.outcome != KEEP_STORE_OK)
		return fail_reply("stat", key, &r);
	keep_line_start_out(b, "object");
	keep_line_str(b, "key", key);
	keep_line_str(b, "version", r.version);
	emit(b);
	return KEEP_EXIT_OK;
}

static int do_put(struct keep_store *s, const char *key, enum keep_cond cond, const char *if_match,
		  struct keep_buf *b)
{
	struct keep_reply r;
	struct keep_buf body;
	int rc;

	keep_buf_init(&body, KEEP_BODY_MAX);
	read_stdin(&body);
	rc = keep_store_put(s, key, body.data, body.len, cond, if_match, &r);
	keep_buf_release(&body);
	check_rc(rc, "put", key);
	keep_line_start_out(b, "put");
	keep_line_str(b, "key", key);
	keep_line_str(b, "outcome", keep_outcome_name(r.outcome));
	keep_line_str(b, "version", r.outcome == KEEP_STORE_OK ? r.version : NULL);
	emit(b);
	return r.outcome == KEEP_STORE_OK ? KEEP_EXIT_OK : fail_reply("put", key, &r);
}

static int do_del(struct keep_store *s, const char *key, const char *if_match, struct keep_buf *b)
{
	struct keep_reply r;

	check_rc(keep_store_del(s, key, if_match, &r), "delete", key);
	keep_line_start_out(b, "del");
	keep_line_str(b, "key", key);
	keep_line_str(b, "outcome", keep_outcome_name(r.outcome));
	emit(b);
	return r.outcome == KEEP_STORE_OK ? KEEP_EXIT_OK : fail_reply("delete", key, &r);
}

static int do_list(struct keep_store *s, const char *prefix, struct keep_buf *b)
{
	struct keep_reply r;
	struct keep_list l;
	size_t i;
	int rc;

	keep_list_init(&l);
	rc = keep_store_list(s, prefix, &l, &r);
	if (rc == KEEP_ERR_INVAL) {
		char shown[300];

		keep_die(KEEP_EXIT_USAGE, prog, "unable to list '%s': invalid prefix",
			 keep_line_escaped(prefix, shown, sizeof(shown)));
	}
	check_rc(rc, "list", prefix);
	if (r.outcome != KEEP_STORE_OK) {
		keep_list_release(&l);
		return fail_reply("list", prefix, &r);
	}
	keep_warn_skipped(prog, prefix, &l);
	for (i = 0; i < l.n; i++) {
		keep_line_start_out(b, "object");
		keep_line_str(b, "key", l.v[i].key);
		keep_line_str(b, "version", l.v[i].version);
		emit(b);
	}
	keep_list_release(&l);
	return KEEP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    KEEP_CLI_LONGOPTS,
	    {"if-match", required_argument, NULL, OPT_IF_MATCH},
	    {"if-none-match", no_argument, NULL, OPT_IF_NONE_MATCH},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {NULL, 0, NULL, 0},
	};
	struct keep_cli cli;
	struct keep_config cfg;
	struct keep_store *s;
	struct keep_buf b;
	const char *cmd, *arg, *if_match = NULL;
	bool if_none = false, force = false;
	int opt, rc, nargs;

	keep_cli_init(&cli, prog, USAGE);
	while ((opt = keep_cli_next(&cli, argc, argv, "hc:", longopts)) != -1) {
		if (opt == OPT_IF_MATCH)
			if_match = optarg;
		else if (opt == OPT_IF_NONE_MATCH)
			if_none = true;
		else if (opt == OPT_FORCE)
			force = true;
		else
			keep_cli_usage_error(&cli, "unknown option");
	}
	nargs = argc - optind;
	if (nargs < 1)
		keep_cli_usage_error(&cli, "no command given");
	cmd = argv[optind];
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	if (strcmp(cmd, "list") == 0) {
		if (nargs > 2)
			keep_cli_usage_error(&cli, "list takes at most one PREFIX");
		if (!arg)
			arg = "";
	} else if (strcmp(cmd, "get") == 0 || strcmp(cmd, "stat") == 0 || strcmp(cmd, "put") == 0 ||
		   strcmp(cmd, "del") == 0) {
		if (nargs != 2)
			keep_cli_usage_error(&cli, "%s takes exactly one KEY", cmd);
		if (!keep_key_valid(arg)) {
			char shown[300];

			keep_cli_usage_error(&cli, "invalid key '%s'",
					     keep_line_escaped(arg, shown, sizeof(shown)));
		}
	} else {
		keep_cli_usage_error(&cli, "unknown command '%s'", cmd);
	}
	if (strcmp(arg ? arg : "", KEEP_CLUSTER_KEY) == 0 &&
	    (strcmp(cmd, "put") == 0 || strcmp(cmd, "del") == 0))
		keep_cli_usage_error(
		    &cli, "'" KEEP_CLUSTER_KEY "' is the cluster object: only `upgrade-mark "
			  "native` writes it, and keep never removes it (docs/upgrade.md)");
	if (if_match && strcmp(cmd, "put") != 0 && strcmp(cmd, "del") != 0)
		keep_cli_usage_error(&cli, "--if-match only applies to put and del");
	if (if_none && strcmp(cmd, "put") != 0)
		keep_cli_usage_error(&cli, "--if-none-match only applies to put");
	if (if_none && if_match)
		keep_cli_usage_error(&cli, "--if-match and --if-none-match exclude each other");
	if (if_match && !*if_match)
		keep_cli_usage_error(&cli, "--if-match needs a version");
	if (force && strcmp(cmd, "del") != 0)
		keep_cli_usage_error(&cli, "--force only applies to del");
	if (strcmp(cmd, "del") == 0 && !force && del_breaks(arg))
		/* one line, nothing deleted, before the configuration is read */
		keep_die(KEEP_EXIT_USAGE, prog,
			 "refusing to delete '%s' without --force: it is %s (docs/operations.md)",
			 arg, del_breaks(arg));

	keep_cli_load_config(&cli, &cfg);
	if (!cfg.store[0])
		keep_die(KEEP_EXIT_USAGE, prog, "no store configured (use --store or -c FILE)");
	s = keep_store_open_or_die(prog, &cfg, NULL);

	keep_buf_init(&b, KEEP_LINE_MAX * 2);
	if (strcmp(cmd, "get") == 0)
		rc = do_get(s, arg);
	else if (strcmp(cmd, "stat") == 0)
		rc = do_stat(s, arg, &b);
	else if (strcmp(cmd, "put") == 0)
		rc = do_put(s, arg,
			    if_none    ? KEEP_COND_IF_NONE_MATCH
			    : if_match ? KEEP_COND_IF_MATCH
				       : KEEP_COND_NONE,
			    if_match, &b);
	else if (strcmp(cmd, "del") == 0)
		rc = do_del(s, arg, if_match, &b);
	else
		rc = do_list(s, arg, &b);
	keep_buf_release(&b);
	keep_store_free(s);
	return rc;
}
