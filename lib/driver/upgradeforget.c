/* keep — `upgrade-mark forget`'s driver (ADR 0020 §2, §6;
 * docs/upgrade.md). See upgradeforget.h. */
#include "upgradeforget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/exitcode.h"
#include "../codec/ownerrec.h"
#include "../core/forget.h"
#include "../core/upgrade.h"
#include "../local/holds.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "batch.h"
#include "cli.h"
#include "ownstore.h"
#include "storecmd.h"

/* A `kept node=ID reason=R key=K [app=ROOT]` line. */
static void kept_line(const char *id, const char *reason, const char *key, const char *app)
{
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start_out(&b, "kept");
	keep_line_str(&b, "node", id);
	keep_line_str(&b, "reason", reason);
	keep_line_str(&b, "key", key);
	if (app[0])
		keep_line_str(&b, "app", app);
	keep_line_end(&b);
}

/* The created fence of id (KEEP_FORGET_FENCE) may go only when no
 * ownership record of any application root names id: the check is the
 * machine's (keep_fcheck_*, lib/core/forget.h); this performs its LISTs
 * and reads, one store handle per root, and says what ended it.
 * *removable: the fence may go (keep_fcheck_fence_removable; *checked:
 * records read, *nroots: application roots); else the `kept` line is
 * said. The check's exit code (keep_fcheck_exit_code). */
static int fence_unnamed(const struct keep_upgmark *x, const char *id, bool *removable,
			 int64_t *checked, size_t *nroots)
{
	static struct keep_fcheck m; /* 16 KiB of roots: not on the stack */
	struct keep_fcheck_act act;
	struct keep_upgmark y = *x; /* the root being checked */
	struct keep_owner_rec rec;
	struct keep_owner_read orr;
	struct keep_list l;
	struct keep_reply r;
	const char *prefix = KEEP_OWNER_PREFIX;
	int64_t next_say = keep_boot_ms() + x->cfg.timing.period_ms;

	_Static_assert(KEEP_FCHECK_KEY_MAX == KEEP_KEY_MAX, "a listed key fits the machine's");
	_Static_assert(sizeof(y.cfg.app) == sizeof(act.root), "a root's buffer");
	memset(&orr, 0, sizeof(orr));
	keep_list_init(&l);
	keep_fcheck_init(&m, id);
	for (keep_fcheck_next(&m, &act); act.kind != KEEP_FCHECK_DONE; keep_fcheck_next(&m, &act)) {
		switch (act.kind) {
		case KEEP_FCHECK_LIST:
		case KEEP_FCHECK_LIST_ROOTS:
			if (act.kind == KEEP_FCHECK_LIST && act.root[0]) { /* the next root */
				if (y.store != x->store)
					keep_store_free(y.store);
				memcpy(y.cfg.app, act.root, sizeof(y.cfg.app));
				y.store = keep_store_open_or_die(x->prog, &y.cfg, NULL);
			}
			prefix = act.kind == KEEP_FCHECK_LIST ? KEEP_OWNER_PREFIX : "apps/";
			keep_list_release(&l);
			keep_list_init(&l);
			keep_store_list(y.store, prefix, &l, &r);
			if (r.outcome == KEEP_STORE_OK && act.kind == KEEP_FCHECK_LIST)
				keep_warn_skipped(x->prog, prefix, &l);
			keep_fcheck_on_list(&m, r.outcome, r.not_ours, l.n, l.nskipped,
					    l.nskipped ? l.skipped[0].key : NULL);
			if (m.res == KEEP_FCHECK_FAILED)
				keep_warn(x->prog, "unable to list %s: %s: %s", prefix,
					  keep_outcome_name(r.outcome),
					  r.detail[0] ? r.detail : "-");
			break;
		case KEEP_FCHECK_KEY:
			if (!keep_fcheck_on_key(&m, l.v[act.index].key))
				keep_warn(x->prog, "'%s' is no ownership record key: skipped",
					  l.v[act.index].key);
			break;
		case KEEP_FCHECK_KEY_ROOT:
			keep_fcheck_on_root(&m, l.v[act.index].key);
			break;
		case KEEP_FCHECK_READ:
			keep_owner_read(y.store, act.key, &rec, &orr);
			keep_fcheck_on_read(&m, orr.reply.outcome, orr.reply.not_ours,
					    orr.ok ? &rec : NULL);
			if (!m.done && keep_boot_ms() >= next_say) { /* a long check says how far */
				keep_info(x->prog,
					  "forget %s: %lld of %zu ownership records checked", id,
					  (long long)m.checked, l.n);
				next_say = keep_boot_ms() + x->cfg.timing.period_ms;
			}
			break;
		case KEEP_FCHECK_DONE:
			break;
		}
	}
	keep_list_release(&l);
	if (y.store != x->store)
		keep_store_free(y.store);
	*removable = keep_fcheck_fence_removable(&m);
	*checked = m.checked;
	*nroots = m.nroots;
	switch (m.res) {
	case KEEP_FCHECK_CLEAR:
	case KEEP_FCHECK_FAILED:
		break;
	case KEEP_FCHECK_SKIPPED:
		kept_line(id, "unreadable", m.key, y.cfg.app);
		keep_warn(x->prog,
			  "the listing of " KEEP_OWNER_PREFIX " skipped %zu key(s) it cannot read: "
			  "the fence of nodes/%s stays",
			  m.nskipped, id);
		break;
	case KEEP_FCHECK_NAMED:
		kept_line(id, "named", m.key, y.cfg.app);
		keep_info(x->prog,
			  "owners/%s names %s (generation %lld): the fence of nodes/%s frees it, "
			  "so it stays",
			  m.key, id, (long long)m.generation, id);
		break;
	case KEEP_FCHECK_UNREADABLE:
		kept_line(id, "unreadable", m.key, y.cfg.app);
		keep_warn(x->prog, "owners/%s could not be read (%s): the fence of nodes/%s stays",
			  m.key, orr.why, id);
		break;
	case KEEP_FCHECK_TOO_MANY_ROOTS:
		keep_warn(x->prog, "over %d application roots under apps/: the fence stays",
			  KEEP_FCHECK_ROOTS_MAX);
		break;
	}
	return keep_fcheck_exit_code(&m);
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
	bool removable = false;
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
		rc = fence_unnamed(x, id, &removable, &checked, &nroots);
		if (!removable)
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
