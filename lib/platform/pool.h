/* keep — the one worker pool: threads that take jobs from a queue the
 * caller owns (the resolver's actions, lease-fence's fence queue, stdin key
 * batches; docs/design.md "Layers").
 *
 * The pool owns a lock and two condition variables; the queue and its
 * rules stay the caller's (for lease-fence, a lib/core machine: the pool
 * decides nothing about what runs next). Each worker has a context of its
 * own (for example its own store handle, so each keeps one connection
 * alive), which also holds the job it runs. A worker, with the lock held,
 * asks take() to move a job into its context; if there was one it calls
 * run() without the lock, then asks again; if there is
 * none it waits for keep_pool_wake() or keep_pool_close(). After each take
 * and each run it signals the feeder's condition (keep_pool_wait), so a
 * feeder waiting for room or for a reply wakes. */
#ifndef KEEP_POOL_H
#define KEEP_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEEP_POOL_MAX 32 /* workers at once */

struct keep_pool {
	pthread_mutex_t lock; /* the caller's queue is guarded by it too */
	pthread_cond_t work;  /* workers wait here for a job */
	pthread_cond_t feed;  /* the feeder waits here (CLOCK_MONOTONIC) */
	bool closing;
	/* Under lock: move one job from queue into the worker's context
	 * ctx; false when there is none now. */
	bool (*take)(void *queue, void *ctx);
	/* Without lock: do the job that take moved into ctx. */
	void (*run)(void *ctx);
	void *queue; /* borrowed */
	int started;
	pthread_t tid[KEEP_POOL_MAX];
	struct keep_pool_worker {
		struct keep_pool *pool;
		void *ctx; /* borrowed */
	} w[KEEP_POOL_MAX];
};

/* Set up p (lock and conditions) without threads: the caller may use the
 * lock at once and start the workers later. */
void keep_pool_init(struct keep_pool *p);

/* Start n workers (1..KEEP_POOL_MAX; more are cut to KEEP_POOL_MAX), the
 * i-th with ctxs[i] (borrowed, must outlive the pool), taking jobs from
 * queue with take and doing them with run. Returns the number of threads
 * started (fewer than n when the system refuses more; 0: none at all, and
 * the caller runs the jobs itself). */
int keep_pool_start(struct keep_pool *p, int n, void *const *ctxs, void *queue,
		    bool (*take)(void *queue, void *ctx), void (*run)(void *ctx));

void keep_pool_lock(struct keep_pool *p);
void keep_pool_unlock(struct keep_pool *p);

/* Under lock: a job was queued; one waiting worker wakes. */
void keep_pool_wake(struct keep_pool *p);

/* Under lock: wait on the feeder's condition at most ms (>= 1 ms; a
 * signal, a take, a finished job or keep_pool_close wakes it earlier).
 * The caller re-checks its own condition and deadline after each return. */
void keep_pool_wait(struct keep_pool *p, int64_t ms);

/* Without lock: no more jobs will come. Workers take what is queued, then
 * end; returns once every worker ended. */
void keep_pool_close(struct keep_pool *p);

/* After keep_pool_close (or when no worker was started): free the lock and
 * conditions. */
void keep_pool_destroy(struct keep_pool *p);

#endif
