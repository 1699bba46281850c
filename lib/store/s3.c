/* keep — the S3 store backend (docs/store.md, docs/s3.md).
 *
 * s3://bucket[/prefix]: every key K is stored as "prefix/K" and listed keys
 * come back without "prefix/". One libcurl easy handle per store (the
 * connection is kept alive between requests); each request is signed by
 * libcurl's SigV4 (CURLOPT_AWS_SIGV4), which is correct for what we send
 * as long as:
 *   - x-amz-content-sha256 is sent by us (curl 7.88 does not; RGW and AWS
 *     answer 403 without it) — we send the real hex SHA-256 of the body;
 *   - the query string is already canonical (sorted, percent-encoded), as
 *     curl signs it as written (keep_s3_query);
 *   - the path is percent-encoded except '/' (S3 canonical URIs are encoded
 *     once), so reserved bytes such as = : + are signed as sent.
 *
 * Classification (keep_s3_classify) is the heart: the protocol relies on
 * it. Nothing here ever retries a PUT or DELETE; GET, HEAD and LIST retry
 * once when a kept-alive connection turned out to be reset. libcurl itself
 * may re-send any request whose reused connection gave back nothing; a
 * conflict answered after such a reconnect is reported ambiguous, since it
 * may be about our own first copy (s3_perform, s3_request).
 *
 * RGW 16.2 quirks handled (docs/s3.md): If-Match on PUT is sent unquoted
 * (a quoted one never matches), and version tokens are ETags with their
 * quotes stripped, in replies and in listings alike. */
#include "curlfn_internal.h"
#include "s3_internal.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/err.h"
#include "../core/throttle.h"
#include "../platform/clock.h"
#include "awscreds.h"
#include "store.h"

#define S3_DEFAULT_TIMEOUT_MS 10000
#define S3_CONNECT_TIMEOUT_MS 5000
#define S3_ERROR_BODY_MAX 16384	    /* bytes of an error reply kept */
#define S3_LIST_PAGE_MAX (8u << 20) /* bytes: one ListObjectsV2 page */
#define S3_TOKEN_MAX 4096	    /* bytes: a continuation token */
#define S3_LIST_PAGES_MAX 100000    /* pages in one listing */
#define S3_XML_TEXT_MAX 4096	    /* bytes: text of one XML element */
#define S3_CODE_MAX 64		    /* bytes: an S3 error Code */
#define S3_CREDS_FILE_MAX 65536	    /* bytes */
#define S3_CREDS_LINE_MAX 4096	    /* bytes */
#define S3_SOCKS_MAX 4		    /* sockets of one handle tracked for quickack() */

bool keep_s3_quickack = true;

/* ---- pure helpers ------------------------------------------------------- */

int keep_s3_pct_encode(struct keep_buf *out, const char *in, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	int err;

	for (p = (const unsigned char *)in; *p; p++) {
		unsigned char c = *p;
		char enc[3];

		if (isalnum(c) && c < 0x80) {
			err = keep_buf_add(out, p, 1);
		} else if (c == '-' || c == '.' || c == '_' || c == '~' ||
			   (c == '/' && keep_slash)) {
			err = keep_buf_add(out, p, 1);
		} else {
			enc[0] = '%';
			enc[1] = hex[c >> 4];
			enc[2] = hex[c & 15];
			err = keep_buf_add(out, enc, 3);
		}
		if (err)
			return err;
	}
	return 0;
}

/* An encoded "name=value" pair, for sorting. */
struct enc_pair {
	char *s;     /* owned: "name=value" */
	size_t nlen; /* bytes of the encoded name */
};

static int cmp_pair(const void *a, const void *b)
{
	const struct enc_pair *x = a, *y = b;
	size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
	int c = memcmp(x->s, y->s, n);

	if (c)
		return c;
	if (x->nlen != y->nlen)
		return x->nlen < y->nlen ? -1 : 1;
	return strcmp(x->s + x->nlen, y->s + y->nlen);
}

int keep_s3_query(struct keep_buf *out, struct keep_s3_param *params, size_t n)
{
	struct enc_pair *pairs;
	struct keep_buf b;
	size_t i, done = 0;
	int err = 0;

	keep_buf_reset(out);
	if (n == 0)
		return 0;
	pairs = calloc(n, sizeof(*pairs));
	if (!pairs)
		return KEEP_ERR_NOMEM;
	for (i = 0; i < n; i++) {
		keep_buf_init(&b, out->max);
		err = keep_s3_pct_encode(&b, params[i].name, false);
		pairs[i].nlen = b.len;
		if (!err)
			err = keep_buf_add(&b, "=", 1);
		if (!err)
			err = keep_s3_pct_encode(&b, params[i].value, false);
		if (err) {
			keep_buf_release(&b);
			goto out_free;
		}
		pairs[i].s = b.data;
		done = i + 1;
	}
	qsort(pairs, n, sizeof(*pairs), cmp_pair);
	for (i = 0; i < n && !err; i++) {
		if (i)
			err = keep_buf_add(out, "&", 1);
		if (!err)
			err = keep_buf_adds(out, pairs[i].s);
	}
out_free:
	for (i = 0; i < done; i++)
		free(pairs[i].s);
	free(pairs);
	if (err)
		keep_buf_reset(out);
	return err;
}

