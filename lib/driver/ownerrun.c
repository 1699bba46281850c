/* keep — owner-run's driver: run a command while this node holds a key,
 * and not a moment longer; and release the key only once the job is gone (issues 15, 24;
 * ADR 0020 §3 "Own", "Release"; docs/ownership.md "owner-run").
 *
 * Takes KEY's run lock (lib/local/runlock.h), acquires KEY (lib/driver/ownrun.c
 * keep_acquire_wait, optionally waiting), records the generation in the
 * run lock, and runs CMD in its own process group with KEEP_OWNER_KEY,
 * KEEP_OWNER_GENERATION (the fencing token) and KEEP_NODE_ID in its
 * environment; CMD and every process it starts inherit the run lock.
 * owner-run is the subreaper of its job (PR_SET_CHILD_SUBREAPER: orphans
 * of the job come back to it). It watches the grant in-process with
 * owner-check's rule (keep_grant_now) whenever the state directory changes
 * (inotify) and at the lease's validity deadline (a CLOCK_BOOTTIME
 * timerfd).
 *
 * The job is CMD's process group, owner-run's descendants and every
 * process holding the run lock. It is stopped (lib/core/jobstop.h: the
 * first signal, SIGKILL after --kill-after, then waited for until none is
 * left) the moment the grant ends (SIGTERM first), when a signal whose
 * default action would end owner-run comes (that signal first; the crash
 * signals SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGTRAP excepted), when CMD
 * exits (SIGKILL at once: nothing of the job outlives it) and on any
 * failure after the acquisition (SIGTERM first). Then the run lock says no
 * job runs (generation 0) and KEY is released as owner-release KEY does
 * (or parked pending): every exit after an acquisition releases it, unless
 * a process of the job survives its SIGKILL (then the hold stays, named on
 * stderr: nothing of the key is freed while the job lives).
 *
 * Exit: CMD's status (128 + N when a signal N killed it); 21 (GRANT_ENDED)
 * when the grant ended while CMD ran (or before it started); 128 + N when
 * signal N came before CMD started (KEY released, nothing ran); 1 refused
 * reason=running; otherwise owner-acquire's code when KEY was not acquired;
 * 100 usage (--kill-after above safety_ms / 2); 126/127 CMD not executable
 * / not found (checked before acquiring); 111 no fork, timer, inotify
 * watch, poll or run lock (what was acquired released first), or a process
 * of the job that SIGKILL did not end. */
#include "ownerrun.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../core/acquire.h"
#include "../core/jobstop.h"
#include "../core/owner.h"
#include "../core/resolver.h"
#include "../driver/cli.h"
#include "../driver/ownrun.h"
#include "../local/holds.h"
#include "../local/metrics.h"
#include "../local/runlock.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "../platform/line.h"

static const char *prog = "owner-run";

/* The last stop signal caught before signals go to the signalfd. */
static volatile sig_atomic_t caught_sig;

static void on_stop_signal(int sig)
{
	keep_stop_flag = 1;
	caught_sig = sig;
}

/* The signals whose default action would end owner-run, handled as a stop
 * of the job (lib/core/jobstop.h keep_jobstop_stop_signal). */
static void stop_sigset(sigset_t *set)
{
	sigemptyset(set);
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (keep_jobstop_stop_signal(sig))
			sigaddset(set, sig);
}

static void catch_stop_signals(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	stop_sigset(&set);
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (sigismember(&set, sig) == 1)
			sigaction(sig, &sa, NULL);
}

static void on_release_event(void *ctx, const struct keep_res_event *ev)
{
	(void)ctx;
	if (ev->kind == KEEP_REV_WARN)
		keep_warn(prog, "%s", ev->text);
	else
		keep_res_event_line(ev);
}

/* The run: what every exit after the acquisition needs. */
struct run {
	struct keep_owncmd x;
	const char *key;
	int64_t gen, kill_after;
	int rfd;	  /* the run lock */
	pid_t pid;	  /* CMD (0: not started) */
	bool exited;	  /* CMD reaped */
	int status;	  /* its wait status */
	int64_t held_pid; /* a process of the job that survived its SIGKILL */
	/* the grant ended: its line, printed when the job is sent SIGTERM */
	bool announce;
	enum keep_grant g;
	int gcode;
};

