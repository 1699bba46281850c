/* owner-run — run a command while this node holds a key, and not a moment
 * longer (issue 15; ADR 0020 §3 "Own"; docs/ownership.md "owner-run").
 *
 * Acquires KEY (lib/ownrun.c keep_acquire_wait, optionally waiting), runs
 * CMD in its own process group with KEEP_OWNER_KEY, KEEP_OWNER_GENERATION
 * (the fencing token) and KEEP_NODE_ID in its environment, and watches the
 * grant in-process with owner-check's rule (keep_grant_now: the hold, its
 * pending release, the lease state file, the boot clock). It re-judges the
 * grant when the state directory changes (inotify on the node directory,
 * holds/ and pending/: lease-write rewrites the lease state on every
 * renewal, lapse, fence, twin, clock step or stop) and when the lease's
 * validity deadline passes (a timerfd on CLOCK_BOOTTIME, absolute: a
 * suspend counts). The moment the grant ends, CMD's process group gets
 * SIGTERM, then SIGKILL after --kill-after ms. SIGTERM, SIGINT and SIGHUP
 * to owner-run are forwarded to the group. When CMD exits, what is left
 * of its group is killed and KEY released (as owner-release KEY).
 *
 * Before acquiring it takes KEY's run lock (lib/holds.h keep_run_lock_take)
 * and CMD inherits it: every release of KEY on this node waits for it
 * before writing nobody (lib/ownrun.c), so no release is sent while a
 * process of the job may live; a second owner-run of KEY is refused.
 *
 * Exit: CMD's status (128 + N when a signal N killed it); 21 (GRANT_ENDED)
 * when the grant ended while CMD ran; 1 refused reason=running; otherwise
 * owner-acquire's code when KEY was not acquired; 100 usage (--kill-after
 * above safety_ms / 2); 126/127 CMD not executable / not found (checked
 * before acquiring); 111 no fork, timer, inotify watch or run lock. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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

#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/core/acquire.h"
#include "../lib/core/owner.h"
#include "../lib/core/resolver.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/holds.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/ownrun.h"
#include "../lib/statedir.h"

static const char usage[] =
    "usage: owner-run [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                 [--wait[=DURATION]] [--kill-after=MS] KEY -- CMD [ARGS...]\n"
    "\n"
    "Acquire KEY (as owner-acquire; --wait as owner-acquire --wait), run CMD in\n"
    "its own process group with KEEP_OWNER_KEY, KEEP_OWNER_GENERATION (the\n"
    "fencing token) and KEEP_NODE_ID set, and watch the grant (owner-check's\n"
    "rule) while it runs. The moment the grant ends (fence, twin, lapse, run-out,\n"
    "clock step, clean stop) CMD's process group gets SIGTERM, then SIGKILL\n"
    "after --kill-after MS (default min(safety_ms / 2, 1000); at most\n"
    "safety_ms / 2). SIGTERM, SIGINT and SIGHUP are forwarded to CMD's process\n"
    "group; CMD dies with owner-run. When CMD exits, the rest of its process\n"
    "group is killed and KEY released. The key's run lock (runs/ in the state\n"
    "directory, inherited by CMD) makes every release of KEY on this node wait\n"
    "until the job's processes are gone, and refuses a second owner-run of KEY.\n"
    "Lines on stdout (CMD's own output shares it): the acquisition's answer\n"
    "(acquired, held, refused, error, unknown; waiting; refused key=K\n"
    "reason=running: KEY already runs here), then\n"
    "  grant-ended key=K generation=G reason=R code=C ended_mono_ms=T  (R as\n"
    "      owner-check's; T when CMD was sent SIGTERM, boot clock)\n"
    "  exited key=K status=S                           (S: CMD's exit status)\n"
    "and the release's line (released, pending, dropped, ...).\n"
    "\n"
    "exit: CMD's status (128 + N when killed by signal N); 21 the grant ended\n"
    "while CMD ran (CMD was stopped); 1 KEY already runs here; when KEY was\n"
    "not acquired, owner-acquire's code (1 held, 10..16, 17, 20, 111); 100\n"
    "usage; 126 or 127 CMD could not be executed or was not found (checked\n"
    "before acquiring); 111 no process, timer, inotify watch or run lock could\n"
    "be set up. See docs/exit-codes.md and docs/ownership.md.\n";

static const char *prog = "owner-run";

static void on_release_event(void *ctx, const struct keep_res_event *ev)
{
	(void)ctx;
	if (ev->kind == KEEP_REV_WARN)
		keep_warn(prog, "%s", ev->text);
	else
		keep_res_event_line(ev);
}

/* Release KEY as owner-release KEY does (one attempt now, else parked for
 * the resolver). */