int keep_s3_version_from_etag(const char *etag, size_t n, char *out, size_t outlen)
{
	const char *b = etag, *e = etag + n;

	if (outlen)
		out[0] = '\0';
	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	if (e - b >= 2 && b[0] == 'W' && b[1] == '/')
		b += 2;
	if (e - b >= 2 && b[0] == '"' && e[-1] == '"') {
		b++;
		e--;
	}
	if (b == e)
		return KEEP_ERR_PARSE;
	/* a NUL or control byte would cut the token short or break a header */
	for (const char *p = b; p < e; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return KEEP_ERR_PARSE;
	if ((size_t)(e - b) >= outlen)
		return KEEP_ERR_TOOBIG;
	memcpy(out, b, (size_t)(e - b));
	out[e - b] = '\0';
	return 0;
}

/* ---- XML (expat) -------------------------------------------------------- */

/* Is the code point c allowed by XML 1.0 (Char production)? */
static bool xml_char_ok(unsigned long c)
{
	return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

int keep_s3_xml_sanitize(const char *xml, size_t len, char **out, size_t *outlen, size_t **at,
			 size_t *nat)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, o = 0, cap = 0;
	char *buf = NULL;

	*out = NULL;
	*outlen = 0;
	*at = NULL;
	*nat = 0;
	while (i < len) {
		size_t j, digits = 0;
		unsigned long c = 0;
		bool hexref, big = false;
		char rep[8];
		size_t rn;

		if (xml[i] != '&' || i + 2 >= len || xml[i + 1] != '#') {
			if (buf)
				buf[o++] = xml[i];
			i++;
			continue;
		}
		hexref = xml[i + 2] == 'x';
		for (j = i + (hexref ? 3 : 2); j < len && xml[j] != ';'; j++) {
			int d = -1;
			unsigned char ch = (unsigned char)xml[j];

			if (ch >= '0' && ch <= '9')
				d = ch - '0';
			else if (hexref && ch >= 'a' && ch <= 'f')
				d = ch - 'a' + 10;
			else if (hexref && ch >= 'A' && ch <= 'F')
				d = ch - 'A' + 10;
			if (d < 0)
				break;
			if (c > 0x10ffff)
				big = true;
			else
				c = c * (hexref ? 16 : 10) + (unsigned long)d;
			digits++;
		}
		if (j >= len || xml[j] != ';' || digits == 0 || (!big && xml_char_ok(c))) {
			/* not a reference, or an allowed one: copied as is */
			if (buf)
				buf[o++] = xml[i];
			i++;
			continue;
		}
		/* a forbidden reference &#...; (j at its ';'): rewritten */
		if (big || c > 0xffff)
			rn = (size_t)snprintf(rep, sizeof(rep), "\\u????");
		else if (c < 0x100)
			rn =
			    (size_t)snprintf(rep, sizeof(rep), "\\x%c%c", hex[c >> 4], hex[c & 15]);
		else
			rn = (size_t)snprintf(rep, sizeof(rep), "\\u%c%c%c%c", hex[(c >> 12) & 15],
					      hex[(c >> 8) & 15], hex[(c >> 4) & 15], hex[c & 15]);
		/* a reference is at least as long as its rewrite: "&#0;" vs "\x00",
		 * "&#xFFFE;" vs "\ufffe", "&#x110000;" vs "\u????" */
		if (!buf) {
			buf = malloc(len ? len : 1);
			if (!buf)
				goto nomem;
			memcpy(buf, xml, i);
			o = i;
		}
		if (*nat == cap) {
			size_t n = cap ? cap * 2 : 16, *na = realloc(*at, n * sizeof(*na));
			if (!na)
				goto nomem;
			*at = na;
			cap = n;
		}
		(*at)[(*nat)++] = o;
		memcpy(buf + o, rep, rn);
		o += rn;
		i = j + 1;
	}
	if (buf) {
		*out = buf;
		*outlen = o;
	}
	return 0;
nomem:
	free(buf);
	free(*at);
	*at = NULL;
	*nat = 0;
	return KEEP_ERR_NOMEM;
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int keep_s3_url_decode(const char *in, size_t n, struct keep_buf *out)
{
	size_t i;
	int err;

	keep_buf_reset(out);
	for (i = 0; i < n; i++) {
		char c = in[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return KEEP_ERR_PARSE;
			hi = hexdigit(in[i + 1]);
			lo = hexdigit(in[i + 2]);
			if (hi < 0 || lo < 0)
				return KEEP_ERR_PARSE;
			c = (char)(hi * 16 + lo);
			i += 2;
		} else if (c == '+') {
			c = ' '; /* AWS encodes a space as '+' (and a '+' as %2B) */
		}
		err = keep_buf_add(out, &c, 1);
		if (err)
			return err;
	}
	if (!out->data)
		return keep_buf_add(out, "", 0);
	return 0;
}

/* Where the parser is; only the few elements we read are tracked. */
enum xml_at {
	AT_NONE,
	AT_KEY,	    /* ListBucketResult/Contents/Key */
	AT_ETAG,    /* ListBucketResult/Contents/ETag */
	AT_SIZE,    /* ListBucketResult/Contents/Size */
	AT_TRUNC,   /* ListBucketResult/IsTruncated */
	AT_NEXT,    /* ListBucketResult/NextContinuationToken */
	AT_ENCTYPE, /* ListBucketResult/EncodingType */
	AT_CODE,    /* Error/Code */
};

/* One <Contents> as sent: decoded and judged once the page is read (the
 * page says whether keys are URL-encoded, anywhere in it). */
struct raw_entry {
	char *key, *etag; /* owned, NUL-terminated (key may hold a NUL: keylen) */
	size_t keylen, etaglen;
	long long size; /* -1 when absent or unreadable */
};

struct xml_state {
	XML_Parser p;
	int depth;
	bool is_list;	  /* root is ListBucketResult */
	bool is_error;	  /* root is Error */
	bool in_contents; /* inside a Contents element (depth 2) */
	enum xml_at at;
	struct keep_buf text; /* text of the current tracked element */
	struct keep_buf key, etag, size;
	bool have_key, have_etag, have_size;
	/* results */
	int err;
	bool collect; /* a listing page: keep the Contents */
	struct raw_entry *raw;
	size_t nraw, rawalloc;
	bool truncated;
	struct keep_buf next;
	bool have_next;
	size_t next_from, next_to; /* byte offsets of the token's element */
	struct keep_buf enctype;
	struct keep_buf code;
};

static void xml_fail(struct xml_state *x, int err)
{
	if (!x->err)
		x->err = err;
	XML_StopParser(x->p, XML_FALSE);
}

static void XMLCALL xml_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	struct xml_state *x = ud;

	(void)attrs;
	x->depth++;
	x->at = AT_NONE;
	keep_buf_reset(&x->text);
	if (x->depth == 1) {
		x->is_list = strcmp(name, "ListBucketResult") == 0;
		x->is_error = strcmp(name, "Error") == 0;
	} else if (x->depth == 2 && x->is_list) {
		if (strcmp(name, "Contents") == 0) {
			x->in_contents = true;
			x->have_key = x->have_etag = x->have_size = false;
			keep_buf_reset(&x->key);
			keep_buf_reset(&x->etag);
			keep_buf_reset(&x->size);
		} else if (strcmp(name, "IsTruncated") == 0) {
			x->at = AT_TRUNC;
		} else if (strcmp(name, "NextContinuationToken") == 0) {
			x->at = AT_NEXT;
			x->next_from = (size_t)XML_GetCurrentByteIndex(x->p);
		} else if (strcmp(name, "EncodingType") == 0) {
			x->at = AT_ENCTYPE;
		}
	} else if (x->depth == 2 && x->is_error) {
		if (strcmp(name, "Code") == 0)
			x->at = AT_CODE;
	} else if (x->depth == 3 && x->in_contents) {
		if (strcmp(name, "Key") == 0)
			x->at = AT_KEY;
		else if (strcmp(name, "ETag") == 0)
			x->at = AT_ETAG;
		else if (strcmp(name, "Size") == 0)
			x->at = AT_SIZE;
	}
}

static void XMLCALL xml_text(void *ud, const XML_Char *s, int len)
{
	struct xml_state *x = ud;

	if (x->at == AT_NONE || len <= 0)
		return;
	if (keep_buf_add(&x->text, s, (size_t)len))
		xml_fail(x, KEEP_ERR_PARSE);
}

static int xml_copy(struct keep_buf *dst, const struct keep_buf *src)
{
	keep_buf_reset(dst);
	if (keep_buf_add(dst, keep_buf_str(src), src->len))
		return KEEP_ERR_PARSE;
	if (!dst->data)
		return keep_buf_add(dst, "", 0) ? KEEP_ERR_PARSE : 0;
	return 0;
}

static char *xml_dup(const struct keep_buf *b)
{
	char *p = malloc(b->len + 1);

	if (p) {
		if (b->len)
			memcpy(p, b->data, b->len);
		p[b->len] = '\0';
	}
	return p;
}

/* A Contents element ended: keep it for the page's judgement. */
static void xml_end_contents(struct xml_state *x)
{
	struct raw_entry *e;

	if (!x->collect)
		return; /* parsing an error document only */
	if (!x->have_key) {
		xml_fail(x, KEEP_ERR_PARSE); /* not a listing entry at all */
		return;
	}
	if (x->nraw >= KEEP_LIST_MAX) {
		xml_fail(x, KEEP_ERR_TOOBIG);
		return;
	}
	if (x->nraw == x->rawalloc) {
		size_t n = x->rawalloc ? x->rawalloc * 2 : 64;
		e = realloc(x->raw, n * sizeof(*e));
		if (!e) {
			xml_fail(x, KEEP_ERR_NOMEM);
			return;
		}
		x->raw = e;
		x->rawalloc = n;
	}
	e = &x->raw[x->nraw];
	e->key = xml_dup(&x->key);
	e->keylen = x->key.len;
	e->etag = x->have_etag ? xml_dup(&x->etag) : NULL;
	e->etaglen = x->have_etag ? x->etag.len : 0;
	e->size = -1;
	if (x->have_size) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(keep_buf_str(&x->size), &end, 10);
		if (!errno && end != keep_buf_str(&x->size) && !*end && v >= 0)
			e->size = v;
	}
	if (!e->key || (x->have_etag && !e->etag)) {
		free(e->key);
		free(e->etag);
		xml_fail(x, KEEP_ERR_NOMEM);
		return;
	}
	x->nraw++;
}

