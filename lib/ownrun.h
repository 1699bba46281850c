/* keep — running the ownership machines on a node: their actions performed
 * on the node's state directory and a store (process glue; docs/design.md
 * "How a driver runs a machine").
 *
 * lib/core/acquire.h and lib/core/resolver.h decide; this file does what
 * they ask (ownio.h), with the real clocks, and hands the replies back.
 * cmd/owner-acquire.c and cmd/owner-release.c call the two runners below;
 * sim/ performs the same actions on its simulated bucket and files. */
#ifndef KEEP_OWNRUN_H
#define KEEP_OWNRUN_H

#include <signal.h>
#include <stdbool.h>

#include "core/acquire.h"
#include "core/ownio.h"
#include "core/resolver.h"
#include "store/store.h"

/* Where actions go: the node's state directory (state_dir/<node-id>,
 * borrowed) and a store handle (borrowed; one per thread). */
struct keep_ownio {
	const char *node_dir;
	struct keep_store *store;
};

/* Perform act with io. *lock_fd is the slot's per-actor lock (LOCK stores
 * the descriptor there, UNLOCK closes it; -1 when none). *r is zeroed and
 * filled; a LIST reply's arrays are allocated here: free them with
 * keep_ownio_reply_release after the machine has seen the reply. Store
 * requests are bounded by act->timeout_ms. */
void keep_ownio_perform(const struct keep_ownio *io, int *lock_fd, const struct keep_oact *act,
			struct keep_oreply *r);
void keep_ownio_reply_release(struct keep_oreply *r);

/* Run one acquisition to its end with io (keys are handled one after
 * another per thread: this runs in the caller's thread). sm must be
 * initialised (keep_acquire_init); its result is in sm->res. */
void keep_acquire_run(struct keep_acquire *sm, const struct keep_ownio *io);

/* Called for every event of the resolver (under the runner's lock: events
 * come one at a time). */
typedef void (*keep_res_event_fn)(void *ctx, const struct keep_res_event *ev);

/* Run the resolver r to DONE. workers: how many threads perform actions at
 * once (1: the calling thread; up to KEEP_PENDING_CONCURRENCY), each with
 * its own store handle stores[i] (borrowed; stores[0] when workers is 1).
 * stop: when it becomes non-zero (a signal), keep_resolver_stop is called
 * (NULL: never). Dies with exit 111 when no thread can be started at all. */
void keep_resolver_run(struct keep_resolver *r, const char *node_dir,
		       struct keep_store *const *stores, int workers, volatile sig_atomic_t *stop,
		       keep_res_event_fn fn, void *ctx);

#endif
