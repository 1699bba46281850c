/* keep — the upgrade from per-actor leases over the store (ADR 0020 §6). */
#include "upgrade.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "ownerrec.h"

const char *keep_mark_result_name(enum keep_mark_result_kind k)
{
	switch (k) {
	case KEEP_MR_MARKED:
		return "marked";
	case KEEP_MR_HELD:
		return "held";
	case KEEP_MR_BAD_OBJECT:
		return "bad-object";
	case KEEP_MR_BAD_KEY:
		return "bad-key";
	case KEEP_MR_FAILED:
		return "failed";
	}
	return "unknown";
}

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

/* Fill res for a failed listing (rc from keep_upgrade_keys_max). */
static void keys_failed(struct keep_mark_result *res, int rc)
{
	res->kind = rc == KEEP_ERR_PARSE ? KEEP_MR_BAD_KEY : KEEP_MR_FAILED;
	res->refused = rc == KEEP_ERR_PERM;
}

int keep_upgrade_mark_actor(struct keep_store *s, const char *key, int64_t now_wall_ms,
			    const struct keep_timing *t, struct keep_mark_result *res)
{
	char lk[KEEP_KEY_MAX + 1];
	struct keep_buf body, enc;
	struct keep_reply r;
	struct keep_lease_obj o, marker;
	int tries, rc, derr;
	char err[160];
	char read_version[KEEP_VERSION_MAX];

	memset(res, 0, sizeof(*res));
	if (!keep_owner_key_valid(key))
		return KEEP_ERR_INVAL;
	snprintf(lk, sizeof(lk), "%s%s", KEEP_LEASES_PREFIX, key);
	keep_buf_init(&body, KEEP_BODY_MAX);
	keep_buf_init(&enc, KEEP_LEASEOBJ_MAX);
	res->kind = KEEP_MR_FAILED;
	snprintf(res->detail, sizeof(res->detail), "leases/%.100s kept changing", key);
	for (tries = 0; tries < KEEP_MARK_TRIES; tries++) {
		enum keep_mark_verdict v;
		enum keep_cond cond;
		int64_t highest = 0;

		keep_buf_reset(&body);
		/* an object keep cannot hold (over 64 KiB) reads as not ours */
		keep_store_get_ours(s, lk, &body, &r);
		derr = 0;
		err[0] = '\0';
		if (r.outcome == KEEP_STORE_OK && r.not_ours) {
			derr = KEEP_ERR_NOTOURS;
			snprintf(err, sizeof(err), "%.150s", r.detail);
		} else if (r.outcome == KEEP_STORE_OK) {
			derr = keep_lease_obj_decode(body.data ? body.data : "", body.len, &o, err,
						     sizeof(err));
		}
		v = keep_upgrade_mark_decide(r.outcome,
					     r.outcome == KEEP_STORE_OK && !derr ? &o : NULL, derr,
					     now_wall_ms, t);
		switch (v) {
		case KEEP_MARK_HELD:
			res->kind = KEEP_MR_HELD;
			res->old = o;
			res->live_until_ms = keep_add_sat_ms(o.expires_at_ms, t->grace_ms);
			snprintf(res->detail, sizeof(res->detail), "a live old lease names '%.64s'",
				 o.node);
			goto done;
		case KEEP_MARK_BAD_OBJECT:
			res->kind = KEEP_MR_BAD_OBJECT;
			snprintf(res->detail, sizeof(res->detail), "%.100s: %.120s", lk, err);
			goto done;
		case KEEP_MARK_FAILED:
			res->kind = KEEP_MR_FAILED;
			res->refused = r.outcome == KEEP_STORE_REFUSED;
			snprintf(res->detail, sizeof(res->detail),
				 "unable to read %.100s: %s: %.100s", lk,
				 keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
			goto done;
		case KEEP_MARK_CREATE:
		case KEEP_MARK_REPLACE:
		case KEEP_MARK_EXISTING:
			break;
		}
		rc = keep_upgrade_keys_max(s, key, &highest, res->detail);
		if (rc) {
			keys_failed(res, rc);
			goto done;
		}
		res->keys_max = highest;
		if (v == KEEP_MARK_EXISTING) {
			res->kind = KEEP_MR_MARKED;
			res->action = KEEP_MARK_EXISTING;
			res->seed = keep_upgrade_seed_of(o.seed, highest);
			res->detail[0] = '\0';
			goto done;
		}
		memset(&marker, 0, sizeof(marker));
		marker.format = 2;
		marker.seed =
		    keep_upgrade_seed_of(v == KEEP_MARK_REPLACE ? o.generation : 0, highest);
		keep_buf_reset(&enc);
		rc = keep_lease_obj_encode(&marker, &enc);
		if (rc) {
			res->kind = KEEP_MR_FAILED;
			snprintf(res->detail, sizeof(res->detail),
				 "unable to encode the marker: %s", keep_strerror(rc));
			goto done;
		}
		cond = v == KEEP_MARK_CREATE ? KEEP_COND_IF_NONE_MATCH : KEEP_COND_IF_MATCH;
		snprintf(read_version, sizeof(read_version), "%s", r.version);
		keep_store_put(s, lk, enc.data, enc.len, cond,
			       cond == KEEP_COND_IF_MATCH ? read_version : NULL, &r);
		if (r.outcome == KEEP_STORE_OK) {
			res->kind = KEEP_MR_MARKED;
			res->action = v;
			res->seed = marker.seed;
			if (v == KEEP_MARK_REPLACE)
				res->old = o;
			res->detail[0] = '\0';
			goto done;
		}
		if (r.outcome == KEEP_STORE_REFUSED) {
			res->kind = KEEP_MR_FAILED;
			res->refused = true;
			snprintf(res->detail, sizeof(res->detail),
				 "write of %.100s refused: %.100s", lk,
				 r.detail[0] ? r.detail : "-");
			goto done;
		}
		/* a conflict (someone wrote it since our read: an old binary, or
		 * another marker), a NOT_FOUND to If-Match (deleted since), or an
		 * ambiguous reply (our marker may have landed): read again */
		res->kind = KEEP_MR_FAILED;
		snprintf(res->detail, sizeof(res->detail), "write of %.100s: %s: %.100s", lk,
			 keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
	}
done:
	keep_buf_release(&enc);
	keep_buf_release(&body);
	return 0;
}
