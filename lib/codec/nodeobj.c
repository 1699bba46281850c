/* keep — the node lease object nodes/<id>: strict codec (nodeobj.h,
 * docs/formats.md). */
#include "nodeobj.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/parse.h"

#define HDR "wasmkeep-node "

const char *keep_node_state_name(enum keep_node_state s)
{
	switch (s) {
	case KEEP_NODE_LIVE:
		return "live";
	case KEEP_NODE_RELEASED:
		return "released";
	case KEEP_NODE_FENCED:
		return "fenced";
	}
	return "unknown";
}

static int id_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* Same test over n bytes (not NUL-terminated). */
static bool id_valid_n(const char *s, size_t n)
{
	size_t i;

	if (n < 1 || n > KEEP_NODE_ID_MAX || s[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!id_char((unsigned char)s[i]))
			return false;
	return true;
}

int keep_node_id_valid(const char *id)
{
	return id && id_valid_n(id, strnlen(id, KEEP_NODE_ID_MAX + 1));
}

/* Instance: exactly KEEP_INSTANCE_LEN of [0-9a-f], or "-". */
static bool instance_valid_n(const char *s, size_t n)
{
	return (n == 1 && s[0] == '-') || keep_instance_valid(s, n);
}

/* A decimal int64 of n bytes (keep_dec_parse). 0 or -1. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
	return keep_dec_parse(s, n, INT64_MAX, out) ? 0 : -1;
}

/* A wall time in ms: a decimal > 0, no sign, no leading zero, at most
 * KEEP_WALL_MAX_MS (year 9999; docs/formats.md "Time bounds").
 * 0; -1 not such a decimal; -2 a decimal beyond the bound (int64 overflow
 * included). */
static int parse_wall(const char *s, size_t n, int64_t *out)
{
	int64_t v;
	size_t i;

	if (n == 0 || s[0] == '0')
		return -1;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	if (parse_i64(s, n, &v) || v > KEEP_WALL_MAX_MS)
		return -2;
	*out = v;
	return 0;
}

/* The error of a failed parse_wall of field name on line lineno. */
static int wall_err(int rc, const char *name, int lineno, char *err, size_t errlen)
{
	if (rc == -2)
		snprintf(err, errlen,
			 "line %d: %s beyond year 9999 (over %lld): a corrupt or hostile time",
			 lineno, name, (long long)KEEP_WALL_MAX_MS);
	else
		snprintf(err, errlen, "line %d: bad %s (want a positive decimal integer)", lineno,
			 name);
	return KEEP_ERR_PARSE;
}

/* Printable ASCII without space, 1..max-1 bytes (max is the buffer size). */
static bool token_valid_n(const char *s, size_t n, size_t max)
{
	size_t i;

	if (n < 1 || n >= max)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static void copy_n(char *dst, const char *s, size_t n)
{
	memcpy(dst, s, n);
	dst[n] = '\0';
}

static void obj_clear(struct keep_node_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->state = KEEP_NODE_LIVE;
	o->instance[0] = '-';
	o->seq = -1;
}

/* A line cursor over the buffer: the next line (without its '\n'). */
struct cursor {
	const char *p, *end;
	int lineno; /* 1-based number of the line last returned */
};

static bool next_line(struct cursor *c, const char **s, size_t *n)
{
	const char *nl;

	if (c->p >= c->end)
		return false;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	*s = c->p;
	*n = (size_t)(nl - c->p); /* nl != NULL: checked before (buffer ends with '\n') */
	c->p = nl + 1;
	c->lineno++;
	return true;
}

/* "name value": true (value in *v, *vn) if the line starts with name + ' '. */
static bool field(const char *s, size_t n, const char *name, const char **v, size_t *vn)
{
	size_t k = strlen(name);

	if (n <= k || memcmp(s, name, k) != 0 || s[k] != ' ')
		return false;
	*v = s + k + 1;
	*vn = n - k - 1;
	return true;
}

#define PARSE_ERR(...)                                                                             \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return KEEP_ERR_PARSE;                                                             \
	} while (0)

static int decode_old(struct cursor *cur, struct keep_node_obj *o, char *err, size_t errlen)
{
	bool have_node = false, have_at = false;
	const char *s, *v;
	size_t n, vn;
	int rc;

	while (next_line(cur, &s, &n)) {
		if (field(s, n, "node", &v, &vn)) {
			if (have_node)
				PARSE_ERR("line %d: duplicate node", cur->lineno);
			if (!id_valid_n(v, vn))
				PARSE_ERR("line %d: bad node id", cur->lineno);
			copy_n(o->node, v, vn);
			have_node = true;
		} else if (field(s, n, "written_at_ms", &v, &vn)) {
			if (have_at)
				PARSE_ERR("line %d: duplicate written_at_ms", cur->lineno);
			rc = parse_wall(v, vn, &o->written_at_ms);
			if (rc)
				return wall_err(rc, "written_at_ms", cur->lineno, err, errlen);
			have_at = true;
		}
		/* other lines of the old formats are skipped (still bounded above) */
	}
	if (!have_node)
		PARSE_ERR("missing node line");
	if (!have_at)
		PARSE_ERR("missing written_at_ms line");
	return 0;
}

/* The optional fields of format 3, in their order. */
static const char *const optional[] = {"host", "pid", "software", "fenced_by", "fenced_at_ms"};

static int decode_v3(struct cursor *cur, struct keep_node_obj *o, char *err, size_t errlen)
{
	const char *s, *v, *sp;
	size_t n, vn, i, next = 0;
	int rc;

	/* <state> <instance> */
	if (!next_line(cur, &s, &n))
		PARSE_ERR("missing state line");
	sp = memchr(s, ' ', n);
	if (!sp)
		PARSE_ERR("line %d: want '<state> <instance>'", cur->lineno);
	if ((size_t)(sp - s) == 4 && memcmp(s, "live", 4) == 0)
		o->state = KEEP_NODE_LIVE;
	else if ((size_t)(sp - s) == 8 && memcmp(s, "released", 8) == 0)
		o->state = KEEP_NODE_RELEASED;
	else if ((size_t)(sp - s) == 6 && memcmp(s, "fenced", 6) == 0)
		o->state = KEEP_NODE_FENCED;
	else
		PARSE_ERR("line %d: bad state (want live, released or fenced)", cur->lineno);
	v = sp + 1;
	vn = n - (size_t)(v - s);
	if (!instance_valid_n(v, vn))
		PARSE_ERR("line %d: bad instance (want %d lowercase hex digits or '-')",
			  cur->lineno, KEEP_INSTANCE_LEN);
	if (vn == 1 && o->state != KEEP_NODE_FENCED)
		PARSE_ERR("line %d: instance '-' is only allowed with state fenced", cur->lineno);
	copy_n(o->instance, v, vn);

	if (!next_line(cur, &s, &n))
		PARSE_ERR("missing written_at_ms line");
	if (!field(s, n, "written_at_ms", &v, &vn))
		PARSE_ERR("line %d: want written_at_ms", cur->lineno);
	rc = parse_wall(v, vn, &o->written_at_ms);
	if (rc)
		return wall_err(rc, "written_at_ms", cur->lineno, err, errlen);

	if (!next_line(cur, &s, &n))
		PARSE_ERR("missing node line");
	if (!field(s, n, "node", &v, &vn))
		PARSE_ERR("line %d: want node", cur->lineno);
	if (!id_valid_n(v, vn))
		PARSE_ERR("line %d: bad node id", cur->lineno);
	copy_n(o->node, v, vn);

	if (!next_line(cur, &s, &n))
		PARSE_ERR("missing seq line");
	if (!field(s, n, "seq", &v, &vn))
		PARSE_ERR("line %d: want seq", cur->lineno);
	if (parse_i64(v, vn, &o->seq))
		PARSE_ERR("line %d: bad seq (want a decimal integer >= 0)", cur->lineno);

	while (next_line(cur, &s, &n)) {
		for (i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
			if (field(s, n, optional[i], &v, &vn))
				break;
		if (i == sizeof(optional) / sizeof(optional[0]))
			PARSE_ERR("line %d: unknown or malformed field", cur->lineno);
		if (i < next)
			PARSE_ERR("line %d: %s duplicated or out of order", cur->lineno,
				  optional[i]);
		next = i + 1;
		switch (i) {
		case 0:
			if (!token_valid_n(v, vn, sizeof(o->host)))
				PARSE_ERR("line %d: bad host", cur->lineno);
			copy_n(o->host, v, vn);
			break;
		case 1:
			if (parse_i64(v, vn, &o->pid) || o->pid <= 0)
				PARSE_ERR("line %d: bad pid", cur->lineno);
			break;
		case 2:
			if (!token_valid_n(v, vn, sizeof(o->software)))
				PARSE_ERR("line %d: bad software", cur->lineno);
			copy_n(o->software, v, vn);
			break;
		case 3:
			if (o->state != KEEP_NODE_FENCED)
				PARSE_ERR("line %d: fenced_by without state fenced", cur->lineno);
			if (!id_valid_n(v, vn))
				PARSE_ERR("line %d: bad fenced_by", cur->lineno);
			copy_n(o->fenced_by, v, vn);
			break;
		default:
			if (o->state != KEEP_NODE_FENCED)
				PARSE_ERR("line %d: fenced_at_ms without state fenced",
					  cur->lineno);
			rc = parse_wall(v, vn, &o->fenced_at_ms);
			if (rc)
				return wall_err(rc, "fenced_at_ms", cur->lineno, err, errlen);
			break;
		}
	}
	return 0;
}

int keep_node_obj_decode(const char *buf, size_t len, struct keep_node_obj *out, char *err,
			 size_t errlen)
{
	struct keep_node_obj o;
	struct cursor cur;
	const char *nl;
	size_t hn;
	int rc;

	if (len > KEEP_NODEOBJ_MAX) {
		snprintf(err, errlen, "node object over %d bytes", KEEP_NODEOBJ_MAX);
		return KEEP_ERR_TOOBIG;
	}
	obj_clear(&o);
	if (len == 0) {
		snprintf(err, errlen, "empty object: not a node object");
		return KEEP_ERR_NOTOURS;
	}
	/* The header decides whose object this is. */
	nl = memchr(buf, '\n', len);
	hn = nl ? (size_t)(nl - buf) : len;
	if (hn == sizeof(HDR) && memcmp(buf, HDR, sizeof(HDR) - 1) == 0 && buf[hn - 1] >= '1' &&
	    buf[hn - 1] <= '3') {
		o.format = buf[hn - 1] - '0';
	} else {
		snprintf(err, errlen, "not a node object (header is not wasmkeep-node 1, 2 or 3)");
		return KEEP_ERR_NOTOURS;
	}
	if (memchr(buf, '\0', len))
		PARSE_ERR("NUL byte in node object");
	if (memchr(buf, '\r', len))
		PARSE_ERR("carriage return in node object");
	if (buf[len - 1] != '\n')
		PARSE_ERR("node object does not end with a newline");
	cur.p = nl + 1;
	cur.end = buf + len;
	cur.lineno = 1;
	if (o.format == 3)
		rc = decode_v3(&cur, &o, err, errlen);
	else
		rc = decode_old(&cur, &o, err, errlen);
	if (rc)
		return rc;
	*out = o;
	return 0;
}

int keep_node_obj_encode(const struct keep_node_obj *o, struct keep_buf *out)
{
	size_t old = out->len;
	size_t il = strnlen(o->instance, sizeof(o->instance));
	size_t hl = strnlen(o->host, sizeof(o->host));
	size_t sl = strnlen(o->software, sizeof(o->software));
	size_t fl = strnlen(o->fenced_by, sizeof(o->fenced_by));
	bool fenced = o->state == KEEP_NODE_FENCED;
	int rc;

	if (o->state != KEEP_NODE_LIVE && o->state != KEEP_NODE_RELEASED && !fenced)
		return KEEP_ERR_INVAL;
	if (!instance_valid_n(o->instance, il) || il == sizeof(o->instance) || (il == 1 && !fenced))
		return KEEP_ERR_INVAL;
	if (o->written_at_ms <= 0 || o->seq < 0 || o->pid < 0 || o->fenced_at_ms < 0)
		return KEEP_ERR_INVAL;
	if (o->written_at_ms > KEEP_WALL_MAX_MS || o->fenced_at_ms > KEEP_WALL_MAX_MS)
		return KEEP_ERR_INVAL;
	if (!keep_node_id_valid(o->node))
		return KEEP_ERR_INVAL;
	if ((hl && !token_valid_n(o->host, hl, sizeof(o->host))) ||
	    (sl && !token_valid_n(o->software, sl, sizeof(o->software))))
		return KEEP_ERR_INVAL;
	if ((fl || o->fenced_at_ms > 0) && !fenced)
		return KEEP_ERR_INVAL;
	if (fl && !keep_node_id_valid(o->fenced_by))
		return KEEP_ERR_INVAL;

	rc = keep_buf_addf(
	    out, HDR "3\n%s %s\nwritten_at_ms %" PRId64 "\nnode %s\nseq %" PRId64 "\n",
	    keep_node_state_name(o->state), o->instance, o->written_at_ms, o->node, o->seq);
	if (!rc && hl)
		rc = keep_buf_addf(out, "host %s\n", o->host);
	if (!rc && o->pid > 0)
		rc = keep_buf_addf(out, "pid %" PRId64 "\n", o->pid);
	if (!rc && sl)
		rc = keep_buf_addf(out, "software %s\n", o->software);
	if (!rc && fl)
		rc = keep_buf_addf(out, "fenced_by %s\n", o->fenced_by);
	if (!rc && o->fenced_at_ms > 0)
		rc = keep_buf_addf(out, "fenced_at_ms %" PRId64 "\n", o->fenced_at_ms);
	if (!rc && out->len - old > KEEP_NODEOBJ_MAX)
		rc = KEEP_ERR_TOOBIG;
	if (rc && out->data) {
		out->len = old;
		out->data[old] = '\0';
	}
	return rc;
}

void keep_node_obj_set_host(struct keep_node_obj *o, const char *host)
{
	snprintf(o->host, sizeof(o->host), "%s", host ? host : "");
	for (char *p = o->host; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			*p = '_';
}
