/* s3proxy — a loopback S3 fault proxy owned by the tests (docs/testing.md,
 * "The S3 fault proxy"; issue 17).
 *
 * It listens on 127.0.0.1 and forwards every request, byte for byte, to one
 * real S3 server (Ceph RGW on loopback): the Host header and the body are
 * never touched, so a SigV4 signature made for the proxy's address still
 * verifies at the server (it signs the Host header it receives). HTTP/1.1
 * with keep-alive: request heads and their bodies (Content-Length or
 * chunked) and response heads and theirs (Content-Length, chunked, none for
 * HEAD/1xx/204/304, or until close) are parsed, so the proxy knows where
 * each request and reply ends on a kept-alive connection. Each client
 * connection has a thread and its own upstream connection.
 *
 * Rules (the syntax of lib/store/fault.c's KEEP_FAULT_FILE where it fits),
 * one a line in the rules file, re-read whenever it changes (inode, size or
 * mtime):
 *
 *   OP KEY-PREFIX ACTION [ARG] [count=N] [p=P] [code=NAME] [for=MS] [above=R]
 *
 *   OP          get | head | put | del | list | *   (list: a GET of the
 *               bucket; its key is the prefix= query parameter)
 *   KEY-PREFIX  the object key (path after the bucket, percent-decoded, the
 *               -k store prefix removed) starts with it; a trailing '*' is
 *               dropped; '*' alone matches every key
 *   ACTION      delay MS         hold MS ms, then forward and relay; never
 *                                forwarded if the client hung up meanwhile
 *               late MS          hold MS ms, then forward whatever the client
 *                                did (a write lands after its timeout); the
 *                                reply is relayed only if the client is there;
 *                                with until=PATH (absolute) the hold ends
 *                                as soon as PATH exists (a test's steps
 *                                then need no guess of their time), MS
 *                                bounding it
 *               lose             forward, then close the client connection
 *                                without answering (the write landed)
 *               error STATUS     answer STATUS (300..599) without forwarding
 *               error-after STATUS  forward, then answer STATUS instead of
 *                                the reply (the write landed)
 *               drop             close the connection, not forwarded
 *               reset            reset the connection (RST), not forwarded
 *               reset-after      forward, then reset the connection
 *               hang             neither forward nor answer; wait for the
 *                                client to give up
 *               stale MS         get only: answer as a replica or cache that
 *                                missed every write of the last MS ms would:
 *                                200 with the body, ETag and x-amz-meta-*
 *                                of the newest PUT of the key that went
 *                                through the proxy (2xx) at least MS ms
 *                                ago, not forwarded; when the proxy saw no
 *                                such PUT the rule does not fire (issue 28)
 *   count=N     the rule fires for the next N matching requests only
 *   p=P         it fires with probability P (0..1, up to 6 decimals); a
 *               matching rule that does not fire lets later rules match
 *   until=PATH  late only: see above
 *   for=MS      the rule fires only within MS ms after the rules file was
 *               (re)read: a fault window the proxy times itself
 *   above=R     the rule fires only for the requests it matches beyond R a
 *               second: a token bucket of R tokens, refilled at R a second,
 *               full when the file is read; a request that takes a token is
 *               not faulted by it (later rules may match): a server that
 *               answers 503 SlowDown above a request rate (issue 28)
 *   code=NAME   the S3 error code in an error answer's body (default by
 *               status: 404 NoSuchKey, 409 ConditionalRequestConflict, ...)
 *
 * The first rule that matches and fires wins. Counts live in the proxy's
 * memory and start afresh when the file changes. A malformed file makes
 * every request answered 400 (code InvalidFaultRule), as fault.c refuses
 * every call, with one warning on stderr per change.
 *
 * Each injected fault is one line appended to the -l log (docs/testing.md
 * gives the fields): "fault ..." when a rule fires, "forwarded ..." when a
 * faulted request reached the server (with its status), "unsent ..." when a
 * delayed one was not forwarded.
 *
 * Exit: 0 after SIGTERM/SIGINT (every connection closed, every thread
 * joined); 100 usage (one line); 111 the port cannot be bound. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/base/buf.h"
#include "../../lib/platform/line.h"

static const char USAGE[] =
    "usage: s3proxy [-p PORT] [-u URL] [-r RULES] [-l LOG] [-k PREFIX] [-s SEED] [-v]\n"
    "       s3proxy -n -r RULES\n"
    "\n"
    "  -p PORT    listen on 127.0.0.1:PORT (0, the default: pick a free port)\n"
    "  -u URL     the real server, http://HOST:PORT (default $S3_ENDPOINT)\n"
    "  -r RULES   fault rules file, re-read when it changes (missing or empty: none)\n"
    "  -l LOG     append one line per injected fault to LOG\n"
    "  -k PREFIX  the store's key prefix (s3://BUCKET/PREFIX), removed before matching\n"
    "  -s SEED    seed of the p= draws (default: random)\n"
    "  -v         one line per request on stderr\n"
    "  -n         check the rules file and exit (0 ok, 100 malformed)\n"
    "\n"
    "Prints 'listening port=PORT upstream=URL seed=SEED' on stdout when ready.\n"
    "Rules: OP KEY-PREFIX ACTION [ARG] [count=N] [p=P] [code=NAME] [for=MS] [above=R]\n"
    "       [until=PATH]\n"
    "  OP: get head put del list *   ACTION: delay MS, late MS, lose, error STATUS,\n"
    "  error-after STATUS, drop, reset, reset-after, hang, stale MS (docs/testing.md)\n"
    "exit: 0 stopped by SIGTERM/SIGINT; 100 usage; 111 cannot listen\n";

#define HEAD_MAX 65536		 /* bytes: largest request or response head */
#define BODY_MAX (64u << 20)	 /* bytes: largest body relayed */
#define RULES_MAX 65536		 /* bytes: largest rules file */
#define RULE_TOKENS 8		 /* most tokens in a rule line */
#define UPSTREAM_REPLY_MS 120000 /* ms: longest wait for the server's reply */
#define UPSTREAM_CONNECT_MS 5000 /* ms: longest wait to connect to the server */
#define SEND_TIMEOUT_S 10	 /* s: longest a send to a peer not reading may block */

static const char *prog = "s3proxy";

/* ---- configuration and shared state --------------------------------------- */

static struct {
	const char *rules_path; /* borrowed from argv; NULL: no rules */
	const char *log_path;	/* borrowed from argv; NULL: no log */
	char strip[1024];	/* "PREFIX/" or "" */
	char upstream[256];	/* the URL as given */
	char up_host[256];
	char up_port[16];
	bool verbose;
} cfg;

static int stop_pipe[2] = {-1, -1}; /* readable once the proxy stops */
static volatile sig_atomic_t got_signal;
static int log_fd = -1;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

enum action {
	A_NONE = 0,
	A_DELAY,
	A_LATE,
	A_LOSE,
	A_ERROR,
	A_ERROR_AFTER,
	A_DROP,
	A_RESET,
	A_RESET_AFTER,
	A_HANG,
	A_STALE,
};

