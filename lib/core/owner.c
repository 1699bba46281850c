/* keep — ownership records, sans I/O (owner.h; ADR 0020 §2, §3). */
#include "owner.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "fence.h"

const char *keep_acq_verdict_name(enum keep_acq_verdict v)
{
	switch (v) {
	case KEEP_ACQ_WRITE:
		return "write";
	case KEEP_ACQ_READ_NODE:
		return "read-node";
	case KEEP_ACQ_SAME:
		return "same";
	case KEEP_ACQ_HELD:
		return "held";
	case KEEP_ACQ_BAD_RECORD:
		return "bad-record";
	case KEEP_ACQ_FAILED:
		return "failed";
	}
	return "unknown";
}

const char *keep_rb_verdict_name(enum keep_rb_verdict v)
{
	switch (v) {
	case KEEP_RB_OURS:
		return "ours";
	case KEEP_RB_READ_NODE:
		return "read-node";
	case KEEP_RB_LOST:
		return "lost";
	case KEEP_RB_UNRESOLVED:
		return "unresolved";
	}
	return "unknown";
}

const char *keep_pend_verdict_name(enum keep_pend_verdict v)
{
	switch (v) {
	case KEEP_PEND_KEEP:
		return "keep";
	case KEEP_PEND_END:
		return "end";
	case KEEP_PEND_RELEASE:
		return "release";
	}
	return "unknown";
}

const char *keep_grant_name(enum keep_grant g)
{
	switch (g) {
	case KEEP_GRANT_OK:
		return "ok";
	case KEEP_GRANT_NO_HOLD:
		return "no-hold";
	case KEEP_GRANT_OTHER_GEN:
		return "other-generation";
	case KEEP_GRANT_OLD_INSTANCE:
		return "old-instance";
	case KEEP_GRANT_LAPSED:
		return "lapsed";
	case KEEP_GRANT_RELEASING:
		return "releasing";
	case KEEP_GRANT_NOT_VALID:
		return "not-valid";
	}
	return "unknown";
}

static bool names_self(const struct keep_owner_rec *r, const struct keep_owner_self *self)
{
	return r->held && strcmp(r->node, self->node) == 0 &&
	       strcmp(r->instance, self->instance) == 0;
}

int64_t keep_owner_acq_generation(const struct keep_owner_rec *rec, int64_t first_generation)
{
	if (!rec)
		return first_generation >= 1 ? first_generation : 1;
	return rec->generation + 1;
}

static void set_write(const struct keep_owner_self *self, int64_t gen, struct keep_acq_decision *d)
{
	d->verdict = KEEP_ACQ_WRITE;
	keep_owner_rec_held(&d->next, self->node, self->instance, gen);
}

void keep_owner_acq_on_record(const struct keep_owner_self *self,
			      const struct keep_owner_hold_view *hold, enum keep_outcome outcome,
			      const char *version, const struct keep_owner_rec *rec, int decode_err,
			      int64_t first_generation, struct keep_acq_decision *d)
{
	memset(d, 0, sizeof(*d));
	if (outcome == KEEP_STORE_NOT_FOUND) {
		/* no record: the first generation (§6 seeds it once the upgrade
		 * lands; 1 until then), created only if still absent */
		d->absent = true;
		d->cond = KEEP_COND_IF_NONE_MATCH;
		set_write(self, keep_owner_acq_generation(NULL, first_generation), d);
		d->reason = "absent";
		return;
	}
	if (outcome != KEEP_STORE_OK) {
		d->verdict = KEEP_ACQ_FAILED;
		d->reason = keep_outcome_name(outcome);
		return;
	}
	if (!rec || decode_err) {
		d->verdict = KEEP_ACQ_BAD_RECORD;
		d->reason = decode_err == KEEP_ERR_NOTOURS ? "not-ours" : "malformed";
		return;
	}
	d->rec = *rec;
	d->cond = KEEP_COND_IF_MATCH;
	snprintf(d->if_match, sizeof(d->if_match), "%s", version ? version : "");
	if (rec->generation >= KEEP_OWNER_GEN_MAX) {
		d->verdict = KEEP_ACQ_BAD_RECORD;
		d->reason = "generation-exhausted";
		return;
	}
	if (!rec->held) {
		set_write(self, keep_owner_acq_generation(rec, first_generation), d);
		d->reason = "nobody";
		return;
	}
	if (names_self(rec, self)) {
		if (hold && hold->live && hold->generation == rec->generation) {
			/* R2: the same session re-acquiring gets the same grant */
			d->verdict = KEEP_ACQ_SAME;
			d->reason = "own-hold";
			return;
		}
		/* a hold of this process that ended (§3): take it afresh */
		set_write(self, keep_owner_acq_generation(rec, first_generation), d);
		d->reason = "own-instance";
		return;
	}
	d->verdict = KEEP_ACQ_READ_NODE;
	d->reason = "held";
}

