/* keep — libFuzzer harness: the node lease codec (lib/nodeobj.h).
 *
 * Untrusted bytes: any object under nodes/ in the bucket. Properties:
 * decode never crashes or reads past len; a format-3 object that decodes
 * is canonical (encoding the result gives back exactly the input bytes);
 * anything it accepts has its documented bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/err.h"
#include "../lib/nodeobj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keep_node_obj o, o2;
	struct keep_buf b;
	char err[256];
	int rc;

	rc = keep_node_obj_decode((const char *)data, size, &o, err, sizeof(err));
	if (rc != 0) {
		if (rc != KEEP_ERR_NOTOURS && rc != KEEP_ERR_PARSE && rc != KEEP_ERR_TOOBIG)
			abort();
		if (strnlen(err, sizeof(err)) >= sizeof(err) || !err[0])
			abort(); /* a reason is always given, NUL-terminated */
		return 0;
	}
	if (size > KEEP_NODEOBJ_MAX)
		abort();
	if (!keep_node_id_valid(o.node))
		abort();
	if (o.format != 3)
		return 0;
	keep_buf_init(&b, KEEP_NODEOBJ_MAX);
	if (keep_node_obj_encode(&o, &b) != 0)
		abort(); /* encode refuses only what decode refuses */
	if (b.len != size || memcmp(b.data, data, size) != 0)
		abort(); /* strict format: the accepted bytes are the canonical ones */
	if (keep_node_obj_decode(b.data, b.len, &o2, err, sizeof(err)) != 0)
		abort();
	if (o.state != o2.state || o.seq != o2.seq || o.written_at_ms != o2.written_at_ms ||
	    strcmp(o.instance, o2.instance) != 0 || strcmp(o.node, o2.node) != 0)
		abort();
	keep_buf_release(&b);
	return 0;
}
