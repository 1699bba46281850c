/* sysfail — an LD_PRELOAD injector of failing system calls for owner-run's
 * and the node's job handling (issue 24 items 2, 3; docs/testing.md
 * "Failures after an acquisition").
 *
 * Built as build/FLAVOUR/tools/sysfail.so (no sanitizers). Preloaded into a
 * command, it fails chosen calls as a machine at its limits would: the
 * inotify instances or watches used up, no timer, fork refused by pids.max,
 * a poll that fails, a process this user may not signal:
 *
 *   KEEP_SYSFAIL="RULE[;RULE...]"
 *   RULE = OP:ERRNO[:OPTION...]
 *     OP      inotify_init1 | inotify_add_watch | timerfd_create |
 *             timerfd_settime | signalfd | fork | poll | kill | dlopen
 *     ERRNO   EMFILE | ENOENT | ENFILE | ENOSPC | ENOMEM | EAGAIN | EINVAL | EPERM
 *     count=N fail the first N matching calls only (default: every one)
 *     skip=N  let the first N matching calls through first
 *     while=FILE  only while FILE exists (a test turns a failure on in a
 *             running process; FILE has no ':')
 *     prog=NAME   only in the program NAME (program_invocation_short_name:
 *             LD_PRELOAD and KEEP_SYSFAIL pass to every child, a rule
 *             names the one it is for)
 *   KEEP_SYSFAIL_LOG=FILE  append "sysfail: PROG OP ERRNO" per injected
 *             failure (O_APPEND per line: several processes may share it)
 *
 * dlopen fails by returning NULL (the library "is not installed": the S3
 * backend loads libcurl with it, lib/store/curlfn_internal.h).
 * kill fails only for another process's pid (a process always signals
 * itself). Counts are per process. A malformed rule makes the library
 * write "sysfail: bad rule ..." to stderr and abort the process at load,
 * so a typo never passes for "no failure injected". */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_RULES 16
#define PATTERN_MAX 256

extern char *program_invocation_short_name;

enum op {
	OP_INOTIFY_INIT1 = 0,
	OP_INOTIFY_ADD_WATCH,
	OP_TIMERFD_CREATE,
	OP_TIMERFD_SETTIME,
	OP_SIGNALFD,
	OP_FORK,
	OP_POLL,
	OP_KILL,
	OP_DLOPEN,
	OP_COUNT,
};

static const char *const op_names[OP_COUNT] = {
    "inotify_init1",  "inotify_add_watch",
    "timerfd_create", "timerfd_settime",
    "signalfd",	      "fork",
    "poll",	      "kill",
    "dlopen",
};

struct rule {
	enum op op;
	int err;
	long count; /* failures left; -1: unlimited */
	long skip;  /* matching calls let through first */
	char while_path[PATTERN_MAX];
	char prog[PATTERN_MAX];
};

static struct rule rules[MAX_RULES];
static int nrules;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static const struct {
	const char *n;
	int e;
} errnos[] = {{"EMFILE", EMFILE}, {"ENOENT", ENOENT}, {"ENFILE", ENFILE}, {"ENOSPC", ENOSPC},
	      {"ENOMEM", ENOMEM}, {"EAGAIN", EAGAIN}, {"EINVAL", EINVAL}, {"EPERM", EPERM}};

static const char *errno_name(int e)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].e == e)
			return errnos[i].n;
	return "E?";
}

static void bad_rule(const char *r, const char *why)
{
	fprintf(stderr, "sysfail: bad rule '%s': %s\n", r, why);
	abort();
}

