/* keep — lease-write's driver, one event of the node lease machine
 * (lib/core/lease.h): its line on stdout, its warning or fatal line on
 * stderr, its counter (ADR 0020 §1, §4, §5; docs/lease.md). Prints;
 * decides nothing. */
#include <string.h>

#include "../base/vocab.h"
#include "../core/timing.h"
#include "../platform/line.h"
#include "../platform/log.h"
#include "cli.h"
#include "leaserun.h"

static void print_event(struct keep_leaserun *d, const struct keep_lease_event *e, int64_t now_mono)
{
	struct keep_buf b;
	struct keep_lease_event *last_read = &d->last_read;

	if ((e->kind == KEEP_LEV_RENEWED && !d->verbose) || e->kind == KEEP_LEV_JOBS_SIGNALLED)
		return; /* JOBS_SIGNALLED: a warning on stderr (drain_events) */
	if (e->kind == KEEP_LEV_CHECK_READ && !d->verbose) {
		/* print a start-check read only when what it saw changed */
		bool same = last_read->kind == KEEP_LEV_CHECK_READ &&
			    last_read->outcome == e->outcome &&
			    last_read->written_at_ms == e->written_at_ms &&
			    strcmp(last_read->state, e->state) == 0 &&
			    strcmp(last_read->other_instance, e->other_instance) == 0;
		*last_read = *e;
		if (same)
			return;
	}
	keep_line_begin(&b, keep_lease_event_name(e->kind));
	keep_line_str(&b, "node", d->cfg.node_id);
	keep_line_str(&b, "instance", d->sm.tmpl.instance);
	switch (e->kind) {
	case KEEP_LEV_CHECK_START:
		keep_line_int(&b, "wait_ms", e->wait_ms);
		break;
	case KEEP_LEV_CHECK_READ:
		keep_line_str(&b, "outcome", keep_outcome_name(e->outcome));
		keep_line_str(&b, "state", e->state[0] ? e->state : NULL);
		keep_line_str(&b, "seen_instance", e->other_instance[0] ? e->other_instance : NULL);
		if (e->written_at_ms)
			keep_line_int(&b, "written_at_ms", e->written_at_ms);
		break;
	case KEEP_LEV_LIVE:
	case KEEP_LEV_RENEWED:
	case KEEP_LEV_ADOPTED:
	case KEEP_LEV_RECOVERED:
		keep_line_str(&b, "version", e->version);
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
		keep_line_int(&b, "valid_ms",
			      e->valid_until_mono_ms > now_mono ? e->valid_until_mono_ms - now_mono
								: 0);
		break;
	case KEEP_LEV_WRITE_FAILED:
	case KEEP_LEV_READ_FAILED:
		keep_line_str(&b, "outcome", keep_outcome_name(e->outcome));
		keep_line_int(&b, "retry_ms", e->wait_ms);
		break;
	case KEEP_LEV_READ_STALE:
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
		keep_line_int(&b, "retry_ms", e->wait_ms);
		break;
	case KEEP_LEV_RAN_OUT:
		keep_line_int(&b, "lapses", d->sm.lapses);
		break;
	case KEEP_LEV_CLOCK_STEP:
		keep_line_int(&b, "step_ms", e->step_ms);
		break;
	case KEEP_LEV_CLOCK_BEHIND:
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
		keep_line_int(&b, "behind_ms", e->wait_ms);
		break;
	case KEEP_LEV_RELEASED:
		keep_line_str(&b, "version", e->version);
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
		break;
	case KEEP_LEV_STOPPED:
		if (e->reason == KEEP_REASON_NONE)
			break;
		/* a clean stop that found a fence in place of its released */
		keep_line_str(&b, "reason", keep_lease_reason_name(e->reason));
		keep_line_str(&b, "state", e->state[0] ? e->state : NULL);
		keep_line_str(&b, "seen_instance", e->other_instance[0] ? e->other_instance : NULL);
		break;
	case KEEP_LEV_LOST:
		keep_line_str(&b, "reason", keep_lease_reason_name(e->reason));
		keep_line_str(&b, "state", e->state[0] ? e->state : NULL);
		keep_line_str(&b, "seen_instance", e->other_instance[0] ? e->other_instance : NULL);
		if (e->reason == KEEP_REASON_CLOCK_BEHIND) {
			keep_line_int(&b, "written_at_ms", e->written_at_ms);
			keep_line_int(&b, "behind_ms", e->wait_ms);
		}
		if (e->reason == KEEP_REASON_JOB_RUNNING)
			keep_line_int(&b, "pid", e->pid);
		break;
	default:
		break;
	}
	keep_line_end(&b);
}

