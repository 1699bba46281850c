/* statefail — an LD_PRELOAD injector of local file-system failures, for the
 * state-directory tests (issue 18; docs/testing.md "State-directory
 * failures").
 *
 * Built as build/FLAVOUR/tools/statefail.so (no sanitizers). Preloaded into
 * a command, it fails chosen calls on chosen paths, as a disk that fills
 * up, a file system remounted read-only after an error, or a failing device
 * would:
 *
 *   KEEP_STATEFAIL="RULE[;RULE...]"
 *   RULE = OP:PATH:ERRNO[:OPTION...]
 *     OP      open | write | fsync | rename | unlink | unlinkat | any
 *             (fsync covers fdatasync; unlink and unlinkat are the same
 *             removal, either rule name catches both; open covers openat)
 *     PATH    a substring of the path; a trailing '$' anchors it at the end
 *             ("n1/holds$" is the holds directory itself, as fsynced after
 *             a rename or an unlink). write and fsync match the path the
 *             descriptor was opened with; rename matches either name.
 *     ERRNO   ENOSPC | EIO | EROFS | EACCES | EPERM | EDQUOT
 *     count=N fail the first N matching calls only (default: every one)
 *     skip=N  let the first N matching calls through first
 *     after   do the call for real, then report the failure (a rename or an
 *             unlink that happened although the caller was told it failed)
 *   KEEP_STATEFAIL_LOG=FILE  append "statefail: OP PATH ERRNO[ after]" per
 *             injected failure (opened O_APPEND for each line: several
 *             processes may share it)
 *
 * Counts are per process. A malformed rule makes the library write
 * "statefail: bad rule ..." to stderr and abort the process at load, so a
 * typo never passes for "no failure injected". */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_RULES 16
#define MAX_FDS 4096
#define PATTERN_MAX 256

enum op { OP_OPEN = 0, OP_WRITE, OP_FSYNC, OP_RENAME, OP_UNLINK, OP_ANY };

struct rule {
	enum op op;
	char pat[PATTERN_MAX];
	int anchored;
	int err;
	long count; /* failures left; -1: unlimited */
	long skip;  /* matching calls let through first */
	int after;
};

static struct rule rules[MAX_RULES];
static int nrules;
static char *fd_path[MAX_FDS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int in_hook; /* our own calls (the log) are never injected */

static const char *op_name(enum op o)
{
	static const char *n[] = {"open", "write", "fsync", "rename", "unlink", "any"};
	return n[o];
}

static int parse_errno(const char *s)
{
	static const struct {
		const char *n;
		int e;
	} t[] = {{"ENOSPC", ENOSPC}, {"EIO", EIO},     {"EROFS", EROFS},
		 {"EACCES", EACCES}, {"EPERM", EPERM}, {"EDQUOT", EDQUOT}};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i].n) == 0)
			return t[i].e;
	return 0;
}

static const char *errno_name(int e)
{
	switch (e) {
	case ENOSPC:
		return "ENOSPC";
	case EIO:
		return "EIO";
	case EROFS:
		return "EROFS";
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case EDQUOT:
		return "EDQUOT";
	}
	return "E?";
}

static void bad_rule(const char *r, const char *why)
{
	fprintf(stderr, "statefail: bad rule '%s': %s\n", r, why);
	abort();
}

