/* keep — holds, pending releases and unresolved acquires in the state
 * directory (holds.h; docs/ownership.md "State directory"). */
#include "holds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "../base/exitcode.h"
#include "../base/parse.h"
#include "../codec/sha256.h"
#include "../core/owner.h"
#include "../core/timing.h"
#include "../platform/clock.h"
#include "config.h"
#include "statedir.h"

#define FILE_MAX 4096	 /* bytes: largest hold or pending file */
#define LIST_MAX 1000000 /* entries: most holds or pending entries listed */

/* ---- paths ------------------------------------------------------------------ */

void keep_holds_key_hash(const char *key, char out[65])
{
	keep_sha256_hex(key, strlen(key), out);
}

/* "/apps/ROOT" while this process serves an application root, else "" */
static char app_sub[80];

int keep_holds_set_app(const char *root)
{
	int r;

	if (!root || !*root) {
		app_sub[0] = '\0';
		return 0;
	}
	if (strchr(root, '/') || strcmp(root, ".") == 0 || strcmp(root, "..") == 0)
		return KEEP_ERR_INVAL;
	r = snprintf(app_sub, sizeof(app_sub), "/apps/%s", root);
	if (r < 0 || (size_t)r >= sizeof(app_sub)) {
		app_sub[0] = '\0';
		return KEEP_ERR_TOOBIG;
	}
	return 0;
}

const char *keep_holds_app_sub(void)
{
	return app_sub;
}

static int path_of(char *out, size_t n, const char *node_dir, const char *sub, const char *key,
		   const char *suffix)
{
	char h[65];
	int r;

	keep_holds_key_hash(key, h);
	r = snprintf(out, n, "%s/%s%s/%s%s", node_dir, sub, app_sub, h, suffix ? suffix : "");
	return (r < 0 || (size_t)r >= n) ? KEEP_ERR_TOOBIG : 0;
}

static int pending_path(char *out, size_t n, const char *node_dir, const struct keep_pending *p)
{
	char suffix[128];

	snprintf(suffix, sizeof(suffix), ".%lld.%s.%s", (long long)p->generation, p->instance,
		 p->kind == KEEP_PENDING_RELEASE ? "release" : "acquire");
	return path_of(out, n, node_dir, "pending", p->key, suffix);
}

int keep_holds_init(const char *node_dir)
{
	static const char *subs[] = {"holds", "pending", "locks"};
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < 3; i++) {
		int r = snprintf(p, sizeof(p), "%s/%s%s", node_dir, subs[i], app_sub);

		if (r < 0 || (size_t)r >= sizeof(p))
			return KEEP_ERR_TOOBIG;
		if (keep_mkdirs(p) != 0)
			return KEEP_ERR_IO;
	}
	return 0;
}

/* ---- locks -------------------------------------------------------------------- */

int keep_holds_lock(const char *node_dir, const char *key, int *fd)
{
	return keep_holds_lock_ms(node_dir, key, 0, fd);
}

int keep_holds_lock_ms(const char *node_dir, const char *key, int64_t wait_ms, int *fd)
{
	char p[PATH_MAX];
	int64_t until = 0, now;
	int f;

	*fd = -1;
	if (path_of(p, sizeof(p), node_dir, "locks", key, NULL))
		return KEEP_ERR_TOOBIG;
	f = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f < 0)
		return KEEP_ERR_IO;
	if (wait_ms > 0)
		until = keep_add_sat_ms(keep_boot_ms(), wait_ms);
	while (flock(f, until ? LOCK_EX | LOCK_NB : LOCK_EX) != 0) {
		if (errno == EINTR)
			continue;
		if (!until || errno != EWOULDBLOCK) {
			close(f);
			return KEEP_ERR_IO;
		}
		now = keep_boot_ms();
		if (now >= until) {
			close(f);
			errno = ETIMEDOUT;
			return 1;
		}
		keep_sleep_until_boot(until - now > 5 ? now + 5 : until);
	}
	*fd = f;
	return 0;
}

void keep_holds_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* closing drops the flock */
}

/* ---- codecs -------------------------------------------------------------------- */

/* A strict decimal int64 >= 0 (keep_dec_parse). */
static int parse_nonneg(const char *v, int64_t *out)
{
	return keep_dec_parse_str(v, INT64_MAX, out) ? 0 : KEEP_ERR_PARSE;
}

static int copy_field(char *dst, size_t n, const char *v)
{
	size_t l = strlen(v);

	if (l == 0 || l >= n)
		return KEEP_ERR_PARSE;
	memcpy(dst, v, l + 1);
	return 0;
}

