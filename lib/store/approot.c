/* keep — an application's root (ADR 0022, docs/ownership.md "Several
 * applications on one cluster"): a store wrapper under which the ownership
 * keys of one application live at apps/ROOT/..., `nodes/` and the cluster
 * object shared (keep_store_app_root); which key is which is the core's
 * rule (lib/core/cluster.h keep_cluster_app_root_key). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../core/cluster.h"
#include "store.h"

struct approot {
	struct keep_store pub;
	struct keep_store *inner; /* owned */
	char root[KEEP_APP_ROOT_MAX + 1];
	char top[KEEP_APP_ROOT_MAX + 8]; /* "apps/ROOT/" */
	size_t toplen;
};

static struct approot *approot_of(struct keep_store *s)
{
	return s->impl;
}

static struct keep_store *inner_of(struct keep_store *s)
{
	struct approot *a = approot_of(s);

	a->inner->timeout_ms = s->timeout_ms;
	keep_store_set_on_page(a->inner, s->on_page, s->on_page_arg);
	return a->inner;
}

/* The inner store's key of key into out (KEEP_KEY_MAX + 1 bytes): 0, or
 * KEEP_ERR_INVAL (too long once under the root) with reply set REFUSED. */
static int map(struct keep_store *s, const char *key, char *out, struct keep_reply *reply)
{
	struct approot *a = approot_of(s);

	if (keep_cluster_app_root_key(a->root, key, out, KEEP_KEY_MAX + 1) != 0) {
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "key too long under %s", a->top);
		return KEEP_ERR_INVAL;
	}
	return 0;
}

static int r_get(struct keep_store *s, const char *key, struct keep_buf *body,
		 struct keep_reply *reply)
{
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	int rc = map(s, key, k, reply);

	return rc ? rc : in->ops->get(in, k, body, reply);
}

static int r_head(struct keep_store *s, const char *key, struct keep_reply *reply)
{
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	int rc = map(s, key, k, reply);

	return rc ? rc : in->ops->head(in, k, reply);
}

static int r_put(struct keep_store *s, const char *key, const void *body, size_t len,
		 enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	int rc = map(s, key, k, reply);

	return rc ? rc : in->ops->put(in, k, body, len, cond, if_match, reply);
}

static int r_del(struct keep_store *s, const char *key, const char *if_match,
		 struct keep_reply *reply)
{
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	int rc = map(s, key, k, reply);

	return rc ? rc : in->ops->del(in, k, if_match, reply);
}

/* A listing under the root: the inner listing's keys with "apps/ROOT/" cut
 * off, so that the callers see the keys they asked for. */
static int r_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		  struct keep_reply *reply)
{
	struct approot *a = approot_of(s);
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	struct keep_list l;
	size_t i;
	int rc = map(s, prefix, k, reply);

	if (rc || keep_cluster_key_shared(prefix))
		return rc ? rc : in->ops->list(in, k, out, reply);
	keep_list_init(&l);
	rc = in->ops->list(in, k, &l, reply);
	for (i = 0; rc == 0 && i < l.n; i++) {
		if (strncmp(l.v[i].key, a->top, a->toplen) != 0) {
			keep_list_skip(&l, l.v[i].key, strlen(l.v[i].key), "not under the root");
			continue;
		}
		if (keep_list_add(out, l.v[i].key + a->toplen, l.v[i].version) != 0) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "out of memory");
			rc = KEEP_ERR_NOMEM;
		}
	}
	keep_list_merge_skipped(out, &l);
	keep_list_release(&l);
	return rc;
}

static int r_put_meta(struct keep_store *s, const char *key, const void *body, size_t len,
		      enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
		      struct keep_reply *reply)
{
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	int rc = map(s, key, k, reply);

	return rc ? rc : keep_store_put_meta(in, k, body, len, cond, if_match, meta, reply);
}

static int r_get_meta(struct keep_store *s, const char *key, struct keep_buf *body,
		      struct keep_meta *meta, struct keep_reply *reply)
{
	char k[KEEP_KEY_MAX + 1];
	struct keep_store *in = inner_of(s);
	int rc = map(s, key, k, reply);

	return rc ? rc : keep_store_get_meta(in, k, body, meta, reply);
}

static void r_free(struct keep_store *s)
{
	struct approot *a = approot_of(s);

	keep_store_free(a->inner);
	free(a);
}

static const struct keep_store_ops approot_ops = {
    .name = "approot",
    .get = r_get,
    .head = r_head,
    .put = r_put,
    .del = r_del,
    .list = r_list,
    .free = r_free,
    .put_meta = r_put_meta,
    .get_meta = r_get_meta,
};

int keep_store_app_root(struct keep_store *inner, const char *root, struct keep_store **out)
{
	struct approot *a;

	*out = NULL;
	if (!keep_app_root_valid(root)) {
		keep_store_free(inner);
		return KEEP_ERR_INVAL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		keep_store_free(inner);
		return KEEP_ERR_NOMEM;
	}
	a->inner = inner;
	snprintf(a->root, sizeof(a->root), "%s", root);
	a->toplen = (size_t)snprintf(a->top, sizeof(a->top), "apps/%s/", root);
	a->pub.ops = &approot_ops;
	a->pub.impl = a;
	a->pub.timeout_ms = inner->timeout_ms;
	*out = &a->pub;
	return 0;
}
