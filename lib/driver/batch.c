/* keep — a stdin key batch on worker threads (see batch.h). */
#include "batch.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../base/exitcode.h"
#include "../platform/line.h"
#include "../platform/log.h"
#include "../platform/pool.h"

/* keep_die's line and exit (cli.h), without the dependency: cli.h uses
 * this module (KEEP_BATCH_JOBS_MAX) */
static void batch_die(const char *prog, const char *why) __attribute__((noreturn));
static void batch_die(const char *prog, const char *why)
{
	keep_log(KEEP_LOG_FATAL, prog, "%s", why);
	exit(KEEP_EXIT_TEMP);
}

#define QUEUE_MAX 64 /* keys read ahead of the workers */

_Static_assert(KEEP_BATCH_JOBS_MAX <= KEEP_POOL_MAX, "a batch's workers are the pool's");

struct batch {
	struct keep_pool pool; /* its lock guards q, head, n and worst */
	char *q[QUEUE_MAX];    /* owned keys */
	size_t head, n;
	int worst;
	int (*fn)(void *ctx, const char *key);
};

struct worker {
	struct batch *b;
	void *ctx; /* borrowed: the caller's */
	char *key; /* owned: the key being done */
};

/* The pool's take: the oldest key read (under the pool's lock). */
static bool take(void *queue, void *ctx)
{
	struct batch *b = queue;
	struct worker *w = ctx;

	if (!b->n)
		return false;
	w->key = b->q[b->head];
	b->head = (b->head + 1) % QUEUE_MAX;
	b->n--;
	return true;
}

/* The pool's run: one key. */
static void run(void *ctx)
{
	struct worker *w = ctx;
	struct batch *b = w->b;
	int rc = b->fn(w->ctx, w->key);

	free(w->key);
	w->key = NULL;
	keep_pool_lock(&b->pool);
	keep_exit_worst(&b->worst, rc);
	keep_pool_unlock(&b->pool);
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
	void *wctx[KEEP_BATCH_JOBS_MAX];
	struct batch b;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int i, started;

	if (jobs <= 1)
		return run_inline(in, ctxs[0], fn, prog);
	if (jobs > KEEP_BATCH_JOBS_MAX)
		jobs = KEEP_BATCH_JOBS_MAX;
	memset(&b, 0, sizeof(b));
	keep_pool_init(&b.pool);
	b.worst = KEEP_EXIT_OK;
	b.fn = fn;
	for (i = 0; i < jobs; i++) {
		w[i] = (struct worker){.b = &b, .ctx = ctxs[i]};
		wctx[i] = &w[i];
	}
	started = keep_pool_start(&b.pool, jobs, wctx, &b, take, run);
	if (!started)
		batch_die(prog, "unable to start a thread");
	if (started < jobs)
		keep_log(KEEP_LOG_WARNING, prog, "unable to start more threads: %d at once",
			 started);
	while ((n = getline(&line, &cap, in)) > 0) {
		const char *key;
		char *copy;
		int rc = line_key(line, n, &key, prog);

		if (!key) {
			keep_pool_lock(&b.pool);
			keep_exit_worst(&b.worst, rc);
			keep_pool_unlock(&b.pool);
			continue;
		}
		copy = strdup(key);
		if (!copy)
			batch_die(prog, "out of memory");
		keep_pool_lock(&b.pool);
		while (b.n == QUEUE_MAX)
			keep_pool_wait(&b.pool, 1000); /* a take signals room */
		b.q[(b.head + b.n) % QUEUE_MAX] = copy;
		b.n++;
		keep_pool_wake(&b.pool);
		keep_pool_unlock(&b.pool);
	}
	free(line);
	keep_pool_close(&b.pool);
	keep_pool_destroy(&b.pool);
	return b.worst;
}
