/* keep — store dispatch, key validation, listings (docs/store.md). */
#include "store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../platform/line.h"

void keep_reply_set(struct keep_reply *r, enum keep_outcome o, int status, const char *fmt, ...)
{
	va_list ap;

	r->outcome = o;
	r->status = status;
	r->version[0] = '\0';
	r->detail[0] = '\0';
	r->not_ours = false;
	r->throttled = false;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
		va_end(ap);
	}
}

void keep_list_init(struct keep_list *l)
{
	memset(l, 0, sizeof(*l));
}

void keep_list_skip(struct keep_list *l, const void *key, size_t keylen, const char *why)
{
	struct keep_list_skip *k;
	struct keep_buf b;

	if (l->nskipped++ >= KEEP_LIST_SKIP_NAMED)
		return;
	k = &l->skipped[l->nskipped - 1];
	snprintf(k->why, sizeof(k->why), "%s", why ? why : "-");
	/* escape at most what can show: 4 output bytes per input byte */
	keep_buf_init(&b, 4 * KEEP_LIST_SKIP_TEXT + 8);
	if (keep_line_value(&b, key, keylen < KEEP_LIST_SKIP_TEXT ? keylen : KEEP_LIST_SKIP_TEXT) ==
	    0) {
		if (b.len < sizeof(k->key) && keylen < KEEP_LIST_SKIP_TEXT)
			memcpy(k->key, b.data, b.len + 1);
		else
			snprintf(k->key, sizeof(k->key), "%.*s...", (int)(sizeof(k->key) - 4),
				 b.data);
	} else {
		snprintf(k->key, sizeof(k->key), "(unprintable)");
	}
	keep_buf_release(&b);
}

void keep_list_merge_skipped(struct keep_list *dst, struct keep_list *src)
{
	size_t i,
	    named = src->nskipped < KEEP_LIST_SKIP_NAMED ? src->nskipped : KEEP_LIST_SKIP_NAMED;

	for (i = 0; i < named; i++)
		if (dst->nskipped + i < KEEP_LIST_SKIP_NAMED)
			dst->skipped[dst->nskipped + i] = src->skipped[i];
	dst->nskipped += src->nskipped;
	src->nskipped = 0;
}

void keep_list_release(struct keep_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].key);
	free(l->v);
	keep_list_init(l);
}

int keep_list_add(struct keep_list *l, const char *key, const char *version)
{
	struct keep_list_entry *e;

	if (l->n >= KEEP_LIST_MAX)
		return KEEP_ERR_TOOBIG;
	if (strlen(version) >= KEEP_VERSION_MAX)
		return KEEP_ERR_TOOBIG;
	if (l->n == l->alloc) {
		size_t n = l->alloc ? l->alloc * 2 : 16;
		e = realloc(l->v, n * sizeof(*e));
		if (!e)
			return KEEP_ERR_NOMEM;
		l->v = e;
		l->alloc = n;
	}
	e = &l->v[l->n];
	e->key = strdup(key);
	if (!e->key)
		return KEEP_ERR_NOMEM;
	memcpy(e->version, version, strlen(version) + 1);
	l->n++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct keep_list_entry *)a)->key,
		      ((const struct keep_list_entry *)b)->key);
}

void keep_list_sort(struct keep_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_entry);
}

int keep_store_open(const char *url, const struct keep_store_opts *opts, struct keep_store **out,
		    char *err, size_t errlen)
{
	static const struct keep_store_opts none;
	int rc;

	if (!opts)
		opts = &none;
	*out = NULL;
	rc = keep_store_url_check(url, err, errlen);
	if (rc)
		return rc;
	if (strncmp(url, "file://", 7) == 0)
		rc = keep_store_fs_open(url + 7, opts, out, err, errlen);
	else
		rc = keep_store_s3_open(url + 5, opts, out, err, errlen);
	if (rc)
		return rc;
	(*out)->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 10000;
#ifdef KEEP_FAULT_INJECTION
	{
		const char *path = getenv("KEEP_FAULT_FILE");
		if (path && *path) {
			struct keep_store *w;
			rc = keep_store_fault_wrap(*out, path, &w, err, errlen);
			if (rc) {
				*out = NULL; /* the wrapper freed inner on failure */
				return rc;
			}
			*out = w;
		}
	}
#endif
	return 0;
}

void keep_store_free(struct keep_store *s)
{
	if (s)
		s->ops->free(s);
}

void keep_store_set_timeout(struct keep_store *s, int64_t timeout_ms)
{
	if (timeout_ms > 0)
		s->timeout_ms = timeout_ms;
}

void keep_store_set_on_page(struct keep_store *s, keep_store_on_page_fn fn, void *arg)
{
	s->on_page = fn;
	s->on_page_arg = fn ? arg : NULL;
}

/* A local refusal (rc < 0): nothing was sent; the reply says so. */
static int refused_locally(int rc, struct keep_reply *reply)
{
	if (rc < 0)
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "not sent: %s", keep_strerror(rc));
	return rc;
}

