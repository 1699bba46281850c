/* keep — the fenced commit on a node (commit.h; issue 26). */
#include "commit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../platform/clock.h"

_Static_assert(KEEP_FENCED_OBJECT_MAX == KEEP_BODY_MAX,
	       "a fenced object is bounded by the store's object limit");

static void invalid(struct keep_commit_result *res, int rc, const char *why)
{
	memset(res, 0, sizeof(*res));
	res->kind = KEEP_CR_ERROR;
	res->exit_code = rc == KEEP_ERR_NOMEM ? KEEP_EXIT_TEMP : KEEP_EXIT_USAGE;
	res->reason = rc == KEEP_ERR_NOMEM ? "store" : "invalid";
	snprintf(res->detail, sizeof(res->detail), "%s", why);
}

/* Perform act: the grant check's facts, a GET or a PUT of the object. */
static void perform(struct keep_store *store, const struct keep_commit_opts *o,
		    const struct keep_cact *act, struct keep_buf *body, struct keep_grant_facts *gf,
		    struct keep_creply *r)
{
	struct keep_reply rep;
	struct keep_meta meta;
	char gen[24];

	memset(r, 0, sizeof(*r));
	memset(&rep, 0, sizeof(rep));
	switch (act->kind) {
	case KEEP_CACT_GRANT:
		if (o->grant)
			r->lease_code = o->grant(o->grant_arg, act->key, gf);
		else
			r->lease_code = keep_grant_read(o->node_dir, act->key, gf, NULL);
		r->grant = gf->in;
		break;
	case KEEP_CACT_READ:
		keep_store_set_timeout(store, act->timeout_ms);
		keep_store_get_ours(store, act->object, body, &rep);
		r->outcome = rep.outcome;
		r->not_ours = rep.outcome == KEEP_STORE_OK && rep.not_ours;
		r->body = body->data ? body->data : "";
		r->len = body->len;
		break;
	case KEEP_CACT_PUT:
		keep_meta_init(&meta);
		snprintf(gen, sizeof(gen), "%" PRId64, act->generation);
		keep_meta_add(&meta, KEEP_META_OWNER, act->key);
		keep_meta_add(&meta, KEEP_META_GENERATION, gen);
		keep_store_set_timeout(store, act->timeout_ms);
		keep_store_put_meta(store, act->object, act->body, act->len, act->cond,
				    act->cond == KEEP_COND_IF_MATCH ? act->if_match : NULL, &meta,
				    &rep);
		r->outcome = rep.outcome;
		break;
	case KEEP_CACT_NONE:
	case KEEP_CACT_WAIT:
	case KEEP_CACT_DONE:
		return;
	}
	snprintf(r->version, sizeof(r->version), "%s", rep.version);
	snprintf(r->detail, sizeof(r->detail), "%s", rep.detail);
}

/* Run sm to its end on store. */
static void run(struct keep_commit *sm, struct keep_store *store, const struct keep_commit_opts *o)
{
	struct keep_grant_facts gf;
	struct keep_creply r;
	struct keep_cact act;
	struct keep_buf body;

	keep_buf_init(&body, KEEP_FENCED_OBJECT_MAX);
	for (;;) {
		keep_commit_next(sm, keep_boot_ms(), &act);
		if (act.kind == KEEP_CACT_DONE || act.kind == KEEP_CACT_NONE)
			break;
		if (act.kind == KEEP_CACT_WAIT) {
			keep_sleep_until_boot(act.until_mono_ms);
			continue;
		}
		perform(store, o, &act, &body, &gf, &r);
		keep_commit_on_reply(sm, keep_boot_ms(), &r);
	}
	keep_buf_release(&body);
}

static int start(struct keep_store *store, const struct keep_commit_cfg *c,
		 const struct keep_commit_opts *o, struct keep_commit_result *res)
{
	struct keep_commit sm;
	int rc;

	if (!keep_key_valid(c->object)) {
		invalid(res, KEEP_ERR_INVAL, "invalid object key");
		return KEEP_ERR_INVAL;
	}
	if (!o->grant && (!o->node_dir || !*o->node_dir)) {
		invalid(res, KEEP_ERR_INVAL, "no state directory for the grant check");
		return KEEP_ERR_INVAL;
	}
	rc = keep_commit_init(&sm, c);
	if (rc) {
		invalid(res, rc, rc == KEEP_ERR_NOMEM ? "out of memory" : "invalid argument");
		return rc;
	}
	run(&sm, store, o);
	*res = sm.res;
	keep_commit_release(&sm);
	return 0;
}

int keep_commit_fenced(struct keep_store *store, const char *key, int64_t generation,
		       const char *object, const void *data, size_t len,
		       const struct keep_commit_opts *o, struct keep_commit_result *res)
{
	struct keep_commit_cfg c = {
	    .mode = KEEP_COMMIT_WRITE,
	    .key = key,
	    .generation = generation,
	    .object = object,
	    .data = data,
	    .len = len,
	    .if_version = o->if_version,
	    .timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000,
	};

	return start(store, &c, o, res);
}

int keep_claim_fenced(struct keep_store *store, const char *key, int64_t generation,
		      const char *object, const struct keep_commit_opts *o,
		      struct keep_commit_result *res)
{
	struct keep_commit_cfg c = {
	    .mode = KEEP_COMMIT_CLAIM,
	    .key = key,
	    .generation = generation,
	    .object = object,
	    .timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000,
	};

	return start(store, &c, o, res);
}

int keep_fenced_get(struct keep_store *store, const char *object, struct keep_buf *body,
		    struct keep_fenced_read *fr)
{
	int rc;

	memset(fr, 0, sizeof(*fr));
	if (!keep_key_valid(object)) {
		keep_reply_set(&fr->reply, KEEP_STORE_REFUSED, 0, "not sent: invalid object key");
		snprintf(fr->why, sizeof(fr->why), "invalid object key");
		return KEEP_ERR_INVAL;
	}
	keep_store_get_meta(store, object, body, &fr->meta, &fr->reply);
	if (fr->reply.outcome == KEEP_STORE_REFUSED && fr->reply.not_ours) {
		/* no object of keep's can be that (keep_store_get_ours) */
		keep_buf_reset(body);
		fr->reply.outcome = KEEP_STORE_OK;
		fr->reply.version[0] = '\0';
		fr->derr = KEEP_ERR_NOTOURS;
		snprintf(fr->why, sizeof(fr->why), "not a fenced object: %.200s", fr->reply.detail);
		return 0;
	}
	if (fr->reply.outcome != KEEP_STORE_OK) {
		snprintf(fr->why, sizeof(fr->why), "%s%s%.200s",
			 keep_outcome_name(fr->reply.outcome), fr->reply.detail[0] ? ": " : "",
			 fr->reply.detail);
		return 0;
	}
	rc = keep_fenced_decode(body->data ? body->data : "", body->len, &fr->fence, fr->why,
				sizeof(fr->why));
	fr->derr = rc;
	fr->ok = rc == 0;
	return 0;
}