static void parse_rule(char *r)
{
	struct rule *x;
	char *f[8], *save = NULL, *tok;
	int n = 0, i;
	size_t l;
	char copy[512];

	snprintf(copy, sizeof(copy), "%s", r);
	for (tok = strtok_r(r, ":", &save); tok && n < 8; tok = strtok_r(NULL, ":", &save))
		f[n++] = tok;
	if (n < 3)
		bad_rule(copy, "OP:PATH:ERRNO expected");
	if (nrules == MAX_RULES)
		bad_rule(copy, "too many rules");
	x = &rules[nrules];
	memset(x, 0, sizeof(*x));
	x->count = -1;
	if (strcmp(f[0], "open") == 0)
		x->op = OP_OPEN;
	else if (strcmp(f[0], "write") == 0)
		x->op = OP_WRITE;
	else if (strcmp(f[0], "fsync") == 0)
		x->op = OP_FSYNC;
	else if (strcmp(f[0], "rename") == 0)
		x->op = OP_RENAME;
	else if (strcmp(f[0], "unlink") == 0 || strcmp(f[0], "unlinkat") == 0)
		x->op = OP_UNLINK;
	else if (strcmp(f[0], "any") == 0)
		x->op = OP_ANY;
	else
		bad_rule(copy, "unknown OP");
	l = strlen(f[1]);
	if (l == 0 || l >= PATTERN_MAX)
		bad_rule(copy, "PATH empty or too long");
	memcpy(x->pat, f[1], l + 1);
	if (x->pat[l - 1] == '$') {
		x->pat[l - 1] = '\0';
		x->anchored = 1;
	}
	x->err = parse_errno(f[2]);
	if (!x->err)
		bad_rule(copy, "unknown ERRNO");
	for (i = 3; i < n; i++) {
		char *end;
		if (strncmp(f[i], "count=", 6) == 0) {
			x->count = strtol(f[i] + 6, &end, 10);
			if (*end || x->count < 1)
				bad_rule(copy, "count=N wants N >= 1");
		} else if (strncmp(f[i], "skip=", 5) == 0) {
			x->skip = strtol(f[i] + 5, &end, 10);
			if (*end || x->skip < 0)
				bad_rule(copy, "skip=N wants N >= 0");
		} else if (strcmp(f[i], "after") == 0) {
			x->after = 1;
		} else {
			bad_rule(copy, "unknown option");
		}
	}
	nrules++;
}

__attribute__((constructor)) static void statefail_init(void)
{
	const char *env = getenv("KEEP_STATEFAIL");
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

static int path_match(const struct rule *x, const char *path)
{
	size_t pl, l;

	if (!path)
		return 0;
	if (!x->anchored)
		return strstr(path, x->pat) != NULL;
	pl = strlen(path);
	l = strlen(x->pat);
	return pl >= l && strcmp(path + pl - l, x->pat) == 0;
}

static void log_hit(enum op o, const char *path, int err, int after)
{
	const char *lf = getenv("KEEP_STATEFAIL_LOG");
	char line[1024];
	int fd, n;

	fprintf(stderr, "statefail: %s %s %s%s\n", op_name(o), path, errno_name(err),
		after ? " after" : "");
	if (!lf || !*lf)
		return;
	n = snprintf(line, sizeof(line), "statefail: %s %s %s%s\n", op_name(o), path,
		     errno_name(err), after ? " after" : "");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	fd = open(lf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, line, (size_t)n);
		(void)w;
		close(fd);
	}
}

/* Should this call fail? 0: no; else the errno, with *after set. p2: the
 * second name of a rename (or NULL). */
static int decide(enum op o, const char *p1, const char *p2, int *after)
{
	int i, err = 0;
	const char *hit = p1;

	*after = 0;
	if (in_hook || !nrules)
		return 0;
	pthread_mutex_lock(&mu);
	for (i = 0; i < nrules; i++) {
		struct rule *x = &rules[i];
		if (x->op != o && x->op != OP_ANY)
			continue;
		if (path_match(x, p1))
			hit = p1;
		else if (path_match(x, p2))
			hit = p2;
		else
			continue;
		if (x->count == 0)
			continue;
		if (x->skip > 0) {
			x->skip--;
			continue;
		}
		if (x->count > 0)
			x->count--;
		err = x->err;
		*after = x->after;
		break;
	}
	pthread_mutex_unlock(&mu);
	if (err) {
		in_hook = 1;
		log_hit(o, hit ? hit : "?", err, *after);
		in_hook = 0;
	}
	return err;
}

static void remember_fd(int fd, const char *path)
{
	char *c;

	if (fd < 0 || fd >= MAX_FDS || !path)
		return;
	c = strdup(path);
	pthread_mutex_lock(&mu);
	free(fd_path[fd]);
	fd_path[fd] = c;
	pthread_mutex_unlock(&mu);
}

/* A copy of the path fd was opened with (caller frees), or NULL. */
static char *path_of_fd(int fd)
{
	char *c = NULL;

	if (fd < 0 || fd >= MAX_FDS)
		return NULL;
	pthread_mutex_lock(&mu);
	if (fd_path[fd])
		c = strdup(fd_path[fd]);
	pthread_mutex_unlock(&mu);
	return c;
}

