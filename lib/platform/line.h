/* keep — the line format of every command's stdout (docs/formats.md).
 *
 *   TYPE key=value key=value ...
 *
 * TYPE and keys are [a-z0-9_-]+. A value is written bare when it is
 * non-empty and made only of printable ASCII other than space, '"', '=' and
 * '\\'; otherwise it is quoted logfmt-style: "..." with \" \\ \n \t and
 * \xHH escapes. An absent value is written as the sentinel "-".
 * keep_line_parse is the strict inverse (for stdin batches).
 *
 * The same calls write a line as one JSON object instead (--json; RFC 8259)
 * when it was started with keep_line_start_fmt(.., KEEP_LINE_JSON):
 *
 *   {"type":"TYPE","key":"value","n":123,"absent":null}
 *
 * keep_line_str gives a JSON string (NULL: null), keep_line_int a JSON
 * number, keep_line_bool a JSON boolean (yes/no in the text line); the
 * fields, their order and their values are the text line's.
 * The buffer itself tells the two apart: a JSON line starts with '{', a
 * text line with its TYPE ([a-z0-9_-]). Strings are escaped by
 * keep_json_add_str (docs/formats.md "JSON lines"). */
#ifndef KEEP_LINE_H
#define KEEP_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"

#define KEEP_LINE_MAX 4096  /* bytes: longest line accepted on stdin */
#define KEEP_LINE_FIELDS 32 /* most key=value fields in one line */

struct keep_line {
	char type[64];
	size_t n;
	struct {
		char key[64];
		char *value; /* owned by the line (decoded, NUL-terminated) */
	} f[KEEP_LINE_FIELDS];
};

/* The two renderings of a line. */
enum keep_line_format {
	KEEP_LINE_TEXT = 0, /* TYPE key=value ... (the default, a stable promise) */
	KEEP_LINE_JSON,	    /* {"type":"TYPE","key":value,...} */
};

/* The format of the lines a command writes to stdout: KEEP_LINE_TEXT
 * unless --json set KEEP_LINE_JSON (lib/driver/cli.c). keep_line_begin and
 * keep_line_start_out follow it; keep_line_start (state files) never. */
void keep_line_set_out_format(enum keep_line_format fmt);
enum keep_line_format keep_line_out_format(void);

/* Start a text line "TYPE" in b (b is reset first): for files (state
 * files) and stdin parsing, always text. 0, KEEP_ERR_INVAL (bad TYPE) or
 * buffer errors. */
int keep_line_start(struct keep_buf *b, const char *type);
/* Start a line "TYPE" for stdout in b, in keep_line_out_format(). Errors
 * as keep_line_start. */
int keep_line_start_out(struct keep_buf *b, const char *type);
/* Start a line "TYPE" in b rendered as fmt (b is reset first); the
 * following keep_line_str/int/emit calls follow the format. Errors as
 * keep_line_start. */
int keep_line_start_fmt(struct keep_buf *b, const char *type, enum keep_line_format fmt);
/* Append " key=value" (value quoted as needed; NULL -> "-"), or in JSON
 * ,"key":"value" (NULL -> null). KEEP_ERR_INVAL for a bad key (and, in
 * JSON, for the key "type", which names the record); on any error b is
 * unchanged. */
int keep_line_str(struct keep_buf *b, const char *key, const char *value);
/* Append the n bytes at v (any bytes, NUL included) as the value of a
 * field is written: bare, or quoted and escaped as above ("" for n = 0).
 * For diagnostics that name a foreign key or value on stderr in the same
 * form (one line, whatever the bytes). 0 or buffer errors (b unchanged). */
int keep_line_value(struct keep_buf *b, const void *v, size_t n);
/* s with the escapes of a quoted value (\" \\ \n \t \xHH for other
 * control bytes and bytes >= 0x7f) and no surrounding quotes, into out
 * (outlen bytes, NUL included; cut with "..." when it does not fit).
 * Returns out. For diagnostics quoting user input on one line, e.g.
 * "invalid key '%s'". */
const char *keep_line_escaped(const char *s, char *out, size_t outlen);
/* Append " key=<decimal int>", or in JSON ,"key":<number>. Errors as
 * keep_line_str. */
int keep_line_int(struct keep_buf *b, const char *key, int64_t v);
/* Append " key=yes" or " key=no", or in JSON ,"key":true|false. Errors
 * as keep_line_str. */
int keep_line_bool(struct keep_buf *b, const char *key, bool v);
/* Write b plus '\n' to stdout and flush (stdout is line-buffered by contract),
 * the whole line at once even with several threads writing (stdout's lock);
 * with event timestamps on (lib/platform/log.h: --timestamps,
 * log.event_timestamps) the field ts=TIME (RFC 3339, UTC, ms) is appended
 * last; a JSON line gets its closing '}' first. 0 or KEEP_ERR_IO. */
int keep_line_emit(struct keep_buf *b);

/* The one emitter of answer lines: keep_line_begin initialises b (a caller's
 * struct, KEEP_LINE_MAX bytes at most) and starts the line TYPE in
 * keep_line_out_format() (keep_line_begin_fmt: rendered as fmt, or as
 * --json says when that is JSON); add fields with keep_line_str /
 * keep_line_int; keep_line_end emits it (keep_line_emit) and releases b. 0
 * or KEEP_ERR_IO (stdout closed). */
void keep_line_begin(struct keep_buf *b, const char *type);
void keep_line_begin_fmt(struct keep_buf *b, const char *type, enum keep_line_format fmt);
int keep_line_end(struct keep_buf *b);

/* Append the NUL-terminated s to b as one JSON string (RFC 8259), quotes
 * included: '"' and '\\' escaped; \b \f \n \r \t for those bytes; any other
 * byte below 0x20, and 0x7f, as \u00XX; valid UTF-8 (shortest form, no
 * surrogates, at most U+10FFFF) copied as is; every byte that is not part
 * of a valid UTF-8 sequence as \u00XX (lowercase hex), i.e. the Latin-1
 * character of that byte: the output is always valid UTF-8 and valid JSON.
 * Errors as keep_buf_add; on error b is unchanged. */
int keep_json_add_str(struct keep_buf *b, const char *s);

/* Parse one line (no trailing newline; len bytes) strictly into *out.
 * A bare word without '=' after TYPE is refused. 0, KEEP_ERR_PARSE,
 * KEEP_ERR_TOOBIG, KEEP_ERR_NOMEM; on success free with keep_line_release. */
int keep_line_parse(const char *s, size_t len, struct keep_line *out, char *err, size_t errlen);
void keep_line_release(struct keep_line *l);
/* The value of key, or NULL when absent. Borrowed from l. */
const char *keep_line_get(const struct keep_line *l, const char *key);

#endif