static void XMLCALL xml_end(void *ud, const XML_Char *name)
{
	struct xml_state *x = ud;
	int err = 0;

	(void)name;
	switch (x->at) {
	case AT_KEY:
		err = xml_copy(&x->key, &x->text);
		x->have_key = true;
		break;
	case AT_ETAG:
		err = xml_copy(&x->etag, &x->text);
		x->have_etag = true;
		break;
	case AT_SIZE:
		err = xml_copy(&x->size, &x->text);
		x->have_size = true;
		break;
	case AT_TRUNC:
		x->truncated = strcmp(keep_buf_str(&x->text), "true") == 0;
		break;
	case AT_NEXT:
		err = xml_copy(&x->next, &x->text);
		x->have_next = true;
		x->next_to = (size_t)XML_GetCurrentByteIndex(x->p);
		break;
	case AT_ENCTYPE:
		err = xml_copy(&x->enctype, &x->text);
		break;
	case AT_CODE:
		err = xml_copy(&x->code, &x->text);
		break;
	case AT_NONE:
		break;
	}
	x->at = AT_NONE;
	keep_buf_reset(&x->text);
	if (err) {
		xml_fail(x, err);
		return;
	}
	if (x->depth == 2 && x->in_contents) {
		x->in_contents = false;
		xml_end_contents(x);
	}
	x->depth--;
}

static void xml_state_init(struct xml_state *x)
{
	memset(x, 0, sizeof(*x));
	keep_buf_init(&x->text, S3_XML_TEXT_MAX);
	keep_buf_init(&x->key, S3_XML_TEXT_MAX);
	keep_buf_init(&x->etag, S3_XML_TEXT_MAX);
	keep_buf_init(&x->size, 64);
	keep_buf_init(&x->next, S3_TOKEN_MAX);
	keep_buf_init(&x->enctype, 64);
	keep_buf_init(&x->code, S3_CODE_MAX);
}

static void xml_state_release(struct xml_state *x)
{
	size_t i;

	for (i = 0; i < x->nraw; i++) {
		free(x->raw[i].key);
		free(x->raw[i].etag);
	}
	free(x->raw);
	keep_buf_release(&x->text);
	keep_buf_release(&x->key);
	keep_buf_release(&x->etag);
	keep_buf_release(&x->size);
	keep_buf_release(&x->next);
	keep_buf_release(&x->enctype);
	keep_buf_release(&x->code);
}

/* Run expat over xml with x's handlers. 0 or KEEP_ERR_* (x->err first). */
static int xml_run(struct xml_state *x, const char *xml, size_t len)
{
	int rc = 0;

	if (len > INT32_MAX)
		return KEEP_ERR_TOOBIG;
	x->p = XML_ParserCreate(NULL);
	if (!x->p)
		return KEEP_ERR_NOMEM;
	XML_SetUserData(x->p, x);
	XML_SetElementHandler(x->p, xml_start, xml_end);
	XML_SetCharacterDataHandler(x->p, xml_text);
	if (XML_Parse(x->p, xml, (int)len, XML_TRUE) != XML_STATUS_OK)
		rc = x->err ? x->err : KEEP_ERR_PARSE;
	XML_ParserFree(x->p);
	x->p = NULL;
	return rc;
}

/* Judge one entry of a parsed page: listed in out, skipped (named), or
 * ignored (a folder marker). 0 or KEEP_ERR_NOMEM / KEEP_ERR_TOOBIG. */
static int judge_entry(const struct raw_entry *e, bool url, const char *strip, size_t striplen,
		       struct keep_buf *dec, struct keep_list *out)
{
	char version[KEEP_VERSION_MAX];
	const char *key = e->key, *rel;
	size_t keylen = e->keylen, rellen;
	int err;

	if (url) {
		err = keep_s3_url_decode(e->key, e->keylen, dec);
		if (err == KEEP_ERR_NOMEM)
			return err;
		if (err) {
			keep_list_skip(out, e->key, e->keylen, "bad URL encoding");
			return 0;
		}
		key = dec->data;
		keylen = dec->len;
	}
	/* a folder marker (what consoles and `put-object --key dir/` make)
	 * carries no data: not an entry, not reported (docs/formats.md) */
	if (keylen && key[keylen - 1] == '/' && e->size == 0)
		return 0;
	rel = key;
	rellen = keylen;
	if (striplen && (keylen < striplen || memcmp(key, strip, striplen) != 0)) {
		keep_list_skip(out, key, keylen, "not under the store's prefix");
		return 0;
	}
	rel += striplen;
	rellen -= striplen;
	if (memchr(rel, '\0', rellen) || !keep_key_valid(rel)) {
		keep_list_skip(out, rel, rellen, "not a key keep can use");
		return 0;
	}
	if (!e->etag ||
	    keep_s3_version_from_etag(e->etag, e->etaglen, version, sizeof(version)) != 0) {
		keep_list_skip(out, rel, rellen, "no readable ETag");
		return 0;
	}
	return keep_list_add(out, rel, version);
}

int keep_s3_parse_list(const char *xml, size_t len, const char *strip, struct keep_list *out,
		       bool *truncated, char *token, size_t tokenlen, char *start_after,
		       size_t salen)
{
	struct xml_state x;
	struct keep_buf dec;
	char *clean = NULL;
	size_t cleanlen = 0, *at = NULL, nat = 0, striplen, i;
	bool url, token_ok;
	int rc;

	*truncated = false;
	if (tokenlen)
		token[0] = '\0';
	if (salen)
		start_after[0] = '\0';
	rc = keep_s3_xml_sanitize(xml, len, &clean, &cleanlen, &at, &nat);
	if (rc)
		return rc;
	if (clean) {
		xml = clean;
		len = cleanlen;
	}
	xml_state_init(&x);
	x.collect = true;
	strip = strip ? strip : "";
	striplen = strlen(strip);
	keep_buf_init(&dec, S3_XML_TEXT_MAX);
	rc = xml_run(&x, xml, len);
	if (!rc && !x.is_list)
		rc = KEEP_ERR_PARSE;
	url = strcmp(keep_buf_str(&x.enctype), "url") == 0;
	for (i = 0; !rc && i < x.nraw; i++)
		rc = judge_entry(&x.raw[i], url, strip, striplen, &dec, out);
	if (!rc && x.truncated) {
		/* the next page: after NextContinuationToken as sent, unless the
		 * server put a reference XML forbids in it (RGW sends the raw
		 * last key, &#x01; and all); then StartAfter the page's last
		 * key, when it is exact (URL-encoded pages only) */
		token_ok = x.have_next && x.next.len > 0 && x.next.len < tokenlen;
		for (i = 0; token_ok && i < nat; i++)
			if (at[i] >= x.next_from && at[i] < x.next_to)
				token_ok = false;
		if (token_ok) {
			memcpy(token, x.next.data, x.next.len + 1);
		} else if (url && x.nraw > 0 &&
			   keep_s3_url_decode(x.raw[x.nraw - 1].key, x.raw[x.nraw - 1].keylen,
					      &dec) == 0 &&
			   dec.len > 0 && dec.len < salen && !memchr(dec.data, '\0', dec.len)) {
			memcpy(start_after, dec.data, dec.len + 1);
		} else {
			rc = KEEP_ERR_PARSE;
		}
	}
	if (!rc)
		*truncated = x.truncated;
	keep_buf_release(&dec);
	xml_state_release(&x);
	free(clean);
	free(at);
	return rc;
}

