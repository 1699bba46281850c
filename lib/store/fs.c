/* keep — the embedded file-system store (file:///abs/dir; docs/store.md).
 *
 * Layout. The directory DIR is the bucket; key "a/b/c" is the file
 * DIR/a/b/c. Each object file starts with a one-line header
 *
 *     KEEPFS1 <version>\n
 *
 * followed by the body bytes; GET strips the header. Keeping the version in
 * the same file as the body makes a write one atomic rename: body and version
 * can never be seen apart.
 *
 * Version tokens are "<wall ns since the epoch>-<16 hex from getrandom>",
 * fresh for every write, so a token never repeats for a key (no ABA) even
 * when the same body is written twice.
 *
 * Locking: one lock per key, so that writes to different keys never wait
 * on each other (a node's lease write never waits on a data-plane write).
 * The lock of key P/N is the directory P/.keep-lock-<hash of N>. A writer
 * builds its own directory P/.keep-lock-<hash>-<nonce> holding a file
 * "holder" (its pid), and takes the lock by renaming it into place with
 * RENAME_NOREPLACE. Under the lock it compares the current version, writes
 * the new object as "obj-<nonce>" INSIDE its lock directory and fsyncs it,
 * then renames it over the key by the PATH .keep-lock-<hash>/obj-<nonce>
 * (and fsyncs P). That rename can only succeed while its directory is the
 * one at the lock's name: the commit is conditional on still holding the
 * lock. A lock whose directory has not changed for FS_LOCK_STALE_MS (its
 * holder stopped, died, or is stalled in I/O) is broken by the next writer:
 * it swaps its own lock directory in with RENAME_EXCHANGE, then empties and
 * removes the stale one BEFORE it reads the current version, so a stalled
 * holder that resumes finds no object to rename and its write fails,
 * nothing written (AMBIGUOUS, as a timeout). Reads take no lock: a file
 * opened before a rename keeps its old, complete contents. DELETE checks,
 * right before its unlink, that its lock directory is still in place; a
 * delete stalled in that instant may land late, as a delayed S3 DELETE may
 * (the protocol never relies on If-Match on DELETE; docs/store.md).
 *
 * Names starting with ".keep" are ours (lock file, temp files): they never
 * appear in a listing, and a key with any segment starting with ".keep" is
 * refused (KEEP_ERR_INVAL). Paths are walked one segment at a time with
 * openat(O_NOFOLLOW), so a symlink inside DIR is refused and no key can
 * resolve outside DIR.
 *
 * Outcomes: missing object -> NOT_FOUND; failed condition -> CONFLICT; a
 * local error before the rename (or of a read, delete or listing) ->
 * AMBIGUOUS when it is a temporary condition of the host (ENOSPC, EDQUOT,
 * EIO, ENOMEM, EMFILE...: fs_temporary; nothing written, exit 111: retry),
 * REFUSED for any other (EACCES, EROFS, a symlink in the way...); a failure
 * after the rename (directory fsync) -> AMBIGUOUS; the lock not obtained
 * within the store's timeout, or broken while this writer stalled ->
 * AMBIGUOUS (nothing written, but temporary). A file that is not an object
 * of keep's (no header, over KEEP_BODY_MAX) is REFUSED with not_ours set on
 * GET and HEAD, and skipped, named, in listings. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/err.h"
#include "../platform/clock.h"

#define FS_MAGIC "KEEPFS1 "
#define FS_MAGIC_LEN (sizeof(FS_MAGIC) - 1)
#define FS_HDR_MAX (FS_MAGIC_LEN + KEEP_VERSION_MAX) /* magic + version + '\n' */
#define FS_LOCK ".keep-lock-"			     /* + 16 hex: the lock directory of one key */
#define FS_LOCK_NAME_MAX 64			     /* bytes: a lock name, with "-<nonce>" */
#define FS_LOCK_STALE_MS 1000			     /* a lock unchanged this long is broken */
#define FS_LOCK_POLL_NS 1000000			     /* 1 ms between tries for a held lock */
#define FS_DEFAULT_TIMEOUT_MS 10000

