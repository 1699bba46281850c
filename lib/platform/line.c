/* keep — the stdout line format and its strict parser (line.h). */
#include "line.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "clock.h"
#include "log.h"

static enum keep_line_format out_format = KEEP_LINE_TEXT;

void keep_line_set_out_format(enum keep_line_format fmt)
{
	out_format = fmt;
}

enum keep_line_format keep_line_out_format(void)
{
	return out_format;
}

/* TYPE and keys: 1..63 bytes of [a-z0-9_-] (they must fit type[64] / key[64]). */
static int name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int name_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!name_char((unsigned char)s[i]) || i >= 63)
			return 0;
	return i > 0;
}

/* A byte that may appear in a bare value. */
static int bare_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '"' && c != '=' && c != '\\';
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Undo a partial append so that a failed call leaves b as it was. */
static void truncate_to(struct keep_buf *b, size_t len)
{
	if (b->data && len <= b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

int keep_line_start(struct keep_buf *b, const char *type)
{
	return keep_line_start_fmt(b, type, KEEP_LINE_TEXT);
}

int keep_line_start_out(struct keep_buf *b, const char *type)
{
	return keep_line_start_fmt(b, type, out_format);
}

/* A line started in JSON: its first byte is '{' (a TYPE never is). */
static bool is_json(const struct keep_buf *b)
{
	return b->data && b->len > 0 && b->data[0] == '{';
}

int keep_line_start_fmt(struct keep_buf *b, const char *type, enum keep_line_format fmt)
{
	int err;

	keep_buf_reset(b);
	if (!type || !name_valid(type))
		return KEEP_ERR_INVAL;
	if (fmt != KEEP_LINE_JSON)
		return keep_buf_adds(b, type);
	err = keep_buf_adds(b, "{\"type\":\"");
	if (!err)
		err = keep_buf_adds(b, type); /* [a-z0-9_-]: nothing to escape */
	if (!err)
		err = keep_buf_add(b, "\"", 1);
	if (err)
		keep_buf_reset(b);
	return err;
}

/* The length of the valid UTF-8 sequence at p (1..4 bytes, the first byte
 * >= 0x80), or 0 when p does not start one (RFC 3629 table: shortest
 * form, no surrogates, at most U+10FFFF). p is NUL-terminated, so a
 * truncated sequence stops at the NUL, which is no continuation byte. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0; /* 0x80..0xc1 (continuation, overlong lead), 0xf5.. */
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* U+D800..U+DFFF: surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

int keep_json_add_str(struct keep_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t old = b->len;
	int err = keep_buf_add(b, "\"", 1);

	while (!err && *p) {
		char esc[6];
		size_t n = 0, u;

		if (*p == '"' || *p == '\\') {
			esc[n++] = '\\';
			esc[n++] = (char)*p;
		} else if (*p == '\b' || *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t') {
			esc[n++] = '\\';
			esc[n++] = *p == '\b'	? 'b'
				   : *p == '\f' ? 'f'
				   : *p == '\n' ? 'n'
				   : *p == '\r' ? 'r'
						: 't';
		} else if (*p >= 0x20 && *p < 0x7f) {
			esc[n++] = (char)*p;
		} else if (*p >= 0x80 && (u = utf8_len(p)) > 0) {
			err = keep_buf_add(b, p, u);
			p += u;
			continue;
		} else {
			/* a control byte, DEL, or a byte outside valid UTF-8 */
			memcpy(esc, "\\u00", 4);
			n = 4;
			esc[n++] = hex[*p >> 4];
			esc[n++] = hex[*p & 0xf];
		}
		err = keep_buf_add(b, esc, n);
		p++;
	}
	if (!err)
		err = keep_buf_add(b, "\"", 1);
	if (err)
		truncate_to(b, old);
	return err;
}

int keep_line_value(struct keep_buf *b, const void *v, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = v, *e = p + n;
	size_t old = b->len, i;
	int bare = n > 0;
	int err;

	for (i = 0; i < n && bare; i++)
		bare = bare_char(p[i]);
	if (bare)
		return keep_buf_add(b, v, n);
	if ((err = keep_buf_add(b, "\"", 1)))
		return err;
	for (; p < e; p++) {
		char esc[4];
		size_t k = 0;

		if (*p == '"' || *p == '\\') {
			esc[k++] = '\\';
			esc[k++] = (char)*p;
		} else if (*p == '\n') {
			esc[k++] = '\\';
			esc[k++] = 'n';
		} else if (*p == '\t') {
			esc[k++] = '\\';
			esc[k++] = 't';
		} else if (*p < 0x20 || *p >= 0x7f) {
			esc[k++] = '\\';
			esc[k++] = 'x';
			esc[k++] = hex[*p >> 4];
			esc[k++] = hex[*p & 0xf];
		} else {
			esc[k++] = (char)*p;
		}
		if ((err = keep_buf_add(b, esc, k))) {
			truncate_to(b, old);
			return err;
		}
	}
	err = keep_buf_add(b, "\"", 1);
	if (err)
		truncate_to(b, old);
	return err;
}

const char *keep_line_escaped(const char *s, char *out, size_t outlen)
{
	struct keep_buf b;
	size_t n = strlen(s);

	if (outlen == 0)
		return out;
	out[0] = '\0';
	keep_buf_init(&b, 4 * n + 8);
	if (n && keep_line_value(&b, s, n) == 0 && b.data) {
		const char *p = b.data;
		size_t len = b.len;

		if (len >= 2 && p[0] == '"') {
			p++;
			len -= 2;
		}
		if (len < outlen) {
			memcpy(out, p, len);
			out[len] = '\0';
		} else if (outlen > 4) {
			memcpy(out, p, outlen - 4);
			memcpy(out + outlen - 4, "...", 4);
		}
	}
	keep_buf_release(&b);
	return out;
}

static int add_value(struct keep_buf *b, const char *v)
{
	return keep_line_value(b, v, strlen(v));
}

/* Append ,"key":value (JSON; value NULL -> null, else a string unless
 * number, which is copied as is). */
static int json_field(struct keep_buf *b, const char *key, const char *value, bool number)
{
	size_t old = b->len;
	int err;

	if (strcmp(key, "type") == 0)
		return KEEP_ERR_INVAL; /* the record's own "type" */
	err = keep_buf_add(b, ",\"", 2);
	if (!err)
		err = keep_buf_adds(b, key); /* [a-z0-9_-]: nothing to escape */
	if (!err)
		err = keep_buf_add(b, "\":", 2);
	if (!err)
		err = !value   ? keep_buf_adds(b, "null")
		      : number ? keep_buf_adds(b, value)
			       : keep_json_add_str(b, value);
	if (err)
		truncate_to(b, old);
	return err;
}

int keep_line_str(struct keep_buf *b, const char *key, const char *value)
{
	size_t old = b->len;
	int err;

	if (!key || !name_valid(key))
		return KEEP_ERR_INVAL;
	if (is_json(b))
		return json_field(b, key, value, false);
	err = keep_buf_add(b, " ", 1);
	if (!err)
		err = keep_buf_adds(b, key);
	if (!err)
		err = keep_buf_add(b, "=", 1);
	if (!err)
		err = add_value(b, value ? value : "-");
	if (err)
		truncate_to(b, old);
	return err;
}

int keep_line_int(struct keep_buf *b, const char *key, int64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRId64, v);
	if (key && name_valid(key) && is_json(b))
		return json_field(b, key, num, true);
	return keep_line_str(b, key, num);
}

int keep_line_bool(struct keep_buf *b, const char *key, bool v)
{
	if (key && name_valid(key) && is_json(b))
		return json_field(b, key, v ? "true" : "false", true);
	return keep_line_str(b, key, v ? "yes" : "no");
}

int keep_line_emit(struct keep_buf *b)
{
	const char *s;
	int rc = 0;

	if (keep_log_event_timestamps()) {
		char ts[32];

		keep_line_str(b, "ts", keep_log_time(keep_wall_ms(), ts, sizeof(ts)));
	}
	s = keep_buf_str(b);
	flockfile(stdout);
	if (fwrite(s, 1, b->len, stdout) != b->len || (is_json(b) && fputc('}', stdout) == EOF) ||
	    fputc('\n', stdout) == EOF || fflush(stdout) != 0)
		rc = KEEP_ERR_IO;
	funlockfile(stdout);
	return rc;
}

void keep_line_begin_fmt(struct keep_buf *b, const char *type, enum keep_line_format fmt)
{
	keep_buf_init(b, KEEP_LINE_MAX);
	keep_line_start_fmt(b, type, out_format == KEEP_LINE_JSON ? KEEP_LINE_JSON : fmt);
}

void keep_line_begin(struct keep_buf *b, const char *type)
{
	keep_line_begin_fmt(b, type, out_format);
}

int keep_line_end(struct keep_buf *b)
{
	int rc = keep_line_emit(b);

	keep_buf_release(b);
	return rc;
}

void keep_line_release(struct keep_line *l)
{
	size_t i;

	for (i = 0; i < l->n && i < KEEP_LINE_FIELDS; i++) {
		free(l->f[i].value);
		l->f[i].value = NULL;
	}
	l->n = 0;
}

const char *keep_line_get(const struct keep_line *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->f[i].key, key) == 0)
			return l->f[i].value;
	return NULL;
}