bool keep_s3_error_code(const char *xml, size_t len, char *code, size_t codelen)
{
	struct xml_state x;
	bool found = false;

	if (codelen)
		code[0] = '\0';
	if (len == 0 || codelen == 0)
		return false;
	xml_state_init(&x);
	if (xml_run(&x, xml, len) == 0 && x.is_error && x.code.len > 0 && x.code.len < codelen) {
		memcpy(code, x.code.data, x.code.len + 1);
		found = true;
	}
	xml_state_release(&x);
	return found;
}

/* ---- classification ----------------------------------------------------- */

enum keep_outcome keep_s3_classify(enum keep_s3_op op, enum keep_cond cond, long status,
				   const char *code)
{
	bool writes = op == KEEP_S3_PUT || op == KEEP_S3_DEL;

	if (!code)
		code = "";
	if (status >= 200 && status < 300)
		return KEEP_STORE_OK;
	if (status < 200 || status >= 500)
		return KEEP_STORE_AMBIGUOUS; /* none, 1xx, 5xx: may have landed */
	if (strcmp(code, "NoSuchBucket") == 0)
		return KEEP_STORE_REFUSED;
	if (status == 412 || status == 409)
		return writes ? KEEP_STORE_CONFLICT : KEEP_STORE_REFUSED;
	if (status == 404) {
		if (op == KEEP_S3_PUT)
			return cond == KEEP_COND_IF_MATCH ? KEEP_STORE_CONFLICT
							  : KEEP_STORE_REFUSED;
		if (op == KEEP_S3_LIST)
			return KEEP_STORE_REFUSED;
		return KEEP_STORE_NOT_FOUND;
	}
	if (status == 408 || status == 429)
		return KEEP_STORE_AMBIGUOUS; /* timed out / throttled: retry later */
	return KEEP_STORE_REFUSED;	     /* 3xx, 400, 403, other 4xx */
}

/* ---- credentials: keep_s3_creds_read and _release are in awscreds.c ----- */

/* ---- the backend ------------------------------------------------------- */

struct s3 {
	CURL *h;		    /* one easy handle: keep-alive across requests */
	char *base;		    /* URL up to the bucket: scheme://host[:port]/bucket or
				       scheme://bucket.host[:port] */
	bool virtual_host;	    /* virtual-host addressing (base has no /bucket) */
	char *prefix;		    /* "" or "p/" (with the slash) */
	char *sigv4;		    /* "aws:amz:REGION:s3" */
	struct keep_awscreds *src;  /* where credentials come from (awscreds.h) */
	struct keep_s3_creds creds; /* owned secrets: src's current ones */
	uint64_t creds_serial;	    /* of creds, for keep_awscreds_get */
	bool insecure;		    /* TLS verification off (loopback endpoint only) */
	bool loopback;		    /* endpoint host is 127.0.0.1, ::1 or localhost */
	char errbuf[CURL_ERROR_SIZE];
	struct keep_buf resp; /* reply body of the last request */
	size_t resp_max;      /* bound for the current request */
	bool resp_toobig;     /* the reply body went over resp_max */
	bool had_conn;	      /* the last request left a kept-alive connection */
	/* the handle's open sockets (sockopt_cb adds, close_cb removes), for
	 * quickack(); -1 = free slot */
	curl_socket_t socks[S3_SOCKS_MAX];
};

static struct s3 *S3(struct keep_store *s)
{
	return s->impl;
}

/* Ask for the ACK of what just arrived to go out now, on every socket of
 * the handle (one in practice). A server that writes a reply's headers and
 * body in two sends, without TCP_NODELAY (RGW's default), holds the body
 * back until the first segment is ACKed: with Linux's delayed ACK on a
 * kept-alive connection, ~40 ms a request. TCP_QUICKACK set while an ACK
 * is pending sends it at once (docs/performance.md "Kept-alive S3
 * requests"). Harmless on an idle socket. */