#define REAL(name, ret, ...)                                                                       \
	static ret (*real_##name)(__VA_ARGS__);                                                    \
	if (!real_##name)                                                                          \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);

static int open_common(int dirfd, const char *path, int flags, mode_t mode, int at)
{
	int after, err = decide(OP_OPEN, path, NULL, &after), fd;
	REAL(open, int, const char *, int, ...)
	REAL(openat, int, int, const char *, int, ...)

	if (err && !after) {
		errno = err;
		return -1;
	}
	fd = at ? real_openat(dirfd, path, flags, mode) : real_open(path, flags, mode);
	if (fd >= 0 && err) {
		int saved = errno;
		close(fd);
		errno = saved;
		errno = err;
		return -1;
	}
	if (fd >= 0)
		remember_fd(fd, path);
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open_common(AT_FDCWD, path, flags, mode, 0);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open_common(AT_FDCWD, path, flags, mode, 0);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open_common(dirfd, path, flags, mode, 1);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open_common(dirfd, path, flags, mode, 1);
}

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	return open_common(AT_FDCWD, path, flags, 0, 0);
}

int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
	return open_common(AT_FDCWD, path, flags, 0, 0);
}

int __openat_2(int dirfd, const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags)
{
	return open_common(dirfd, path, flags, 0, 1);
}

int close(int fd)
{
	REAL(close, int, int)

	if (fd >= 0 && fd < MAX_FDS) {
		pthread_mutex_lock(&mu);
		free(fd_path[fd]);
		fd_path[fd] = NULL;
		pthread_mutex_unlock(&mu);
	}
	return real_close(fd);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	char *p = nrules && !in_hook ? path_of_fd(fd) : NULL;
	int after, err = p ? decide(OP_WRITE, p, NULL, &after) : 0;
	ssize_t r;
	REAL(write, ssize_t, int, const void *, size_t)

	free(p);
	if (err && !after) {
		errno = err;
		return -1;
	}
	r = real_write(fd, buf, n);
	if (err && r >= 0) {
		errno = err;
		return -1;
	}
	return r;
}

static int fsync_common(int fd, int data)
{
	char *p = nrules && !in_hook ? path_of_fd(fd) : NULL;
	int after, err = p ? decide(OP_FSYNC, p, NULL, &after) : 0, r;
	REAL(fsync, int, int)
	REAL(fdatasync, int, int)

	free(p);
	if (err && !after) {
		errno = err;
		return -1;
	}
	r = data ? real_fdatasync(fd) : real_fsync(fd);
	if (err && r == 0) {
		errno = err;
		return -1;
	}
	return r;
}

int fsync(int fd)
{
	return fsync_common(fd, 0);
}

int fdatasync(int fd)
{
	return fsync_common(fd, 1);
}

int rename(const char *a, const char *b)
{
	int after, err = decide(OP_RENAME, a, b, &after), r;
	REAL(rename, int, const char *, const char *)

	if (err && !after) {
		errno = err;
		return -1;
	}
	r = real_rename(a, b);
	if (err && r == 0) {
		errno = err;
		return -1;
	}
	return r;
}

int renameat(int da, const char *a, int db, const char *b)
{
	int after, err = decide(OP_RENAME, a, b, &after), r;
	REAL(renameat, int, int, const char *, int, const char *)

	if (err && !after) {
		errno = err;
		return -1;
	}
	r = real_renameat(da, a, db, b);
	if (err && r == 0) {
		errno = err;
		return -1;
	}
	return r;
}

int unlink(const char *path)
{
	int after, err = decide(OP_UNLINK, path, NULL, &after), r;
	REAL(unlink, int, const char *)

	if (err && !after) {
		errno = err;
		return -1;
	}
	r = real_unlink(path);
	if (err && r == 0) {
		errno = err;
		return -1;
	}
	return r;
}

int unlinkat(int dirfd, const char *path, int flags)
{
	int after, err = decide(OP_UNLINK, path, NULL, &after), r;
	REAL(unlinkat, int, int, const char *, int)

	if (err && !after) {
		errno = err;
		return -1;
	}
	r = real_unlinkat(dirfd, path, flags);
	if (err && r == 0) {
		errno = err;
		return -1;
	}
	return r;
}
