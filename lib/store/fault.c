/* keep — the fault-injecting store wrapper (test builds; docs/store.md).
 *
 * store.c puts it around the real backend when built with
 * -DKEEP_FAULT_INJECTION and $KEEP_FAULT_FILE is set. The rules file is
 * re-read on EVERY call, so a test may change faults while a process runs;
 * a missing or empty file means no faults. One rule a line; blank lines and
 * lines starting with '#' are ignored, and a token starting with '#' ends a
 * line:
 *
 *   OP KEY-PREFIX ACTION [ARG] [count=N] [until_boot_ms=T]
 *
 *   OP          get | head | put | del | list | *
 *   KEY-PREFIX  a key prefix ("nodes/", or "nodes/" followed by "*": a trailing '*' is
 *               dropped), or '*' for every key; for list, matched against
 *               the listed prefix
 *   ACTION      fail          not sent; AMBIGUOUS "injected: fail"
 *               error STATUS  not sent; as the store would classify that
 *                             HTTP status (400..599): 5xx AMBIGUOUS,
 *                             409/412 CONFLICT, 404 NOT_FOUND, other 4xx
 *                             REFUSED
 *               lose          sent, then the reply dropped: AMBIGUOUS
 *                             "injected: reply lost" (the write may land)
 *               delay MS      sleep MS ms, then send; if MS exceeds the
 *                             store's timeout_ms, sleep timeout_ms and
 *                             return AMBIGUOUS "injected: timeout" unsent
 *               hang          sleep timeout_ms, AMBIGUOUS "injected:
 *                             timeout", not sent
 *               late MS       a put on the fs backend: if MS exceeds the
 *                             store's timeout_ms, a process of its own
 *                             sends it MS ms from now, whatever the caller
 *                             does (the write lands after the caller gave
 *                             up, as the S3 fault proxy's `late`), and the
 *                             caller gets AMBIGUOUS "injected: timeout
 *                             (late)" after timeout_ms; otherwise, and for
 *                             any other operation or backend, delay MS
 *               hold PATH     held until the file PATH (absolute) exists,
 *                             polled every 10 ms, then sent (the store's
 *                             timeout counts from the send): a request
 *                             paused between its decision and its send (a
 *                             GC pause, SIGSTOP); AMBIGUOUS "injected: hold
 *                             timed out", unsent, after FAULT_HOLD_MAX_MS
 *               unconditional put only: sent without its condition
 *                             (If-None-Match / If-Match dropped), as a
 *                             store that ignores conditional writes (a
 *                             versioned RGW bucket, docs/s3.md) does
 *   count=N     the rule applies to the next N matching calls only
 *   until_boot_ms=T  the rule matches only while the calling process's
 *               CLOCK_BOOTTIME (ms) is below T: a fault that ends at a
 *               time of the product's own clock
 *
 * The first matching rule wins. A malformed line makes every call REFUSED
 * "bad fault rule line N". count=N is kept in the rules file itself: each
 * use rewrites the file (atomically, by rename) with N-1, or without the
 * rule when it reaches 0, under an exclusive flock on PATH.lock held for
 * the whole read-decide-rewrite, so counts hold across processes.
 * With $KEEP_FAULT_LOG set, each injected fault is logged to stderr as
 * "keep-fault: OP KEY ACTION[ ARG]". */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/err.h"
#include "../platform/clock.h"

#define FAULT_FILE_MAX 65536	 /* bytes: largest rules file accepted */
#define FAULT_HOLD_MAX_MS 600000 /* ms: a hold waits for its file at most this long */
#define FAULT_PATH_MAX 512	 /* bytes, NUL included: a hold's file */

enum fault_action {
	FA_NONE = 0,
	FA_FAIL,
	FA_ERROR,
	FA_LOSE,
	FA_DELAY,
	FA_HANG,
	FA_UNCOND,
	FA_LATE,
	FA_HOLD,
};

struct fault {
	struct keep_store *inner; /* owned */
	char *path;		  /* rules file, owned */
	char *lock_path;	  /* PATH.lock, owned */
	char *tmp_path;		  /* PATH.tmp, owned (pid appended at use) */
};