static void release_key(struct keep_owncmd *x, const char *key)
{
	struct keep_resolver r;
	struct keep_resolver_cfg c;

	keep_owncmd_resolver_cfg(x, KEEP_RES_RELEASE, &c);
	c.concurrency = 1;
	snprintf(c.key, sizeof(c.key), "%s", key);
	keep_resolver_init(&r, &c);
	keep_resolver_run(&r, x->node_dir, &x->store, 1, NULL, on_release_event, x);
	keep_resolver_release(&r);
}

/* Arm fd (a CLOCK_BOOTTIME timerfd) to fire at at_ms on the boot clock
 * (absolute); 0 disarms. */
static void arm_at(int fd, int64_t at_ms)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (at_ms > 0) {
		its.it_value.tv_sec = at_ms / 1000;
		its.it_value.tv_nsec = (long)(at_ms % 1000) * 1000000L;
	}
	if (timerfd_settime(fd, at_ms > 0 ? TFD_TIMER_ABSTIME : 0, &its, NULL) != 0)
		keep_die(KEEP_EXIT_TEMP, prog, "timerfd_settime: %s", strerror(errno));
}

/* CMD's name is found and executable as execvp will look for it (PATH
 * when it has no '/'): 0, else 127 not found or 126 not executable, with
 * one line on stderr. Checked before acquiring: no generation is taken for
 * a CMD that cannot run. */
