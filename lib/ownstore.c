/* keep — ownership records and node objects over the store (ownstore.h). */
#include "ownstore.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

int keep_owner_get(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		   int *decode_err, struct keep_reply *reply)
{
	char rk[KEEP_KEY_MAX + 1];
	struct keep_buf body;
	int rc;

	memset(reply, 0, sizeof(*reply));
	*decode_err = 0;
	rc = keep_owner_record_key(key, rk, sizeof(rk));
	if (rc) {
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "invalid key");
		return 0;
	}
	keep_buf_init(&body, KEEP_BODY_MAX);
	rc = keep_store_get(s, rk, &body, reply);
	if (rc)
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
	else if (reply->outcome == KEEP_STORE_OK)
		*decode_err =
		    keep_owner_rec_decode(body.data ? body.data : "", body.len, rec, NULL, 0);
	keep_buf_release(&body);
	return 0;
}

int keep_owner_get_node(struct keep_store *s, const char *node, struct keep_node_obj *obj,
			int *decode_err, struct keep_reply *reply)
{
	char k[KEEP_NODE_ID_MAX + 8];
	char err[256];
	struct keep_buf body;
	int rc;

	memset(reply, 0, sizeof(*reply));
	*decode_err = 0;
	snprintf(k, sizeof(k), "nodes/%s", node);
	keep_buf_init(&body, KEEP_BODY_MAX);
	rc = keep_store_get(s, k, &body, reply);
	if (rc)
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
	else if (reply->outcome == KEEP_STORE_OK) {
		*decode_err = keep_node_obj_decode(body.data ? body.data : "", body.len, obj, err,
						   sizeof(err));
		if (!*decode_err && strcmp(obj->node, node) != 0)
			*decode_err = KEEP_ERR_PARSE;
	}
	keep_buf_release(&body);
	return 0;
}

int keep_owner_put(struct keep_store *s, const char *key, const struct keep_owner_rec *rec,
		   enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	char rk[KEEP_KEY_MAX + 1];
	struct keep_buf body;
	int rc;

	memset(reply, 0, sizeof(*reply));
	if (keep_owner_record_key(key, rk, sizeof(rk)) != 0) {
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "invalid key");
		return 0;
	}
	keep_buf_init(&body, KEEP_OWNERREC_MAX);
	rc = keep_owner_rec_encode(rec, &body);
	if (!rc)
		rc = keep_store_put(s, rk, body.data, body.len, cond,
				    cond == KEEP_COND_IF_MATCH ? if_match : NULL, reply);
	if (rc)
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
	else if (cond == KEEP_COND_IF_MATCH && reply->outcome == KEEP_STORE_NOT_FOUND)
		reply->outcome = KEEP_STORE_CONFLICT;
	keep_buf_release(&body);
	return 0;
}