static const struct {
	const char *name;
	enum action act;
	bool has_arg;
	long long lo, hi; /* ARG bounds */
} actions[] = {
    {"delay", A_DELAY, true, 0, 86400000},
    {"late", A_LATE, true, 0, 86400000},
    {"lose", A_LOSE, false, 0, 0},
    {"error", A_ERROR, true, 300, 599},
    {"error-after", A_ERROR_AFTER, true, 300, 599},
    {"drop", A_DROP, false, 0, 0},
    {"reset", A_RESET, false, 0, 0},
    {"reset-after", A_RESET_AFTER, false, 0, 0},
    {"hang", A_HANG, false, 0, 0},
    {"stale", A_STALE, true, 0, 86400000},
};

struct rule {
	char op[8];	   /* get head put del list * */
	char prefix[1024]; /* "" matches every key */
	enum action act;
	const char *name;   /* action name (static) */
	long long arg;	    /* MS or STATUS; 0 when none */
	long long count;    /* uses left; -1 unlimited */
	uint32_t p_million; /* probability in millionths (1000000: always) */
	char code[64];	    /* S3 error code for error answers; "" default */
	char until[512];    /* late/delay: the hold also ends once this path exists */
	long long for_ms;   /* fires only this long after the file was read; 0 always */
	long long above;    /* fires only beyond this many matching requests a second; 0 */
	int64_t tb_milli;   /* above=: the bucket's tokens, in thousandths */
	int64_t tb_last_ms; /* above=: mono ms of its last refill; 0 none yet */
};

/* The rules as last read, guarded by rules_mu. */
static struct {
	pthread_mutex_t mu;
	struct rule *v; /* owned */
	size_t n;
	bool have_stat; /* st_* below describe the file last read */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
	size_t bad_line;   /* 0: the file parsed; else the malformed line */
	uint64_t rng;	   /* splitmix64 state for p= draws */
	int64_t loaded_ms; /* mono ms the file was last read (for=) */
} rules = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The PUTs that went through the proxy and were acknowledged (2xx), for
 * the stale action: the last WRITES_KEPT of every key, guarded by
 * writes_mu. */
#define WRITES_KEPT 16
struct put_seen {
	int64_t at_ms;	/* mono ms of the acknowledgement */
	char etag[256]; /* the reply's ETag header value, as sent */
	char *meta;	/* owned: the request's x-amz-meta-* header lines, CRLF each */
	char *body;	/* owned */
	size_t len;
	char ctype[128]; /* the request's Content-Type */
};
struct key_writes {
	char key[2048];
	struct put_seen w[WRITES_KEPT];
	int n;
	struct key_writes *next;
};
static pthread_mutex_t writes_mu = PTHREAD_MUTEX_INITIALIZER;
static struct key_writes *writes;

/* ---- small helpers ----------------------------------------------------------- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool stopping(void)
{
	struct pollfd p = {.fd = stop_pipe[0], .events = POLLIN};

	return poll(&p, 1, 0) > 0;
}

/* Sleep ms, or less if the proxy stops. true when it stopped. */
static bool sleep_or_stop(int64_t ms, const char *until)
{
	int64_t end = mono_ms() + ms, left;
	struct pollfd p = {.fd = stop_pipe[0], .events = POLLIN};

	while ((left = end - mono_ms()) > 0) {
		if (until[0] && access(until, F_OK) == 0)
			break;
		/* 20 ms slices while a path is watched, else up to 1 s */
		int64_t slice = until[0] ? 20 : 1000;
		if (poll(&p, 1, (int)(left < slice ? left : slice)) > 0)
			return true;
	}
	return stopping();
}

/* Parse a decimal token [p, p+n) in [lo, hi]. */
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

/* "0", "1", "0.25", ".5", "1.0": a probability in millionths. */
static bool parse_prob(const char *p, size_t n, uint32_t *out)
{
	uint64_t whole = 0, frac = 0, scale = 1000000;
	size_t i = 0, digits = 0;

	if (n == 0)
		return false;
	if (p[0] >= '0' && p[0] <= '9') {
		whole = (uint64_t)(p[0] - '0');
		i = 1;
	}
	if (i < n) {
		if (p[i] != '.' || i + 1 == n)
			return false;
		for (i++; i < n; i++, digits++) {
			if (p[i] < '0' || p[i] > '9' || digits == 6)
				return false;
			scale /= 10;
			frac += (uint64_t)(p[i] - '0') * scale;
		}
	} else if (i == 0) {
		return false;
	}
	if (whole > 1 || (whole == 1 && frac > 0))
		return false;
	*out = (uint32_t)(whole * 1000000 + frac);
	return true;
}

static bool tok_is(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(p, w, n) == 0;
}

/* ---- rules ------------------------------------------------------------------ */

