#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

void keep_buf_init(struct keep_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
}

void keep_buf_release(struct keep_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
}

void keep_buf_reset(struct keep_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int grow(struct keep_buf *b, size_t need)
{
	size_t n;
	char *p;

	if (need + 1 <= b->alloc)
		return 0;
	n = b->alloc ? b->alloc : 64;
	while (n < need + 1)
		n *= 2;
	if (n > b->max + 1)
		n = b->max + 1;
	p = realloc(b->data, n);
	if (!p)
		return KEEP_ERR_NOMEM;
	b->data = p;
	b->alloc = n;
	return 0;
}

int keep_buf_add(struct keep_buf *b, const void *p, size_t n)
{
	int err;

	if (n > b->max || b->len > b->max - n)
		return KEEP_ERR_TOOBIG;
	err = grow(b, b->len + n);
	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int keep_buf_adds(struct keep_buf *b, const char *s)
{
	return keep_buf_add(b, s, strlen(s));
}

int keep_buf_addf(struct keep_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return KEEP_ERR_INVAL;
	if ((size_t)n > b->max || b->len > b->max - (size_t)n)
		return KEEP_ERR_TOOBIG;
	err = grow(b, b->len + (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *keep_buf_str(const struct keep_buf *b)
{
	return b->data ? b->data : "";
}
