/* keep — the cluster object codec (cluster.h). */
#include "cluster.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../base/parse.h"
#include "timing.h"

#define HEADER "wasmkeep-cluster 1\n"

const char *keep_cluster_format_name(enum keep_cluster_format f)
{
	return f == KEEP_CLUSTER_FMT_NATIVE ? "native" : "upgraded";
}

/* The line at *p (up to '\n', which must be there) starting with name and a
 * space: its value into *v, *vn; *p moves past the line. */
static bool field(const char **p, const char *end, const char *name, const char **v, size_t *vn)
{
	size_t n = strlen(name);
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));

	if (!nl || (size_t)(nl - *p) <= n + 1 || memcmp(*p, name, n) != 0 || (*p)[n] != ' ')
		return false;
	*v = *p + n + 1;
	*vn = (size_t)(nl - *v);
	*p = nl + 1;
	return true;
}

int keep_cluster_decode(const char *body, size_t len, struct keep_cluster_obj *o, char *why,
			size_t whylen)
{
	const char *p = body, *end = body + len, *v;
	size_t vn;

	memset(o, 0, sizeof(*o));
	if (len > KEEP_CLUSTER_MAX) {
		snprintf(why, whylen, "larger than %d bytes", KEEP_CLUSTER_MAX);
		return KEEP_ERR_TOOBIG;
	}
	if (len < strlen(HEADER) || memcmp(body, HEADER, strlen(HEADER)) != 0) {
		snprintf(why, whylen, "not a keep cluster object");
		return KEEP_ERR_NOTOURS;
	}
	p += strlen(HEADER);
	if (!field(&p, end, "format", &v, &vn)) {
		snprintf(why, whylen, "no format line");
		goto bad;
	}
	if (vn == 6 && memcmp(v, "native", 6) == 0)
		o->format = KEEP_CLUSTER_FMT_NATIVE;
	else if (vn == 8 && memcmp(v, "upgraded", 8) == 0)
		o->format = KEEP_CLUSTER_FMT_UPGRADED;
	else {
		snprintf(why, whylen, "unknown format");
		goto bad;
	}
	if (!field(&p, end, "written_at_ms", &v, &vn) ||
	    !keep_dec_parse(v, vn, KEEP_WALL_MAX_MS, &o->written_at_ms) || o->written_at_ms < 1) {
		snprintf(why, whylen, "bad written_at_ms line");
		goto bad;
	}
	if (p != end) {
		snprintf(why, whylen, "trailing bytes");
		goto bad;
	}
	return 0;
bad:
	memset(o, 0, sizeof(*o));
	return KEEP_ERR_PARSE;
}

void keep_cluster_native_obj(const struct keep_walls *now, struct keep_cluster_obj *o)
{
	o->format = KEEP_CLUSTER_FMT_NATIVE;
	o->written_at_ms = keep_date_written_ms(now->wall_ms, KEEP_DATE_NO_FLOOR);
}

int keep_cluster_encode(const struct keep_cluster_obj *o, struct keep_buf *out)
{
	if ((o->format != KEEP_CLUSTER_FMT_NATIVE && o->format != KEEP_CLUSTER_FMT_UPGRADED) ||
	    o->written_at_ms < 1 || o->written_at_ms > KEEP_WALL_MAX_MS)
		return KEEP_ERR_INVAL;
	return keep_buf_addf(out, HEADER "format %s\nwritten_at_ms %lld\n",
			     keep_cluster_format_name(o->format), (long long)o->written_at_ms);
}

enum keep_cluster_read keep_cluster_judge(enum keep_outcome outcome, bool not_ours,
					  const char *detail, const char *body, size_t len,
					  struct keep_cluster_obj *o, char *why, size_t whylen)
{
	memset(o, 0, sizeof(*o));
	if (whylen)
		why[0] = '\0';
	if (outcome == KEEP_STORE_NOT_FOUND)
		return KEEP_CLUSTER_READ_ABSENT;
	if (outcome != KEEP_STORE_OK)
		return KEEP_CLUSTER_READ_FAILED;
	if (not_ours) {
		snprintf(why, whylen, "%s", detail ? detail : "-");
		return KEEP_CLUSTER_READ_BAD;
	}
	if (keep_cluster_decode(body ? body : "", body ? len : 0, o, why, whylen) != 0)
		return KEEP_CLUSTER_READ_BAD;
	return o->format == KEEP_CLUSTER_FMT_NATIVE ? KEEP_CLUSTER_READ_NATIVE
						    : KEEP_CLUSTER_READ_UPGRADED;
}

/* ---- several applications on one cluster ---------------------------------------- */

bool keep_cluster_key_shared(const char *key)
{
	return strncmp(key, "nodes/", 6) == 0 || strcmp(key, KEEP_CLUSTER_KEY) == 0;
}

int keep_cluster_app_root_key(const char *root, const char *key, char *out, size_t outlen)
{
	int r;

	if (keep_cluster_key_shared(key))
		r = snprintf(out, outlen, "%s", key);
	else
		r = snprintf(out, outlen, "apps/%s/%s", root, key);
	return r < 0 || (size_t)r >= outlen ? KEEP_ERR_TOOBIG : 0;
}

/* ---- upgrade-mark native ---------------------------------------------------------- */

