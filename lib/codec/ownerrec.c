/* keep — the ownership record codec and actor keys (ownerrec.h,
 * docs/formats.md "Ownership records"). */
#include "ownerrec.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/parse.h"

#define HDR "wasmkeep-owner "

static bool seg_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

bool keep_owner_key_valid(const char *key)
{
	size_t seglen = 0, segs = 1, i, n;

	if (!key)
		return false;
	n = strnlen(key, KEEP_OWNER_KEY_MAX + 1);
	if (n < 5 || n > KEEP_OWNER_KEY_MAX)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c == '/') {
			if (seglen == 0 || ++segs > 3)
				return false;
			seglen = 0;
			continue;
		}
		if (!seg_char(c) || (seglen == 0 && c == '.') || ++seglen > KEEP_OWNER_SEGMENT_MAX)
			return false;
	}
	return segs == 3 && seglen > 0;
}

bool keep_owner_key_prefix_valid(const char *p)
{
	size_t seg = 0, slashes = 0;

	if (!p)
		return false;
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '/') {
			if (seg == 0 || ++slashes > 2)
				return false;
			seg = 0;
			continue;
		}
		if (!seg_char(c) || (seg == 0 && c == '.') || ++seg > KEEP_OWNER_SEGMENT_MAX)
			return false;
	}
	return true;
}

int keep_owner_record_key(const char *key, char *out, size_t outlen)
{
	int n;

	if (!keep_owner_key_valid(key))
		return KEEP_ERR_INVAL;
	n = snprintf(out, outlen, "%s%s", KEEP_OWNER_PREFIX, key);
	if (n < 0 || (size_t)n >= outlen)
		return KEEP_ERR_TOOBIG;
	return 0;
}

static bool instance_ok(const char *s, size_t n)
{
	return keep_instance_valid(s, n);
}

/* A generation of n bytes: 1..KEEP_OWNER_GEN_MAX, strict decimal. */
static bool gen_parse(const char *s, size_t n, int64_t *out)
{
	int64_t v;

	if (!keep_dec_parse(s, n, KEEP_OWNER_GEN_MAX, &v) || v < 1)
		return false;
	*out = v;
	return true;
}

static void set_err(char *err, size_t errlen, const char *why, int line)
{
	if (err && errlen)
		snprintf(err, errlen, "line %d: %s", line, why);
}

int keep_owner_rec_decode(const char *buf, size_t len, struct keep_owner_rec *out, char *err,
			  size_t errlen)
{
	const char *p = buf, *end = buf + len, *nl, *sp;
	size_t ln;
	int line = 0;

	memset(out, 0, sizeof(*out));
	if (len > KEEP_OWNERREC_MAX) {
		set_err(err, errlen, "record larger than the limit", 0);
		return KEEP_ERR_TOOBIG;
	}
	if (len < strlen(HDR) || memcmp(buf, HDR, strlen(HDR)) != 0) {
		set_err(err, errlen, "not an ownership record", 1);
		return KEEP_ERR_NOTOURS;
	}
	if (memchr(buf, '\0', len) || memchr(buf, '\r', len)) {
		set_err(err, errlen, "NUL or CR in the record", 0);
		return KEEP_ERR_PARSE;
	}
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			set_err(err, errlen, "no final newline", line + 1);
			return KEEP_ERR_PARSE;
		}
		ln = (size_t)(nl - p);
		line++;
		switch (line) {
		case 1:
			if (ln != strlen(HDR) + 1 || p[ln - 1] != '1') {
				set_err(err, errlen, "unknown record format", line);
				return KEEP_ERR_NOTOURS;
			}
			break;
		case 2:
			if (ln == 6 && memcmp(p, "nobody", 6) == 0) {
				out->held = false;
				break;
			}
			if (ln < 5 || memcmp(p, "held ", 5) != 0)
				goto bad;
			sp = memchr(p + 5, ' ', ln - 5);
			if (!sp)
				goto bad;
			{
				size_t nn = (size_t)(sp - (p + 5)), il = ln - 5 - nn - 1;

				if (nn < 1 || nn > KEEP_NODE_ID_MAX)
					goto bad;
				memcpy(out->node, p + 5, nn);
				out->node[nn] = '\0';
				if (!keep_node_id_valid(out->node) || !instance_ok(sp + 1, il))
					goto bad;
				memcpy(out->instance, sp + 1, il);
				out->instance[il] = '\0';
				out->held = true;
			}
			break;
		case 3:
			if (ln < 11 || memcmp(p, "generation ", 11) != 0 ||
			    !gen_parse(p + 11, ln - 11, &out->generation))
				goto bad;
			break;
		default:
			set_err(err, errlen, "unexpected line", line);
			return KEEP_ERR_PARSE;
		}
		p = nl + 1;
	}
	if (line != 3) {
		set_err(err, errlen, "record ends early", line);
		return KEEP_ERR_PARSE;
	}
	return 0;
bad:
	set_err(err, errlen, "malformed", line);
	return KEEP_ERR_PARSE;
}

int keep_owner_rec_encode(const struct keep_owner_rec *r, struct keep_buf *out)
{
	size_t before = out->len;
	int rc;

	if (r->generation < 1 || r->generation > KEEP_OWNER_GEN_MAX)
		return KEEP_ERR_INVAL;
	if (r->held && (!keep_node_id_valid(r->node) ||
			!instance_ok(r->instance, strnlen(r->instance, sizeof(r->instance)))))
		return KEEP_ERR_INVAL;
	if (r->held)
		rc = keep_buf_addf(out, HDR "1\nheld %s %s\ngeneration %lld\n", r->node,
				   r->instance, (long long)r->generation);
	else
		rc = keep_buf_addf(out, HDR "1\nnobody\ngeneration %lld\n",
				   (long long)r->generation);
	if (rc && out->len != before) {
		out->len = before;
		out->data[before] = '\0';
	}
	return rc;
}

void keep_owner_rec_held(struct keep_owner_rec *r, const char *node, const char *instance,
			 int64_t generation)
{
	memset(r, 0, sizeof(*r));
	r->held = true;
	snprintf(r->node, sizeof(r->node), "%s", node);
	snprintf(r->instance, sizeof(r->instance), "%s", instance);
	r->generation = generation;
}

void keep_owner_rec_nobody(struct keep_owner_rec *r, int64_t generation)
{
	memset(r, 0, sizeof(*r));
	r->generation = generation;
}
