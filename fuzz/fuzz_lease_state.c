/* keep — libFuzzer harness: the node lease state file decoder
 * (lib/codec/statefile.h, keep_lease_state_decode): STATE_DIR/ID/lease, read by
 * lease-status, owner-check and the owner commands.
 *
 * Properties: no crash or overread (the input is exactly len bytes, not
 * NUL-terminated); no NUL byte is accepted inside a value (it would cut
 * the value short silently); an accepted state (format 2, or an older
 * lease-write's format 1) encodes (always format 2) and decodes back to
 * the same fields (an empty optional string is written as "-"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/codec/statefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The encoder writes an empty optional string as "-": compare them alike. */
static int str_differs(const char *a, const char *b)
{
	if (!*a)
		a = "-";
	if (!*b)
		b = "-";
	return strcmp(a, b) != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_lease_state s, s2;
	struct keep_buf b;
	int rc;

	rc = keep_lease_state_decode((const char *)data, size, &s);
	if (rc != 0) {
		if (rc != KEEP_ERR_PARSE && rc != KEEP_ERR_NOTOURS)
			abort();
		return 0;
	}
	if (memchr(data, '\0', size))
		abort(); /* strict: a NUL is never part of a state file */
	keep_buf_init(&b, 65536);
	if (keep_lease_state_encode(&s, &b) != 0)
		abort();
	if (keep_lease_state_decode(b.data, b.len, &s2) != 0)
		abort();
	if (strcmp(s.node, s2.node) || str_differs(s.instance, s2.instance) ||
	    str_differs(s.boot_id, s2.boot_id) || strcmp(s.phase, s2.phase) ||
	    str_differs(s.reason, s2.reason) || str_differs(s.version, s2.version) ||
	    s.pid != s2.pid || s.written_at_ms != s2.written_at_ms ||
	    str_differs(s.clock, s2.clock) || s.valid_until_ms != s2.valid_until_ms ||
	    s.valid_until_wall_ms != s2.valid_until_wall_ms ||
	    s.live_since_ms != s2.live_since_ms || s.lapses != s2.lapses ||
	    s.updated_wall_ms != s2.updated_wall_ms)
		abort();
	keep_buf_release(&b);
	return 0;
}