/* Results of obj_read beyond -errno. */
#define FS_NOT_OURS (-10001) /* header missing or malformed */
#define FS_TOO_BIG (-10002)  /* body over KEEP_BODY_MAX */

struct fs_store {
	int root_fd; /* O_DIRECTORY fd of DIR, owned */
};

static struct fs_store *fs_of(struct keep_store *s)
{
	return s->impl;
}

static bool internal_name(const char *s, size_t n)
{
	return n >= 5 && memcmp(s, ".keep", 5) == 0;
}

/* True when no '/'-separated segment of s[0..n) starts with ".keep". */
static bool no_internal_segment(const char *s, size_t n)
{
	size_t start = 0, i;

	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == '/') {
			if (internal_name(s + start, i - start))
				return false;
			start = i + 1;
		}
	}
	return true;
}

/* Defensive re-check of a key (store.c validated it already). */
static bool fs_key_ok(const char *key)
{
	return keep_key_valid(key) && no_internal_segment(key, strlen(key));
}

/* Open the directories named by the '/'-separated segments of path[0..n)
 * below root, refusing symlinks. With create, missing directories are made
 * (and their parent fsynced). *out: a new fd the caller closes (root
 * reopened when n == 0). 0 or -errno (-ENOENT: a directory is missing;
 * -ENOTDIR/-ELOOP: a file or symlink is in the way). */
static int open_dirs(int root, const char *path, size_t n, bool create, int *out)
{
	char seg[KEEP_KEY_MAX + 1];
	size_t start = 0, i;
	int fd, next;

	/* a new open file description, not a dup: a dup would share the
	 * directory read position with root */
	fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i <= n; i++) {
		if (i < n && path[i] != '/')
			continue;
		if (i == start) { /* trailing '/' of a prefix */
			start = i + 1;
			continue;
		}
		memcpy(seg, path + start, i - start);
		seg[i - start] = '\0';
		start = i + 1;
		next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, seg, 0777) < 0 && errno != EEXIST)
				goto fail;
			if (fsync(fd) < 0)
				goto fail;
			next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0)
			goto fail;
		close(fd);
		fd = next;
	}
	*out = fd;
	return 0;
fail:
	next = -errno;
	close(fd);
	return next;
}

/* Split key into its parent directory (opened into *dfd) and leaf name. */
static int open_parent(int root, const char *key, bool create, int *dfd, const char **leaf)
{
	const char *slash = strrchr(key, '/');
	size_t n = slash ? (size_t)(slash - key) : 0;

	*leaf = slash ? slash + 1 : key;
	return open_dirs(root, key, n, create, dfd);
}

/* Parse a header in p[0..n): version into v. Body offset into *off.
 * 0 or FS_NOT_OURS. */
static int parse_header(const char *p, size_t n, char *v, size_t *off)
{
	const char *nl;
	size_t vlen, i;

	if (n < FS_MAGIC_LEN || memcmp(p, FS_MAGIC, FS_MAGIC_LEN) != 0)
		return FS_NOT_OURS;
	nl = memchr(p + FS_MAGIC_LEN, '\n', n - FS_MAGIC_LEN);
	if (!nl)
		return FS_NOT_OURS;
	vlen = (size_t)(nl - (p + FS_MAGIC_LEN));
	if (vlen == 0 || vlen >= KEEP_VERSION_MAX)
		return FS_NOT_OURS;
	for (i = 0; i < vlen; i++) {
		unsigned char c = (unsigned char)p[FS_MAGIC_LEN + i];
		if (c <= 0x20 || c >= 0x7f)
			return FS_NOT_OURS;
	}
	memcpy(v, p + FS_MAGIC_LEN, vlen);
	v[vlen] = '\0';
	*off = (size_t)(nl - p) + 1;
	return 0;
}

/* Read the object leaf in dfd: its version into v (KEEP_VERSION_MAX bytes)
 * and, when body is not NULL, its body (replacing body's contents).
 * 0; -ENOENT (absent); -EISDIR (a directory); -ELOOP (a symlink); -EINVAL
 * (not a regular file); FS_NOT_OURS; FS_TOO_BIG; KEEP_ERR_NOMEM (body
 * buffer); other -errno. */