static void quickack(struct s3 *s)
{
#ifdef TCP_QUICKACK
	int one = 1;
	size_t i;

	if (!keep_s3_quickack)
		return;
	for (i = 0; i < S3_SOCKS_MAX; i++)
		if (s->socks[i] != CURL_SOCKET_BAD)
			setsockopt(s->socks[i], IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
#else
	(void)s;
#endif
}

static int sockopt_cb(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	struct s3 *s = ud;
	size_t i;

	(void)purpose;
	for (i = 0; i < S3_SOCKS_MAX; i++)
		if (s->socks[i] == CURL_SOCKET_BAD) {
			s->socks[i] = fd;
			break;
		}
	return CURL_SOCKOPT_OK;
}

static int close_cb(void *ud, curl_socket_t fd)
{
	struct s3 *s = ud;
	size_t i;

	for (i = 0; i < S3_SOCKS_MAX; i++)
		if (s->socks[i] == fd)
			s->socks[i] = CURL_SOCKET_BAD;
	return close(fd);
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	(void)p;
	quickack(ud);
	return size * n;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
	struct s3 *s = ud;
	size_t len = size * n;

	quickack(s);
	if (s->resp.len + len > s->resp_max || keep_buf_add(&s->resp, p, len)) {
		s->resp_toobig = true;
		return 0; /* CURLE_WRITE_ERROR */
	}
	return len;
}

/* One HTTP exchange. */
struct s3_req {
	enum keep_s3_op op;
	const char *method; /* GET HEAD PUT DELETE */
	const char *url;
	const void *body; /* PUT only */
	size_t len;
	enum keep_cond cond;
	const char *if_match;	      /* version token (unquoted), or NULL */
	size_t resp_max;	      /* bytes of reply body accepted */
	const struct keep_meta *meta; /* PUT: user metadata sent (x-amz-meta-*), or NULL */
	struct keep_meta *meta_out;   /* GET: the reply's user metadata, or NULL */
};

struct s3_res {
	CURLcode cc;
	long status;
	char code[S3_CODE_MAX]; /* S3 error Code, or "" */
	char etag[KEEP_VERSION_MAX];
	int etag_err;	  /* keep_s3_version_from_etag's result; KEEP_ERR_PARSE if absent */
	bool reconnected; /* a kept-alive connection existed, yet a new one was made */
	bool no_creds;	  /* not sent: no valid credentials (why in errbuf) */
};

static void sha256_hex(const void *p, size_t n, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (!EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
		/* cannot happen with a working libcrypto; the server will refuse */
		memcpy(out, "UNSIGNED-PAYLOAD", 17);
		return;
	}
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Append a header line "name: value" to *list. */
static int add_header(struct curl_slist **list, const char *name, const char *value)
{
	struct keep_buf b;
	struct curl_slist *l;
	int err;

	keep_buf_init(&b, 16384);
	err = keep_buf_addf(&b, "%s: %s", name, value);
	if (!err) {
		l = curl_slist_append(*list, b.data);
		if (l)
			*list = l;
		else
			err = KEEP_ERR_NOMEM;
	}
	OPENSSL_cleanse(b.data, b.alloc);
	keep_buf_release(&b);
	return err;
}

/* The user metadata of the last reply on c (x-amz-meta-NAME: VALUE) into
 * m (emptied by the caller): names lowercased; a pair keep_meta_add
 * refuses (an odd name, a value with a control byte or over 511 bytes) is
 * left out, and so is any pair past KEEP_META_MAX. */
static void reply_meta(CURL *c, struct keep_meta *m)
{
	struct curl_header *h = NULL;
	static const char pre[] = "x-amz-meta-";
	char name[KEEP_META_NAME_MAX];
	size_t i, n;

	while ((h = curl_easy_nextheader(c, CURLH_HEADER, -1, h)) != NULL) {
		if (!h->name || !h->value || strncasecmp(h->name, pre, sizeof(pre) - 1) != 0)
			continue;
		n = strlen(h->name + sizeof(pre) - 1);
		if (n == 0 || n >= sizeof(name))
			continue;
		for (i = 0; i < n; i++)
			name[i] = (char)tolower((unsigned char)h->name[sizeof(pre) - 1 + i]);
		name[n] = '\0';
		keep_meta_add(m, name, h->value);
	}
}

/* Perform rq once within timeout_ms. Returns 0 (res filled), or a negative
 * keep_err when the request could not be set up (nothing sent). */
static int s3_perform(struct s3 *s, const struct s3_req *rq, int64_t timeout_ms, struct s3_res *res)
{
	struct curl_slist *hdrs = NULL;
	struct curl_header *h = NULL;
	char sha[65];
	CURL *c = s->h;
	int err = 0;

	memset(res, 0, sizeof(*res));
	res->etag_err = KEEP_ERR_PARSE;
	keep_buf_reset(&s->resp);
	s->resp_max = rq->resp_max < S3_ERROR_BODY_MAX ? S3_ERROR_BODY_MAX : rq->resp_max;
	s->resp_toobig = false;
	s->errbuf[0] = '\0';

	/* temporary credentials are fetched again before they expire */
	if (s->src && keep_awscreds_get(s->src, keep_wall_ms(), &s->creds, &s->creds_serial,
					s->errbuf, sizeof(s->errbuf)) != 0) {
		res->no_creds = true;
		return 0;
	}
	sha256_hex(rq->body ? rq->body : "", rq->body ? rq->len : 0, sha);
	err = add_header(&hdrs, "x-amz-content-sha256", sha);
	if (!err && s->creds.token && *s->creds.token)
		err = add_header(&hdrs, "x-amz-security-token", s->creds.token);
	if (!err && rq->op == KEEP_S3_PUT) {
		err = add_header(&hdrs, "Content-Type", "application/octet-stream");
		if (!err && rq->cond == KEEP_COND_IF_NONE_MATCH)
			err = add_header(&hdrs, "If-None-Match", "*"); /* unquoted: a wildcard */
		else if (!err && rq->cond == KEEP_COND_IF_MATCH)
			err = add_header(&hdrs, "If-Match", rq->if_match); /* unquoted: RGW 16.2 */
		for (size_t i = 0; !err && rq->meta && i < rq->meta->n; i++) {
			char name[KEEP_META_NAME_MAX + 16];

			snprintf(name, sizeof(name), "x-amz-meta-%s", rq->meta->v[i].name);
			err = add_header(&hdrs, name, rq->meta->v[i].value);
		}
	} else if (!err && rq->op == KEEP_S3_DEL && rq->if_match) {
		err = add_header(&hdrs, "If-Match", rq->if_match);
	}
	if (err)
		goto out;

	curl_easy_reset(c); /* keeps the live connection */
	curl_easy_setopt(c, CURLOPT_URL, rq->url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "keep-s3/1");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(
	    c, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(timeout_ms < S3_CONNECT_TIMEOUT_MS ? timeout_ms : S3_CONNECT_TIMEOUT_MS));
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, s->insecure ? 0L : 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, s->insecure ? 0L : 2L);
	if (s->loopback)
		curl_easy_setopt(c, CURLOPT_PROXY, ""); /* never through a proxy */
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(c, CURLOPT_USERNAME, s->creds.access_key);
	curl_easy_setopt(c, CURLOPT_PASSWORD, s->creds.secret_key);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
	curl_easy_setopt(c, CURLOPT_SOCKOPTDATA, s);
	curl_easy_setopt(c, CURLOPT_CLOSESOCKETFUNCTION, close_cb);
	curl_easy_setopt(c, CURLOPT_CLOSESOCKETDATA, s);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L); /* our requests go out whole, at once */
	if (rq->op == KEEP_S3_HEAD) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (rq->op == KEEP_S3_PUT) {
		/* POSTFIELDS under a PUT method: curl sends the bytes with a
		 * Content-Length and no "Expect: 100-continue" (bodies are at
		 * most KEEP_BODY_MAX, under curl's 1 MiB threshold). */
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->len ? rq->body : "");
	} else if (rq->op == KEEP_S3_DEL) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);

	res->cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->status);
	/* libcurl silently re-sends a request on a fresh connection when a
	 * reused one gave back nothing (Curl_retry_request); it may also just
	 * have found the old one dead before sending. We cannot tell which, so
	 * remember that it happened: a conflict then may answer our own first
	 * copy of the request (s3_request makes it ambiguous). */
	{
		long nconn = 0;
		curl_socket_t sock = CURL_SOCKET_BAD;

		curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &nconn);
		res->reconnected = s->had_conn && nconn > 0;
		if (curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK)
			sock = CURL_SOCKET_BAD;
		s->had_conn = sock != CURL_SOCKET_BAD;
	}
	if (res->status >= 200 && res->status < 300 &&
	    curl_easy_header(c, "ETag", 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h->value)
		res->etag_err = keep_s3_version_from_etag(h->value, strlen(h->value), res->etag,
							  sizeof(res->etag));
	if (res->status >= 300 && s->resp.len)
		keep_s3_error_code(s->resp.data, s->resp.len, res->code, sizeof(res->code));
	if (rq->meta_out) {
		keep_meta_init(rq->meta_out);
		if (res->status >= 200 && res->status < 300)
			reply_meta(c, rq->meta_out);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
out:
	curl_slist_free_all(hdrs); /* holds the token: curl copies nothing secret we keep */
	return err;
}

/* A reset of a kept-alive connection: safe to retry a read once. */
static bool is_reset(CURLcode cc)
{
	return cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING;
}

/* Run rq (a read retries once after a reset) and classify its result into
 * reply. Returns 0 or a negative keep_err (nothing sent). */
static int s3_request(struct keep_store *st, const struct s3_req *rq, struct s3_res *res,
		      struct keep_reply *reply)
{
	struct s3 *s = S3(st);
	int64_t timeout_ms = st->timeout_ms > 0 ? st->timeout_ms : S3_DEFAULT_TIMEOUT_MS;
	int64_t start = mono_ms(), left;
	bool read = rq->op == KEEP_S3_GET || rq->op == KEEP_S3_HEAD || rq->op == KEEP_S3_LIST;
	enum keep_outcome o;
	int err;

	err = s3_perform(s, rq, timeout_ms, res);
	if (err)
		return err;
	if (res->no_creds) { /* nothing sent: safe, like a connection refused */
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "%s", s->errbuf);
		return 0;
	}
	if (read && is_reset(res->cc)) {
		left = timeout_ms - (mono_ms() - start);
		if (left > 0) {
			err = s3_perform(s, rq, left, res);
			if (err)
				return err;
		}
	}

	if (res->cc == CURLE_WRITE_ERROR && s->resp_toobig && res->status >= 200 &&
	    res->status < 300) {
		if (rq->op == KEEP_S3_GET)
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)res->status,
				       "object larger than %d bytes: no object of keep's",
				       KEEP_BODY_MAX);
		else
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)res->status,
				       "reply larger than %zu bytes", rq->resp_max);
		reply->not_ours = rq->op == KEEP_S3_GET;
		return 0;
	}
	if (res->cc != CURLE_OK && !(s->resp_toobig && res->status >= 300)) {
		/* no complete answer: may or may not have landed */
		if (res->cc == CURLE_OPERATION_TIMEDOUT)
			keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0,
				       "timed out after %lld ms (curl %d: %s)",
				       (long long)timeout_ms, (int)res->cc,
				       s->errbuf[0] ? s->errbuf : curl_easy_strerror(res->cc));
		else
			keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "curl %d: %s", (int)res->cc,
				       s->errbuf[0] ? s->errbuf : curl_easy_strerror(res->cc));
		return 0;
	}
	o = keep_s3_classify(rq->op, rq->cond, res->status, res->code);
	if (o == KEEP_STORE_CONFLICT && res->reconnected) {
		/* maybe libcurl's own re-send failing on our first copy: the
		 * store layer never reports a conflict after a retry */
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, (int)res->status,
			       "%ld %s after a reconnect (the request may have been sent twice)",
			       res->status, res->code[0] ? res->code : "conflict");
		return 0;
	}
	if (o == KEEP_STORE_OK) {
		keep_reply_set(reply, o, (int)res->status, NULL);
		return 0;
	}
	if ((res->status == 401 || res->status == 403) && s->src)
		keep_reply_set(reply, o, (int)res->status, "%ld %s (credentials from %s)",
			       res->status, res->code[0] ? res->code : "Forbidden",
			       keep_awscreds_source(s->src));
	else if (res->code[0])
		keep_reply_set(reply, o, (int)res->status, "%ld %s", res->status, res->code);
	else
		keep_reply_set(reply, o, (int)res->status, "HTTP %ld", res->status);
	/* 503 SlowDown, 429: a state of the store, beside the outcome (issue 28) */
	reply->throttled = keep_throttle_reply(res->status, res->code);
	return 0;
}

