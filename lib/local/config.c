/* keep — configuration file, strict YAML via libyaml (config.h,
 * docs/configuration.md). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "../base/err.h"

#define CONFIG_FILE_MAX 65536  /* bytes: largest configuration file accepted */
#define CONFIG_MS_MAX 86400000 /* ms: largest duration accepted (one day) */
#define CONFIG_DEFAULT_PATH "/etc/keep/keep.yaml"

void keep_config_defaults(struct keep_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", "/var/lib/keep");
	keep_timing_defaults(&c->timing);
	c->s3_timeout_ms = 10000;
	snprintf(c->watch_mode, sizeof(c->watch_mode), "full");
	c->watch_successors = 3;
	c->watch_full_every = 10;
	c->watch_ring_from = 200;
	c->log_timestamps = KEEP_LOG_TS_AUTO;
	keep_log_ts_parse(getenv(KEEP_LOG_TS_ENV), &c->log_timestamps);
}

/* ---- loading ---------------------------------------------------------- */

struct loader {
	const char *file;      /* for messages */
	struct keep_config *c; /* the copy being filled */
	char *err;
	size_t errlen;
};

static int fail(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "FILE:LINE: reason" into ld->err; KEEP_ERR_CONFIG. */
static int fail(struct loader *ld, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ld->err, ld->errlen, "%s:%zu: %s", ld->file, n ? n->start_mark.line + 1 : 1, msg);
	return KEEP_ERR_CONFIG;
}

/* A key made printable and short for a message. */
static void show(const yaml_node_t *n, char *out, size_t outlen)
{
	size_t i, o = 0;

	if (n->type != YAML_SCALAR_NODE) {
		snprintf(out, outlen, "(not a scalar)");
		return;
	}
	for (i = 0; i < n->data.scalar.length && o + 4 < outlen && i < 64; i++) {
		unsigned char ch = n->data.scalar.value[i];
		out[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	if (i < n->data.scalar.length && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* The scalar's text, NUL-terminated by libyaml; NULL (after failing) if the
 * node is not a scalar, carries an explicit tag, or holds a NUL byte. */
static const char *scalar(struct loader *ld, const yaml_node_t *n, const char *key, int *rc)
{
	if (n->type != YAML_SCALAR_NODE) {
		*rc = fail(ld, n, "'%s' must be a single value", key);
		return NULL;
	}
	if (n->tag && strcmp((const char *)n->tag, YAML_STR_TAG) != 0) {
		*rc = fail(ld, n, "'%s': explicit YAML tags are not accepted", key);
		return NULL;
	}
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
		*rc = fail(ld, n, "'%s': NUL byte in value", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

/* A string field of size bytes: any scalar style, no control bytes, refused
 * (never truncated) when it does not fit. */
static int set_str(struct loader *ld, const yaml_node_t *n, const char *key, char *dst, size_t size)
{
	const char *v;
	size_t i, len;
	int rc = 0;

	if (!(v = scalar(ld, n, key, &rc)))
		return rc;
	len = n->data.scalar.length;
	if (len >= size)
		return fail(ld, n, "'%s' too long (%zu bytes, at most %zu)", key, len, size - 1);
	for (i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] == 0x7f)
			return fail(ld, n, "'%s': control character in value", key);
	memcpy(dst, v, len + 1);
	return 0;
}

/* A duration in ms: a plain (unquoted) decimal integer 0..CONFIG_MS_MAX,
 * no sign, no leading zero, no fraction or exponent. */
static int set_ms(struct loader *ld, const yaml_node_t *n, const char *key, int64_t *dst)
{
	const char *v;
	char *end;
	long long x;
	size_t i;
	int rc = 0;

	if (!(v = scalar(ld, n, key, &rc)))
		return rc;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail(ld, n, "'%s' must be an unquoted integer", key);
	if (!*v)
		return fail(ld, n, "'%s' is empty (want an integer in ms)", key);
	for (i = 0; v[i]; i++)
		if (v[i] < '0' || v[i] > '9')
			return fail(ld, n, "'%s' is not a plain decimal integer: '%.32s'", key, v);
	if (v[0] == '0' && v[1])
		return fail(ld, n, "'%s': leading zero in '%.32s'", key, v);
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno == ERANGE || *end || x < 0 || x > CONFIG_MS_MAX)
		return fail(ld, n, "'%s' out of range 0..%d", key, CONFIG_MS_MAX);
	*dst = x;
	return 0;
}

/* A boolean: plain true or false, nothing else. */
static int set_bool(struct loader *ld, const yaml_node_t *n, const char *key, bool *dst)
{
	const char *v;
	int rc = 0;

	if (!(v = scalar(ld, n, key, &rc)))
		return rc;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(v, "true") == 0)
		*dst = true;
	else if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(v, "false") == 0)
		*dst = false;
	else
		return fail(ld, n, "'%s' must be true or false", key);
	return 0;
}

/* log.timestamps: auto, always or never (lib/platform/log.h). */
static int set_log_ts(struct loader *ld, const yaml_node_t *n, const char *key,
		      enum keep_log_ts *dst)
{
	const char *v;
	int rc = 0;

	if (!(v = scalar(ld, n, key, &rc)))
		return rc;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !keep_log_ts_parse(v, dst))
		return fail(ld, n, "'%s' must be auto, always or never", key);
	return 0;
}

/* apps: a sequence of application roots (keep_app_root_valid), at most
 * KEEP_APPS_MAX, no duplicates; [] is none. */
static int set_apps(struct loader *ld, yaml_document_t *doc, const yaml_node_t *n)
{
	struct keep_config *c = ld->c;
	const yaml_node_item_t *it;
	int rc = 0;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail(ld, n, "'apps' must be a list of application roots");
	c->napps = 0;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *v = yaml_document_get_node(doc, *it);
		const char *r;
		size_t i;

		if (!v)
			return fail(ld, n, "malformed list");
		if (!(r = scalar(ld, v, "apps", &rc)))
			return rc;
		if (!keep_app_root_valid(r))
			return fail(ld, v,
				    "'apps': '%.40s' is not a valid application root (want "
				    "[a-z0-9][a-z0-9_-]{0,%d})",
				    r, KEEP_APP_ROOT_MAX - 1);
		for (i = 0; i < c->napps; i++)
			if (strcmp(c->apps[i], r) == 0)
				return fail(ld, v, "'apps': '%s' is listed twice", r);
		if (c->napps == KEEP_APPS_MAX)
			return fail(ld, v, "'apps': more than %d roots", KEEP_APPS_MAX);
		snprintf(c->apps[c->napps++], sizeof(c->apps[0]), "%s", r);
	}
	return 0;
}

