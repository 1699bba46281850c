/* keep — ownership records over the store (ownstore.h). */
#include "ownstore.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

void keep_owner_get(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		    int *decode_err, struct keep_reply *reply)
{
	char rk[KEEP_KEY_MAX + 1];
	struct keep_buf body;

	*decode_err = 0;
	if (keep_owner_record_key(key, rk, sizeof(rk)) != 0) {
		memset(reply, 0, sizeof(*reply));
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "not sent: invalid key");
		return;
	}
	keep_buf_init(&body, KEEP_BODY_MAX);
	/* an object keep cannot hold (over 64 KiB) reads as not ours: 17 */
	keep_store_get_ours(s, rk, &body, reply);
	if (reply->outcome == KEEP_STORE_OK)
		*decode_err = reply->not_ours ? KEEP_ERR_NOTOURS
					      : keep_owner_rec_decode(body.data ? body.data : "",
								      body.len, rec, NULL, 0);
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
