/* keep — the cluster object codec (cluster.h). */
#include "cluster.h"

#include <stdio.h>
#include <string.h>

#include "../err.h"
#include "../parse.h"
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
	o->written_at_ms = now->wall_ms;
}

int keep_cluster_encode(const struct keep_cluster_obj *o, struct keep_buf *out)
{
	if ((o->format != KEEP_CLUSTER_FMT_NATIVE && o->format != KEEP_CLUSTER_FMT_UPGRADED) ||
	    o->written_at_ms < 1 || o->written_at_ms > KEEP_WALL_MAX_MS)
		return KEEP_ERR_INVAL;
	return keep_buf_addf(out, HEADER "format %s\nwritten_at_ms %lld\n",
			     keep_cluster_format_name(o->format), (long long)o->written_at_ms);
}
