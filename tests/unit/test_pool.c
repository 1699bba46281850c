/* Unit tests: the one worker pool (lib/platform/pool.c), as the resolver,
 * lease-fence and stdin batches use it: a queue the caller owns, a context
 * per worker, a feeder that waits for room, and a close that drains. */
#include <stdlib.h>
#include <string.h>

#include "../../lib/platform/pool.h"
#include "unit.h"

#define JOBS 2000
#define ROOM 4 /* a small queue: the feeder waits for room often */

struct queue {
	int job[ROOM];
	size_t head, n;
	int done[JOBS]; /* under the pool's lock */
	struct keep_pool *pool;
};

struct worker {
	struct queue *q;
	int job;  /* the one taken */
	int runs; /* jobs this worker ran (its own: no lock) */
	int id;
};

static bool take(void *queue, void *ctx)
{
	struct queue *q = queue;
	struct worker *w = ctx;

	if (!q->n)
		return false;
	w->job = q->job[q->head];
	q->head = (q->head + 1) % ROOM;
	q->n--;
	return true;
}

static void run(void *ctx)
{
	struct worker *w = ctx;

	w->runs++;
	keep_pool_lock(w->q->pool);
	w->q->done[w->job]++;
	keep_pool_unlock(w->q->pool);
}

/* Feed JOBS jobs through a queue of ROOM on n workers; then close. */
static void feed(int n, struct worker *w, int *started)
{
	static struct keep_pool pool;
	static struct queue q;
	void *ctx[KEEP_POOL_MAX];

	memset(&q, 0, sizeof(q));
	keep_pool_init(&pool);
	q.pool = &pool;
	for (int i = 0; i < n && i < KEEP_POOL_MAX; i++) {
		w[i] = (struct worker){.q = &q, .id = i};
		ctx[i] = &w[i];
	}
	*started = keep_pool_start(&pool, n, ctx, &q, take, run);
	for (int j = 0; j < JOBS; j++) {
		keep_pool_lock(&pool);
		while (q.n == ROOM)
			keep_pool_wait(&pool, 1000);
		q.job[(q.head + q.n) % ROOM] = j;
		q.n++;
		keep_pool_wake(&pool);
		keep_pool_unlock(&pool);
	}
	keep_pool_close(&pool); /* what is queued still runs */
	keep_pool_destroy(&pool);
	for (int j = 0; j < JOBS; j++)
		if (q.done[j] != 1) {
			CHECK_EQ_INT(q.done[j], 1);
			break;
		}
	CHECK_EQ_INT(q.n, 0);
}

TEST(every_job_runs_once_on_the_worker_that_took_it)
{
	struct worker w[KEEP_POOL_MAX];
	int started, sum = 0;

	feed(8, w, &started);
	CHECK_EQ_INT(started, 8);
	for (int i = 0; i < started; i++)
		sum += w[i].runs;
	CHECK_EQ_INT(sum, JOBS);
}

TEST(one_worker_runs_every_job_in_order)
{
	struct worker w[KEEP_POOL_MAX];
	int started;

	feed(1, w, &started);
	CHECK_EQ_INT(started, 1);
	CHECK_EQ_INT(w[0].runs, JOBS);
	CHECK_EQ_INT(w[0].job, JOBS - 1); /* the last taken is the last fed */
}

TEST(more_workers_than_the_bound_are_cut_to_it)
{
	struct worker w[KEEP_POOL_MAX];
	int started;

	feed(KEEP_POOL_MAX + 5, w, &started);
	CHECK_EQ_INT(started, KEEP_POOL_MAX);
}

TEST(a_close_without_jobs_ends_idle_workers)
{
	struct keep_pool pool;
	struct queue q;
	struct worker w[3];
	void *ctx[3];

	memset(&q, 0, sizeof(q));
	keep_pool_init(&pool);
	q.pool = &pool;
	for (int i = 0; i < 3; i++) {
		w[i] = (struct worker){.q = &q, .id = i};
		ctx[i] = &w[i];
	}
	CHECK_EQ_INT(keep_pool_start(&pool, 3, ctx, &q, take, run), 3);
	keep_pool_close(&pool);
	CHECK_EQ_INT(pool.started, 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(w[i].runs, 0);
	keep_pool_destroy(&pool);
}

int main(void)
{
	RUN(every_job_runs_once_on_the_worker_that_took_it);
	RUN(one_worker_runs_every_job_in_order);
	RUN(more_workers_than_the_bound_are_cut_to_it);
	RUN(a_close_without_jobs_ends_idle_workers);
	return unit_done();
}