/* Field kinds of the schema. */
enum kind { K_STR, K_MS, K_INT, K_BOOL, K_MAP, K_LOGTS, K_APPS };

struct field {
	const char *key;
	enum kind kind;
	size_t off;		 /* offset in struct keep_config (K_STR: array; K_MS: int64_t) */
	size_t size;		 /* K_STR: buffer size */
	const struct field *sub; /* K_MAP: its fields, NULL-key terminated */
};

#define STR(k, m)                                                                                  \
	{                                                                                          \
		k, K_STR, offsetof(struct keep_config, m), sizeof(((struct keep_config *)0)->m),   \
		    NULL                                                                           \
	}
#define MS(k, m)                                                                                   \
	{                                                                                          \
		k, K_MS, offsetof(struct keep_config, m), 0, NULL                                  \
	}

static const struct field lease_fields[] = {
    MS("ttl_ms", timing.ttl_ms),
    MS("grace_ms", timing.grace_ms),
    MS("safety_ms", timing.safety_ms),
    MS("max_skew_ms", timing.max_skew_ms),
    MS("heartbeat_period_ms", timing.period_ms),
    MS("clock_step_ms", timing.clock_step_ms),
    {NULL, K_STR, 0, 0, NULL},
};

static const struct field s3_fields[] = {
    STR("region", s3_region),
    STR("endpoint", s3_endpoint),
    STR("addressing", s3_addressing),
    STR("credentials_file", s3_credentials_file),
    {"tls_insecure", K_BOOL, offsetof(struct keep_config, s3_tls_insecure), 0, NULL},
    MS("timeout_ms", s3_timeout_ms),
    {NULL, K_STR, 0, 0, NULL},
};

static const struct field metrics_fields[] = {
    STR("textfile", metrics_textfile),
    {NULL, K_STR, 0, 0, NULL},
};

static const struct field log_fields[] = {
    {"timestamps", K_LOGTS, offsetof(struct keep_config, log_timestamps), 0, NULL},
    {"event_timestamps", K_BOOL, offsetof(struct keep_config, log_event_timestamps), 0, NULL},
    {NULL, K_STR, 0, 0, NULL},
};

