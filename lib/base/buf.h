/* keep — a bounded growable byte buffer (after curl's dynbuf).
 *
 * The buffer owns data; it is always NUL-terminated (the NUL is not counted
 * in len). Appending past max refuses with KEEP_ERR_TOOBIG and leaves the
 * buffer unchanged: over-limit input is refused, never truncated. */
#ifndef KEEP_BUF_H
#define KEEP_BUF_H

#include <stddef.h>

struct keep_buf {
	char *data;   /* owned; NULL until the first append */
	size_t len;   /* bytes in use, NUL excluded */
	size_t alloc; /* bytes allocated */
	size_t max;   /* largest len allowed (bytes) */
};

/* Initialise an empty buffer that may grow to max bytes. No allocation. */
void keep_buf_init(struct keep_buf *b, size_t max);
/* Free the data and reset to empty (max kept). Safe on an empty buffer. */
void keep_buf_release(struct keep_buf *b);
/* Empty the buffer, keeping its allocation. */
void keep_buf_reset(struct keep_buf *b);
/* Append n bytes. 0, KEEP_ERR_TOOBIG (over max), KEEP_ERR_NOMEM. */
int keep_buf_add(struct keep_buf *b, const void *p, size_t n);
/* Append a NUL-terminated string. Errors as keep_buf_add. */
int keep_buf_adds(struct keep_buf *b, const char *s);
/* Append printf-formatted text. Errors as keep_buf_add. */
int keep_buf_addf(struct keep_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The contents as a string ("" when empty); borrowed until the next change. */
const char *keep_buf_str(const struct keep_buf *b);

#endif
