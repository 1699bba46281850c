/* keep — owner-release's driver (ADR 0020 §1, §3, §4, §5;
 * docs/ownership.md): the resolver machine (lib/core/resolver.h) run by
 * keep_resolver_run (lib/driver/ownrun.c) for one KEY, one pass or a
 * follow of pending releases and unresolved acquires, or the drain, and
 * its events printed as answer lines (keep_res_event_line), progress and
 * warnings on stderr as rr->prog's. Process glue: the order of every step
 * is the resolver's. */
#ifndef KEEP_RELEASERUN_H
#define KEEP_RELEASERUN_H

#include <stdbool.h>
#include <stdint.h>

#include "../local/metrics.h"
#include "../store/store.h"
#include "ownrun.h"

/* owner-release's own state, pointed to by struct keep_owncmd's extra
 * (caller-owned, zeroed, prog set, for as long as x is used). */
struct keep_releaserun {
	const char *prog;		   /* diagnostics' program name (borrowed) */
	struct keep_metrics *metrics;	   /* --pending: the gauges after each pass */
	const struct keep_reqstats *stats; /* --pending: the request counters */
	int64_t deadline_mono_ms;	   /* --all: the drain's bound (boot ms) */
	int64_t next_say_mono_ms;	   /* --all: the next progress line (boot ms) */
};

/* owner-release KEY: release one hold now (each step within 1 s, then
 * parked as a pending release), on x's store. ctx is the worker's struct
 * keep_owncmd (borrowed; its extra a struct keep_releaserun): the shape of
 * keep_owncmd_keys' callback. Prints the resolver's lines; stops early on
 * SIGTERM/SIGINT (keep_stop_flag). Returns the exit code
 * (keep_resolver_exit_code; docs/exit-codes.md: 0, 1 no hold, 20 pending,
 * 111), 100 for an invalid key (nothing done, a warning). */
int keep_releaserun_key(void *ctx, const char *key);

/* owner-release --pending [--follow] (follow: a pass every heartbeat
 * period until SIGTERM/SIGINT): the resolver with nstores workers on
 * stores[] (borrowed). With follow the process owns the metrics textfile
 * (x->cfg.metrics_textfile) and writes its gauges and stats' request
 * counters after every pass. Returns the exit code
 * (keep_resolver_exit_code). */
int keep_releaserun_pending(struct keep_owncmd *x, bool follow, const struct keep_reqstats *stats,
			    struct keep_store *const *stores, int nstores);

/* owner-release --all, the drain (ADR 0020 §4): release every hold and
 * wait until nothing is pending, within wait_ms (ms; < 0: ttl + grace:
 * keep_resolver_drain_deadline_ms), not cut by a stop signal; warns first when no
 * node ever ran under this id and state directory (issue 27), says the
 * drain's progress on stderr once a period, and prints `drain pending=N`
 * last. Returns the exit code (0 nothing pending, 20 releases still
 * pending, 111). */
int keep_releaserun_drain(struct keep_owncmd *x, int64_t wait_ms, struct keep_store *const *stores,
			  int nstores);

#endif
