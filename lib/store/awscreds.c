/* keep — AWS credentials for the S3 store (awscreds.h, docs/s3.md
 * "Credentials"). */
#include "awscreds.h"
#include "curlfn_internal.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/err.h"
#include "../platform/clock.h"
#include "s3_internal.h"

extern char **environ;

#define IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define IMDS_IPV6_ENDPOINT "http://[fd00:ec2::254]"
#define IMDS_TOKEN_TTL_S "21600"
#define IMDS_REPLY_MAX 16384 /* bytes: a token or a role listing */
#define IMDS_ROLE_MAX 128    /* bytes: an IAM role name */

/* ---- small helpers ---------------------------------------------------------- */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void wipe_free(char **p)
{
	if (*p) {
		OPENSSL_cleanse(*p, strlen(*p));
		free(*p);
		*p = NULL;
	}
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*e = '\0';
	return s;
}

/* A key id, secret or token: 1..KEEP_AWS_SECRET_MAX printable ASCII bytes,
 * no space (it goes into a header and a signature). */
static bool secret_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (s[n] <= 0x20 || s[n] >= 0x7f || n >= KEEP_AWS_SECRET_MAX)
			return false;
	return n > 0;
}

/* ---- shared config and credentials files ---------------------------------- */

/* The profile a section header names, or NULL when it names none (a
 * config file's [sso-session x], [services x], or a plain [x] there). */
static const char *section_profile(char *name, bool config_file)
{
	if (!config_file)
		return name;
	if (strcmp(name, "default") == 0)
		return name;
	if (strncmp(name, "profile", 7) == 0 && (name[7] == ' ' || name[7] == '\t'))
		return trim(name + 8);
	return NULL;
}

/* keep_aws_profile_parse; headless: the lines before any section belong
 * to the profile (s3.credentials_file's [default], docs/s3.md). */
static int profile_parse(char *data, size_t len, bool config_file, bool headless,
			 const char *profile, struct keep_aws_profile *out, char *err,
			 size_t errlen)
{
	char *line, *next;
	bool in = headless, have_key = false;
	size_t lineno = 0;

	memset(out, 0, sizeof(*out));
	data[len] = '\0';
	if (strlen(data) != len) {
		snprintf(err, errlen, "a NUL byte");
		return KEEP_ERR_PARSE;
	}
	for (line = data; line; line = next) {
		char *eq, *name, *val, **slot = NULL;
		bool indented;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strlen(line) > KEEP_AWS_LINE_MAX) {
			snprintf(err, errlen, "line %zu: over %d bytes", lineno, KEEP_AWS_LINE_MAX);
			return KEEP_ERR_TOOBIG;
		}
		indented = *line == ' ' || *line == '\t';
		line = trim(line);
		if (*line == '\0' || *line == '#' || *line == ';')
			continue;
		if (*line == '[') {
			char *end = strchr(line, ']');
			const char *p;

			if (!end || *trim(end + 1) != '\0') {
				snprintf(err, errlen, "line %zu: bad section line", lineno);
				return KEEP_ERR_PARSE;
			}
			*end = '\0';
			p = section_profile(trim(line + 1), config_file);
			in = p && strcmp(p, profile) == 0;
			have_key = false;
			if (in) {
				if (out->found) {
					snprintf(err, errlen,
						 "line %zu: profile '%s' a second time", lineno,
						 profile);
					return KEEP_ERR_PARSE;
				}
				out->found = true;
			}
			continue;
		}
		if (indented && have_key)
			continue; /* a continuation: a nested setting, not ours */
		eq = strchr(line, '=');
		if (!eq) {
			snprintf(err, errlen, "line %zu: not a 'name = value' line", lineno);
			return KEEP_ERR_PARSE;
		}
		*eq = '\0';
		name = trim(line);
		val = trim(eq + 1);
		if (*name == '\0') {
			snprintf(err, errlen, "line %zu: no name before '='", lineno);
			return KEEP_ERR_PARSE;
		}
		have_key = true;
		if (!in)
			continue;
		out->found = true; /* a section, or the lines before any (headless) */
		for (eq = name; *eq; eq++)
			*eq = (char)tolower((unsigned char)*eq);
		if (strcmp(name, "aws_access_key_id") == 0)
			slot = &out->access_key;
		else if (strcmp(name, "aws_secret_access_key") == 0)
			slot = &out->secret_key;
		else if (strcmp(name, "aws_session_token") == 0)
			slot = &out->session_token;
		else if (strcmp(name, "credential_process") == 0)
			slot = &out->credential_process;
		else if (strcmp(name, "region") == 0)
			slot = &out->region;
		else if (strcmp(name, "role_arn") == 0)
			slot = &out->role_arn;
		else if (strcmp(name, "web_identity_token_file") == 0)
			slot = &out->web_identity_token_file;
		else if (strcmp(name, "sso_start_url") == 0 || strcmp(name, "sso_session") == 0)
			slot = &out->sso;
		if (!slot)
			continue;
		if (*slot) {
			snprintf(err, errlen, "line %zu: '%s' a second time in profile '%s'",
				 lineno, name, profile);
			return KEEP_ERR_PARSE;
		}
		*slot = val;
	}
	return 0;
}

int keep_aws_profile_parse(char *data, size_t len, bool config_file, const char *profile,
			   struct keep_aws_profile *out, char *err, size_t errlen)
{
	return profile_parse(data, len, config_file, false, profile, out, err, errlen);
}

/* ---- credential_process command line --------------------------------------- */

int keep_aws_split_command(const char *cmd, char *buf, char **argv, int maxargs, int *argc)
{
	const char *p = cmd;
	char *o = buf;
	int n = 0;

	*argc = 0;
	for (;;) {
		bool word = false;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (n >= maxargs - 1)
			return KEEP_ERR_TOOBIG;
		argv[n] = o;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			word = true;
			if (*p == '\'') {
				p++;
				while (*p && *p != '\'')
					*o++ = *p++;
				if (!*p)
					return KEEP_ERR_PARSE; /* unclosed ' */
				p++;
			} else if (*p == '"') {
				p++;
				while (*p && *p != '"') {
					if (*p == '\\' && (p[1] == '"' || p[1] == '\\' ||
							   p[1] == '$' || p[1] == '`')) {
						p++;
					} else if (*p == '\\' && p[1] == '\n') {
						p += 2;
						continue;
					}
					*o++ = *p++;
				}
				if (!*p)
					return KEEP_ERR_PARSE; /* unclosed " */
				p++;
			} else if (*p == '\\') {
				if (!p[1])
					return KEEP_ERR_PARSE; /* trailing backslash */
				if (p[1] == '\n') {
					p += 2;
					continue;
				}
				*o++ = p[1];
				p += 2;
			} else {
				*o++ = *p++;
			}
		}
		if (word) {
			*o++ = '\0';
			n++;
		}
	}
	argv[n] = NULL;
	*argc = n;
	return n > 0 ? 0 : KEEP_ERR_PARSE;
}

