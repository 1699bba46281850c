/* upgrade-mark — the scripted upgrade from per-actor leases (ADR 0020 §6;
 * docs/upgrade.md, docs/runbooks/upgrade.md).
 *
 * A thin command over lib/driver/upgrademark.c and lib/driver/upgradeforget.c
 * (the drivers of lib/core/upgrade.c, lib/core/cluster.c and
 * lib/driver/upgrade.c):
 *   guard    the start guard: lists nodes/ every half period until no
 *            old-format heartbeat is fresh; exit 16 when one is rewritten
 *   actors   marks leases/KEY for actors and seeds their first generation
 *   forget   deletes stale old-format heartbeats (never a format-3 object)
 *   native   creates the cluster object `cluster` (format native) on a
 *            bucket that never held leases/, wal/ or snapshot/ objects
 *            (lib/core/cluster.h; docs/upgrade.md "Native clusters") */
#include <getopt.h>
#include <string.h>

#include "../lib/core/upgrade.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/storecmd.h"
#include "../lib/driver/supervise.h"
#include "../lib/driver/upgradeforget.h"
#include "../lib/driver/upgrademark.h"

static const char usage[] =
    "usage: upgrade-mark [-c FILE] [--store URL] [--horizon-ms MS] guard\n"
    "       upgrade-mark [-c FILE] [--store URL] actors [KEY... | --all]\n"
    "       upgrade-mark [-c FILE] [--store URL] [--horizon-ms MS] forget NODE | --stale\n"
    "       upgrade-mark [-c FILE] [--store URL] native\n"
    "\n"
    "guard   wait while any old-format heartbeat (nodes/<id>, wasmkeep-node 1|2)\n"
    "        was written less than horizon + ttl + grace ago, listing nodes/ every\n"
    "        half heartbeat period:\n"
    "          wait node=N format=F written_at_ms=W left_ms=L   (each fresh one, each pass)\n"
    "          pass old=N                                       exit 0\n"
    "          old-running node=N written_at_ms=W previous_written_at_ms=P   exit 16\n"
    "        one dated in the future lapses horizon + ttl + grace + max_skew after\n"
    "        this process first read it (a warning names it)\n"
    "actors  for each actor KEY (tenant/class/name; stdin, one a line, when no KEY;\n"
    "        --all: every actor found under leases/, owners/, wal/ and snapshot/),\n"
    "        refuse a live old lease, else put the wasmkeep-lease 2 marker:\n"
    "          marked key=K seed=S action=created|replaced|existing keys_max=M\n"
    "          held key=K node=N generation=G expires_at_ms=E live_until_ms=U\n"
    "          error key=K reason=invalid-key|bad-object|bad-key|store\n"
    "forget  delete NODE's old-format heartbeat, or (--stale) every one, once stale\n"
    "        by the guard's test; never a node lease (format 3), except (NODE\n"
    "        only) an operator's fence created over an absent object (`lease-fence\n"
    "        --create`, instance -) when no ownership record names NODE (every\n"
    "        record under owners/ is read first):\n"
    "          forgot node=N format=F written_at_ms=W [checked_records=R]\n"
    "          kept node=N reason=fresh|format-3|bad-object [left_ms=L]\n"
    "          kept node=N reason=named|unreadable key=K   (a record names N)\n"
    "          absent node=N\n"
    "native  on a bucket with no leases/, wal/ or snapshot/ object, create the\n"
    "        cluster object `cluster` (If-None-Match): first acquisitions then\n"
    "        skip the leases/ marker (2 requests a new actor); once, at setup:\n"
    "          native written_at_ms=W action=created|existing\n"
    "          refused reason=old-objects key=K   (exit 1, nothing written)\n"
    "          refused reason=upgraded written_at_ms=W   (exit 1)\n"
    "\n"
    "  --horizon-ms MS  how long an old node may act after its last heartbeat\n"
    "                   (default 10000, the old binary's heartbeat ttl)\n"
    "  --check          validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit: 0 done; 1 held (actors), kept (forget NODE), or the store refused a\n"
    "request (403, no such bucket); 16 an old node is running (guard); 17 an\n"
    "object is not ours or malformed; 100 usage; 111 store failure for now\n"
    "(timeout, 5xx: run it again), or the guard stopped (SIGTERM, SIGINT)\n"
    "before it passed.\n"
    "See docs/upgrade.md.\n";

enum { OPT_HORIZON = 0x2000, OPT_ALL, OPT_STALE };

static const char *prog = "upgrade-mark";

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"horizon-ms", required_argument, NULL, OPT_HORIZON},
					     {"all", no_argument, NULL, OPT_ALL},
					     {"stale", no_argument, NULL, OPT_STALE},
					     {"check", no_argument, NULL, KEEP_OPT_CHECK},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_upgmark x;
	const char *sub;
	bool all = false, stale = false;
	int c, rc;

	keep_supervised_start(prog); /* under keep-agent: never outlive it */
	memset(&x, 0, sizeof(x));
	x.prog = prog;
	x.horizon_ms = KEEP_UPGRADE_HORIZON_MS;
	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		switch (c) {
		case OPT_HORIZON:
			x.horizon_ms = keep_cli_int_arg(&cli, "--horizon-ms", optarg, 0, 86400000);
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_STALE:
			stale = true;
			break;
		}
	}
	keep_cli_setup(&cli, &x.cfg, KEEP_NEED_STORE);
	if (optind >= argc)
		keep_cli_usage_error(&cli, "no subcommand (guard, actors, forget or native)");
	sub = argv[optind++];
	if (strcmp(sub, "guard") == 0) {
		if (optind != argc || all || stale)
			keep_cli_usage_error(&cli, "guard takes no argument");
	} else if (strcmp(sub, "actors") == 0) {
		if (stale || (all && optind != argc))
			keep_cli_usage_error(&cli, "give keys, --all, or keys on stdin");
	} else if (strcmp(sub, "forget") == 0) {
		if (all || (stale ? optind != argc : optind + 1 != argc))
			keep_cli_usage_error(&cli, "give either NODE or --stale");
		if (!stale && !keep_node_id_valid(argv[optind]))
			keep_cli_usage_error(&cli, "invalid node id '%s'", argv[optind]);
	} else if (strcmp(sub, "native") == 0) {
		if (optind != argc || all || stale)
			keep_cli_usage_error(&cli, "native takes no argument");
	} else {
		keep_cli_usage_error(&cli, "unknown subcommand '%s'", sub);
	}

	x.store = keep_store_open_or_die(prog, &x.cfg, NULL);
	if (strcmp(sub, "guard") == 0)
		rc = keep_upgmark_guard(&x);
	else if (strcmp(sub, "actors") == 0)
		rc = keep_upgmark_actors(&x, argv + optind, argc - optind, all);
	else if (strcmp(sub, "native") == 0)
		rc = keep_upgmark_native(&x);
	else
		rc = keep_upgmark_forget(&x, stale ? NULL : argv[optind], stale);
	keep_store_free(x.store);
	return rc;
}
