/* keep — run locks and the processes of a job (runlock.h; issue 24). */
#include "runlock.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/parse.h"
#include "../core/timing.h"
#include "../platform/clock.h"
#include "holds.h"
#include "statedir.h"

#define RUN_FILE_MAX 4096 /* bytes: a run lock file (a key is at most 386) */
#define RUN_REC 1024	  /* bytes: every record written is this long */
#define RUN_READ_TRIES 50 /* reads of a record being rewritten, 1 ms apart */

/* ---- the file ------------------------------------------------------------------ */

/* node_dir/runs: every root's run locks (the default root's files, and
 * apps/ROOT/ for each application root) */
static int runs_base(char *out, size_t n, const char *node_dir)
{
	int r = snprintf(out, n, "%s/runs", node_dir);

	return r < 0 || (size_t)r >= n ? KEEP_ERR_TOOBIG : 0;
}

/* the run locks of the root this process serves (keep_holds_set_app) */
static int runs_dir(char *out, size_t n, const char *node_dir)
{
	int r = snprintf(out, n, "%s/runs%s", node_dir, keep_holds_app_sub());

	return r < 0 || (size_t)r >= n ? KEEP_ERR_TOOBIG : 0;
}

static int run_path(char *out, size_t n, const char *node_dir, const char *key)
{
	char h[65];
	int r;

	keep_holds_key_hash(key, h);
	r = snprintf(out, n, "%s/runs%s/%s", node_dir, keep_holds_app_sub(), h);
	return r < 0 || (size_t)r >= n ? KEEP_ERR_TOOBIG : 0;
}

/* The file's content for this process (owner-run): its lines, an `end`
 * line, then newlines up to RUN_REC bytes. Every record has one length, so
 * a rewrite is one pwrite over the last record, never a truncation: a
 * reader beside it never sees an empty file or a record without its owner
 * (a drain that read the owner-run's file as empty while it was rewritten
 * took the owner-run for a process of the job and SIGKILLed it). */
static int run_content(char *out, size_t n, const char *key, int64_t kill_after_ms,
		       int64_t generation)
{
	int r = snprintf(out, n,
			 "kill_after_ms %lld\ngeneration %lld\nowner_pid %lld\n"
			 "owner_start %lld\nkey %s\nend\n",
			 (long long)kill_after_ms, (long long)generation, (long long)getpid(),
			 (long long)keep_proc_start(getpid()), key);

	if (r < 0 || r >= RUN_REC || (size_t)RUN_REC > n)
		return KEEP_ERR_TOOBIG;
	memset(out + r, '\n', (size_t)(RUN_REC - r));
	return RUN_REC;
}

static int rewrite(int fd, const char *buf, int len)
{
	if (pwrite(fd, buf, (size_t)len, 0) != len || ftruncate(fd, len) != 0)
		return KEEP_ERR_IO;
	return 0;
}

/* Is buf (NUL-terminated) a whole record: has it its `end` line? */
static bool whole(const char *buf)
{
	return strncmp(buf, "end\n", 4) == 0 || strstr(buf, "\nend\n") != NULL;
}

/* Read the record of f into buf (cap bytes, NUL-terminated). A file no
 * owner-run holds (a shared lock is granted at once: its writer, which
 * writes under its exclusive lock, is gone) is read once, as it stays.
 * Else two reads that agree and hold a whole record, up to RUN_READ_TRIES
 * times 1 ms apart (a record is being created or rewritten: owner-run is
 * between two system calls). Returns the bytes read (the last read's, a
 * record maybe not whole, when the tries ran out; 0 for an empty file;
 * -1: error). Any shared lock taken is dropped before returning. */
static ssize_t read_record(int f, char *buf, size_t cap)
{
	char again[RUN_FILE_MAX];
	ssize_t n = -1, m;
	bool still = flock(f, LOCK_SH | LOCK_NB) == 0;

	if (cap > sizeof(again))
		cap = sizeof(again);
	for (int i = 0; i < RUN_READ_TRIES; i++) {
		if (i > 0)
			keep_sleep_until_boot(keep_boot_ms() + 1);
		n = pread(f, buf, cap - 1, 0);
		if (n < 0)
			break;
		buf[n] = '\0';
		if (still)
			break;
		if (!whole(buf))
			continue;
		m = pread(f, again, cap - 1, 0);
		if (m == n && memcmp(buf, again, (size_t)n) == 0)
			break;
	}
	if (still)
		flock(f, LOCK_UN);
	return n;
}