/* ---- time ---------------------------------------------------------------- */

/* n decimal digits at *p into *v; advances *p. */
static bool digits(const char **p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return false;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int keep_aws_parse_time(const char *s, int64_t *out_ms)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = s;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0, ms = 0, i;
	int64_t days;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d) || (*p != 'T' && *p != 't') || !(p++, digits(&p, 2, &h)) ||
	    *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &sec))
		return KEEP_ERR_PARSE;
	if (*p == '.') {
		int scale = 100, nd = 0;

		p++;
		while (*p >= '0' && *p <= '9') {
			if (nd++ < 3)
				ms += (*p - '0') * scale;
			scale /= 10;
			p++;
		}
		if (nd == 0 || nd > 9)
			return KEEP_ERR_PARSE;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (!digits(&p, 2, &oh))
			return KEEP_ERR_PARSE;
		if (*p == ':')
			p++;
		if (!digits(&p, 2, &om) || oh > 23 || om > 59)
			return KEEP_ERR_PARSE;
	} else {
		return KEEP_ERR_PARSE;
	}
	if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && leap(y)) || h > 23 || mi > 59 || sec > 60)
		return KEEP_ERR_PARSE;
	days = 0;
	for (i = 1970; i < y; i++)
		days += leap(i) ? 366 : 365;
	for (i = 1; i < mo; i++)
		days += mdays[i - 1] + (i == 2 && leap(y));
	days += d - 1;
	*out_ms = (((days * 24 + h) * 60 + mi) * 60 + sec) * 1000 + ms -
		  (int64_t)sign * (oh * 60 + om) * 60000;
	return 0;
}

/* ---- a strict JSON object of scalars (libjansson) -------------------------- */

/* A JSON object of scalar members, decoded by jansson (awscreds.h gives
 * the rules). The document is owned; doc_release wipes its string values
 * in place before jansson frees them (its lexer's own token buffers are
 * freed unwiped: the one copy of a secret this code cannot reach). */
struct jobj {
	json_t *doc;
};

static void jobj_release(struct jobj *o)
{
	const char *k;
	json_t *v;

	if (!o->doc)
		return;
	json_object_foreach(o->doc, k, v)
	{
		if (json_is_string(v))
			OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
	}
	json_decref(o->doc);
	o->doc = NULL;
}

/* jansson's error classes, in our own words: an error never quotes the
 * input (jansson's text does: "near '...'"). */
static const char *jerror_why(enum json_error_code c)
{
	switch (c) {
	case json_error_invalid_utf8:
		return "not valid UTF-8";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "a NUL in a string";
	case json_error_duplicate_key:
		return "a member name twice";
	case json_error_end_of_input_expected:
		return "bytes after the object";
	case json_error_premature_end_of_input:
		return "the input ends inside the object";
	case json_error_numeric_overflow:
		return "a number out of range";
	case json_error_out_of_memory:
		return "out of memory";
	default:
		return "malformed JSON";
	}
}

/* Parse one JSON object of scalar members (awscreds.h): jansson with
 * duplicate names refused and NUL (\u0000) refused, then this code's own
 * bounds (members, name and string lengths) and the scalar rule. On
 * failure *o is empty and err says why, at which byte. */
static int jparse(const char *s, size_t len, struct jobj *o, char *err, size_t errlen)
{
	json_error_t je;
	const char *k;
	json_t *v;
	size_t i = 0, n = 0;

	o->doc = NULL;
	if (len > KEEP_AWS_JSON_MAX) {
		snprintf(err, errlen, "over %d bytes", KEEP_AWS_JSON_MAX);
		return KEEP_ERR_TOOBIG;
	}
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	if (i >= len || s[i] != '{') {
		snprintf(err, errlen, "byte %zu: not a JSON object", i + 1);
		return KEEP_ERR_PARSE;
	}
	o->doc = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
	if (!o->doc) {
		enum json_error_code c = json_error_code(&je);

		snprintf(err, errlen, "byte %d: %s", je.position > 0 ? je.position : 1,
			 jerror_why(c));
		return c == json_error_out_of_memory ? KEEP_ERR_NOMEM : KEEP_ERR_PARSE;
	}
	if (!json_is_object(o->doc)) { /* not reached: the input starts with '{' */
		jobj_release(o);
		snprintf(err, errlen, "byte %zu: not a JSON object", i + 1);
		return KEEP_ERR_PARSE;
	}
	json_object_foreach(o->doc, k, v)
	{
		const char *why = NULL;
		int rc = KEEP_ERR_TOOBIG;

		if (++n > KEEP_AWS_JSON_MEMBERS)
			why = "too many members";
		else if (strlen(k) > KEEP_AWS_JSON_KEY_MAX)
			why = "a member name over its bound";
		else if (json_is_object(v) || json_is_array(v))
			why = "a nested object or array", rc = KEEP_ERR_PARSE;
		else if (json_is_string(v) && json_string_length(v) > KEEP_AWS_SECRET_MAX)
			why = "a string over its bound";
		if (why) {
			jobj_release(o);
			snprintf(err, errlen, "%s", why);
			return rc;
		}
	}
	return 0;
}

void keep_aws_json_creds_release(struct keep_aws_json_creds *c)
{
	wipe_free(&c->access_key);
	wipe_free(&c->secret_key);
	wipe_free(&c->token);
	c->expires_at_ms = 0;
}

/* Copy the string member name of o into *dst (malloc'd; wiped when
 * released). A null or absent member is NULL when not required. */