/* Parse line [p, p+n). 1 rule, 0 blank or comment, -1 malformed (why set). */
static int parse_rule(const char *p, size_t n, struct rule *r, const char **why)
{
	const char *t[RULE_TOKENS];
	size_t tl[RULE_TOKENS], nt = 0, i = 0, k, a;
	bool seen_count = false, seen_p = false, seen_code = false, seen_for = false,
	     seen_above = false;

	while (i < n) {
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
			i++;
		if (i >= n || p[i] == '#')
			break;
		if (nt == RULE_TOKENS) {
			*why = "too many fields";
			return -1;
		}
		t[nt] = p + i;
		while (i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			i++;
		tl[nt] = (size_t)(p + i - t[nt]);
		nt++;
	}
	if (nt == 0)
		return 0;
	if (nt < 3) {
		*why = "want OP KEY-PREFIX ACTION";
		return -1;
	}
	memset(r, 0, sizeof(*r));
	r->count = -1;
	r->p_million = 1000000;
	if (!(tok_is(t[0], tl[0], "get") || tok_is(t[0], tl[0], "head") ||
	      tok_is(t[0], tl[0], "put") || tok_is(t[0], tl[0], "del") ||
	      tok_is(t[0], tl[0], "list") || tok_is(t[0], tl[0], "*"))) {
		*why = "unknown OP (get head put del list *)";
		return -1;
	}
	memcpy(r->op, t[0], tl[0]);
	if (!tok_is(t[1], tl[1], "*")) {
		size_t pl = tl[1] - (t[1][tl[1] - 1] == '*' ? 1 : 0);
		if (pl >= sizeof(r->prefix)) {
			*why = "KEY-PREFIX too long";
			return -1;
		}
		memcpy(r->prefix, t[1], pl);
	}
	for (a = 0; a < sizeof(actions) / sizeof(actions[0]); a++)
		if (tok_is(t[2], tl[2], actions[a].name))
			break;
	if (a == sizeof(actions) / sizeof(actions[0])) {
		*why = "unknown ACTION";
		return -1;
	}
	r->act = actions[a].act;
	r->name = actions[a].name;
	k = 3;
	if (actions[a].has_arg) {
		if (nt < 4 || !parse_num(t[3], tl[3], actions[a].lo, actions[a].hi, &r->arg)) {
			*why = r->act == A_ERROR || r->act == A_ERROR_AFTER
				   ? "want a STATUS 300..599"
				   : "want MS 0..86400000";
			return -1;
		}
		k = 4;
	}
	for (; k < nt; k++) {
		if (tl[k] > 6 && memcmp(t[k], "count=", 6) == 0 && !seen_count) {
			if (!parse_num(t[k] + 6, tl[k] - 6, 1, 1000000000, &r->count)) {
				*why = "want count=N, N 1..1000000000";
				return -1;
			}
			seen_count = true;
		} else if (tl[k] > 2 && memcmp(t[k], "p=", 2) == 0 && !seen_p) {
			if (!parse_prob(t[k] + 2, tl[k] - 2, &r->p_million)) {
				*why = "want p=P, P 0..1 with up to 6 decimals";
				return -1;
			}
			seen_p = true;
		} else if (tl[k] > 5 && memcmp(t[k], "code=", 5) == 0 && !seen_code) {
			size_t j;
			if (tl[k] - 5 >= sizeof(r->code)) {
				*why = "code= too long";
				return -1;
			}
			for (j = 5; j < tl[k]; j++)
				if (!((t[k][j] >= 'A' && t[k][j] <= 'Z') ||
				      (t[k][j] >= 'a' && t[k][j] <= 'z') ||
				      (t[k][j] >= '0' && t[k][j] <= '9'))) {
					*why = "code= takes letters and digits";
					return -1;
				}
			memcpy(r->code, t[k] + 5, tl[k] - 5);
			seen_code = true;
		} else if (tl[k] > 4 && memcmp(t[k], "for=", 4) == 0 && !seen_for) {
			if (!parse_num(t[k] + 4, tl[k] - 4, 1, 86400000, &r->for_ms)) {
				*why = "want for=MS, MS 1..86400000";
				return -1;
			}
			seen_for = true;
		} else if (tl[k] > 6 && memcmp(t[k], "above=", 6) == 0 && !seen_above) {
			if (!parse_num(t[k] + 6, tl[k] - 6, 1, 1000000, &r->above)) {
				*why = "want above=R, R 1..1000000 requests a second";
				return -1;
			}
			seen_above = true;
		} else if (tl[k] > 6 && memcmp(t[k], "until=", 6) == 0 && !r->until[0] &&
			   r->act == A_LATE) {
			if (tl[k] - 6 >= sizeof(r->until) || t[k][6] != '/') {
				*why = "until= takes an absolute path";
				return -1;
			}
			memcpy(r->until, t[k] + 6, tl[k] - 6);
		} else {
			*why = "unknown or repeated option (count=N p=P code=NAME for=MS above=R; "
			       "until=PATH for late)";
			return -1;
		}
	}
	if (r->act == A_STALE && !tok_is(t[0], tl[0], "get")) {
		*why = "stale answers get only";
		return -1;
	}
	return 1;
}

/* Parse a whole rules file buf[0..n) into a new array (*out, caller frees).
 * 0, or the 1-based number of the first malformed line (why set). */
static size_t parse_rules(const char *buf, size_t n, struct rule **out, size_t *nout,
			  const char **why)
{
	struct rule *v = NULL, r;
	size_t at = 0, line = 0, cnt = 0;
	int pr;

	*out = NULL;
	*nout = 0;
	while (at < n) {
		const char *nl = memchr(buf + at, '\n', n - at);
		size_t eol = nl ? (size_t)(nl - buf) : n;
		line++;
		pr = parse_rule(buf + at, eol - at, &r, why);
		if (pr < 0) {
			free(v);
			return line;
		}
		if (pr == 1) {
			struct rule *nv = realloc(v, (cnt + 1) * sizeof(*v));
			if (!nv) {
				free(v);
				*why = "out of memory";
				return line;
			}
			v = nv;
			v[cnt++] = r;
		}
		at = nl ? eol + 1 : n;
	}
	*out = v;
	*nout = cnt;
	return 0;
}

/* Read path (at most RULES_MAX bytes) into a new NUL-terminated buffer;
 * *st (when not NULL) describes the file read. 0, or -errno; -EFBIG when
 * too large. */
static int read_file(const char *path, char **out, size_t *n, struct stat *st)
{
	char *p = malloc(RULES_MAX + 1);
	size_t len = 0;
	ssize_t r;
	int fd, rc = 0;

	*out = NULL;
	*n = 0;
	if (!p)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (st && fstat(fd, st) < 0)) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		free(p);
		return rc;
	}
	for (;;) {
		r = read(fd, p + len, RULES_MAX + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > RULES_MAX) {
			rc = -EFBIG;
			break;
		}
	}
	close(fd);
	if (rc) {
		free(p);
		return rc;
	}
	p[len] = '\0';
	*out = p;
	*n = len;
	return 0;
}

/* Re-read the rules file if it changed since the last read. rules.mu held. */
static void rules_refresh_locked(void)
{
	struct stat st;
	struct rule *v;
	size_t n, nv, bad;
	char *buf;
	const char *why = "";
	int rc;

	if (!cfg.rules_path)
		return;
	if (stat(cfg.rules_path, &st) < 0) {
		if (rules.have_stat || rules.n || rules.bad_line) {
			free(rules.v);
			rules.v = NULL;
			rules.n = 0;
			rules.bad_line = 0;
			rules.have_stat = false;
		}
		return;
	}
	if (rules.have_stat && st.st_dev == rules.dev && st.st_ino == rules.ino &&
	    st.st_size == rules.size && st.st_mtim.tv_sec == rules.mtim.tv_sec &&
	    st.st_mtim.tv_nsec == rules.mtim.tv_nsec)
		return;
	/* the stat of what is read: a file renamed over it meanwhile is
	 * seen as a change at the next request */
	rc = read_file(cfg.rules_path, &buf, &n, &st);
	if (rc == -ENOENT)
		return; /* removed between stat and open: next request */
	rules.have_stat = true;
	rules.dev = st.st_dev;
	rules.ino = st.st_ino;
	rules.size = st.st_size;
	rules.mtim = st.st_mtim;
	free(rules.v);
	rules.v = NULL;
	rules.n = 0;
	rules.bad_line = 0;
	if (rc) {
		rules.bad_line = 1;
		fprintf(stderr, "%s: warning: unable to read '%s': %s; answering 400\n", prog,
			cfg.rules_path, strerror(-rc));
		return;
	}
	bad = parse_rules(buf, n, &v, &nv, &why);
	free(buf);
	if (bad) {
		rules.bad_line = bad;
		fprintf(stderr, "%s: warning: bad fault rule line %zu in '%s': %s; answering 400\n",
			prog, bad, cfg.rules_path, why);
		return;
	}
	rules.v = v;
	rules.n = nv;
	rules.loaded_ms = mono_ms();
	if (cfg.verbose)
		fprintf(stderr, "%s: %zu rule(s) from '%s'\n", prog, nv, cfg.rules_path);
}

static bool rule_matches(const struct rule *r, const char *op, const char *key)
{
	if (strcmp(r->op, "*") != 0 && strcmp(r->op, op) != 0)
		return false;
	return strncmp(key, r->prefix, strlen(r->prefix)) == 0;
}

static bool have_stale_write(const char *key, int64_t older_than_ms);

/* above=R: a request the rule matches takes a token of its bucket (R
 * tokens, refilled at R a second, full at the first request after the
 * file was read): true when it found one. Under rules.mu. */
static bool take_token(struct rule *r, int64_t now)
{
	int64_t cap = r->above * 1000;

	if (r->tb_last_ms == 0) {
		r->tb_milli = cap;
		r->tb_last_ms = now;
	}
	if (now > r->tb_last_ms) {
		/* R a second: R thousandths a millisecond */
		int64_t add = (now - r->tb_last_ms) * r->above;

		r->tb_milli = add >= cap - r->tb_milli ? cap : r->tb_milli + add;
		r->tb_last_ms = now;
	}
	if (r->tb_milli < 1000)
		return false;
	r->tb_milli -= 1000;
	return true;
}

