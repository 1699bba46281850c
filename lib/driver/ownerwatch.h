/* keep — owner-watch's driver (ADR 0020 §2, §3; docs/ownership.md
 * "Watching owners", docs/formats.md "owner-watch lines"): the decisions of
 * lib/core/watchlist.c run against the store. Every heartbeat period it
 * lists owners/PREFIX, reads a record only when its listed version token is
 * not the version of the body it holds (lib/core/listing.c, node-watch's
 * rule too), then lists nodes/ and reads the node object of each holder of
 * a watched record the same way (at most one read per node per pass), and
 * prints the events between this pass's view of each key and the last one.
 * --once is one pass that prints the `owner` lines or the table. Writes
 * nothing; the store calls are the shared ones (storecmd.h, ownstore.h).
 *
 * Process glue: it reads the clocks, performs the requests and prints;
 * the decisions are lib/core's. One run per process. */
#ifndef KEEP_OWNERWATCH_H
#define KEEP_OWNERWATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "../codec/ownerrec.h"
#include "../local/config.h"
#include "../local/metrics.h"
#include "../platform/line.h"
#include "../store/store.h"

struct keep_ownerwatch_rec;  /* one record as a pass left it (ownerwatch.c) */
struct keep_ownerwatch_node; /* a holder's node object as a pass left it */

/* owner-watch's run. The caller fills cfg, store, stats and fmt after
 * keep_ownerwatch_init, and the prefix with keep_ownerwatch_scope; the
 * rest is the driver's. */
struct keep_ownerwatch {
	const char *prog; /* diagnostics' program name (borrowed) */
	struct keep_config cfg;
	struct keep_store *store; /* owned: freed by keep_ownerwatch_release */
	struct keep_reqstats stats;
	enum keep_line_format fmt;
	const char *prefix;			   /* PREFIX ("" = all; borrowed) */
	char list_prefix[KEEP_OWNER_KEY_MAX + 16]; /* owners/ + PREFIX up to its last '/' */
	char want_prefix[KEEP_OWNER_KEY_MAX + 16]; /* owners/ + PREFIX */
	struct keep_ownerwatch_rec *recs;	   /* the last pass, sorted by key */
	size_t nrecs;
	struct keep_ownerwatch_node *nodes; /* the last pass's holders, sorted by node */
	size_t nnodes;
};

/* Initialise d (caller-owned, zeroed here) for program prog (borrowed). */
void keep_ownerwatch_init(struct keep_ownerwatch *d, const char *prog);

/* Watch the records owners/<prefix>... (prefix borrowed, "" every record;
 * a valid one, keep_owner_key_prefix_valid): the listing is of owners/ +
 * prefix up to its last '/', and only the keys that start with owners/ +
 * prefix and are valid actor keys are records (keep_watchlist_scope,
 * keep_watchlist_record; docs/ownership.md "Watching owners"). */
void keep_ownerwatch_scope(struct keep_ownerwatch *d, const char *prefix);

/* owner-watch --once: one pass that reads every record and holder, then
 * one `owner` line per record in d->fmt (table: the table for people).
 * Returns the exit code (docs/exit-codes.md): 0; a listing's
 * (keep_exit_of_reply: 1 refused, 111 for now); KEEP_EXIT_TEMP when stdout
 * is closed or a read failed; else 17 (KEEP_EXIT_BAD_OBJECT) when a record
 * is not ours or malformed. */
int keep_ownerwatch_once(struct keep_ownerwatch *d, bool table);

/* owner-watch --follow: a pass every heartbeat period (d->cfg.timing
 * period_ms, on the boot clock) until keep_stop_flag; the first pass
 * prints the `owner` lines and `synced keys=N`, each later one the events
 * since the last (keep_owner_watch_diff). A pass whose listing failed is
 * warned about and skipped (the last pass stays). Returns 0 when stopped
 * by a signal, KEEP_EXIT_TEMP when stdout closed. */
int keep_ownerwatch_follow(struct keep_ownerwatch *d);

/* Free what d holds: the last pass, the store. */
void keep_ownerwatch_release(struct keep_ownerwatch *d);

#endif