static int obj_read(int dfd, const char *leaf, char *v, struct keep_buf *body)
{
	size_t cap = body ? FS_HDR_MAX + KEEP_BODY_MAX + 1 : FS_HDR_MAX, n = 0, off;
	struct stat st;
	char *p;
	ssize_t r;
	int fd, rc;

	fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out_close;
	}
	p = malloc(cap);
	if (!p) {
		rc = KEEP_ERR_NOMEM;
		goto out_close;
	}
	while (n < cap) {
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			goto out_free;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	rc = parse_header(p, n, v, &off);
	if (rc || !body)
		goto out_free;
	if (n - off > KEEP_BODY_MAX) {
		rc = FS_TOO_BIG;
		goto out_free;
	}
	keep_buf_reset(body);
	rc = keep_buf_add(body, p + off, n - off);
	if (rc == KEEP_ERR_TOOBIG)
		rc = FS_TOO_BIG;
out_free:
	free(p);
out_close:
	close(fd);
	return rc;
}

static const char *obj_err(int rc)
{
	switch (rc) {
	case -EISDIR:
		return "a directory is at the key";
	case -ELOOP:
		return "symlink refused";
	case -ENOTDIR:
		return "a path component is not a directory (or is a symlink)";
	case -EINVAL:
		return "not a regular file";
	case FS_NOT_OURS:
		return "not an object in keep's fs format";
	case FS_TOO_BIG:
		return "object larger than 65536 bytes: no object of keep's";
	default:
		return rc < 0 && rc > -4096 ? strerror(-rc) : "unknown error";
	}
}

/* Is the local error rc (-errno) a temporary condition of the host, one
 * that retrying later can clear: a full disk or quota, an I/O error, no
 * memory, file descriptors or locks left, an interrupted or busy call, a
 * stale handle? Anything else (permissions, a read-only file system, a
 * symlink or a file in the way, a file not ours) is a definite refusal:
 * retrying the same request cannot help (docs/store.md, "The fs
 * backend"; docs/exit-codes.md: 111 against 1). */
static bool fs_temporary(int rc)
{
	switch (-rc) {
	case ENOSPC:
	case EDQUOT:
	case EIO:
	case EAGAIN:
	case EINTR:
	case ENOMEM:
	case ENFILE:
	case EMFILE:
	case ENOBUFS:
	case EBUSY:
	case ETIMEDOUT:
	case ESTALE:
	case ENOLCK:
		return true;
	default:
		return false;
	}
}

/* Set reply for the local error rc (-errno or FS_*) of op on key, before
 * anything was written: AMBIGUOUS for a temporary one (exit 111: retry;
 * nothing was written, but the caller treats it as a write that may have
 * landed, the safe side), else REFUSED (exit 1). */
static void reply_local(struct keep_reply *reply, const char *op, const char *key, int rc)
{
	bool temp = fs_temporary(rc);

	keep_reply_set(reply, temp ? KEEP_STORE_AMBIGUOUS : KEEP_STORE_REFUSED, 0,
		       "unable to %s '%s': %s%s", op, key, obj_err(rc),
		       temp ? " (temporary: nothing done)" : "");
}

