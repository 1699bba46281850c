/* keep — the fenced commit machine (commit.h; issue 26). */
#include "commit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../codec/sha256.h"
#include "ownio.h"

const char *keep_commit_result_name(enum keep_commit_result_kind k)
{
	switch (k) {
	case KEEP_CR_COMMITTED:
		return "committed";
	case KEEP_CR_CLAIMED:
		return "claimed";
	case KEEP_CR_REFUSED:
		return "refused";
	case KEEP_CR_UNKNOWN:
		return "unknown";
	case KEEP_CR_ERROR:
		return "error";
	}
	return "error";
}

const char *keep_cact_name(enum keep_cact_kind k)
{
	switch (k) {
	case KEEP_CACT_NONE:
		return "none";
	case KEEP_CACT_GRANT:
		return "grant";
	case KEEP_CACT_READ:
		return "read";
	case KEEP_CACT_PUT:
		return "put";
	case KEEP_CACT_WAIT:
		return "wait";
	case KEEP_CACT_DONE:
		return "done";
	}
	return "none";
}

/* A version token as an expected version: 1..KEEP_VERSION_MAX - 1 bytes,
 * no control byte (it goes into an If-Match header). */
static bool version_ok(const char *v)
{
	size_t n, i;

	if (!v)
		return false;
	n = strnlen(v, KEEP_VERSION_MAX);
	if (n == 0 || n >= KEEP_VERSION_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] == 0x7f)
			return false;
	return true;
}

/* The body to send: the fence (key, generation) over sm->data. */
static int encode(struct keep_commit *sm)
{
	keep_buf_reset(&sm->body);
	keep_sha256_hex(sm->data.len ? sm->data.data : "", sm->data.len, sm->sha256);
	return keep_fenced_encode(sm->key, sm->generation, sm->data.data, sm->data.len, &sm->body);
}

int keep_commit_init(struct keep_commit *sm, const struct keep_commit_cfg *cfg)
{
	int rc;

	memset(sm, 0, sizeof(*sm));
	if (!keep_owner_key_valid(cfg->key) || cfg->generation < 1 ||
	    cfg->generation > KEEP_OWNER_GEN_MAX ||
	    !keep_fenced_object_allowed(cfg->object, NULL) || cfg->timeout_ms < 1 ||
	    cfg->len > KEEP_FENCED_DATA_MAX || (cfg->len && !cfg->data) ||
	    (cfg->if_version && (cfg->mode != KEEP_COMMIT_WRITE || !version_ok(cfg->if_version))))
		return KEEP_ERR_INVAL;
	sm->object = strdup(cfg->object);
	if (!sm->object)
		return KEEP_ERR_NOMEM;
	sm->mode = cfg->mode;
	keep_copy_str(sm->key, sizeof(sm->key), cfg->key);
	sm->generation = cfg->generation;
	sm->timeout_ms = cfg->timeout_ms;
	keep_buf_init(&sm->data, KEEP_FENCED_DATA_MAX);
	keep_buf_init(&sm->body, KEEP_FENCED_OBJECT_MAX);
	rc = 0;
	if (cfg->mode == KEEP_COMMIT_WRITE && cfg->len)
		rc = keep_buf_add(&sm->data, cfg->data, cfg->len);
	if (!rc && cfg->mode == KEEP_COMMIT_WRITE)
		rc = encode(sm);
	if (rc) {
		keep_commit_release(sm);
		return rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_INVAL;
	}
	if (cfg->if_version) {
		sm->cas = true;
		keep_copy_str(sm->expect, sizeof(sm->expect), cfg->if_version);
		sm->cond = KEEP_COND_IF_MATCH;
		keep_copy_str(sm->if_match, sizeof(sm->if_match), cfg->if_version);
	}
	sm->phase = KEEP_CP_GRANT;
	return 0;
}

void keep_commit_release(struct keep_commit *sm)
{
	free(sm->object);
	sm->object = NULL;
	keep_buf_release(&sm->data);
	keep_buf_release(&sm->body);
}

