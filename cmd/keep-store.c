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
#include "../lib/driver/cli.h"
#include "../lib/driver/rawstore.h"
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
	if (strcmp(cmd, "del") == 0 && !force && keep_rawstore_del_breaks(arg))
		/* one line, nothing deleted, before the configuration is read */
		keep_die(KEEP_EXIT_USAGE, prog,
			 "refusing to delete '%s' without --force: it is %s (docs/operations.md)",
			 arg, keep_rawstore_del_breaks(arg));

	keep_cli_load_config(&cli, &cfg);
	if (!cfg.store[0])
		keep_die(KEEP_EXIT_USAGE, prog, "no store configured (use --store or -c FILE)");
	s = keep_store_open_or_die(prog, &cfg, NULL);

	keep_buf_init(&b, KEEP_LINE_MAX * 2);
	if (strcmp(cmd, "get") == 0)
		rc = keep_rawstore_get(s, arg);
	else if (strcmp(cmd, "stat") == 0)
		rc = keep_rawstore_stat(s, arg, &b);
	else if (strcmp(cmd, "put") == 0)
		rc = keep_rawstore_put(s, arg,
				       if_none	  ? KEEP_COND_IF_NONE_MATCH
				       : if_match ? KEEP_COND_IF_MATCH
						  : KEEP_COND_NONE,
				       if_match, &b);
	else if (strcmp(cmd, "del") == 0)
		rc = keep_rawstore_del(s, arg, if_match, &b);
	else
		rc = keep_rawstore_list(s, arg, &b);
	keep_buf_release(&b);
	keep_store_free(s);
	return rc;
}
