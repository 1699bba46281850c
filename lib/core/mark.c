/* keep — marking an actor for the upgrade, sans I/O (mark.h; ADR 0020 §6). */
#include "mark.h"

#include <stdio.h>
#include <string.h>

#include "../base/exitcode.h"

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

int keep_mark_result_exit_code(const struct keep_mark_result *res)
{
	switch (res->kind) {
	case KEEP_MR_MARKED:
		return KEEP_EXIT_OK;
	case KEEP_MR_HELD:
		return KEEP_EXIT_NO;
	case KEEP_MR_BAD_OBJECT:
	case KEEP_MR_BAD_KEY:
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_MR_FAILED:
		break;
	}
	return res->refused ? KEEP_EXIT_NO : KEEP_EXIT_TEMP;
}

void keep_mark_init(struct keep_mark *m, const char *key, const struct keep_timing *t)
{
	memset(m, 0, sizeof(*m));
	m->t = *t;
	keep_copy_str(m->key, sizeof(m->key), key);
	m->phase = KEEP_MK_READ;
	m->res.kind = KEEP_MR_FAILED;
	snprintf(m->res.detail, sizeof(m->res.detail), "leases/%.100s kept changing", key);
}

void keep_mark_next(struct keep_mark *m, struct keep_oact *act)
{
	memset(act, 0, sizeof(*act));
	keep_copy_str(act->key, sizeof(act->key), m->key);
	switch (m->phase) {
	case KEEP_MK_READ:
		act->kind = KEEP_OACT_MARK_READ;
		break;
	case KEEP_MK_KEYS:
		act->kind = KEEP_OACT_KEYS_MAX;
		break;
	case KEEP_MK_WRITE:
		act->kind = KEEP_OACT_MARK_WRITE;
		act->lobj = m->marker;
		act->cond = m->v == KEEP_MARK_CREATE ? KEEP_COND_IF_NONE_MATCH : KEEP_COND_IF_MATCH;
		if (act->cond == KEEP_COND_IF_MATCH)
			keep_copy_str(act->if_match, sizeof(act->if_match), m->read_version);
		break;
	case KEEP_MK_DONE:
		act->kind = KEEP_OACT_DONE;
		break;
	}
}

static void done(struct keep_mark *m, enum keep_mark_result_kind k)
{
	m->res.kind = k;
	if (k == KEEP_MR_MARKED)
		m->res.detail[0] = '\0';
	m->phase = KEEP_MK_DONE;
}

static void on_read(struct keep_mark *m, int64_t now_wall_ms, const struct keep_oreply *r)
{
	bool ok = r->outcome == KEEP_STORE_OK && !r->decode_err;

	m->tries++;
	m->o = ok ? r->lobj : (struct keep_lease_obj){0};
	keep_copy_str(m->read_version, sizeof(m->read_version),
		      r->outcome == KEEP_STORE_OK ? r->version : "");
	m->v = keep_upgrade_mark_decide(r->outcome, ok ? &r->lobj : NULL, r->decode_err,
					now_wall_ms, &m->t);
	switch (m->v) {
	case KEEP_MARK_HELD:
		m->res.old = m->o;
		m->res.live_until_ms = keep_add_sat_ms(m->o.expires_at_ms, m->t.grace_ms);
		snprintf(m->res.detail, sizeof(m->res.detail), "a live old lease names '%.64s'",
			 m->o.node);
		done(m, KEEP_MR_HELD);
		return;
	case KEEP_MARK_BAD_OBJECT:
		snprintf(m->res.detail, sizeof(m->res.detail), "leases/%.100s: %.120s", m->key,
			 r->detail[0] ? r->detail : "not a wasmkeep-lease object");
		done(m, KEEP_MR_BAD_OBJECT);
		return;
	case KEEP_MARK_FAILED:
		snprintf(m->res.detail, sizeof(m->res.detail),
			 "unable to read leases/%.100s: %s: %.100s", m->key,
			 keep_outcome_name(r->outcome), r->detail[0] ? r->detail : "-");
		m->res.refused = r->outcome == KEEP_STORE_REFUSED;
		done(m, KEEP_MR_FAILED);
		return;
	case KEEP_MARK_CREATE:
	case KEEP_MARK_REPLACE:
	case KEEP_MARK_EXISTING:
		m->phase = KEEP_MK_KEYS;
		return;
	}
}

