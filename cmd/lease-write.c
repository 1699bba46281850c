/* lease-write — hold this node's lease nodes/<id> (ADR 0020 §1, §4, §5).
 *
 * A driver of lib/core/lease.c: it reads the clocks, calls the store,
 * feeds the replies to the machine, prints its events, and keeps the
 * lease state file (state_dir/<id>/lease) that every other command of
 * the node reads. SIGTERM/SIGINT: the clean stop (released, §4). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/base/parse.h"
#include "../lib/core/lease.h"
#include "../lib/core/leasestate.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/storecmd.h"
#include "../lib/driver/supervise.h"
#include "../lib/local/metrics.h"
#include "../lib/local/runlock.h"
#include "../lib/local/statedir.h"
#include "../lib/platform/clock.h"
#include "../lib/platform/line.h"
#include "../lib/platform/version.h"

static const char usage[] =
    "usage: lease-write [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                   [-v] [--check] [--clock-step-ms MS] [--go-fd FD]\n"
    "       lease-write [-c FILE] --node-id ID --clear-clock-offset\n"
    "\n"
    "Hold this node's lease nodes/<ID> until SIGTERM/SIGINT, then write\n"
    "`released` (clean stop). Neither `released` nor the first write of this\n"
    "instance is sent while a job holds a run lock of the node (owner-run's,\n"
    "STATE_DIR/ID/runs/): its processes get SIGTERM, SIGKILL after the job's\n"
    "--kill-after, and are waited for (2 s after the SIGKILL at most: then exit\n"
    "22, nothing written). Prints one event a line on stdout:\n"
    "  check-start check-read check-shortcut live adopted write-failed read-failed\n"
    "  ran-out recovered back-to-check stopping released stopped lost clock-step\n"
    "  clock-behind (and `renewed` with -v). State for other commands:\n"
    "  STATE_DIR/ID/lease.\n"
    "\n"
    "  -v, --verbose       also print every renewal\n"
    "  --check             validate the configuration, print `configuration OK`, exit\n"
    "  --clock-step-ms MS  a wall-clock step beyond MS (against the boot clock)\n"
    "                      ends every hold (lease.clock_step_ms; default\n"
    "                      max_skew_ms / 2, at least 20)\n"
    "  --go-fd FD          hold the first write, after the start check, until a\n"
    "                      line `go` is read from file descriptor FD (keep-agent:\n"
    "                      the start guard passed); EOF first: stop, nothing written\n"
    "  --clear-clock-offset  with the node's lease-write stopped: set the judging\n"
    "                      offset left by wall-clock steps to 0 (the operator checked\n"
    "                      the wall clock is right; docs/lease.md), print it, exit\n"
    "\n"
    "A clean stop that finds a fence in place of its `released` is done:\n"
    "`stopped ... reason=fenced`, exit 0. A refused first write goes back to the\n"
    "start check (`back-to-check`).\n"
    "\n"
    "exit: 0 stopped cleanly (released, or a fence found); 10 fenced; 11 another\n"
    "instance (twin); 12 released by another; 13 object removed; 16 an\n"
    "old-format node runs under this id;\n"
    "17 nodes/ID is not a keep object; 22 a job's process outlived its SIGKILL:\n"
    "released (or the first write) not written; 100 usage/config; 111 store\n"
    "unusable, release unconfirmed, or the wall clock more than ttl + grace behind the last\n"
    "written_at of nodes/ID (not started). See docs/exit-codes.md.\n";

/* The clean stop. SIGTERM/SIGINT are blocked in every thread and taken by
 * signal_thread (sigwait), which marks the state file `stopping` at once,
 * under state_lock, even while the main loop waits on a renewal in flight
 * (docs/lease.md "Clean stop"), then wakes the main loop with SIGUSR1.
 * stop_flag: 0 running; 1 stop asked; 2 stop handed to the machine. */
