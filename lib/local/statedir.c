/* keep — state directory files (see statedir.h). */
#include "statedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/parse.h"
#include "../core/timing.h"
#include "../platform/clock.h"

int keep_mkdirs(const char *dir)
{
	char tmp[PATH_MAX];
	size_t n = strlen(dir), i;

	if (n == 0 || n >= sizeof(tmp))
		return KEEP_ERR_INVAL;
	memcpy(tmp, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char c = tmp[i];
			tmp[i] = '\0';
			if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
				return KEEP_ERR_IO;
			tmp[i] = c;
		}
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;
	int fd, rc, saved;

	if (!slash) {
		memcpy(dir, ".", 2);
	} else {
		n = (size_t)(slash - path);
		if (n == 0)
			n = 1;
		if (n >= sizeof(dir))
			return KEEP_ERR_INVAL;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return KEEP_ERR_IO;
	rc = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc == 0 ? 0 : KEEP_ERR_IO;
}

int keep_sweep_atomic_temps(const char *path)
{
	char dir[PATH_MAX], prefix[PATH_MAX], full[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct dirent *e;
	size_t pl;
	DIR *d;
	int n = 0, r;

	if (!slash || slash == path)
		r = snprintf(dir, sizeof(dir), "%s", slash ? "/" : ".");
	else
		r = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (r < 0 || (size_t)r >= sizeof(dir))
		return 0;
	r = snprintf(prefix, sizeof(prefix), "%s.tmp.", base);
	if (r < 0 || (size_t)r >= sizeof(prefix))
		return 0;
	pl = (size_t)r;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, pl) != 0)
			continue;
		errno = 0;
		pid = strtol(e->d_name + pl, &end, 10);
		if (errno || end == e->d_name + pl || *end != '.' || pid <= 0)
			continue;
		/* a live writer (this process included) may rename it any moment */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		r = snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
		if (r > 0 && (size_t)r < sizeof(full) && unlink(full) == 0)
			n++;
	}
	closedir(d);
	return n;
}

enum keep_sd keep_write_atomic_sd(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX];
	const char *p = data;
	int fd, n, saved;
	static unsigned long seq;

	/* the pid and a counter: threads of one process never share a temp */
	n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lu", path, (long)getpid(),
		     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return KEEP_SD_UNCHANGED;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return KEEP_SD_UNCHANGED;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail_close;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) != 0)
		goto fail_close;
	if (close(fd) != 0)
		goto fail_unlink;
	if (rename(tmp, path) != 0)
		goto fail_unlink;
	/* renamed: visible to every process from here on, whatever follows */
	return fsync_dir_of(path) == 0 ? KEEP_SD_DURABLE : KEEP_SD_VISIBLE;
fail_close:
	saved = errno;
	close(fd);
	errno = saved;
fail_unlink:
	saved = errno;
	unlink(tmp);
	errno = saved;
	return KEEP_SD_UNCHANGED;
}

int keep_write_atomic(const char *path, const void *data, size_t len)
{
	return keep_write_atomic_sd(path, data, len) == KEEP_SD_DURABLE ? 0 : KEEP_ERR_IO;
}

int keep_write_replace(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX];
	const char *p = data;
	int fd, n, saved;
	static unsigned long seq;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%lu", path, (long)getpid(),
		     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return KEEP_ERR_IO;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return KEEP_ERR_IO;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			unlink(tmp);
			errno = saved;
			return KEEP_ERR_IO;
		}
		p += w;
		len -= (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return KEEP_ERR_IO;
	}
	return 0;
}

enum keep_sd keep_remove_sd(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		return KEEP_SD_UNCHANGED;
	/* gone (or was): durable once the directory is synced */
	return fsync_dir_of(path) == 0 ? KEEP_SD_DURABLE : KEEP_SD_VISIBLE;
}

enum keep_sd keep_sync_dir(const char *dir)
{
	int fd, rc, saved;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return KEEP_SD_UNCHANGED;
	rc = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc == 0 ? KEEP_SD_DURABLE : KEEP_SD_UNCHANGED;
}

int keep_read_file(const char *path, struct keep_buf *out, size_t max)
{
	char chunk[4096];
	size_t total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return KEEP_ERR_IO;
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = KEEP_ERR_IO;
			break;
		}
		if (r == 0)
			break;
		total += (size_t)r;
		if (total > max) {
			rc = KEEP_ERR_TOOBIG;
			break;
		}
		rc = keep_buf_add(out, chunk, (size_t)r);
		if (rc)
			break;
	}
	close(fd);
	return rc;
}

static int lease_path(const char *node_dir, char *out, size_t n)
{
	int r = snprintf(out, n, "%s/lease", node_dir);
	return (r < 0 || (size_t)r >= n) ? KEEP_ERR_TOOBIG : 0;
}

int keep_lease_state_write(const char *node_dir, const struct keep_lease_state *s)
{
	char path[PATH_MAX];
	struct keep_buf b;
	int rc;

	rc = lease_path(node_dir, path, sizeof(path));
	if (rc)
		return rc;
	keep_buf_init(&b, 8192);
	rc = keep_lease_state_encode(s, &b);
	if (!rc)
		rc = keep_write_atomic(path, b.data, b.len);
	keep_buf_release(&b);
	return rc;
}

int keep_lease_state_read(const char *node_dir, struct keep_lease_state *s)
{
	char path[PATH_MAX];
	struct keep_buf b;
	int rc;

	rc = lease_path(node_dir, path, sizeof(path));
	if (rc)
		return rc;
	keep_buf_init(&b, 8192);
	rc = keep_read_file(path, &b, 8192);
	if (!rc)
		rc = keep_lease_state_decode(keep_buf_str(&b), b.len, s);
	keep_buf_release(&b);
	return rc;
}

int keep_new_instance(char *out, size_t outlen)
{
	unsigned char r[KEEP_INSTANCE_LEN / 2];

	if (outlen < KEEP_INSTANCE_LEN + 1 || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return KEEP_ERR_IO;
	keep_hex_encode(r, sizeof(r), out);
	return 0;
}