/* Split buf into exactly nkeys "key value" lines after header hdr; vals[i]
 * points into line storage lines (NUL-terminated). */
static int split_lines(const char *buf, size_t len, const char *hdr, const char *const *keys,
		       size_t nkeys, char *store, size_t storelen, const char **vals)
{
	size_t hl = strlen(hdr), pos, k, used = 0;

	if (len < hl + 1 || memcmp(buf, hdr, hl) != 0 || buf[hl] != '\n')
		return KEEP_ERR_NOTOURS;
	if (memchr(buf, '\0', len))
		return KEEP_ERR_PARSE;
	pos = hl + 1;
	for (k = 0; k < nkeys; k++) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t ll, kl = strlen(keys[k]);

		if (!nl)
			return KEEP_ERR_PARSE;
		ll = (size_t)(nl - (buf + pos));
		if (ll <= kl + 1 || memcmp(buf + pos, keys[k], kl) != 0 || buf[pos + kl] != ' ')
			return KEEP_ERR_PARSE;
		if (used + ll - kl > storelen)
			return KEEP_ERR_PARSE;
		memcpy(store + used, buf + pos + kl + 1, ll - kl - 1);
		store[used + ll - kl - 1] = '\0';
		vals[k] = store + used;
		used += ll - kl;
		pos += ll + 1;
	}
	return pos == len ? 0 : KEEP_ERR_PARSE;
}

static bool instance_ok(const char *s)
{
	return keep_instance_valid(s, strlen(s));
}

