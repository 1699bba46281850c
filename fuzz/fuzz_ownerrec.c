/* keep — libFuzzer harness: the ownership record codec (lib/codec/ownerrec.h).
 *
 * Untrusted bytes: any object under owners/. Properties: decode never
 * crashes; an accepted record is canonical (encode gives back the input
 * bytes) and within bounds (generation 1..2^53-1, a valid node id and a
 * 32-hex instance when held). A record carries no time; the one number
 * computed from it, the next acquisition's generation + 1, stays inside
 * int64 (UBSan aborts otherwise; issue 18 item 4). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/codec/ownerrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_owner_rec r, r2;
	struct keep_buf b;
	char err[256];
	int rc;

	err[0] = '\0';
	rc = keep_owner_rec_decode((const char *)data, size, &r, err, sizeof(err));
	/* also with no room for a reason */
	if (keep_owner_rec_decode((const char *)data, size, &r2, NULL, 0) != rc)
		abort();
	if (rc != 0) {
		if (rc != KEEP_ERR_NOTOURS && rc != KEEP_ERR_PARSE && rc != KEEP_ERR_TOOBIG)
			abort();
		if (strnlen(err, sizeof(err)) >= sizeof(err))
			abort();
		return 0;
	}
	if (size > KEEP_OWNERREC_MAX || r.generation < 1 || r.generation > KEEP_OWNER_GEN_MAX)
		abort();
	if (r.held && (!keep_node_id_valid(r.node) || strlen(r.instance) != KEEP_INSTANCE_LEN))
		abort();
	{
		volatile int64_t next = r.generation + 1; /* what an acquisition writes */

		if (next <= r.generation)
			abort();
	}
	keep_buf_init(&b, KEEP_OWNERREC_MAX);
	if (keep_owner_rec_encode(&r, &b) != 0)
		abort();
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort();
	keep_buf_release(&b);
	return 0;
}
