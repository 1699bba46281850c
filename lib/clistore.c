/* keep — opening the store for a command (cli.h). Apart from cli.c so that
 * the commands that never touch the store (owner-check, lease-status) do not
 * link it (docs/design.md "Layers"). */
#include <stdio.h>

#include "cli.h"
#include "err.h"
#include "exitcode.h"
#include "metrics.h"
#include "store/store.h"

struct keep_store *keep_cli_open_store(const struct keep_cli *cli, const struct keep_config *c,
				       struct keep_reqstats *stats)
{
	struct keep_store_opts so;
	struct keep_store *s;
	char err[512];
	int rc;

	keep_config_store_opts(c, &so);
	rc = keep_store_open(c->store, &so, &s, err, sizeof(err));
	if (rc == 0 && stats) {
		rc = keep_store_counted(s, stats, &s);
		if (rc)
			snprintf(err, sizeof(err), "out of memory");
	}
	if (rc)
		keep_die(rc == KEEP_ERR_INVAL || rc == KEEP_ERR_PERM ? KEEP_EXIT_USAGE
								     : KEEP_EXIT_TEMP,
			 cli->prog, "unable to open store '%s': %s", c->store, err);
	return s;
}