/* A fresh version token into v (KEEP_VERSION_MAX bytes). 0 or -errno. */
static int make_version(char *v)
{
	unsigned char r[8];
	struct timespec ts;
	size_t got = 0;
	ssize_t k;

	while (got < sizeof(r)) {
		k = getrandom(r + got, sizeof(r) - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(v, KEEP_VERSION_MAX, "%lld%09ld-%02x%02x%02x%02x%02x%02x%02x%02x",
		 (long long)ts.tv_sec, (long)ts.tv_nsec, r[0], r[1], r[2], r[3], r[4], r[5], r[6],
		 r[7]);
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t r;

	while (n) {
		r = write(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* ---- per-key locks --------------------------------------------------------- */

/* A lock held on one key: its directory (opened) and names. */
struct fs_lock {
	int d;			     /* O_DIRECTORY fd of our lock directory, or -1 */
	char name[FS_LOCK_NAME_MAX]; /* ".keep-lock-<hash>": where the lock lives */
	char prep[FS_LOCK_NAME_MAX]; /* ".keep-lock-<hash>-<nonce>": ours before it is taken */
	char nonce[20];		     /* 16 hex */
	char obj[FS_LOCK_NAME_MAX];  /* "obj-<nonce>" */
	char objpath[2 * FS_LOCK_NAME_MAX]; /* "<name>/obj-<nonce>", relative to the parent */
};

/* FNV-1a, 64 bits: the lock name of a leaf (a shared lock on a collision
 * only makes two keys wait on each other; never unsafe). */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static int random_hex16(char out[17])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[8];
	size_t got = 0, i;
	ssize_t k;

	while (got < sizeof(r)) {
		k = getrandom(r + got, sizeof(r) - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	for (i = 0; i < 8; i++) {
		out[2 * i] = hex[r[i] >> 4];
		out[2 * i + 1] = hex[r[i] & 15];
	}
	out[16] = '\0';
	return 0;
}

/* Empty the directory at name in dfd (files only: a lock directory holds
 * "holder" and obj-* files) and remove it. Best effort: a stalled holder
 * may still add its object file once; the loop takes it too. */
static void reap_dir(int dfd, const char *name)
{
	int tries, d;

	for (tries = 0; tries < 4; tries++) {
		DIR *dir;
		struct dirent *de;

		d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d < 0)
			return;
		dir = fdopendir(d);
		if (!dir) {
			close(d);
			return;
		}
		while ((de = readdir(dir)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				unlinkat(dirfd(dir), de->d_name, 0);
		closedir(dir);
		if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
			return;
	}
}

/* Realtime now in ms on the clock file times are stamped with. */
static int64_t coarse_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How long the lock directory `name` in dfd has been unchanged (ms); -1
 * when it is absent. */
static int64_t lock_age_ms(int dfd, const char *name)
{
	struct stat st;
	int64_t m, c;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	m = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	c = (int64_t)st.st_ctim.tv_sec * 1000 + st.st_ctim.tv_nsec / 1000000;
	return coarse_wall_ms() - (m > c ? m : c);
}

/* Build our lock directory lk->prep in dfd (with its holder file). */
static int lock_prepare(int dfd, struct fs_lock *lk)
{
	char pid[32];
	int fd, n, rc;

	if (mkdirat(dfd, lk->prep, 0700) < 0)
		return -errno;
	lk->d = openat(dfd, lk->prep, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lk->d < 0) {
		rc = -errno;
		unlinkat(dfd, lk->prep, AT_REMOVEDIR);
		return rc;
	}
	fd = openat(lk->d, "holder", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		close(lk->d);
		lk->d = -1;
		unlinkat(dfd, lk->prep, AT_REMOVEDIR);
		return rc;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (write(fd, pid, (size_t)n) < 0) {
		/* the holder file only keeps the directory non-empty */
	}
	close(fd);
	return 0;
}

/* Give up our prepared or held lock directory (the lock itself, when we
 * hold it: removing a directory that another writer swapped in fails,
 * since every lock directory holds a file). */
static void lock_release(int dfd, struct fs_lock *lk, bool held)
{
	if (lk->d >= 0) {
		unlinkat(lk->d, lk->obj, 0);
		unlinkat(lk->d, "holder", 0);
		close(lk->d);
		lk->d = -1;
	}
	unlinkat(dfd, held ? lk->name : lk->prep, AT_REMOVEDIR);
}

/* Take the lock of leaf in dfd within timeout_ms. 0 (lk filled, held),
 * -ETIMEDOUT, or -errno (nothing held). */
static int lock_take(struct keep_store *s, int dfd, const char *leaf, struct fs_lock *lk)
{
	int64_t t = s->timeout_ms > 0 ? s->timeout_ms : FS_DEFAULT_TIMEOUT_MS;
	int64_t deadline = keep_mono_ms() + t;
	struct timespec pause = {0, FS_LOCK_POLL_NS};
	int rc;

	memset(lk, 0, sizeof(*lk));
	lk->d = -1;
	rc = random_hex16(lk->nonce);
	if (rc)
		return rc;
	snprintf(lk->name, sizeof(lk->name), "%s%016llx", FS_LOCK, (unsigned long long)fnv1a(leaf));
	if (snprintf(lk->prep, sizeof(lk->prep), "%s-%s", lk->name, lk->nonce) < 0 ||
	    snprintf(lk->obj, sizeof(lk->obj), "obj-%s", lk->nonce) < 0 ||
	    snprintf(lk->objpath, sizeof(lk->objpath), "%s/%s", lk->name, lk->obj) < 0)
		return -EOVERFLOW;
	rc = lock_prepare(dfd, lk);
	if (rc)
		return rc;
	for (;;) {
		int64_t age;

		if (renameat2(dfd, lk->prep, dfd, lk->name, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST && errno != ENOTEMPTY) {
			rc = -errno;
			break;
		}
		age = lock_age_ms(dfd, lk->name);
		if (age > FS_LOCK_STALE_MS) {
			/* a stopped, dead or stalled holder: swap ours in, then
			 * clear the stale directory before anything else, so its
			 * holder's commit (a rename out of it) cannot land later */
			if (renameat2(dfd, lk->prep, dfd, lk->name, RENAME_EXCHANGE) == 0) {
				reap_dir(dfd, lk->prep);
				return 0;
			}
			if (errno != ENOENT && errno != EINVAL) {
				rc = -errno;
				break;
			}
			/* ENOENT: released meanwhile, try again at once; EINVAL:
			 * no RENAME_EXCHANGE here, wait for the holder */
			if (errno == ENOENT)
				continue;
		}
		if (keep_mono_ms() >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		nanosleep(&pause, NULL);
	}
	lock_release(dfd, lk, false);
	return rc;
}

/* Is our lock directory still the one at the lock's name? */
static bool lock_still_held(int dfd, const struct fs_lock *lk)
{
	struct stat a, b;

	return fstat(lk->d, &a) == 0 && fstatat(dfd, lk->name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* Write version+body as the object file lk->obj inside our lock directory
 * and fsync it. 0 or -errno (the file removed). */
static int obj_stage(const struct fs_lock *lk, const char *v, const void *body, size_t len)
{
	char hdr[FS_HDR_MAX + 1];
	int fd, rc, hn;

	fd = openat(lk->d, lk->obj, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	hn = snprintf(hdr, sizeof(hdr), "%s%s\n", FS_MAGIC, v);
	if (hn < 0 || (size_t)hn >= sizeof(hdr)) {
		close(fd);
		unlinkat(lk->d, lk->obj, 0);
		return -EOVERFLOW;
	}
	rc = write_all(fd, hdr, (size_t)hn);
	if (!rc && len)
		rc = write_all(fd, body, len);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc)
		unlinkat(lk->d, lk->obj, 0);
	return rc;
}

/* Set reply for an obj_read result rc on key (0: OK with version v). */
static void reply_read(struct keep_reply *reply, const char *key, int rc, const char *v)
{
	if (rc == -ENOENT || rc == -EISDIR) {
		keep_reply_set(reply, KEEP_STORE_NOT_FOUND, 0, "no such object");
	} else if (rc) {
		reply_local(reply, "read", key, rc);
		reply->not_ours = rc == FS_NOT_OURS || rc == FS_TOO_BIG;
	} else {
		keep_reply_set(reply, KEEP_STORE_OK, 0, NULL);
		memcpy(reply->version, v, KEEP_VERSION_MAX);
	}
}

static int fs_get(struct keep_store *s, const char *key, struct keep_buf *body,
		  struct keep_reply *reply)
{
	char v[KEEP_VERSION_MAX];
	const char *leaf;
	int dfd, rc;

	if (!fs_key_ok(key))
		return KEEP_ERR_INVAL;
	rc = open_parent(fs_of(s)->root_fd, key, false, &dfd, &leaf);
	if (rc == 0) {
		rc = obj_read(dfd, leaf, v, body);
		close(dfd);
	}
	if (rc == KEEP_ERR_NOMEM)
		return rc;
	reply_read(reply, key, rc, v);
	return 0;
}

static int fs_head(struct keep_store *s, const char *key, struct keep_reply *reply)
{
	char v[KEEP_VERSION_MAX];
	const char *leaf;
	int dfd, rc;

	if (!fs_key_ok(key))
		return KEEP_ERR_INVAL;
	rc = open_parent(fs_of(s)->root_fd, key, false, &dfd, &leaf);
	if (rc == 0) {
		rc = obj_read(dfd, leaf, v, NULL);
		close(dfd);
	}
	if (rc == KEEP_ERR_NOMEM)
		return rc;
	reply_read(reply, key, rc, v);
	return 0;
}

/* Under the lock: the current version of leaf in dfd into cur ("" when
 * absent). 0 or an obj_read error. */
static int current(int dfd, const char *leaf, char *cur)
{
	int rc;

	cur[0] = '\0';
	rc = obj_read(dfd, leaf, cur, NULL);
	if (rc == -ENOENT) {
		cur[0] = '\0';
		return 0;
	}
	return rc;
}

static void reply_lock_err(struct keep_reply *reply, const char *op, const char *key, int rc)
{
	if (rc == -ETIMEDOUT)
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0,
			       "timed out waiting for the lock of '%s' (nothing written)", key);
	else
		reply_local(reply, op, key, rc);
}

static void reply_lock_lost(struct keep_reply *reply, const char *key)
{
	keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0,
		       "stalled past %d ms holding the lock of '%s': another writer broke it "
		       "(nothing written)",
		       FS_LOCK_STALE_MS, key);
}

static int fs_put(struct keep_store *s, const char *key, const void *body, size_t len,
		  enum keep_cond cond, const char *if_match, struct keep_reply *reply)
{
	char cur[KEEP_VERSION_MAX], v[KEEP_VERSION_MAX];
	struct fs_lock lk;
	const char *leaf;
	int dfd, rc;

	if (!fs_key_ok(key) || len > KEEP_BODY_MAX || (len && !body))
		return KEEP_ERR_INVAL;
	if (cond == KEEP_COND_IF_MATCH && (!if_match || !*if_match))
		return KEEP_ERR_INVAL;
	/* the lock lives beside the key: its directory must exist (an
	 * If-Match on a key whose directory is missing fails at once) */
	rc = open_parent(fs_of(s)->root_fd, key, cond != KEEP_COND_IF_MATCH, &dfd, &leaf);
	if (rc == -ENOENT && cond == KEEP_COND_IF_MATCH) {
		keep_reply_set(reply, KEEP_STORE_CONFLICT, 0, "no such object");
		return 0;
	}
	if (rc) {
		reply_local(reply, "put", key, rc);
		return 0;
	}
	rc = lock_take(s, dfd, leaf, &lk);
	if (rc) {
		reply_lock_err(reply, "put", key, rc);
		close(dfd);
		return 0;
	}
	rc = current(dfd, leaf, cur);
	if (rc) {
		reply_local(reply, "put", key, rc);
		goto out;
	}
	if (cond == KEEP_COND_IF_NONE_MATCH && cur[0]) {
		keep_reply_set(reply, KEEP_STORE_CONFLICT, 0, "object exists");
		goto out;
	}
	if (cond == KEEP_COND_IF_MATCH && !cur[0]) {
		keep_reply_set(reply, KEEP_STORE_CONFLICT, 0, "no such object");
		goto out;
	}
	if (cond == KEEP_COND_IF_MATCH && strcmp(cur, if_match) != 0) {
		keep_reply_set(reply, KEEP_STORE_CONFLICT, 0, "version does not match");
		goto out;
	}
	rc = make_version(v);
	if (!rc)
		rc = obj_stage(&lk, v, body, len);
	if (rc) {
		reply_local(reply, "put", key, rc);
		goto out;
	}
	/* the commit: by the lock's name, so it fails once the lock was broken */
	if (renameat(dfd, lk.objpath, dfd, leaf) < 0) {
		if (errno == ENOENT)
			reply_lock_lost(reply, key);
		else
			reply_local(reply, "put", key, -errno);
		goto out;
	}
	if (fsync(dfd) < 0) {
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0,
			       "renamed into place but directory fsync failed: %s",
			       strerror(errno));
		goto out;
	}
	keep_reply_set(reply, KEEP_STORE_OK, 0, NULL);
	memcpy(reply->version, v, sizeof(v));
out:
	lock_release(dfd, &lk, true);
	close(dfd);
	return 0;
}

static int fs_del(struct keep_store *s, const char *key, const char *if_match,
		  struct keep_reply *reply)
{
	char cur[KEEP_VERSION_MAX];
	struct fs_lock lk;
	const char *leaf;
	int dfd, rc;

	if (!fs_key_ok(key))
		return KEEP_ERR_INVAL;
	rc = open_parent(fs_of(s)->root_fd, key, false, &dfd, &leaf);
	if (rc == -ENOENT) {
		keep_reply_set(reply, KEEP_STORE_NOT_FOUND, 0, "no such object");
		return 0;
	}
	if (rc) {
		reply_local(reply, "delete", key, rc);
		return 0;
	}
	rc = lock_take(s, dfd, leaf, &lk);
	if (rc) {
		reply_lock_err(reply, "del", key, rc);
		close(dfd);
		return 0;
	}
	rc = current(dfd, leaf, cur);
	if (rc == -EISDIR || (!rc && !cur[0])) {
		keep_reply_set(reply, KEEP_STORE_NOT_FOUND, 0, "no such object");
		goto out;
	}
	if (rc) {
		reply_local(reply, "delete", key, rc);
		goto out;
	}
	if (if_match && strcmp(cur, if_match) != 0) {
		keep_reply_set(reply, KEEP_STORE_CONFLICT, 0, "version does not match");
		goto out;
	}
	if (!lock_still_held(dfd, &lk)) {
		reply_lock_lost(reply, key);
		goto out;
	}
	if (unlinkat(dfd, leaf, 0) < 0) {
		reply_local(reply, "delete", key, -errno);
		goto out;
	}
	if (fsync(dfd) < 0) {
		keep_reply_set(reply, KEEP_STORE_AMBIGUOUS, 0,
			       "unlinked but directory fsync failed: %s", strerror(errno));
		goto out;
	}
	keep_reply_set(reply, KEEP_STORE_OK, 0, NULL);
out:
	lock_release(dfd, &lk, true);
	close(dfd);
	return 0;
}

/* Walk directory dfd whose key path is path[0..n) (empty or ending in '/'),
 * adding every object whose key starts with prefix. Takes ownership of dfd.
 * 0, -errno, KEEP_ERR_NOMEM or KEEP_ERR_TOOBIG. */
static int scan(int dfd, char *path, size_t n, const char *prefix, size_t plen,
		struct keep_list *out)
{
	char v[KEEP_VERSION_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	size_t nl, m;
	int rc = 0, sub;

	d = fdopendir(dfd);
	if (!d) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rc = -errno;
			break;
		}
		nl = strlen(de->d_name);
		if (internal_name(de->d_name, nl) || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n + nl + 1 > KEEP_KEY_MAX) {
			/* no valid key can live there: reported when it matches */
			m = plen > n ? plen - n : 0;
			if (memcmp(path, prefix, n < plen ? n : plen) == 0 &&
			    strncmp(de->d_name, prefix + n, m < nl ? m : nl) == 0) {
				char shown[KEEP_LIST_SKIP_TEXT + 1];

				if (snprintf(shown, sizeof(shown), "%.*s%s", (int)n, path,
					     de->d_name) < 0)
					shown[0] = '\0';
				keep_list_skip(out, shown, strlen(shown), "longer than 1024 bytes");
			}
			continue;
		}
		memcpy(path + n, de->d_name, nl);
		path[n + nl] = '\0';
		/* compare what both have: prune subtrees that cannot match */
		m = n + nl < plen ? n + nl : plen;
		if (memcmp(path, prefix, m) != 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue; /* raced a delete */
			rc = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			path[n + nl] = '/';
			path[n + nl + 1] = '\0';
			m = n + nl + 1 < plen ? n + nl + 1 : plen;
			if (memcmp(path, prefix, m) != 0)
				continue;
			sub = openat(dirfd(d), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				if (errno == ENOENT)
					continue;
				rc = -errno;
				break;
			}
			rc = scan(sub, path, n + nl + 1, prefix, plen, out);
			if (rc)
				break;
			continue;
		}
		if (n + nl < plen)
			continue; /* shorter than the prefix */
		if (!S_ISREG(st.st_mode)) {
			keep_list_skip(out, path, n + nl, "not a regular file");
			continue;
		}
		if (!keep_key_valid(path)) {
			keep_list_skip(out, path, n + nl, "not a key keep can use");
			continue;
		}
		rc = obj_read(dirfd(d), de->d_name, v, NULL);
		if (rc == -ENOENT || rc == -EISDIR) {
			rc = 0; /* raced a delete or a rename */
			continue;
		}
		if (rc == FS_NOT_OURS || rc == -ELOOP || rc == -EINVAL) {
			keep_list_skip(out, path, n + nl, obj_err(rc));
			rc = 0;
			continue;
		}
		if (rc)
			break;
		rc = keep_list_add(out, path, v);
		if (rc)
			break;
	}
	closedir(d);
	path[n] = '\0';
	return rc;
}

static int fs_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		   struct keep_reply *reply)
{
	char path[KEEP_KEY_MAX + 2];
	const char *slash;
	size_t plen, dlen, n0 = out->n;
	int dfd, rc;

	if (!keep_prefix_valid(prefix))
		return KEEP_ERR_INVAL;
	plen = strlen(prefix);
	slash = strrchr(prefix, '/');
	dlen = slash ? (size_t)(slash - prefix) + 1 : 0;
	if (!no_internal_segment(prefix, dlen ? dlen - 1 : 0))
		return KEEP_ERR_INVAL;
	if (internal_name(prefix + dlen, plen - dlen)) {
		keep_reply_set(reply, KEEP_STORE_OK, 0, NULL); /* nothing of ours is listed */
		return 0;
	}
	rc = open_dirs(fs_of(s)->root_fd, prefix, dlen, false, &dfd);
	if (rc == -ENOENT || rc == -ENOTDIR) {
		keep_reply_set(reply, KEEP_STORE_OK, 0, NULL);
		return 0;
	}
	if (rc == 0) {
		memcpy(path, prefix, dlen);
		path[dlen] = '\0';
		rc = scan(dfd, path, dlen, prefix, plen, out);
	}
	if (rc) {
		while (out->n > n0)
			free(out->v[--out->n].key);
		if (rc == KEEP_ERR_NOMEM)
			return rc;
		if (rc == KEEP_ERR_TOOBIG)
			keep_reply_set(reply, KEEP_STORE_REFUSED, 0, "listing exceeds %d entries",
				       KEEP_LIST_MAX);
		else
			reply_local(reply, "list", prefix, rc);
		return 0;
	}
	keep_list_sort(out);
	keep_reply_set(reply, KEEP_STORE_OK, 0, NULL);
	return 0;
}

static void fs_free(struct keep_store *s)
{
	struct fs_store *fs = fs_of(s);

	if (fs) {
		close(fs->root_fd);
		free(fs);
	}
	free(s);
}

static const struct keep_store_ops fs_ops = {
    .name = "fs",
    .get = fs_get,
    .head = fs_head,
    .put = fs_put,
    .del = fs_del,
    .list = fs_list,
    .free = fs_free,
};

/* rest: the absolute directory after "file://". The directory must exist;
 * it is opened once and held for the store's life. */
int keep_store_fs_open(const char *rest, const struct keep_store_opts *opts,
		       struct keep_store **out, char *err, size_t errlen)
{
	struct keep_store *s;
	struct fs_store *fs;
	int fd;

	*out = NULL;
	if (keep_store_fs_url_check(rest, err, errlen) != 0)
		return KEEP_ERR_INVAL;
	fd = open(rest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(err, errlen, "store directory '%s' does not exist", rest);
		else
			snprintf(err, errlen, "unable to open store directory '%s': %s", rest,
				 strerror(errno));
		return KEEP_ERR_STORE;
	}
	s = calloc(1, sizeof(*s));
	fs = calloc(1, sizeof(*fs));
	if (!s || !fs) {
		free(s);
		free(fs);
		close(fd);
		snprintf(err, errlen, "out of memory");
		return KEEP_ERR_NOMEM;
	}
	fs->root_fd = fd;
	s->ops = &fs_ops;
	s->impl = fs;
	s->timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : FS_DEFAULT_TIMEOUT_MS;
	*out = s;
	return 0;
}