static int take(struct jobj *o, const char *name, bool required, char **dst, char *err,
		size_t errlen)
{
	json_t *m = json_object_get(o->doc, name);

	*dst = NULL;
	if (!m || (json_is_null(m) && !required)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "no \"%s\"", name);
		return KEEP_ERR_PARSE;
	}
	if (!json_is_string(m)) {
		snprintf(err, errlen, "\"%s\" is not a string", name);
		return KEEP_ERR_PARSE;
	}
	*dst = strndup(json_string_value(m), json_string_length(m));
	if (!*dst) {
		snprintf(err, errlen, "out of memory");
		return KEEP_ERR_NOMEM;
	}
	return 0;
}

int keep_aws_parse_creds_json(const char *json, size_t len, bool imds,
			      struct keep_aws_json_creds *out, char *err, size_t errlen)
{
	struct jobj o;
	json_t *m;
	char *exp = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = jparse(json, len, &o, err, errlen);
	if (rc)
		return rc;
	if (imds) {
		m = json_object_get(o.doc, "Code");
		if (m && (!json_is_string(m) || strcmp(json_string_value(m), "Success") != 0)) {
			snprintf(err, errlen, "\"Code\" is not \"Success\"");
			rc = KEEP_ERR_PARSE;
			goto out;
		}
	} else {
		m = json_object_get(o.doc, "Version");
		if (!m || !json_is_integer(m) || json_integer_value(m) != 1) {
			snprintf(err, errlen, "\"Version\" is not the number 1");
			rc = KEEP_ERR_PARSE;
			goto out;
		}
	}
	rc = take(&o, "AccessKeyId", true, &out->access_key, err, errlen);
	if (!rc)
		rc = take(&o, "SecretAccessKey", true, &out->secret_key, err, errlen);
	if (!rc)
		rc = take(&o, imds ? "Token" : "SessionToken", imds, &out->token, err, errlen);
	if (!rc)
		rc = take(&o, "Expiration", imds, &exp, err, errlen);
	if (rc)
		goto out;
	if (!secret_valid(out->access_key) || !secret_valid(out->secret_key) ||
	    (out->token && !secret_valid(out->token))) {
		snprintf(err, errlen,
			 "a key id, secret or token that is empty or not printable ASCII");
		rc = KEEP_ERR_PARSE;
		goto out;
	}
	if (exp && keep_aws_parse_time(exp, &out->expires_at_ms) != 0) {
		snprintf(err, errlen, "\"Expiration\" is not an ISO 8601 UTC time");
		rc = KEEP_ERR_PARSE;
		goto out;
	}
out:
	free(exp);
	jobj_release(&o);
	if (rc)
		keep_aws_json_creds_release(out);
	return rc;
}

int64_t keep_aws_refresh_at_ms(int64_t fetched_at_ms, int64_t expires_at_ms)
{
	int64_t life, before;

	if (expires_at_ms == 0)
		return INT64_MAX;
	if (expires_at_ms <= fetched_at_ms)
		return fetched_at_ms;
	life = expires_at_ms - fetched_at_ms;
	before = life / 2 < KEEP_AWS_REFRESH_BEFORE_MS ? life / 2 : KEEP_AWS_REFRESH_BEFORE_MS;
	return expires_at_ms - before;
}

/* ---- sources --------------------------------------------------------------- */

enum src_kind {
	SRC_STATIC = 0,
	SRC_PROCESS,
	SRC_IMDS,
};

struct keep_awscreds {
	enum src_kind kind;
	char *key;   /* registry key of a dynamic source (owned), NULL for static */
	char *label; /* keep_awscreds_source (owned) */
	pthread_mutex_t mu;
	int refs; /* under the registry lock */
	struct keep_awscreds *next;
	/* under mu: */
	struct keep_s3_creds creds;
	int64_t expires_at_ms; /* 0 never */
	int64_t refresh_at_ms;
	int64_t retry_at_ms;
	int64_t retry_ms;
	uint64_t serial;
	char last_err[256];
	/* process */
	char *command; /* the command line (owned) */
	int64_t timeout_ms;
	/* imds */
	char *endpoint; /* scheme://host[:port], no trailing '/' (owned) */
	long imds_timeout_ms;
	int imds_attempts;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct keep_awscreds *reg_head;

static void creds_release(struct keep_s3_creds *c)
{
	wipe_free(&c->access_key);
	wipe_free(&c->secret_key);
	wipe_free(&c->token);
}

static void src_free(struct keep_awscreds *c)
{
	if (!c)
		return;
	creds_release(&c->creds);
	pthread_mutex_destroy(&c->mu);
	free(c->key);
	free(c->label);
	free(c->command);
	free(c->endpoint);
	free(c);
}

static struct keep_awscreds *src_new(enum src_kind kind, const char *label)
{
	struct keep_awscreds *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->kind = kind;
	c->refs = 1;
	c->label = strdup(label);
	if (!c->label || pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c->label);
		free(c);
		return NULL;
	}
	return c;
}

/* Move j's strings into c's credentials (j emptied). */
static void set_creds(struct keep_awscreds *c, struct keep_aws_json_creds *j, int64_t now)
{
	creds_release(&c->creds);
	c->creds.access_key = j->access_key;
	c->creds.secret_key = j->secret_key;
	c->creds.token = j->token;
	j->access_key = j->secret_key = j->token = NULL;
	c->expires_at_ms = j->expires_at_ms;
	c->refresh_at_ms = keep_aws_refresh_at_ms(now, j->expires_at_ms);
	c->retry_ms = KEEP_AWS_RETRY_MIN_MS;
	c->retry_at_ms = 0;
	c->serial++;
}