/* What one call must do: decided by fault_decide. */
struct fault_hit {
	enum fault_action action;
	long long arg; /* STATUS or MS */
	char argtext[FAULT_PATH_MAX];
	const char *name; /* action name for the log */
};

static struct fault *fault_of(struct keep_store *s)
{
	return s->impl;
}

/* Parse a decimal integer token in [lo, hi]. true on success. */
static bool parse_num(const char *p, size_t n, long long lo, long long hi, long long *out)
{
	long long v = 0;
	size_t i;

	if (n == 0 || n > 12)
		return false;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool tok_is(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(p, w, n) == 0;
}

/* One parsed rule; pointers into the file buffer. */
struct rule {
	const char *op, *prefix;
	size_t oplen, prefixlen;
	struct fault_hit hit;
	long long count;  /* -1: unlimited */
	long long until;  /* until_boot_ms=T: matches only while the boot clock < T; 0: always */
	size_t count_at;  /* offset of N in the buffer */
	size_t count_len; /* digits of N */
	size_t line_at;	  /* offset of the line */
	size_t line_len;  /* including its '\n' if any */
};

/* Parse line [p, p+n) into r. 1 rule, 0 blank/comment, -1 malformed. */
static int parse_rule(const char *buf, size_t at, size_t n, struct rule *r)
{
	const char *t[7];
	size_t tl[7], nt = 0, i = 0, k;
	const char *p = buf + at;

	while (i < n) {
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
			i++;
		if (i >= n || p[i] == '#')
			break;
		if (nt == 7)
			return -1;
		t[nt] = p + i;
		while (i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			i++;
		tl[nt] = (size_t)(p + i - t[nt]);
		nt++;
	}
	if (nt == 0)
		return 0;
	if (nt < 3)
		return -1;
	memset(r, 0, sizeof(*r));
	r->count = -1;
	if (!(tok_is(t[0], tl[0], "get") || tok_is(t[0], tl[0], "head") ||
	      tok_is(t[0], tl[0], "put") || tok_is(t[0], tl[0], "del") ||
	      tok_is(t[0], tl[0], "list") || tok_is(t[0], tl[0], "*")))
		return -1;
	r->op = t[0];
	r->oplen = tl[0];
	r->prefix = t[1];
	r->prefixlen = tl[1];
	if (tok_is(t[1], tl[1], "*"))
		r->prefixlen = 0;
	else if (t[1][tl[1] - 1] == '*')
		r->prefixlen--;
	k = 3;
	if (tok_is(t[2], tl[2], "fail")) {
		r->hit.action = FA_FAIL;
		r->hit.name = "fail";
	} else if (tok_is(t[2], tl[2], "lose")) {
		r->hit.action = FA_LOSE;
		r->hit.name = "lose";
	} else if (tok_is(t[2], tl[2], "hang")) {
		r->hit.action = FA_HANG;
		r->hit.name = "hang";
	} else if (tok_is(t[2], tl[2], "unconditional")) {
		r->hit.action = FA_UNCOND;
		r->hit.name = "unconditional";
	} else if (tok_is(t[2], tl[2], "hold")) {
		if (nt < 4 || t[3][0] != '/' || tl[3] >= FAULT_PATH_MAX)
			return -1;
		r->hit.action = FA_HOLD;
		r->hit.name = "hold";
		memcpy(r->hit.argtext, t[3], tl[3]);
		r->hit.argtext[tl[3]] = '\0';
		k = 4;
	} else if (tok_is(t[2], tl[2], "error") || tok_is(t[2], tl[2], "delay") ||
		   tok_is(t[2], tl[2], "late")) {
		bool err = t[2][0] == 'e', late = t[2][0] == 'l';
		if (nt < 4 ||
		    !parse_num(t[3], tl[3], err ? 400 : 0, err ? 599 : 86400000, &r->hit.arg))
			return -1;
		r->hit.action = err ? FA_ERROR : late ? FA_LATE : FA_DELAY;
		r->hit.name = err ? "error" : late ? "late" : "delay";
		snprintf(r->hit.argtext, sizeof(r->hit.argtext), "%lld", r->hit.arg);
		k = 4;
	} else {
		return -1;
	}
	if (k < nt && tl[k] >= 7 && memcmp(t[k], "count=", 6) == 0) {
		if (!parse_num(t[k] + 6, tl[k] - 6, 1, 1000000000, &r->count))
			return -1;
		r->count_at = (size_t)(t[k] + 6 - buf);
		r->count_len = tl[k] - 6;
		k++;
	}
	if (k < nt) {
		if (tl[k] < 15 || memcmp(t[k], "until_boot_ms=", 14) != 0 ||
		    !parse_num(t[k] + 14, tl[k] - 14, 1, 999999999999LL, &r->until))
			return -1;
		k++;
	}
	if (k != nt)
		return -1;
	return 1;
}

static bool rule_matches(const struct rule *r, const char *op, const char *key)
{
	if (!tok_is(r->op, r->oplen, "*") && !tok_is(r->op, r->oplen, op))
		return false;
	/* a fault that ends at a time of the product's own clock, not when a
	 * test gets round to emptying the file */
	if (r->until && keep_boot_ms() >= r->until)
		return false;
	return strncmp(key, r->prefix, r->prefixlen) == 0 && strlen(key) >= r->prefixlen;
}

/* Read the whole rules file into a new buffer (*out, caller frees; NULL
 * and *n = 0 when missing). 0, -errno, or KEEP_ERR_TOOBIG. */
static int read_rules(const char *path, char **out, size_t *n)
{
	char *p;
	size_t len = 0;
	ssize_t r;
	int fd, rc;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	p = malloc(FAULT_FILE_MAX + 1);
	if (!p) {
		close(fd);
		return KEEP_ERR_NOMEM;
	}
	for (;;) {
		r = read(fd, p + len, FAULT_FILE_MAX + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > FAULT_FILE_MAX) {
			rc = KEEP_ERR_TOOBIG;
			goto fail;
		}
	}
	close(fd);
	*out = p;
	*n = len;
	return 0;
fail:
	free(p);
	close(fd);
	return rc;
}

/* Write buf[0..n) to the rules file atomically (temp file + rename). */
static int write_rules(struct fault *f, const char *a, size_t an, const char *b, size_t bn,
		       const char *c, size_t cn)
{
	char tmp[4096];
	const char *parts[3] = {a, b, c};
	size_t lens[3] = {an, bn, cn}, i, off;
	ssize_t r;
	int fd, rc = 0;

	r = snprintf(tmp, sizeof(tmp), "%s.%ld", f->tmp_path, (long)getpid());
	if (r < 0 || (size_t)r >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	for (i = 0; i < 3 && !rc; i++) {
		for (off = 0; off < lens[i];) {
			r = write(fd, parts[i] + off, lens[i] - off);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				rc = -errno;
				break;
			}
			off += (size_t)r;
		}
	}
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, f->path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* Decide what this call (op on key) must do, consuming one use of a
 * counted rule. On a bad rules file, sets reply REFUSED and returns 1;
 * otherwise 0 with *hit (FA_NONE: no fault). */
static int fault_decide(struct fault *f, const char *op, const char *key, struct fault_hit *hit,
			struct keep_reply *reply)
{
	struct rule r, found;
	char *buf = NULL, num[24];
	size_t n, at = 0, eol, lineno = 0;
	bool have = false;
	int lfd, rc, pr, nn;

	hit->action = FA_NONE;
	lfd = open(f->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "fault: unable to lock '%s': %s",
			       f->lock_path, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return 1;
	}
	rc = read_rules(f->path, &buf, &n);
	if (rc) {
		keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "fault: unable to read '%s': %s",
			       f->path, rc == KEEP_ERR_TOOBIG ? "too large" : strerror(-rc));
		goto out_unlock;
	}
	while (at < n) {
		const char *nl = memchr(buf + at, '\n', n - at);
		eol = nl ? (size_t)(nl - buf) : n;
		lineno++;
		pr = parse_rule(buf, at, eol - at, &r);
		if (pr < 0) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "bad fault rule line %zu",
				       lineno);
			rc = 1;
			goto out_unlock;
		}
		r.line_at = at;
		r.line_len = (nl ? eol + 1 : eol) - at;
		if (pr == 1 && !have && rule_matches(&r, op, key)) {
			found = r;
			have = true;
		}
		at = nl ? eol + 1 : n;
	}
	if (have && found.count > 0) {
		if (found.count == 1) {
			rc =
			    write_rules(f, buf, found.line_at, buf + found.line_at + found.line_len,
					n - found.line_at - found.line_len, "", 0);
		} else {
			nn = snprintf(num, sizeof(num), "%lld", found.count - 1);
			rc = write_rules(f, buf, found.count_at, num, (size_t)nn,
					 buf + found.count_at + found.count_len,
					 n - found.count_at - found.count_len);
		}
		if (rc) {
			keep_reply_set(reply, KEEP_STORE_REFUSED, 0,
				       "fault: unable to rewrite '%s': %s", f->path, strerror(-rc));
			rc = 1;
			goto out_unlock;
		}
	}
	if (have)
		*hit = found.hit;
	rc = 0;
out_unlock:
	free(buf);
	close(lfd);
	return rc ? 1 : 0;
}

