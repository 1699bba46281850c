/* keep — the pure pieces of the S3 backend (store/s3.c), exposed for its
 * unit test (tests/unit/test_s3.c). Not part of the store interface: only
 * s3.c and its test include this header. None of these functions does I/O
 * except keep_s3_creds_read (one local file); none reads a clock. */
#ifndef KEEP_STORE_S3_INTERNAL_H
#define KEEP_STORE_S3_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/buf.h"
#include "store.h"

/* The operations, for classification. */
enum keep_s3_op {
	KEEP_S3_GET,
	KEEP_S3_HEAD,
	KEEP_S3_PUT,
	KEEP_S3_DEL,
	KEEP_S3_LIST,
};

/* Append the RFC 3986 percent-encoding of the NUL-terminated in to out:
 * unreserved bytes (A-Z a-z 0-9 - . _ ~) are kept, every other byte becomes
 * %XX (upper-case hex); '/' is kept only when keep_slash (object paths) and
 * encoded otherwise (query values). Errors as keep_buf_add. */
int keep_s3_pct_encode(struct keep_buf *out, const char *in, bool keep_slash);

/* One query parameter, not yet encoded. value may be "" (never NULL). */
struct keep_s3_param {
	const char *name;
	const char *value;
};

/* Replace out with the canonical SigV4 query string of the n params:
 * each name and value percent-encoded ('/' too), "name=value" pairs sorted
 * by encoded name then encoded value (bytewise), joined with '&'. The same
 * string is sent and signed, so curl's signer sees it already canonical.
 * params is borrowed and reordered in place. Errors as keep_buf_add. */
int keep_s3_query(struct keep_buf *out, struct keep_s3_param *params, size_t n);

/* Copy the version token of etag (an ETag header or listing value, e.g.
 * "\"abc\"" or W/"abc") into out (outlen bytes) without the quotes and the
 * weak marker, and with surrounding blanks trimmed. 0, KEEP_ERR_TOOBIG (does
 * not fit; out is then ""), KEEP_ERR_PARSE (empty after stripping, or a NUL
 * or other control byte inside). */
int keep_s3_version_from_etag(const char *etag, size_t n, char *out, size_t outlen);

/* Rewrite, in a copy of xml (len bytes), every character reference XML
 * 1.0 forbids (&#1; .. &#x1F; but tab, LF and CR; surrogates; FFFE, FFFF;
 * beyond 10FFFF), which expat refuses, as the text "\xHH" (or "\uHHHH",
 * "\u????"), never longer than the reference. RGW writes such references
 * for a key's control bytes even in a URL-encoded listing's
 * NextContinuationToken. *out: NULL when nothing was rewritten (use xml as
 * is), else the copy (*outlen bytes, caller frees); *at (caller frees,
 * *nat entries): the output offsets where a rewrite starts, ascending.
 * 0 or KEEP_ERR_NOMEM (nothing allocated). */
int keep_s3_xml_sanitize(const char *xml, size_t len, char **out, size_t *outlen, size_t **at,
			 size_t *nat);

/* Replace out with the URL decoding of in[0..n) as S3 encodes listed keys
 * for encoding-type=url: %HH is the byte HH (any byte, NUL included), '+'
 * is a space (AWS; RGW sends %20), anything else is itself. out is then
 * NUL-terminated, its len the decoded length (a %00 shows in len).
 * 0, KEEP_ERR_PARSE (a '%' without two hex digits), buffer errors. */
int keep_s3_url_decode(const char *in, size_t n, struct keep_buf *out);

/* Parse one ListObjectsV2 page (xml, len bytes), asked for with
 * encoding-type=url: keys are URL-decoded when the page says
 * <EncodingType>url</EncodingType>, and taken as sent otherwise (a server
 * that ignores the parameter). Each <Contents> is then
 *   - ignored when it is a folder marker (a key ending in '/', Size 0);
 *   - skipped, named, into out's skip records (keep_list_skip) when keep
 *     cannot use it: bad URL encoding, a key not starting with strip, a
 *     key keep_key_valid refuses once strip is removed (control byte, NUL,
 *     trailing '/', ...), no readable ETag;
 *   - else appended to out with strip removed and its ETag's quotes
 *     removed.
 * One foreign key never fails the page. *truncated is set from
 * <IsTruncated>; when true, the next page is named either by token
 * (tokenlen bytes: <NextContinuationToken> as sent) or, when the token
 * holds a reference XML forbids (see keep_s3_xml_sanitize), by start_after
 * (salen bytes: the page's last key, decoded, prefix included); the other
 * is "". Entries already added stay in out on error.
 * 0, KEEP_ERR_PARSE (not a ListBucketResult, malformed XML, a <Contents>
 * without <Key>, an element over its bound, a truncated page naming no
 * usable next page), KEEP_ERR_NOMEM, KEEP_ERR_TOOBIG (more than
 * KEEP_LIST_MAX entries). */
int keep_s3_parse_list(const char *xml, size_t len, const char *strip, struct keep_list *out,
		       bool *truncated, char *token, size_t tokenlen, char *start_after,
		       size_t salen);

/* TCP_QUICKACK on the connection while a reply arrives (store/s3.c,
 * quickack()); true by default. A switch for bench/s3-latency.sh only. */
extern bool keep_s3_quickack;

/* Find the <Code> of an S3 <Error> document (xml, len bytes) and copy it to
 * code (codelen bytes; "" when absent, not XML, or not fitting). Returns
 * true when a code was found. */
bool keep_s3_error_code(const char *xml, size_t len, char *code, size_t codelen);

/* Classify an HTTP answer of op (cond: the PUT's condition; ignored for
 * other ops). status 0 = no HTTP answer at all (timeout, reset, refused),
 * code = the S3 error Code ("" or NULL if none). Table in docs/s3.md:
 * 2xx ok; 412/409 conflict on put/delete; a PUT If-Match answered 404 (not
 * NoSuchBucket) conflict; 404 not-found on get/head/delete; NoSuchBucket,
 * 404 on list or an unconditional put, 3xx, and other 4xx refused (408 and
 * 429 ambiguous); 5xx, 1xx and status 0 ambiguous. */
enum keep_outcome keep_s3_classify(enum keep_s3_op op, enum keep_cond cond, long status,
				   const char *code);

/* Credentials: all three owned (NUL-terminated); token may be NULL. */
struct keep_s3_creds {
	char *access_key;
	char *secret_key;
	char *token;
};

/* Read the [default] profile (or the lines before any section) of an AWS
 * credentials file at path: aws_access_key_id, aws_secret_access_key and
 * optionally aws_session_token, as "name = value" lines ('#' and ';' start
 * comments). The file is refused when group or other may read or write it.
 * On success *c owns copies (free with keep_s3_creds_release). Errors:
 * KEEP_ERR_PERM (mode), KEEP_ERR_IO (cannot open/read), KEEP_ERR_TOOBIG
 * (file over 64 KiB or a line over 4 KiB), KEEP_ERR_PARSE (no key id or
 * secret), KEEP_ERR_NOMEM; err (errlen bytes) then holds a one-line reason
 * naming the file, never a value from it. */
int keep_s3_creds_read(const char *path, struct keep_s3_creds *c, char *err, size_t errlen);

/* Wipe and free the credentials; *c is empty afterwards. */
void keep_s3_creds_release(struct keep_s3_creds *c);

#endif
