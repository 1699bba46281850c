/* keep — libFuzzer harness: the S3 ListObjectsV2 page parser
 * (lib/store/s3_internal.h, keep_s3_parse_list), fed whatever the server
 * (or anything between) sends.
 *
 * The first input byte picks the prefix to strip ("" or "p/"), the rest is
 * the XML. Properties: no crash, leak or overread; every listed key is a
 * valid key (keep_key_valid) and its version fits; every skipped entry's
 * name is one printable line; a truncated page names its next page by
 * exactly one of a continuation token or a StartAfter key. The input is
 * also run through the reference sanitizer alone: its output is never
 * longer, and its rewrite offsets ascend within it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/store/s3_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *strips[] = {"", "p/"};
	struct keep_list l;
	char token[1024], after[1024], *clean;
	bool truncated = false;
	const char *strip;
	size_t i, cleanlen, *at, nat;
	int rc;

	if (size < 1)
		return 0;
	strip = strips[data[0] & 1];
	keep_list_init(&l);
	token[0] = after[0] = '\0';
	rc = keep_s3_parse_list((const char *)data + 1, size - 1, strip, &l, &truncated, token,
				sizeof(token), after, sizeof(after));
	if (rc != 0 && rc != KEEP_ERR_PARSE && rc != KEEP_ERR_NOMEM && rc != KEEP_ERR_TOOBIG)
		abort();
	for (i = 0; i < l.n; i++) {
		if (!l.v[i].key || !keep_key_valid(l.v[i].key))
			abort();
		if (strnlen(l.v[i].version, KEEP_VERSION_MAX) >= KEEP_VERSION_MAX)
			abort();
	}
	for (i = 0; i < l.nskipped && i < KEEP_LIST_SKIP_NAMED; i++) {
		const char *k = l.skipped[i].key;
		if (strnlen(k, KEEP_LIST_SKIP_TEXT) >= KEEP_LIST_SKIP_TEXT)
			abort();
		for (; *k; k++)
			if ((unsigned char)*k < 0x20 || (unsigned char)*k >= 0x7f)
				abort();
	}
	if (rc == 0 && truncated && !token[0] == !after[0])
		abort();
	if (strnlen(token, sizeof(token)) >= sizeof(token) ||
	    strnlen(after, sizeof(after)) >= sizeof(after))
		abort();
	keep_list_release(&l);

	if (keep_s3_xml_sanitize((const char *)data + 1, size - 1, &clean, &cleanlen, &at, &nat) ==
	    0) {
		if (clean && cleanlen > size - 1)
			abort();
		for (i = 0; i < nat; i++)
			if (at[i] >= cleanlen || (i && at[i] <= at[i - 1]))
				abort();
		free(clean);
		free(at);
	}
	return 0;
}