void keep_commit_next(struct keep_commit *sm, int64_t now_mono_ms, struct keep_cact *act)
{
	memset(act, 0, sizeof(*act));
	if (sm->inflight) {
		act->kind = KEEP_CACT_NONE;
		return;
	}
	act->key = sm->key;
	act->generation = sm->generation;
	act->object = sm->object;
	act->timeout_ms = sm->timeout_ms;
	if (sm->phase == KEEP_CP_WAIT) {
		if (now_mono_ms < sm->wait_until) {
			act->kind = KEEP_CACT_WAIT;
			act->until_mono_ms = sm->wait_until;
			return;
		}
		sm->phase = KEEP_CP_READ;
	}
	switch (sm->phase) {
	case KEEP_CP_GRANT:
	case KEEP_CP_GRANT2:
		act->kind = KEEP_CACT_GRANT;
		break;
	case KEEP_CP_READ:
		act->kind = KEEP_CACT_READ;
		break;
	case KEEP_CP_PUT:
		act->kind = KEEP_CACT_PUT;
		act->body = sm->body.data ? sm->body.data : "";
		act->len = sm->body.len;
		act->cond = sm->cond;
		if (sm->cond == KEEP_COND_IF_MATCH)
			keep_copy_str(act->if_match, sizeof(act->if_match), sm->if_match);
		break;
	case KEEP_CP_WAIT: /* handled above */
	case KEEP_CP_DONE:
		act->kind = KEEP_CACT_DONE;
		return;
	}
	sm->inflight = true;
}

/* ---- answers ------------------------------------------------------------------ */

static void answer(struct keep_commit *sm, enum keep_commit_result_kind kind, int code,
		   const char *reason)
{
	sm->res.kind = kind;
	sm->res.exit_code = code;
	sm->res.reason = reason;
	if (kind == KEEP_CR_UNKNOWN)
		sm->res.generation = sm->generation; /* the write that may land */
	sm->phase = KEEP_CP_DONE;
}

static void done_ok(struct keep_commit *sm, const char *version)
{
	sm->res.generation = sm->generation;
	sm->res.previous = sm->previous;
	keep_copy_str(sm->res.version, sizeof(sm->res.version), version);
	answer(sm, sm->mode == KEEP_COMMIT_CLAIM ? KEEP_CR_CLAIMED : KEEP_CR_COMMITTED,
	       KEEP_EXIT_OK, NULL);
}

/* Refused with code and reason, unless a send of ours may still land:
 * then the answer is UNKNOWN (111) with that reason. */
static void refuse(struct keep_commit *sm, int code, const char *reason)
{
	if (sm->maybe_landed)
		answer(sm, KEEP_CR_UNKNOWN, KEEP_EXIT_TEMP, reason);
	else
		answer(sm, KEEP_CR_REFUSED, code, reason);
}

/* The store failed (refused, or failed for now with no round left). */
static void store_failed(struct keep_commit *sm, enum keep_outcome o, const char *detail)
{
	keep_copy_str(sm->res.detail, sizeof(sm->res.detail), detail);
	if (sm->maybe_landed)
		answer(sm, KEEP_CR_UNKNOWN, KEEP_EXIT_TEMP, "store");
	else
		answer(sm, KEEP_CR_ERROR, keep_exit_of_outcome(o, false), "store");
}

/* No round left. */
static void give_up(struct keep_commit *sm, const char *detail)
{
	if (sm->last_conflict) {
		keep_copy_str(sm->res.detail, sizeof(sm->res.detail), detail);
		answer(sm, sm->maybe_landed ? KEEP_CR_UNKNOWN : KEEP_CR_ERROR, KEEP_EXIT_TEMP,
		       "contention");
		return;
	}
	store_failed(sm, sm->last_fail, detail);
}

