/* keep — the line format of every command's stdout (docs/formats.md).
 *
 *   TYPE key=value key=value ...
 *
 * TYPE and keys are [a-z0-9_-]+. A value is written bare when it is
 * non-empty and made only of printable ASCII other than space, '"', '=' and
 * '\\'; otherwise it is quoted logfmt-style: "..." with \" \\ \n \t and
 * \xHH escapes. An absent value is written as the sentinel "-".
 * keep_line_parse is the strict inverse (for stdin batches). */
#ifndef KEEP_LINE_H
#define KEEP_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

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

/* Start a line "TYPE" in b (b is reset first). 0 or buffer errors. */
int keep_line_start(struct keep_buf *b, const char *type);
/* Append " key=value" (value quoted as needed; NULL -> "-"). */
int keep_line_str(struct keep_buf *b, const char *key, const char *value);
/* Append " key=<decimal int>". */
int keep_line_int(struct keep_buf *b, const char *key, int64_t v);
/* Write b plus '\n' to stdout and flush (stdout is line-buffered by contract),
 * the whole line at once even with several threads writing (stdout's lock).
 * 0 or KEEP_ERR_IO. */
int keep_line_emit(struct keep_buf *b);

/* The one emitter of answer lines: keep_line_begin initialises b (a caller's
 * struct, KEEP_LINE_MAX bytes at most) and starts the line TYPE; add fields
 * with keep_line_str / keep_line_int; keep_line_end emits it
 * (keep_line_emit) and releases b. 0 or KEEP_ERR_IO (stdout closed). */
void keep_line_begin(struct keep_buf *b, const char *type);
int keep_line_end(struct keep_buf *b);

/* Parse one line (no trailing newline; len bytes) strictly into *out.
 * A bare word without '=' after TYPE is refused. 0, KEEP_ERR_PARSE,
 * KEEP_ERR_TOOBIG, KEEP_ERR_NOMEM; on success free with keep_line_release. */
int keep_line_parse(const char *s, size_t len, struct keep_line *out, char *err, size_t errlen);
void keep_line_release(struct keep_line *l);
/* The value of key, or NULL when absent. Borrowed from l. */
const char *keep_line_get(const struct keep_line *l, const char *key);

#endif