void keep_owner_acq_on_node(const struct keep_owner_self *self, enum keep_outcome outcome,
			    const struct keep_node_obj *obj, int64_t now_wall_ms,
			    const struct keep_timing *t, struct keep_acq_decision *d)
{
	enum keep_free f;
	int64_t at = 0;

	if (outcome != KEEP_STORE_OK && outcome != KEEP_STORE_NOT_FOUND) {
		d->verdict = KEEP_ACQ_FAILED;
		d->reason = keep_outcome_name(outcome);
		return;
	}
	f = keep_node_free(d->rec.node, d->rec.instance, outcome == KEEP_STORE_OK, obj, now_wall_ms,
			   t, &at);
	if (f == KEEP_FREE_YES) {
		set_write(self, keep_owner_acq_generation(&d->rec, 1), d);
		d->reason = "free";
		return;
	}
	d->verdict = KEEP_ACQ_HELD;
	d->free_at_ms = f == KEEP_FREE_LATER ? at : 0;
	d->reason = f == KEEP_FREE_LATER ? "free-later" : "held";
}

bool keep_owner_readback_replaced(const char *cond_version, const char *version)
{
	return !(cond_version && cond_version[0] && version && strcmp(version, cond_version) == 0);
}

void keep_owner_readback(const struct keep_owner_self *self, int64_t gen_tried,
			 const char *cond_version, enum keep_outcome outcome, const char *version,
			 const struct keep_owner_rec *rec, int decode_err,
			 struct keep_rb_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->verdict = KEEP_RB_UNRESOLVED;
	if (outcome != KEEP_STORE_OK || !rec || decode_err)
		return;
	d->rec = *rec;
	if (names_self(rec, self) && rec->generation == gen_tried) {
		/* only this process writes its instance, one acquisition of an
		 * actor at a time (the lock): this is our write */
		d->verdict = KEEP_RB_OURS;
		snprintf(d->version, sizeof(d->version), "%s", version ? version : "");
		return;
	}
	/* §3: lost only when replaced since the read the write was
	 * conditioned on. The record unchanged stays unresolved, whoever it
	 * names: our write may still be in flight, and land */
	if (!keep_owner_readback_replaced(cond_version, version))
		return;
	if (rec->held && !names_self(rec, self))
		d->verdict = KEEP_RB_READ_NODE;
}

void keep_owner_readback_on_node(const struct keep_owner_self *self, enum keep_outcome outcome,
				 const struct keep_node_obj *obj, int64_t now_wall_ms,
				 const struct keep_timing *t, struct keep_rb_decision *d)
{
	enum keep_free f;
	int64_t at = 0;

	(void)self;
	if (outcome != KEEP_STORE_OK && outcome != KEEP_STORE_NOT_FOUND) {
		d->verdict = KEEP_RB_UNRESOLVED;
		return;
	}
	f = keep_node_free(d->rec.node, d->rec.instance, outcome == KEEP_STORE_OK, obj, now_wall_ms,
			   t, &at);
	if (f == KEEP_FREE_YES) {
		d->verdict = KEEP_RB_UNRESOLVED;
		return;
	}
	d->verdict = KEEP_RB_LOST;
	d->free_at_ms = f == KEEP_FREE_LATER ? at : 0;
}

void keep_owner_pending_on_read(const char *instance, int64_t generation, enum keep_outcome outcome,
				const struct keep_owner_rec *rec, int decode_err,
				struct keep_pend_decision *d)
{
	memset(d, 0, sizeof(*d));
	if (outcome == KEEP_STORE_NOT_FOUND) {
		d->verdict = KEEP_PEND_END;
		d->reason = "absent";
		return;
	}
	if (outcome != KEEP_STORE_OK || !rec || decode_err) {
		d->verdict = KEEP_PEND_KEEP;
		d->reason = outcome != KEEP_STORE_OK ? keep_outcome_name(outcome) : "unreadable";
		return;
	}
	if (rec->held && strcmp(rec->instance, instance) == 0 && rec->generation == generation) {
		/* still ours at g: never adopt its version; retry as it was */
		d->verdict = KEEP_PEND_KEEP;
		d->reason = "still-named";
		return;
	}
	d->verdict = KEEP_PEND_END;
	d->reason = !rec->held ? "nobody" : rec->generation != generation ? "superseded" : "other";
}

