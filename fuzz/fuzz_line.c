/* keep — libFuzzer harness: the stdin line parser (lib/platform/line.h,
 * keep_line_parse), which reads batch requests and node-watch lines.
 *
 * Properties: no crash, leak or overread; an accepted line re-encodes with
 * keep_line_str into a line that parses to the same fields (the writer and
 * the parser are inverses). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/platform/line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_line l, l2;
	struct keep_buf b;
	char err[256];
	size_t i;
	int rc;

	err[0] = '\0';
	rc = keep_line_parse((const char *)data, size, &l, err, sizeof(err));
	if (rc != 0) {
		if (rc != KEEP_ERR_PARSE && rc != KEEP_ERR_TOOBIG && rc != KEEP_ERR_NOMEM)
			abort();
		if (strnlen(err, sizeof(err)) >= sizeof(err))
			abort();
		return 0;
	}
	if (size > KEEP_LINE_MAX || l.n > KEEP_LINE_FIELDS || !l.type[0])
		abort();
	keep_buf_init(&b, 16 * KEEP_LINE_MAX);
	if (keep_line_start(&b, l.type) != 0)
		abort();
	for (i = 0; i < l.n; i++) {
		if (!l.f[i].key[0] || !l.f[i].value)
			abort();
		if (keep_line_get(&l, l.f[i].key) != l.f[i].value)
			abort(); /* keys are unique */
		if (keep_line_str(&b, l.f[i].key, l.f[i].value) != 0)
			abort();
	}
	/* the re-encoding may be longer (escapes); parse it only if it fits */
	if (b.len <= KEEP_LINE_MAX) {
		if (keep_line_parse(b.data, b.len, &l2, err, sizeof(err)) != 0)
			abort();
		if (strcmp(l.type, l2.type) != 0 || l.n != l2.n)
			abort();
		for (i = 0; i < l.n; i++)
			if (strcmp(l.f[i].key, l2.f[i].key) != 0 ||
			    strcmp(l.f[i].value, l2.f[i].value) != 0)
				abort();
		keep_line_release(&l2);
	}
	keep_buf_release(&b);
	keep_line_release(&l);
	return 0;
}
