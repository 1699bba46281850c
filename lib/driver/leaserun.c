/* keep — lease-write's driver: the node lease machine (lib/core/lease.h)
 * run against the store, the clocks and the lease state file, with the
 * clean stop's signal thread, the wait for `go` and the stop of an orphan
 * (ADR 0020 §1, §4, §5; docs/lease.md). Reads the clocks, performs the
 * machine's actions, writes the state file, prints; decides nothing. */
#include "leaserun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../local/runlock.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "../platform/log.h"
#include "../platform/version.h"
#include "cli.h"
#include "storecmd.h"
#include "supervise.h"

/* The clean stop. SIGTERM/SIGINT are blocked in every thread and taken by
 * signal_thread (sigwait), which marks the state file `stopping` at once,
 * under state_lock, even while the main loop waits on a renewal in flight
 * (docs/lease.md "Clean stop"), then wakes the main loop with SIGUSR1.
 * stop_flag: 0 running; 1 stop asked; 2 stop handed to the machine. */
static atomic_int stop_flag;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_wake(int sig)
{
	(void)sig; /* only interrupts the main loop's sleep */
}

/* Write st, marked as stopping when a stop was asked and it says live:
 * from the signal on, no reader may see the lease valid. Under state_lock.
 * false when it could not be written (warned once a run of failures). */
static bool write_state_locked(struct keep_leaserun *d, struct keep_lease_state *st)
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
	struct keep_leaserun *d = arg;
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
			if (d->have_saved) {
				struct keep_lease_state st = d->saved;

				if (keep_lease_state_stopping(&st))
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
static int save_state(struct keep_leaserun *d, int64_t now_mono, int64_t wall)
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

/* The state file, then the machine's events printed and counted.
 * Returns keep_lease_on_state_write's answer (KEEP_LEASE_WITHDRAWN: the
 * action just handed out is not to be sent). */
static int drain_events(struct keep_leaserun *d)
{
	struct keep_lease_event e;
	int64_t now, wall;
	int r = 0;

	keep_clocks_now(&now, &wall);
	/* the state file first: what the node's other commands trust is
	 * never behind what this process announces (a lapse or a step ends
	 * every hold before its line is printed) */
	if (keep_lease_state_due(&d->sm)) {
		r = save_state(d, now, wall);
		if (r & KEEP_LEASE_SAVE_AGAIN)
			r |= save_state(d, now, wall);
	}
	while (keep_lease_poll_event(&d->sm, &e))
		keep_leaserun_event(d, &e, now);
	keep_metrics_set_ms(&d->metrics, "keep_node_lease_valid_seconds",
			    keep_lease_valid_gauge_ms(&d->sm, now, atomic_load(&stop_flag) != 0));
	keep_metrics_flush(&d->metrics);
	return r;
}

static void do_read(struct keep_leaserun *d, const struct keep_lease_action *act)
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

static void do_write(struct keep_leaserun *d, const struct keep_lease_action *act)
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
static void check_progress(struct keep_leaserun *d, int64_t now_mono)
{
	int64_t left = 0;

	if (d->sm.phase == KEEP_LEASE_CHECK && d->sm.check_deadline_mono_ms > now_mono)
		left = d->sm.check_deadline_mono_ms - now_mono;
	keep_metrics_set_ms(&d->metrics, "keep_start_check_wait_seconds", left);
	keep_metrics_flush(&d->metrics);
	if (left > 0 && (left + 999) / 1000 != d->check_left_s && isatty(2)) {
		d->check_left_s = (left + 999) / 1000;
		keep_info(d->prog, "start check: waiting %lld s more for nodes/%s (ttl + grace)",
			  (long long)d->check_left_s, d->cfg.node_id);
	}
}

/* --go-fd: wait up to wait_ms (a signal ends it sooner) for input on
 * go_fd. 1: a line `go` was read; 0: not yet; -1: EOF or a read error
 * (the supervisor gave up: stop, nothing written). Other lines are
 * ignored with a warning. */
static int wait_go(struct keep_leaserun *d, int wait_ms)
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
static void orphaned(struct keep_leaserun *d, int64_t now)
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
int keep_leaserun_clear_clock_offset(struct keep_leaserun *d)
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

/* See leaserun.h. (Not keep_cli_stop_signals: its handler would race the
 * state file.) */
void keep_leaserun_init(struct keep_leaserun *d, const char *prog)
{
	sigset_t stopsigs;

	/* SIGTERM/SIGINT blocked in every thread from the start (curl's too):
	 * only signal_thread takes them; one sent during the setup waits. */
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stopsigs, NULL);

	memset(d, 0, sizeof(*d));
	d->prog = prog;
	d->go_fd = -1;
	d->check_left_s = -1;
}