/* Read again (after a failure: after a backoff). */
static void read_again(struct keep_commit *sm, int64_t now_mono_ms, bool backoff,
		       const char *detail)
{
	int64_t wait = KEEP_COMMIT_BACKOFF_MS;
	int i;

	if (sm->reads >= KEEP_COMMIT_ROUNDS) {
		give_up(sm, detail);
		return;
	}
	if (!backoff) {
		sm->phase = KEEP_CP_READ;
		return;
	}
	for (i = 1; i < sm->fails && wait < KEEP_COMMIT_BACKOFF_MAX_MS; i++)
		wait *= 2;
	if (wait > KEEP_COMMIT_BACKOFF_MAX_MS)
		wait = KEEP_COMMIT_BACKOFF_MAX_MS;
	sm->wait_until = now_mono_ms + wait;
	sm->phase = KEEP_CP_WAIT;
}

/* The next write is decided: the grant check right before it, unless the
 * rounds ran out. */
static void go_write(struct keep_commit *sm, const char *detail)
{
	if (sm->puts >= KEEP_COMMIT_ROUNDS) {
		give_up(sm, detail);
		return;
	}
	sm->phase = KEEP_CP_GRANT2;
}

static void on_grant(struct keep_commit *sm, const struct keep_creply *r)
{
	enum keep_grant g = keep_owner_check(&r->grant, sm->generation);

	if (g != KEEP_GRANT_OK) {
		sm->res.grant = g;
		refuse(sm, keep_owner_check_code(g, r->lease_code), "grant-not-valid");
		return;
	}
	/* step 1 is followed by the read, except with an expected version:
	 * then this check is the one right before the send */
	sm->phase = sm->phase == KEEP_CP_GRANT && !sm->cas ? KEEP_CP_READ : KEEP_CP_PUT;
}

/* Step 2 on an absent object. */
static void on_absent(struct keep_commit *sm)
{
	if (sm->cas) {
		refuse(sm, KEEP_EXIT_NO, "changed");
		return;
	}
	sm->cond = KEEP_COND_IF_NONE_MATCH;
	sm->if_match[0] = '\0';
	if (sm->mode == KEEP_COMMIT_CLAIM) {
		sm->previous = 0;
		keep_buf_reset(&sm->data);
		if (encode(sm)) { /* cannot fail: an empty body, a valid fence */
			store_failed(sm, KEEP_STORE_REFUSED, "unable to encode the fence");
			return;
		}
	}
	go_write(sm, "");
}

/* Step 2 (and 5) on an object that exists. */
static void on_object(struct keep_commit *sm, const struct keep_creply *r)
{
	struct keep_fence f;
	char why[KEEP_DETAIL_MAX];
	const char *data;
	int rc;

	if (r->not_ours) {
		keep_copy_str(sm->res.detail, sizeof(sm->res.detail), r->detail);
		refuse(sm, KEEP_EXIT_BAD_OBJECT, "not-fenced");
		return;
	}
	rc = keep_fenced_decode(r->body ? r->body : "", r->len, &f, why, sizeof(why));
	if (rc) {
		keep_copy_str(sm->res.detail, sizeof(sm->res.detail), why);
		refuse(sm, KEEP_EXIT_BAD_OBJECT,
		       rc == KEEP_ERR_NOTOURS ? "not-fenced" : "bad-fence");
		return;
	}
	switch (keep_commit_fence_judge(&f, sm->key, sm->generation)) {
	case KEEP_CF_OTHER_KEY:
		keep_copy_str(sm->res.owner, sizeof(sm->res.owner), f.key);
		sm->res.generation = f.generation;
		refuse(sm, KEEP_EXIT_BAD_OBJECT, "other-key");
		return;
	case KEEP_CF_FENCED:
		/* a later holder's fence: definite, whatever we sent (every send
		 * of ours was conditioned on a version whose fence was at most
		 * ours, and that version is gone for good) */
		sm->res.generation = f.generation;
		answer(sm, KEEP_CR_REFUSED, KEEP_EXIT_SUPERSEDED, "fenced");
		return;
	case KEEP_CF_SAME:
		/* our own write (after a send), or a claim already made */
		if (sm->mode == KEEP_COMMIT_CLAIM) {
			if (!sm->checking)
				sm->previous = f.generation;
			done_ok(sm, r->version);
			return;
		}
		if (sm->checking &&
		    keep_commit_own_write(&f, sm->generation, sm->data.len, sm->sha256)) {
			done_ok(sm, r->version);
			return;
		}
		break;
	case KEEP_CF_EARLIER:
		break;
	}
	if (sm->cas) {
		/* a compare-and-swap: only the version the caller's bytes were
		 * computed from may be replaced */
		if (strcmp(r->version, sm->expect) != 0) {
			keep_copy_str(sm->res.version, sizeof(sm->res.version), r->version);
			refuse(sm, KEEP_EXIT_NO, "changed");
			return;
		}
		go_write(sm, "");
		return;
	}
	sm->cond = KEEP_COND_IF_MATCH;
	keep_copy_str(sm->if_match, sizeof(sm->if_match), r->version);
	if (sm->mode == KEEP_COMMIT_CLAIM) {
		/* the new holder's fence over the bytes there */
		sm->previous = f.generation;
		data = r->body + f.data_off;
		keep_buf_reset(&sm->data);
		if ((f.size && keep_buf_add(&sm->data, data, f.size)) || encode(sm)) {
			store_failed(sm, KEEP_STORE_REFUSED, "out of memory");
			return;
		}
	}
	go_write(sm, "");
}

