/* keep — state directory files (see statedir.h). */
#include "statedir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "parse.h"

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

int keep_lease_state_encode(const struct keep_lease_state *s, struct keep_buf *out)
{
	return keep_buf_addf(
	    out,
	    "keep-lease-state 1\nnode %s\ninstance %s\npid %" PRId64
	    "\nboot_id %s\nphase %s\nreason %s\nversion %s\nwritten_at_ms %" PRId64
	    "\nvalid_until_mono_ms %" PRId64 "\nvalid_until_wall_ms %" PRId64
	    "\nlive_since_mono_ms %" PRId64 "\nlapses %" PRId64 "\nupdated_wall_ms %" PRId64 "\n",
	    s->node, s->instance[0] ? s->instance : "-", s->pid, s->boot_id[0] ? s->boot_id : "-",
	    s->phase, s->reason[0] ? s->reason : "-", s->version[0] ? s->version : "-",
	    s->written_at_ms, s->valid_until_mono_ms, s->valid_until_wall_ms, s->live_since_mono_ms,
	    s->lapses, s->updated_wall_ms);
}

static int parse_i64(const char *v, int64_t *out)
{
	return keep_dec_parse_str(v, INT64_MAX, out) ? 0 : KEEP_ERR_PARSE;
}

static int put_str(char *dst, size_t n, const char *v)
{
	size_t l = strlen(v);
	if (l >= n)
		return KEEP_ERR_PARSE;
	memcpy(dst, v, l + 1);
	return 0;
}

int keep_lease_state_decode(const char *buf, size_t len, struct keep_lease_state *s)
{
	static const char *keys[] = {"node",
				     "instance",
				     "pid",
				     "boot_id",
				     "phase",
				     "reason",
				     "version",
				     "written_at_ms",
				     "valid_until_mono_ms",
				     "valid_until_wall_ms",
				     "live_since_mono_ms",
				     "lapses",
				     "updated_wall_ms"};
	char line[512];
	size_t pos = 0, k = 0;
	const char hdr[] = "keep-lease-state 1\n";

	memset(s, 0, sizeof(*s));
	if (len < sizeof(hdr) - 1 || memcmp(buf, hdr, sizeof(hdr) - 1) != 0)
		return KEEP_ERR_NOTOURS;
	pos = sizeof(hdr) - 1;
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *nl = memchr(buf + pos, '\n', len - pos), *v;
		size_t ll, kl = strlen(keys[k]);
		int rc = 0;

		if (!nl)
			return KEEP_ERR_PARSE;
		ll = (size_t)(nl - (buf + pos));
		if (ll >= sizeof(line) || memchr(buf + pos, '\0', ll))
			return KEEP_ERR_PARSE; /* a NUL would cut a value short */
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos += ll + 1;
		if (strncmp(line, keys[k], kl) != 0 || line[kl] != ' ')
			return KEEP_ERR_PARSE;
		v = line + kl + 1;
		switch (k) {
		case 0:
			rc = put_str(s->node, sizeof(s->node), v);
			break;
		case 1:
			rc = put_str(s->instance, sizeof(s->instance), v);
			break;
		case 2:
			rc = parse_i64(v, &s->pid);
			break;
		case 3:
			rc = put_str(s->boot_id, sizeof(s->boot_id), v);
			break;
		case 4:
			rc = put_str(s->phase, sizeof(s->phase), v);
			break;
		case 5:
			rc = put_str(s->reason, sizeof(s->reason), v);
			break;
		case 6:
			rc = put_str(s->version, sizeof(s->version), v);
			break;
		case 7:
			rc = parse_i64(v, &s->written_at_ms);
			break;
		case 8:
			rc = parse_i64(v, &s->valid_until_mono_ms);
			break;
		case 9:
			rc = parse_i64(v, &s->valid_until_wall_ms);
			break;
		case 10:
			rc = parse_i64(v, &s->live_since_mono_ms);
			break;
		case 11:
			rc = parse_i64(v, &s->lapses);
			break;
		case 12:
			rc = parse_i64(v, &s->updated_wall_ms);
			break;
		}
		if (rc)
			return rc;
	}
	if (pos != len)
		return KEEP_ERR_PARSE;
	return 0;
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

bool keep_lease_state_valid(const struct keep_lease_state *s, int64_t now_mono_ms,
			    const char *boot_id)
{
	return strcmp(s->phase, "live") == 0 && boot_id && strcmp(s->boot_id, boot_id) == 0 &&
	       now_mono_ms < s->valid_until_mono_ms;
}

int keep_new_instance(char *out, size_t outlen)
{
	unsigned char r[KEEP_INSTANCE_LEN / 2];

	if (outlen < KEEP_INSTANCE_LEN + 1 || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return KEEP_ERR_IO;
	keep_hex_encode(r, sizeof(r), out);
	return 0;
}