/* Parse a name of [a-z0-9_-] at s[*i], stopping at stop (or end); copy into
 * out (64 bytes). 0 or -1 (empty, bad byte, too long). */
static int parse_name(const char *s, size_t len, size_t *i, char stop, char out[64])
{
	size_t start = *i;

	while (*i < len && s[*i] != stop) {
		if (!name_char((unsigned char)s[*i]) || *i - start >= 63)
			return -1;
		(*i)++;
	}
	if (*i == start)
		return -1;
	memcpy(out, s + start, *i - start);
	out[*i - start] = '\0';
	return 0;
}

/* Decode a value at s[*i] (bare or quoted) into a new string *out (caller
 * frees). Stops before the ' ' that ends it, or at len. 0, KEEP_ERR_PARSE
 * (why in *why), KEEP_ERR_NOMEM. */
static int parse_value(const char *s, size_t len, size_t *i, char **out, const char **why)
{
	size_t start = *i, n = 0;
	char *v;

	if (*i < len && s[*i] == '"') {
		/* Quoted: the decoded value is never longer than the source. */
		v = malloc(len - start + 1);
		if (!v)
			return KEEP_ERR_NOMEM;
		(*i)++;
		for (;;) {
			unsigned char c;

			if (*i >= len) {
				*why = "unterminated quoted value";
				goto fail;
			}
			c = (unsigned char)s[(*i)++];
			if (c == '"')
				break;
			if (c < 0x20 || c >= 0x7f) {
				*why = "control or non-ASCII byte in a value";
				goto fail;
			}
			if (c != '\\') {
				v[n++] = (char)c;
				continue;
			}
			if (*i >= len) {
				*why = "unterminated escape";
				goto fail;
			}
			c = (unsigned char)s[(*i)++];
			if (c == '"' || c == '\\') {
				v[n++] = (char)c;
			} else if (c == 'n') {
				v[n++] = '\n';
			} else if (c == 't') {
				v[n++] = '\t';
			} else if (c == 'x') {
				int hi, lo;

				if (len - *i < 2 || (hi = hexval((unsigned char)s[*i])) < 0 ||
				    (lo = hexval((unsigned char)s[*i + 1])) < 0) {
					*why = "bad \\x escape";
					goto fail;
				}
				if (hi == 0 && lo == 0) {
					*why = "\\x00 in a value";
					goto fail;
				}
				v[n++] = (char)(hi << 4 | lo);
				*i += 2;
			} else {
				*why = "unknown escape";
				goto fail;
			}
		}
		if (*i < len && s[*i] != ' ') {
			*why = "no space after a quoted value";
			goto fail;
		}
	} else {
		while (*i < len && s[*i] != ' ') {
			if (!bare_char((unsigned char)s[*i])) {
				*why = "bad byte in a bare value (quote it)";
				return KEEP_ERR_PARSE;
			}
			(*i)++;
		}
		if (*i == start) {
			*why = "empty bare value";
			return KEEP_ERR_PARSE;
		}
		v = malloc(*i - start + 1);
		if (!v)
			return KEEP_ERR_NOMEM;
		n = *i - start;
		memcpy(v, s + start, n);
	}
	v[n] = '\0';
	*out = v;
	return 0;
fail:
	free(v);
	return KEEP_ERR_PARSE;
}