static void on_read(struct keep_commit *sm, int64_t now_mono_ms, const struct keep_creply *r)
{
	sm->reads++;
	switch (r->outcome) {
	case KEEP_STORE_OK:
		sm->fails = 0;
		on_object(sm, r);
		return;
	case KEEP_STORE_NOT_FOUND:
		sm->fails = 0;
		on_absent(sm);
		return;
	case KEEP_STORE_REFUSED:
		store_failed(sm, r->outcome, r->detail);
		return;
	case KEEP_STORE_CONFLICT: /* not an answer to a read: as a failure */
	case KEEP_STORE_AMBIGUOUS:
		sm->fails++;
		sm->last_fail = KEEP_STORE_AMBIGUOUS;
		sm->last_conflict = false;
		read_again(sm, now_mono_ms, true, r->detail);
		return;
	}
}

static void on_put(struct keep_commit *sm, int64_t now_mono_ms, const struct keep_creply *r)
{
	sm->puts++;
	sm->checking = true;
	switch (r->outcome) {
	case KEEP_STORE_OK:
		done_ok(sm, r->version);
		return;
	case KEEP_STORE_CONFLICT:
	case KEEP_STORE_NOT_FOUND: /* If-Match on an object gone meanwhile */
		sm->fails = 0;
		sm->last_conflict = true;
		read_again(sm, now_mono_ms, false, r->detail);
		return;
	case KEEP_STORE_AMBIGUOUS:
		sm->maybe_landed = true;
		sm->fails++;
		sm->last_fail = r->outcome;
		sm->last_conflict = false;
		read_again(sm, now_mono_ms, true, r->detail);
		return;
	case KEEP_STORE_REFUSED:
		store_failed(sm, r->outcome, r->detail);
		return;
	}
}

void keep_commit_on_reply(struct keep_commit *sm, int64_t now_mono_ms, const struct keep_creply *r)
{
	if (!sm->inflight)
		return;
	sm->inflight = false;
	switch (sm->phase) {
	case KEEP_CP_GRANT:
	case KEEP_CP_GRANT2:
		on_grant(sm, r);
		return;
	case KEEP_CP_READ:
		on_read(sm, now_mono_ms, r);
		return;
	case KEEP_CP_PUT:
		on_put(sm, now_mono_ms, r);
		return;
	case KEEP_CP_WAIT:
	case KEEP_CP_DONE:
		return;
	}
}

/* ---- the rules ------------------------------------------------------------------ */

enum keep_commit_fence keep_commit_fence_judge(const struct keep_fence *f, const char *key,
					       int64_t generation)
{
	if (strcmp(f->key, key) != 0)
		return KEEP_CF_OTHER_KEY;
	if (f->generation > generation)
		return KEEP_CF_FENCED;
	return f->generation == generation ? KEEP_CF_SAME : KEEP_CF_EARLIER;
}

bool keep_commit_own_write(const struct keep_fence *f, int64_t generation, size_t len,
			   const char *sha256)
{
	return f->generation == generation && f->size == len && strcmp(f->sha256, sha256) == 0;
}