/* What to do with a request (op, key): *hit gets the rule that fired (act
 * A_NONE: forward as is). Returns the malformed line of the rules file, or
 * 0. Consumes one use of a counted rule. */
static size_t rules_decide(const char *op, const char *key, struct rule *hit)
{
	size_t i, bad;
	int64_t now = mono_ms();

	memset(hit, 0, sizeof(*hit));
	hit->act = A_NONE;
	pthread_mutex_lock(&rules.mu);
	rules_refresh_locked();
	bad = rules.bad_line;
	for (i = 0; !bad && i < rules.n; i++) {
		struct rule *r = &rules.v[i];
		if (r->count == 0 || !rule_matches(r, op, key))
			continue;
		if (r->for_ms && now - rules.loaded_ms >= r->for_ms)
			continue;
		if (r->act == A_STALE && !have_stale_write(key, r->arg))
			continue;
		if (r->above && take_token(r, now))
			continue; /* within the rate: not this rule's */
		if (r->p_million < 1000000 &&
		    splitmix64(&rules.rng) % 1000000 >= (uint64_t)r->p_million)
			continue;
		if (r->count > 0)
			r->count--;
		*hit = *r;
		break;
	}
	pthread_mutex_unlock(&rules.mu);
	return bad;
}

/* ---- the fault log ----------------------------------------------------------- */

/* Append one line "TYPE ms=… conn=… op=… key=… action=…[ arg=…][ status=…]"
 * to the log (one write(2), O_APPEND). status < 0: omitted; 0: "-". */
static void log_event(const char *type, unsigned long conn, const char *op, const char *key,
		      const struct rule *r, int status)
{
	struct keep_buf b;

	if (log_fd < 0)
		return;
	keep_buf_init(&b, 8192);
	if (keep_line_start(&b, type) || keep_line_int(&b, "ms", wall_ms()) ||
	    keep_line_int(&b, "conn", (int64_t)conn) || keep_line_str(&b, "op", op) ||
	    keep_line_str(&b, "key", key) || keep_line_str(&b, "action", r->name) ||
	    (r->arg && keep_line_int(&b, "arg", r->arg)) ||
	    (status > 0 && keep_line_int(&b, "status", status)) ||
	    (status == 0 && keep_line_str(&b, "status", NULL)) || keep_buf_adds(&b, "\n")) {
		keep_buf_release(&b);
		return;
	}
	pthread_mutex_lock(&log_mu);
	if (write(log_fd, b.data, b.len) < 0)
		fprintf(stderr, "%s: warning: unable to write the log: %s\n", prog,
			strerror(errno));
	pthread_mutex_unlock(&log_mu);
	keep_buf_release(&b);
}

/* ---- HTTP messages ------------------------------------------------------------- */

/* A byte stream read from a socket, with what was read but not consumed. */
struct reader {
	int fd;
	struct keep_buf b; /* bytes read; [pos, len) not consumed */
	size_t pos;
};

static void reader_init(struct reader *r, int fd)
{
	r->fd = fd;
	keep_buf_init(&r->b, HEAD_MAX + (size_t)BODY_MAX + 65536);
	r->pos = 0;
}

/* Drop consumed bytes. */
static void reader_compact(struct reader *r)
{
	if (r->pos == 0)
		return;
	memmove(r->b.data, r->b.data + r->pos, r->b.len - r->pos);
	r->b.len -= r->pos;
	r->b.data[r->b.len] = '\0';
	r->pos = 0;
}

/* Read more bytes, waiting at most timeout_ms (-1: no bound). >0 bytes
 * added, 0 end of stream, -1 error, timeout or stop. */
static ssize_t reader_fill(struct reader *r, int timeout_ms)
{
	char tmp[16384];
	struct pollfd p[2] = {{.fd = r->fd, .events = POLLIN},
			      {.fd = stop_pipe[0], .events = POLLIN}};
	int64_t end = timeout_ms < 0 ? 0 : mono_ms() + timeout_ms;
	ssize_t n;

	for (;;) {
		int w = 1000, pr;
		if (timeout_ms >= 0) {
			int64_t left = end - mono_ms();
			if (left <= 0)
				return -1;
			if (left < w)
				w = (int)left;
		}
		pr = poll(p, 2, w);
		if (pr < 0 && errno != EINTR)
			return -1;
		if (pr > 0 && p[1].revents)
			return -1;
		if (pr > 0 && p[0].revents)
			break;
	}
	n = recv(r->fd, tmp, sizeof(tmp), 0);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? reader_fill(r, timeout_ms) : -1;
	if (n == 0)
		return 0;
	if (keep_buf_add(&r->b, tmp, (size_t)n))
		return -1;
	return n;
}

/* One message: its raw bytes (head and body, as received) and what was
 * parsed from the head. */
struct msg {
	struct keep_buf raw;
	size_t head_len;
	char method[16]; /* requests */
	char target[8192];
	int status;	/* responses */
	long long clen; /* -1: none */
	bool chunked;
	bool close;	/* Connection: close, or HTTP/1.0 without keep-alive */
	bool expect100; /* Expect: 100-continue */
	bool http10;
};

static void msg_init(struct msg *m)
{
	memset(m, 0, sizeof(*m));
	keep_buf_init(&m->raw, HEAD_MAX + (size_t)BODY_MAX + 65536);
}

static void msg_reset(struct msg *m)
{
	struct keep_buf raw = m->raw;

	memset(m, 0, sizeof(*m));
	m->raw = raw;
	keep_buf_reset(&m->raw);
}

/* Does the comma-separated header value [v, v+n) contain token w? */
static bool has_token(const char *v, size_t n, const char *w)
{
	size_t i = 0, wl = strlen(w);

	while (i < n) {
		size_t s, e;
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == wl && strncasecmp(v + s, w, wl) == 0)
			return true;
	}
	return false;
}

/* Parse the head raw[0..head_len) (request when req). 0, or -1 malformed. */
static int parse_head(struct msg *m, bool req)
{
	const char *p = m->raw.data, *end = p + m->head_len, *eol, *sp;
	bool keepalive = false, have_cl = false;

	m->clen = -1;
	eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		return -1;
	if (req) {
		const char *sp2;
		sp = memchr(p, ' ', (size_t)(eol - p));
		if (!sp || (size_t)(sp - p) >= sizeof(m->method) || sp == p)
			return -1;
		memcpy(m->method, p, (size_t)(sp - p));
		sp2 = memchr(sp + 1, ' ', (size_t)(eol - sp - 1));
		if (!sp2 || (size_t)(sp2 - sp - 1) >= sizeof(m->target) || sp2 == sp + 1)
			return -1;
		memcpy(m->target, sp + 1, (size_t)(sp2 - sp - 1));
		if (eol - sp2 - 1 < 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
			return -1;
		m->http10 = sp2[8] == '0';
	} else {
		long long st;
		if (eol - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' ||
		    !parse_num(p + 9, 3, 100, 599, &st))
			return -1;
		m->status = (int)st;
		m->http10 = p[7] == '0';
	}
	for (p = eol + 1; p < end; p = eol + 1) {
		const char *colon, *v;
		size_t nl, vl;
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			return -1;
		if (eol == p || (eol == p + 1 && *p == '\r'))
			break; /* the empty line */
		colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon)
			return -1;
		nl = (size_t)(colon - p);
		v = colon + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		vl = (size_t)(eol - v);
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		if (nl == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
			long long cl;
			if (!parse_num(v, vl, 0, BODY_MAX, &cl) || (have_cl && cl != m->clen))
				return -1;
			m->clen = cl;
			have_cl = true;
		} else if (nl == 17 && strncasecmp(p, "Transfer-Encoding", 17) == 0) {
			m->chunked = has_token(v, vl, "chunked");
		} else if (nl == 10 && strncasecmp(p, "Connection", 10) == 0) {
			if (has_token(v, vl, "close"))
				m->close = true;
			if (has_token(v, vl, "keep-alive"))
				keepalive = true;
		} else if (req && nl == 6 && strncasecmp(p, "Expect", 6) == 0) {
			m->expect100 = has_token(v, vl, "100-continue");
		}
	}
	if (m->http10 && !keepalive)
		m->close = true;
	return 0;
}