static void sleep_ms(int64_t ms)
{
	int64_t deadline = keep_mono_ms() + ms;

	while (keep_mono_ms() < deadline)
		keep_sleep_until_mono(deadline);
}

/* Before sending: 1 when the reply is decided here (do not send), 0 to
 * send, 2 to send a put without its condition (unconditional), 3 to send a
 * put late (*late_ms: when, from now); *lose set when the reply must be
 * dropped after sending. */
static int fault_pre(struct keep_store *s, const char *op, const char *key, bool *lose,
		     int64_t *late_ms, struct keep_reply *reply)
{
	struct fault *f = fault_of(s);
	struct fault_hit h;
	int64_t t = s->timeout_ms > 0 ? s->timeout_ms : 10000;
	long long st;

	*lose = false;
	f->inner->timeout_ms = s->timeout_ms;
	keep_store_set_on_page(f->inner, s->on_page, s->on_page_arg);
	if (fault_decide(f, op, key, &h, reply))
		return 1;
	if (h.action == FA_NONE)
		return 0;
	if (getenv("KEEP_FAULT_LOG") && *getenv("KEEP_FAULT_LOG"))
		fprintf(stderr, "keep-fault: %s %s %s%s%s\n", op, key, h.name,
			h.argtext[0] ? " " : "", h.argtext);
	switch (h.action) {
	case FA_FAIL:
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "injected: fail");
		return 1;
	case FA_ERROR:
		st = h.arg;
		if (st >= 500)
			keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, (int)st, "injected: error %lld",
				       st);
		else if (st == 409 || st == 412)
			keep_reply_set(reply, KEEP_STORE_CONFLICT, (int)st, "injected: error %lld",
				       st);
		else if (st == 404)
			keep_reply_set(reply, KEEP_STORE_NOT_FOUND, (int)st, "injected: error %lld",
				       st);
		else
			keep_reply_set(reply, KEEP_STORE_REFUSED, (int)st, "injected: error %lld",
				       st);
		return 1;
	case FA_LOSE:
		*lose = true;
		return 0;
	case FA_LATE:
		if (h.arg > t && strcmp(op, "put") == 0 &&
		    strcmp(fault_of(s)->inner->ops->name, "fs") == 0) {
			*late_ms = h.arg;
			return 3;
		}
		/* otherwise a delay */
		/* fall through */
	case FA_DELAY:
		if (h.arg > t) {
			sleep_ms(t);
			keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "injected: timeout");
			return 1;
		}
		sleep_ms(h.arg);
		return 0;
	case FA_HANG:
		sleep_ms(t);
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "injected: timeout");
		return 1;
	case FA_UNCOND:
		return strcmp(op, "put") == 0 ? 2 : 0;
	case FA_HOLD: {
		int64_t until = keep_mono_ms() + FAULT_HOLD_MAX_MS;

		while (access(h.argtext, F_OK) != 0) {
			if (keep_mono_ms() >= until) {
				keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0,
					       "injected: hold timed out");
				return 1;
			}
			sleep_ms(10);
		}
		return 0;
	}
	case FA_NONE:
		break;
	}
	return 0;
}

