/* keep — libFuzzer harness: the old per-actor lease and upgrade marker
 * codec of leases/ (lib/core/upgrade.h, keep_lease_obj_decode).
 *
 * Untrusted bytes: objects written by old binaries, or by anyone.
 * Properties: decode never crashes; what it accepts is canonical (encode
 * gives back the input bytes) and within bounds, expires_at_ms at most
 * KEEP_WALL_MAX_MS; and what the marking computes from it (live until
 * expires_at + grace, the seed + 1 of the first record), at the largest
 * grace the configuration accepts and clocks from INT64_MIN to INT64_MAX,
 * runs without a UBSan report (issue 18 item 4). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/core/upgrade.h"

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
	if (o.format == 1 && o.expires_at_ms > KEEP_WALL_MAX_MS)
		abort(); /* every time bounded at decode */
	{
		static const int64_t nows[] = {INT64_MIN, 0, 1767225600123LL, KEEP_WALL_MAX_MS,
					       INT64_MAX};
		struct keep_timing t;
		volatile int64_t sink;
		size_t i;

		keep_timing_defaults(&t);
		t.grace_ms = 86400000; /* the largest accepted */
		/* plain arithmetic stays inside int64 thanks to the bound */
		sink = o.expires_at_ms + t.grace_ms;
		sink = keep_add_sat_ms(o.expires_at_ms,
				       t.grace_ms); /* lib/driver/upgrade.c live_until */
		sink = keep_upgrade_seed_of(o.format == 1 ? o.generation : o.seed, 0) + 1;
		for (i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
			(void)keep_old_lease_live(&o, nows[i], &t);
			(void)keep_upgrade_mark_decide(KEEP_STORE_OK, &o, 0, nows[i], &t);
		}
		(void)sink;
	}
	keep_buf_init(&b, KEEP_LEASEOBJ_MAX);
	if (keep_lease_obj_encode(&o, &b) != 0)
		abort();
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort();
	keep_buf_release(&b);
	return 0;
}