/* The owner-run a run lock file names (0: none named). */
struct run_owner {
	int64_t pid, start;
};

/* Parse a run lock file's lines into v (generation -1 when absent: an
 * older owner-run's file) and *o (may be NULL). Unknown lines are skipped
 * (a newer writer). */
static void parse_run(const char *buf, struct keep_run_view *v, struct run_owner *o)
{
	const char *p = buf;
	char line[128];
	int64_t x;

	v->generation = -1;
	v->kill_after_ms = -1;
	if (o)
		o->pid = o->start = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l < sizeof(line)) {
			memcpy(line, p, l);
			line[l] = '\0';
			if (strncmp(line, "kill_after_ms ", 14) == 0 &&
			    keep_dec_parse_str(line + 14, 86400000, &x))
				v->kill_after_ms = x;
			else if (strncmp(line, "generation ", 11) == 0 &&
				 keep_dec_parse_str(line + 11, INT64_MAX, &x))
				v->generation = x;
			else if (o && strncmp(line, "owner_pid ", 10) == 0 &&
				 keep_dec_parse_str(line + 10, INT_MAX, &x))
				o->pid = x;
			else if (o && strncmp(line, "owner_start ", 12) == 0 &&
				 keep_dec_parse_str(line + 12, INT64_MAX, &x))
				o->start = x;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}

int keep_run_lock_take(const char *node_dir, const char *key, int64_t kill_after_ms, int *fd)
{
	char p[PATH_MAX], buf[RUN_FILE_MAX];
	int f, r, n;
	int64_t until;

	*fd = -1;
	if (runs_dir(p, sizeof(p), node_dir) != 0)
		return KEEP_ERR_TOOBIG;
	if (keep_mkdirs(p) != 0)
		return KEEP_ERR_IO;
	if (run_path(p, sizeof(p), node_dir, key) != 0)
		return KEEP_ERR_TOOBIG;
	n = run_content(buf, sizeof(buf), key, kill_after_ms, 0);
	if (n < 0)
		return n;
	f = open(p, O_RDWR | O_CREAT, 0600); /* no O_CLOEXEC: CMD inherits it */
	if (f < 0)
		return KEEP_ERR_IO;
	until = keep_add_sat_ms(keep_boot_ms(), KEEP_RUN_TAKE_MS);
	while (flock(f, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK && keep_boot_ms() < until) {
			/* a probe holds a shared lock for microseconds; a run holds
			 * it for as long as it runs */
			keep_sleep_until_boot(keep_boot_ms() + 10);
			continue;
		}
		r = errno == EWOULDBLOCK ? 1 : KEEP_ERR_IO;
		close(f);
		return r;
	}
	if (rewrite(f, buf, n) != 0) {
		r = errno;
		close(f);
		errno = r;
		return KEEP_ERR_IO;
	}
	*fd = f;
	return 0;
}

int keep_run_lock_started(int fd, const char *key, int64_t kill_after_ms, int64_t generation)
{
	char buf[RUN_FILE_MAX];
	int n = run_content(buf, sizeof(buf), key, kill_after_ms, generation);

	return n < 0 ? n : rewrite(fd, buf, n);
}

void keep_run_lock_drop(int fd)
{
	if (fd >= 0)
		close(fd); /* closing drops the flock (once no child holds it) */
}