/* Run the credential_process command and parse its output. */
static int run_process(struct keep_awscreds *c, struct keep_aws_json_creds *j, char *err,
		       size_t errlen)
{
	char *argv[KEEP_AWS_PROCESS_ARGS], *words, *out = NULL;
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	int64_t deadline;
	int argc, p[2], rc, status = 0;
	pid_t pid;
	bool timed_out = false, toobig = false;
	char why[160];

	words = malloc(strlen(c->command) + 1);
	if (!words)
		return KEEP_ERR_NOMEM;
	rc = keep_aws_split_command(c->command, words, argv, KEEP_AWS_PROCESS_ARGS, &argc);
	if (rc) {
		snprintf(err, errlen, "%s: the command does not parse (%s)", c->label,
			 rc == KEEP_ERR_TOOBIG ? "too many words" : "unclosed quote or empty");
		free(words);
		return KEEP_ERR_INVAL;
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "%s: pipe: %s", c->label, strerror(errno));
		free(words);
		return KEEP_ERR_STORE;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		snprintf(err, errlen, "%s: unable to run '%s': %s", c->label, argv[0],
			 strerror(rc));
		close(p[0]);
		free(words);
		return KEEP_ERR_INVAL;
	}
	out = malloc(KEEP_AWS_JSON_MAX + 1);
	deadline = keep_mono_ms() + c->timeout_ms;
	for (;;) {
		struct pollfd pfd = {p[0], POLLIN, 0};
		int64_t left = deadline - keep_mono_ms();
		ssize_t got;

		if (left <= 0) {
			timed_out = true;
			break;
		}
		rc = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			continue;
		if (!out) {
			toobig = true; /* no memory: treated as refused output */
			break;
		}
		got = read(p[0], out + len, KEEP_AWS_JSON_MAX + 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
		if (len > KEEP_AWS_JSON_MAX) {
			toobig = true;
			break;
		}
	}
	close(p[0]);
	if (timed_out || toobig)
		kill(pid, SIGKILL);
	/* its stdout is closed; it must still end within the bound */
	for (;;) {
		pid_t w = waitpid(pid, &status, timed_out || toobig ? 0 : WNOHANG);
		struct timespec ts = {0, 10 * 1000000L};

		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (w == 0 && keep_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			timed_out = true;
		} else if (w == 0) {
			nanosleep(&ts, NULL);
		}
	}
	free(words);
	if (timed_out) {
		snprintf(err, errlen, "%s: the command did not finish in %lld ms: killed", c->label,
			 (long long)c->timeout_ms);
		rc = KEEP_ERR_STORE;
	} else if (toobig) {
		snprintf(err, errlen, "%s: the command printed more than %d bytes", c->label,
			 KEEP_AWS_JSON_MAX);
		rc = KEEP_ERR_INVAL;
	} else if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "%s: the command was killed by signal %d", c->label,
			 WTERMSIG(status));
		rc = KEEP_ERR_STORE;
	} else if (WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "%s: the command exited with status %d", c->label,
			 WEXITSTATUS(status));
		rc = KEEP_ERR_STORE;
	} else if ((rc = keep_aws_parse_creds_json(out, len, false, j, why, sizeof(why))) != 0) {
		snprintf(err, errlen, "%s: the command's output is not credentials: %s", c->label,
			 why);
		rc = rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_INVAL;
	}
	if (out) {
		OPENSSL_cleanse(out, KEEP_AWS_JSON_MAX + 1);
		free(out);
	}
	return rc;
}

/* ---- IMDSv2 ------------------------------------------------------------------ */

struct imds_body {
	char *data;
	size_t len, max;
	bool toobig;
};

static size_t imds_write(char *p, size_t size, size_t n, void *ud)
{
	struct imds_body *b = ud;
	size_t len = size * n;

	if (b->len + len > b->max) {
		b->toobig = true;
		return 0;
	}
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = '\0';
	return len;
}

/* One metadata request: PUT (token NULL: the token request) or GET with the
 * token. *status 0 when no answer came (after every attempt). */
static int imds_request(struct keep_awscreds *c, const char *path, const char *token,
			struct imds_body *b, long *status, char *cerr)
{
	struct curl_slist *h = NULL;
	char url[1024], hdr[IMDS_REPLY_MAX + 64];
	CURL *e;
	int attempt;
	CURLcode cc = CURLE_OK;

	*status = 0;
	cerr[0] = '\0';
	snprintf(url, sizeof(url), "%s%s", c->endpoint, path);
	if (token)
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", token);
	else
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token-ttl-seconds: %s",
			 IMDS_TOKEN_TTL_S);
	h = curl_slist_append(NULL, hdr);
	OPENSSL_cleanse(hdr, sizeof(hdr));
	e = curl_easy_init();
	if (!h || !e) {
		curl_slist_free_all(h);
		if (e)
			curl_easy_cleanup(e);
		return KEEP_ERR_NOMEM;
	}
	for (attempt = 0; attempt < c->imds_attempts; attempt++) {
		b->len = 0;
		b->toobig = false;
		b->data[0] = '\0';
		curl_easy_reset(e);
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(e, CURLOPT_NOPROXY, "*"); /* never through a proxy */
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->imds_timeout_ms);
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->imds_timeout_ms);
		curl_easy_setopt(e, CURLOPT_USERAGENT, "keep-s3/1");
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, imds_write);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
		if (!token) {
			curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
			curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		}
		cc = curl_easy_perform(e);
		*status = 0;
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
		if (cc == CURLE_OK && *status < 500)
			break;
		if (cc == CURLE_WRITE_ERROR && b->toobig)
			break;
	}
	if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && b->toobig)) {
		snprintf(cerr, 128, "%s", curl_easy_strerror(cc));
		*status = 0;
	}
	curl_easy_cleanup(e);
	curl_slist_free_all(h);
	return 0;
}

/* The IMDSv2 flow: token, role, credentials. *unreachable: the token
 * request got no answer at all (no metadata service here). */