static const char *const native_old[] = {"leases/", "wal/", "snapshot/"};
#define NATIVE_OLD_N (sizeof(native_old) / sizeof(native_old[0]))

static void native_end(struct keep_native *m, enum keep_native_result res)
{
	m->done = true;
	m->res = res;
}

void keep_native_init(struct keep_native *m)
{
	memset(m, 0, sizeof(*m));
	m->step = KEEP_NATIVE_ACT_READ;
}

void keep_native_next(struct keep_native *m, const struct keep_walls *now,
		      struct keep_native_act *act)
{
	struct keep_buf b;

	memset(act, 0, sizeof(*act));
	if (!m->done && m->step == KEEP_NATIVE_ACT_CREATE) {
		keep_cluster_native_obj(now, &act->obj); /* dated on the wall clock (issue 23) */
		keep_buf_init(&b, KEEP_CLUSTER_MAX);
		if (keep_cluster_encode(&act->obj, &b) != 0 || b.len > KEEP_CLUSTER_MAX) {
			keep_buf_release(&b);
			native_end(m, KEEP_NATIVE_ENCODE);
		} else {
			memcpy(act->body, b.data, b.len);
			act->body[b.len] = '\0';
			act->len = b.len;
			keep_buf_release(&b);
			m->obj = act->obj;
		}
	}
	if (m->done) {
		act->kind = KEEP_NATIVE_ACT_DONE;
		return;
	}
	act->kind = m->step;
	if (m->step == KEEP_NATIVE_ACT_LIST)
		act->prefix = native_old[m->list_i];
}

void keep_native_on_reply(struct keep_native *m, const struct keep_native_reply *r)
{
	enum keep_cluster_read v;

	if (m->done)
		return;
	if (r->outcome != KEEP_STORE_OK &&
	    !(m->step == KEEP_NATIVE_ACT_READ && r->outcome == KEEP_STORE_NOT_FOUND) &&
	    !(m->step == KEEP_NATIVE_ACT_CREATE && r->outcome == KEEP_STORE_CONFLICT)) {
		m->failed_act = m->step;
		m->outcome = r->outcome;
		m->not_ours = r->not_ours;
		if (m->step == KEEP_NATIVE_ACT_LIST)
			m->old_prefix = native_old[m->list_i];
		native_end(m, KEEP_NATIVE_FAILED);
		return;
	}
	switch (m->step) {
	case KEEP_NATIVE_ACT_READ:
		v = keep_cluster_judge(r->outcome, r->not_ours, r->detail, r->body, r->len, &m->obj,
				       m->why, sizeof(m->why));
		if (v == KEEP_CLUSTER_READ_NATIVE)
			native_end(m, KEEP_NATIVE_EXISTING);
		else if (v == KEEP_CLUSTER_READ_UPGRADED)
			native_end(m, KEEP_NATIVE_UPGRADED);
		else if (v == KEEP_CLUSTER_READ_BAD)
			native_end(m, KEEP_NATIVE_BAD_OBJECT);
		else if (m->conflicts >= KEEP_NATIVE_CONFLICTS_MAX)
			native_end(m, KEEP_NATIVE_GAVE_UP); /* absent, after every conflict */
		else {
			m->step = KEEP_NATIVE_ACT_LIST;
			m->list_i = 0;
		}
		return;
	case KEEP_NATIVE_ACT_LIST:
		if (r->first) {
			snprintf(m->key, sizeof(m->key), "%s", r->first);
			m->old_prefix = native_old[m->list_i];
			native_end(m, KEEP_NATIVE_OLD_OBJECTS);
		} else if (++m->list_i == NATIVE_OLD_N)
			m->step = KEEP_NATIVE_ACT_CREATE;
		return;
	case KEEP_NATIVE_ACT_CREATE:
		if (r->outcome == KEEP_STORE_OK) {
			native_end(m, KEEP_NATIVE_CREATED);
			return;
		}
		m->conflicts++; /* created meanwhile, or a store that says so: read again */
		memset(&m->obj, 0, sizeof(m->obj));
		m->step = KEEP_NATIVE_ACT_READ;
		return;
	case KEEP_NATIVE_ACT_DONE:
		return;
	}
}

int keep_native_exit_code(const struct keep_native *m)
{
	switch (m->res) {
	case KEEP_NATIVE_CREATED:
	case KEEP_NATIVE_EXISTING:
		return KEEP_EXIT_OK;
	case KEEP_NATIVE_UPGRADED:
	case KEEP_NATIVE_OLD_OBJECTS:
		return KEEP_EXIT_NO;
	case KEEP_NATIVE_BAD_OBJECT:
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_NATIVE_FAILED:
		return keep_exit_of_outcome(m->outcome, m->not_ours);
	case KEEP_NATIVE_ENCODE:
	case KEEP_NATIVE_GAVE_UP:
		break;
	}
	return KEEP_EXIT_TEMP;
}

enum keep_cluster_view keep_cluster_first_record_view(enum keep_cluster_read v, bool *keep)
{
	if (keep)
		*keep = v != KEEP_CLUSTER_READ_FAILED;
	return v == KEEP_CLUSTER_READ_NATIVE ? KEEP_CLUSTER_NATIVE : KEEP_CLUSTER_NOT_NATIVE;
}