static atomic_int stop_flag;
enum { OPT_STEP = 0x2000, OPT_GO_FD, OPT_CLEAR_OFFSET };
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_wake(int sig)
{
	(void)sig; /* only interrupts the main loop's sleep */
}

struct driver {
	const char *prog;
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	char key[KEEP_NODE_ID_MAX + 8];
	char boot_id[64];
	struct keep_store *store;
	struct keep_lease sm;
	struct keep_metrics metrics;
	bool verbose;
	pthread_t main_thread;
	struct keep_lease_state saved; /* the last state written (under state_lock) */
	bool have_saved;
	int go_fd;	 /* --go-fd, or -1 */
	bool go_waited;	 /* the info line of the wait for `go` was printed */
	char go_buf[64]; /* a partial line read from go_fd */
	size_t go_len;
	bool sd_failing; /* the last state write failed (warned once a run of them) */
	int sd_errno;	 /* its errno */
};

/* Write st, marked as stopping when a stop was asked and it says live:
 * from the signal on, no reader may see the lease valid. Under state_lock.
 * false when it could not be written (warned once a run of failures). */
static bool write_state_locked(struct driver *d, struct keep_lease_state *st)
{
	bool ok;

	if (atomic_load(&stop_flag))
		keep_lease_state_stopping(st);
	ok = keep_lease_state_write(d->node_dir, st) == 0;
	if (!ok) {
		d->sd_errno = errno ? errno : EIO;
		if (!d->sd_failing)
			keep_warn(d->prog,
				  "unable to write the lease state file '%s/lease': %s: a lapse "
				  "(every hold ends), renewals paused until it can be written",
				  d->node_dir, strerror(d->sd_errno));
	} else if (d->sd_failing) {
		keep_info(d->prog, "the lease state file '%s/lease' is written again", d->node_dir);
	}
	d->sd_failing = !ok;
	d->saved = *st;
	d->have_saved = true;
	return ok;
}

static void *signal_thread(void *arg)
{
	struct driver *d = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		pthread_mutex_lock(&state_lock);
		if (atomic_load(&stop_flag) == 0) {
			atomic_store(&stop_flag, 1);
			if (d->have_saved && strcmp(d->saved.phase, "live") == 0) {
				struct keep_lease_state st = d->saved;

				write_state_locked(d, &st);
			}
		}
		pthread_mutex_unlock(&state_lock);
		pthread_kill(d->main_thread, SIGUSR1);
	}
	return NULL;
}

/* Write the state file from the machine; the result goes to the machine
 * (keep_lease_on_state_write), whose answer is returned. */
static int save_state(struct driver *d, int64_t now_mono, int64_t wall)
{
	struct keep_lease_state st;
	bool ok;

	keep_lease_state_project(&d->sm, now_mono, wall, &st);
	snprintf(st.node, sizeof(st.node), "%s", d->cfg.node_id);
	snprintf(st.instance, sizeof(st.instance), "%s", d->sm.tmpl.instance);
	st.pid = (int64_t)getpid();
	snprintf(st.clock, sizeof(st.clock), "%s", KEEP_CLOCK_NAME);
	snprintf(st.boot_id, sizeof(st.boot_id), "%s", d->boot_id);
	pthread_mutex_lock(&state_lock);
	ok = write_state_locked(d, &st);
	pthread_mutex_unlock(&state_lock);
	return keep_lease_on_state_write(&d->sm, now_mono, ok);
}