static void lost(struct keep_reply *reply)
{
	keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "injected: reply lost");
}

/* `late MS` on a put (fs backend): a grandchild process, detached from
 * the caller, sends the put MS ms from now; the caller waits its timeout
 * and is told AMBIGUOUS. The grandchild keeps only directory descriptors
 * (the fs store's root; never a lock file of the caller's, which would
 * outlive the caller's unlock) and /dev/null as stdin, stdout and stderr
 * (a test's pipe is never held open), and ends with _exit. With no
 * process to spare, the put is not sent (a plain timeout). */
static void send_late(struct keep_store *s, const char *key, const void *body, size_t len,
		      enum keep_cond cond, const char *if_match, int64_t late_ms,
		      struct keep_reply *reply)
{
	int64_t t = s->timeout_ms > 0 ? s->timeout_ms : 10000;
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit rl;
		struct keep_reply r;
		int fd, nul;

		if (fork() != 0)
			_exit(0); /* the child: its parent reaps it at once */
		setsid();
		nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > 65536)
			rl.rlim_cur = 65536;
		for (fd = 3; fd < (int)rl.rlim_cur; fd++) {
			struct stat st;

			if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
				close(fd);
		}
		sleep_ms(late_ms);
		fault_of(s)->inner->ops->put(fault_of(s)->inner, key, body, len, cond, if_match,
					     &r);
		_exit(0);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	sleep_ms(t);
	keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0, "injected: timeout (late: sent in %lld ms)",
		       (long long)(late_ms - t));
}