static int cmd_check(const char *name)
{
	const char *path = getenv("PATH"), *p, *e;
	char full[PATH_MAX];
	struct stat st;
	int err = ENOENT;

	if (!name[0]) {
		fprintf(stderr, "%s: fatal: cannot run '': %s\n", prog, strerror(ENOENT));
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
	fprintf(stderr, "%s: fatal: cannot run '%s': %s\n", prog, name, strerror(err));
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
	fprintf(stderr, "%s: fatal: cannot run '%s': %s\n", prog, cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

int main(int argc, char **argv)
{
	enum { OPT_WAIT = 0x2000, OPT_KILL_AFTER };
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS,
	    {"wait", optional_argument, NULL, OPT_WAIT},
	    {"kill-after", required_argument, NULL, OPT_KILL_AFTER},
	    {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_owncmd x;
	struct keep_reqstats stats;
	struct keep_store *store;
	struct keep_acquire sm;
	struct keep_lease_state st;
	struct signalfd_siginfo si;
	struct pollfd pfd[4];
	struct keep_buf b;
	sigset_t mask;
	enum keep_grant g;
	char sub[KEEP_PATH_MAX + 100];
	const char *key;
	char **cmd;
	int64_t wait_ms = 0, kill_after = -1, gen;
	int c, code, ino, tfd, kfd, sfd, rfd = -1, status = 0, end_code = 0;
	bool ended = false, exited = false;
	pid_t pid, parent;

	memset(&x, 0, sizeof(x));
	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "+hc:", opts)) != -1) {
		if (c == OPT_WAIT)
			wait_ms = keep_cli_wait_arg(&cli, optarg);
		else
			kill_after = keep_cli_int_arg(&cli, "--kill-after", optarg, 0, 86400000);
	}
	if (argc - optind < 1)
		keep_cli_usage_error(&cli, "KEY and CMD expected");
	key = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		keep_cli_usage_error(&cli, "CMD expected after KEY --");
	cmd = argv + optind;
	if (!keep_owner_key_valid(key))
		return keep_cli_invalid_key(prog, key);
	code = cmd_check(cmd[0]);
	if (code != 0)
		return code;
	keep_reqstats_init(&stats);
	keep_owncmd_setup(&x, &cli, &stats, 1, &store);
	if (kill_after < 0) {
		kill_after = x.cfg.timing.safety_ms / 2;
		if (kill_after > 1000)
			kill_after = 1000;
	} else if (kill_after > x.cfg.timing.safety_ms / 2) {
		/* CMD must be gone before another node's grant may begin */
		keep_store_free(store);
		keep_die(KEEP_EXIT_USAGE, prog,
			 "--kill-after %lld ms is above safety_ms / 2 (%lld ms)",
			 (long long)kill_after, (long long)(x.cfg.timing.safety_ms / 2));
	}
	/* the run lock, before acquiring: one run of KEY on this node, and no
	 * release sent while CMD's processes live */
	code = keep_run_lock_take(x.node_dir, key, kill_after, &rfd);
	if (code == 1) {
		keep_line_begin(&b, "refused");
		keep_line_str(&b, "key", key);
		keep_line_str(&b, "reason", "running");
		keep_line_end(&b);
		keep_store_free(store);
		return KEEP_EXIT_NO;
	}
	if (code != 0)
		keep_die(KEEP_EXIT_TEMP, prog,
			 "unable to take the run lock of '%s' in '%s/runs': %s", key, x.node_dir,
			 strerror(errno));

	keep_cli_stop_signals(); /* while waiting: SIGTERM, SIGINT end the wait */
	keep_acquire_wait(&sm, &x, key, wait_ms, &keep_stop_flag, prog);
	code = keep_acquire_answer(prog, &sm);
	if (sm.res.kind != KEEP_AR_ACQUIRED) {
		keep_store_free(store);
		return code;
	}
	gen = sm.res.generation;

	/* from here signals are read from a signalfd (none is lost between
	 * the fork and the loop) */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	kfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || ino < 0 || tfd < 0 || kfd < 0)
		keep_die(KEEP_EXIT_TEMP, prog, "signalfd, inotify or timerfd: %s", strerror(errno));
	{
		static const char *const dirs[] = {"", "/holds", "/pending"};
		const uint32_t ev = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
				    IN_DELETE | IN_ATTRIB | IN_MODIFY;
		for (c = 0; c < 3; c++) {
			snprintf(sub, sizeof(sub), "%s%s", x.node_dir, dirs[c]);
			if (inotify_add_watch(ino, sub, ev) < 0)
				keep_die(KEEP_EXIT_TEMP, prog, "inotify_add_watch '%s': %s", sub,
					 strerror(errno));
		}
	}

	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid < 0)
		keep_die(KEEP_EXIT_TEMP, prog, "fork: %s", strerror(errno));
	if (pid == 0)
		run_child(cmd, key, gen, x.cfg.node_id, parent);
	setpgid(pid, pid);  /* also in the child: whichever runs first */
	if (keep_stop_flag) /* a signal while acquiring: pass it on */
		kill(-pid, SIGTERM);

	pfd[0].fd = sfd;
	pfd[1].fd = ino;
	pfd[2].fd = tfd;
	pfd[3].fd = kfd;
	for (c = 0; c < 4; c++)
		pfd[c].events = POLLIN;
	for (bool check = true; !exited;) {
		if (check && !ended) {
			code = keep_grant_now(x.node_dir, key, gen, &g, NULL);
			if (code != KEEP_EXIT_OK) {
				/* the grant ended: stop CMD now, kill it after kill_after */
				int64_t ended_at = keep_boot_ms();

				ended = true;
				kill(-pid, SIGTERM);
				arm_at(kfd,
				       keep_add_sat_ms(ended_at, kill_after > 0 ? kill_after : 1));
				end_code = code;
				keep_line_begin(&b, "grant-ended");
				keep_line_str(&b, "key", key);
				keep_line_int(&b, "generation", gen);
				keep_line_str(&b, "reason", keep_grant_name(g));
				keep_line_int(&b, "code", code);
				/* when CMD was sent SIGTERM, on the clock the grant's
				 * validity is judged with (the boot clock) */
				keep_line_int(&b, "ended_mono_ms", ended_at);
				keep_line_end(&b);
				arm_at(tfd, 0);
			} else {
				/* the next moment the grant may end without a file
				 * changing: the lease's validity deadline */
				keep_holds_lease(x.node_dir, 0, &st);
				arm_at(tfd, st.valid_until_ms > 0 ? st.valid_until_ms + 1 : 0);
			}
		}
		check = false;
		if (poll(pfd, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			keep_die(KEEP_EXIT_TEMP, prog, "poll: %s", strerror(errno));
		}
		if (pfd[1].revents) {
			drain_fd(ino);
			check = true;
		}
		if (pfd[2].revents) {
			drain_fd(tfd);
			check = true;
		}
		if (pfd[3].revents) {
			drain_fd(kfd);
			kill(-pid, SIGKILL);
		}
		if (pfd[0].revents)
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					continue;
				kill(-pid, (int)si.ssi_signo); /* forwarded */
			}
		if (waitpid(pid, &status, WNOHANG) == pid)
			exited = true;
	}
	/* nothing of CMD's process group outlives the hold */
	kill(-pid, SIGKILL);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	keep_line_begin(&b, "exited");
	keep_line_str(&b, "key", key);
	keep_line_int(&b, "status", code);
	keep_line_end(&b);
	/* release KEY once no process of the job holds the run lock (one that
	 * left the group may); the lock is not held while releasing: an
	 * operator's owner-release of KEY may hold the key's per-actor lock
	 * and wait for it */
	keep_run_lock_drop(rfd);
	if (keep_run_lock_wait(x.node_dir, key) == 0)
		release_key(&x, key);
	else
		keep_warn(prog,
			  "a process of the job still holds the run lock of '%s': not released "
			  "(owner-release KEY waits for it)",
			  key);
	keep_store_free(store);
	(void)end_code;
	return ended ? KEEP_EXIT_GRANT_ENDED : code;
}