/* Move n bytes from the reader into m->raw. */
static int take(struct reader *r, struct msg *m, size_t n)
{
	if (keep_buf_add(&m->raw, r->b.data + r->pos, n))
		return -1;
	r->pos += n;
	return 0;
}

/* Read a head into m (timeout per read). 1 read, 0 clean end of stream
 * before any byte, -1 error. */
static int read_head(struct reader *r, struct msg *m, int timeout_ms)
{
	for (;;) {
		const char *s = r->b.data ? r->b.data + r->pos : NULL;
		size_t avail = r->b.len - r->pos;
		const char *e = s ? memmem(s, avail, "\r\n\r\n", 4) : NULL;
		ssize_t n;
		if (e) {
			size_t hl = (size_t)(e - s) + 4;
			if (hl > HEAD_MAX || take(r, m, hl))
				return -1;
			m->head_len = hl;
			return 1;
		}
		if (avail > HEAD_MAX)
			return -1;
		n = reader_fill(r, timeout_ms);
		if (n == 0)
			return avail == 0 ? 0 : -1;
		if (n < 0)
			return -1;
	}
}

/* Make sure n bytes are available. 0 or -1. */
static int need(struct reader *r, size_t n, int timeout_ms)
{
	while (r->b.len - r->pos < n)
		if (reader_fill(r, timeout_ms) <= 0)
			return -1;
	return 0;
}

/* One CRLF-terminated line (chunk size or trailer) into m. Its length
 * without the CRLF in *len. 0 or -1. */
static int take_line(struct reader *r, struct msg *m, size_t *len, int timeout_ms)
{
	for (;;) {
		const char *s = r->b.data ? r->b.data + r->pos : NULL;
		size_t avail = r->b.len - r->pos;
		const char *e = s ? memmem(s, avail, "\r\n", 2) : NULL;
		if (e) {
			*len = (size_t)(e - s);
			return take(r, m, *len + 2);
		}
		if (avail > 4096 || reader_fill(r, timeout_ms) <= 0)
			return -1;
	}
}

/* The body after a head: Content-Length bytes, chunked, or (until_close,
 * responses only) everything until the end of the stream. 0 or -1. */
static int read_body(struct reader *r, struct msg *m, bool until_close, int timeout_ms)
{
	if (m->chunked) {
		size_t body = 0;
		for (;;) {
			size_t ll, i, size = 0;
			const char *line;
			if (take_line(r, m, &ll, timeout_ms))
				return -1;
			line = m->raw.data + m->raw.len - ll - 2;
			for (i = 0; i < ll && line[i] != ';' && line[i] != ' '; i++) {
				int c = line[i], d = c >= '0' && c <= '9'   ? c - '0'
						     : c >= 'a' && c <= 'f' ? c - 'a' + 10
						     : c >= 'A' && c <= 'F' ? c - 'A' + 10
									    : -1;
				if (d < 0 || size > BODY_MAX)
					return -1;
				size = size * 16 + (size_t)d;
			}
			if (i == 0)
				return -1;
			body += size;
			if (body > BODY_MAX)
				return -1;
			if (size == 0)
				break;
			if (need(r, size + 2, timeout_ms) || take(r, m, size + 2))
				return -1;
		}
		for (;;) { /* trailers, up to the empty line */
			size_t ll;
			if (take_line(r, m, &ll, timeout_ms))
				return -1;
			if (ll == 0)
				return 0;
		}
	}
	if (m->clen >= 0)
		return need(r, (size_t)m->clen, timeout_ms) ? -1 : take(r, m, (size_t)m->clen);
	if (until_close) {
		ssize_t n;
		while ((n = reader_fill(r, timeout_ms)) > 0)
			;
		if (n < 0)
			return -1;
		m->close = true;
		return take(r, m, r->b.len - r->pos);
	}
	return 0;
}

/* send(2) all of [p, p+n) (no SIGPIPE). 0 or -1. */
static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- a connection ------------------------------------------------------------------ */

struct conn {
	unsigned long id;
	int cfd;		/* client socket */
	int ufd;		/* upstream socket, -1 when none */
	struct reader cin, uin; /* what each side sent */
	struct msg req, resp;
	char op[8];
	char key[2048]; /* decoded, the store prefix removed */
	pthread_t thread;
	atomic_bool done; /* the thread ended (join it) */
	struct conn *next;
};

static pthread_mutex_t conns_mu = PTHREAD_MUTEX_INITIALIZER;
static struct conn *conns;

static int hexdig(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Percent-decode [s, s+n) into out (outlen bytes). false if it does not fit
 * or is malformed. */
static bool pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int h, l;
			if (i + 2 >= n)
				return false;
			h = hexdig(s[i + 1]);
			l = hexdig(s[i + 2]);
			if (h < 0 || l < 0)
				return false;
			c = h * 16 + l;
			i += 2;
		}
		if (o + 1 >= outlen)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return true;
}

/* From the request line: the rule OP and the key (see the header). */
static void classify(struct conn *c)
{
	const char *t = c->req.target, *q = strchr(t, '?'), *path_end = q ? q : t + strlen(t);
	const char *k;
	size_t sl = strlen(cfg.strip);

	c->key[0] = '\0';
	snprintf(c->op, sizeof(c->op), "other");
	if (*t != '/')
		return;
	k = memchr(t + 1, '/', (size_t)(path_end - t - 1)); /* after /BUCKET */
	if (k && k + 1 < path_end) {
		if (!pct_decode(k + 1, (size_t)(path_end - k - 1), c->key, sizeof(c->key)))
			c->key[0] = '\0';
		if (!strcmp(c->req.method, "GET"))
			snprintf(c->op, sizeof(c->op), "get");
		else if (!strcmp(c->req.method, "HEAD"))
			snprintf(c->op, sizeof(c->op), "head");
		else if (!strcmp(c->req.method, "PUT"))
			snprintf(c->op, sizeof(c->op), "put");
		else if (!strcmp(c->req.method, "DELETE"))
			snprintf(c->op, sizeof(c->op), "del");
	} else if (!strcmp(c->req.method, "GET")) {
		/* a listing: the key is the prefix= parameter */
		const char *s = q;
		snprintf(c->op, sizeof(c->op), "list");
		while (s && *s) {
			s++;
			if (!strncmp(s, "prefix=", 7)) {
				const char *e = strchr(s, '&');
				size_t n = e ? (size_t)(e - s - 7) : strlen(s + 7);
				if (!pct_decode(s + 7, n, c->key, sizeof(c->key)))
					c->key[0] = '\0';
				break;
			}
			s = strchr(s, '&');
		}
	}
	if (sl && !strncmp(c->key, cfg.strip, sl))
		memmove(c->key, c->key + sl, strlen(c->key + sl) + 1);
}