static void print_event(struct driver *d, const struct keep_lease_event *e, int64_t now_mono)
{
	struct keep_buf b;

	static struct keep_lease_event last_read;

	if ((e->kind == KEEP_LEV_RENEWED && !d->verbose) || e->kind == KEEP_LEV_JOBS_SIGNALLED)
		return; /* JOBS_SIGNALLED: a warning on stderr (drain_events) */
	if (e->kind == KEEP_LEV_CHECK_READ && !d->verbose) {
		/* print a start-check read only when what it saw changed */
		bool same = last_read.kind == KEEP_LEV_CHECK_READ &&
			    last_read.outcome == e->outcome &&
			    last_read.written_at_ms == e->written_at_ms &&
			    strcmp(last_read.state, e->state) == 0 &&
			    strcmp(last_read.other_instance, e->other_instance) == 0;
		last_read = *e;
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

/* Persist, then print, what the machine reported since the last call. */
/* The state file, then the machine's events printed and counted.
 * Returns keep_lease_on_state_write's answer (KEEP_LEASE_WITHDRAWN: the
 * action just handed out is not to be sent). */
static int drain_events(struct driver *d)
{
	struct keep_lease_event e;
	int64_t now, wall;
	int r = 0;

	keep_clocks_now(&now, &wall);
	/* the state file first: what the node's other commands trust is
	 * never behind what this process announces (a lapse or a step ends
	 * every hold before its line is printed) */
	if (d->sm.ev_n > 0 || d->sm.phase == KEEP_LEASE_LIVE || d->sm.state_fail_since_mono_ms) {
		r = save_state(d, now, wall);
		if (r & KEEP_LEASE_SAVE_AGAIN)
			r |= save_state(d, now, wall);
	}
	while (keep_lease_poll_event(&d->sm, &e)) {
		print_event(d, &e, now);
		switch (e.kind) {
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
				  (long long)e.step_ms,
				  (long long)keep_timing_clock_step_ms(&d->cfg.timing),
				  d->cfg.node_id);
			break;
		case KEEP_LEV_CLOCK_BEHIND:
			keep_warn(
			    d->prog,
			    "the wall clock is %lld ms behind the last written_at of nodes/%s "
			    "(%lld, written by an earlier process of this node): the start "
			    "check waits until it passes it (docs/lease.md \"A wall clock "
			    "behind the last write\")",
			    (long long)e.wait_ms, d->cfg.node_id, (long long)e.written_at_ms);
			break;
		case KEEP_LEV_JOBS_SIGNALLED:
			keep_warn(d->prog,
				  "%s to %d process(es) of jobs holding run locks of this node "
				  "(pid %lld, '%s/runs'): %s waits until they are gone",
				  e.sig == KEEP_JOBSTOP_KILL ? "SIGKILL" : "SIGTERM", e.npids,
				  (long long)e.pid, d->node_dir,
				  d->sm.phase == KEEP_LEASE_STOPPING ? "released"
								     : "the first write");
			break;
		case KEEP_LEV_STOPPED:
			if (e.reason == KEEP_REASON_FENCED)
				keep_warn(d->prog,
					  "clean stop: nodes/%s was fenced before released landed "
					  "(the node had stopped renewing long enough for a peer, "
					  "or an operator fenced it): the stop is done, exit 0; "
					  "the fence frees its records ttl + grace after the kept "
					  "written_at, as released would (docs/lease.md)",
					  d->cfg.node_id);
			break;
		case KEEP_LEV_LOST:
			if (e.reason == KEEP_REASON_JOB_RUNNING)
				keep_log(
				    KEEP_LOG_FATAL, d->prog,
				    "a process of a job (pid %lld) still holds a run lock of "
				    "this node ('%s/runs') after SIGKILL: nothing that frees "
				    "nodes/%s's records written (%s); they free when peers "
				    "fence it, ttl + grace after its last write (docs/lease.md "
				    "\"Jobs of the node\")",
				    (long long)e.pid, d->node_dir, d->cfg.node_id,
				    d->sm.written_at_ms ? "no released" : "not started");
			else if (e.reason == KEEP_REASON_CLOCK_BEHIND)
				keep_log(KEEP_LOG_FATAL, d->prog,
					 "the wall clock is %lld ms behind the last "
					 "written_at of nodes/%s (%lld), more than ttl + grace "
					 "(%lld ms): not starting, nothing written; correct the "
					 "clock (docs/lease.md \"A wall clock behind the last "
					 "write\")",
					 (long long)e.wait_ms, d->cfg.node_id,
					 (long long)e.written_at_ms,
					 (long long)keep_timing_takeover_ms(&d->cfg.timing));
			else if (e.reason == KEEP_REASON_REPLACED && !d->sm.written_at_ms)
				/* a twin met in the start check: this process never
				 * held the lease, so it lost none */
				keep_log(KEEP_LOG_FATAL, d->prog,
					 "not starting: nodes/%s shows another instance of "
					 "node %s live (a twin: two processes with one node "
					 "id); nothing written; node ids must be unique "
					 "(runbook twin-detected.md)",
					 d->cfg.node_id, d->cfg.node_id);
			else if (e.reason != KEEP_REASON_UNCONFIRMED)
				keep_log(KEEP_LOG_FATAL, d->prog,
					 "node lease lost: %s (nodes/%s shows %s)",
					 keep_lease_reason_name(e.reason), d->cfg.node_id,
					 e.state[0] ? e.state : "?");
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
	keep_metrics_set_ms(&d->metrics, "keep_node_lease_valid_seconds",
			    keep_lease_valid(&d->sm, now) && !atomic_load(&stop_flag)
				? d->sm.valid_until_mono_ms - now
				: 0);
	keep_metrics_flush(&d->metrics);
	return r;
}

static void do_read(struct driver *d, const struct keep_lease_action *act)
{
	struct keep_node_read nr;
	struct keep_node_obj obj;
	int64_t now, wall;

	keep_store_set_timeout(d->store, act->timeout_ms);
	keep_node_read(d->store, d->cfg.node_id, KEEP_NODE_READ_V3_ONLY, &obj, &nr);
	keep_metrics_store(&d->metrics, "get", nr.reply.outcome);
	if (nr.reply.throttled)
		keep_metrics_throttled(&d->metrics, "get");
	if (nr.reply.outcome == KEEP_STORE_OK && nr.derr)
		keep_warn(d->prog, "nodes/%s is not a valid node lease: %s", d->cfg.node_id,
			  nr.why);
	else if (nr.reply.outcome != KEEP_STORE_OK && nr.reply.outcome != KEEP_STORE_NOT_FOUND)
		keep_warn(d->prog, "unable to read nodes/%s: %s", d->cfg.node_id, nr.why);
	keep_clocks_now(&now, &wall);
	keep_lease_on_read(&d->sm, now, wall, nr.reply.outcome, nr.reply.version,
			   nr.ok ? &obj : NULL, nr.derr);
}

static void do_write(struct driver *d, const struct keep_lease_action *act)
{
	struct keep_reply r;
	struct keep_buf body;
	int rc;

	keep_buf_init(&body, KEEP_NODEOBJ_MAX);
	memset(&r, 0, sizeof(r));
	rc = keep_node_obj_encode(&act->obj, &body);
	if (rc) {
		/* cannot happen with a validated node id; refuse loudly */
		keep_reply_set(&r, KEEP_STORE_REFUSED, 0, "encode: %s", keep_strerror(rc));
	} else {
		keep_store_set_timeout(d->store, act->timeout_ms);
		keep_store_put(d->store, d->key, body.data, body.len, act->cond,
			       act->cond == KEEP_COND_IF_MATCH ? act->if_match : NULL, &r);
	}
	keep_metrics_store(&d->metrics, "put", r.outcome);
	if (r.throttled)
		keep_metrics_throttled(&d->metrics, "put");
	if (r.outcome != KEEP_STORE_OK)
		keep_warn(d->prog, "lease write nodes/%s: %s: %s", d->cfg.node_id,
			  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
	{
		/* the reply's time, both clocks: a step while the write was in
		 * flight is noticed before the reply can make the lease valid */
		int64_t now, wall;

		keep_clocks_now(&now, &wall);
		keep_lease_clocks(&d->sm, now, wall);
		keep_lease_on_write(&d->sm, now, r.outcome, r.version);
	}
	keep_buf_release(&body);
}

/* The start check's wait: the keep_start_check_wait_ms gauge and, when
 * stderr is a terminal, a progress line at each wake of the start check
 * (once per heartbeat period: its reads of nodes/ID) whose whole seconds
 * left differ from the last line's. */
static void check_progress(struct driver *d, int64_t now_mono)
{
	static int64_t last_s = -1;
	int64_t left = 0;

	if (d->sm.phase == KEEP_LEASE_CHECK && d->sm.check_deadline_mono_ms > now_mono)
		left = d->sm.check_deadline_mono_ms - now_mono;
	keep_metrics_set_ms(&d->metrics, "keep_start_check_wait_seconds", left);
	keep_metrics_flush(&d->metrics);
	if (left > 0 && (left + 999) / 1000 != last_s && isatty(2)) {
		last_s = (left + 999) / 1000;
		keep_info(d->prog, "start check: waiting %lld s more for nodes/%s (ttl + grace)",
			  (long long)last_s, d->cfg.node_id);
	}
}

/* --go-fd: wait up to wait_ms (a signal ends it sooner) for input on
 * go_fd. 1: a line `go` was read; 0: not yet; -1: EOF or a read error
 * (the supervisor gave up: stop, nothing written). Other lines are
 * ignored with a warning. */
static int wait_go(struct driver *d, int wait_ms)
{
	struct pollfd p = {.fd = d->go_fd, .events = POLLIN};
	ssize_t n;

	if (poll(&p, 1, wait_ms) <= 0)
		return 0;
	n = read(d->go_fd, d->go_buf + d->go_len, sizeof(d->go_buf) - 1 - d->go_len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0)
		return -1;
	d->go_len += (size_t)n;
	for (;;) {
		char *nl = memchr(d->go_buf, '\n', d->go_len);
		size_t len;

		if (!nl) {
			if (d->go_len == sizeof(d->go_buf) - 1) {
				keep_warn(d->prog, "--go-fd %d: line too long: ignored", d->go_fd);
				d->go_len = 0;
			}
			return 0;
		}
		len = (size_t)(nl - d->go_buf);
		if (len == 2 && memcmp(d->go_buf, "go", 2) == 0)
			return 1;
		keep_warn(d->prog, "--go-fd %d: ignored a line that is not `go`", d->go_fd);
		memmove(d->go_buf, nl + 1, d->go_len - len - 1);
		d->go_len -= len + 1;
	}
}

/* The stop of an orphan (keep-agent gone, docs/lease.md "No supervisor"):
 * keep_lease_orphan, and why. */
static void orphaned(struct driver *d, int64_t now)
{
	if (d->sm.orphan_deadline_mono_ms)
		return;
	if (d->sm.phase == KEEP_LEASE_LIVE || d->sm.phase == KEEP_LEASE_RAN_OUT)
		keep_warn(d->prog,
			  "keep-agent is gone: the lease is invalid from now, every hold with it; "
			  "writing released (no ownership record is released: they free ttl + "
			  "grace after the last write)");
	else
		keep_warn(d->prog, "keep-agent is gone: stopping");
	keep_lease_orphan(&d->sm, now);
}

/* --clear-clock-offset (lease.lock held: no lease-write runs): the state
 * file's judging offset set to 0, its clock base to now. Exit 0, or 111
 * when the file cannot be read or written. */
static int clear_clock_offset(struct driver *d)
{
	struct keep_lease_state st;
	struct keep_buf b;
	int64_t now, wall, was;

	if (keep_lease_state_read(d->node_dir, &st) != 0) {
		if (errno == ENOENT) {
			keep_line_begin(&b, "clock-offset");
			keep_line_str(&b, "node", d->cfg.node_id);
			keep_line_int(&b, "was_ms", 0);
			keep_line_end(&b);
			return KEEP_EXIT_OK;
		}
		keep_die(KEEP_EXIT_TEMP, d->prog, "unable to read '%s/lease': %s", d->node_dir,
			 strerror(errno));
	}
	keep_clocks_now(&now, &wall);
	was = keep_lease_state_clear_offset(&st, now, wall, d->boot_id);
	if (keep_lease_state_write(d->node_dir, &st) != 0)
		keep_die(KEEP_EXIT_TEMP, d->prog, "unable to write '%s/lease': %s", d->node_dir,
			 strerror(errno));
	keep_line_begin(&b, "clock-offset");
	keep_line_str(&b, "node", d->cfg.node_id);
	keep_line_int(&b, "was_ms", was);
	keep_line_end(&b);
	return KEEP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS,
	    {"verbose", no_argument, NULL, 'v'},
	    {"check", no_argument, NULL, KEEP_OPT_CHECK},
	    {"go-fd", required_argument, NULL, OPT_GO_FD},
	    {"clock-step-ms", required_argument, NULL, OPT_STEP},
	    {"clear-clock-offset", no_argument, NULL, OPT_CLEAR_OFFSET},
	    {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct driver d;
	struct keep_node_obj tmpl;
	struct sigaction sa;
	sigset_t stopsigs;
	pthread_t sigthr;
	bool clear_offset = false;
	int64_t step_ms = -1, go_fd;
	int c, rc;

	/* SIGTERM/SIGINT blocked in every thread from the start (curl's too):
	 * only signal_thread takes them; one sent during the setup waits.
	 * (Not keep_cli_stop_signals: its handler would race the file.) */
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stopsigs, NULL);

	memset(&d, 0, sizeof(d));
	d.prog = "lease-write";
	keep_supervised_start(d.prog); /* before any thread: lib/driver/supervise.h */
	d.go_fd = -1;
	keep_cli_init(&cli, d.prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:v", opts)) != -1) {
		switch (c) {
		case 'v':
			d.verbose = true;
			break;
		case OPT_STEP:
			step_ms = keep_cli_int_arg(&cli, "--clock-step-ms", optarg, 0, 86400000);
			break;
		case OPT_CLEAR_OFFSET:
			clear_offset = true;
			break;
		case OPT_GO_FD:
			if (!keep_dec_parse_str(optarg, 1023, &go_fd) ||
			    fcntl((int)go_fd, F_GETFD) < 0)
				keep_cli_usage_error(&cli, "--go-fd needs an open file descriptor");
			d.go_fd = (int)go_fd;
			break;
		}
	}
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	keep_cli_load_config(&cli, &d.cfg);
	if (step_ms >= 0) {
		char why[256];

		d.cfg.timing.clock_step_ms = step_ms;
		if (keep_timing_check(&d.cfg.timing, why, sizeof(why)) != 0)
			keep_die(KEEP_EXIT_USAGE, d.prog,
				 "invalid configuration: --clock-step-ms: %s", why);
	}
	keep_cli_require(&cli, &d.cfg, KEEP_NEED_NODE | KEEP_NEED_STORE);
	if (keep_config_node_dir(&d.cfg, d.node_dir, sizeof(d.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, d.prog, "state directory path too long");
	if (keep_mkdirs(d.node_dir) != 0)
		keep_die(KEEP_EXIT_TEMP, d.prog, "unable to create state directory '%s': %s",
			 d.node_dir, strerror(errno));
	{
		/* one lease-write per node per state directory: a twin on this
		 * machine is refused before it can touch the shared state file */
		char lock[KEEP_PATH_MAX + 100];
		int fd;

		snprintf(lock, sizeof(lock), "%s/lease.lock", d.node_dir);
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			keep_die(KEEP_EXIT_TEMP, d.prog, "unable to open '%s': %s", lock,
				 strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) != 0 && clear_offset)
			keep_die(KEEP_EXIT_REPLACED, d.prog,
				 "--clear-clock-offset: lease-write for node '%s' is running "
				 "(state directory '%s'): stop it first",
				 d.cfg.node_id, d.node_dir);
		else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
			keep_die(KEEP_EXIT_REPLACED, d.prog,
				 "another lease-write for node '%s' is running with state "
				 "directory '%s'",
				 d.cfg.node_id, d.node_dir);
		/* fd stays open (and locked) for the life of the process */
	}
	snprintf(d.key, sizeof(d.key), "nodes/%s", d.cfg.node_id);
	keep_boot_id(d.boot_id, sizeof(d.boot_id));
	if (clear_offset)
		return clear_clock_offset(&d);
	keep_metrics_init(&d.metrics, NULL, d.cfg.node_id);
	keep_metrics_set_prog(&d.metrics, d.cfg.metrics_textfile, d.prog);
	{
		/* a lease-write killed mid-write (SIGKILL, the OOM killer) left
		 * the temps of its lease state file and textfile: this node's one
		 * lease-write removes those of dead processes (issue 27) */
		char lp[sizeof(d.node_dir) + 8];

		snprintf(lp, sizeof(lp), "%s/lease", d.node_dir);
		keep_sweep_atomic_temps(lp);
		if (d.metrics.path[0])
			keep_sweep_atomic_temps(d.metrics.path);
	}
	/* counters exist from the start: an alert on the first increase sees it */
	keep_metrics_inc(&d.metrics, "keep_node_lease_writes_total", 0);
	keep_metrics_inc(&d.metrics, "keep_node_lease_failures_total", 0);
	keep_metrics_inc(&d.metrics, "keep_node_lease_ran_out_total", 0);
	keep_metrics_inc(&d.metrics, "keep_clock_steps_total", 0);
	keep_metrics_declare_requests(&d.metrics);
	keep_metrics_flush(&d.metrics);

	d.store = keep_store_open_or_die(d.prog, &d.cfg, NULL);

	memset(&tmpl, 0, sizeof(tmpl));
	snprintf(tmpl.node, sizeof(tmpl.node), "%s", d.cfg.node_id);
	if (keep_new_instance(tmpl.instance, sizeof(tmpl.instance)) != 0)
		keep_die(KEEP_EXIT_TEMP, d.prog, "unable to draw a random instance");
	if (gethostname(tmpl.host, sizeof(tmpl.host) - 1) != 0)
		tmpl.host[0] = '\0';
	for (char *p = tmpl.host; *p; p++)
		if (*p <= ' ' || *p > '~')
			*p = '_';
	tmpl.pid = (int64_t)getpid();
	snprintf(tmpl.software, sizeof(tmpl.software), "%s", keep_software());

	/* SIGUSR1 (from signal_thread) interrupts the main loop's sleep */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.main_thread = pthread_self();

	keep_lease_init(&d.sm, &d.cfg.timing, &tmpl, keep_boot_ms());
	/* no job's process outlives a write that frees the node's records:
	 * the first write of this instance, released (docs/lease.md "Jobs of
	 * the node") */
	keep_lease_guard_runs(&d.sm, keep_jobstop_default_kill_after_ms(d.cfg.timing.safety_ms));
	if (d.go_fd >= 0)
		keep_lease_hold_first(&d.sm);
	{
		/* the judging offset left by earlier lease-writes of this node */
		struct keep_lease_state prev;
		int64_t now, wall, carried;

		if (keep_lease_state_read(d.node_dir, &prev) == 0) {
			keep_clocks_now(&now, &wall);
			carried = keep_lease_restart_carry(&d.sm, &prev, d.boot_id, now, wall);
			if (carried > 0)
				keep_warn(d.prog,
					  "peers are judged %lld ms late: the wall clock stepped "
					  "forward before (docs/lease.md \"Judging others after a "
					  "step\"; lease-write --clear-clock-offset)",
					  (long long)carried);
		}
	}
	if (pthread_create(&sigthr, NULL, signal_thread, &d) != 0)
		keep_die(KEEP_EXIT_TEMP, d.prog, "unable to start the signal thread");
	pthread_detach(sigthr);
	for (;;) {
		struct keep_lease_action act;
		int64_t now, wall;

		keep_clocks_now(&now, &wall);
		if (!atomic_load(&stop_flag) && keep_supervisor_gone())
			atomic_store(&stop_flag,
				     1); /* the death signal is the rule; this, the backstop */
		if (atomic_load(&stop_flag) == 1) {
			atomic_store(&stop_flag, 2);
			if (keep_supervisor_gone())
				orphaned(&d, now);
			keep_lease_stop(&d.sm, now);
		}
		keep_lease_next(&d.sm, now, wall, &act);
		if (drain_events(&d) & KEEP_LEASE_WITHDRAWN)
			continue; /* the state file failed just now: not sent */
		if (act.kind == KEEP_LACT_DONE)
			break;
		if (d.sm.state_gave_up && atomic_load(&stop_flag) == 0) {
			keep_log(KEEP_LOG_FATAL, d.prog,
				 "unable to write the lease state file '%s/lease' for %lld ms: %s: "
				 "giving the lease up",
				 d.node_dir, (long long)(now - d.sm.state_fail_since_mono_ms),
				 strerror(d.sd_errno));
			atomic_store(&stop_flag, 2); /* the machine stops itself */
		}
		switch (act.kind) {
		case KEEP_LACT_WAIT:
			check_progress(&d, now);
			if (atomic_load(&stop_flag) != 1)
				keep_sleep_until_boot(act.until_mono_ms);
			break;
		case KEEP_LACT_WAIT_GO: {
			/* the start check passed: the first write waits for `go` */
			int g = wait_go(&d, d.go_waited ? (int)(act.until_mono_ms - now) : 0);

			if (!g && !d.go_waited) {
				d.go_waited = true;
				check_progress(&d, now);
				keep_info(d.prog,
					  "start check passed; the first write waits for `go` "
					  "on fd %d (keep-agent: the start guard)",
					  d.go_fd);
			}
			if (g > 0) {
				keep_lease_go(&d.sm);
				close(d.go_fd);
			} else if (g < 0) {
				keep_info(d.prog,
					  "fd %d closed before `go`: stopping, nothing written",
					  d.go_fd);
				if (!atomic_load(&stop_flag))
					atomic_store(&stop_flag, 1);
			}
			continue;
		}
		case KEEP_LACT_READ:
			do_read(&d, &act);
			break;
		case KEEP_LACT_WRITE:
			do_write(&d, &act);
			break;
		case KEEP_LACT_RUNS_PROBE: {
			struct keep_run_view v;

			keep_runs_probe(d.node_dir, &v);
			keep_lease_on_runs_probe(&d.sm, keep_boot_ms(), &v);
			break;
		}
		case KEEP_LACT_RUNS_SIGNAL: {
			struct keep_run_sig rs;

			keep_run_signal(d.node_dir, NULL,
					act.sig == KEEP_JOBSTOP_KILL ? SIGKILL : SIGTERM, &rs);
			keep_lease_on_runs_signal(&d.sm, keep_boot_ms(), rs.npids, rs.failed,
						  rs.pid);
			break;
		}
		default:
			break;
		}
		drain_events(&d);
	}
	{
		int64_t now, wall;

		keep_clocks_now(&now, &wall);
		save_state(&d, now, wall);
	}
	rc = keep_lease_exit_code(&d.sm);
	keep_store_free(d.store);
	keep_metrics_release(&d.metrics);
	return rc;
}
