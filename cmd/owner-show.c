/* owner-show — who owns an actor (ADR 0020 §3 "Who is the owner"; docs/ownership.md).
 *
 * One read of owners/KEY, then, when it names a holder, one read of
 * nodes/<holder> (issued after the record read, so free=yes is the §2 free
 * rule's answer at that moment). Writes nothing. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/core/fence.h"
#include "../lib/core/owner.h"
#include "../lib/core/watchlist.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownstore.h"
#include "../lib/driver/storecmd.h"
#include "../lib/local/holds.h"
#include "../lib/platform/clock.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: owner-show [-c FILE] [--app ROOT] [--store URL] [--json] KEY\n"
    "\n"
    "Print who owns KEY (tenant/class/name):\n"
    "  owner key=K state=held|nobody|absent node=N instance=I generation=G\n"
    "        holder=live|live-other-instance|fenced|released|absent|old-format|\n"
    "        unreadable|- free=yes|no\n"
    "free=yes: an acquisition may take it now (nobody, absent, or the §2 free\n"
    "rule holds on the read of nodes/N made after the record read).\n"
    "  --json  the line as one JSON object, same fields, free a boolean\n"
    "          (docs/formats.md)\n"
    "\n"
    "--app ROOT  the records of application root ROOT (apps/ROOT/owners/...;\n"
    "            [a-z0-9][a-z0-9_-]{0,31}); none: the default root (owners/...)\n"
    "\n"
    "exit: 0 shown; 1 the store refused a read (403, no such bucket); 17 the\n"
    "record is not ours; 100 usage; 111 a read failed for now (timeout, 5xx).\n";

static const char *prog = "owner-show";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS, KEEP_CLI_APP_LONGOPT, {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_config cfg;
	struct keep_store *store;
	struct keep_owner_rec rec;
	struct keep_node_obj obj;
	struct keep_node_read nr;
	struct keep_owner_read orr;
	struct keep_buf b;
	char shown[300];
	const char *key, *state, *holder = NULL;
	bool is_free = true;
	int c;

	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1)
		keep_cli_usage_error(&cli, "unknown option");
	if (argc - optind != 1)
		keep_cli_usage_error(&cli, "exactly one KEY");
	key = argv[optind];
	if (!keep_owner_key_valid(key))
		keep_cli_usage_error(&cli, "invalid key '%s'",
				     keep_line_escaped(key, shown, sizeof(shown)));
	keep_cli_setup(&cli, &cfg, KEEP_NEED_STORE);
	store = keep_store_open_or_die(prog, &cfg, NULL);

	keep_owner_read(store, key, &rec, &orr);
	if (orr.reply.outcome != KEEP_STORE_OK && orr.reply.outcome != KEEP_STORE_NOT_FOUND) {
		keep_store_free(store);
		keep_die(keep_exit_of_reply(&orr.reply), prog, "unable to read owners/%s: %s", key,
			 orr.why);
	}
	if (orr.reply.outcome == KEEP_STORE_OK && !orr.ok) {
		keep_store_free(store);
		keep_die(KEEP_EXIT_BAD_OBJECT, prog, "owners/%s is not a keep ownership record%s%s",
			 key, orr.reply.not_ours ? ": " : "",
			 orr.reply.not_ours ? orr.reply.detail : "");
	}
	if (orr.reply.outcome == KEEP_STORE_NOT_FOUND) {
		state = "absent";
		memset(&rec, 0, sizeof(rec));
	} else if (!rec.held) {
		state = "nobody";
	} else {
		enum keep_free f;

		state = "held";
		keep_node_read(store, rec.node, KEEP_NODE_READ_ANY_FORMAT, &obj, &nr);
		/* live naming the record's instance shows as live; live naming
		 * another instance is a newer process of that node */
		holder = keep_holder_name(keep_holder_of(
		    rec.instance, nr.reply.outcome != KEEP_STORE_NOT_FOUND, nr.ok ? &obj : NULL));
		if (nr.reply.outcome != KEEP_STORE_OK && nr.reply.outcome != KEEP_STORE_NOT_FOUND) {
			keep_store_free(store);
			keep_die(keep_exit_of_reply(&nr.reply), prog, "unable to read nodes/%s: %s",
				 rec.node, nr.why);
		}
		f = keep_node_free(rec.node, rec.instance, nr.reply.outcome == KEEP_STORE_OK,
				   nr.ok ? &obj : NULL, keep_judge_wall_cfg(&cfg), &cfg.timing,
				   NULL);
		is_free = f == KEEP_FREE_YES;
	}
	keep_line_begin(&b, "owner");
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "state", state);
	keep_line_str(&b, "node", rec.held ? rec.node : NULL);
	keep_line_str(&b, "instance", rec.held ? rec.instance : NULL);
	if (rec.generation > 0)
		keep_line_int(&b, "generation", rec.generation);
	else
		keep_line_str(&b, "generation", NULL);
	keep_line_str(&b, "holder", holder);
	keep_line_bool(&b, "free", is_free);
	keep_line_end(&b);
	keep_store_free(store);
	return KEEP_EXIT_OK;
}