/* Release KEY as owner-release KEY does (one attempt now, else parked for
 * the resolver), once the run lock says no job runs: the release's own
 * job stop (lib/core/resolver.h KEEP_JP_RUN) then finds nothing to stop,
 * while the lock, still held here, keeps a second owner-run of KEY from
 * starting until the release is done. */
static void release_key(struct run *rn)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;

	if (keep_run_lock_started(rn->rfd, rn->key, rn->kill_after, 0) != 0)
		keep_warn(prog, "unable to rewrite the run lock of '%s': %s", rn->key,
			  strerror(errno));
	keep_owncmd_resolver_cfg(&rn->x, KEEP_RES_RELEASE, &c);
	c.concurrency = 1;
	snprintf(c.key, sizeof(c.key), "%s", rn->key);
	keep_resolver_init(&r, &c);
	keep_resolver_run(&r, rn->x.node_dir, &rn->x.store, 1, NULL, on_release_event, rn);
	keep_resolver_release(&r);
	keep_run_lock_drop(rn->rfd);
	rn->rfd = -1;
}

/* Arm fd (a CLOCK_BOOTTIME timerfd) to fire at at_ms on the boot clock
 * (absolute); 0 disarms. 0, or -1 with errno. */
static int arm_at(int fd, int64_t at_ms)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (at_ms > 0) {
		its.it_value.tv_sec = at_ms / 1000;
		its.it_value.tv_nsec = (long)(at_ms % 1000) * 1000000L;
	}
	return timerfd_settime(fd, at_ms > 0 ? TFD_TIMER_ABSTIME : 0, &its, NULL);
}

/* CMD's name is found and executable as execvp will look for it (PATH
 * when it has no '/'): 0, else 127 not found or 126 not executable, with
 * one line on stderr. Checked before acquiring: no generation is taken for
 * a CMD that cannot run. */
int keep_owner_run_cmd_check(const char *name)
{
	const char *path = getenv("PATH"), *p, *e;
	char full[PATH_MAX];
	struct stat st;
	int err = ENOENT;

	if (!name[0]) {
		keep_log(KEEP_LOG_FATAL, prog, "cannot run '': %s", strerror(ENOENT));
		return 127;
	}
	if (strchr(name, '/')) {
		if (access(name, X_OK) == 0 && stat(name, &st) == 0 && !S_ISDIR(st.st_mode))
			return 0;
		err = errno == ENOENT ? ENOENT : (errno ? errno : EACCES);
		if (err != ENOENT && stat(name, &st) == 0 && S_ISDIR(st.st_mode))
			err = EACCES;
	} else {
		if (!path)
			path = "/bin:/usr/bin";
		for (p = path;; p = e + 1) {
			int n;

			e = strchr(p, ':');
			if (!e)
				e = p + strlen(p);
			n = snprintf(full, sizeof(full), "%.*s%s%s", (int)(e - p), p,
				     e > p ? "/" : "", name);
			if (n > 0 && (size_t)n < sizeof(full) && stat(full, &st) == 0) {
				if (!S_ISDIR(st.st_mode) && access(full, X_OK) == 0)
					return 0;
				if (!S_ISDIR(st.st_mode))
					err = EACCES;
			}
			if (!*e)
				break;
		}
	}
	keep_log(KEEP_LOG_FATAL, prog, "cannot run '%s': %s", name, strerror(err));
	return err == ENOENT ? 127 : 126;
}