static int fault_get(struct keep_store *s, const char *key, struct keep_buf *body,
		     struct keep_reply *reply)
{
	bool lose;
	int64_t late;
	int rc;

	if (fault_pre(s, "get", key, &lose, &late, reply))
		return 0;
	rc = fault_of(s)->inner->ops->get(fault_of(s)->inner, key, body, reply);
	if (!rc && lose) {
		keep_buf_reset(body);
		lost(reply);
	}
	return rc;
}

static int fault_head(struct keep_store *s, const char *key, struct keep_reply *reply)
{
	bool lose;
	int64_t late;
	int rc;

	if (fault_pre(s, "head", key, &lose, &late, reply))
		return 0;
	rc = fault_of(s)->inner->ops->head(fault_of(s)->inner, key, reply);
	if (!rc && lose)
		lost(reply);
	return rc;
}

static int fault_put(struct keep_store *s, const char *key, const void *body, size_t len,
		     enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	bool lose;
	int64_t late = 0;
	int rc, pre;

	pre = fault_pre(s, "put", key, &lose, &late, reply);
	if (pre == 1)
		return 0;
	if (pre == 3) {
		send_late(s, key, body, len, cond, if_match, late, reply);
		return 0;
	}
	if (pre == 2) { /* unconditional */
		cond = KEEP_COND_NONE;
		if_match = NULL;
	}
	rc =
	    fault_of(s)->inner->ops->put(fault_of(s)->inner, key, body, len, cond, if_match, reply);
	if (!rc && lose)
		lost(reply);
	return rc;
}

/* The same faults as get and put (the rules name the operation get or
 * put); the metadata passes through to the inner store. */
static int fault_get_meta(struct keep_store *s, const char *key, struct keep_buf *body,
			  struct keep_meta *meta, struct keep_reply *reply)
{
	bool lose;
	int64_t late = 0;
	int rc;

	keep_meta_init(meta);
	if (fault_pre(s, "get", key, &lose, &late, reply))
		return 0;
	rc = keep_store_get_meta(fault_of(s)->inner, key, body, meta, reply);
	if (!rc && lose) {
		keep_buf_reset(body);
		keep_meta_init(meta);
		lost(reply);
	}
	return rc;
}

