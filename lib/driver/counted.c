/* keep — the request-counting store wrapper (metrics.h keep_store_counted):
 * every operation is the inner store's, counted into a struct keep_reqstats.
 * Apart from metrics.c so that a command writing metrics links no store
 * (lease-status: docs/design.md "Layers"). It is also where a command backs
 * off from a throttling store (issue 28): lib/core/throttle.h decides the
 * delay, this driver sleeps it before the next request. */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "../core/throttle.h"

#include "../base/err.h"
#include "../local/metrics.h"
#include "../store/store.h"

/* The counting wrapper: a store whose every operation is the inner one's,
 * counted. */
struct counted {
	struct keep_store pub;
	struct keep_store *inner; /* owned */
	struct keep_reqstats *st; /* borrowed */
	int64_t throttled;	  /* throttled replies in a row (0: not throttled) */
};

static struct counted *counted_of(struct keep_store *s)
{
	return s->impl;
}

/* Sleep ms (a signal ends it early: the command reacts to it). */
static void nap_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	if (ms > 0)
		nanosleep(&ts, NULL);
}

/* The inner store, ready for the next request: after throttled replies,
 * the full-jitter backoff first (never more than half the call's bound,
 * which the request then keeps the rest of). */
static struct keep_store *inner_of(struct keep_store *s)
{
	struct counted *c = counted_of(s);
	int64_t bound = s->timeout_ms, wait = 0;
	uint64_t rnd = 0;

	if (c->throttled > 0) {
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			rnd = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
		wait = keep_throttle_backoff_ms(c->throttled, rnd, bound);
		nap_ms(wait);
		if (bound > 0)
			bound -= wait;
	}
	c->inner->timeout_ms = bound;
	keep_store_set_on_page(c->inner, s->on_page, s->on_page_arg);
	return c->inner;
}

static int count_rc(struct keep_store *s, enum keep_req_op op, int rc,
		    const struct keep_reply *reply)
{
	struct counted *c = counted_of(s);

	if (rc == 0) {
		keep_reqstats_add(c->st, op, reply->outcome);
		if (reply->throttled) {
			keep_reqstats_throttled(c->st, op);
			c->throttled++;
		} else {
			c->throttled = 0;
		}
	}
	return rc;
}

static int c_get(struct keep_store *s, const char *key, struct keep_buf *body,
		 struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_GET, in->ops->get(in, key, body, reply), reply);
}

static int c_head(struct keep_store *s, const char *key, struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_HEAD, in->ops->head(in, key, reply), reply);
}

static int c_put(struct keep_store *s, const char *key, const void *body, size_t len,
		 enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_PUT, in->ops->put(in, key, body, len, cond, if_match, reply),
			reply);
}

static int c_del(struct keep_store *s, const char *key, const char *if_match,
		 struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_DEL, in->ops->del(in, key, if_match, reply), reply);
}

static int c_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		  struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_LIST, in->ops->list(in, prefix, out, reply), reply);
}

static int c_put_meta(struct keep_store *s, const char *key, const void *body, size_t len,
		      enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
		      struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_PUT,
			keep_store_put_meta(in, key, body, len, cond, if_match, meta, reply),
			reply);
}

static int c_get_meta(struct keep_store *s, const char *key, struct keep_buf *body,
		      struct keep_meta *meta, struct keep_reply *reply)
{
	struct keep_store *in = inner_of(s);

	return count_rc(s, KEEP_REQ_GET, keep_store_get_meta(in, key, body, meta, reply), reply);
}

static void c_free(struct keep_store *s)
{
	struct counted *c = counted_of(s);

	keep_store_free(c->inner);
	free(c);
}

static const struct keep_store_ops counted_ops = {
    .name = "counted",
    .get = c_get,
    .head = c_head,
    .put = c_put,
    .del = c_del,
    .list = c_list,
    .free = c_free,
    .put_meta = c_put_meta,
    .get_meta = c_get_meta,
};

int keep_store_counted(struct keep_store *inner, struct keep_reqstats *st, struct keep_store **out)
{
	struct counted *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c) {
		keep_store_free(inner);
		return KEEP_ERR_NOMEM;
	}
	c->inner = inner;
	c->st = st;
	c->pub.ops = &counted_ops;
	c->pub.impl = c;
	c->pub.timeout_ms = inner->timeout_ms;
	*out = &c->pub;
	return 0;
}
