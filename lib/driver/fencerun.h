/* keep — lease-fence's driver (ADR 0020 §2; docs/fencing.md): the fencer
 * machine (lib/core/fencer.h) run against the store and this node's lease
 * state file, one machine per stale line on KEEP_FENCE_CONCURRENCY
 * threads, each with a store handle of its own. Process glue: it reads the
 * clocks, performs the machine's actions and prints; it decides nothing.
 * One run per process (keep_fencerun_init). */
#ifndef KEEP_FENCERUN_H
#define KEEP_FENCERUN_H

#include <stdbool.h>

#include "../core/fencer.h"
#include "../local/config.h"
#include "../local/metrics.h"
#include "../platform/pool.h"
#include "../store/store.h"

struct keep_fencerun {
	const char *prog;		   /* diagnostics' program name (borrowed) */
	struct keep_config cfg;		   /* the caller fills it after init */
	char node_dir[KEEP_PATH_MAX + 80]; /* peer: STATE_DIR/ID */
	char boot_id[64];		   /* this boot (the lease state's deadlines) */
	struct keep_metrics metrics;	   /* the caller initialises it */
	struct keep_reqstats stats;	   /* every store handle's requests */
	struct keep_fencer_queue q;	   /* under pool.lock */
	struct keep_pool pool;		   /* the fence threads; its lock guards the metrics
					      and the queue; a not-yet retry waits on its
					      feeder condition */
};

/* Initialise f (caller-owned, lives until exit) as this process's run. */
void keep_fencerun_init(struct keep_fencerun *f, const char *prog);

/* lease-fence NODE: one operator fence of nodes/<node> on store s (create:
 * --create). Prints the answer line and the diagnostics; returns the exit
 * code (docs/exit-codes.md: 0 fenced, 1 refused, 17 bad object, 111). */
int keep_fencerun_operator(struct keep_store *s, const char *node, bool create);

/* lease-fence --stdin: read node-watch's lines from stdin until its end or
 * a stop signal, fencing on stores[0..KEEP_FENCE_CONCURRENCY) (one per
 * thread, borrowed); writes STATE_DIR/ID/fence once a heartbeat period.
 * Returns 0. */
int keep_fencerun_peer(struct keep_store **stores);

/* The request counters into the metrics, and the metrics file (call it
 * under f->pool.lock while threads run). */
void keep_fencerun_flush(void);

#endif