static void drain_fd(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The child: its own process group, the default signal state, the
 * grant's environment, then CMD. Never returns. */
static void run_child(char **cmd, const char *key, int64_t gen, const char *node, pid_t parent)
{
	char g[32];
	sigset_t none;
	int sig;

	setpgid(0, 0);
	/* CMD dies with owner-run (a kill -9 of it): the parent may already be
	 * gone when this is set, hence the check after it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(KEEP_EXIT_TEMP);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	snprintf(g, sizeof(g), "%lld", (long long)gen);
	if (setenv("KEEP_OWNER_KEY", key, 1) != 0 || setenv("KEEP_OWNER_GENERATION", g, 1) != 0 ||
	    setenv("KEEP_NODE_ID", node, 1) != 0)
		_exit(KEEP_EXIT_TEMP);
	execvp(cmd[0], cmd);
	keep_log(KEEP_LOG_FATAL, prog, "cannot run '%s': %s", cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Reap every child that ended (owner-run is the subreaper of its job:
 * orphans of the job are its children); note CMD's status. */
static void reap(struct run *rn)
{
	int st;
	pid_t w;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		if (rn->pid > 0 && w == rn->pid) {
			rn->exited = true;
			rn->status = st;
		}
}

/* `grant-ended key=K generation=G reason=R code=C ended_mono_ms=T`: T when
 * the job was sent SIGTERM (or, none started, when the grant was found
 * ended), on the clock the grant's validity is judged with (the boot
 * clock). */
static void grant_ended_line(const char *key, int64_t gen, enum keep_grant g, int code,
			     int64_t ended_mono_ms)
{
	struct keep_buf b;

	keep_line_begin(&b, "grant-ended");
	keep_line_str(&b, "key", key);
	keep_line_int(&b, "generation", gen);
	keep_line_str(&b, "reason", keep_grant_name(g));
	keep_line_int(&b, "code", code);
	keep_line_int(&b, "ended_mono_ms", ended_mono_ms);
	keep_line_end(&b);
}

/* Stop the job (jobstop.h: first_sig to every process of it, SIGKILL
 * after kill_after_ms, waited for until none is left or the bound). Runs
 * on its own clock reads and sleeps: it needs neither poll nor a timer
 * (a failure of either is one reason to be here). 0 once nothing of the
 * job is left; else rn->held_pid names a survivor (0 when none could be
 * seen) and -1 is returned. */
static int stop_job(struct run *rn, int first_sig, int64_t kill_after_ms)
{
	struct keep_jobstop js;
	struct keep_jobstop_step st;
	struct keep_run_sig rs;
	int64_t now;

	keep_jobstop_init(&js, kill_after_ms, 0);
	for (;;) {
		reap(rn);
		now = keep_boot_ms();
		keep_jobstop_next(&js, now, &st);
		switch (st.kind) {
		case KEEP_JOBSTOP_PROBE:
			keep_jobstop_on_probe(
			    &js, now, (rn->pid > 0 && !rn->exited) || keep_job_alive(rn->pid), -1,
			    rn->gen);
			break;
		case KEEP_JOBSTOP_SIGNAL:
			now = keep_boot_ms();
			keep_job_signal(rn->pid, st.sig == KEEP_JOBSTOP_TERM ? first_sig : SIGKILL,
					&rs);
			keep_jobstop_on_signal(&js, keep_boot_ms(), rs.npids, rs.failed, rs.pid);
			if (rn->announce) {
				rn->announce = false;
				grant_ended_line(rn->key, rn->gen, rn->g, rn->gcode, now);
			}
			break;
		case KEEP_JOBSTOP_WAIT:
			keep_sleep_until_boot(st.until_mono_ms);
			break;
		case KEEP_JOBSTOP_FREE:
			return 0;
		case KEEP_JOBSTOP_HELD:
			rn->held_pid = js.pid;
			return -1;
		}
	}
}

#define CODE_OF_CMD (-1) /* finish: exit with CMD's status */

/* CMD's exit status as a shell gives it (128 + N when signal N ended it). */
static int cmd_status(const struct run *rn)
{
	if (WIFEXITED(rn->status))
		return WEXITSTATUS(rn->status);
	if (WIFSIGNALED(rn->status))
		return 128 + WTERMSIG(rn->status);
	return 0;
}

/* Stop the job (first_sig 0: nothing was started), release KEY (unless a
 * process of the job survived), and give the exit code: code (CODE_OF_CMD:
 * CMD's status), or 111 when the job could not be stopped. */
static int finish(struct run *rn, int first_sig, int64_t kill_after_ms, int code)
{
	struct keep_buf b;

	if (rn->pid > 0 && first_sig != 0) {
		if (stop_job(rn, first_sig, kill_after_ms) != 0) {
			if (rn->held_pid > 0)
				keep_warn(
				    prog,
				    "a process of the job of '%s' (pid %lld) still runs after "
				    "SIGKILL: '%s' is not released while it lives (its hold "
				    "stays; the node's next release of it stops the job first)",
				    rn->key, (long long)rn->held_pid, rn->key);
			else
				keep_warn(prog,
					  "a process of the job of '%s' still holds its run lock "
					  "after SIGKILL (not one this user can see): '%s' is not "
					  "released while it lives",
					  rn->key, rn->key);
			code = KEEP_EXIT_TEMP;
			goto out;
		}
	}
	if (rn->announce) /* nothing was left to signal */
		grant_ended_line(rn->key, rn->gen, rn->g, rn->gcode, keep_boot_ms());
	if (rn->pid > 0) {
		keep_line_begin(&b, "exited");
		keep_line_str(&b, "key", rn->key);
		keep_line_int(&b, "status", cmd_status(rn));
		keep_line_end(&b);
	}
	if (code == CODE_OF_CMD)
		code = cmd_status(rn);
	release_key(rn);
out:
	keep_run_lock_drop(rn->rfd);
	rn->rfd = -1;
	keep_store_free(rn->x.store);
	return code;
}

/* A failure after the acquisition: one line, the job stopped (SIGTERM
 * first), KEY released; 111. */
__attribute__((format(printf, 2, 3))) static int fail(struct run *rn, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	keep_log(KEEP_LOG_ERROR, prog, "%s: stopping the job and releasing '%s'", msg, rn->key);
	return finish(rn, rn->pid > 0 ? SIGTERM : 0, rn->kill_after, KEEP_EXIT_TEMP);
}

/* See ownerrun.h. */
int keep_owner_run(struct keep_cli *cli, const char *key, char **cmd, int64_t wait_ms,
		   int64_t kill_after)
{
	struct run rn;
	struct keep_reqstats stats;
	struct keep_store *store;
	struct keep_acquire sm;
	struct keep_lease_state st;
	struct signalfd_siginfo si;
	struct pollfd pfd[3];
	struct keep_buf b;
	sigset_t mask;
	enum keep_grant g;
	char sub[KEEP_PATH_MAX + 100];
	int c, code, ino, tfd, sfd, stop_sig = 0;
	pid_t parent;

	memset(&rn, 0, sizeof(rn));
	rn.rfd = -1;
	rn.key = key;
	keep_reqstats_init(&stats);
	/* a node that never ran holds nothing: without --wait KEY is refused
	 * and nothing is created; with --wait it may be starting */
	rn.x.keep_absent = !wait_ms;
	keep_owncmd_setup(&rn.x, cli, &stats, 1, &store);
	rn.kill_after = keep_jobstop_kill_after_ms(kill_after, rn.x.cfg.timing.safety_ms);
	if (rn.kill_after < 0) {
		keep_store_free(store);
		keep_die(KEEP_EXIT_USAGE, prog,
			 "--kill-after %lld ms is above safety_ms / 2 (%lld ms)",
			 (long long)kill_after, (long long)(rn.x.cfg.timing.safety_ms / 2));
	}
	kill_after = rn.kill_after;
	keep_owncmd_warn_never_ran(&rn.x, prog);
	if (rn.x.never_ran && !wait_ms) {
		keep_store_free(store);
		return keep_acquire_never_ran(prog, rn.key);
	}
	/* every signal that would end owner-run only ends the wait from here
	 * (nothing acquired yet, or an acquisition to release) */
	catch_stop_signals();
	/* the run lock, before acquiring: one run of KEY on this node, and no
	 * release sent while a process of the job lives */
	code = keep_run_lock_take(rn.x.node_dir, rn.key, kill_after, &rn.rfd);
	if (code == 1) {
		keep_line_begin(&b, "refused");
		keep_line_str(&b, "key", rn.key);
		keep_line_str(&b, "reason", "running");
		keep_line_end(&b);
		keep_store_free(store);
		return KEEP_EXIT_NO;
	}
	if (code != 0)
		keep_die(KEEP_EXIT_TEMP, prog,
			 "unable to take the run lock of '%s' in '%s/runs': %s", rn.key,
			 rn.x.node_dir, strerror(errno));

	keep_acquire_wait(&sm, &rn.x, rn.key, wait_ms, &keep_stop_flag, prog);
	code = keep_acquire_answer(prog, &sm);
	if (sm.res.kind != KEEP_AR_ACQUIRED) {
		keep_run_lock_drop(rn.rfd);
		keep_store_free(store);
		return code;
	}
	rn.gen = sm.res.generation;

	/* ---- from here every exit releases KEY (finish) ---- */

	/* signals are read from a signalfd from here (none is lost between
	 * the fork and the loop) */
	stop_sigset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (keep_stop_flag) {
		/* a stop came while acquiring: CMD is not started */
		keep_warn(prog, "signal %d before CMD started: releasing '%s', nothing ran",
			  (int)caught_sig, rn.key);
		return finish(&rn, 0, 0, 128 + (caught_sig ? (int)caught_sig : SIGTERM));
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return fail(&rn, "signalfd: %s", strerror(errno));
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ino < 0)
		return fail(&rn, "inotify_init1: %s", strerror(errno));
	tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (tfd < 0)
		return fail(&rn, "timerfd_create: %s", strerror(errno));
	{
		static const char *const dirs[] = {"", "/holds", "/pending"};
		const uint32_t ev = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
				    IN_DELETE | IN_ATTRIB | IN_MODIFY;
		for (c = 0; c < 3; c++) {
			snprintf(sub, sizeof(sub), "%s%s", rn.x.node_dir, dirs[c]);
			if (inotify_add_watch(ino, sub, ev) < 0)
				return fail(&rn, "inotify_add_watch '%s': %s", sub,
					    strerror(errno));
		}
	}
	/* orphans of the job come back to owner-run, which stops them with it */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		keep_warn(prog,
			  "unable to become the subreaper of the job: %s (orphans of the job are "
			  "stopped only while they hold the run lock)",
			  strerror(errno));
	/* the generation first, then the grant: a release that removed the
	 * hold before this write is seen below; one after it sees the job's
	 * generation and stops the job (lib/core/resolver.h KEEP_JP_RUN) */
	if (keep_run_lock_started(rn.rfd, rn.key, kill_after, rn.gen) != 0)
		return fail(&rn, "unable to write the run lock of '%s': %s", rn.key,
			    strerror(errno));
	code = keep_grant_now(rn.x.node_dir, rn.key, rn.gen, &g, NULL);
	if (code != KEEP_EXIT_OK) {
		grant_ended_line(rn.key, rn.gen, g, code, keep_boot_ms());
		return finish(&rn, 0, 0, KEEP_EXIT_GRANT_ENDED);
	}

	fflush(NULL);
	parent = getpid();
	rn.pid = fork();
	if (rn.pid < 0) {
		rn.pid = 0;
		return fail(&rn, "fork: %s", strerror(errno));
	}
	if (rn.pid == 0)
		run_child(cmd, rn.key, rn.gen, rn.x.cfg.node_id, parent);
	setpgid(rn.pid, rn.pid); /* also in the child: whichever runs first */

	pfd[0].fd = sfd;
	pfd[1].fd = ino;
	pfd[2].fd = tfd;
	for (c = 0; c < 3; c++)
		pfd[c].events = POLLIN;
	for (bool check = true;;) {
		if (check) {
			code = keep_grant_now(rn.x.node_dir, rn.key, rn.gen, &g, NULL);
			if (code != KEEP_EXIT_OK) {
				/* the grant ended: stop the job now (its line at the
				 * SIGTERM, with the time it was sent) */
				rn.announce = true;
				rn.g = g;
				rn.gcode = code;
				return finish(&rn, SIGTERM, kill_after, KEEP_EXIT_GRANT_ENDED);
			}
			/* the next moment the grant may end without a file
			 * changing: the lease's validity deadline */
			keep_holds_lease(rn.x.node_dir, 0, &st);
			if (arm_at(tfd, keep_owner_grant_recheck_ms(st.valid_until_ms)) != 0)
				return fail(&rn, "timerfd_settime: %s", strerror(errno));
		}
		check = false;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return fail(&rn, "poll: %s", strerror(errno));
		}
		if (pfd[1].revents) {
			drain_fd(ino);
			check = true;
		}
		if (pfd[2].revents) {
			drain_fd(tfd);
			check = true;
		}
		stop_sig = 0;
		if (pfd[0].revents)
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				if (si.ssi_signo != SIGCHLD && !stop_sig)
					stop_sig = (int)si.ssi_signo;
		reap(&rn);
		if (stop_sig) /* a stop of the job: that signal first */
			return finish(&rn, stop_sig, kill_after, CODE_OF_CMD);
		if (rn.exited) /* CMD ended: nothing of the job outlives it */
			return finish(&rn, SIGKILL, 0, CODE_OF_CMD);
	}
}
