/* keep — ownership records over the store (process glue; ADR 0020 §2, §3;
 * docs/ownership.md).
 *
 * The record read and write the ownership machines ask for
 * (lib/core/ownio.h REC_READ, REC_WRITE), and owner-show's read: one store
 * request each, encoded or decoded. nodes/<id> is read with keep_node_read
 * (storecmd.h). Like every keep_store_* call, both always fill *reply (a
 * request refused before it was sent is REFUSED with a detail). Every
 * pointer is borrowed. */
#ifndef KEEP_OWNSTORE_H
#define KEEP_OWNSTORE_H

#include "nodeobj.h"
#include "ownerrec.h"
#include "store/store.h"

/* GET owners/<key> (keep_store_get_ours) and decode: *reply gets the
 * outcome; when OK, *rec the record and *decode_err 0, or the decode error
 * (KEEP_ERR_NOTOURS for an object keep cannot hold: reply->not_ours, its
 * detail kept). */
void keep_owner_get(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		    int *decode_err, struct keep_reply *reply);

/* PUT owners/<key> = encode(rec) with cond (If-Match if_match). Never a
 * DELETE (RGW ignores If-Match on DELETE). Outcome in *reply (a NOT_FOUND
 * reply to an If-Match write is reported as CONFLICT: the condition
 * failed). */
void keep_owner_put(struct keep_store *s, const char *key, const struct keep_owner_rec *rec,
		    enum keep_cond cond, const char *if_match, struct keep_reply *reply);

#endif