/* Probe the file at path (0: probed; v filled). */
static void probe_path(const char *path, struct keep_run_view *v)
{
	char buf[RUN_FILE_MAX];
	ssize_t n;
	int f;

	memset(v, 0, sizeof(*v));
	v->generation = -1;
	v->kill_after_ms = -1;
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0) {
		if (errno != ENOENT) {
			v->held = true; /* cannot tell: the safe answer */
			v->err = errno;
		}
		return;
	}
	n = read_record(f, buf, sizeof(buf));
	buf[n > 0 ? n : 0] = '\0';
	parse_run(buf, v, NULL);
	if (!whole(buf))
		v->generation = -1; /* a job, to be safe */
	while (flock(f, LOCK_SH | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		v->held = true;
		if (errno != EWOULDBLOCK)
			v->err = errno;
		break;
	}
	close(f); /* drops our shared lock, if taken */
}

void keep_run_probe(const char *node_dir, const char *key, struct keep_run_view *v)
{
	char p[PATH_MAX];

	if (run_path(p, sizeof(p), node_dir, key) != 0) {
		memset(v, 0, sizeof(*v));
		v->held = true;
		v->err = ENAMETOOLONG;
		v->kill_after_ms = -1;
		return;
	}
	probe_path(p, v);
	if (v->held)
		v->nlocks = 1;
}

static bool hex64_name(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return s[64] == '\0';
}

/* Call fn(arg, dir) for base (a runs/ directory) and each application
 * root's directory under it (base/apps/ROOT). An apps/ that cannot be read
 * (not ENOENT) is passed as such: fn then sees its opendir fail. */
static void each_runs_dir(const char *base, void (*fn)(void *arg, const char *dir), void *arg)
{
	char a[PATH_MAX], p[PATH_MAX + 80];
	struct dirent *e;
	DIR *dir;

	fn(arg, base);
	if (snprintf(a, sizeof(a), "%s/apps", base) >= (int)sizeof(a))
		return;
	dir = opendir(a);
	if (!dir) {
		if (errno != ENOENT)
			fn(arg, a);
		return;
	}
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' ||
		    snprintf(p, sizeof(p), "%s/%s", a, e->d_name) >= (int)sizeof(p))
			continue;
		fn(arg, p);
	}
	closedir(dir);
}

/* keep_runs_probe's work on one directory, added into v (the arg) */
static void probe_dir(void *arg, const char *d)
{
	struct keep_run_view *v = arg, one;
	char p[PATH_MAX + 80];
	struct dirent *e;
	DIR *dir;

	dir = opendir(d);
	if (!dir) {
		if (errno != ENOENT) {
			v->held = true;
			v->err = errno;
		}
		return;
	}
	while ((e = readdir(dir))) {
		if (!hex64_name(e->d_name))
			continue;
		if (snprintf(p, sizeof(p), "%s/%.64s", d, e->d_name) >= (int)sizeof(p))
			continue;
		probe_path(p, &one);
		if (!keep_run_is_job(&one))
			continue; /* free, or an owner-run that started no CMD */
		v->held = true;
		v->nlocks++;
		if (one.err)
			v->err = one.err;
		if (one.kill_after_ms > v->kill_after_ms)
			v->kill_after_ms = one.kill_after_ms;
		if (v->generation == 0 || one.generation > v->generation)
			v->generation = one.generation;
	}
	closedir(dir);
}

void keep_runs_probe(const char *node_dir, struct keep_run_view *v)
{
	char d[PATH_MAX];

	memset(v, 0, sizeof(*v));
	v->kill_after_ms = -1;
	if (runs_base(d, sizeof(d), node_dir) != 0) {
		v->held = true;
		v->err = ENAMETOOLONG;
		return;
	}
	each_runs_dir(d, probe_dir, v);
}

