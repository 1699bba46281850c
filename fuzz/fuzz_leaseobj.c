/* keep — libFuzzer harness: the old per-actor lease and upgrade marker
 * codec of leases/ (lib/core/upgrade.h, keep_lease_obj_decode).
 *
 * Untrusted bytes: objects written by old binaries, or by anyone.
 * Properties: decode never crashes; what it accepts is canonical (encode
 * gives back the input bytes) and within bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/core/upgrade.h"
#include "../lib/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_lease_obj o;
	struct keep_buf b;
	char err[256];
	int rc;

	err[0] = '\0';
	rc = keep_lease_obj_decode((const char *)data, size, &o, err, sizeof(err));
	if (rc != 0) {
		if (rc != KEEP_ERR_NOTOURS && rc != KEEP_ERR_PARSE && rc != KEEP_ERR_TOOBIG)
			abort();
		if (strnlen(err, sizeof(err)) >= sizeof(err))
			abort();
		return 0;
	}
	if (size > KEEP_LEASEOBJ_MAX || (o.format != 1 && o.format != 2))
		abort();
	if (o.format == 1 && (!keep_node_id_valid(o.node) || o.generation < 0 ||
			      o.generation > KEEP_UPGRADE_GEN_MAX || o.expires_at_ms <= 0))
		abort();
	if (o.format == 2 && (o.seed < 0 || o.seed > KEEP_UPGRADE_GEN_MAX))
		abort();
	keep_buf_init(&b, KEEP_LEASEOBJ_MAX);
	if (keep_lease_obj_encode(&o, &b) != 0)
		abort();
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort();
	keep_buf_release(&b);
	return 0;
}
