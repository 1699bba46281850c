/* keep — `upgrade-mark forget`'s driver (ADR 0020 §2, §6;
 * docs/upgrade.md). See upgradeforget.h. */
#include "upgradeforget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/exitcode.h"
#include "../codec/ownerrec.h"
#include "../core/upgrade.h"
#include "../local/holds.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "batch.h"
#include "cli.h"
#include "ownstore.h"
#include "storecmd.h"

/* The created fence of id (KEEP_FORGET_FENCE) may go only when no
 * ownership record names id: list owners/ and read every record
 * (keep_upgrade_forget_fence_record), saying how many were checked. 0 when
 * none names it (*checked: records read); else the exit code, with the
 * `kept` line said (1: a record names id, or one could not be read). */
static int fence_unnamed_root(const struct keep_upgmark *x, const char *id, int64_t *checked)
{
	struct keep_owner_rec rec;
	struct keep_owner_read orr;
	struct keep_list l;
	struct keep_reply r;
	struct keep_buf b;
	int64_t next_say = keep_boot_ms() + x->cfg.timing.period_ms;
	size_t i, plen = strlen(KEEP_OWNER_PREFIX);
	int rc = 0;

	*checked = 0;
	keep_list_init(&l);
	keep_store_list(x->store, KEEP_OWNER_PREFIX, &l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(x->prog, "unable to list " KEEP_OWNER_PREFIX ": %s: %s",
			  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
		keep_list_release(&l);
		return keep_exit_of_reply(&r);
	}
	keep_warn_skipped(x->prog, KEEP_OWNER_PREFIX, &l);
	if (l.nskipped) { /* a key it cannot read may name id */
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "unreadable");
		keep_line_str(&b, "key", l.skipped[0].key);
		if (x->cfg.app[0])
			keep_line_str(&b, "app", x->cfg.app);
		keep_line_end(&b);
		keep_warn(x->prog,
			  "the listing of " KEEP_OWNER_PREFIX " skipped %zu key(s) it cannot read: "
			  "the fence of nodes/%s stays",
			  l.nskipped, id);
		keep_list_release(&l);
		return KEEP_EXIT_NO;
	}
	for (i = 0; i < l.n && !rc; i++) {
		const char *key = l.v[i].key + plen;
		enum keep_forget_record fr;

		if (strncmp(l.v[i].key, KEEP_OWNER_PREFIX, plen) != 0 ||
		    !keep_owner_key_valid(key)) {
			keep_warn(x->prog, "'%s' is no ownership record key: skipped", l.v[i].key);
			continue;
		}
		keep_owner_read(x->store, key, &rec, &orr);
		fr = keep_upgrade_forget_fence_record(id, orr.reply.outcome, orr.ok ? &rec : NULL);
		(*checked)++;
		if (fr == KEEP_FORGET_REC_CLEAR) {
			if (keep_boot_ms() >= next_say) { /* a long check says how far it is */
				keep_info(x->prog,
					  "forget %s: %lld of %zu ownership records checked", id,
					  (long long)*checked, l.n);
				next_say = keep_boot_ms() + x->cfg.timing.period_ms;
			}
			continue;
		}
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", fr == KEEP_FORGET_REC_NAMED ? "named" : "unreadable");
		keep_line_str(&b, "key", key);
		if (x->cfg.app[0])
			keep_line_str(&b, "app", x->cfg.app);
		keep_line_end(&b);
		if (fr == KEEP_FORGET_REC_NAMED) {
			keep_info(x->prog,
				  "owners/%s names %s (generation %lld): the fence of nodes/%s "
				  "frees it, so it stays",
				  key, id, (long long)rec.generation, id);
			rc = KEEP_EXIT_NO;
		} else {
			keep_warn(x->prog,
				  "owners/%s could not be read (%s): the fence of nodes/%s stays",
				  key, orr.why, id);
			rc = orr.reply.outcome == KEEP_STORE_OK ? KEEP_EXIT_NO
								: keep_exit_of_reply(&orr.reply);
		}
	}
	keep_list_release(&l);
	return rc;
}

/* The roots of the bucket (ADR 0022): every ROOT of an apps/ROOT/owners/
 * key, each once, into roots (at most max; more are refused: 1, said).
 * 0, or the exit code of the listing's failure. */
