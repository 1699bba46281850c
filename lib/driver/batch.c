/* keep — a stdin key batch on worker threads (see batch.h). */
#include "batch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../base/exitcode.h"
#include "../platform/line.h"
#include "../platform/log.h"

/* keep_die's line and exit (cli.h), without the dependency: cli.h uses
 * this module (KEEP_BATCH_JOBS_MAX) */
static void batch_die(const char *prog, const char *why) __attribute__((noreturn));
static void batch_die(const char *prog, const char *why)
{
	keep_log(KEEP_LOG_FATAL, prog, "%s", why);
	exit(KEEP_EXIT_TEMP);
}

#define QUEUE_MAX 64 /* keys read ahead of the workers */

int keep_exit_rank(int code)
{
	switch (code) {
	case KEEP_EXIT_OK:
		return 0;
	case KEEP_EXIT_NO:
		return 1;
	case KEEP_EXIT_UNKNOWN:
		return 2;
	case KEEP_EXIT_TEMP:
		return 3;
	case KEEP_EXIT_BAD_OBJECT:
		return 5;
	case KEEP_EXIT_USAGE:
		return 6;
	default:
		return 4; /* the lease's codes */
	}
}

void keep_exit_worst(int *worst, int rc)
{
	if (keep_exit_rank(rc) > keep_exit_rank(*worst))
		*worst = rc;
}

struct batch {
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	char *q[QUEUE_MAX]; /* owned keys */
	size_t head, n;
	bool eof;
	int worst;
	int (*fn)(void *ctx, const char *key);
};

struct worker {
	pthread_t tid;
	void *ctx; /* borrowed */
	struct batch *b;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct batch *b = w->b;

	for (;;) {
		char *key;
		int rc;

		pthread_mutex_lock(&b->lock);
		while (!b->n && !b->eof)
			pthread_cond_wait(&b->more, &b->lock);
		if (!b->n) {
			pthread_mutex_unlock(&b->lock);
			return NULL;
		}
		key = b->q[b->head];
		b->head = (b->head + 1) % QUEUE_MAX;
		b->n--;
		pthread_cond_signal(&b->room);
		pthread_mutex_unlock(&b->lock);

		rc = b->fn(w->ctx, key);
		free(key);
		pthread_mutex_lock(&b->lock);
		keep_exit_worst(&b->worst, rc);
		pthread_mutex_unlock(&b->lock);
	}
}

/* One line (its newline cut): *key (borrowed from line), or NULL with the
 * exit code of a refused or empty line. */
static int line_key(char *line, ssize_t n, const char **key, const char *prog)
{
	*key = NULL;
	if (line[n - 1] == '\n')
		line[--n] = '\0';
	if (n == 0)
		return KEEP_EXIT_OK;
	if ((size_t)n > KEEP_LINE_MAX) {
		keep_log(KEEP_LOG_WARNING, prog, "input line too long");
		return KEEP_EXIT_USAGE;
	}
	if (memchr(line, '\0', (size_t)n)) {
		keep_log(KEEP_LOG_WARNING, prog, "input line with a NUL byte: refused");
		return KEEP_EXIT_USAGE;
	}
	*key = line;
	return KEEP_EXIT_OK;
}

static int run_inline(FILE *in, void *ctx, int (*fn)(void *, const char *), const char *prog)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int worst = KEEP_EXIT_OK;

	while ((n = getline(&line, &cap, in)) > 0) {
		const char *key;
		int rc = line_key(line, n, &key, prog);

		if (key)
			rc = fn(ctx, key);
		keep_exit_worst(&worst, rc);
	}
	free(line);
	return worst;
}

int keep_batch_run(FILE *in, int jobs, void *const *ctxs, int (*fn)(void *ctx, const char *key),
		   const char *prog)
{
	struct worker w[KEEP_BATCH_JOBS_MAX];
	struct batch b;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int i, started = 0;

	if (jobs <= 1)
		return run_inline(in, ctxs[0], fn, prog);
	if (jobs > KEEP_BATCH_JOBS_MAX)
		jobs = KEEP_BATCH_JOBS_MAX;
	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.more, NULL);
	pthread_cond_init(&b.room, NULL);
	b.worst = KEEP_EXIT_OK;
	b.fn = fn;
	for (i = 0; i < jobs; i++) {
		w[i].ctx = ctxs[i];
		w[i].b = &b;
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
			keep_log(KEEP_LOG_WARNING, prog, "unable to start more threads: %d at once",
				 started);
			break;
		}
		started++;
	}
	if (!started)
		batch_die(prog, "unable to start a thread");
	while ((n = getline(&line, &cap, in)) > 0) {
		const char *key;
		char *copy;
		int rc = line_key(line, n, &key, prog);

		if (!key) {
			pthread_mutex_lock(&b.lock);
			keep_exit_worst(&b.worst, rc);
			pthread_mutex_unlock(&b.lock);
			continue;
		}
		copy = strdup(key);
		if (!copy)
			batch_die(prog, "out of memory");
		pthread_mutex_lock(&b.lock);
		while (b.n == QUEUE_MAX)
			pthread_cond_wait(&b.room, &b.lock);
		b.q[(b.head + b.n) % QUEUE_MAX] = copy;
		b.n++;
		pthread_cond_signal(&b.more);
		pthread_mutex_unlock(&b.lock);
	}
	free(line);
	pthread_mutex_lock(&b.lock);
	b.eof = true;
	pthread_cond_broadcast(&b.more);
	pthread_mutex_unlock(&b.lock);
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	pthread_cond_destroy(&b.room);
	pthread_cond_destroy(&b.more);
	pthread_mutex_destroy(&b.lock);
	return b.worst;
}