static const struct field watch_fields[] = {
    STR("mode", watch_mode),
    {"successors", K_INT, offsetof(struct keep_config, watch_successors), 0, NULL},
    {"full_every", K_INT, offsetof(struct keep_config, watch_full_every), 0, NULL},
    {"ring_from", K_INT, offsetof(struct keep_config, watch_ring_from), 0, NULL},
    {NULL, K_STR, 0, 0, NULL},
};

static const struct field top_fields[] = {
    STR("node_id", node_id),
    STR("store", store),
    STR("state_dir", state_dir),
    {"lease", K_MAP, 0, 0, lease_fields},
    {"s3", K_MAP, 0, 0, s3_fields},
    {"metrics", K_MAP, 0, 0, metrics_fields},
    {"log", K_MAP, 0, 0, log_fields},
    {"apps", K_APPS, 0, 0, NULL},
    {"watch", K_MAP, 0, 0, watch_fields},
    {NULL, K_STR, 0, 0, NULL},
};

/* state_dir: absolute (every command resolves it the same way, whatever
 * its working directory: systemd's is /). 0, or KEEP_ERR_CONFIG with
 * why ("is empty", "'x' is not an absolute path"). */
static int state_dir_check(const char *dir, char *why, size_t whylen)
{
	if (!dir[0]) {
		snprintf(why, whylen, "is empty");
		return KEEP_ERR_CONFIG;
	}
	if (dir[0] != '/') {
		snprintf(why, whylen, "'%.200s' is not an absolute path", dir);
		return KEEP_ERR_CONFIG;
	}
	return 0;
}

/* Per-key checks that can name the line (the rest is keep_config_check). */
static int check_value(struct loader *ld, const yaml_node_t *n, const char *key)
{
	const struct keep_config *c = ld->c;
	char why[256];

	if (strcmp(key, "node_id") == 0 && !keep_node_id_valid(c->node_id))
		return fail(ld, n,
			    "'node_id' is not a valid node id (want [A-Za-z0-9._-]{1,%d}, "
			    "not starting with '.')",
			    KEEP_NODE_ID_MAX);
	if (strcmp(key, "store") == 0 && keep_store_url_check(c->store, why, sizeof(why)) != 0)
		return fail(ld, n, "'store': %s", why);
	if (strcmp(key, "state_dir") == 0 && state_dir_check(c->state_dir, why, sizeof(why)) != 0)
		return fail(ld, n, "'state_dir' %s", why);
	if (strcmp(key, "mode") == 0 && keep_config_watch_mode_check(c->watch_mode) != 0)
		return fail(ld, n, "'mode' in 'watch' must be full, ring or auto");
	if (strcmp(key, "addressing") == 0 && strcmp(c->s3_addressing, "path") != 0 &&
	    strcmp(c->s3_addressing, "virtual") != 0)
		return fail(ld, n, "'addressing' must be path or virtual");
	return 0;
}

/* The ranges of the plain integers (K_INT). */
static int check_int(struct loader *ld, const yaml_node_t *n, const char *key, int64_t x)
{
	if (strcmp(key, "successors") == 0 && (x < 1 || x > KEEP_CONFIG_SUCCESSORS_MAX))
		return fail(ld, n, "'successors' in 'watch' out of range 1..%d",
			    KEEP_CONFIG_SUCCESSORS_MAX);
	if (strcmp(key, "full_every") == 0 && (x < 2 || x > KEEP_CONFIG_FULL_EVERY_MAX))
		return fail(ld, n, "'full_every' in 'watch' out of range 2..%d",
			    KEEP_CONFIG_FULL_EVERY_MAX);
	if (strcmp(key, "ring_from") == 0 && (x < 2 || x > KEEP_CONFIG_RING_FROM_MAX))
		return fail(ld, n, "'ring_from' in 'watch' out of range 2..%d",
			    KEEP_CONFIG_RING_FROM_MAX);
	return 0;
}

int keep_config_watch_mode_check(const char *mode)
{
	return strcmp(mode, "full") == 0 || strcmp(mode, "ring") == 0 || strcmp(mode, "auto") == 0
		   ? 0
		   : KEEP_ERR_CONFIG;
}

