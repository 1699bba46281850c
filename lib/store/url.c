/* keep — store URL and key syntax, no I/O (docs/store.md). Apart from
 * store.c so that what links the configuration check (lib/local/config.c) but
 * never a store (the light commands: Makefile LIGHT_CMDS) does not pull
 * the backends, libcurl and OpenSSL in. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "store.h"

static bool segment_ok(const char *s, size_t n)
{
	if (n == 0)
		return false;
	if (n == 1 && s[0] == '.')
		return false;
	if (n == 2 && s[0] == '.' && s[1] == '.')
		return false;
	return true;
}

/* Shared by keys and prefixes: allow_trailing_slash for prefixes. */
static bool path_valid(const char *key, bool prefix)
{
	size_t len = strlen(key), i, start = 0;

	if (len > KEEP_KEY_MAX)
		return false;
	if (len == 0)
		return prefix;
	if (key[0] == '/')
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			return false;
		if (c == '/') {
			if (!segment_ok(key + start, i - start))
				return false;
			start = i + 1;
		}
	}
	if (start == len)
		return prefix; /* trailing '/' only in a prefix */
	return segment_ok(key + start, len - start);
}

bool keep_key_valid(const char *key)
{
	return key && path_valid(key, false);
}

bool keep_prefix_valid(const char *prefix)
{
	return prefix && path_valid(prefix, true);
}

int keep_store_url_check(const char *url, char *err, size_t errlen)
{
	if (!url || !*url) {
		snprintf(err, errlen, "no store URL given");
		return KEEP_ERR_INVAL;
	}
	if (strncmp(url, "file://", 7) == 0)
		return keep_store_fs_url_check(url + 7, err, errlen);
	if (strncmp(url, "s3://", 5) == 0)
		return keep_store_s3_url_check(url + 5, err, errlen);
	snprintf(err, errlen,
		 "unsupported store URL '%.200s' (want file:///DIR or s3://BUCKET[/PREFIX])", url);
	return KEEP_ERR_INVAL;
}

int keep_store_fs_url_check(const char *rest, char *err, size_t errlen)
{
	if (!rest || rest[0] != '/') {
		snprintf(err, errlen,
			 "store path '%.200s' is not absolute (want file:///ABSOLUTE/DIR)",
			 rest ? rest : "");
		return KEEP_ERR_INVAL;
	}
	if (strlen(rest) > KEEP_KEY_MAX) {
		snprintf(err, errlen, "store path is longer than %d bytes", KEEP_KEY_MAX);
		return KEEP_ERR_INVAL;
	}
	return 0;
}

static bool bucket_valid(const char *b, size_t n)
{
	size_t i;

	if (n < 3 || n > 63)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];
		if (!(islower(c) || isdigit(c) || c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

int keep_store_s3_url_check(const char *rest, char *err, size_t errlen)
{
	char prefix[KEEP_KEY_MAX / 2 + 2];
	const char *slash, *p;
	size_t blen, n;

	if (!rest)
		rest = "";
	slash = strchr(rest, '/');
	blen = slash ? (size_t)(slash - rest) : strlen(rest);
	if (!bucket_valid(rest, blen)) {
		snprintf(err, errlen, "bad S3 bucket in 's3://%.200s' (want s3://BUCKET[/PREFIX])",
			 rest);
		return KEEP_ERR_INVAL;
	}
	/* the prefix as the store uses it: "a/b//" -> "a/b/" */
	p = slash ? slash + 1 : "";
	n = strlen(p);
	while (n && p[n - 1] == '/')
		n--;
	if (!n)
		return 0;
	if (n + 1 > KEEP_KEY_MAX / 2) { /* with its '/' */
		snprintf(err, errlen, "bad S3 prefix in 's3://%.200s' (over %d bytes)", rest,
			 KEEP_KEY_MAX / 2);
		return KEEP_ERR_INVAL;
	}
	memcpy(prefix, p, n);
	prefix[n] = '/';
	prefix[n + 1] = '\0';
	if (!keep_prefix_valid(prefix)) {
		snprintf(err, errlen, "bad S3 prefix in 's3://%.200s'", rest);
		return KEEP_ERR_INVAL;
	}
	return 0;
}