void keep_owner_resolve_on_read(const char *instance, int64_t gen_tried, const char *cond_version,
				bool current, bool has_hold, enum keep_outcome outcome,
				const char *version, const struct keep_owner_rec *rec,
				int decode_err, struct keep_pend_decision *d)
{
	bool unchanged;

	memset(d, 0, sizeof(*d));
	if (has_hold) {
		/* a later acquisition holds it (maybe at this very generation):
		 * releasing would make two owners (§3, the lock per actor) */
		d->verdict = KEEP_PEND_END;
		d->reason = "hold-exists";
		return;
	}
	if (outcome != KEEP_STORE_OK && outcome != KEEP_STORE_NOT_FOUND) {
		d->verdict = KEEP_PEND_KEEP;
		d->reason = keep_outcome_name(outcome);
		return;
	}
	if (outcome == KEEP_STORE_NOT_FOUND) {
		unchanged = !cond_version || !cond_version[0];
		d->verdict = unchanged && current ? KEEP_PEND_KEEP : KEEP_PEND_END;
		d->reason = unchanged && !current ? "old-instance" : "absent";
		return;
	}
	if (!rec || decode_err) {
		d->verdict = KEEP_PEND_KEEP;
		d->reason = "unreadable";
		return;
	}
	if (rec->held && strcmp(rec->instance, instance) == 0 && rec->generation == gen_tried) {
		d->verdict = KEEP_PEND_RELEASE;
		snprintf(d->version, sizeof(d->version), "%s", version ? version : "");
		d->reason = "landed";
		return;
	}
	unchanged = cond_version && version && strcmp(cond_version, version) == 0;
	if (unchanged) {
		/* the write may still be in flight and land: read again later */
		d->verdict = current ? KEEP_PEND_KEEP : KEEP_PEND_END;
		d->reason = current ? "unchanged" : "old-instance";
		return;
	}
	d->verdict = KEEP_PEND_END;
	d->reason = "not-landed";
}

int64_t keep_owner_backoff_ms(int attempts)
{
	int64_t b = KEEP_BACKOFF_MIN_MS;

	while (--attempts > 0 && b < KEEP_BACKOFF_MAX_MS)
		b *= 2;
	return b < KEEP_BACKOFF_MAX_MS ? b : KEEP_BACKOFF_MAX_MS;
}

bool keep_owner_hold_lapsed(int64_t hold_epoch, int64_t lease_lapses)
{
	return hold_epoch != lease_lapses;
}

bool keep_owner_hold_stale(const char *hold_instance, int64_t hold_epoch,
			   const char *lease_instance, int64_t lease_lapses)
{
	return !hold_instance || !lease_instance || strcmp(hold_instance, lease_instance) != 0 ||
	       keep_owner_hold_lapsed(hold_epoch, lease_lapses);
}

enum keep_grant keep_owner_check(const struct keep_grant_input *in, int64_t generation)
{
	if (!in->have_hold)
		return KEEP_GRANT_NO_HOLD;
	if (in->hold_generation != generation)
		return KEEP_GRANT_OTHER_GEN;
	if (!in->hold_instance || !in->lease_instance ||
	    strcmp(in->hold_instance, in->lease_instance) != 0)
		return KEEP_GRANT_OLD_INSTANCE;
	if (keep_owner_hold_lapsed(in->hold_epoch, in->lease_lapses))
		return KEEP_GRANT_LAPSED;
	if (in->release_pending)
		return KEEP_GRANT_RELEASING;
	if (!in->lease_valid)
		return KEEP_GRANT_NOT_VALID;
	return KEEP_GRANT_OK;
}

int keep_owner_check_code(enum keep_grant g, int lease_code)
{
	if (g == KEEP_GRANT_OK)
		return KEEP_EXIT_OK;
	/* while the lease is not valid, say why with the lease's own code */
	if (lease_code != KEEP_EXIT_OK && (g == KEEP_GRANT_LAPSED || g == KEEP_GRANT_NOT_VALID))
		return lease_code;
	return KEEP_EXIT_NO;
}

int64_t keep_owner_grant_recheck_ms(int64_t valid_until_ms)
{
	return valid_until_ms > 0 ? keep_add_sat_ms(valid_until_ms, 1) : 0;
}

enum keep_hand_delete keep_hand_delete_judge(const char *key)
{
	if (strncmp(key, "nodes/", 6) == 0)
		return KEEP_HAND_DELETE_NODE;
	if (strncmp(key, "apps/", 5) == 0) {
		const char *root = key + 5, *slash = strchr(root, '/');
		char r[KEEP_APP_ROOT_MAX + 1];
		size_t n = slash ? (size_t)(slash - root) : 0;

		if (!slash || n == 0 || n > KEEP_APP_ROOT_MAX)
			return KEEP_HAND_DELETE_OK;
		memcpy(r, root, n);
		r[n] = '\0';
		if (!keep_app_root_valid(r))
			return KEEP_HAND_DELETE_OK;
		key = slash + 1;
	}
	return strncmp(key, "owners/", 7) == 0 ? KEEP_HAND_DELETE_RECORD : KEEP_HAND_DELETE_OK;
}
