/* keep — the store plumbing every command shares (storecmd.h). */
#include "storecmd.h"

#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../codec/nodeobj.h"
#include "cli.h"
#include "progress.h"
#include "supervise.h"

int keep_exit_of_open(int err)
{
	return err == KEEP_ERR_STORE || err == KEEP_ERR_NOMEM ? KEEP_EXIT_TEMP : KEEP_EXIT_USAGE;
}

struct keep_store *keep_store_open_or_die(const char *prog, const struct keep_config *cfg,
					  struct keep_reqstats *stats)
{
	struct keep_store_opts so;
	struct keep_store *s = NULL;
	char err[512];
	int rc;

	keep_config_store_opts(cfg, &so);
	rc = keep_store_open(cfg->store, &so, &s, err, sizeof(err));
	if (rc == 0 && cfg->app[0]) {
		/* the application root's keys (ADR 0022): apps/ROOT/... */
		rc = keep_store_app_root(s, cfg->app, &s);
		if (rc)
			snprintf(err, sizeof(err), "application root '%s' refused", cfg->app);
	}
	if (rc == 0 && stats) {
		rc = keep_store_counted(s, stats, &s);
		if (rc)
			snprintf(err, sizeof(err), "out of memory");
	}
	/* a command run by a person or a script says what it waits for; the
	 * agent's children bound their requests and warn themselves */
	if (rc == 0 && !keep_supervised()) {
		rc = keep_store_progress(
		    s, prog, cfg->timing.period_ms,
		    strncmp(cfg->store, "s3://", 5) == 0 ? cfg->s3_timeout_ms : 0, &s);
		if (rc)
			snprintf(err, sizeof(err), "out of memory");
	}
	if (rc)
		keep_die(keep_exit_of_open(rc), prog, "unable to open store '%s': %s", cfg->store,
			 err);
	return s;
}

int keep_exit_of_reply(const struct keep_reply *r)
{
	return keep_exit_of_outcome(r->outcome, r->not_ours);
}

void keep_node_read(struct keep_store *s, const char *node, int check, struct keep_node_obj *obj,
		    struct keep_node_read *nr)
{
	char key[KEEP_NODE_ID_MAX + 8];
	struct keep_buf body;

	memset(nr, 0, sizeof(*nr));
	memset(obj, 0, sizeof(*obj));
	snprintf(key, sizeof(key), "nodes/%s", node);
	keep_buf_init(&body, KEEP_BODY_MAX);
	keep_store_get_ours(s, key, &body, &nr->reply);
	if (nr->reply.outcome != KEEP_STORE_OK) {
		snprintf(nr->why, sizeof(nr->why), "%s: %.120s",
			 keep_outcome_name(nr->reply.outcome),
			 nr->reply.detail[0] ? nr->reply.detail : "-");
		keep_buf_release(&body);
		return;
	}
	if (nr->reply.not_ours) {
		nr->derr = KEEP_ERR_NOTOURS;
		snprintf(nr->why, sizeof(nr->why), "%.150s", nr->reply.detail);
	} else {
		nr->derr = keep_node_obj_decode(body.data ? body.data : "", body.len, obj, nr->why,
						sizeof(nr->why));
	}
	if (!nr->derr && (check == KEEP_NODE_READ_ANY_FORMAT || obj->format == 3) &&
	    strcmp(obj->node, node) != 0) {
		nr->derr = KEEP_ERR_PARSE;
		snprintf(nr->why, sizeof(nr->why), "object names node '%.64s'", obj->node);
	}
	nr->ok = nr->derr == 0;
	keep_buf_release(&body);
}

void keep_warn_skipped(const char *prog, const char *prefix, const struct keep_list *l)
{
	size_t i;

	for (i = 0; i < l->nskipped && i < KEEP_LIST_SKIP_NAMED; i++)
		keep_warn(prog, "listing %s: skipped %s: %s", *prefix ? prefix : "the bucket",
			  l->skipped[i].key, l->skipped[i].why);
	if (l->nskipped > KEEP_LIST_SKIP_NAMED)
		keep_warn(prog, "listing %s: ... and %zu more skipped",
			  *prefix ? prefix : "the bucket", l->nskipped - KEEP_LIST_SKIP_NAMED);
}

void keep_node_write(struct keep_store *s, const struct keep_node_obj *o, enum keep_cond cond,
		     const char *if_match, struct keep_reply *r)
{
	char key[KEEP_NODE_ID_MAX + 8], version[KEEP_VERSION_MAX];
	struct keep_buf body;
	int rc;

	/* if_match may point into *r (a read's reply): copy it first */
	snprintf(version, sizeof(version), "%s", if_match ? if_match : "");
	snprintf(key, sizeof(key), "nodes/%s", o->node);
	keep_buf_init(&body, KEEP_NODEOBJ_MAX);
	memset(r, 0, sizeof(*r));
	rc = keep_node_obj_encode(o, &body);
	if (rc)
		keep_reply_set(r, KEEP_STORE_REFUSED, 0, "encode: %s", keep_strerror(rc));
	else
		keep_store_put(s, key, body.data, body.len, cond,
			       cond == KEEP_COND_IF_MATCH ? version : NULL, r);
	keep_buf_release(&body);
}