/* See leaserun.h. */
void keep_leaserun_open(struct keep_leaserun *d, bool clear_offset)
{
	if (keep_config_node_dir(&d->cfg, d->node_dir, sizeof(d->node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, d->prog, "state directory path too long");
	if (keep_mkdirs(d->node_dir) != 0)
		keep_die(KEEP_EXIT_TEMP, d->prog, "unable to create state directory '%s': %s",
			 d->node_dir, strerror(errno));
	{
		/* one lease-write per node per state directory: a twin on this
		 * machine is refused before it can touch the shared state file */
		char lock[KEEP_PATH_MAX + 100];
		int fd;

		snprintf(lock, sizeof(lock), "%s/lease.lock", d->node_dir);
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			keep_die(KEEP_EXIT_TEMP, d->prog, "unable to open '%s': %s", lock,
				 strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) != 0 && clear_offset)
			keep_die(KEEP_EXIT_REPLACED, d->prog,
				 "--clear-clock-offset: lease-write for node '%s' is running "
				 "(state directory '%s'): stop it first",
				 d->cfg.node_id, d->node_dir);
		else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
			keep_die(KEEP_EXIT_REPLACED, d->prog,
				 "another lease-write for node '%s' is running with state "
				 "directory '%s'",
				 d->cfg.node_id, d->node_dir);
		/* fd stays open (and locked) for the life of the process */
	}
	snprintf(d->key, sizeof(d->key), "nodes/%s", d->cfg.node_id);
	keep_boot_id(d->boot_id, sizeof(d->boot_id));
}

/* The metrics textfile, every counter from 0 (leaserun.h). */
static void open_metrics(struct keep_leaserun *d)
{
	keep_metrics_init(&d->metrics, NULL, d->cfg.node_id);
	keep_metrics_set_prog(&d->metrics, d->cfg.metrics_textfile, d->prog);
	{
		/* a lease-write killed mid-write (SIGKILL, the OOM killer) left
		 * the temps of its lease state file and textfile: this node's one
		 * lease-write removes those of dead processes (issue 27) */
		char lp[sizeof(d->node_dir) + 8];

		snprintf(lp, sizeof(lp), "%s/lease", d->node_dir);
		keep_sweep_atomic_temps(lp);
		if (d->metrics.path[0])
			keep_sweep_atomic_temps(d->metrics.path);
	}
	/* counters exist from the start: an alert on the first increase sees it */
	keep_metrics_inc(&d->metrics, "keep_node_lease_writes_total", 0);
	keep_metrics_inc(&d->metrics, "keep_node_lease_failures_total", 0);
	keep_metrics_inc(&d->metrics, "keep_node_lease_ran_out_total", 0);
	keep_metrics_inc(&d->metrics, "keep_clock_steps_total", 0);
	keep_metrics_declare_requests(&d->metrics);
	keep_metrics_flush(&d->metrics);
}

/* This process's template of nodes/ID: a new instance, the host (its
 * bytes outside printable ASCII as '_': keep_node_obj_set_host), the pid, the software. */
static void new_template(struct keep_leaserun *d, struct keep_node_obj *tmpl)
{
	memset(tmpl, 0, sizeof(*tmpl));
	snprintf(tmpl->node, sizeof(tmpl->node), "%s", d->cfg.node_id);
	if (keep_new_instance(tmpl->instance, sizeof(tmpl->instance)) != 0)
		keep_die(KEEP_EXIT_TEMP, d->prog, "unable to draw a random instance");
	{
		char host[sizeof(tmpl->host)] = "";

		if (gethostname(host, sizeof(host) - 1) != 0)
			host[0] = '\0';
		keep_node_obj_set_host(tmpl, host);
	}
	tmpl->pid = (int64_t)getpid();
	snprintf(tmpl->software, sizeof(tmpl->software), "%s", keep_software());
}

/* The machine of this process, set up (leaserun.h). */
static void start_machine(struct keep_leaserun *d, const struct keep_node_obj *tmpl)
{
	keep_lease_init(&d->sm, &d->cfg.timing, tmpl, keep_boot_ms());
	/* no job's process outlives a write that frees the node's records:
	 * the first write of this instance, released (docs/lease.md "Jobs of
	 * the node") */
	keep_lease_guard_runs(&d->sm, keep_jobstop_default_kill_after_ms(d->cfg.timing.safety_ms));
	if (d->go_fd >= 0)
		keep_lease_hold_first(&d->sm);
	{
		/* the judging offset left by earlier lease-writes of this node */
		struct keep_lease_state prev;
		int64_t now, wall, carried;

		if (keep_lease_state_read(d->node_dir, &prev) == 0) {
			keep_clocks_now(&now, &wall);
			carried = keep_lease_restart_carry(&d->sm, &prev, d->boot_id, now, wall);
			if (carried > 0)
				keep_warn(d->prog,
					  "peers are judged %lld ms late: the wall clock stepped "
					  "forward before (docs/lease.md \"Judging others after a "
					  "step\"; lease-write --clear-clock-offset)",
					  (long long)carried);
		}
	}
}

/* KEEP_LACT_WAIT_GO: the start check passed, the first write waits for
 * `go` on d->go_fd (until act->until_mono_ms; at once the first time, so
 * that its info line goes out). */
static void wait_for_go(struct keep_leaserun *d, const struct keep_lease_action *act, int64_t now)
{
	int g = wait_go(d, d->go_waited ? (int)(act->until_mono_ms - now) : 0);

	if (!g && !d->go_waited) {
		d->go_waited = true;
		check_progress(d, now);
		keep_info(d->prog,
			  "start check passed; the first write waits for `go` "
			  "on fd %d (keep-agent: the start guard)",
			  d->go_fd);
	}
	if (g > 0) {
		keep_lease_go(&d->sm);
		close(d->go_fd);
	} else if (g < 0) {
		keep_info(d->prog, "fd %d closed before `go`: stopping, nothing written", d->go_fd);
		keep_lease_go_closed(&d->sm, now);
		if (!atomic_load(&stop_flag))
			atomic_store(&stop_flag, 1); /* the orphan's check, the gauge */
	}
}

/* See leaserun.h. */
int keep_leaserun_run(struct keep_leaserun *d)
{
	struct keep_node_obj tmpl;
	struct sigaction sa;
	pthread_t sigthr;
	int rc;

	open_metrics(d);
	d->store = keep_store_open_or_die(d->prog, &d->cfg, NULL);
	new_template(d, &tmpl);

	/* SIGUSR1 (from signal_thread) interrupts the main loop's sleep */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->main_thread = pthread_self();

	start_machine(d, &tmpl);
	if (pthread_create(&sigthr, NULL, signal_thread, d) != 0)
		keep_die(KEEP_EXIT_TEMP, d->prog, "unable to start the signal thread");
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
				orphaned(d, now);
			keep_lease_stop(&d->sm, now);
		}
		keep_lease_next(&d->sm, now, wall, &act);
		if (drain_events(d) & KEEP_LEASE_WITHDRAWN)
			continue; /* the state file failed just now: not sent */
		if (act.kind == KEEP_LACT_DONE)
			break;
		if (d->sm.state_gave_up && atomic_load(&stop_flag) == 0) {
			keep_log(KEEP_LOG_FATAL, d->prog,
				 "unable to write the lease state file '%s/lease' for %lld ms: %s: "
				 "giving the lease up",
				 d->node_dir, (long long)(now - d->sm.state_fail_since_mono_ms),
				 strerror(d->sd_errno));
			atomic_store(&stop_flag, 2); /* the machine stops itself */
		}
		switch (act.kind) {
		case KEEP_LACT_WAIT:
			check_progress(d, now);
			if (atomic_load(&stop_flag) != 1)
				keep_sleep_until_boot(act.until_mono_ms);
			break;
		case KEEP_LACT_WAIT_GO:
			wait_for_go(d, &act, now);
			continue;
		case KEEP_LACT_READ:
			do_read(d, &act);
			break;
		case KEEP_LACT_WRITE:
			do_write(d, &act);
			break;
		case KEEP_LACT_RUNS_PROBE: {
			struct keep_run_view v;

			keep_runs_probe(d->node_dir, &v);
			keep_lease_on_runs_probe(&d->sm, keep_boot_ms(), &v);
			break;
		}
		case KEEP_LACT_RUNS_SIGNAL: {
			struct keep_run_sig rs;

			keep_run_signal(d->node_dir, NULL,
					act.sig == KEEP_JOBSTOP_KILL ? SIGKILL : SIGTERM, &rs);
			keep_lease_on_runs_signal(&d->sm, keep_boot_ms(), rs.npids, rs.failed,
						  rs.pid);
			break;
		}
		default:
			break;
		}
		drain_events(d);
	}
	{
		int64_t now, wall;

		keep_clocks_now(&now, &wall);
		save_state(d, now, wall);
	}
	rc = keep_lease_exit_code(&d->sm);
	keep_store_free(d->store);
	keep_metrics_release(&d->metrics);
	return rc;
}
