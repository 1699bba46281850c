/* owner-commit — the fenced commit: an application's bytes written under
 * the fence of this node's grant, refused by the store's condition once a
 * later generation's fence is there (issue 26; ADR 0020 §3 "Own", the R2
 * grant document; docs/ownership.md "owner-commit").
 *
 * A driver of the commit machine (lib/core/commit.h) through
 * keep_commit_fenced / keep_claim_fenced (lib/driver/commit.c), which decide every
 * step and its order; this file parses the command line, reads stdin,
 * opens the store and prints the answer. --get reads a fenced object
 * (keep_fenced_get) and writes its bytes to stdout exactly. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/commit.h"
#include "../lib/driver/commitcmd.h"
#include "../lib/driver/storecmd.h"
#include "../lib/local/metrics.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: owner-commit [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                    [--app ROOT] [--if-version V] [--json] [--stats]\n"
    "                    KEY GENERATION OBJECT <DATA\n"
    "       owner-commit [...] --claim [--json] [--stats] KEY GENERATION OBJECT\n"
    "       owner-commit [-c FILE] [--store URL] --get [--show] [--json] OBJECT\n"
    "\n"
    "Commit DATA (stdin, at most 64512 bytes) to the store key OBJECT as a\n"
    "fenced object: a header naming KEY (tenant/class/name) and GENERATION (the\n"
    "fencing token of this node's hold of KEY, as owner-check takes it), then\n"
    "DATA. The grant is checked (owner-check's rule), OBJECT read, the grant\n"
    "checked again, then OBJECT written If-Match the version read\n"
    "(If-None-Match when absent): once a later generation's fence is on OBJECT\n"
    "the store refuses the write, however late it is sent. A conflict or a\n"
    "lost reply reads OBJECT again (a body naming GENERATION with these bytes\n"
    "is this commit) and decides again, at most 4 reads and 4 writes.\n"
    "OBJECT may not be under keep's own names (nodes, owners, leases, wal,\n"
    "snapshot, probe, cluster).\n"
    "  --if-version V  one write If-Match V, no read first: V must be the\n"
    "            version this holder's last commit or claim of OBJECT answered;\n"
    "            refused reason=changed when OBJECT is no longer at V\n"
    "  --claim   write this holder's fence over the bytes on OBJECT (absent:\n"
    "            created empty); the first step of a new holder: acquire,\n"
    "            claim, read, work, commit. Already claimed: nothing written\n"
    "  --get OBJECT  DATA to stdout exactly; the fence line on stderr\n"
    "  --show    with --get: the fence line on stdout, no DATA\n"
    "  --json    each line as one JSON object, same fields (docs/formats.md)\n"
    "  --stats   at exit, one line on stderr: `stats requests=N get=N ...`\n"
    "Lines:\n"
    "  committed key=K generation=G object=O version=V\n"
    "  claimed key=K generation=G object=O version=V previous=G0|-\n"
    "  refused key=K object=O reason=fenced generation=G0   a later holder's fence\n"
    "  refused key=K object=O reason=grant-not-valid grant=R   owner-check's reason\n"
    "  refused key=K object=O reason=not-fenced|bad-fence|other-key [owner=K2]\n"
    "  refused key=K object=O reason=changed version=V|-      --if-version\n"
    "  unknown key=K object=O generation=G reason=R   a write may still land\n"
    "  error key=K object=O reason=store|contention\n"
    "  fence object=O key=K generation=G version=V size=N sha256=H\n"
    "        meta_owner=K|- meta_generation=G|-               --get\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit: 0 committed, claimed or read; 1 refused (no such grant: no-hold,\n"
    "other-generation, old-instance, lapsed, releasing; changed), the store\n"
    "refused a request (403, no such bucket), --get of an absent OBJECT;\n"
    "10..15 the lease is not valid (as owner-check); 17 OBJECT is not a\n"
    "fenced object, is another KEY's, or its fence does not decode; 23 a\n"
    "later generation's fence is on OBJECT (this holder is cut off); 100\n"
    "usage (a bad KEY, GENERATION, OBJECT or V, DATA over 64512 bytes:\n"
    "nothing written); 111 the store failed for now, conflicts in every\n"
    "round, or unknown (a write may have landed: run the same commit again,\n"
    "it is idempotent). See docs/exit-codes.md and docs/ownership.md.\n";

static const char *prog = "owner-commit";

enum { OPT_CLAIM = 0x2000, OPT_GET, OPT_SHOW, OPT_IF_VERSION };

/* Read stdin into b (max KEEP_FENCED_DATA_MAX bytes); over it, exit 100. */
static void read_stdin(struct keep_buf *b)
{
	int rc = keep_read_all(STDIN_FILENO, b);

	if (rc == KEEP_ERR_TOOBIG)
		keep_die(KEEP_EXIT_USAGE, prog,
			 "DATA on stdin is larger than %d bytes: nothing written",
			 KEEP_FENCED_DATA_MAX);
	if (rc == KEEP_ERR_IO)
		keep_die(KEEP_EXIT_USAGE, prog, "unable to read DATA on stdin: %s",
			 strerror(errno));
	if (rc)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to read DATA on stdin: %s",
			 keep_strerror(rc));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS,
	    KEEP_CLI_APP_LONGOPT,
	    {"stats", no_argument, NULL, KEEP_OPT_STATS},
	    {"claim", no_argument, NULL, OPT_CLAIM},
	    {"get", no_argument, NULL, OPT_GET},
	    {"show", no_argument, NULL, OPT_SHOW},
	    {"if-version", required_argument, NULL, OPT_IF_VERSION},
	    {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_config cfg;
	struct keep_reqstats stats;
	struct keep_store *store;
	struct keep_commit_opts o;
	struct keep_commit_result res;
	struct keep_buf data;
	char dir[KEEP_PATH_MAX + 80], shown[KEEP_KEY_MAX * 4 + 8];
	const char *key = NULL, *object, *why, *if_version = NULL;
	bool claim = false, getm = false, show = false;
	int64_t gen = 0;
	int c, code;

	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		switch (c) {
		case OPT_CLAIM:
			claim = true;
			break;
		case OPT_GET:
			getm = true;
			break;
		case OPT_SHOW:
			show = true;
			break;
		case OPT_IF_VERSION:
			if_version = optarg;
			break;
		default:
			keep_cli_usage_error(&cli, "unknown option");
		}
	}
	if (getm && (claim || if_version || cli.stats))
		keep_cli_usage_error(&cli, "--get takes no --claim, --if-version or --stats");
	if (show && !getm)
		keep_cli_usage_error(&cli, "--show needs --get");
	if (claim && if_version)
		keep_cli_usage_error(&cli, "--claim takes no --if-version");
	if (getm) {
		if (argc - optind != 1)
			keep_cli_usage_error(&cli, "--get takes exactly one OBJECT");
		object = argv[optind];
	} else {
		if (argc - optind != 3)
			keep_cli_usage_error(&cli, "KEY, GENERATION and OBJECT expected");
		key = argv[optind];
		if (!keep_owner_key_valid(key))
			keep_cli_usage_error(&cli, "invalid key '%s' (tenant/class/name)",
					     keep_line_escaped(key, shown, sizeof(shown)));
		gen = keep_cli_int_arg(&cli, "GENERATION", argv[optind + 1], 1, KEEP_OWNER_GEN_MAX);
		object = argv[optind + 2];
	}
	if (!keep_key_valid(object))
		keep_cli_usage_error(&cli, "invalid object key '%s'",
				     keep_line_escaped(object, shown, sizeof(shown)));
	if (!getm && !keep_fenced_object_allowed(object, &why))
		keep_cli_usage_error(&cli, "object key '%s' is %s",
				     keep_line_escaped(object, shown, sizeof(shown)), why);
	if (if_version && (!*if_version || strlen(if_version) >= KEEP_VERSION_MAX ||
			   strpbrk(if_version, "\r\n\t")))
		keep_cli_usage_error(&cli, "--if-version wants a version token (1..%d bytes)",
				     KEEP_VERSION_MAX - 1);

	keep_cli_setup(&cli, &cfg, getm ? KEEP_NEED_STORE : KEEP_NEED_STORE | KEEP_NEED_NODE);
	keep_reqstats_init(&stats);
	keep_buf_init(&data, KEEP_FENCED_DATA_MAX);
	if (!getm && !claim)
		read_stdin(&data); /* before anything is sent: over the limit, nothing is */
	store = keep_store_open_or_die(prog, &cfg, cli.stats ? &stats : NULL);
	if (getm) {
		code = keep_commit_get_cmd(store, object, show);
		keep_store_free(store);
		keep_buf_release(&data);
		return code;
	}
	if (keep_config_node_dir(&cfg, dir, sizeof(dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, prog, "state directory path too long");
	memset(&o, 0, sizeof(o));
	o.node_dir = dir;
	o.if_version = if_version;
	o.timeout_ms = cfg.s3_timeout_ms;
	if (claim)
		keep_claim_fenced(store, key, gen, object, &o, &res);
	else
		keep_commit_fenced(store, key, gen, object, data.data, data.len, &o, &res);
	keep_buf_release(&data);
	keep_store_free(store);
	code = keep_commit_answer(key, object, &res);
	if (cli.stats)
		keep_reqstats_print(&stats, prog);
	return code;
}