static int list_app_roots(const struct keep_upgmark *x, char (*roots)[KEEP_APP_ROOT_MAX + 1],
			  size_t max, size_t *n)
{
	struct keep_list l;
	struct keep_reply r;
	size_t i, k;

	*n = 0;
	keep_list_init(&l);
	keep_store_list(x->store, "apps/", &l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(x->prog, "unable to list apps/: %s: %s", keep_outcome_name(r.outcome),
			  r.detail[0] ? r.detail : "-");
		keep_list_release(&l);
		return keep_exit_of_reply(&r);
	}
	for (i = 0; i < l.n; i++) {
		char name[KEEP_APP_ROOT_MAX + 1];

		if (keep_upgrade_app_root_of(l.v[i].key, name, sizeof(name)) != 0)
			continue;
		for (k = 0; k < *n && strcmp(roots[k], name) != 0; k++)
			;
		if (k < *n)
			continue;
		if (*n == max) {
			keep_warn(x->prog,
				  "over %zu application roots under apps/: the fence stays", max);
			keep_list_release(&l);
			return KEEP_EXIT_NO;
		}
		snprintf(roots[(*n)++], sizeof(roots[0]), "%s", name);
	}
	keep_list_release(&l);
	return 0;
}

/* fence_unnamed_root over the default root and every application root of
 * the bucket (a record of any root may name id: nodes/ is shared). */
static int fence_unnamed(const struct keep_upgmark *x, const char *id, int64_t *checked,
			 size_t *nroots)
{
	static char roots[256][KEEP_APP_ROOT_MAX + 1];
	int64_t c = 0;
	size_t i;
	int rc;

	*nroots = 0;
	rc = fence_unnamed_root(x, id, checked);
	if (!rc)
		rc = list_app_roots(x, roots, sizeof(roots) / sizeof(roots[0]), nroots);
	for (i = 0; !rc && i < *nroots; i++) {
		struct keep_upgmark y = *x;

		_Static_assert(sizeof(y.cfg.app) == sizeof(roots[i]), "a root's buffer");
		memcpy(y.cfg.app, roots[i], sizeof(y.cfg.app)); /* NUL-terminated there */
		y.store = keep_store_open_or_die(x->prog, &y.cfg, NULL);
		rc = fence_unnamed_root(&y, id, &c);
		keep_store_free(y.store);
		*checked += c;
	}
	return rc;
}