static int imds_fetch(struct keep_awscreds *c, struct keep_aws_json_creds *j, bool *unreachable,
		      char *err, size_t errlen)
{
	struct imds_body b = {NULL, 0, 0, false};
	char token[IMDS_REPLY_MAX + 1], role[IMDS_ROLE_MAX + 1], path[256], cerr[128], why[160];
	long status;
	size_t n;
	int rc = 0;

	*unreachable = false;
	token[0] = '\0';
	b.max = KEEP_AWS_JSON_MAX;
	b.data = malloc(b.max + 1);
	if (!b.data)
		return KEEP_ERR_NOMEM;
	b.data[0] = '\0';
	b.max = IMDS_REPLY_MAX;
	rc = imds_request(c, "/latest/api/token", NULL, &b, &status, cerr);
	if (rc)
		goto out;
	if (status == 0) {
		*unreachable = true;
		snprintf(err, errlen, "EC2 instance metadata at %s: unreachable (%s)", c->endpoint,
			 cerr);
		rc = KEEP_ERR_STORE;
		goto out;
	}
	if (status != 200) {
		snprintf(err, errlen,
			 "EC2 instance metadata at %s: the IMDSv2 token request got HTTP %ld",
			 c->endpoint, status);
		rc = status >= 500 ? KEEP_ERR_STORE : KEEP_ERR_INVAL;
		goto out;
	}
	if (b.toobig || !secret_valid(b.data)) {
		snprintf(err, errlen, "EC2 instance metadata at %s: not an IMDSv2 token",
			 c->endpoint);
		rc = KEEP_ERR_STORE;
		goto out;
	}
	memcpy(token, b.data, b.len + 1);
	rc = imds_request(c, "/latest/meta-data/iam/security-credentials/", token, &b, &status,
			  cerr);
	if (rc)
		goto out;
	if (status == 404) {
		snprintf(err, errlen, "EC2 instance metadata at %s: no IAM role (instance profile)",
			 c->endpoint);
		rc = KEEP_ERR_INVAL;
		goto out;
	}
	n = strcspn(b.data, "\r\n");
	if (status != 200 || b.toobig || n == 0 || n > IMDS_ROLE_MAX ||
	    strspn(b.data,
		   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+=,.@_-") < n) {
		if (status == 0)
			snprintf(err, errlen, "EC2 instance metadata at %s: %s", c->endpoint, cerr);
		else if (status != 200)
			snprintf(err, errlen,
				 "EC2 instance metadata at %s: the role request got HTTP %ld",
				 c->endpoint, status);
		else
			snprintf(err, errlen, "EC2 instance metadata at %s: not a role name",
				 c->endpoint);
		rc = KEEP_ERR_STORE;
		goto out;
	}
	memcpy(role, b.data, n);
	role[n] = '\0';
	snprintf(path, sizeof(path), "/latest/meta-data/iam/security-credentials/%s", role);
	b.max = KEEP_AWS_JSON_MAX;
	rc = imds_request(c, path, token, &b, &status, cerr);
	if (rc)
		goto out;
	if (status != 200 || b.toobig) {
		if (status == 0)
			snprintf(err, errlen, "EC2 instance metadata at %s: %s", c->endpoint, cerr);
		else
			snprintf(
			    err, errlen,
			    "EC2 instance metadata at %s: the credentials of role %s: HTTP %ld",
			    c->endpoint, role, status);
		rc = KEEP_ERR_STORE;
		goto out;
	}
	rc = keep_aws_parse_creds_json(b.data, b.len, true, j, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "EC2 instance metadata at %s: the credentials of role %s: %s",
			 c->endpoint, role, why);
		rc = rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_STORE;
		goto out;
	}
	if (c->serial == 0) {
		/* named once, before the source is shared (readers take no lock) */
		char *l;

		snprintf(why, sizeof(why), "EC2 instance metadata (role %s)", role);
		l = strdup(why);
		if (l) {
			free(c->label);
			c->label = l;
		}
	}
out:
	OPENSSL_cleanse(token, sizeof(token));
	OPENSSL_cleanse(b.data, KEEP_AWS_JSON_MAX + 1);
	free(b.data);
	return rc;
}

/* Fetch c's credentials now (under c->mu). */
static int fetch(struct keep_awscreds *c, int64_t now, bool *unreachable, char *err, size_t errlen)
{
	struct keep_aws_json_creds j;
	int rc;

	memset(&j, 0, sizeof(j));
	*unreachable = false;
	rc = c->kind == SRC_PROCESS ? run_process(c, &j, err, errlen)
				    : imds_fetch(c, &j, unreachable, err, errlen);
	if (rc)
		return rc;
	if (j.expires_at_ms && j.expires_at_ms <= now) {
		snprintf(err, errlen, "%s: the credentials it gave expired already", c->label);
		keep_aws_json_creds_release(&j);
		return KEEP_ERR_STORE;
	}
	set_creds(c, &j, now);
	return 0;
}

/* ---- the chain ------------------------------------------------------------- */

/* A shared file read whole: data (owned, len + 1 bytes), its mode. */
struct aws_file {
	char path[4096];
	bool named; /* by the environment (else the default under $HOME) */
	bool exists;
	char *data;
	size_t len;
	mode_t mode;
	struct keep_aws_profile prof;
};

static int read_file(struct aws_file *f, const char *what, char *err, size_t errlen)
{
	struct stat st;
	ssize_t got;
	int fd;

	f->exists = false;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* absent is empty; so is a default file we may not open (a
		 * service with ProtectHome=yes), not one the environment named */
		if (errno == ENOENT || errno == ENOTDIR ||
		    (!f->named && (errno == EACCES || errno == EPERM)))
			return 0;
		snprintf(err, errlen, "unable to open %s '%s': %s", what, f->path, strerror(errno));
		return KEEP_ERR_INVAL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s '%s' is not a regular file", what, f->path);
		close(fd);
		return KEEP_ERR_INVAL;
	}
	if (st.st_size > KEEP_AWS_FILE_MAX) {
		snprintf(err, errlen, "%s '%s' is larger than %d bytes", what, f->path,
			 KEEP_AWS_FILE_MAX);
		close(fd);
		return KEEP_ERR_INVAL;
	}
	f->data = malloc(KEEP_AWS_FILE_MAX + 1);
	if (!f->data) {
		close(fd);
		return KEEP_ERR_NOMEM;
	}
	f->len = 0;
	while (f->len < KEEP_AWS_FILE_MAX) {
		got = read(fd, f->data + f->len, KEEP_AWS_FILE_MAX - f->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, errlen, "unable to read %s '%s': %s", what, f->path,
				 strerror(errno));
			close(fd);
			return KEEP_ERR_INVAL;
		}
		if (got == 0)
			break;
		f->len += (size_t)got;
	}
	close(fd);
	f->exists = true;
	f->mode = st.st_mode;
	return 0;
}

static void file_release(struct aws_file *f)
{
	if (f->data) {
		OPENSSL_cleanse(f->data, KEEP_AWS_FILE_MAX + 1);
		free(f->data);
		f->data = NULL;
	}
}

/* A file keep takes a secret from: refused when group or other may read or
 * write it; one it takes a command from: when they may write it. */
static int mode_ok(const struct aws_file *f, const char *what, bool secret, char *err,
		   size_t errlen)
{
	mode_t bad = secret ? (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH) : (S_IWGRP | S_IWOTH);

	if (!(f->mode & bad))
		return 0;
	snprintf(err, errlen, "%s '%s' is %s by group or others (mode %04o): refused; chmod %s it",
		 what, f->path, secret ? "readable or writable" : "writable",
		 (unsigned)(f->mode & 07777), secret ? "600" : "go-w");
	return KEEP_ERR_PERM;
}

