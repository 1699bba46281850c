/* keep — progress lines while a store request waits (progress.h). */
#include "progress.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/err.h"
#include "../core/timing.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "cli.h"

struct progress {
	struct keep_store pub;
	struct keep_store *inner; /* owned */
	const char *prog;	  /* borrowed */
	int64_t period_ms, bound_ms;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* on CLOCK_MONOTONIC (keep_mono_timespec_after) */
	pthread_t tid;
	bool started, quit;
	/* the request in flight (under mu) */
	bool busy;
	uint64_t seq;
	int64_t since_mono_ms, shown, req_bound_ms;
	char what[320];
};

static struct progress *progress_of(struct keep_store *s)
{
	return s->impl;
}

/* The watcher: while a request is in flight, a line at each due time. */
static void *watch_main(void *arg)
{
	struct progress *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->quit) {
		struct timespec ts;
		int64_t due, now;

		if (!p->busy) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		due = keep_timing_progress_due_ms(p->since_mono_ms, p->period_ms, p->shown + 1);
		now = keep_boot_ms();
		if (now < due) {
			/* slices of at most 200 ms on the monotonic clock, each
			 * followed by a look at the boot clock (a suspend) */
			keep_mono_timespec_after(due - now < 200 ? due - now : 200, &ts);
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			continue;
		}
		p->shown++;
		if (p->req_bound_ms > 0)
			keep_info(p->prog,
				  "waiting for the store: %s (%lld s so far; a request gives up "
				  "after %lld s)",
				  p->what, (long long)((now - p->since_mono_ms) / 1000),
				  (long long)((p->req_bound_ms + 999) / 1000));
		else
			keep_info(p->prog, "waiting for the store: %s (%lld s so far)", p->what,
				  (long long)((now - p->since_mono_ms) / 1000));
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* A request begins: what it waits for (op and key, shown escaped). */
static struct keep_store *begin(struct keep_store *s, const char *op, const char *key)
{
	struct progress *p = progress_of(s);
	char shown[280];

	p->inner->timeout_ms = s->timeout_ms;
	keep_store_set_on_page(p->inner, s->on_page, s->on_page_arg);
	pthread_mutex_lock(&p->mu);
	if (!p->started) {
		/* the watcher takes no signal: a process-directed one (SIGCHLD,
		 * SIGTERM, a timer's) must reach the thread that waits for it
		 * (owner-run blocks them for its signalfd), never a helper with
		 * them unblocked, which would take it and drop it; it is
		 * created with every signal blocked, inherited from here */
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		p->started = pthread_create(&p->tid, NULL, watch_main, p) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	p->busy = true;
	p->seq++;
	p->shown = 0;
	p->since_mono_ms = keep_boot_ms();
	p->req_bound_ms = s->timeout_ms > 0 ? s->timeout_ms : p->bound_ms;
	snprintf(p->what, sizeof(p->what), "%s %s", op,
		 key && *key ? keep_line_escaped(key, shown, sizeof(shown)) : "(the bucket)");
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return p->inner;
}

static int end(struct keep_store *s, int rc)
{
	struct progress *p = progress_of(s);

	pthread_mutex_lock(&p->mu);
	p->busy = false;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return rc;
}

static int p_get(struct keep_store *s, const char *key, struct keep_buf *body,
		 struct keep_reply *reply)
{
	struct keep_store *in = begin(s, "GET", key);

	return end(s, in->ops->get(in, key, body, reply));
}

static int p_head(struct keep_store *s, const char *key, struct keep_reply *reply)
{
	struct keep_store *in = begin(s, "HEAD", key);

	return end(s, in->ops->head(in, key, reply));
}

static int p_put(struct keep_store *s, const char *key, const void *body, size_t len,
		 enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	struct keep_store *in = begin(s, "PUT", key);

	return end(s, in->ops->put(in, key, body, len, cond, if_match, reply));
}

/* the metadata calls pass through too (keep_store_put_meta and _get_meta
 * fall back to put and get only when a backend keeps no metadata) */
static int p_put_meta(struct keep_store *s, const char *key, const void *body, size_t len,
		      enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
		      struct keep_reply *reply)
{
	struct keep_store *in = begin(s, "PUT", key);

	return end(s, keep_store_put_meta(in, key, body, len, cond, if_match, meta, reply));
}

static int p_get_meta(struct keep_store *s, const char *key, struct keep_buf *body,
		      struct keep_meta *meta, struct keep_reply *reply)
{
	struct keep_store *in = begin(s, "GET", key);

	return end(s, keep_store_get_meta(in, key, body, meta, reply));
}

static int p_del(struct keep_store *s, const char *key, const char *if_match,
		 struct keep_reply *reply)
{
	struct keep_store *in = begin(s, "DELETE", key);

	return end(s, in->ops->del(in, key, if_match, reply));
}

static int p_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		  struct keep_reply *reply)
{
	char what[300];
	struct keep_store *in;

	snprintf(what, sizeof(what), "%s", prefix && *prefix ? prefix : "");
	in = begin(s, "LIST", what);
	return end(s, in->ops->list(in, prefix, out, reply));
}

static void p_free(struct keep_store *s)
{
	struct progress *p = progress_of(s);

	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->tid, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	keep_store_free(p->inner);
	free(p);
}

static const struct keep_store_ops progress_ops = {
    .name = "progress",
    .get = p_get,
    .head = p_head,
    .put = p_put,
    .del = p_del,
    .list = p_list,
    .free = p_free,
    .put_meta = p_put_meta,
    .get_meta = p_get_meta,
};

int keep_store_progress(struct keep_store *inner, const char *prog, int64_t period_ms,
			int64_t bound_ms, struct keep_store **out)
{
	struct progress *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	*out = NULL;
	if (!p) {
		keep_store_free(inner);
		return KEEP_ERR_NOMEM;
	}
	if (pthread_condattr_init(&ca) != 0) {
		free(p);
		*out = inner;
		return 0;
	}
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_mutex_init(&p->mu, NULL) != 0 || pthread_cond_init(&p->cv, &ca) != 0) {
		pthread_condattr_destroy(&ca);
		free(p);
		*out = inner;
		return 0;
	}
	pthread_condattr_destroy(&ca);
	p->inner = inner;
	p->prog = prog;
	p->period_ms = period_ms;
	p->bound_ms = bound_ms;
	p->pub.ops = &progress_ops;
	p->pub.impl = p;
	p->pub.timeout_ms = inner->timeout_ms;
	*out = &p->pub;
	return 0;
}
