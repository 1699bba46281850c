/* keep — libFuzzer harness: key validation (lib/store/store.h
 * keep_key_valid / keep_prefix_valid, lib/codec/ownerrec.h keep_owner_key_valid,
 * lib/codec/nodeobj.h keep_node_id_valid, lib/core/upgrade.h
 * keep_upgrade_actor_of / keep_upgrade_segment_gen): every name a user, a
 * stdin batch or a listing hands to the store.
 *
 * The input (cut at the first NUL, as C strings are) is checked against
 * the documented rules independently: a valid key has 1..KEEP_KEY_MAX
 * bytes, no leading '/', no empty, "." or ".." segment, no control byte or
 * backslash. An actor key valid for owners/ is a valid store key under
 * owners/, wal/ and leases/. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/codec/nodeobj.h"
#include "../lib/codec/ownerrec.h"
#include "../lib/core/upgrade.h"
#include "../lib/store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The documented rule for a store key (store.h), written out again. */
static bool rule_key(const char *k)
{
	size_t n = strlen(k), i, seg = 0;

	if (n < 1 || n > KEEP_KEY_MAX || k[0] == '/')
		return false;
	for (i = 0; i <= n; i++) {
		if (i == n || k[i] == '/') {
			size_t len = i - seg;
			if (len == 0 || (len == 1 && k[seg] == '.') ||
			    (len == 2 && k[seg] == '.' && k[seg + 1] == '.'))
				return false;
			seg = i + 1;
			continue;
		}
		if ((unsigned char)k[i] < 0x20 || k[i] == 0x7f || k[i] == '\\')
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *k, buf[KEEP_KEY_MAX + 64], actor[KEEP_OWNER_KEY_MAX + 1];
	bool valid;
	int64_t gen;

	k = malloc(size + 1);
	if (!k)
		return 0;
	memcpy(k, data, size);
	k[size] = '\0';

	valid = keep_key_valid(k);
	/* the implementation may refuse more (a backend's rules), never less */
	if (valid && !rule_key(k))
		abort();
	if (keep_prefix_valid(k) && k[0] && k[strlen(k) - 1] == '/') {
		char *t = strndup(k, strlen(k) - 1);
		if (t && !rule_key(t))
			abort(); /* a non-empty prefix is a valid key plus '/' */
		free(t);
	}
	if (keep_node_id_valid(k)) {
		snprintf(buf, sizeof(buf), "nodes/%s", k);
		if (strlen(k) > KEEP_NODE_ID_MAX || k[0] == '.' || strchr(k, '/') ||
		    !keep_key_valid(buf))
			abort();
	}
	if (keep_owner_key_valid(k)) {
		if (strlen(k) > KEEP_OWNER_KEY_MAX)
			abort();
		if (keep_owner_record_key(k, buf, sizeof(buf)) != 0 || !keep_key_valid(buf))
			abort();
		snprintf(buf, sizeof(buf), "leases/%s", k);
		if (!keep_key_valid(buf))
			abort();
		snprintf(buf, sizeof(buf), "wal/%s/1/0", k);
		if (!keep_key_valid(buf))
			abort();
		if (keep_upgrade_actor_of("wal/", buf, actor, sizeof(actor)) != 0 ||
		    strcmp(actor, k) != 0)
			abort();
	}
	/* a listed key under a fixed actor's prefix, and under every top */
	(void)keep_upgrade_segment_gen("wal/t/c/n/", k, &gen);
	if (keep_upgrade_segment_gen("wal/t/c/n/", k, &gen) == 0 &&
	    (gen < 0 || gen > KEEP_UPGRADE_GEN_MAX))
		abort();
	if (keep_upgrade_actor_of("owners/", k, actor, sizeof(actor)) == 0 &&
	    !keep_owner_key_valid(actor))
		abort();
	(void)keep_upgrade_actor_of("snapshot/", k, actor, sizeof(actor));
	(void)keep_upgrade_actor_of("leases/", k, actor, 8);
	free(k);
	return 0;
}