static bool version_ok(const char *v)
{
	size_t n = strlen(v), i;

	if (n < 1 || n >= KEEP_VERSION_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	return true;
}

static const char *const hold_keys[] = {"key",	   "instance", "generation",
					"version", "epoch",    "acquired_at_ms"};

int keep_hold_encode(const struct keep_hold *h, struct keep_buf *out)
{
	if (!keep_owner_key_valid(h->key) || !instance_ok(h->instance) || h->generation < 1 ||
	    !version_ok(h->version) || h->epoch < 0)
		return KEEP_ERR_INVAL;
	return keep_buf_addf(out,
			     "keep-hold 1\nkey %s\ninstance %s\ngeneration %lld\nversion %s\n"
			     "epoch %lld\nacquired_at_ms %lld\n",
			     h->key, h->instance, (long long)h->generation, h->version,
			     (long long)h->epoch, (long long)h->acquired_at_ms);
}

int keep_hold_decode(const char *buf, size_t len, struct keep_hold *h)
{
	char store[FILE_MAX];
	const char *v[6];
	int rc;

	memset(h, 0, sizeof(*h));
	rc = split_lines(buf, len, "keep-hold 1", hold_keys, 6, store, sizeof(store), v);
	if (rc)
		return rc;
	if (copy_field(h->key, sizeof(h->key), v[0]) || !keep_owner_key_valid(h->key) ||
	    copy_field(h->instance, sizeof(h->instance), v[1]) || !instance_ok(h->instance) ||
	    parse_nonneg(v[2], &h->generation) || h->generation < 1 ||
	    copy_field(h->version, sizeof(h->version), v[3]) || !version_ok(h->version) ||
	    parse_nonneg(v[4], &h->epoch) || parse_nonneg(v[5], &h->acquired_at_ms))
		return KEEP_ERR_PARSE;
	return 0;
}

static const char *const pend_keys[] = {"kind",	      "key",	 "instance",
					"generation", "version", "at_ms"};

int keep_pending_encode(const struct keep_pending *p, struct keep_buf *out)
{
	if (!keep_owner_key_valid(p->key) || !instance_ok(p->instance) || p->generation < 1 ||
	    !version_ok(p->version) || p->at_ms < 0)
		return KEEP_ERR_INVAL;
	return keep_buf_addf(out,
			     "keep-pending 1\nkind %s\nkey %s\ninstance %s\ngeneration %lld\n"
			     "version %s\nat_ms %lld\n",
			     p->kind == KEEP_PENDING_RELEASE ? "release" : "acquire", p->key,
			     p->instance, (long long)p->generation, p->version,
			     (long long)p->at_ms);
}

int keep_pending_decode(const char *buf, size_t len, struct keep_pending *p)
{
	char store[FILE_MAX];
	const char *v[6];
	int rc;

	memset(p, 0, sizeof(*p));
	rc = split_lines(buf, len, "keep-pending 1", pend_keys, 6, store, sizeof(store), v);
	if (rc)
		return rc;
	if (strcmp(v[0], "release") == 0)
		p->kind = KEEP_PENDING_RELEASE;
	else if (strcmp(v[0], "acquire") == 0)
		p->kind = KEEP_PENDING_ACQUIRE;
	else
		return KEEP_ERR_PARSE;
	if (copy_field(p->key, sizeof(p->key), v[1]) || !keep_owner_key_valid(p->key) ||
	    copy_field(p->instance, sizeof(p->instance), v[2]) || !instance_ok(p->instance) ||
	    parse_nonneg(v[3], &p->generation) || p->generation < 1 ||
	    copy_field(p->version, sizeof(p->version), v[4]) || !version_ok(p->version) ||
	    parse_nonneg(v[5], &p->at_ms))
		return KEEP_ERR_PARSE;
	return 0;
}

/* ---- files --------------------------------------------------------------------- */

static enum keep_sd write_buf(const char *path, struct keep_buf *b)
{
	enum keep_sd rc = keep_write_atomic_sd(path, b->data ? b->data : "", b->len);
	int saved = errno;

	keep_buf_release(b);
	errno = saved;
	return rc;
}

/* A path that could not be built, or a file that could not be encoded:
 * nothing was changed. */
static enum keep_sd unchanged(int err)
{
	errno = err;
	return KEEP_SD_UNCHANGED;
}

typedef int (*decode_fn)(const char *buf, size_t len, void *out);

/* Read and decode one state file: 0, 1 when absent, or an error. */
static int read_one(const char *path, decode_fn dec, void *out)
{
	struct keep_buf b;
	int rc;

	keep_buf_init(&b, FILE_MAX);
	rc = keep_read_file(path, &b, FILE_MAX);
	if (rc == KEEP_ERR_IO && errno == ENOENT) {
		keep_buf_release(&b);
		return 1;
	}
	if (!rc)
		rc = dec(b.data ? b.data : "", b.len, out);
	keep_buf_release(&b);
	return rc;
}

static int dec_hold(const char *buf, size_t len, void *out)
{
	return keep_hold_decode(buf, len, out);
}

static int dec_pending(const char *buf, size_t len, void *out)
{
	return keep_pending_decode(buf, len, out);
}

int keep_hold_read(const char *node_dir, const char *key, struct keep_hold *h)
{
	char p[PATH_MAX];
	int rc;

	if (path_of(p, sizeof(p), node_dir, "holds", key, NULL))
		return KEEP_ERR_TOOBIG;
	rc = read_one(p, dec_hold, h);
	if (!rc && strcmp(h->key, key) != 0)
		rc = KEEP_ERR_PARSE;
	return rc;
}

enum keep_sd keep_hold_write(const char *node_dir, const struct keep_hold *h)
{
	char p[PATH_MAX];
	struct keep_buf b;

	if (path_of(p, sizeof(p), node_dir, "holds", h->key, NULL))
		return unchanged(ENAMETOOLONG);
	keep_buf_init(&b, FILE_MAX);
	if (keep_hold_encode(h, &b)) {
		keep_buf_release(&b);
		return unchanged(EINVAL);
	}
	return write_buf(p, &b);
}

enum keep_sd keep_hold_remove(const char *node_dir, const char *key)
{
	char p[PATH_MAX];

	if (path_of(p, sizeof(p), node_dir, "holds", key, NULL))
		return unchanged(ENAMETOOLONG);
	return keep_remove_sd(p);
}

enum keep_sd keep_holds_sync(const char *node_dir)
{
	char p[PATH_MAX];
	int r = snprintf(p, sizeof(p), "%s/holds%s", node_dir, app_sub);

	if (r < 0 || (size_t)r >= sizeof(p))
		return unchanged(ENAMETOOLONG);
	return keep_sync_dir(p);
}

enum keep_sd keep_pending_write(const char *node_dir, const struct keep_pending *pe)
{
	char p[PATH_MAX];
	struct keep_buf b;

	if (pending_path(p, sizeof(p), node_dir, pe))
		return unchanged(ENAMETOOLONG);
	keep_buf_init(&b, FILE_MAX);
	if (keep_pending_encode(pe, &b)) {
		keep_buf_release(&b);
		return unchanged(EINVAL);
	}
	return write_buf(p, &b);
}

enum keep_sd keep_pending_remove(const char *node_dir, const struct keep_pending *pe)
{
	char p[PATH_MAX];

	if (pending_path(p, sizeof(p), node_dir, pe))
		return unchanged(ENAMETOOLONG);
	return keep_remove_sd(p);
}

int keep_pending_exists(const char *node_dir, const struct keep_pending *pe)
{
	char p[PATH_MAX];
	struct stat st;

	if (pending_path(p, sizeof(p), node_dir, pe)) {
		errno = ENAMETOOLONG;
		return KEEP_ERR_IO;
	}
	if (stat(p, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : KEEP_ERR_IO;
}

int keep_pending_read(const char *node_dir, const struct keep_pending *pe, struct keep_pending *out)
{
	char p[PATH_MAX];
	int rc;

	if (pending_path(p, sizeof(p), node_dir, pe)) {
		errno = ENAMETOOLONG;
		return KEEP_ERR_IO;
	}
	rc = read_one(p, dec_pending, out);
	if (!rc && !keep_pending_same(out, pe))
		rc = KEEP_ERR_PARSE;
	return rc;
}

/* Read every regular file of node_dir/sub (skipping temp files) into an
 * array of elem-sized records decoded by dec. */
static int list_dir(const char *node_dir, const char *sub, size_t elem, decode_fn dec, void **out,
		    size_t *n, size_t *bad)
{
	char dir[PATH_MAX], p[PATH_MAX];
	DIR *d;
	struct dirent *e;
	char *arr = NULL;
	size_t cnt = 0, alloc = 0;
	int r;

	*out = NULL;
	*n = 0;
	if (bad)
		*bad = 0;
	r = snprintf(dir, sizeof(dir), "%s/%s%s", node_dir, sub, app_sub);
	if (r < 0 || (size_t)r >= sizeof(dir))
		return KEEP_ERR_TOOBIG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : KEEP_ERR_IO;
	while ((e = readdir(d)) != NULL) {
		struct keep_buf b;
		int rc;

		/* apps/: the application roots' own entries (keep_holds_set_app) */
		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp.") ||
		    strcmp(e->d_name, "apps") == 0)
			continue;
		r = snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (r < 0 || (size_t)r >= sizeof(p))
			continue;
		if (cnt == alloc) {
			size_t na = alloc ? alloc * 2 : 16;
			char *nv;

			if (na > LIST_MAX) {
				free(arr);
				closedir(d);
				return KEEP_ERR_TOOBIG;
			}
			nv = realloc(arr, na * elem);
			if (!nv) {
				free(arr);
				closedir(d);
				return KEEP_ERR_NOMEM;
			}
			arr = nv;
			alloc = na;
		}
		keep_buf_init(&b, FILE_MAX);
		rc = keep_read_file(p, &b, FILE_MAX);
		if (rc == KEEP_ERR_IO && errno == ENOENT) {
			keep_buf_release(&b); /* removed meanwhile */
			continue;
		}
		if (!rc)
			rc = dec(b.data ? b.data : "", b.len, arr + cnt * elem);
		keep_buf_release(&b);
		if (rc) {
			if (bad)
				(*bad)++;
			continue;
		}
		cnt++;
	}
	closedir(d);
	*out = arr;
	*n = cnt;
	return 0;
}

static int cmp_hold(const void *a, const void *b)
{
	return strcmp(((const struct keep_hold *)a)->key, ((const struct keep_hold *)b)->key);
}

static int cmp_pending(const void *a, const void *b)
{
	const struct keep_pending *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->generation < y->generation ? -1 : x->generation > y->generation ? 1 : 0;
}

int keep_holds_list(const char *node_dir, struct keep_hold **out, size_t *n, size_t *bad)
{
	void *arr;
	int rc = list_dir(node_dir, "holds", sizeof(struct keep_hold), dec_hold, &arr, n, bad);

	*out = arr;
	if (!rc && *n > 1)
		qsort(*out, *n, sizeof(**out), cmp_hold);
	return rc;
}

int keep_pending_list(const char *node_dir, struct keep_pending **out, size_t *n, size_t *bad)
{
	void *arr;
	int rc =
	    list_dir(node_dir, "pending", sizeof(struct keep_pending), dec_pending, &arr, n, bad);

	*out = arr;
	if (!rc && *n > 1)
		qsort(*out, *n, sizeof(**out), cmp_pending);
	return rc;
}

enum keep_sd keep_drain_mark(const char *node_dir, const char *instance)
{
	char p[PATH_MAX];
	char body[KEEP_INSTANCE_LEN + 2];
	int r = snprintf(p, sizeof(p), "%s/draining", node_dir);

	if (r < 0 || (size_t)r >= sizeof(p))
		return unchanged(ENAMETOOLONG);
	r = snprintf(body, sizeof(body), "%s\n", instance);
	if (r < 0 || (size_t)r >= (int)sizeof(body))
		return unchanged(EINVAL);
	return keep_write_atomic_sd(p, body, (size_t)r);
}

bool keep_draining(const char *node_dir, const char *instance)
{
	char p[PATH_MAX];
	struct keep_buf b;
	bool yes = false;
	int r = snprintf(p, sizeof(p), "%s/draining", node_dir);

	if (r < 0 || (size_t)r >= sizeof(p))
		return false;
	keep_buf_init(&b, 256);
	if (keep_read_file(p, &b, 256) == 0 && b.len == strlen(instance) + 1 &&
	    memcmp(b.data, instance, b.len - 1) == 0 && b.data[b.len - 1] == '\n')
		yes = true;
	keep_buf_release(&b);
	return yes;
}

/* ---- helpers shared by the ownership commands ------------------------------------ */

int keep_holds_lease_why(const char *node_dir, int64_t now_ms, struct keep_lease_state *st,
			 const char **why)
{
	char boot[64];
	int64_t t;

	if (why)
		*why = NULL;
	if (keep_lease_state_read(node_dir, st) != 0) {
		memset(st, 0, sizeof(*st));
		return KEEP_EXIT_NOT_LIVE;
	}
	/* the clock is read after the file: a caller's reading taken before
	 * a pause (a stop, a swap-in, a slow disk) never makes it look valid */
	t = keep_boot_ms();
	if (t < now_ms)
		t = now_ms;
	keep_boot_id(boot, sizeof(boot));
	if (why)
		*why = keep_lease_state_incomparable(st, boot); /* NULL when valid */
	return keep_lease_state_code(st, t, boot);
}

int keep_holds_lease(const char *node_dir, int64_t now_ms, struct keep_lease_state *st)
{
	return keep_holds_lease_why(node_dir, now_ms, st, NULL);
}

int keep_grant_read(const char *node_dir, const char *key, struct keep_grant_facts *f,
		    const char **why)
{
	struct keep_lease_state st;
	struct keep_pending p;
	int hr;

	memset(f, 0, sizeof(*f));
	hr = keep_hold_read(node_dir, key, &f->hold);
	if (hr != 0)
		memset(&f->hold, 0, sizeof(f->hold));
	if (hr == 0) {
		/* a hold whose release is pending ended (issue 18); unsure counts
		 * as pending: a grant is never given on a doubt */
		keep_pending_of_hold(&p, &f->hold, 0);
		f->in.release_pending = keep_pending_exists(node_dir, &p) != 0;
	}
	/* the lease last, on the boot clock read after its file: the answer
	 * is about the moment it is given, not when the caller began */
	f->lease_code = keep_holds_lease_why(node_dir, 0, &st, why);
	snprintf(f->lease_instance, sizeof(f->lease_instance), "%s", st.instance);
	f->in.have_hold = hr == 0;
	f->in.hold_instance = f->hold.instance;
	f->in.hold_generation = f->hold.generation;
	f->in.hold_epoch = f->hold.epoch;
	f->in.lease_instance = f->lease_instance;
	f->in.lease_valid = f->lease_code == KEEP_EXIT_OK;
	f->in.lease_lapses = st.lapses;
	return f->lease_code;
}

int keep_grant_now(const char *node_dir, const char *key, int64_t generation, enum keep_grant *g,
		   const char **why)
{
	struct keep_grant_facts f;

	keep_grant_read(node_dir, key, &f, why);
	*g = keep_owner_check(&f.in, generation);
	return keep_owner_check_code(*g, f.lease_code);
}

void keep_walls_now(const char *node_dir, struct keep_walls *w)
{
	struct keep_lease_state st;
	char boot_id[64];
	int64_t boot, wall;
	bool have = node_dir && node_dir[0] && keep_lease_state_read(node_dir, &st) == 0;

	keep_boot_id(boot_id, sizeof(boot_id));
	keep_clocks_now(&boot, &wall);
	w->wall_ms = wall;
	w->judge_wall_ms = keep_lease_state_judge_wall(have ? &st : NULL, boot, wall, boot_id);
}

int64_t keep_judge_wall_ms(const char *node_dir)
{
	struct keep_walls w;

	keep_walls_now(node_dir, &w);
	return w.judge_wall_ms;
}

void keep_walls_cfg(const struct keep_config *cfg, struct keep_walls *w)
{
	char dir[KEEP_PATH_MAX + 80];

	if (!cfg->node_id[0] || keep_config_node_dir(cfg, dir, sizeof(dir)) != 0)
		keep_walls_now(NULL, w);
	else
		keep_walls_now(dir, w);
}

int64_t keep_judge_wall_cfg(const struct keep_config *cfg)
{
	struct keep_walls w;

	keep_walls_cfg(cfg, &w);
	return w.judge_wall_ms;
}