static const char *reason_of(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 412:
		return "Precondition Failed";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Injected";
	}
}

static const char *code_of(int status)
{
	switch (status) {
	case 400:
		return "InvalidRequest";
	case 403:
		return "AccessDenied";
	case 404:
		return "NoSuchKey";
	case 409:
		return "ConditionalRequestConflict";
	case 412:
		return "PreconditionFailed";
	case 429:
		return "TooManyRequests";
	case 500:
		return "InternalError";
	case 503:
		return "SlowDown";
	default:
		return "InjectedError";
	}
}

/* Answer the client STATUS with an S3 error body naming code. 0 or -1. */
static int answer(struct conn *c, int status, const char *code, const char *message)
{
	struct keep_buf b, body;
	int rc;

	keep_buf_init(&body, 8192);
	keep_buf_init(&b, 16384);
	rc = keep_buf_addf(&body,
			   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
			   "<Message>%s</Message><RequestId>s3proxy-%lu</RequestId></Error>\n",
			   code, message, c->id);
	if (!rc)
		rc = keep_buf_addf(&b,
				   "HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\n"
				   "Content-Length: %zu\r\nx-amz-request-id: s3proxy-%lu\r\n"
				   "Connection: %s\r\n\r\n",
				   status, reason_of(status), body.len, c->id,
				   c->req.close ? "close" : "keep-alive");
	if (!rc && strcmp(c->req.method, "HEAD") != 0)
		rc = keep_buf_add(&b, body.data, body.len);
	if (!rc)
		rc = send_all(c->cfd, b.data, b.len);
	keep_buf_release(&b);
	keep_buf_release(&body);
	return rc ? -1 : 0;
}

/* The value of header name in m's head into out ("" when absent or too
 * long). */
static void head_value(const struct msg *m, const char *name, char *out, size_t n)
{
	const char *p = m->raw.data, *end = p + m->head_len, *eol;
	size_t nl = strlen(name);

	out[0] = '\0';
	for (; p < end; p = eol + 1) {
		size_t vl;
		const char *v;

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			return;
		if ((size_t)(eol - p) <= nl || p[nl] != ':' || strncasecmp(p, name, nl) != 0)
			continue;
		v = p + nl + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		vl = (size_t)(eol - v);
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
			vl--;
		if (vl < n) {
			memcpy(out, v, vl);
			out[vl] = '\0';
		}
		return;
	}
}

/* Is there an acknowledged PUT of key at least older_than_ms old? */
static bool have_stale_write(const char *key, int64_t older_than_ms)
{
	struct key_writes *k;
	int64_t now = mono_ms();
	bool yes = false;

	pthread_mutex_lock(&writes_mu);
	for (k = writes; k && !yes; k = k->next)
		if (!strcmp(k->key, key))
			for (int i = 0; i < k->n && !yes; i++)
				yes = now - k->w[i].at_ms >= older_than_ms;
	pthread_mutex_unlock(&writes_mu);
	return yes;
}

/* Remember an acknowledged PUT on c (its request and reply): the stale
 * action answers with it later. Chunked bodies are not kept. */
static void record_put(struct conn *c)
{
	struct key_writes *k;
	struct put_seen w;
	const char *p, *end;
	struct keep_buf meta;

	if (c->req.chunked || !c->key[0])
		return;
	memset(&w, 0, sizeof(w));
	w.at_ms = mono_ms();
	head_value(&c->resp, "ETag", w.etag, sizeof(w.etag));
	head_value(&c->req, "Content-Type", w.ctype, sizeof(w.ctype));
	if (!w.etag[0])
		return;
	keep_buf_init(&meta, HEAD_MAX);
	p = c->req.raw.data;
	end = p + c->req.head_len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			break;
		if (eol - p > 11 && strncasecmp(p, "x-amz-meta-", 11) == 0 &&
		    (keep_buf_add(&meta, p, (size_t)(eol - p + 1)) != 0)) {
			keep_buf_release(&meta);
			return;
		}
		p = eol + 1;
	}
	w.len = c->req.raw.len - c->req.head_len;
	w.body = malloc(w.len + 1);
	w.meta = malloc(meta.len + 1);
	if (!w.body || !w.meta) {
		free(w.body);
		free(w.meta);
		keep_buf_release(&meta);
		return;
	}
	memcpy(w.body, c->req.raw.data + c->req.head_len, w.len);
	if (meta.len)
		memcpy(w.meta, meta.data, meta.len);
	w.meta[meta.len] = '\0';
	keep_buf_release(&meta);
	pthread_mutex_lock(&writes_mu);
	for (k = writes; k && strcmp(k->key, c->key) != 0; k = k->next)
		;
	if (!k && (k = calloc(1, sizeof(*k))) != NULL) {
		snprintf(k->key, sizeof(k->key), "%s", c->key);
		k->next = writes;
		writes = k;
	}
	if (!k) {
		pthread_mutex_unlock(&writes_mu);
		free(w.body);
		free(w.meta);
		return;
	}
	if (k->n == WRITES_KEPT) {
		free(k->w[0].body);
		free(k->w[0].meta);
		memmove(&k->w[0], &k->w[1], (WRITES_KEPT - 1) * sizeof(k->w[0]));
		k->n--;
	}
	k->w[k->n++] = w;
	pthread_mutex_unlock(&writes_mu);
}

/* The server answered c's request with status (0: no reply): an
 * acknowledged PUT is remembered for the stale action. */
static void seen_reply(struct conn *c, int status)
{
	if (!strcmp(c->op, "put") && status >= 200 && status < 300)
		record_put(c);
}

/* Answer c's GET as a replica that missed the last older_than_ms ms of
 * writes: the newest acknowledged PUT of the key at least that old. 0, 1
 * when there is none (nothing sent), -1 on a send error. */
static int answer_stale(struct conn *c, int64_t older_than_ms)
{
	struct key_writes *k;
	struct keep_buf b;
	int64_t now = mono_ms();
	int rc = 1, i;

	keep_buf_init(&b, HEAD_MAX + (size_t)BODY_MAX);
	pthread_mutex_lock(&writes_mu);
	for (k = writes; k && strcmp(k->key, c->key) != 0; k = k->next)
		;
	for (i = k ? k->n - 1 : -1; i >= 0; i--)
		if (now - k->w[i].at_ms >= older_than_ms)
			break;
	if (i >= 0) {
		const struct put_seen *w = &k->w[i];

		rc = keep_buf_addf(&b,
				   "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
				   "ETag: %s\r\n%sx-amz-request-id: s3proxy-%lu\r\n"
				   "Connection: %s\r\n\r\n",
				   w->ctype[0] ? w->ctype : "binary/octet-stream", w->len, w->etag,
				   w->meta, c->id, c->req.close ? "close" : "keep-alive");
		if (!rc)
			rc = keep_buf_add(&b, w->body, w->len);
		rc = rc ? -1 : 0;
	}
	pthread_mutex_unlock(&writes_mu);
	if (rc == 0)
		rc = send_all(c->cfd, b.data, b.len) ? -1 : 0;
	keep_buf_release(&b);
	return rc;
}

/* Reset the client connection: RST instead of FIN. */
static void reset_client(struct conn *c)
{
	struct linger l = {.l_onoff = 1, .l_linger = 0};

	setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(c->cfd);
	c->cfd = -1;
}