/* The line, the diagnostic, the counter: leaserun.h. */
void keep_leaserun_event(struct keep_leaserun *d, const struct keep_lease_event *e,
			 int64_t now_mono_ms)
{
	print_event(d, e, now_mono_ms);
	switch (e->kind) {
	case KEEP_LEV_LIVE:
	case KEEP_LEV_RENEWED:
	case KEEP_LEV_ADOPTED:
	case KEEP_LEV_RECOVERED:
	case KEEP_LEV_RELEASED:
		keep_metrics_inc(&d->metrics, "keep_node_lease_writes_total", 1);
		break;
	case KEEP_LEV_WRITE_FAILED:
		keep_metrics_inc(&d->metrics, "keep_node_lease_failures_total", 1);
		break;
	case KEEP_LEV_RAN_OUT:
		keep_metrics_inc(&d->metrics, "keep_node_lease_ran_out_total", 1);
		break;
	case KEEP_LEV_CLOCK_STEP:
		keep_metrics_inc(&d->metrics, "keep_clock_steps_total", 1);
		keep_warn(d->prog,
			  "the wall clock stepped %+lld ms against the boot clock (more "
			  "than %lld ms): every hold of nodes/%s ends now, as on a lapse; "
			  "the lease is valid again after its next acknowledged write "
			  "(docs/lease.md \"Clocks\")",
			  (long long)e->step_ms,
			  (long long)keep_timing_clock_step_ms(&d->cfg.timing), d->cfg.node_id);
		break;
	case KEEP_LEV_CLOCK_BEHIND:
		keep_warn(d->prog,
			  "the wall clock is %lld ms behind the last written_at of nodes/%s "
			  "(%lld, written by an earlier process of this node): the start "
			  "check waits until it passes it (docs/lease.md \"A wall clock "
			  "behind the last write\")",
			  (long long)e->wait_ms, d->cfg.node_id, (long long)e->written_at_ms);
		break;
	case KEEP_LEV_JOBS_SIGNALLED:
		keep_warn(d->prog,
			  "%s to %d process(es) of jobs holding run locks of this node "
			  "(pid %lld, '%s/runs'): %s waits until they are gone",
			  e->sig == KEEP_JOBSTOP_KILL ? "SIGKILL" : "SIGTERM", e->npids,
			  (long long)e->pid, d->node_dir,
			  d->sm.phase == KEEP_LEASE_STOPPING ? "released" : "the first write");
		break;
	case KEEP_LEV_STOPPED:
		if (e->reason == KEEP_REASON_FENCED)
			keep_warn(d->prog,
				  "clean stop: nodes/%s was fenced before released landed "
				  "(the node had stopped renewing long enough for a peer, "
				  "or an operator fenced it): the stop is done, exit 0; "
				  "the fence frees its records ttl + grace after the kept "
				  "written_at, as released would (docs/lease.md)",
				  d->cfg.node_id);
		break;
	case KEEP_LEV_LOST:
		if (e->reason == KEEP_REASON_JOB_RUNNING)
			keep_log(KEEP_LOG_FATAL, d->prog,
				 "a process of a job (pid %lld) still holds a run lock of "
				 "this node ('%s/runs') after SIGKILL: nothing that frees "
				 "nodes/%s's records written (%s); they free when peers "
				 "fence it, ttl + grace after its last write (docs/lease.md "
				 "\"Jobs of the node\")",
				 (long long)e->pid, d->node_dir, d->cfg.node_id,
				 keep_lease_ever_wrote(&d->sm) ? "no released" : "not started");
		else if (e->reason == KEEP_REASON_CLOCK_BEHIND)
			keep_log(KEEP_LOG_FATAL, d->prog,
				 "the wall clock is %lld ms behind the last "
				 "written_at of nodes/%s (%lld), more than ttl + grace "
				 "(%lld ms): not starting, nothing written; correct the "
				 "clock (docs/lease.md \"A wall clock behind the last "
				 "write\")",
				 (long long)e->wait_ms, d->cfg.node_id, (long long)e->written_at_ms,
				 (long long)keep_timing_takeover_ms(&d->cfg.timing));
		else if (keep_lease_twin_at_start(&d->sm, e))
			/* a twin met in the start check: this process never
			 * held the lease, so it lost none */
			keep_log(KEEP_LOG_FATAL, d->prog,
				 "not starting: nodes/%s shows another instance of "
				 "node %s live (a twin: two processes with one node "
				 "id); nothing written; node ids must be unique "
				 "(runbook twin-detected.md)",
				 d->cfg.node_id, d->cfg.node_id);
		else if (e->reason != KEEP_REASON_UNCONFIRMED)
			keep_log(KEEP_LOG_FATAL, d->prog, "node lease lost: %s (nodes/%s shows %s)",
				 keep_lease_reason_name(e->reason), d->cfg.node_id,
				 e->state[0] ? e->state : "?");
		else if (d->sm.orphan_deadline_mono_ms)
			keep_warn(d->prog,
				  "released not written within a write period: peers fence "
				  "nodes/%s after ttl + grace",
				  d->cfg.node_id);
		else
			keep_warn(d->prog,
				  "clean stop: released not confirmed in time; peers will "
				  "fence nodes/%s after ttl + grace",
				  d->cfg.node_id);
		break;
	default:
		break;
	}
}
