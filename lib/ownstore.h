/* keep — ownership records and node objects over the store (process glue;
 * ADR 0020 §2, §3; docs/ownership.md).
 *
 * The reads and the write the ownership machines ask for
 * (lib/core/ownio.h REC_READ, NODE_READ, REC_WRITE), and owner-show's
 * reads: one store request each, decoded. Every pointer is borrowed. */
#ifndef KEEP_OWNSTORE_H
#define KEEP_OWNSTORE_H

#include "nodeobj.h"
#include "ownerrec.h"
#include "store/store.h"

/* GET owners/<key> and decode: *reply gets the outcome (local errors are
 * REFUSED with a detail); when OK, *rec the record and *decode_err 0, or
 * the decode error. Always 0. All pointers borrowed. */
int keep_owner_get(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		   int *decode_err, struct keep_reply *reply);

/* GET nodes/<node> and decode as keep_owner_get; an object naming another
 * node than its key is a decode error (KEEP_ERR_PARSE). Always 0. */
int keep_owner_get_node(struct keep_store *s, const char *node, struct keep_node_obj *obj,
			int *decode_err, struct keep_reply *reply);

/* PUT owners/<key> = encode(rec) with cond (If-Match if_match). Never a
 * DELETE (RGW ignores If-Match on DELETE). Outcome in *reply (a NOT_FOUND
 * reply to an If-Match write is reported as CONFLICT: the condition
 * failed). Always 0. */
int keep_owner_put(struct keep_store *s, const char *key, const struct keep_owner_rec *rec,
		   enum keep_cond cond, const char *if_match, struct keep_reply *reply);

#endif