/* The URL of key: base + "/" + encode(prefix + key), '/' kept. */
static int object_url(struct s3 *s, const char *key, struct keep_buf *url)
{
	int err;

	keep_buf_init(url, 4 * KEEP_KEY_MAX + 1024);
	err = keep_buf_adds(url, s->base);
	if (!err)
		err = keep_buf_add(url, "/", 1);
	if (!err)
		err = keep_s3_pct_encode(url, s->prefix, true);
	if (!err)
		err = keep_s3_pct_encode(url, key, true);
	if (err)
		keep_buf_release(url);
	return err;
}

/* Set an OK reply's version from res; a missing or oversized ETag makes the
 * answer AMBIGUOUS (a write may have landed) or REFUSED (a read). */
static void reply_version(struct keep_reply *reply, const struct s3_res *res, bool write)
{
	if (reply->outcome != KEEP_STORE_OK)
		return;
	if (res->etag_err) {
		keep_reply_set(reply, write ? KEEP_STORE_AMBIGUOUS : KEEP_STORE_REFUSED,
			       (int)res->status, "%s ETag in the %ld reply",
			       res->etag_err == KEEP_ERR_TOOBIG ? "oversized" : "no", res->status);
		return;
	}
	memcpy(reply->version, res->etag, strlen(res->etag) + 1);
}

static int s3_get_meta(struct keep_store *st, const char *key, struct keep_buf *body,
		       struct keep_meta *meta, struct keep_reply *reply)
{
	struct s3 *s = S3(st);
	struct keep_buf url;
	struct s3_req rq = {
	    .op = KEEP_S3_GET, .method = "GET", .resp_max = KEEP_BODY_MAX, .meta_out = meta};
	struct s3_res res;
	int err;

	err = object_url(s, key, &url);
	if (err)
		return err;
	rq.url = url.data;
	err = s3_request(st, &rq, &res, reply);
	keep_buf_release(&url);
	if (err)
		return err;
	keep_buf_reset(body);
	reply_version(reply, &res, false);
	if (reply->outcome == KEEP_STORE_OK && s->resp.len) {
		err = keep_buf_add(body, s->resp.data, s->resp.len);
		if (err == KEEP_ERR_TOOBIG) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)res.status,
				       "object of %zu bytes is larger than the buffer (%zu bytes)",
				       s->resp.len, body->max);
			err = 0;
		}
	}
	return err;
}

static int s3_get(struct keep_store *st, const char *key, struct keep_buf *body,
		  struct keep_reply *reply)
{
	return s3_get_meta(st, key, body, NULL, reply);
}

static int s3_head(struct keep_store *st, const char *key, struct keep_reply *reply)
{
	struct s3 *s = S3(st);
	struct keep_buf url;
	struct s3_req rq = {.op = KEEP_S3_HEAD, .method = "HEAD"};
	struct s3_res res;
	int err;

	err = object_url(s, key, &url);
	if (err)
		return err;
	rq.url = url.data;
	err = s3_request(st, &rq, &res, reply);
	keep_buf_release(&url);
	if (!err)
		reply_version(reply, &res, false);
	return err;
}

static int s3_put_meta(struct keep_store *st, const char *key, const void *body, size_t len,
		       enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
		       struct keep_reply *reply)
{
	struct s3 *s = S3(st);
	struct keep_buf url;
	struct s3_req rq = {.op = KEEP_S3_PUT,
			    .method = "PUT",
			    .body = body,
			    .len = len,
			    .cond = cond,
			    .meta = meta};
	struct s3_res res;
	char tok[KEEP_VERSION_MAX];
	int err;

	if (len > KEEP_BODY_MAX || (len && !body))
		return KEEP_ERR_INVAL;
	if (cond == KEEP_COND_IF_MATCH) {
		/* send the token unquoted, whatever the caller holds */
		if (!if_match ||
		    keep_s3_version_from_etag(if_match, strlen(if_match), tok, sizeof(tok)))
			return KEEP_ERR_INVAL;
		if (strpbrk(tok, "\r\n"))
			return KEEP_ERR_INVAL;
		rq.if_match = tok;
	}
	err = object_url(s, key, &url);
	if (err)
		return err;
	rq.url = url.data;
	err = s3_request(st, &rq, &res, reply);
	keep_buf_release(&url);
	if (!err)
		reply_version(reply, &res, true);
	return err;
}

static int s3_put(struct keep_store *st, const char *key, const void *body, size_t len,
		  enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	return s3_put_meta(st, key, body, len, cond, if_match, NULL, reply);
}