/* ---- s3.credentials_file (s3_internal.h) ---------------------------------- */

void keep_s3_creds_release(struct keep_s3_creds *c)
{
	wipe_free(&c->access_key);
	wipe_free(&c->secret_key);
	wipe_free(&c->token);
}

/* A copy of val, or NULL (out of memory) */
static char *dup_or_null(const char *val, int *rc)
{
	char *p = val ? strdup(val) : NULL;

	if (val && !p)
		*rc = KEEP_ERR_NOMEM;
	return p;
}

int keep_s3_creds_read(const char *path, struct keep_s3_creds *c, char *err, size_t errlen)
{
	struct aws_file f;
	char why[160];
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&f, 0, sizeof(f));
	if (snprintf(f.path, sizeof(f.path), "%s", path) >= (int)sizeof(f.path)) {
		snprintf(err, errlen, "credentials file path too long");
		return KEEP_ERR_IO;
	}
	f.named = true;
	rc = read_file(&f, "credentials file", err, errlen);
	if (rc == 0 && !f.exists) {
		snprintf(err, errlen, "unable to open credentials file '%s': %s", path,
			 strerror(ENOENT));
		rc = KEEP_ERR_IO;
	}
	if (rc) {
		rc = rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_IO;
		goto out;
	}
	if ((rc = mode_ok(&f, "credentials file", true, err, errlen)))
		goto out;
	/* the one parser of AWS files; the lines before any section are
	 * [default] too (docs/s3.md) */
	rc = profile_parse(f.data, f.len, false, true, "default", &f.prof, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "credentials file '%s': %s", path, why);
		goto out;
	}
	if (!f.prof.access_key || !*f.prof.access_key || !f.prof.secret_key ||
	    !*f.prof.secret_key) {
		snprintf(err, errlen,
			 "credentials file '%s' has no aws_access_key_id and "
			 "aws_secret_access_key in [default]",
			 path);
		rc = KEEP_ERR_PARSE;
		goto out;
	}
	c->access_key = dup_or_null(f.prof.access_key, &rc);
	c->secret_key = dup_or_null(f.prof.secret_key, &rc);
	c->token = dup_or_null(f.prof.session_token, &rc);
out:
	file_release(&f);
	if (rc)
		keep_s3_creds_release(c);
	return rc;
}

static int set_static(struct keep_awscreds **out, const char *label, const char *ak, const char *sk,
		      const char *tok, char *err, size_t errlen)
{
	struct keep_awscreds *c;

	if (!secret_valid(ak) || !secret_valid(sk) || (tok && *tok && !secret_valid(tok))) {
		snprintf(err, errlen,
			 "%s: a key id, secret or token that is empty or not printable ASCII",
			 label);
		return KEEP_ERR_INVAL;
	}
	c = src_new(SRC_STATIC, label);
	if (!c)
		return KEEP_ERR_NOMEM;
	c->creds.access_key = strdup(ak);
	c->creds.secret_key = strdup(sk);
	c->creds.token = tok && *tok ? strdup(tok) : NULL;
	if (!c->creds.access_key || !c->creds.secret_key || (tok && *tok && !c->creds.token)) {
		src_free(c);
		return KEEP_ERR_NOMEM;
	}
	c->refresh_at_ms = INT64_MAX;
	c->serial = 1;
	*out = c;
	return 0;
}

/* A dynamic source: the registered one with the same key, or a new one
 * (fetched now). */
static int dynamic(struct keep_awscreds *proto, struct keep_awscreds **out, bool *unreachable,
		   char *err, size_t errlen)
{
	struct keep_awscreds *c;
	int rc;

	*unreachable = false;
	pthread_mutex_lock(&reg_mu);
	for (c = reg_head; c; c = c->next)
		if (strcmp(c->key, proto->key) == 0)
			break;
	if (c) {
		c->refs++;
		pthread_mutex_unlock(&reg_mu);
		src_free(proto);
		*out = c;
		return 0;
	}
	rc = fetch(proto, keep_wall_ms(), unreachable, err, errlen);
	if (rc) {
		pthread_mutex_unlock(&reg_mu);
		src_free(proto);
		return rc;
	}
	proto->next = reg_head;
	reg_head = proto;
	pthread_mutex_unlock(&reg_mu);
	*out = proto;
	return 0;
}

static char *join3(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 3;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s|%s|%s", a, b, c);
	return s;
}

static bool env_true(const char *name)
{
	const char *v = env(name);

	return v && strcasecmp(v, "true") == 0;
}

/* An integer environment variable within [lo, hi], or def when unset. */
static int env_int(const char *name, long lo, long hi, long def, long *out, char *err,
		   size_t errlen)
{
	const char *v = env(name);
	char *end;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	*out = strtol(v, &end, 10);
	if (errno || *end || end == v || *out < lo || *out > hi) {
		snprintf(err, errlen, "%s must be an integer %ld..%ld", name, lo, hi);
		return KEEP_ERR_INVAL;
	}
	return 0;
}

/* Read and parse both shared files for profile, once (a missing file is an
 * empty one); a profile named by AWS_PROFILE must be in one of them. */
static int load_profiles(struct aws_file *cf, struct aws_file *kf, const char *profile,
			 bool explicit_profile, char *err, size_t errlen)
{
	char perr[160];
	int rc;

	if (cf->data || kf->data || cf->exists || kf->exists)
		return 0; /* done already */
	if (cf->path[0] && (rc = read_file(cf, "shared credentials file", err, errlen)))
		return rc;
	if (kf->path[0] && (rc = read_file(kf, "shared config file", err, errlen)))
		return rc;
	if (cf->exists && (rc = keep_aws_profile_parse(cf->data, cf->len, false, profile, &cf->prof,
						       perr, sizeof(perr)))) {
		snprintf(err, errlen, "shared credentials file '%s': %s", cf->path, perr);
		return rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_INVAL;
	}
	if (kf->exists && (rc = keep_aws_profile_parse(kf->data, kf->len, true, profile, &kf->prof,
						       perr, sizeof(perr)))) {
		snprintf(err, errlen, "shared config file '%s': %s", kf->path, perr);
		return rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_INVAL;
	}
	if (explicit_profile && !cf->prof.found && !kf->prof.found) {
		snprintf(err, errlen, "profile '%s' (AWS_PROFILE) is in neither '%s' nor '%s'",
			 profile, cf->path[0] ? cf->path : "~/.aws/credentials",
			 kf->path[0] ? kf->path : "~/.aws/config");
		return KEEP_ERR_INVAL;
	}
	return 0;
}