int keep_line_parse(const char *s, size_t len, struct keep_line *out, char *err, size_t errlen)
{
	const char *why = NULL;
	size_t i = 0, at = 0;
	int rc;

	out->n = 0;
	out->type[0] = '\0';
	if (len > KEEP_LINE_MAX) {
		snprintf(err, errlen, "line over %d bytes", KEEP_LINE_MAX);
		return KEEP_ERR_TOOBIG;
	}
	if (parse_name(s, len, &i, ' ', out->type)) {
		snprintf(err, errlen, "column %zu: bad record type (want [a-z0-9_-]{1,63})", i + 1);
		return KEEP_ERR_PARSE;
	}
	while (i < len) {
		char key[64];
		char *value = NULL;

		/* s[i] == ' ': exactly one space before every field. */
		i++;
		at = i;
		if (parse_name(s, len, &i, '=', key)) {
			if (i == at)
				why = "empty field (extra space?)";
			else if (i < len && s[i] == ' ')
				why = "bare word without '='";
			else if (i >= len)
				why = "bare word without '='";
			else
				why = "bad key (want [a-z0-9_-]{1,63})";
			rc = KEEP_ERR_PARSE;
			goto fail;
		}
		if (i >= len || s[i] != '=') {
			why = "bare word without '='";
			rc = KEEP_ERR_PARSE;
			goto fail;
		}
		if (keep_line_get(out, key)) {
			why = "duplicate key";
			rc = KEEP_ERR_PARSE;
			goto fail;
		}
		if (out->n >= KEEP_LINE_FIELDS) {
			snprintf(err, errlen, "column %zu: more than %d fields", at + 1,
				 KEEP_LINE_FIELDS);
			keep_line_release(out);
			return KEEP_ERR_TOOBIG;
		}
		i++;
		rc = parse_value(s, len, &i, &value, &why);
		if (rc)
			goto fail;
		memcpy(out->f[out->n].key, key, sizeof(key));
		out->f[out->n].value = value;
		out->n++;
	}
	return 0;
fail:
	if (rc == KEEP_ERR_NOMEM)
		snprintf(err, errlen, "out of memory");
	else
		snprintf(err, errlen, "column %zu: %s", at + 1, why ? why : "malformed");
	keep_line_release(out);
	return rc;
}