static int s3_del(struct keep_store *st, const char *key, const char *if_match,
		  struct keep_reply *reply)
{
	struct s3 *s = S3(st);
	struct keep_buf url;
	struct s3_req rq = {.op = KEEP_S3_DEL, .method = "DELETE"};
	struct s3_res res;
	char tok[KEEP_VERSION_MAX];
	int err;

	if (if_match) {
		if (keep_s3_version_from_etag(if_match, strlen(if_match), tok, sizeof(tok)) ||
		    strpbrk(tok, "\r\n"))
			return KEEP_ERR_INVAL;
		rq.if_match = tok;
		rq.cond = KEEP_COND_IF_MATCH;
	}
	err = object_url(s, key, &url);
	if (err)
		return err;
	rq.url = url.data;
	err = s3_request(st, &rq, &res, reply);
	keep_buf_release(&url);
	return err;
}

/* The max-keys of a listing page, as query text: "" (the server's
 * default, 1000 keys) except in fault-injection builds, where
 * $KEEP_S3_MAX_KEYS (1..1000) asks for smaller pages, so that tests reach
 * many pages with few objects (docs/testing.md). A bad value is ignored. */
static void list_max_keys(char *out, size_t n)
{
	out[0] = '\0';
#ifdef KEEP_FAULT_INJECTION
	{
		const char *v = getenv("KEEP_S3_MAX_KEYS");
		char *end;
		long k;

		if (!v || !*v)
			return;
		errno = 0;
		k = strtol(v, &end, 10);
		if (!errno && !*end && k >= 1 && k <= 1000)
			snprintf(out, n, "%ld", k);
	}
#else
	(void)n;
#endif
}

static int s3_list(struct keep_store *st, const char *prefix, struct keep_list *out,
		   struct keep_reply *reply)
{
	struct s3 *s = S3(st);
	struct keep_list page;
	struct keep_buf full, query, url;
	struct keep_s3_param params[5];
	char max_keys[8];
	struct s3_req rq = {.op = KEEP_S3_LIST, .method = "GET", .resp_max = S3_LIST_PAGE_MAX};
	struct s3_res res;
	char *token, *after, *prev;
	bool truncated = true;
	size_t pages = 0, i;
	int err;

	keep_list_init(&page);
	keep_buf_init(&full, 2 * KEEP_KEY_MAX + 2);
	keep_buf_init(&query, 16 * KEEP_KEY_MAX + 4 * S3_TOKEN_MAX);
	keep_buf_init(&url, 16 * KEEP_KEY_MAX + 4 * S3_TOKEN_MAX + 1024);
	/* the cursor of the next page: a continuation token, or a StartAfter
	 * key when the token cannot be sent back (keep_s3_parse_list); prev
	 * is the last one sent, "T..." or "S...", to see that it advances */
	token = calloc(3, S3_TOKEN_MAX + 1);
	if (!token) {
		err = KEEP_ERR_NOMEM;
		goto out;
	}
	after = token + S3_TOKEN_MAX + 1;
	prev = after + S3_TOKEN_MAX + 1;
	err = keep_buf_adds(&full, s->prefix);
	if (!err)
		err = keep_buf_adds(&full, prefix);
	if (!err && !full.data)
		err = keep_buf_add(&full, "", 0);
	if (err)
		goto out;
	list_max_keys(max_keys, sizeof(max_keys));

	while (truncated) {
		size_t np = 0;

		if (++pages > S3_LIST_PAGES_MAX) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "listing longer than %d pages",
				       S3_LIST_PAGES_MAX);
			goto out;
		}
		if (token[0])
			params[np++] = (struct keep_s3_param){"continuation-token", token};
		else if (after[0])
			params[np++] = (struct keep_s3_param){"start-after", after};
		/* keys come URL-encoded: a key with a byte XML 1.0 cannot carry
		 * (0x01..0x1f) would make the whole page unparsable */
		params[np++] = (struct keep_s3_param){"encoding-type", "url"};
		params[np++] = (struct keep_s3_param){"list-type", "2"};
		if (full.len)
			params[np++] = (struct keep_s3_param){"prefix", full.data};
		if (max_keys[0])
			params[np++] = (struct keep_s3_param){"max-keys", max_keys};
		err = keep_s3_query(&query, params, np);
		keep_buf_reset(&url);
		if (!err)
			err = keep_buf_addf(&url, "%s%s?%s", s->base, s->virtual_host ? "/" : "",
					    keep_buf_str(&query));
		if (err)
			goto out;
		rq.url = url.data;
		err = s3_request(st, &rq, &res, reply);
		if (err || reply->outcome != KEEP_STORE_OK)
			goto out;
		snprintf(prev, S3_TOKEN_MAX + 1, "%c%s", token[0] ? 'T' : 'S',
			 token[0] ? token : after);
		err = keep_s3_parse_list(keep_buf_str(&s->resp), s->resp.len, s->prefix, &page,
					 &truncated, token, S3_TOKEN_MAX, after, S3_TOKEN_MAX);
		if (err == KEEP_ERR_TOOBIG) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)res.status,
				       "listing of more than %d entries", KEEP_LIST_MAX);
			err = 0;
			goto out;
		}
		if (err == KEEP_ERR_PARSE) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)res.status,
				       "unparsable ListObjectsV2 reply");
			err = 0;
			goto out;
		}
		if (err)
			goto out;
		if (truncated && prev[0] == (token[0] ? 'T' : 'S') &&
		    strcmp(prev + 1, token[0] ? token : after) == 0) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)res.status,
				       "ListObjectsV2 continuation did not advance");
			goto out;
		}
		/* a long listing is progress: its caller may beat here */
		if (st->on_page)
			st->on_page(st->on_page_arg, pages);
	}
	for (i = 0; i < page.n; i++) {
		err = keep_list_add(out, page.v[i].key, page.v[i].version);
		if (err == KEEP_ERR_TOOBIG) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, 0,
				       "listing of more than %d entries", KEEP_LIST_MAX);
			err = 0;
			goto out;
		}
		if (err)
			goto out;
	}
	keep_list_merge_skipped(out, &page);
	keep_list_sort(out);
	keep_reply_set(reply, KEEP_STORE_OK, (int)res.status, NULL);
out:
	free(token);
	keep_buf_release(&url);
	keep_buf_release(&query);
	keep_buf_release(&full);
	keep_list_release(&page);
	return err;
}

static void s3_free(struct keep_store *st)
{
	struct s3 *s = S3(st);

	if (s) {
		if (s->h)
			curl_easy_cleanup(s->h);
		keep_s3_creds_release(&s->creds);
		keep_awscreds_close(s->src);
		keep_buf_release(&s->resp);
		free(s->base);
		free(s->prefix);
		free(s->sigv4);
		free(s);
		curl_global_cleanup();
	}
	free(st);
}

static const struct keep_store_ops s3_ops = {
    .name = "s3",
    .get = s3_get,
    .head = s3_head,
    .put = s3_put,
    .del = s3_del,
    .list = s3_list,
    .free = s3_free,
    .put_meta = s3_put_meta,
    .get_meta = s3_get_meta,
};

/* ---- open -------------------------------------------------------------- */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static const char *first(const char *a, const char *b, const char *c)
{
	if (a && *a)
		return a;
	if (b && *b)
		return b;
	return c;
}

static bool region_valid(const char *r)
{
	size_t n = strlen(r), i;

	if (n == 0 || n > 64)
		return false;
	for (i = 0; i < n; i++)
		if (!(isalnum((unsigned char)r[i]) || r[i] == '-' || r[i] == '_'))
			return false;
	return true;
}

