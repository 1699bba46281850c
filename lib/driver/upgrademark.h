/* keep — upgrade-mark's driver (ADR 0020 §6; docs/upgrade.md,
 * docs/runbooks/upgrade.md): the start guard (struct keep_guard,
 * lib/core/upgrade.h) over listings of nodes/, the marking of actors
 * (keep_upgrade_mark_actor, lib/driver/upgrade.c) and the cluster object's
 * machine (keep_native_*, lib/core/cluster.h), run against the store, with
 * the real clocks, printing their answer lines (lib/platform/line.h) and
 * diagnostics as x->prog's. `forget` is in lib/driver/upgradeforget.h.
 * Process glue: the decisions are lib/core's. */
#ifndef KEEP_UPGRADEMARK_H
#define KEEP_UPGRADEMARK_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../local/config.h"
#include "../store/store.h"

/* One run of upgrade-mark: the caller fills every field before a call. */
struct keep_upgmark {
	const char *prog;	  /* diagnostics' program name (borrowed) */
	struct keep_config cfg;	  /* the loaded configuration */
	struct keep_store *store; /* the store (borrowed; the caller frees it) */
	int64_t horizon_ms;	  /* the guard's and forget's horizon (ms, >= 0;
				     KEEP_UPGRADE_HORIZON_MS by default) */
};

/* LIST nodes/ on x->store into *l (caller inits and releases), warning of
 * the keys it skipped; *outcome (may be NULL) gets the reply's outcome.
 * 0, or the exit code of the failure (docs/exit-codes.md: 1 refused, 111
 * for now), with a warning. */
int keep_upgmark_list_nodes(const struct keep_upgmark *x, struct keep_list *l,
			    enum keep_outcome *outcome);

/* The node id of a listed key (pointing into key, borrowed), or NULL when
 * key is not nodes/<valid id>. */
const char *keep_upgmark_node_of(const char *key);

/* upgrade-mark guard (ADR 0020 §6 "Start guard"; docs/upgrade.md "The
 * start guard"): list nodes/ and read every object, each request bounded by
 * the attempt timeout, until keep_guard_pass passes; prints `wait ...`
 * lines each pass, then `pass old=N` or `old-running ...`; sets the
 * keep_start_guard_wait_seconds gauge (x->cfg.metrics_textfile) and
 * handles SIGTERM/SIGINT itself (a stop ends the wait). Returns the exit
 * code: 0 passed, 1 the listing was refused, 16 an old node is running,
 * 111 stopped, gave up after KEEP_GUARD_LIST_FAILURES failed listings, or
 * out of memory. */
int keep_upgmark_guard(const struct keep_upgmark *x);

/* upgrade-mark actors (ADR 0020 §6 "First acquisition"): mark each of the
 * nkeys actor keys (borrowed), or with all every actor found under
 * leases/, owners/, wal/ and snapshot/, or with neither the keys on stdin,
 * one a line; one `marked`, `held` or `error` line each. Returns the worst
 * exit code (keep_exit_worst): 0 marked, 1 held or refused, 17 a bad
 * object or segment key, 100 an invalid key or input line, 111 the store
 * failed for now. */
int keep_upgmark_actors(const struct keep_upgmark *x, char *const *keys, int nkeys, bool all);

/* upgrade-mark native (docs/upgrade.md "Native clusters"): run the cluster
 * object's machine (lib/core/cluster.h: never written over an old object,
 * a conflict read again at most KEEP_NATIVE_CONFLICTS_MAX times) and print
 * `native written_at_ms=W action=created|existing` or `refused reason=..`.
 * Returns the exit code: 0 native, 1 refused (old objects, upgraded, or
 * the store refused), 17 `cluster` is not a keep cluster object, 111 the
 * store failed for now, the create kept conflicting, or stdout is closed. */
int keep_upgmark_native(const struct keep_upgmark *x);

#endif