int keep_runs_list(const char *node_dir, struct keep_run_entry **out, size_t *n)
{
	char d[PATH_MAX], p[PATH_MAX + 80], buf[RUN_FILE_MAX];
	struct keep_run_entry *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	struct keep_run_view rv;
	struct run_owner o;
	struct dirent *e;
	DIR *dir;

	*out = NULL;
	*n = 0;
	if (runs_dir(d, sizeof(d), node_dir) != 0)
		return KEEP_ERR_TOOBIG;
	dir = opendir(d);
	if (!dir)
		return errno == ENOENT ? 0 : KEEP_ERR_IO;
	while ((e = readdir(dir))) {
		const char *k;
		ssize_t len;
		int f;

		if (!hex64_name(e->d_name) ||
		    snprintf(p, sizeof(p), "%s/%.64s", d, e->d_name) >= (int)sizeof(p))
			continue;
		f = open(p, O_RDONLY | O_CLOEXEC);
		if (f < 0)
			continue;
		len = read_record(f, buf, sizeof(buf));
		close(f);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		memset(&rv, 0, sizeof(rv));
		parse_run(buf, &rv, &o);
		k = strstr(buf, "\nkey ");
		if (!k)
			continue;
		k += 5;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				errno = ENOMEM;
				return KEEP_ERR_IO;
			}
			v = nv;
		}
		memset(&v[cnt], 0, sizeof(v[cnt]));
		snprintf(v[cnt].key, sizeof(v[cnt].key), "%.*s", (int)strcspn(k, "\n"), k);
		v[cnt].generation = rv.generation;
		v[cnt].owner_alive = o.pid > 0 && keep_proc_start((pid_t)o.pid) == o.start;
		cnt++;
	}
	closedir(dir);
	*out = v;
	*n = cnt;
	return 0;
}

/* ---- processes ------------------------------------------------------------------- */

struct pinfo {
	pid_t pid, ppid, pgrp;
	char state;
	int64_t start;
	bool pick;
};

/* Read /proc/PID/stat: state, ppid, pgrp, starttime. false when gone. */
static bool read_stat(pid_t pid, struct pinfo *pi)
{
	char path[64], buf[1024], *p;
	long long ppid, pgrp, start;
	int f, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p || p[1] != ' ' || !p[2])
		return false;
	pi->pid = pid;
	pi->state = p[2];
	if (sscanf(p + 3, " %lld %lld", &ppid, &pgrp) != 2)
		return false;
	pi->ppid = (pid_t)ppid;
	pi->pgrp = (pid_t)pgrp;
	/* field 22 (starttime): p + 3 is the space before field 4 (ppid) */
	p += 3;
	for (i = 0; i < 18 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lld", &start) != 1)
		return false;
	pi->start = start;
	return true;
}

int64_t keep_proc_start(pid_t pid)
{
	struct pinfo pi;

	if (!read_stat(pid, &pi) || pi.state == 'Z' || pi.state == 'X')
		return -1;
	return pi.start;
}

/* Does /proc/PID/fdinfo/FD show an exclusive flock (the run lock held
 * through this descriptor's open file)? */
static bool fd_holds_flock(pid_t pid, const char *fd)
{
	char path[96], buf[2048];
	ssize_t n;
	int f;
	char *l;

	if (snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.20s", (int)pid, fd) >=
	    (int)sizeof(path))
		return false;
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (l = buf; (l = strstr(l, "lock:")); l += 5) {
		char *nl = strchr(l, '\n');

		if (nl)
			*nl = '\0';
		if (strstr(l, "FLOCK") && strstr(l, "WRITE"))
			return true;
		if (!nl)
			break;
		*nl = '\n';
	}
	return false;
}

/* Read the run file at path: its generation and owner. false when it
 * cannot be read (*v then says generation -1: a job, to be safe). */
static bool read_run(const char *path, struct keep_run_view *v, struct run_owner *o)
{
	char buf[RUN_FILE_MAX];
	ssize_t n;
	int f = open(path, O_RDONLY | O_CLOEXEC);

	memset(v, 0, sizeof(*v));
	v->generation = -1;
	o->pid = o->start = 0;
	if (f < 0)
		return false;
	n = read_record(f, buf, sizeof(buf));
	close(f);
	buf[n > 0 ? n : 0] = '\0';
	parse_run(buf, v, o);
	if (!whole(buf))
		v->generation = -1; /* a job, to be safe */
	return true;
}

/* Is pi the live owner-run o names (its pid and start time)? It is the
 * supervisor of the job, not a process of it: it stops its own job the
 * moment the grant ends and drops the lock itself once the job is gone;
 * signalling it would only cut its own clean end short. */