static int fault_put_meta(struct keep_store *s, const char *key, const void *body, size_t len,
			  enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
			  struct keep_reply *reply)
{
	bool lose;
	int64_t late = 0;
	int rc, pre;

	pre = fault_pre(s, "put", key, &lose, &late, reply);
	if (pre == 1)
		return 0;
	if (pre == 3) { /* late: only on fs, which keeps no user metadata */
		send_late(s, key, body, len, cond, if_match, late, reply);
		return 0;
	}
	if (pre == 2) { /* unconditional */
		cond = KEEP_COND_NONE;
		if_match = NULL;
	}
	rc = keep_store_put_meta(fault_of(s)->inner, key, body, len, cond, if_match, meta, reply);
	if (!rc && lose)
		lost(reply);
	return rc;
}

static int fault_del(struct keep_store *s, const char *key, const char *if_match,
		     struct keep_reply *reply)
{
	bool lose;
	int64_t late;
	int rc;

	if (fault_pre(s, "del", key, &lose, &late, reply))
		return 0;
	rc = fault_of(s)->inner->ops->del(fault_of(s)->inner, key, if_match, reply);
	if (!rc && lose)
		lost(reply);
	return rc;
}

static int fault_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		      struct keep_reply *reply)
{
	size_t n0 = out->n;
	bool lose;
	int64_t late;
	int rc;

	if (fault_pre(s, "list", prefix, &lose, &late, reply))
		return 0;
	rc = fault_of(s)->inner->ops->list(fault_of(s)->inner, prefix, out, reply);
	if (!rc && lose) {
		while (out->n > n0)
			free(out->v[--out->n].key);
		lost(reply);
	}
	return rc;
}

static void fault_free(struct keep_store *s)
{
	struct fault *f = fault_of(s);

	if (f) {
		keep_store_free(f->inner);
		free(f->path);
		free(f->lock_path);
		free(f->tmp_path);
		free(f);
	}
	free(s);
}

static const struct keep_store_ops fault_ops = {
    .name = "fault",
    .get = fault_get,
    .head = fault_head,
    .put = fault_put,
    .del = fault_del,
    .list = fault_list,
    .free = fault_free,
    .put_meta = fault_put_meta,
    .get_meta = fault_get_meta,
};

static char *concat(const char *a, const char *b)
{
	size_t an = strlen(a), bn = strlen(b);
	char *p = malloc(an + bn + 1);

	if (p) {
		memcpy(p, a, an);
		memcpy(p + an, b, bn + 1);
	}
	return p;
}

/* Ownership of inner passes to the wrapper, also on failure (freed). The
 * wrapper starts with inner's timeout_ms and passes its own down on every
 * call. Errors: KEEP_ERR_INVAL (empty path), KEEP_ERR_NOMEM. */
int keep_store_fault_wrap(struct keep_store *inner, const char *path, struct keep_store **out,
			  char *err, size_t errlen)
{
	struct keep_store *s;
	struct fault *f;

	*out = NULL;
	if (!path || !*path) {
		keep_store_free(inner);
		snprintf(err, errlen, "fault: empty rules file path");
		return KEEP_ERR_INVAL;
	}
	s = calloc(1, sizeof(*s));
	f = calloc(1, sizeof(*f));
	if (f) {
		f->path = strdup(path);
		f->lock_path = concat(path, ".lock");
		f->tmp_path = concat(path, ".tmp");
	}
	if (!s || !f || !f->path || !f->lock_path || !f->tmp_path) {
		if (f) {
			free(f->path);
			free(f->lock_path);
			free(f->tmp_path);
		}
		free(f);
		free(s);
		keep_store_free(inner);
		snprintf(err, errlen, "out of memory");
		return KEEP_ERR_NOMEM;
	}
	f->inner = inner;
	s->ops = &fault_ops;
	s->impl = f;
	s->timeout_ms = inner->timeout_ms;
	*out = s;
	return 0;
}