static int load_map(struct loader *ld, yaml_document_t *doc, const yaml_node_t *map,
		    const struct field *fields, const char *where)
{
	unsigned long seen = 0; /* bit i: fields[i] already set in this mapping */
	const yaml_node_pair_t *p;
	int rc;

	if (map->type != YAML_MAPPING_NODE)
		return fail(ld, map, "%s%s%s must be a mapping of keys to values",
			    where[0] ? "'" : "", where[0] ? where : "the top level",
			    where[0] ? "'" : "");
	if (map->tag && strcmp((const char *)map->tag, YAML_MAP_TAG) != 0)
		return fail(ld, map, "explicit YAML tags are not accepted");
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const struct field *f;
		char shown[80];
		size_t i;

		if (!k || !v)
			return fail(ld, map, "malformed mapping");
		show(k, shown, sizeof(shown));
		if (k->type != YAML_SCALAR_NODE)
			return fail(ld, k, "unknown key '%s'%s%s", shown, where[0] ? " in " : "",
				    where);
		for (i = 0; fields[i].key; i++)
			if (strlen(fields[i].key) == k->data.scalar.length &&
			    memcmp(fields[i].key, k->data.scalar.value, k->data.scalar.length) == 0)
				break;
		f = &fields[i];
		if (!f->key)
			return fail(ld, k, "unknown key '%s'%s%s", shown, where[0] ? " in " : "",
				    where);
		if (seen & (1UL << i))
			return fail(ld, k, "duplicate key '%s'%s%s", shown, where[0] ? " in " : "",
				    where);
		seen |= 1UL << i;
		switch (f->kind) {
		case K_STR:
			rc = set_str(ld, v, f->key, (char *)ld->c + f->off, f->size);
			if (!rc)
				rc = check_value(ld, v, f->key);
			break;
		case K_MS:
		case K_INT:
			rc = set_ms(ld, v, f->key, (int64_t *)(void *)((char *)ld->c + f->off));
			if (!rc && f->kind == K_INT)
				rc = check_int(ld, v, f->key,
					       *(int64_t *)(void *)((char *)ld->c + f->off));
			break;
		case K_BOOL:
			rc = set_bool(ld, v, f->key, (bool *)(void *)((char *)ld->c + f->off));
			break;
		case K_LOGTS:
			rc = set_log_ts(ld, v, f->key,
					(enum keep_log_ts *)(void *)((char *)ld->c + f->off));
			break;
		case K_APPS:
			rc = set_apps(ld, doc, v);
			break;
		case K_MAP:
		default:
			rc = load_map(ld, doc, v, f->sub, f->key);
			break;
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* Read at most CONFIG_FILE_MAX bytes of path into a new buffer (*out, caller
 * frees). 0, KEEP_ERR_IO, KEEP_ERR_TOOBIG, KEEP_ERR_NOMEM. */
static int read_file(const char *path, unsigned char **out, size_t *len, char *err, size_t errlen)
{
	unsigned char *data;
	size_t n = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return KEEP_ERR_IO;
	}
	data = malloc(CONFIG_FILE_MAX + 1);
	if (!data) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return KEEP_ERR_NOMEM;
	}
	for (;;) {
		r = read(fd, data + n, CONFIG_FILE_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail_io;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > CONFIG_FILE_MAX) {
			snprintf(err, errlen, "%s: file over %d bytes", path, CONFIG_FILE_MAX);
			free(data);
			close(fd);
			return KEEP_ERR_CONFIG;
		}
	}
	close(fd);
	*out = data;
	*len = n;
	return 0;
fail_io:
	free(data);
	close(fd);
	return KEEP_ERR_IO;
}

