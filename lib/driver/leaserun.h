/* keep — lease-write's driver (ADR 0020 §1, §4, §5; docs/lease.md): the
 * node lease machine (lib/core/lease.h) run against the store, the clocks
 * and the node's lease state file (state_dir/<id>/lease), which it keeps
 * for every other command of the node. Process glue: it reads the clocks,
 * performs the machine's actions (GET and PUT of nodes/<id>, the probes
 * and signals of the node's jobs, the wait for `go` on --go-fd), writes
 * the state file, prints the machine's events and their diagnostics, and
 * keeps the metrics; the decisions are the machine's.
 *
 * The clean stop (SIGTERM/SIGINT): keep_leaserun_init blocks both in the
 * calling thread, so in every thread created after it; one thread of the
 * run takes them (sigwait), marks the state file `stopping` at once, even
 * while the main loop waits on a renewal in flight (docs/lease.md "Clean
 * stop"), and wakes the main loop with SIGUSR1.
 *
 * One run per process: leaserun.c (the run) and leaseevent.c (one event's
 * line, diagnostic and counter). */
#ifndef KEEP_LEASERUN_H
#define KEEP_LEASERUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/lease.h"
#include "../core/leasestate.h"
#include "../local/config.h"
#include "../local/metrics.h"
#include "../store/store.h"

struct keep_leaserun {
	const char *prog;		   /* diagnostics' program name (borrowed) */
	struct keep_config cfg;		   /* the caller loads it after init */
	bool verbose;			   /* -v: print every renewal and start-check read */
	int go_fd;			   /* --go-fd, or -1 (the caller sets it) */
	char node_dir[KEEP_PATH_MAX + 80]; /* STATE_DIR/ID (keep_leaserun_open) */
	char key[KEEP_NODE_ID_MAX + 8];	   /* nodes/ID */
	char boot_id[64];		   /* this boot (the state file's deadlines) */
	struct keep_store *store;	   /* owned by the run */
	struct keep_lease sm;		   /* the machine */
	struct keep_metrics metrics;	   /* the node's textfile */
	pthread_t main_thread;		   /* the thread SIGUSR1 wakes */
	struct keep_lease_state saved;	   /* the last state written (under the state lock) */
	bool have_saved;
	bool go_waited;	 /* the info line of the wait for `go` was printed */
	char go_buf[64]; /* a partial line read from go_fd */
	size_t go_len;
	bool sd_failing; /* the last state write failed (warned once a run of them) */
	int sd_errno;	 /* its errno */
	struct keep_lease_event last_read; /* the last start-check read (its line) */
	int64_t check_left_s;		   /* the last start-check progress line's seconds, or -1 */
};

/* Initialise d (caller-owned, lives until exit) as this process's run,
 * named prog (borrowed, static). Blocks SIGTERM and SIGINT in the calling
 * thread, so in every thread created later (a store's too): only the
 * run's signal thread takes them, and one sent before it starts waits.
 * Call it first thing in main, before keep_supervised_start and before any
 * thread. Never fails. */
void keep_leaserun_init(struct keep_leaserun *d, const char *prog);

/* The node's state directory (created) and its lock, once d->cfg is
 * loaded and checked (node id, state directory): STATE_DIR/ID/lease.lock
 * is taken for the life of the process, so one lease-write runs per node
 * per state directory (a twin on this machine never touches the shared
 * state file); d->node_dir, d->key, d->boot_id filled. clear_offset:
 * --clear-clock-offset (its own message when a lease-write runs). Exits
 * the process on failure: 100 (a path too long), 11 (the lock is held:
 * another lease-write of the node runs), 111 (a directory or the lock
 * cannot be created). */
void keep_leaserun_open(struct keep_leaserun *d, bool clear_offset);

/* lease-write --clear-clock-offset (after keep_leaserun_open: no
 * lease-write of the node runs): the state file's judging offset set to 0
 * and its clock base to now (keep_lease_state_clear_offset; docs/lease.md
 * "Judging others after a step"); prints `clock-offset node=ID
 * was_ms=N` (the offset before, ms; 0 without a state file). Returns 0;
 * exits 111 when the file cannot be read or written. */
int keep_leaserun_clear_clock_offset(struct keep_leaserun *d);

/* Hold the node lease until the machine is done (after keep_leaserun_open):
 * the metrics, the store, a new instance, the machine (the node's jobs
 * guarded, the first write held for `go` when d->go_fd >= 0, the judging
 * offset of an earlier lease-write carried), the signal thread, then the
 * loop of docs/design.md "How a driver runs a machine", the state file
 * written before each action is performed and each event printed. Returns
 * the exit code (keep_lease_exit_code; docs/exit-codes.md: 0 stopped, 10
 * fenced, 11 twin, 12 released by another, 13 removed, 16 old format, 17
 * not a keep object, 22 a job outlived its SIGKILL, 111 store or state
 * file unusable, release unconfirmed); exits 100 or 111 on a setup
 * failure (the store, the instance, the signal thread). Call once. */
int keep_leaserun_run(struct keep_leaserun *d);

/* ---- leaseevent.c: one event of the machine ---- */

/* One event e of d->sm, polled at now_mono_ms (boot clock, ms): its line
 * on stdout (`renewed`, and a start-check read that saw nothing new, only
 * with -v), its warning or fatal line on stderr, its counter in d->metrics
 * (not flushed). The state file must already say what e announces. e
 * borrowed. */
void keep_leaserun_event(struct keep_leaserun *d, const struct keep_lease_event *e,
			 int64_t now_mono_ms);

#endif