/* The client closed its side (or the socket failed)? Never blocks. */
static bool client_gone(struct conn *c)
{
	struct pollfd p = {.fd = c->cfd, .events = POLLIN | POLLRDHUP};
	char x;

	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
		return true;
	return recv(c->cfd, &x, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Wait ms for the client to hang up. true if it did (or the proxy stops). */
static bool wait_client_gone(struct conn *c, int64_t ms)
{
	int64_t end = mono_ms() + ms, left;
	struct pollfd p[2] = {{.fd = c->cfd, .events = POLLRDHUP},
			      {.fd = stop_pipe[0], .events = POLLIN}};

	while (ms < 0 || (left = end - mono_ms()) > 0) {
		int w = ms < 0 || left > 1000 ? 1000 : (int)left;
		if (poll(p, 2, w) > 0) {
			if (p[1].revents)
				return true;
			if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR))
				return true;
		}
	}
	return false;
}

static void close_upstream(struct conn *c)
{
	if (c->ufd >= 0)
		close(c->ufd);
	c->ufd = -1;
	keep_buf_reset(&c->uin.b);
	c->uin.pos = 0;
}

/* No Nagle delay (a head and its body go in one send anyway), and a send
 * to a peer that stopped reading gives up after SEND_TIMEOUT_S. */
static void tune_socket(int fd)
{
	struct timeval tv = {.tv_sec = SEND_TIMEOUT_S};
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A connection to the server (a kept one unless the server closed it).
 * 0 or -1. */
static int upstream(struct conn *c)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL, *a;
	int fd = -1;

	if (c->ufd >= 0) {
		struct pollfd p = {.fd = c->ufd, .events = POLLIN | POLLRDHUP};
		if (poll(&p, 1, 0) == 0)
			return 0;  /* idle and open */
		close_upstream(c); /* closed by the server, or stray bytes */
	}
	if (getaddrinfo(cfg.up_host, cfg.up_port, &hints, &ai) != 0)
		return -1;
	for (a = ai; a; a = a->ai_next) {
		struct pollfd p;
		int err = 0;
		socklen_t el = sizeof(err);
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS)
			goto next;
		p.fd = fd;
		p.events = POLLOUT;
		if (poll(&p, 1, UPSTREAM_CONNECT_MS) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err)
			goto next;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		break;
	next:
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return -1;
	tune_socket(fd);
	c->ufd = fd;
	c->uin.fd = fd;
	return 0;
}

/* Send the request to the server and read its reply into c->resp (1xx
 * replies skipped). 0, or -1 when no complete reply came (the upstream
 * connection is then closed). */
static int forward(struct conn *c)
{
	bool head = !strcmp(c->req.method, "HEAD");

	if (upstream(c) || send_all(c->ufd, c->req.raw.data, c->req.raw.len))
		goto fail;
	for (;;) {
		msg_reset(&c->resp);
		reader_compact(&c->uin);
		if (read_head(&c->uin, &c->resp, UPSTREAM_REPLY_MS) != 1 ||
		    parse_head(&c->resp, false))
			goto fail;
		if (c->resp.status >= 100 && c->resp.status < 200)
			continue; /* interim (100 Continue): the client had its own */
		if (!head && c->resp.status != 204 && c->resp.status != 304 &&
		    read_body(&c->uin, &c->resp, true, UPSTREAM_REPLY_MS))
			goto fail;
		break;
	}
	if (c->resp.close)
		close_upstream(c);
	return 0;
fail:
	close_upstream(c);
	return -1;
}

/* Read the next request from the client into c->req. 1, 0 at a clean end
 * of the connection, -1 on an error. */
static int read_request(struct conn *c)
{
	int rc;

	msg_reset(&c->req);
	reader_compact(&c->cin);
	rc = read_head(&c->cin, &c->req, -1);
	if (rc != 1)
		return rc;
	if (parse_head(&c->req, true))
		return -1;
	if (c->req.expect100 && (c->req.chunked || c->req.clen > 0) && c->cin.b.len == c->cin.pos &&
	    send_all(c->cfd, "HTTP/1.1 100 Continue\r\n\r\n", 25))
		return -1;
	/* a request body never runs until close: none without a length */
	return read_body(&c->cin, &c->req, false, 60000) ? -1 : 1;
}

/* Serve one request; false when the client connection must end. */
static bool serve(struct conn *c)
{
	struct rule hit;
	size_t bad;
	int st;

	classify(c);
	bad = rules_decide(c->op, c->key, &hit);
	if (bad) {
		char msg[96];
		snprintf(msg, sizeof(msg), "s3proxy: bad fault rule line %zu", bad);
		return answer(c, 400, "InvalidFaultRule", msg) == 0 && !c->req.close;
	}
	if (hit.act != A_NONE)
		log_event("fault", c->id, c->op, c->key, &hit, -1);
	switch (hit.act) {
	case A_NONE:
		break;
	case A_DELAY:
		if (wait_client_gone(c, hit.arg)) {
			log_event("unsent", c->id, c->op, c->key, &hit, -1);
			return false;
		}
		break;
	case A_LATE:
		if (sleep_or_stop(hit.arg, hit.until))
			return false;
		st = forward(c) ? 0 : c->resp.status;
		log_event("forwarded", c->id, c->op, c->key, &hit, st);
		seen_reply(c, st);
		if (!st || client_gone(c))
			return false;
		return send_all(c->cfd, c->resp.raw.data, c->resp.raw.len) == 0 && !c->req.close &&
		       !c->resp.close;
	case A_LOSE:
	case A_ERROR_AFTER:
	case A_RESET_AFTER:
		st = forward(c) ? 0 : c->resp.status;
		log_event("forwarded", c->id, c->op, c->key, &hit, st);
		seen_reply(c, st);
		if (hit.act == A_RESET_AFTER)
			reset_client(c);
		if (hit.act != A_ERROR_AFTER)
			return false;
		return answer(c, (int)hit.arg, hit.code[0] ? hit.code : code_of((int)hit.arg),
			      "injected by s3proxy after forwarding") == 0 &&
		       !c->req.close;
	case A_ERROR:
		return answer(c, (int)hit.arg, hit.code[0] ? hit.code : code_of((int)hit.arg),
			      "injected by s3proxy") == 0 &&
		       !c->req.close;
	case A_DROP:
		return false;
	case A_RESET:
		reset_client(c);
		return false;
	case A_HANG:
		wait_client_gone(c, -1);
		return false;
	case A_STALE:
		st = answer_stale(c, hit.arg);
		if (st == 0)
			return !c->req.close;
		if (st < 0)
			return false;
		break; /* its write aged out meanwhile: forward */
	}
	if (forward(c)) {
		/* not a fault of ours: say so, the fault log will not */
		fprintf(stderr, "%s: warning: conn %lu: %s %s: no reply from the server\n", prog,
			c->id, c->req.method, c->req.target);
		return false; /* as a broken network would: no answer */
	}
	if (cfg.verbose)
		fprintf(stderr, "%s: conn %lu: %s %s -> %d\n", prog, c->id, c->req.method,
			c->req.target, c->resp.status);
	seen_reply(c, c->resp.status);
	return send_all(c->cfd, c->resp.raw.data, c->resp.raw.len) == 0 && !c->req.close &&
	       !c->resp.close;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	int rc;

	while ((rc = read_request(c)) == 1 && serve(c))
		;
	if (rc < 0 && cfg.verbose && !stopping())
		fprintf(stderr, "%s: conn %lu: bad or cut request\n", prog, c->id);
	if (c->cfd >= 0)
		close(c->cfd);
	c->cfd = -1;
	close_upstream(c);
	atomic_store(&c->done, true);
	return NULL;
}