static void on_keys(struct keep_mark *m, const struct keep_oreply *r)
{
	if (r->outcome != KEEP_STORE_OK || r->decode_err) {
		keep_copy_str(m->res.detail, sizeof(m->res.detail), r->detail);
		m->res.refused = !r->decode_err && r->outcome == KEEP_STORE_REFUSED;
		done(m, r->decode_err ? KEEP_MR_BAD_KEY : KEEP_MR_FAILED);
		return;
	}
	m->res.keys_max = r->keys_max;
	if (m->v == KEEP_MARK_EXISTING) {
		m->res.action = KEEP_MARK_EXISTING;
		m->res.seed = keep_upgrade_seed_of(m->o.seed, r->keys_max);
		m->res.created = m->o.created;
		keep_copy_str(m->res.version, sizeof(m->res.version), m->read_version);
		done(m, KEEP_MR_MARKED);
		return;
	}
	memset(&m->marker, 0, sizeof(m->marker));
	m->marker.format = 2;
	m->marker.seed =
	    keep_upgrade_seed_of(m->v == KEEP_MARK_REPLACE ? m->o.generation : 0, r->keys_max);
	m->phase = KEEP_MK_WRITE;
}

static void on_write(struct keep_mark *m, const struct keep_oreply *r)
{
	if (r->outcome == KEEP_STORE_OK) {
		m->res.action = m->v;
		m->res.seed = m->marker.seed;
		m->res.created = 0;
		keep_copy_str(m->res.version, sizeof(m->res.version), r->version);
		if (m->v == KEEP_MARK_REPLACE)
			m->res.old = m->o;
		done(m, KEEP_MR_MARKED);
		return;
	}
	if (r->outcome == KEEP_STORE_REFUSED) {
		snprintf(m->res.detail, sizeof(m->res.detail),
			 "write of leases/%.100s refused: %.100s", m->key,
			 r->detail[0] ? r->detail : "-");
		m->res.refused = true;
		done(m, KEEP_MR_FAILED);
		return;
	}
	/* a conflict (someone wrote it since our read: an old binary, or another
	 * marker), a NOT_FOUND to If-Match (deleted since), or an ambiguous reply
	 * (our marker may have landed): read again */
	snprintf(m->res.detail, sizeof(m->res.detail), "write of leases/%.100s: %s: %.100s", m->key,
		 keep_outcome_name(r->outcome), r->detail[0] ? r->detail : "-");
	if (m->tries >= KEEP_MARK_TRIES) {
		done(m, KEEP_MR_FAILED);
		return;
	}
	m->phase = KEEP_MK_READ;
}

void keep_mark_on_reply(struct keep_mark *m, int64_t now_wall_ms, const struct keep_oreply *r)
{
	switch (m->phase) {
	case KEEP_MK_READ:
		on_read(m, now_wall_ms, r);
		return;
	case KEEP_MK_KEYS:
		on_keys(m, r);
		return;
	case KEEP_MK_WRITE:
		on_write(m, r);
		return;
	case KEEP_MK_DONE:
		return;
	}
}

void keep_mark_confirm_obj(const struct keep_mark_result *res, int64_t created,
			   struct keep_lease_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->format = 2;
	o->seed = res->seed;
	o->created = created;
}

bool keep_mark_record_deleted(const struct keep_mark_result *res, enum keep_outcome again)
{
	return res->kind == KEEP_MR_MARKED && res->created > 0 && again == KEEP_STORE_NOT_FOUND;
}
