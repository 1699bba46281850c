/* keep — ownership records over the store (ownstore.h). */
#include "ownstore.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"

void keep_owner_read(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		     struct keep_owner_read *r)
{
	char rk[KEEP_KEY_MAX + 1];
	struct keep_buf body;

	memset(r, 0, sizeof(*r));
	memset(rec, 0, sizeof(*rec));
	if (keep_owner_record_key(key, rk, sizeof(rk)) != 0) {
		keep_reply_set(&r->reply, KEEP_STORE_REFUSED, 0, "not sent: invalid key");
		snprintf(r->why, sizeof(r->why), "refused: not sent: invalid key");
		return;
	}
	keep_buf_init(&body, KEEP_BODY_MAX);
	/* an object keep cannot hold (over 64 KiB) reads as not ours: 17 */
	keep_store_get_ours(s, rk, &body, &r->reply);
	if (r->reply.outcome != KEEP_STORE_OK) {
		snprintf(r->why, sizeof(r->why), "%s: %.120s", keep_outcome_name(r->reply.outcome),
			 r->reply.detail[0] ? r->reply.detail : "-");
	} else if (r->reply.not_ours) {
		r->derr = KEEP_ERR_NOTOURS;
		snprintf(r->why, sizeof(r->why), "%.150s", r->reply.detail);
	} else {
		r->derr = keep_owner_rec_decode(body.data ? body.data : "", body.len, rec, r->why,
						sizeof(r->why));
		r->ok = r->derr == 0;
	}
	keep_buf_release(&body);
}

void keep_owner_put(struct keep_store *s, const char *key, const struct keep_owner_rec *rec,
		    enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	char rk[KEEP_KEY_MAX + 1];
	struct keep_buf body;
	int rc;

	memset(reply, 0, sizeof(*reply));
	if (keep_owner_record_key(key, rk, sizeof(rk)) != 0) {
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "not sent: invalid key");
		return;
	}
	keep_buf_init(&body, KEEP_OWNERREC_MAX);
	rc = keep_owner_rec_encode(rec, &body);
	if (rc)
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "not sent: %s", keep_strerror(rc));
	else
		keep_store_put(s, rk, body.data, body.len, cond,
			       cond == KEEP_COND_IF_MATCH ? if_match : NULL, reply);
	if (cond == KEEP_COND_IF_MATCH && reply->outcome == KEEP_STORE_NOT_FOUND)
		reply->outcome = KEEP_STORE_CONFLICT;
	keep_buf_release(&body);
}
