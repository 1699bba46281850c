/* keep — libFuzzer harness: the small S3 reply parsers
 * (lib/store/s3_internal.h): the <Error><Code> of an error body
 * (keep_s3_error_code) and the version token of an ETag
 * (keep_s3_version_from_etag). Both see bytes from the server.
 *
 * The same input goes to both, and to the classifier with the code found.
 * Properties: no crash or overread; outputs NUL-terminated within their
 * buffers; a code is reported found only when non-empty. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/store/s3_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char code[64], small[4], ver[KEEP_VERSION_MAX];
	bool found;
	int rc;

	memset(code, 'x', sizeof(code));
	found = keep_s3_error_code((const char *)data, size, code, sizeof(code));
	if (strnlen(code, sizeof(code)) >= sizeof(code))
		abort();
	if (found && !code[0])
		abort();
	if (!found && code[0])
		abort(); /* "" when absent */
	memset(small, 'x', sizeof(small));
	(void)keep_s3_error_code((const char *)data, size, small, sizeof(small));
	if (strnlen(small, sizeof(small)) >= sizeof(small))
		abort();
	(void)keep_s3_classify(KEEP_S3_PUT, KEEP_COND_IF_MATCH, 404, found ? code : NULL);

	memset(ver, 'x', sizeof(ver));
	rc = keep_s3_version_from_etag((const char *)data, size, ver, sizeof(ver));
	if (strnlen(ver, sizeof(ver)) >= sizeof(ver))
		abort();
	if (rc == 0 && !ver[0])
		abort();
	if (rc != 0 && rc != KEEP_ERR_TOOBIG && rc != KEEP_ERR_PARSE)
		abort();
	return 0;
}