static void parse_rule(char *r)
{
	struct rule *x;
	char *f[8], *save = NULL, *tok, copy[512];
	int n = 0, i;
	size_t k;

	snprintf(copy, sizeof(copy), "%s", r);
	for (tok = strtok_r(r, ":", &save); tok && n < 8; tok = strtok_r(NULL, ":", &save))
		f[n++] = tok;
	if (n < 2)
		bad_rule(copy, "OP:ERRNO expected");
	if (nrules == MAX_RULES)
		bad_rule(copy, "too many rules");
	x = &rules[nrules];
	memset(x, 0, sizeof(*x));
	x->count = -1;
	x->op = OP_COUNT;
	for (i = 0; i < OP_COUNT; i++)
		if (strcmp(f[0], op_names[i]) == 0)
			x->op = (enum op)i;
	if (x->op == OP_COUNT)
		bad_rule(copy, "unknown OP");
	for (k = 0; k < sizeof(errnos) / sizeof(errnos[0]); k++)
		if (strcmp(f[1], errnos[k].n) == 0)
			x->err = errnos[k].e;
	if (!x->err)
		bad_rule(copy, "unknown ERRNO");
	for (i = 2; i < n; i++) {
		char *end;

		if (strncmp(f[i], "count=", 6) == 0) {
			x->count = strtol(f[i] + 6, &end, 10);
			if (*end || x->count < 1)
				bad_rule(copy, "count=N wants N >= 1");
		} else if (strncmp(f[i], "skip=", 5) == 0) {
			x->skip = strtol(f[i] + 5, &end, 10);
			if (*end || x->skip < 0)
				bad_rule(copy, "skip=N wants N >= 0");
		} else if (strncmp(f[i], "while=", 6) == 0 && f[i][6] &&
			   strlen(f[i] + 6) < PATTERN_MAX) {
			snprintf(x->while_path, sizeof(x->while_path), "%s", f[i] + 6);
		} else if (strncmp(f[i], "prog=", 5) == 0 && f[i][5] &&
			   strlen(f[i] + 5) < PATTERN_MAX) {
			snprintf(x->prog, sizeof(x->prog), "%s", f[i] + 5);
		} else {
			bad_rule(copy, "unknown option");
		}
	}
	nrules++;
}

__attribute__((constructor)) static void sysfail_init(void)
{
	const char *env = getenv("KEEP_SYSFAIL");
	char *buf, *save = NULL, *r;

	if (!env || !*env)
		return;
	buf = strdup(env);
	if (!buf)
		abort();
	for (r = strtok_r(buf, ";", &save); r; r = strtok_r(NULL, ";", &save))
		if (*r)
			parse_rule(r);
	free(buf);
}

static void log_failure(enum op op, int err)
{
	const char *path = getenv("KEEP_SYSFAIL_LOG");
	char line[512];
	int f, n;

	if (!path || !*path)
		return;
	n = snprintf(line, sizeof(line), "sysfail: %s %s %s\n", program_invocation_short_name,
		     op_names[op], errno_name(err));
	f = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (f < 0)
		return;
	if (write(f, line, (size_t)n) < 0) {
		/* nothing to do: the log is best effort */
	}
	close(f);
}

/* Should this call of op fail? 0, or the errno to fail with. */
static int should_fail(enum op op)
{
	struct stat st;
	int err = 0;

	if (!nrules)
		return 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nrules && !err; i++) {
		struct rule *x = &rules[i];

		if (x->op != op || x->count == 0)
			continue;
		if (x->prog[0] && strcmp(x->prog, program_invocation_short_name) != 0)
			continue;
		if (x->while_path[0] && stat(x->while_path, &st) != 0)
			continue;
		if (x->skip > 0) {
			x->skip--;
			continue;
		}
		if (x->count > 0)
			x->count--;
		err = x->err;
	}
	pthread_mutex_unlock(&mu);
	if (err)
		log_failure(op, err);
	return err;
}

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

int inotify_init1(int flags)
{
	int e = should_fail(OP_INOTIFY_INIT1);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("inotify_init1", int (*)(int))(flags);
}

int inotify_add_watch(int fd, const char *path, uint32_t mask)
{
	int e = should_fail(OP_INOTIFY_ADD_WATCH);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("inotify_add_watch", int (*)(int, const char *, uint32_t))(fd, path, mask);
}

int timerfd_create(int clockid, int flags)
{
	int e = should_fail(OP_TIMERFD_CREATE);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("timerfd_create", int (*)(int, int))(clockid, flags);
}

int timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	int e = should_fail(OP_TIMERFD_SETTIME);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("timerfd_settime", int (*)(int, int, const struct itimerspec *,
					       struct itimerspec *))(fd, flags, nv, ov);
}

int signalfd(int fd, const sigset_t *mask, int flags)
{
	int e = should_fail(OP_SIGNALFD);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("signalfd", int (*)(int, const sigset_t *, int))(fd, mask, flags);
}

pid_t fork(void)
{
	int e = should_fail(OP_FORK);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("fork", pid_t(*)(void))();
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int e = should_fail(OP_POLL);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("poll", int (*)(struct pollfd *, nfds_t, int))(fds, n, timeout);
}

int kill(pid_t pid, int sig)
{
	int e = pid != getpid() && pid > 0 ? should_fail(OP_KILL) : 0;

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT("kill", int (*)(pid_t, int))(pid, sig);
}

void *dlopen(const char *file, int mode)
{
	int e = should_fail(OP_DLOPEN);

	if (e) {
		errno = e;
		return NULL;
	}
	return NEXT("dlopen", void *(*)(const char *, int))(file, mode);
}