/* Forget one node. quiet: --stale (no line for format-3 objects). */
static int forget_one(const struct keep_upgmark *x, const char *id, bool quiet)
{
	struct keep_node_obj o;
	struct keep_node_read nr;
	enum keep_forget_verdict v;
	enum keep_forget_delete dv;
	struct keep_reply r;
	struct keep_buf b;
	char k[KEEP_NODE_ID_MAX + 8];
	int64_t left = 0, checked = -1;
	size_t nroots = 0;
	int rc;

	keep_node_read(x->store, id, KEEP_NODE_READ_ANY_FORMAT, &o, &nr);
	v = keep_upgrade_forget_decide(nr.reply.outcome, nr.ok ? &o : NULL, nr.derr,
				       keep_judge_wall_cfg(&x->cfg), &x->cfg.timing, x->horizon_ms,
				       &left);
	keep_buf_init(&b, KEEP_LINE_MAX);
	switch (v) {
	case KEEP_FORGET_ABSENT:
		if (!quiet) {
			keep_line_start_out(&b, "absent");
			keep_line_str(&b, "node", id);
			keep_line_emit(&b);
			/* exit 0 (done: a second run finds it gone), but a typo
			 * must not pass for a removal */
			keep_info(x->prog,
				  "nodes/%s does not exist: nothing to forget (check the id: "
				  "`node-watch --once` lists the nodes)",
				  id);
		}
		keep_buf_release(&b);
		return keep_upgrade_forget_exit(v, 0, 0, quiet);
	case KEEP_FORGET_FAILED:
		keep_warn(x->prog, "unable to read nodes/%s: %s", id, nr.why);
		keep_line_start_out(&b, "error");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "store");
		keep_line_end(&b);
		return keep_upgrade_forget_exit(v, 0, keep_exit_of_reply(&nr.reply), quiet);
	case KEEP_FORGET_FENCE:
		if (quiet) { /* --stale forgets old heartbeats only */
			keep_buf_release(&b);
			return keep_upgrade_forget_exit(v, 0, 0, quiet);
		}
		keep_buf_release(&b);
		rc = fence_unnamed(x, id, &checked, &nroots);
		if (rc)
			return rc;
		keep_info(x->prog,
			  "nodes/%s is an operator's fence created over an absent object; none of "
			  "the %lld ownership records under " KEEP_OWNER_PREFIX
			  "%s names %s: removing it",
			  id, (long long)checked,
			  nroots ? " and the application roots' apps/ROOT/owners/" : "", id);
		keep_buf_init(&b, KEEP_LINE_MAX);
		break;
	case KEEP_FORGET_FORMAT3:
		if (!quiet) {
			keep_line_start_out(&b, "kept");
			keep_line_str(&b, "node", id);
			keep_line_str(&b, "reason", "format-3");
			keep_line_emit(&b);
			keep_info(
			    x->prog,
			    "nodes/%s is a node lease that a node of this keep wrote (format 3): "
			    "nothing deleted; forget removes only old-format heartbeats and "
			    "fences created over an absent object (`lease-fence --create`); a "
			    "node retired for good stays listed (runbook revoke-a-node.md)",
			    id);
		}
		keep_buf_release(&b);
		return keep_upgrade_forget_exit(v, 0, 0, quiet);
	case KEEP_FORGET_BAD_OBJECT:
		keep_warn(x->prog, "nodes/%s is not ours or malformed (%s): not deleted", id,
			  nr.why);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "bad-object");
		keep_line_end(&b);
		return keep_upgrade_forget_exit(v, 0, 0, quiet);
	case KEEP_FORGET_FRESH:
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "fresh");
		keep_line_int(&b, "format", o.format);
		keep_line_int(&b, "written_at_ms", o.written_at_ms);
		keep_line_int(&b, "left_ms", left);
		keep_line_end(&b);
		return keep_upgrade_forget_exit(v, 0, 0, quiet);
	case KEEP_FORGET_DELETE:
		break;
	}
	/* If-Match the read's version (a store that ignores it on DELETE, as
	 * RGW does, may delete a body rewritten since: an old-format heartbeat
	 * frees nothing either way, and a running old node writes it again) */
	snprintf(k, sizeof(k), "nodes/%s", id);
	keep_store_del(x->store, k, nr.reply.version, &r);
	dv = keep_upgrade_forget_on_delete(r.outcome);
	if (dv == KEEP_FORGET_DEL_DONE) {
		keep_line_start_out(&b, "forgot");
		keep_line_str(&b, "node", id);
		keep_line_int(&b, "format", o.format);
		keep_line_int(&b, "written_at_ms", o.written_at_ms);
		if (checked >= 0) /* a created fence: the records it checked */
			keep_line_int(&b, "checked_records", checked);
		keep_line_end(&b);
		return keep_upgrade_forget_exit(v, dv, 0, quiet);
	}
	if (dv == KEEP_FORGET_DEL_CONFLICT) {
		/* the delete's condition failed: read again to say why — the
		 * object was rewritten since our read (look again next time), or
		 * it is unchanged and another request refused ours (a 409) */
		struct keep_node_read again;
		struct keep_node_obj o2;

		keep_node_read(x->store, id, KEEP_NODE_READ_ANY_FORMAT, &o2, &again);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason",
			      keep_forget_conflict_name(keep_upgrade_forget_on_conflict(
				  nr.reply.version, again.reply.outcome, again.reply.version)));
		keep_line_end(&b);
		return keep_upgrade_forget_exit(v, dv, 0, quiet);
	}
	keep_warn(x->prog, "unable to delete nodes/%s: %s: %s", id, keep_outcome_name(r.outcome),
		  r.detail[0] ? r.detail : "-");
	keep_line_start_out(&b, "error");
	keep_line_str(&b, "node", id);
	keep_line_str(&b, "reason", "store");
	keep_line_end(&b);
	return keep_upgrade_forget_exit(v, dv, keep_exit_of_reply(&r), quiet);
}

int keep_upgmark_forget(const struct keep_upgmark *x, const char *node, bool stale)
{
	struct keep_list l;
	size_t i;
	int worst = KEEP_EXIT_OK, rc;

	if (!stale)
		return forget_one(x, node, false);
	keep_list_init(&l);
	rc = keep_upgmark_list_nodes(x, &l, NULL);
	if (rc) {
		keep_list_release(&l);
		return rc;
	}
	for (i = 0; i < l.n; i++) {
		const char *id = keep_upgmark_node_of(l.v[i].key);

		if (id)
			keep_exit_worst(&worst, forget_one(x, id, true));
	}
	keep_list_release(&l);
	return worst;
}
