/* keep — the fenced object codec (fenced.h; docs/formats.md "Fenced
 * objects"). */
#include "fenced.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/parse.h"
#include "sha256.h"

#define HDR "wasmkeep-fenced "

int keep_fenced_encode(const char *key, int64_t generation, const void *data, size_t len,
		       struct keep_buf *out)
{
	size_t before = out->len;
	char hex[65];
	int rc;

	if (!keep_owner_key_valid(key) || generation < 1 || generation > KEEP_OWNER_GEN_MAX ||
	    len > KEEP_FENCED_DATA_MAX || (len && !data))
		return KEEP_ERR_INVAL;
	keep_sha256_hex(len ? data : "", len, hex);
	rc = keep_buf_addf(out, HDR "1\nowner %s\ngeneration %lld\nsize %zu\nsha256 %s\n", key,
			   (long long)generation, len, hex);
	if (!rc && len)
		rc = keep_buf_add(out, data, len);
	if (rc && out->len != before) {
		out->len = before;
		out->data[before] = '\0';
	}
	return rc;
}

static int fail(char *err, size_t errlen, int rc, int line, const char *why)
{
	if (err && errlen) {
		if (line > 0)
			snprintf(err, errlen, "line %d: %s", line, why);
		else
			snprintf(err, errlen, "%s", why);
	}
	return rc;
}

/* The header line `name value` of n bytes at p: the value's start and
 * length, or false. */
static bool field(const char *p, size_t n, const char *name, const char **v, size_t *vn)
{
	size_t k = strlen(name);

	if (n < k + 2 || memcmp(p, name, k) != 0 || p[k] != ' ')
		return false;
	*v = p + k + 1;
	*vn = n - k - 1;
	return true;
}

int keep_fenced_decode(const char *buf, size_t len, struct keep_fence *f, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len, *nl, *v;
	size_t ln, vn;
	int64_t n;
	char hex[65];
	int line;

	memset(f, 0, sizeof(*f));
	if (len > KEEP_FENCED_OBJECT_MAX)
		return fail(err, errlen, KEEP_ERR_TOOBIG, 0, "object larger than 65536 bytes");
	if (len < strlen(HDR) || memcmp(buf, HDR, strlen(HDR)) != 0)
		return fail(err, errlen, KEEP_ERR_NOTOURS, 1, "not a fenced object");
	for (line = 1; line <= 5; line++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl || nl - p > (ptrdiff_t)KEEP_FENCED_HEADER_MAX)
			return fail(err, errlen, KEEP_ERR_PARSE, line,
				    line == 1 ? "no final newline" : "header ends early");
		ln = (size_t)(nl - p);
		if (memchr(p, '\r', ln) || memchr(p, '\0', ln))
			return fail(err, errlen, KEEP_ERR_PARSE, line, "NUL or CR in the header");
		switch (line) {
		case 1:
			if (ln != strlen(HDR) + 1 || p[ln - 1] != '1')
				return fail(err, errlen, KEEP_ERR_NOTOURS, line,
					    "unknown fenced object format");
			break;
		case 2:
			if (!field(p, ln, "owner", &v, &vn) || vn > KEEP_OWNER_KEY_MAX)
				return fail(err, errlen, KEEP_ERR_PARSE, line, "malformed owner");
			memcpy(f->key, v, vn);
			f->key[vn] = '\0';
			if (!keep_owner_key_valid(f->key))
				return fail(err, errlen, KEEP_ERR_PARSE, line, "malformed owner");
			break;
		case 3:
			if (!field(p, ln, "generation", &v, &vn) ||
			    !keep_dec_parse(v, vn, KEEP_OWNER_GEN_MAX, &n) || n < 1)
				return fail(err, errlen, KEEP_ERR_PARSE, line,
					    "malformed generation");
			f->generation = n;
			break;
		case 4:
			if (!field(p, ln, "size", &v, &vn) ||
			    !keep_dec_parse(v, vn, KEEP_FENCED_DATA_MAX, &n))
				return fail(err, errlen, KEEP_ERR_PARSE, line, "malformed size");
			f->size = (size_t)n;
			break;
		case 5:
			if (!field(p, ln, "sha256", &v, &vn) || vn != 64 || !keep_hex_valid(v, vn))
				return fail(err, errlen, KEEP_ERR_PARSE, line, "malformed sha256");
			memcpy(f->sha256, v, 64);
			f->sha256[64] = '\0';
			break;
		}
		p = nl + 1;
	}
	f->data_off = (size_t)(p - buf);
	if ((size_t)(end - p) != f->size)
		return fail(err, errlen, KEEP_ERR_PARSE, 0,
			    "size does not match the bytes after the header");
	keep_sha256_hex(f->size ? p : "", f->size, hex);
	if (memcmp(hex, f->sha256, 65) != 0)
		return fail(err, errlen, KEEP_ERR_PARSE, 0, "sha256 does not match the data");
	return 0;
}

bool keep_fenced_object_allowed(const char *object, const char **why)
{
	static const char *const names[] = {"nodes",	"owners", "leases",  "wal",
					    "snapshot", "probe",  "cluster", "apps"};
	size_t i, seg;

	if (why)
		*why = NULL;
	if (!object || !*object) {
		if (why)
			*why = "empty object key";
		return false;
	}
	seg = strcspn(object, "/");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (seg == strlen(names[i]) && memcmp(object, names[i], seg) == 0) {
			if (why)
				*why = "under one of keep's own names (nodes, owners, leases, wal, "
				       "snapshot, probe, cluster, apps)";
			return false;
		}
	return true;
}
