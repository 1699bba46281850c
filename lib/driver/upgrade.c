/* keep — the upgrade from per-actor leases over the store (ADR 0020 §6). */
#include "upgrade.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../codec/ownerrec.h"

/* The highest generation under one segment prefix (top KEY "/"). */
static int keys_max_under(struct keep_store *s, const char *top, const char *key, int64_t *highest,
			  char detail[KEEP_DETAIL_MAX])
{
	char prefix[KEEP_KEY_MAX + 1];
	struct keep_list l;
	struct keep_reply r;
	size_t i;
	int rc;

	if ((size_t)snprintf(prefix, sizeof(prefix), "%s%s/", top, key) >= sizeof(prefix)) {
		snprintf(detail, KEEP_DETAIL_MAX, "key too long");
		return KEEP_ERR_PARSE;
	}
	keep_list_init(&l);
	keep_store_list(s, prefix, &l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		snprintf(detail, KEEP_DETAIL_MAX, "unable to list %.100s: %s: %.100s", prefix,
			 keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
		keep_list_release(&l);
		return r.outcome == KEEP_STORE_REFUSED ? KEEP_ERR_PERM : KEEP_ERR_STORE;
	}
	for (i = 0; i < l.n; i++) {
		int64_t g;

		rc = keep_upgrade_segment_gen(prefix, l.v[i].key, &g);
		if (rc == KEEP_ERR_INVAL)
			continue; /* not under the prefix: a backend's stray entry */
		if (rc) {
			snprintf(detail, KEEP_DETAIL_MAX,
				 "segment key '%.200s' carries no generation", l.v[i].key);
			keep_list_release(&l);
			return KEEP_ERR_PARSE;
		}
		if (g > *highest)
			*highest = g;
	}
	keep_list_release(&l);
	return 0;
}

int keep_upgrade_keys_max(struct keep_store *s, const char *key, int64_t *highest,
			  char detail[KEEP_DETAIL_MAX])
{
	int rc;

	*highest = 0;
	rc = keys_max_under(s, KEEP_WAL_PREFIX, key, highest, detail);
	if (rc == 0)
		rc = keys_max_under(s, KEEP_SNAPSHOT_PREFIX, key, highest, detail);
	return rc;
}

int keep_upgrade_mark_actor(struct keep_store *s, const char *key, int64_t now_wall_ms,
			    const struct keep_timing *t, struct keep_mark_result *res)
{
	struct keep_mark m;
	struct keep_oact act;
	struct keep_oreply r;

	memset(res, 0, sizeof(*res));
	if (!keep_owner_key_valid(key))
		return KEEP_ERR_INVAL;
	keep_mark_init(&m, key, t);
	for (;;) {
		keep_mark_next(&m, &act);
		if (act.kind == KEEP_OACT_DONE)
			break;
		keep_upgrade_store_act(s, &act, &r);
		keep_mark_on_reply(&m, now_wall_ms, &r);
	}
	*res = m.res;
	return 0;
}

void keep_upgrade_store_act(struct keep_store *s, const struct keep_oact *act,
			    struct keep_oreply *r)
{
	char lk[KEEP_KEY_MAX + 1], err[160];
	struct keep_buf body;
	struct keep_reply rep;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&rep, 0, sizeof(rep));
	snprintf(lk, sizeof(lk), "%s%s", KEEP_LEASES_PREFIX, act->key);
	switch (act->kind) {
	case KEEP_OACT_KEYS_MAX:
		rc = keep_upgrade_keys_max(s, act->key, &r->keys_max, r->detail);
		r->outcome = rc == KEEP_ERR_STORE  ? KEEP_STORE_AMBIGUOUS
			     : rc == KEEP_ERR_PERM ? KEEP_STORE_REFUSED
						   : KEEP_STORE_OK;
		r->decode_err = rc == KEEP_ERR_PARSE ? KEEP_ERR_PARSE : 0;
		return;
	case KEEP_OACT_MARK_READ:
		keep_buf_init(&body, KEEP_BODY_MAX);
		/* an object keep cannot hold (over 64 KiB) reads as not ours */
		keep_store_get_ours(s, lk, &body, &rep);
		err[0] = '\0';
		if (rep.outcome == KEEP_STORE_OK && rep.not_ours) {
			r->decode_err = KEEP_ERR_NOTOURS;
		} else if (rep.outcome == KEEP_STORE_OK) {
			r->decode_err = keep_lease_obj_decode(body.data ? body.data : "", body.len,
							      &r->lobj, err, sizeof(err));
			if (r->decode_err)
				snprintf(rep.detail, sizeof(rep.detail), "%s", err);
		}
		keep_buf_release(&body);
		break;
	case KEEP_OACT_MARK_WRITE:
		keep_buf_init(&body, KEEP_LEASEOBJ_MAX);
		rc = keep_lease_obj_encode(&act->lobj, &body);
		if (rc)
			keep_reply_set(&rep, KEEP_STORE_REFUSED, 0,
				       "unable to encode the marker: %s", keep_strerror(rc));
		else
			keep_store_put(s, lk, body.data, body.len, act->cond,
				       act->cond == KEEP_COND_IF_MATCH ? act->if_match : NULL,
				       &rep);
		keep_buf_release(&body);
		break;
	default:
		keep_reply_set(&rep, KEEP_STORE_REFUSED, 0, "not a marking action");
		break;
	}
	r->outcome = rep.outcome;
	snprintf(r->version, sizeof(r->version), "%s", rep.version);
	snprintf(r->detail, sizeof(r->detail), "%s", rep.detail);
}