static bool is_owner(const struct pinfo *pi, const struct run_owner *o)
{
	return o->pid > 0 && pi->pid == (pid_t)o->pid && pi->start == o->start;
}

/* Does process pi hold the run lock wanted: the file want (prefix false)
 * or any job's file under the directory want + "/" (prefix true), other
 * than as the owner-run that file names? */
/* A run lock's path under runs/: HEX64, or apps/ROOT/HEX64 (an
 * application root's). */
static bool run_file_name(const char *rel)
{
	const char *slash;

	if (strncmp(rel, "apps/", 5) != 0)
		return hex64_name(rel);
	rel += 5;
	slash = strchr(rel, '/');
	return slash && slash > rel && rel[0] != '.' && hex64_name(slash + 1);
}

static bool holds_run_lock(const struct pinfo *pi, const char *want, bool prefix)
{
	char path[64], link[PATH_MAX];
	struct dirent *e;
	size_t wl = strlen(want);
	bool found = false;
	DIR *d;

	pid_t pid = pi->pid;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return false; /* gone, or not ours to see */
	while (!found && (e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (prefix) {
			if (strncmp(link, want, wl) != 0 || link[wl] != '/' ||
			    !run_file_name(link + wl + 1))
				continue;
		} else if (strcmp(link, want) != 0) {
			continue;
		}
		if (!fd_holds_flock(pid, e->d_name))
			continue;
		{
			struct keep_run_view v;
			struct run_owner o;

			read_run(link, &v, &o);
			if (prefix && v.generation == 0)
				continue; /* an owner-run that started no CMD */
			if (is_owner(pi, &o))
				continue;
		}
		found = true;
	}
	closedir(d);
	return found;
}

/* Every process of /proc (but the caller) into *out (malloc'd, *n). */
static int scan_procs(struct pinfo **out, size_t *n)
{
	struct pinfo *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	pid_t self = getpid();
	struct dirent *e;
	DIR *d = opendir("/proc");

	*out = NULL;
	*n = 0;
	if (!d)
		return KEEP_ERR_IO;
	while ((e = readdir(d))) {
		char *end;
		long x = strtol(e->d_name, &end, 10);
		struct pinfo pi;

		if (!isdigit((unsigned char)e->d_name[0]) || *end || x <= 0 || x > INT_MAX ||
		    (pid_t)x == self)
			continue;
		memset(&pi, 0, sizeof(pi));
		if (!read_stat((pid_t)x, &pi))
			continue;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				errno = ENOMEM;
				return KEEP_ERR_IO;
			}
			v = nv;
		}
		v[cnt++] = pi;
	}
	closedir(d);
	*out = v;
	*n = cnt;
	return 0;
}

static void send_all(struct pinfo *v, size_t n, int sig, struct keep_run_sig *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (!v[i].pick)
			continue;
		if (kill(v[i].pid, sig) != 0) {
			if (errno == ESRCH)
				continue;
			out->failed++;
		}
		out->npids++;
		if (!out->pid || v[i].pid < out->pid)
			out->pid = v[i].pid;
	}
}

/* The earliest start time of an owner-run of a job whose run file is want
 * (a file; or, dir true, every job's file in the directory want): no
 * process started before it can have inherited the descriptor, so the scan
 * skips them (the store's servers, the system's daemons: their descriptor
 * tables are the slow part of a scan). 0: unknown (no filter). */
/* earliest_owner's scan of one directory: arg is its int64_t m (-1 none
 * yet, 0 unknown: every process is a candidate) */
static void earliest_dir(void *arg, const char *want)
{
	int64_t *m = arg;
	char p[PATH_MAX + 80];
	struct keep_run_view rv;
	struct run_owner o;
	struct dirent *e;
	DIR *d;

	d = opendir(want);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!hex64_name(e->d_name) ||
		    snprintf(p, sizeof(p), "%s/%.64s", want, e->d_name) >= (int)sizeof(p))
			continue;
		if (!read_run(p, &rv, &o)) {
			*m = 0;
			continue;
		}
		if (rv.generation == 0)
			continue; /* no job */
		if (o.start <= 0)
			*m = 0;
		else if (*m < 0 || (*m > 0 && o.start < *m))
			*m = o.start;
	}
	closedir(d);
}

