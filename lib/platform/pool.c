/* keep — the one worker pool (see pool.h). */
#include "pool.h"

#include <string.h>
#include <time.h>

#include "clock.h"

void keep_pool_init(struct keep_pool *p)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* keep_mono_timespec_after */
	pthread_cond_init(&p->feed, &ca);
	pthread_condattr_destroy(&ca);
}

static void *worker_main(void *arg)
{
	struct keep_pool_worker *w = arg;
	struct keep_pool *p = w->pool;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->take(p->queue, w->ctx)) {
			pthread_cond_signal(&p->feed); /* room in the queue */
			pthread_mutex_unlock(&p->lock);
			p->run(w->ctx);
			pthread_mutex_lock(&p->lock);
			pthread_cond_signal(&p->feed); /* a job done */
			continue;
		}
		if (p->closing)
			break;
		pthread_cond_wait(&p->work, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int keep_pool_start(struct keep_pool *p, int n, void *const *ctxs, void *queue,
		    bool (*take)(void *queue, void *ctx), void (*run)(void *ctx))
{
	if (n > KEEP_POOL_MAX)
		n = KEEP_POOL_MAX;
	p->take = take;
	p->run = run;
	p->queue = queue;
	for (int i = 0; i < n; i++) {
		p->w[i].pool = p;
		p->w[i].ctx = ctxs[i];
		if (pthread_create(&p->tid[i], NULL, worker_main, &p->w[i]) != 0)
			break;
		p->started++;
	}
	return p->started;
}

void keep_pool_lock(struct keep_pool *p)
{
	pthread_mutex_lock(&p->lock);
}

void keep_pool_unlock(struct keep_pool *p)
{
	pthread_mutex_unlock(&p->lock);
}

void keep_pool_wake(struct keep_pool *p)
{
	pthread_cond_signal(&p->work);
}

void keep_pool_wait(struct keep_pool *p, int64_t ms)
{
	struct timespec ts;

	keep_mono_timespec_after(ms < 1 ? 1 : ms, &ts);
	pthread_cond_timedwait(&p->feed, &p->lock, &ts);
}

void keep_pool_close(struct keep_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_cond_broadcast(&p->work);
	pthread_cond_broadcast(&p->feed);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->started; i++)
		pthread_join(p->tid[i], NULL);
	p->started = 0;
}

void keep_pool_destroy(struct keep_pool *p)
{
	pthread_cond_destroy(&p->feed);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
}