static char *xstrndup(const char *p, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

/* Build s->base from endpoint (scheme://host[:port][/]) and the bucket. */
static int set_base(struct s3 *s, const char *endpoint, const char *bucket, char *err,
		    size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *user = NULL, *query = NULL;
	struct keep_buf b;
	int rc = 0;

	keep_buf_init(&b, 4096);
	if (!u)
		return KEEP_ERR_NOMEM;
	if (curl_url_set(u, CURLUPART_URL, endpoint, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		snprintf(err, errlen, "bad S3 endpoint '%s' (want http[s]://HOST[:PORT])",
			 endpoint);
		rc = KEEP_ERR_INVAL;
		goto out;
	}
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	if ((strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) || user || query ||
	    (path && strcmp(path, "/") != 0 && strcmp(path, "") != 0)) {
		snprintf(err, errlen,
			 "bad S3 endpoint '%s' (want http[s]://HOST[:PORT], no path, no user)",
			 endpoint);
		rc = KEEP_ERR_INVAL;
		goto out;
	}
	s->loopback = strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0 ||
		      strcmp(host, "::1") == 0 || strcmp(host, "localhost") == 0;
	if (s->virtual_host)
		rc = keep_buf_addf(&b, "%s://%s.%s%s%s", scheme, bucket, host, port ? ":" : "",
				   port ? port : "");
	else
		rc = keep_buf_addf(&b, "%s://%s%s%s/%s", scheme, host, port ? ":" : "",
				   port ? port : "", bucket);
	if (rc)
		goto out;
	s->base = b.data;
	b.data = NULL;
out:
	keep_buf_release(&b);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(user);
	curl_free(query);
	curl_url_cleanup(u);
	return rc;
}

int keep_store_s3_open(const char *rest, const struct keep_store_opts *opts,
		       struct keep_store **out, char *err, size_t errlen)
{
	static const struct keep_store_opts none;
	struct keep_store *st = NULL;
	struct s3 *s = NULL;
	const char *slash, *region, *endpoint, *addressing;
	char *bucket = NULL, *aws_endpoint = NULL, profile_region[128];
	bool want_region;
	size_t blen;
	int rc = 0;

	*out = NULL;
	if (!opts)
		opts = &none;
	if (!rest)
		rest = "";
	if (keep_store_s3_url_check(rest, err, errlen) != 0)
		return KEEP_ERR_INVAL;
	slash = strchr(rest, '/');
	blen = slash ? (size_t)(slash - rest) : strlen(rest);
	if (keep_curl_load(err, errlen) != 0)
		return KEEP_ERR_STORE;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "unable to initialise libcurl");
		return KEEP_ERR_STORE;
	}
	st = calloc(1, sizeof(*st));
	s = calloc(1, sizeof(*s));
	bucket = xstrndup(rest, blen);
	if (!st || !s || !bucket) {
		rc = KEEP_ERR_NOMEM;
		goto fail;
	}
	st->ops = &s3_ops;
	st->impl = s;
	keep_buf_init(&s->resp, S3_LIST_PAGE_MAX);
	for (size_t i = 0; i < S3_SOCKS_MAX; i++)
		s->socks[i] = CURL_SOCKET_BAD;

	/* prefix: "bucket/a/b/" -> "a/b/" */
	{
		const char *p = slash ? slash + 1 : "";
		size_t n = strlen(p);
		while (n && p[n - 1] == '/')
			n--;
		s->prefix = malloc(n + 2);
		if (!s->prefix) {
			rc = KEEP_ERR_NOMEM;
			goto fail;
		}
		memcpy(s->prefix, p, n);
		if (n)
			s->prefix[n++] = '/';
		s->prefix[n] = '\0'; /* valid: keep_store_s3_url_check */
	}

	/* credentials: the chain of awscreds.h (docs/s3.md "Credentials"), which
	 * also gives the profile's region when nothing else names one */
	want_region =
	    !(opts->region && *opts->region) && !env("AWS_REGION") && !env("AWS_DEFAULT_REGION");
	rc =
	    keep_awscreds_open(opts->credentials_file, &s->src, want_region ? profile_region : NULL,
			       sizeof(profile_region), err, errlen);
	if (!rc)
		rc = keep_awscreds_get(s->src, keep_wall_ms(), &s->creds, &s->creds_serial, err,
				       errlen);
	if (rc)
		goto fail;
	region = first(
	    opts->region, env("AWS_REGION"),
	    first(env("AWS_DEFAULT_REGION"), want_region ? profile_region : NULL, "us-east-1"));
	if (!region_valid(region)) {
		snprintf(err, errlen, "bad S3 region '%.64s'", region);
		rc = KEEP_ERR_INVAL;
		goto fail;
	}
	endpoint = first(opts->endpoint, env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"));
	addressing = opts->addressing && *opts->addressing ? opts->addressing
							   : (endpoint ? "path" : "virtual");
	if (strcmp(addressing, "path") == 0) {
		s->virtual_host = false;
	} else if (strcmp(addressing, "virtual") == 0) {
		s->virtual_host = true;
		if (strchr(bucket, '.') || strchr(bucket, '_')) {
			snprintf(err, errlen,
				 "bucket '%s' cannot be used with virtual-host addressing "
				 "(use addressing: path)",
				 bucket);
			rc = KEEP_ERR_INVAL;
			goto fail;
		}
	} else {
		snprintf(err, errlen, "bad S3 addressing '%.32s' (want path or virtual)",
			 addressing);
		rc = KEEP_ERR_INVAL;
		goto fail;
	}
	if (!endpoint) {
		size_t n = strlen(region) + 40;
		aws_endpoint = malloc(n);
		if (!aws_endpoint) {
			rc = KEEP_ERR_NOMEM;
			goto fail;
		}
		snprintf(aws_endpoint, n, "https://s3.%s.amazonaws.com", region);
		endpoint = aws_endpoint;
	}
	rc = set_base(s, endpoint, bucket, err, errlen);
	if (rc)
		goto fail;
	s->insecure = opts->tls_insecure && s->loopback;
	{
		size_t n = strlen(region) + 16;
		s->sigv4 = malloc(n);
		if (!s->sigv4) {
			rc = KEEP_ERR_NOMEM;
			goto fail;
		}
		snprintf(s->sigv4, n, "aws:amz:%s:s3", region);
	}

	if (strpbrk(s->creds.access_key, "\r\n") ||
	    (s->creds.token && strpbrk(s->creds.token, "\r\n"))) {
		snprintf(err, errlen, "S3 credentials contain a line break");
		rc = KEEP_ERR_INVAL;
		goto fail;
	}

	s->h = curl_easy_init();
	if (!s->h) {
		snprintf(err, errlen, "unable to create a libcurl handle");
		rc = KEEP_ERR_STORE;
		goto fail;
	}
	st->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : S3_DEFAULT_TIMEOUT_MS;
	free(bucket);
	free(aws_endpoint);
	*out = st;
	return 0;

fail:
	if (rc == KEEP_ERR_NOMEM)
		snprintf(err, errlen, "out of memory opening the S3 store");
	free(bucket);
	free(aws_endpoint);
	if (st && s) {
		s3_free(st); /* also curl_global_cleanup */
	} else {
		free(st);
		free(s);
		curl_global_cleanup();
	}
	return rc;
}