static int64_t earliest_owner(const char *want, bool dir, struct run_owner *owner)
{
	struct keep_run_view rv;
	int64_t m = -1;

	if (!dir) {
		read_run(want, &rv, owner);
		return owner->start > 0 ? owner->start : 0;
	}
	each_runs_dir(want, earliest_dir, &m); /* every root's (runs/apps/ROOT) */
	return m > 0 ? m : 0;
}

int keep_run_signal(const char *node_dir, const char *key, int sig, struct keep_run_sig *out)
{
	char p[PATH_MAX], want[PATH_MAX];
	struct run_owner owner = {0, 0};
	struct pinfo *v;
	int64_t since;
	size_t n, i;
	int r;

	memset(out, 0, sizeof(*out));
	r = key ? run_path(p, sizeof(p), node_dir, key) : runs_base(p, sizeof(p), node_dir);
	if (r != 0)
		return r;
	if (!realpath(p, want))
		return errno == ENOENT ? 0 : KEEP_ERR_IO; /* no file: nobody holds it */
	since = earliest_owner(want, key == NULL, &owner);
	if (scan_procs(&v, &n) != 0)
		return KEEP_ERR_IO;
	for (i = 0; i < n; i++)
		v[i].pick = v[i].state != 'Z' && v[i].state != 'X' && v[i].start >= since &&
			    holds_run_lock(&v[i], want, key == NULL);
	send_all(v, n, sig, out);
	if (!out->npids && key && owner.pid > 0 && keep_proc_start((pid_t)owner.pid) == owner.start)
		out->pid = owner.pid; /* the one holder left: the owner-run, stopping its job */
	free(v);
	return 0;
}

/* Pick owner-run's job in v: every descendant of the caller that is not in
 * group pgid (the group is signalled as one). Returns how many. */
static size_t pick_job(struct pinfo *v, size_t n, pid_t pgid)
{
	pid_t self = getpid();
	size_t i, k, picked = 0;
	bool more = true, *desc = calloc(n ? n : 1, sizeof(bool));

	if (!desc)
		return 0;
	for (i = 0; i < n; i++)
		desc[i] = v[i].ppid == self;
	/* to a fixpoint: the children of a descendant (a zombie's children
	 * are reparented already: to owner-run, its subreaper) */
	while (more) {
		more = false;
		for (i = 0; i < n; i++) {
			if (desc[i])
				continue;
			for (k = 0; k < n; k++)
				if (desc[k] && v[k].pid == v[i].ppid) {
					desc[i] = more = true;
					break;
				}
		}
	}
	for (i = 0; i < n; i++) {
		v[i].pick = desc[i] && v[i].state != 'Z' && v[i].state != 'X' &&
			    !(pgid > 0 && v[i].pgrp == pgid);
		picked += v[i].pick;
	}
	free(desc);
	return picked;
}

int keep_job_signal(pid_t pgid, int sig, struct keep_run_sig *out)
{
	struct keep_run_sig rest;
	struct pinfo *v;
	size_t n;

	memset(out, 0, sizeof(*out));
	/* the group first, at once (the scan below takes time) */
	if (pgid > 0 && kill(-pgid, sig) == 0) {
		out->npids = 1;
		out->pid = pgid;
	}
	if (scan_procs(&v, &n) != 0)
		return KEEP_ERR_IO;
	pick_job(v, n, pgid);
	send_all(v, n, sig, &rest);
	free(v);
	out->npids += rest.npids;
	out->failed = rest.failed;
	if (!out->pid)
		out->pid = rest.pid;
	return 0;
}

bool keep_job_alive(pid_t pgid)
{
	struct pinfo *v;
	size_t n;
	bool alive;

	if (pgid > 0 && kill(-pgid, 0) == 0)
		return true;
	if (scan_procs(&v, &n) != 0)
		return false;
	alive = pick_job(v, n, pgid) > 0;
	free(v);
	return alive;
}
