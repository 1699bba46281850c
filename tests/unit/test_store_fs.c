/* Unit tests: the fs store backend (store/fs.c) and the fault injector
 * (store/fault.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/base/err.h"
#include "../../lib/platform/clock.h"
#include "../../lib/store/store.h"
#include "unit.h"

static char base[] = "/tmp/keep-test-fs-XXXXXX";
static int ndirs;

/* A fresh empty bucket directory under base; path into dir (256 bytes). */
static void new_dir(char *dir)
{
	snprintf(dir, 256, "%s/b%d", base, ndirs++);
	if (mkdir(dir, 0755) < 0) {
		perror("mkdir");
		exit(2);
	}
}

/* Open an fs store on a fresh directory. */
static struct keep_store *fresh(char *dir)
{
	struct keep_store *s = NULL;
	char err[256];

	new_dir(dir);
	if (keep_store_fs_open(dir, NULL, &s, err, sizeof(err)) != 0) {
		printf("# open %s: %s\n", dir, err);
		exit(2);
	}
	return s;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static int put_s(struct keep_store *s, const char *key, const char *body, enum keep_cond c,
		 const char *v, struct keep_reply *r)
{
	return keep_store_put(s, key, body, strlen(body), c, v, r);
}

TEST(open_refuses_bad_paths)
{
	struct keep_store *s = NULL;
	char err[256], dir[256];

	CHECK_EQ_INT(keep_store_fs_open("relative/dir", NULL, &s, err, sizeof(err)),
		     KEEP_ERR_INVAL);
	CHECK(strstr(err, "not absolute") != NULL);
	CHECK(s == NULL);
	snprintf(dir, sizeof(dir), "%s/missing", base);
	CHECK_EQ_INT(keep_store_fs_open(dir, NULL, &s, err, sizeof(err)), KEEP_ERR_STORE);
	CHECK(strstr(err, "does not exist") != NULL);
	CHECK_EQ_INT(keep_store_open("file://rel", NULL, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	new_dir(dir);
	{
		char url[300];
		snprintf(url, sizeof(url), "file://%s", dir);
		CHECK_EQ_INT(keep_store_open(url, NULL, &s, err, sizeof(err)), 0);
		CHECK(s && strcmp(s->ops->name, "fs") == 0);
		CHECK_EQ_INT(s->timeout_ms, 10000);
		keep_store_free(s);
	}
}

TEST(create_conflict_update_stale_delete)
{
	struct keep_reply r;
	struct keep_buf b;
	char dir[256], v1[KEEP_VERSION_MAX], v2[KEEP_VERSION_MAX];
	struct keep_store *s = fresh(dir);

	keep_buf_init(&b, KEEP_BODY_MAX);
	CHECK_EQ_INT(keep_store_get(s, "nodes/n1", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_store_head(s, "nodes/n1", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(put_s(s, "nodes/n1", "v1", KEEP_COND_IF_MATCH, "x", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);

	CHECK_EQ_INT(put_s(s, "nodes/n1", "one", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK(r.version[0] != '\0');
	memcpy(v1, r.version, sizeof(v1));

	CHECK_EQ_INT(put_s(s, "nodes/n1", "again", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);
	CHECK_EQ_STR(r.version, "");

	CHECK_EQ_INT(put_s(s, "nodes/n1", "two", KEEP_COND_IF_MATCH, v1, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	memcpy(v2, r.version, sizeof(v2));
	CHECK(strcmp(v1, v2) != 0);

	CHECK_EQ_INT(put_s(s, "nodes/n1", "stale", KEEP_COND_IF_MATCH, v1, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);

	CHECK_EQ_INT(keep_store_get(s, "nodes/n1", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_STR(keep_buf_str(&b), "two");
	CHECK_EQ_STR(r.version, v2);
	CHECK_EQ_INT(keep_store_head(s, "nodes/n1", &r), 0);
	CHECK_EQ_STR(r.version, v2);

	CHECK_EQ_INT(keep_store_del(s, "nodes/n1", v1, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);
	CHECK_EQ_INT(keep_store_del(s, "nodes/n1", v2, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(keep_store_del(s, "nodes/n1", NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_store_get(s, "nodes/n1", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);

	/* unconditional put creates and replaces; empty body round-trips */
	CHECK_EQ_INT(put_s(s, "x", "", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(put_s(s, "x", "", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(keep_store_get(s, "x", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(b.len, 0);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(versions_never_repeat)
{
	struct keep_reply r;
	char dir[256], seen[20][KEEP_VERSION_MAX];
	struct keep_store *s = fresh(dir);
	int i, j;

	for (i = 0; i < 20; i++) {
		if (i == 10) {
			CHECK_EQ_INT(keep_store_del(s, "k", NULL, &r), 0);
			CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
		}
		CHECK_EQ_INT(put_s(s, "k", "same body", KEEP_COND_NONE, NULL, &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
		memcpy(seen[i], r.version, KEEP_VERSION_MAX);
		for (j = 0; j < i; j++)
			CHECK(strcmp(seen[i], seen[j]) != 0);
	}
	keep_store_free(s);
}

TEST(list_prefixes)
{
	static const char *keys[] = {"nodes/n2", "nodes/n1", "nodes2/x", "other", "nodes/sub/deep"};
	struct keep_reply r;
	struct keep_list l;
	char dir[256], path[512];
	struct keep_store *s = fresh(dir);
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		CHECK_EQ_INT(put_s(s, keys[i], keys[i], KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	}
	/* a stray temp file, a symlink and a foreign file are never listed */
	snprintf(path, sizeof(path), "%s/nodes/.keep-tmp-123-x", dir);
	write_file(path, "KEEPFS1 v\nbody", 14);
	snprintf(path, sizeof(path), "%s/nodes/link", dir);
	CHECK_EQ_INT(symlink("n1", path), 0);
	snprintf(path, sizeof(path), "%s/nodes/foreign", dir);
	write_file(path, "not ours", 8);

	keep_list_init(&l);
	CHECK_EQ_INT(keep_store_list(s, "", &l, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(l.n, 5);
	if (l.n == 5) {
		CHECK_EQ_STR(l.v[0].key, "nodes/n1");
		CHECK_EQ_STR(l.v[1].key, "nodes/n2");
		CHECK_EQ_STR(l.v[2].key, "nodes/sub/deep");
		CHECK_EQ_STR(l.v[3].key, "nodes2/x");
		CHECK_EQ_STR(l.v[4].key, "other");
		CHECK(l.v[0].version[0] != '\0');
	}
	keep_list_release(&l);

	CHECK_EQ_INT(keep_store_list(s, "nodes/", &l, &r), 0);
	CHECK_EQ_INT(l.n, 3);
	keep_list_release(&l);
	CHECK_EQ_INT(keep_store_list(s, "nodes", &l, &r), 0);
	CHECK_EQ_INT(l.n, 4);
	keep_list_release(&l);
	CHECK_EQ_INT(keep_store_list(s, "nodes/n", &l, &r), 0);
	CHECK_EQ_INT(l.n, 2);
	keep_list_release(&l);
	CHECK_EQ_INT(keep_store_list(s, "nodes/sub/d", &l, &r), 0);
	CHECK_EQ_INT(l.n, 1);
	keep_list_release(&l);
	CHECK_EQ_INT(keep_store_list(s, "nodes/n1", &l, &r), 0);
	CHECK_EQ_INT(l.n, 1);
	keep_list_release(&l);
	CHECK_EQ_INT(keep_store_list(s, "zzz/", &l, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(l.n, 0);
	CHECK_EQ_INT(keep_store_list(s, "other/", &l, &r), 0); /* a file where a dir would be */
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(l.n, 0);
	CHECK_EQ_INT(keep_store_list(s, ".keep", &l, &r), 0);
	CHECK_EQ_INT(l.n, 0);
	CHECK_EQ_INT(keep_store_list(s, ".keep-locks/", &l, &r), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_store_list(s, "/abs", &l, &r), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_store_list(s, "../", &l, &r), KEEP_ERR_INVAL);
	keep_list_release(&l);
	keep_store_free(s);
}

TEST(bad_keys_refused)
{
	static const char *bad[] = {"..",	  "../x",    "a/../b",	   "/abs",	 "a//b",
				    "a/./b",	  "a/",	     "",	   "a\x01z",	 "a\\b",
				    ".keep-lock", "a/.keep", "a/.keepx/b", ".keep-tmp-1"};
	struct keep_reply r;
	struct keep_buf b;
	struct keep_list l;
	char dir[256];
	struct keep_store *s = fresh(dir);
	size_t i;

	keep_buf_init(&b, KEEP_BODY_MAX);
	keep_list_init(&l);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_INT(put_s(s, bad[i], "x", KEEP_COND_NONE, NULL, &r), KEEP_ERR_INVAL);
		CHECK_EQ_INT(keep_store_get(s, bad[i], &b, &r), KEEP_ERR_INVAL);
		CHECK_EQ_INT(keep_store_head(s, bad[i], &r), KEEP_ERR_INVAL);
		CHECK_EQ_INT(keep_store_del(s, bad[i], NULL, &r), KEEP_ERR_INVAL);
		/* the backend re-checks without store.c's validation */
		CHECK_EQ_INT(s->ops->put(s, bad[i], "x", 1, KEEP_COND_NONE, NULL, &r),
			     KEEP_ERR_INVAL);
		CHECK_EQ_INT(s->ops->get(s, bad[i], &b, &r), KEEP_ERR_INVAL);
		CHECK_EQ_INT(s->ops->del(s, bad[i], NULL, &r), KEEP_ERR_INVAL);
	}
	CHECK_EQ_INT(s->ops->list(s, "../", &l, &r), KEEP_ERR_INVAL);
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_IF_MATCH, "", &r), KEEP_ERR_INVAL);
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_IF_MATCH, NULL, &r), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_store_list(s, "", &l, &r), 0);
	CHECK_EQ_INT(l.n, 0); /* nothing was written */
	keep_list_release(&l);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(symlinks_refused)
{
	struct keep_reply r;
	struct keep_buf b;
	char dir[256], out[256], path[512], target[512];
	struct keep_store *s = fresh(dir);
	struct stat st;

	keep_buf_init(&b, KEEP_BODY_MAX);
	new_dir(out);
	/* a directory symlink pointing outside the bucket */
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK_EQ_INT(symlink(out, path), 0);
	CHECK_EQ_INT(put_s(s, "link/x", "escape", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	snprintf(target, sizeof(target), "%s/x", out);
	CHECK(stat(target, &st) < 0 && errno == ENOENT);
	write_file(target, "KEEPFS1 v1\nsecret", 17);
	CHECK_EQ_INT(keep_store_get(s, "link/x", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_INT(b.len, 0);
	CHECK_EQ_INT(keep_store_del(s, "link/x", NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK(stat(target, &st) == 0);
	/* a file symlink as the leaf */
	snprintf(path, sizeof(path), "%s/leaf", dir);
	CHECK_EQ_INT(symlink(target, path), 0);
	CHECK_EQ_INT(keep_store_get(s, "leaf", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_INT(put_s(s, "leaf", "over", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(directories_and_files_in_the_way)
{
	struct keep_reply r;
	struct keep_buf b;
	char dir[256];
	struct keep_store *s = fresh(dir);

	keep_buf_init(&b, KEEP_BODY_MAX);
	CHECK_EQ_INT(put_s(s, "a/b", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(keep_store_get(s, "a", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(put_s(s, "a", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_INT(put_s(s, "a/b/c", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_store_get(s, "a/b/c", &b, &r), 0);
	CHECK(r.outcome == KEEP_STORE_REFUSED || r.outcome == KEEP_STORE_NOT_FOUND);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(oversize_bodies)
{
	struct keep_reply r;
	struct keep_buf b;
	char dir[256], path[512], hdr[] = "KEEPFS1 1-abc\n";
	struct keep_store *s = fresh(dir);
	char *big = malloc(KEEP_BODY_MAX + 1 + sizeof(hdr));

	if (!big)
		exit(2);
	memset(big, 'z', KEEP_BODY_MAX + 1 + sizeof(hdr));
	keep_buf_init(&b, KEEP_BODY_MAX);
	CHECK_EQ_INT(keep_store_put(s, "big", big, KEEP_BODY_MAX + 1, KEEP_COND_NONE, NULL, &r),
		     KEEP_ERR_INVAL);
	CHECK_EQ_INT(s->ops->put(s, "big", big, KEEP_BODY_MAX + 1, KEEP_COND_NONE, NULL, &r),
		     KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_store_put(s, "max", big, KEEP_BODY_MAX, KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(keep_store_get(s, "max", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(b.len, KEEP_BODY_MAX);
	/* an object file grown too large behind our back */
	memcpy(big, hdr, strlen(hdr));
	snprintf(path, sizeof(path), "%s/huge", dir);
	write_file(path, big, strlen(hdr) + KEEP_BODY_MAX + 1);
	CHECK_EQ_INT(keep_store_get(s, "huge", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK(strstr(r.detail, "object larger than 65536 bytes") != NULL);
	CHECK(r.not_ours); /* no object of keep's: 17 for the commands, never 111 */
	CHECK_EQ_INT(keep_store_head(s, "huge", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_STR(r.version, "1-abc");
	/* a file not in our format */
	snprintf(path, sizeof(path), "%s/foreign", dir);
	write_file(path, "hello", 5);
	CHECK_EQ_INT(keep_store_get(s, "foreign", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK(r.not_ours);
	free(big);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(racing_if_match_one_winner)
{
	enum { N = 16 };
	struct keep_reply r;
	struct keep_buf b;
	char dir[256], v0[KEEP_VERSION_MAX], body[32];
	struct keep_store *s = fresh(dir);
	pid_t pids[N];
	int i, st, wins = 0, conflicts = 0, winner = -1;

	CHECK_EQ_INT(put_s(s, "race", "start", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	memcpy(v0, r.version, sizeof(v0));
	for (i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct keep_store *c = NULL;
			char err[256];
			if (keep_store_fs_open(dir, NULL, &c, err, sizeof(err)) != 0)
				_exit(3);
			snprintf(body, sizeof(body), "writer %d", i);
			if (put_s(c, "race", body, KEEP_COND_IF_MATCH, v0, &r) != 0)
				_exit(3);
			_exit(r.outcome == KEEP_STORE_OK	 ? 0
			      : r.outcome == KEEP_STORE_CONFLICT ? 1
								 : 2);
		}
	}
	for (i = 0; i < N; i++) {
		if (pids[i] < 0 || waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st))
			continue;
		if (WEXITSTATUS(st) == 0) {
			wins++;
			winner = i;
		} else if (WEXITSTATUS(st) == 1) {
			conflicts++;
		}
	}
	CHECK_EQ_INT(wins, 1);
	CHECK_EQ_INT(conflicts, N - 1);
	keep_buf_init(&b, KEEP_BODY_MAX);
	CHECK_EQ_INT(keep_store_get(s, "race", &b, &r), 0);
	snprintf(body, sizeof(body), "writer %d", winner);
	CHECK_EQ_STR(keep_buf_str(&b), body);
	CHECK(strcmp(r.version, v0) != 0);
	keep_buf_release(&b);
	keep_store_free(s);
}

/* ---- fault injector ------------------------------------------------------ */

/* The lock directory of leaf, as fs.c names it (FNV-1a 64 of the leaf). */
static void lock_name(const char *dir, const char *leaf, char *out, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *leaf; leaf++) {
		h ^= (unsigned char)*leaf;
		h *= 1099511628211ULL;
	}
	snprintf(out, n, "%s/.keep-lock-%016llx", dir, (unsigned long long)h);
}

TEST(key_locks)
{
	struct keep_reply r;
	struct keep_list l;
	char dir[256], lock[512], holder[600];
	struct timespec old[2];
	struct keep_store *s = fresh(dir);
	int64_t t0;

	/* a lock held by someone else (fresh): a write of that key waits,
	 * then times out AMBIGUOUS, nothing written; another key does not wait */
	lock_name(dir, "k", lock, sizeof(lock));
	CHECK_EQ_INT(mkdir(lock, 0700), 0);
	snprintf(holder, sizeof(holder), "%s/holder", lock);
	write_file(holder, "1\n", 2);
	keep_store_set_timeout(s, 300);
	t0 = keep_mono_ms();
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK(keep_mono_ms() - t0 >= 300);
	CHECK(strstr(r.detail, "timed out waiting for the lock of 'k'") != NULL);
	CHECK_EQ_INT(put_s(s, "other", "y", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	/* the same lock, unchanged for 10 s (its holder stopped or died): broken */
	clock_gettime(CLOCK_REALTIME, &old[0]);
	old[0].tv_sec -= 10;
	old[1] = old[0];
	CHECK_EQ_INT(utimensat(AT_FDCWD, lock, old, 0), 0);
	keep_store_set_timeout(s, 5000);
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	/* nothing of the locks is left, nor listed */
	CHECK(access(lock, F_OK) != 0);
	keep_list_init(&l);
	CHECK_EQ_INT(keep_store_list(s, "", &l, &r), 0);
	CHECK_EQ_INT(l.n, 2);
	CHECK_EQ_INT(l.nskipped, 0);
	keep_list_release(&l);
	keep_store_free(s);
}

static char rules[512];

static struct keep_store *faulty(char *dir)
{
	struct keep_store *w = NULL;
	char err[256];
	int rc;

	snprintf(rules, sizeof(rules), "%s/rules%d", base, ndirs);
	rc = keep_store_fault_wrap(fresh(dir), rules, &w, err, sizeof(err));
	if (rc) {
		printf("# wrap: %s\n", err);
		exit(2);
	}
	return w;
}

static void set_rules(const char *text)
{
	write_file(rules, text, strlen(text));
}

static void read_rules_file(char *out, size_t n)
{
	FILE *f = fopen(rules, "r");
	size_t k = 0;

	if (f) {
		k = fread(out, 1, n - 1, f);
		fclose(f);
	}
	out[k] = '\0';
}

TEST(fault_none_when_missing_or_empty)
{
	struct keep_reply r;
	char dir[256];
	struct keep_store *s = faulty(dir);

	CHECK(strcmp(s->ops->name, "fault") == 0);
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	set_rules("# only a comment\n\n   \n");
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	keep_store_free(s);
}

TEST(fault_fail_and_error)
{
	struct keep_reply r;
	struct keep_buf b;
	struct keep_list l;
	char dir[256];
	struct keep_store *s = faulty(dir);

	keep_buf_init(&b, KEEP_BODY_MAX);
	keep_list_init(&l);
	set_rules("put * fail\n");
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_STR(r.detail, "injected: fail");
	set_rules("");
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND); /* not sent */
	CHECK_EQ_INT(put_s(s, "a/k", "x", KEEP_COND_NONE, NULL, &r), 0);

	set_rules("get a/ error 503\n");
	CHECK_EQ_INT(keep_store_get(s, "a/k", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(r.status, 503);
	CHECK_EQ_INT(keep_store_get(s, "b", &b, &r), 0); /* prefix does not match */
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_store_head(s, "a/k", &r), 0); /* op does not match */
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	set_rules("* * error 412\n");
	CHECK_EQ_INT(keep_store_head(s, "a/k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);
	set_rules("* * error 409\n");
	CHECK_EQ_INT(keep_store_del(s, "a/k", NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);
	set_rules("head * error 404\n");
	CHECK_EQ_INT(keep_store_head(s, "a/k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	set_rules("list a/* error 403\n");
	CHECK_EQ_INT(keep_store_list(s, "a/", &l, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_INT(r.status, 403);
	set_rules("get x fail\nget * error 404 # first match wins\n");
	CHECK_EQ_INT(keep_store_get(s, "x/y", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_store_get(s, "a/k", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	set_rules("");
	CHECK_EQ_INT(keep_store_get(s, "a/k", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK); /* the delete above was not sent */
	keep_list_release(&l);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(fault_lose)
{
	struct keep_reply r;
	struct keep_buf b;
	struct keep_list l;
	char dir[256];
	struct keep_store *s = faulty(dir);

	keep_buf_init(&b, KEEP_BODY_MAX);
	keep_list_init(&l);
	set_rules("put * lose\n");
	CHECK_EQ_INT(put_s(s, "k", "landed", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_STR(r.detail, "injected: reply lost");
	set_rules("get * lose\nlist * lose\n");
	CHECK_EQ_INT(keep_store_get(s, "k", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(b.len, 0);
	CHECK_EQ_INT(keep_store_list(s, "", &l, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(l.n, 0);
	set_rules("");
	CHECK_EQ_INT(keep_store_get(s, "k", &b, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_STR(keep_buf_str(&b), "landed");
	keep_list_release(&l);
	keep_buf_release(&b);
	keep_store_free(s);
}

TEST(fault_delay_and_hang)
{
	struct keep_reply r;
	char dir[256];
	struct keep_store *s = faulty(dir);
	int64_t t0, dt;

	keep_store_set_timeout(s, 200);
	set_rules("put * delay 30\n");
	t0 = keep_mono_ms();
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	dt = keep_mono_ms() - t0;
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK(dt >= 30);
	set_rules("head * delay 5000\n");
	t0 = keep_mono_ms();
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	dt = keep_mono_ms() - t0;
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_STR(r.detail, "injected: timeout");
	CHECK(dt >= 200 && dt < 2000);
	set_rules("del * hang\n");
	t0 = keep_mono_ms();
	CHECK_EQ_INT(keep_store_del(s, "k", NULL, &r), 0);
	dt = keep_mono_ms() - t0;
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	CHECK(dt >= 200 && dt < 2000);
	set_rules("");
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK); /* the hung delete was not sent */
	keep_store_free(s);
}

TEST(fault_count_expires)
{
	struct keep_reply r;
	char dir[256], text[512];
	struct keep_store *s = faulty(dir);
	pid_t pid;
	int st;

	set_rules("# header\nput k fail count=3\nget * fail\n");
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	read_rules_file(text, sizeof(text));
	CHECK_EQ_STR(text, "# header\nput k fail count=2\nget * fail\n");
	/* another process consumes one use */
	pid = fork();
	if (pid == 0) {
		_exit(put_s(s, "k", "x", KEEP_COND_NONE, NULL, &r) == 0 &&
			      r.outcome == KEEP_STORE_AMBIGUOUS
			  ? 0
			  : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
	read_rules_file(text, sizeof(text));
	CHECK_EQ_STR(text, "# header\nget * fail\n");
	CHECK_EQ_INT(put_s(s, "k", "x", KEEP_COND_NONE, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	keep_store_free(s);
}

/* until_boot_ms=T: the rule stops matching once the boot clock reaches T,
 * with or without count=N (a fault that ends at the product's own time) */
TEST(fault_until_boot_ms)
{
	struct keep_reply r;
	char dir[256], rl[256];
	struct keep_store *s = faulty(dir);
	int64_t now = keep_boot_ms();

	snprintf(rl, sizeof(rl), "head * fail until_boot_ms=%lld\n", (long long)(now + 60000));
	set_rules(rl);
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS); /* before T: the fault */
	snprintf(rl, sizeof(rl), "head * fail count=5 until_boot_ms=%lld\n",
		 (long long)(now > 1 ? now - 1 : 1));
	set_rules(rl);
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND); /* past T: sent */
	set_rules("head * fail until_boot_ms=0\n");    /* T > 0 */
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	set_rules("head * fail until_boot_ms=5 count=1\n"); /* count= first */
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	keep_store_free(s);
}

TEST(fault_bad_rules_are_loud)
{
	static const char *bad[] = {
	    "put * explode\n",	    "frob * fail\n",
	    "get * error 200\n",    "get * error\n",
	    "get * delay\n",	    "get * delay -5\n",
	    "get * fail extra\n",   "get * fail count=0\n",
	    "get * fail count=x\n", "get *\n",
	};
	struct keep_reply r;
	char dir[256];
	struct keep_store *s = faulty(dir);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		set_rules(bad[i]);
		CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
		CHECK_EQ_STR(r.detail, "bad fault rule line 1");
	}
	set_rules("# ok\nput * fail\n\nget * nonsense\n");
	CHECK_EQ_INT(keep_store_head(s, "k", &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_REFUSED);
	CHECK_EQ_STR(r.detail, "bad fault rule line 4");
	keep_store_free(s);
}

int main(void)
{
	char cmd[600];
	int rc;

	unsetenv("KEEP_FAULT_FILE");
	unsetenv("KEEP_FAULT_LOG");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(open_refuses_bad_paths);
	RUN(create_conflict_update_stale_delete);
	RUN(versions_never_repeat);
	RUN(list_prefixes);
	RUN(bad_keys_refused);
	RUN(symlinks_refused);
	RUN(directories_and_files_in_the_way);
	RUN(oversize_bodies);
	RUN(racing_if_match_one_winner);
	RUN(fault_none_when_missing_or_empty);
	RUN(fault_fail_and_error);
	RUN(fault_lose);
	RUN(fault_delay_and_hang);
	RUN(fault_count_expires);
	RUN(fault_until_boot_ms);
	RUN(fault_bad_rules_are_loud);
	RUN(key_locks);
	rc = unit_done();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		printf("# unable to remove %s\n", base);
	return rc;
}
