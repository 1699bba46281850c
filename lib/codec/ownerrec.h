/* keep — the ownership record owners/<tenant>/<class>/<name> and actor keys
 * (ADR 0020 §3; docs/formats.md "Ownership records", docs/ownership.md).
 *
 * Format 1, one field per line, '\n' after every line, nothing else:
 *
 *   wasmkeep-owner 1
 *   held <node> <instance>      node: a node id (keep_node_id_valid);
 *                               instance: [0-9a-f]{32}
 *   | nobody                    released: names no one
 *   generation <int>            >= 1, decimal, no sign, no leading zero;
 *                               kept by a release, + 1 on every acquisition
 *
 * Strict: an unknown header -> KEEP_ERR_NOTOURS; for header 1 any missing,
 * extra, duplicate, out-of-order or malformed line, a '\r', a NUL, or a
 * body without its final '\n' -> KEEP_ERR_PARSE. At most KEEP_OWNERREC_MAX
 * bytes (KEEP_ERR_TOOBIG).
 *
 * Actor keys: KEY is tenant/class/name, exactly three segments separated
 * by '/', each 1..KEEP_OWNER_SEGMENT_MAX bytes of [A-Za-z0-9._-], not
 * starting with '.'. Nothing is escaped: a key outside that alphabet is
 * refused, never rewritten. */
#ifndef KEEP_OWNERREC_H
#define KEEP_OWNERREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "nodeobj.h"

#define KEEP_OWNER_SEGMENT_MAX 128			    /* bytes per key segment */
#define KEEP_OWNER_KEY_MAX (3 * KEEP_OWNER_SEGMENT_MAX + 2) /* bytes, NUL excluded */
#define KEEP_OWNER_PREFIX "owners/"			    /* the records' prefix */
#define KEEP_OWNERREC_MAX 1024				    /* bytes: largest record */
#define KEEP_OWNER_GEN_MAX 9007199254740991LL		    /* 2^53 - 1: largest generation */

struct keep_owner_rec {
	bool held;			      /* false: "nobody" */
	char node[KEEP_NODE_ID_MAX + 1];      /* "" when nobody */
	char instance[KEEP_INSTANCE_LEN + 1]; /* "" when nobody */
	int64_t generation;		      /* >= 1 */
};

/* True when key is a valid actor key (file comment). NULL is invalid. */
bool keep_owner_key_valid(const char *key);

/* True when p can start a valid actor key (owner-watch's PREFIX, the
 * same rule as keep_owner_key_valid's, cut anywhere): segments of
 * [A-Za-z0-9._-], at most two '/', none empty before a '/', none
 * starting with '.', each at most KEEP_OWNER_SEGMENT_MAX bytes; "" is
 * valid (every key). NULL is invalid. */
bool keep_owner_key_prefix_valid(const char *p);

/* The store key of key's record, "owners/" + key, into out (outlen bytes).
 * 0; KEEP_ERR_INVAL (key invalid); KEEP_ERR_TOOBIG (out too small). */
int keep_owner_record_key(const char *key, char *out, size_t outlen);

/* Decode len bytes at buf (not necessarily NUL-terminated) into *out.
 * 0; KEEP_ERR_NOTOURS; KEEP_ERR_PARSE; KEEP_ERR_TOOBIG. err (errlen
 * bytes, may be NULL) gets a one-line reason on failure. *out is only
 * meaningful on success. */
int keep_owner_rec_decode(const char *buf, size_t len, struct keep_owner_rec *out, char *err,
			  size_t errlen);

/* Append the encoding of r to out (r is borrowed). Refuses with
 * KEEP_ERR_INVAL what decode would refuse; KEEP_ERR_NOMEM/TOOBIG from the
 * buffer (out unchanged then). */
int keep_owner_rec_encode(const struct keep_owner_rec *r, struct keep_buf *out);

/* Fill r: held by node/instance at generation (both strings copied,
 * truncated to their fields; encode validates them). */
void keep_owner_rec_held(struct keep_owner_rec *r, const char *node, const char *instance,
			 int64_t generation);
/* Fill r: nobody, keeping generation. */
void keep_owner_rec_nobody(struct keep_owner_rec *r, int64_t generation);

#endif