int keep_awscreds_open(const char *credentials_file, struct keep_awscreds **out, char *region,
		       size_t regionlen, char *err, size_t errlen)
{
	struct aws_file cf, kf; /* credentials file, config file */
	const char *profile = env("AWS_PROFILE"), *home = env("HOME"), *v;
	const struct keep_aws_profile *cp, *kp;
	char label[4400];
	bool explicit_profile = profile != NULL, unreachable = false;
	int rc = 0;

	*out = NULL;
	if (region && regionlen)
		region[0] = '\0';
	memset(&cf, 0, sizeof(cf));
	memset(&kf, 0, sizeof(kf));
	if (!profile)
		profile = "default";

	/* the shared files: read when a region is wanted or the chain gets to
	 * them; a missing file is an empty one */
	if ((v = env("AWS_SHARED_CREDENTIALS_FILE"))) {
		snprintf(cf.path, sizeof(cf.path), "%s", v);
		cf.named = true;
	} else if (home)
		snprintf(cf.path, sizeof(cf.path), "%s/.aws/credentials", home);
	if ((v = env("AWS_CONFIG_FILE"))) {
		snprintf(kf.path, sizeof(kf.path), "%s", v);
		kf.named = true;
	} else if (home)
		snprintf(kf.path, sizeof(kf.path), "%s/.aws/config", home);
	cp = &cf.prof;
	kp = &kf.prof;
	if (region && regionlen) {
		const char *r;

		if ((rc = load_profiles(&cf, &kf, profile, explicit_profile, err, errlen)))
			goto out;
		r = kp->region ? kp->region : cp->region;
		if (r)
			snprintf(region, regionlen, "%s", r);
	}

	/* 0. s3.credentials_file */
	if (credentials_file && *credentials_file) {
		struct keep_s3_creds sc;

		rc = keep_s3_creds_read(credentials_file, &sc, err, errlen);
		if (rc) {
			rc = rc == KEEP_ERR_PERM || rc == KEEP_ERR_NOMEM ? rc : KEEP_ERR_INVAL;
			goto out;
		}
		snprintf(label, sizeof(label), "s3.credentials_file %s", credentials_file);
		rc = set_static(out, label, sc.access_key, sc.secret_key, sc.token, err, errlen);
		keep_s3_creds_release(&sc);
		goto out;
	}

	/* 1. the environment */
	{
		const char *ak = env("AWS_ACCESS_KEY_ID"), *sk = env("AWS_SECRET_ACCESS_KEY");

		if (ak || sk) {
			if (!ak || !sk) {
				snprintf(err, errlen, "%s is set but %s is not",
					 ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
					 ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
				rc = KEEP_ERR_INVAL;
				goto out;
			}
			rc = set_static(out, "environment", ak, sk, env("AWS_SESSION_TOKEN"), err,
					errlen);
			goto out;
		}
	}

	if ((rc = load_profiles(&cf, &kf, profile, explicit_profile, err, errlen)))
		goto out;
	/* a profile keep cannot follow is refused, not skipped: the next
	 * source would be another identity */
	if (cp->role_arn || kp->role_arn || cp->web_identity_token_file ||
	    kp->web_identity_token_file || cp->sso || kp->sso) {
		snprintf(
		    err, errlen,
		    "profile '%s' uses %s, which keep does not support; use credential_process "
		    "(docs/s3.md)",
		    profile,
		    cp->role_arn || kp->role_arn ? "role_arn (assume role)"
		    : cp->web_identity_token_file || kp->web_identity_token_file
			? "web_identity_token_file"
			: "IAM Identity Center (sso_*)");
		rc = KEEP_ERR_INVAL;
		goto out;
	}

	/* 2. the shared credentials file: static keys */
	if (cp->access_key || cp->secret_key) {
		if (!cp->access_key || !cp->secret_key) {
			snprintf(err, errlen, "profile '%s' in '%s' has %s but not %s", profile,
				 cf.path,
				 cp->access_key ? "aws_access_key_id" : "aws_secret_access_key",
				 cp->access_key ? "aws_secret_access_key" : "aws_access_key_id");
			rc = KEEP_ERR_INVAL;
			goto out;
		}
		if ((rc = mode_ok(&cf, "shared credentials file", true, err, errlen)))
			goto out;
		snprintf(label, sizeof(label), "profile %s in %s", profile, cf.path);
		rc = set_static(out, label, cp->access_key, cp->secret_key, cp->session_token, err,
				errlen);
		goto out;
	}

	/* 3. credential_process */
	if (cp->credential_process || kp->credential_process) {
		const struct aws_file *from = cp->credential_process ? &cf : &kf;
		const char *cmd =
		    cp->credential_process ? cp->credential_process : kp->credential_process;
		struct keep_awscreds *c;
		long tmo = KEEP_AWS_PROCESS_TIMEOUT_MS;

		if ((rc = mode_ok(from,
				  cp->credential_process ? "shared credentials file"
							 : "shared config file",
				  false, err, errlen)))
			goto out;
#ifdef KEEP_FAULT_INJECTION
		/* test builds: the tests shorten the kill timeout */
		if ((rc = env_int("KEEP_TEST_CREDENTIAL_PROCESS_TIMEOUT_MS", 1, 3600000,
				  KEEP_AWS_PROCESS_TIMEOUT_MS, &tmo, err, errlen)))
			goto out;
#endif
		snprintf(label, sizeof(label), "credential_process of profile %s (%s)", profile,
			 from->path);
		c = src_new(SRC_PROCESS, label);
		if (!c || !(c->command = strdup(cmd)) ||
		    !(c->key = join3("process", from->path, cmd))) {
			src_free(c);
			rc = KEEP_ERR_NOMEM;
			goto out;
		}
		c->timeout_ms = tmo;
		rc = dynamic(c, out, &unreachable, err, errlen);
		goto out;
	}

	/* 4. the shared config file: static keys */
	if (kp->access_key || kp->secret_key) {
		if (!kp->access_key || !kp->secret_key) {
			snprintf(err, errlen, "profile '%s' in '%s' has %s but not %s", profile,
				 kf.path,
				 kp->access_key ? "aws_access_key_id" : "aws_secret_access_key",
				 kp->access_key ? "aws_secret_access_key" : "aws_access_key_id");
			rc = KEEP_ERR_INVAL;
			goto out;
		}
		if ((rc = mode_ok(&kf, "shared config file", true, err, errlen)))
			goto out;
		snprintf(label, sizeof(label), "profile %s in %s", profile, kf.path);
		rc = set_static(out, label, kp->access_key, kp->secret_key, kp->session_token, err,
				errlen);
		goto out;
	}

	/* sources of the AWS CLI keep does not implement: refused, not skipped */
	{
		static const char *const unsupported[] = {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
							  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
							  "AWS_WEB_IDENTITY_TOKEN_FILE"};
		size_t i;

		for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
			if (env(unsupported[i])) {
				snprintf(err, errlen,
					 "%s is set: that credential source is not supported by "
					 "keep; use credential_process (docs/s3.md)",
					 unsupported[i]);
				rc = KEEP_ERR_INVAL;
				goto out;
			}
	}

	/* 5. EC2 instance metadata */
	if (!env_true("AWS_EC2_METADATA_DISABLED")) {
		struct keep_awscreds *c;
		const char *ep = env("AWS_EC2_METADATA_SERVICE_ENDPOINT"),
			   *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
		long tmo_s, attempts;
		size_t n;

		if (!ep)
			ep = mode && strcasecmp(mode, "IPv6") == 0 ? IMDS_IPV6_ENDPOINT
								   : IMDS_DEFAULT_ENDPOINT;
		if ((strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) ||
		    strlen(ep) > 512 || strpbrk(ep, " \t\r\n")) {
			snprintf(err, errlen,
				 "AWS_EC2_METADATA_SERVICE_ENDPOINT must be http[s]://HOST[:PORT]");
			rc = KEEP_ERR_INVAL;
			goto out;
		}
		if ((rc = env_int("AWS_METADATA_SERVICE_TIMEOUT", 1, 60, 1, &tmo_s, err, errlen)) ||
		    (rc = env_int("AWS_METADATA_SERVICE_NUM_ATTEMPTS", 1, 10, 1, &attempts, err,
				  errlen)))
			goto out;
		c = src_new(SRC_IMDS, "EC2 instance metadata");
		if (!c || !(c->endpoint = strdup(ep)) || !(c->key = join3("imds", ep, ""))) {
			src_free(c);
			rc = KEEP_ERR_NOMEM;
			goto out;
		}
		n = strlen(c->endpoint);
		while (n > 0 && c->endpoint[n - 1] == '/')
			c->endpoint[--n] = '\0';
		c->imds_timeout_ms = tmo_s * 1000;
		c->imds_attempts = (int)attempts;
		rc = dynamic(c, out, &unreachable, err, errlen);
		if (rc && unreachable) {
			/* no metadata service: no credentials anywhere */
			char why[300];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen,
				 "no S3 credentials: none in the environment, profile '%s', "
				 "s3.credentials_file, and %s",
				 profile, why);
			rc = KEEP_ERR_INVAL;
		}
		goto out;
	}
	snprintf(err, errlen,
		 "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile "
		 "(AWS_PROFILE, ~/.aws/credentials), credential_process, or s3.credentials_file "
		 "(EC2 instance metadata is disabled)");
	rc = KEEP_ERR_INVAL;
out:
	file_release(&cf);
	file_release(&kf);
	return rc;
}

