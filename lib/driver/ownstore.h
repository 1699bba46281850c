/* keep — ownership records over the store (process glue; ADR 0020 §2, §3;
 * docs/ownership.md).
 *
 * The record read and write the ownership machines ask for
 * (lib/core/ownio.h REC_READ, REC_WRITE), and owner-show's and
 * owner-watch's reads: one store request each, encoded or decoded. nodes/<id> is read with
 * keep_node_read (storecmd.h). Like every keep_store_* call, both always fill *reply (a request
 * refused before it was sent is REFUSED with a detail). Every pointer is borrowed. */
#ifndef KEEP_OWNSTORE_H
#define KEEP_OWNSTORE_H

#include <stdbool.h>

#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"
#include "../store/store.h"

/* What one read of owners/<key> found (as struct keep_node_read). */
struct keep_owner_read {
	struct keep_reply reply; /* the GET's (version on OK); an object keep cannot
				    hold reads as OK with not_ours (keep_store_get_ours) */
	bool ok;		 /* decoded into *rec */
	int derr;		 /* reply OK but not usable: KEEP_ERR_NOTOURS (not_ours, or
				    not an ownership record), _PARSE, _TOOBIG */
	char why[160];		 /* !ok: one line: the decode error, or "OUTCOME: detail" */
};

/* GET owners/<key> (keep_store_get_ours; key a valid actor key, else
 * REFUSED "not sent") and decode it into *rec (caller owned; valid only
 * when r->ok). Never prints. ADR 0020 §3: the versioned read every
 * decision on a record starts from. */
void keep_owner_read(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		     struct keep_owner_read *r);

/* PUT owners/<key> = encode(rec) with cond (If-Match if_match). Never a
 * DELETE (RGW ignores If-Match on DELETE). Outcome in *reply (a NOT_FOUND
 * reply to an If-Match write is reported as CONFLICT: the condition
 * failed). */
void keep_owner_put(struct keep_store *s, const char *key, const struct keep_owner_rec *rec,
		    enum keep_cond cond, const char *if_match, struct keep_reply *reply);

#endif
