/* keep — running the ownership machines on a node: their actions performed
 * on the node's state directory and a store (process glue; docs/design.md
 * "How a driver runs a machine").
 *
 * lib/core/acquire.h and lib/core/resolver.h decide; this file does what
 * they ask (ownio.h), with the real clocks, and hands the replies back.
 * cmd/owner-acquire.c and lib/driver/releaserun.c (owner-release) call the
 * two runners below; sim/ performs the same actions on its simulated bucket and files. */
#ifndef KEEP_OWNRUN_H
#define KEEP_OWNRUN_H

#include <signal.h>
#include <stdbool.h>

#include "../core/acquire.h"
#include "../core/acqwait.h"
#include "../core/ownio.h"
#include "../core/resolver.h"
#include "../local/config.h"
#include "../store/store.h"
#include "batch.h"
#include "ownstore.h"

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

/* ---- what owner-acquire and owner-release share (process glue) ---- */

struct keep_cli;
struct keep_metrics;
struct keep_reqstats;

/* One ownership command's context; copied per batch worker (each with its
 * own store). */
struct keep_owncmd {
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80]; /* state_dir/<node-id> */
	struct keep_store *store;	   /* this worker's store (borrowed) */
	int64_t store_timeout_ms;	   /* each store request's bound (ms) */
	void *extra;			   /* the command's own state (borrowed) */
	bool keep_absent; /* in: do not create the node's state directory when it never ran */
	bool never_ran;	  /* out: no lease state file in node_dir (no node ran here
			   * under this id and state directory: a mistyped
			   * --node-id or --state-dir, or a node not started yet) */
};

/* After the command's options: the configuration (a node id and a store
 * needed; --check answers and exits), the state directory, and nstores
 * (1..KEEP_BATCH_JOBS_MAX) store connections counted into stats, all into
 * x and stores[] (the caller's, closed with keep_owncmd_close). Sets
 * x->never_ran; the state directory's holds/, pending/ and locks/ are
 * created unless x->keep_absent was set and the node never ran. Exits with
 * the documented code on any failure. */
void keep_owncmd_setup(struct keep_owncmd *x, const struct keep_cli *cli,
		       struct keep_reqstats *stats, int nstores, struct keep_store **stores);

/* A node that never ran under this id and state directory (x->never_ran)
 * may hold nothing: one warning on stderr naming the node and the
 * directory and what to check (issue 27: a mistyped --node-id or
 * --state-dir gave a bare lease-not-valid and created the directory).
 * Prints nothing when it ran. */
void keep_owncmd_warn_never_ran(const struct keep_owncmd *x, const char *prog);

/* The answer for KEY on a node that never ran, without --wait: `refused
 * key=K reason=lease-not-valid` on stdout, nothing written anywhere;
 * returns KEEP_EXIT_NOT_LIVE (KEEP_EXIT_USAGE for an invalid key). */
int keep_acquire_never_ran(const char *prog, const char *key);

/* Keys on stdin (keep_batch_run): jobs workers, worker i with x's context
 * and stores[i] (stores[0] when jobs is 1). fn gets a struct keep_owncmd *.
 * Returns the batch's exit code. */
int keep_owncmd_batch(const struct keep_owncmd *x, int jobs, struct keep_store *const *stores,
		      int (*fn)(void *ctx, const char *key), const char *prog);

/* The keys of the command line (n operands at keys), one after another on
 * x's store; with none, keys on stdin (keep_owncmd_batch). Returns the
 * worst exit code (keep_exit_worst). */
int keep_owncmd_keys(const struct keep_owncmd *x, int n, char *const *keys, int jobs,
		     struct keep_store *const *stores, int (*fn)(void *ctx, const char *key),
		     const char *prog);

/* The resolver's configuration for mode from x: its timing and store
 * timeout, 32 jobs at once, per-entry backoff for FOLLOW and DRAIN. */
void keep_owncmd_resolver_cfg(const struct keep_owncmd *x, enum keep_res_mode mode,
			      struct keep_resolver_cfg *c);

/* A resolver event as its answer line (released, ended, pending, dropped,
 * none, error: docs/ownership.md); WARN and PASS events print nothing. */
void keep_res_event_line(const struct keep_res_event *ev);

/* The resolver's gauges after a pass, into m, then flushed: keep_holds,
 * keep_pending_releases, keep_unresolved_acquires (a listing of node_dir)
 * and the request counters of stats (docs/metrics.md). */
void keep_owncmd_gauges(const char *node_dir, struct keep_metrics *m,
			const struct keep_reqstats *stats);

/* --wait without a bound (owner-acquire, owner-run). */
#define KEEP_WAIT_FOREVER KEEP_ACQWAIT_FOREVER

/* Acquire key for x's node, waiting while it is held elsewhere or the
 * store fails for now (issues 15, 24; docs/ownership.md "Waiting for a
 * key"): run the acquisition machine (keep_acquire_run), then ask the wait
 * machine (lib/core/acqwait.h) whether and when to try again, with the boot
 * clock, the judging wall clock the acquisition judged with
 * (keep_judge_wall_ms) and a random value for the jitter; sleep on the boot
 * clock until then (steps of 100 ms: *stop, which may be NULL, ends the
 * wait) and run it again. wait_ms: 0 no wait, KEEP_WAIT_FOREVER no bound.
 * Prints, as the machine says, `waiting key=K node=N free_at_ms=T|-` (the
 * holder or its free time changed) or `retrying key=K reason=R code=C
 * in_ms=N` (a transient answer: one line each); the machine's warnings of
 * attempts that were not the last go to stderr as prog's. The last answer
 * stays in sm->res (its warnings in sm->msg) when the wait ends: acquired,
 * a definite answer, the deadline, or *stop. sm is initialised here. */
void keep_acquire_wait(struct keep_acquire *sm, const struct keep_owncmd *x, const char *key,
		       int64_t wait_ms, volatile sig_atomic_t *stop, const char *prog);

/* Print an acquisition's answer (ADR 0020 §3; docs/formats.md, owner-acquire's
 * lines): the machine's warnings to stderr as prog's (keep_warn), then one
 * line `acquired|held|unknown|refused|error key=K ...` on stdout. sm is
 * borrowed (its result in sm->res). Returns the answer's exit code
 * (sm->res.exit_code). Shared by owner-acquire and owner-run. */
int keep_acquire_answer(const char *prog, const struct keep_acquire *sm);

/* Close n stores opened by keep_owncmd_setup. */
void keep_owncmd_close(struct keep_store **stores, int n);

#endif
