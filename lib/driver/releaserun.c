/* keep — owner-release's driver (ADR 0020 §1, §3-§5; docs/ownership.md).
 * See releaserun.h. */
#include "releaserun.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../core/resolver.h"
#include "../local/holds.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "cli.h"

/* Print one event of the resolver as its line (or a warning). */
static void on_event(void *arg, const struct keep_res_event *ev)
{
	struct keep_owncmd *x = arg;
	struct keep_releaserun *rl = x->extra;

	switch (ev->kind) {
	case KEEP_REV_WARN:
		keep_warn(rl->prog, "%s", ev->text);
		return;
	case KEEP_REV_PASS:
		if (rl->metrics) /* the --follow process owns keep.owner-release.prom */
			keep_owncmd_gauges(x->node_dir, rl->metrics, rl->stats);
		if (rl->deadline_mono_ms && ev->left > 0 &&
		    keep_boot_ms() >= rl->next_say_mono_ms) {
			/* someone waits (a person, the agent's stop): for what, how
			 * long; once a period at most */
			keep_info(
			    rl->prog, "drain: %lld release(s) pending, %lld s left at most",
			    (long long)ev->left,
			    (long long)((rl->deadline_mono_ms - keep_boot_ms() + 999) / 1000));
			rl->next_say_mono_ms =
			    keep_timing_progress_due_ms(keep_boot_ms(), x->cfg.timing.period_ms, 1);
		}
		return;
	default:
		break;
	}
	keep_res_event_line(ev);
}

int keep_releaserun_key(void *ctx, const char *key)
{
	struct keep_owncmd *x = ctx;
	const struct keep_releaserun *rl = x->extra;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	int rc;

	if (!keep_owner_key_valid(key)) {
		keep_warn(rl->prog, "invalid key '%s'", key);
		return KEEP_EXIT_USAGE;
	}
	keep_owncmd_resolver_cfg(x, KEEP_RES_RELEASE, &c);
	snprintf(c.key, sizeof(c.key), "%s", key);
	keep_resolver_init(&r, &c);
	keep_resolver_run(&r, x->node_dir, &x->store, 1, &keep_stop_flag, on_event, x);
	rc = keep_resolver_exit_code(&r);
	keep_resolver_release(&r);
	return rc;
}

/* --all for a node that never ran under this state directory (no lease
 * state file: a mistyped --node-id or --state-dir) finds nothing to drain
 * and exits 0 as a drain of an idle node does: one warning line on stderr
 * keeps it from passing for a drain done (issue 27, the operator's
 * walkthrough). Reads the state directory only. */
static void warn_never_ran(const struct keep_config *cfg, const char *prog)
{
	struct keep_lease_state st;
	char dir[4096];

	if (keep_config_node_dir(cfg, dir, sizeof(dir)) != 0)
		return;
	if (keep_lease_state_read(dir, &st) == KEEP_ERR_IO && errno == ENOENT)
		keep_warn(prog,
			  "no lease state for node %s in '%s': no node ran here under this id "
			  "and state directory, so there is nothing to drain (check --node-id "
			  "and --state-dir)",
			  cfg->node_id, dir);
}

/* --pending [--follow] and --all: the resolver with up to 32 workers. */
static int resolve(struct keep_owncmd *x, enum keep_res_mode mode, int64_t wait_ms,
		   struct keep_store *const *stores, int nstores)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_buf b;
	int rc;

	keep_owncmd_resolver_cfg(x, mode, &c);
	if (mode == KEEP_RES_DRAIN) {
		c.deadline_mono_ms =
		    keep_resolver_drain_deadline_ms(&x->cfg.timing, keep_boot_ms(), wait_ms);
		((struct keep_releaserun *)x->extra)->deadline_mono_ms =
		    c.deadline_mono_ms; /* progress */
	}
	keep_resolver_init(&r, &c);
	/* a stop signal stops a pass or a follow, not a drain: keep_resolver_stop */
	keep_resolver_run(&r, x->node_dir, stores, nstores, &keep_stop_flag, on_event, x);
	rc = keep_resolver_exit_code(&r);
	if (mode == KEEP_RES_DRAIN) {
		keep_line_begin(&b, "drain");
		keep_line_int(&b, "pending", r.left);
		keep_line_end(&b);
	}
	keep_resolver_release(&r);
	return rc;
}

int keep_releaserun_pending(struct keep_owncmd *x, bool follow, const struct keep_reqstats *stats,
			    struct keep_store *const *stores, int nstores)
{
	struct keep_releaserun *rl = x->extra;
	struct keep_metrics m;
	int rc;

	keep_metrics_init(&m, NULL, x->cfg.node_id);
	keep_metrics_set_prog(&m, follow ? x->cfg.metrics_textfile : NULL, rl->prog);
	keep_metrics_set_app(&m, x->cfg.app); /* each root's resolver its own file */
	keep_metrics_declare_requests(&m);    /* every counter from 0 */
	rl->metrics = &m;
	rl->stats = stats;
	rc = resolve(x, follow ? KEEP_RES_FOLLOW : KEEP_RES_PASS, 0, stores, nstores);
	rl->metrics = NULL;
	return rc;
}

int keep_releaserun_drain(struct keep_owncmd *x, int64_t wait_ms, struct keep_store *const *stores,
			  int nstores)
{
	const struct keep_releaserun *rl = x->extra;

	warn_never_ran(&x->cfg, rl->prog);
	return resolve(x, KEEP_RES_DRAIN, wait_ms, stores, nstores);
}
