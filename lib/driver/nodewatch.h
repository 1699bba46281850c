/* keep — node-watch's driver (ADR 0020 §2, §6; docs/fencing.md): the watch
 * of lib/core/fence.c and its schedule (lib/core/listing.c) run against the
 * store and this node's lease state file. Every heartbeat period it lists
 * nodes/ and reads only the bodies lib/core/listing.c says it needs, reads
 * this node's lease state file, feeds the pass to the watch and prints its
 * events (the `stale` line through lib/driver/staleline.c); between
 * listings it wakes when a watch bound passes (a tick) or, in ring mode,
 * reads the successors the watch names. It keeps the watch state file
 * STATE_DIR/ID/watch (readiness, docs/formats.md "The watch state") and
 * the metrics (docs/metrics.md). --once is one pass that reads every body
 * and prints one status line (or a table row) per node.
 *
 * Process glue: it reads the clocks, performs the requests, writes the
 * files and prints; the decisions are lib/core's. One run per process. */
#ifndef KEEP_NODEWATCH_H
#define KEEP_NODEWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../codec/nodeobj.h"
#include "../core/listing.h"
#include "../local/config.h"
#include "../local/metrics.h"
#include "../platform/line.h"
#include "../store/store.h"

/* One node listed by a pass, and what is known of its body. */
struct keep_nodewatch_seen {
	char node[KEEP_NODE_ID_MAX + 1];
	char listed[KEEP_VERSION_MAX];	     /* the version token this pass's listing showed */
	char body_version[KEEP_VERSION_MAX]; /* the GET's version of obj ("" if none) */
	enum keep_outcome outcome;	     /* of the last GET */
	bool decoded;
	bool wrote;    /* not read this pass: the listed token changed (a write landed) */
	int read_exit; /* the failed GET's exit code (keep_exit_of_reply), or 0 */
	struct keep_node_obj obj;
	char why[160]; /* unreadable: why */
};

/* node-watch's run. The caller fills cfg, store, stats, metrics, node_dir,
 * boot_id and fmt after keep_nodewatch_init; the rest is the driver's. */
struct keep_nodewatch {
	const char *prog; /* diagnostics' program name (borrowed) */
	struct keep_config cfg;
	struct keep_store *store; /* owned: freed by keep_nodewatch_release */
	struct keep_reqstats stats;
	struct keep_metrics metrics;	      /* released by keep_nodewatch_release */
	char node_dir[KEEP_PATH_MAX + 80];    /* STATE_DIR/ID; "" without a node id */
	char boot_id[64];		      /* this boot (the lease state's deadlines) */
	enum keep_line_format fmt;	      /* of the --once status lines */
	struct keep_nodewatch_seen *v, *prev; /* this pass, the last pass (sorted by node) */
	size_t n, alloc, nprev, prevalloc;
	/* --follow: the schedule and the health of the listings, for
	 * readiness: the state file STATE_DIR/ID/watch is rewritten on every
	 * change of health, and at least once per heartbeat period as
	 * node-watch's heartbeat (updated_mono_ms: docs/formats.md "The watch
	 * state") */
	struct keep_watch_sched sched;
	bool health_said;     /* the health of the first listing was taken in */
	int state_errno;      /* the errno of the failing watch state write; 0: written */
	bool beating;	      /* --follow: the watch state is the heartbeat */
	int64_t beat_mono_ms; /* the watch state's last write (boot clock), 0: none yet */
	char last_failure[KEEP_DETAIL_MAX + 32];
	char skipped_seen[KEEP_LIST_SKIP_TEXT + 32]; /* last skip set warned about */
};

/* Initialise d (caller-owned, zeroed here) for program prog (borrowed). */
void keep_nodewatch_init(struct keep_nodewatch *d, const char *prog);

/* The store's listing progress hook (keep_store_set_on_page; arg: the
 * struct keep_nodewatch, borrowed): a listing of nodes/ in many pages
 * (1000 nodes a page on s3) rewrites the watch state between them once a
 * heartbeat period (ms) has passed since its last write, so that one
 * listing longer than the agent's bound (3 periods + the attempt timeout,
 * agent/keep-agent check_progress) is not taken for a stuck node-watch
 * (docs/fencing.md). Beats only in --follow. */
void keep_nodewatch_on_page(void *arg, size_t pages);

/* node-watch --once (cluster status, docs/fencing.md): list nodes/, read
 * every body, print one `node` line per node in d->fmt (table: the table
 * for people), flush the metrics. Returns the exit code
 * (docs/exit-codes.md): 0; the listing's (keep_exit_of_reply: 1 refused,
 * 111 for now); KEEP_EXIT_TEMP when stdout is closed; else the worst of
 * the failed reads' codes. */
int keep_nodewatch_once(struct keep_nodewatch *d, bool table);

/* node-watch --follow (ADR 0020 §2; docs/fencing.md "When a candidate
 * goes", "Ring mode", "Choosing the mode"): run the watch in d->cfg's
 * watch mode (full, ring, auto) until keep_stop_flag, printing its events
 * (join, change, leave, stale) on stdout, writing the watch state file
 * and the metrics. Returns 0 when stopped by a signal, KEEP_EXIT_TEMP when
 * stdout closed or memory ran out. */
int keep_nodewatch_follow(struct keep_nodewatch *d);

/* Free what d holds: the passes, the store, the metrics. */
void keep_nodewatch_release(struct keep_nodewatch *d);

#endif