int keep_store_get(struct keep_store *s, const char *key, struct keep_buf *body,
		   struct keep_reply *reply)
{
	if (!keep_key_valid(key))
		return refused_locally(KEEP_ERR_INVAL, reply);
	return refused_locally(s->ops->get(s, key, body, reply), reply);
}

int keep_store_head(struct keep_store *s, const char *key, struct keep_reply *reply)
{
	if (!keep_key_valid(key))
		return refused_locally(KEEP_ERR_INVAL, reply);
	return refused_locally(s->ops->head(s, key, reply), reply);
}

int keep_store_put(struct keep_store *s, const char *key, const void *body, size_t len,
		   enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	if (!keep_key_valid(key) || len > KEEP_BODY_MAX)
		return refused_locally(KEEP_ERR_INVAL, reply);
	if (cond == KEEP_COND_IF_MATCH && (!if_match || !*if_match))
		return refused_locally(KEEP_ERR_INVAL, reply);
	return refused_locally(s->ops->put(s, key, body, len, cond, if_match, reply), reply);
}

int keep_store_del(struct keep_store *s, const char *key, const char *if_match,
		   struct keep_reply *reply)
{
	if (!keep_key_valid(key))
		return refused_locally(KEEP_ERR_INVAL, reply);
	return refused_locally(s->ops->del(s, key, if_match, reply), reply);
}

int keep_store_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		    struct keep_reply *reply)
{
	if (!keep_prefix_valid(prefix))
		return refused_locally(KEEP_ERR_INVAL, reply);
	return refused_locally(s->ops->list(s, prefix, out, reply), reply);
}

void keep_meta_init(struct keep_meta *m)
{
	memset(m, 0, sizeof(*m));
}

static bool meta_name_ok(const char *n)
{
	size_t i, len = strnlen(n, KEEP_META_NAME_MAX);

	if (len == 0 || len >= KEEP_META_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-'))
			return false;
	return true;
}

static bool meta_value_ok(const char *v)
{
	size_t i, len = strnlen(v, KEEP_META_VALUE_MAX);

	if (len >= KEEP_META_VALUE_MAX)
		return false;
	if (len && (v[0] == ' ' || v[len - 1] == ' '))
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return false;
	return true;
}

int keep_meta_add(struct keep_meta *m, const char *name, const char *value)
{
	if (!name || !value || !meta_name_ok(name) || !meta_value_ok(value))
		return KEEP_ERR_INVAL;
	if (m->n >= KEEP_META_MAX)
		return KEEP_ERR_TOOBIG;
	snprintf(m->v[m->n].name, sizeof(m->v[m->n].name), "%s", name);
	snprintf(m->v[m->n].value, sizeof(m->v[m->n].value), "%s", value);
	m->n++;
	return 0;
}

const char *keep_meta_get(const struct keep_meta *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n && i < KEEP_META_MAX; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return m->v[i].value;
	return NULL;
}

static bool meta_valid(const struct keep_meta *m)
{
	size_t i;

	if (!m)
		return true;
	if (m->n > KEEP_META_MAX)
		return false;
	for (i = 0; i < m->n; i++)
		if (!meta_name_ok(m->v[i].name) || !meta_value_ok(m->v[i].value))
			return false;
	return true;
}

int keep_store_put_meta(struct keep_store *s, const char *key, const void *body, size_t len,
			enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
			struct keep_reply *reply)
{
	if (!keep_key_valid(key) || len > KEEP_BODY_MAX || !meta_valid(meta))
		return refused_locally(KEEP_ERR_INVAL, reply);
	if (cond == KEEP_COND_IF_MATCH && (!if_match || !*if_match))
		return refused_locally(KEEP_ERR_INVAL, reply);
	if (!meta || !meta->n || !s->ops->put_meta)
		return refused_locally(s->ops->put(s, key, body, len, cond, if_match, reply),
				       reply);
	return refused_locally(s->ops->put_meta(s, key, body, len, cond, if_match, meta, reply),
			       reply);
}

int keep_store_get_meta(struct keep_store *s, const char *key, struct keep_buf *body,
			struct keep_meta *meta, struct keep_reply *reply)
{
	keep_meta_init(meta);
	if (!keep_key_valid(key))
		return refused_locally(KEEP_ERR_INVAL, reply);
	if (!s->ops->get_meta)
		return refused_locally(s->ops->get(s, key, body, reply), reply);
	return refused_locally(s->ops->get_meta(s, key, body, meta, reply), reply);
}

int keep_store_get_ours(struct keep_store *s, const char *key, struct keep_buf *body,
			struct keep_reply *reply)
{
	int rc = keep_store_get(s, key, body, reply);

	if (reply->outcome == KEEP_STORE_REFUSED && reply->not_ours) {
		keep_buf_reset(body);
		reply->outcome = KEEP_STORE_OK;
		reply->version[0] = '\0';
	}
	return rc;
}