static void conn_free(struct conn *c)
{
	keep_buf_release(&c->cin.b);
	keep_buf_release(&c->uin.b);
	keep_buf_release(&c->req.raw);
	keep_buf_release(&c->resp.raw);
	free(c);
}

/* Join and free the connections whose threads ended (all when every). */
static void reap(bool every)
{
	struct conn **pp, *c;

	pthread_mutex_lock(&conns_mu);
	for (pp = &conns; (c = *pp);) {
		if (every || atomic_load(&c->done)) {
			*pp = c->next;
			pthread_join(c->thread, NULL);
			conn_free(c);
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&conns_mu);
}

/* ---- main ---------------------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

/* Misuse: one line of why on stderr, exit 100. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (s3proxy -h for usage)\n");
	exit(100);
}

/* http://HOST[:PORT] with no path (a trailing '/' allowed). */
static bool parse_upstream(const char *url)
{
	const char *h, *colon, *end;
	size_t hl;

	if (strncmp(url, "http://", 7) != 0 || strlen(url) >= sizeof(cfg.upstream))
		return false;
	snprintf(cfg.upstream, sizeof(cfg.upstream), "%s", url);
	h = url + 7;
	end = h + strlen(h);
	if (end > h && end[-1] == '/')
		end--;
	if (memchr(h, '/', (size_t)(end - h)) || memchr(h, '@', (size_t)(end - h)))
		return false;
	colon = memchr(h, ':', (size_t)(end - h));
	hl = (size_t)((colon ? colon : end) - h);
	if (hl == 0 || hl >= sizeof(cfg.up_host))
		return false;
	memcpy(cfg.up_host, h, hl);
	cfg.up_host[hl] = '\0';
	if (colon) {
		long long port;
		if (!parse_num(colon + 1, (size_t)(end - colon - 1), 1, 65535, &port))
			return false;
		snprintf(cfg.up_port, sizeof(cfg.up_port), "%lld", port);
	} else {
		snprintf(cfg.up_port, sizeof(cfg.up_port), "80");
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *url = getenv("S3_ENDPOINT");
	long long port = 0, seed = -1;
	bool check = false;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct sigaction act;
	unsigned long next_id = 1;
	int opt, lfd, one = 1;

	opterr = 0;
	while ((opt = getopt(argc, argv, "hp:u:r:l:k:s:vn")) != -1) {
		switch (opt) {
		case 'h':
			fputs(USAGE, stdout);
			return 0;
		case 'p':
			if (!parse_num(optarg, strlen(optarg), 0, 65535, &port))
				usage_error("bad port '%s' (0..65535)", optarg);
			break;
		case 'u':
			url = optarg;
			break;
		case 'r':
			cfg.rules_path = optarg;
			break;
		case 'l':
			cfg.log_path = optarg;
			break;
		case 'k': {
			size_t n = strlen(optarg);
			while (n && optarg[n - 1] == '/')
				n--;
			if (n == 0)
				break;
			if (n + 2 > sizeof(cfg.strip))
				usage_error("key prefix '%s' too long", optarg);
			memcpy(cfg.strip, optarg, n);
			cfg.strip[n] = '/';
			cfg.strip[n + 1] = '\0';
			break;
		}
		case 's':
			if (!parse_num(optarg, strlen(optarg), 0, 999999999999LL, &seed))
				usage_error("bad seed '%s' (0..999999999999)", optarg);
			break;
		case 'v':
			cfg.verbose = true;
			break;
		case 'n':
			check = true;
			break;
		default:
			if (optopt && strchr("pulrks", optopt))
				usage_error("option -%c needs a value", optopt);
			usage_error("unknown option -%c", optopt ? optopt : '?');
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (check) {
		char *buf;
		size_t n, nv, bad;
		struct rule *v;
		const char *why = "";
		int rc;
		if (!cfg.rules_path)
			usage_error("-n needs -r RULES");
		rc = read_file(cfg.rules_path, &buf, &n, NULL);
		if (rc == -ENOENT)
			return 0; /* a missing file: no faults */
		if (rc) {
			fprintf(stderr, "%s: unable to read '%s': %s\n", prog, cfg.rules_path,
				strerror(-rc));
			return 100;
		}
		bad = parse_rules(buf, n, &v, &nv, &why);
		free(buf);
		free(v);
		if (bad) {
			fprintf(stderr, "%s: %s:%zu: bad fault rule: %s\n", prog, cfg.rules_path,
				bad, why);
			return 100;
		}
		printf("rules ok=%zu\n", nv);
		return 0;
	}
	if (!url || !*url)
		usage_error("no server: give -u URL or set S3_ENDPOINT");
	if (!parse_upstream(url))
		usage_error("bad server URL '%s' (want http://HOST[:PORT])", url);
	if (seed < 0) {
		uint64_t s = 0;
		if (getrandom(&s, sizeof(s), 0) != sizeof(s))
			s = (uint64_t)wall_ms();
		seed = (long long)(s % 1000000000000ULL);
	}
	rules.rng = (uint64_t)seed;

	if (pipe2(stop_pipe, O_CLOEXEC) < 0) {
		fprintf(stderr, "%s: fatal: unable to make a pipe: %s\n", prog, strerror(errno));
		return 111;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_signal;
	sigemptyset(&act.sa_mask);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (cfg.log_path) {
		log_fd = open(cfg.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0) {
			fprintf(stderr, "%s: fatal: unable to open '%s': %s\n", prog, cfg.log_path,
				strerror(errno));
			return 100;
		}
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 64) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0) {
		fprintf(stderr, "%s: fatal: unable to listen on 127.0.0.1:%lld: %s\n", prog, port,
			strerror(errno));
		return 111;
	}
	printf("listening port=%u upstream=%s seed=%lld\n", ntohs(sa.sin_port), cfg.upstream, seed);
	fflush(stdout);

	while (!got_signal) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		struct conn *c;
		int cfd;
		if (poll(&p, 1, 200) <= 0) {
			reap(false);
			continue;
		}
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		tune_socket(cfd);
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(cfd);
			continue;
		}
		c->id = next_id++;
		c->cfd = cfd;
		c->ufd = -1;
		reader_init(&c->cin, cfd);
		reader_init(&c->uin, -1);
		msg_init(&c->req);
		msg_init(&c->resp);
		if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
			close(cfd);
			conn_free(c);
			continue;
		}
		pthread_mutex_lock(&conns_mu);
		c->next = conns;
		conns = c;
		pthread_mutex_unlock(&conns_mu);
		reap(false);
	}
	/* stop: wake every thread (they poll the pipe), join, free */
	close(lfd);
	if (write(stop_pipe[1], "x", 1) < 0)
		fprintf(stderr, "%s: warning: unable to stop the threads: %s\n", prog,
			strerror(errno));
	reap(true);
	free(rules.v);
	while (writes) {
		struct key_writes *k = writes;

		writes = k->next;
		for (int i = 0; i < k->n; i++) {
			free(k->w[i].body);
			free(k->w[i].meta);
		}
		free(k);
	}
	if (log_fd >= 0)
		close(log_fd);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	return 0;
}