void keep_awscreds_close(struct keep_awscreds *c)
{
	struct keep_awscreds **pp;
	bool last;

	if (!c)
		return;
	if (c->kind == SRC_STATIC) {
		src_free(c);
		return;
	}
	pthread_mutex_lock(&reg_mu);
	last = --c->refs == 0;
	if (last)
		for (pp = &reg_head; *pp; pp = &(*pp)->next)
			if (*pp == c) {
				*pp = c->next;
				break;
			}
	pthread_mutex_unlock(&reg_mu);
	if (last)
		src_free(c);
}

int keep_awscreds_get(struct keep_awscreds *c, int64_t now_wall_ms, struct keep_s3_creds *snap,
		      uint64_t *serial, char *err, size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	if (c->kind != SRC_STATIC && now_wall_ms >= c->refresh_at_ms &&
	    now_wall_ms >= c->retry_at_ms) {
		char why[256];
		bool unreachable;

		if (fetch(c, now_wall_ms, &unreachable, why, sizeof(why)) != 0) {
			snprintf(c->last_err, sizeof(c->last_err), "%s", why);
			if (c->retry_ms < KEEP_AWS_RETRY_MIN_MS)
				c->retry_ms = KEEP_AWS_RETRY_MIN_MS;
			c->retry_at_ms = now_wall_ms + c->retry_ms;
			c->retry_ms = c->retry_ms * 2 > KEEP_AWS_RETRY_MAX_MS
					  ? KEEP_AWS_RETRY_MAX_MS
					  : c->retry_ms * 2;
		}
	}
	if (c->expires_at_ms && now_wall_ms >= c->expires_at_ms) {
		snprintf(err, errlen, "no valid S3 credentials: those from %s expired; %s",
			 c->label, c->last_err[0] ? c->last_err : "not fetched again yet");
		rc = KEEP_ERR_STORE;
		goto out;
	}
	if (*serial != c->serial) {
		struct keep_s3_creds n = {NULL, NULL, NULL};

		n.access_key = strdup(c->creds.access_key);
		n.secret_key = strdup(c->creds.secret_key);
		n.token = c->creds.token ? strdup(c->creds.token) : NULL;
		if (!n.access_key || !n.secret_key || (c->creds.token && !n.token)) {
			creds_release(&n);
			rc = KEEP_ERR_NOMEM;
			goto out;
		}
		creds_release(snap);
		*snap = n;
		*serial = c->serial;
	}
out:
	pthread_mutex_unlock(&c->mu);
	return rc;
}

const char *keep_awscreds_source(const struct keep_awscreds *c)
{
	return c && c->label ? c->label : "-";
}
