/* keep — libFuzzer harness: the S3 ListObjectsV2 page parser
 * (lib/store/s3_internal.h, keep_s3_parse_list), fed whatever the server
 * (or anything between) sends.
 *
 * The first input byte picks the prefix to strip ("" or "p/"), the rest is
 * the XML. Properties: no crash, leak or overread; every listed key starts
 * with nothing but what was left after the strip, is NUL-terminated, and its
 * version fits; a truncated page names a non-empty continuation token. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/err.h"
#include "../lib/store/s3_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *strips[] = {"", "p/"};
	struct keep_list l;
	char token[1024];
	bool truncated = false;
	const char *strip;
	size_t i;
	int rc;

	if (size < 1)
		return 0;
	strip = strips[data[0] & 1];
	keep_list_init(&l);
	token[0] = '\0';
	rc = keep_s3_parse_list((const char *)data + 1, size - 1, strip, &l, &truncated, token,
				sizeof(token));
	if (rc != 0 && rc != KEEP_ERR_PARSE && rc != KEEP_ERR_NOMEM && rc != KEEP_ERR_TOOBIG)
		abort();
	for (i = 0; i < l.n; i++) {
		if (!l.v[i].key)
			abort();
		if (strnlen(l.v[i].version, KEEP_VERSION_MAX) >= KEEP_VERSION_MAX)
			abort();
	}
	if (rc == 0 && truncated && !token[0])
		abort();
	if (strnlen(token, sizeof(token)) >= sizeof(token))
		abort();
	keep_list_release(&l);
	return 0;
}