static int parse_yaml(struct loader *ld, const unsigned char *data, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	yaml_node_t *root;
	int rc = 0;

	if (memchr(data, '\0', len)) {
		snprintf(ld->err, ld->errlen, "%s: NUL byte in file", ld->file);
		return KEEP_ERR_CONFIG;
	}
	if (!yaml_parser_initialize(&parser)) {
		snprintf(ld->err, ld->errlen, "%s: out of memory", ld->file);
		return KEEP_ERR_NOMEM;
	}
	yaml_parser_set_input_string(&parser, data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(ld->err, ld->errlen, "%s:%zu: %s%s%s", ld->file,
			 parser.problem_mark.line + 1, parser.context ? parser.context : "",
			 parser.context ? ": " : "", parser.problem ? parser.problem : "bad YAML");
		yaml_parser_delete(&parser);
		return KEEP_ERR_CONFIG;
	}
	root = yaml_document_get_root_node(&doc);
	if (root) {
		/* One document only. */
		if (!yaml_parser_load(&parser, &extra)) {
			snprintf(ld->err, ld->errlen, "%s:%zu: %s", ld->file,
				 parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "bad YAML");
			rc = KEEP_ERR_CONFIG;
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);
			if (r2)
				rc = fail(ld, r2, "more than one YAML document");
			yaml_document_delete(&extra);
		}
		/* "---" alone: an empty (null) document, nothing set. */
		if (!rc && !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
			     root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
			rc = load_map(ld, &doc, root, top_fields, "");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int keep_config_load(struct keep_config *c, const char *path, char *err, size_t errlen)
{
	struct keep_config copy = *c;
	struct loader ld;
	unsigned char *data = NULL;
	size_t len = 0;
	struct stat st;
	int rc;

	if (!path) {
		const char *env = getenv("KEEP_CONFIG");

		if (env && *env)
			path = env;
		else if (stat(CONFIG_DEFAULT_PATH, &st) == 0)
			path = CONFIG_DEFAULT_PATH;
		else
			return 0;
	}
	if (strlen(path) >= sizeof(copy.path)) {
		snprintf(err, errlen, "configuration path too long (at most %d bytes)",
			 KEEP_PATH_MAX);
		return KEEP_ERR_CONFIG;
	}
	rc = read_file(path, &data, &len, err, errlen);
	if (rc)
		return rc;
	ld.file = path;
	ld.c = &copy;
	ld.err = err;
	ld.errlen = errlen;
	rc = parse_yaml(&ld, data, len);
	free(data);
	if (rc)
		return rc;
	snprintf(copy.path, sizeof(copy.path), "%s", path);
	*c = copy;
	return 0;
}

/* ---- after flags ------------------------------------------------------ */

int keep_config_check(const struct keep_config *c, char *err, size_t errlen)
{
	const char *where = c->path[0] ? c->path : "";
	const char *sep = c->path[0] ? ": " : "";
	char why[256];

	if (keep_timing_check(&c->timing, why, sizeof(why))) {
		snprintf(err, errlen, "%s%slease: %s", where, sep, why);
		return KEEP_ERR_CONFIG;
	}
	if (c->node_id[0] && !keep_node_id_valid(c->node_id)) {
		snprintf(err, errlen,
			 "%s%snode id '%.64s' is not valid (want [A-Za-z0-9._-]{1,%d}, not "
			 "starting with '.')",
			 where, sep, c->node_id, KEEP_NODE_ID_MAX);
		return KEEP_ERR_CONFIG;
	}
	if (c->app[0] && !keep_app_root_valid(c->app)) {
		snprintf(err, errlen,
			 "application root '%.40s' is not valid (want [a-z0-9][a-z0-9_-]{0,%d})",
			 c->app, KEEP_APP_ROOT_MAX - 1);
		return KEEP_ERR_CONFIG;
	}
	if (c->store[0] && keep_store_url_check(c->store, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s%sstore: %s", where, sep, why);
		return KEEP_ERR_CONFIG;
	}
	if (state_dir_check(c->state_dir, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s%sstate_dir %s", where, sep, why);
		return KEEP_ERR_CONFIG;
	}
	if (c->s3_addressing[0] && strcmp(c->s3_addressing, "path") != 0 &&
	    strcmp(c->s3_addressing, "virtual") != 0) {
		snprintf(err, errlen, "%s%ss3.addressing must be path or virtual", where, sep);
		return KEEP_ERR_CONFIG;
	}
	if (c->s3_timeout_ms <= 0 || c->s3_timeout_ms > CONFIG_MS_MAX) {
		snprintf(err, errlen, "%s%ss3.timeout_ms must be 1..%d", where, sep, CONFIG_MS_MAX);
		return KEEP_ERR_CONFIG;
	}
	return 0;
}

void keep_config_store_opts(const struct keep_config *c, struct keep_store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->region = c->s3_region;
	o->endpoint = c->s3_endpoint;
	o->addressing = c->s3_addressing;
	o->credentials_file = c->s3_credentials_file;
	o->tls_insecure = c->s3_tls_insecure;
	o->timeout_ms = c->s3_timeout_ms;
}

int keep_config_node_dir(const struct keep_config *c, char *out, size_t outlen)
{
	size_t dl = strlen(c->state_dir);
	int n;

	if (!c->node_id[0])
		return KEEP_ERR_CONFIG;
	while (dl > 1 && c->state_dir[dl - 1] == '/')
		dl--;
	if (dl == 1 && c->state_dir[0] == '/')
		n = snprintf(out, outlen, "/%s", c->node_id);
	else
		n = snprintf(out, outlen, "%.*s/%s", (int)dl, c->state_dir, c->node_id);
	if (n < 0 || (size_t)n >= outlen)
		return KEEP_ERR_TOOBIG;
	return 0;
}
