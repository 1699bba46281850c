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

#include "clock.h"
#include "core/timing.h"
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
	    "keep-lease-state 2\nnode %s\ninstance %s\npid %" PRId64
	    "\nclock %s\nboot_id %s\nphase %s\nreason %s\nversion %s\nwritten_at_ms %" PRId64
	    "\nvalid_until_ms %" PRId64 "\nvalid_until_wall_ms %" PRId64 "\nlive_since_ms %" PRId64
	    "\nlapses %" PRId64 "\nupdated_wall_ms %" PRId64 "\njudge_offset_ms %" PRId64
	    "\nclock_base_ms %" PRId64 "\n",
	    s->node, s->instance[0] ? s->instance : "-", s->pid, s->clock[0] ? s->clock : "-",
	    s->boot_id[0] ? s->boot_id : "-", s->phase, s->reason[0] ? s->reason : "-",
	    s->version[0] ? s->version : "-", s->written_at_ms, s->valid_until_ms,
	    s->valid_until_wall_ms, s->live_since_ms, s->lapses, s->updated_wall_ms,
	    s->judge_offset_ms > 0 ? s->judge_offset_ms : 0,
	    s->clock_base_ms > 0 ? s->clock_base_ms : 0);
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

/* The fields of the file, in their order; fmt1/fmt2: the key in format 1
 * and 2 (NULL: not in that format). */
enum st_field {
	F_NODE,
	F_INSTANCE,
	F_PID,
	F_CLOCK,
	F_BOOT,
	F_PHASE,
	F_REASON,
	F_VERSION,
	F_WRITTEN,
	F_VALID,
	F_VALID_WALL,
	F_LIVE_SINCE,
	F_LAPSES,
	F_UPDATED,
	F_COUNT
};

static const struct {
	const char *fmt1, *fmt2;
} st_keys[F_COUNT] = {
    [F_NODE] = {"node", "node"},
    [F_INSTANCE] = {"instance", "instance"},
    [F_PID] = {"pid", "pid"},
    [F_CLOCK] = {NULL, "clock"},
    [F_BOOT] = {"boot_id", "boot_id"},
    [F_PHASE] = {"phase", "phase"},
    [F_REASON] = {"reason", "reason"},
    [F_VERSION] = {"version", "version"},
    [F_WRITTEN] = {"written_at_ms", "written_at_ms"},
    [F_VALID] = {"valid_until_mono_ms", "valid_until_ms"},
    [F_VALID_WALL] = {"valid_until_wall_ms", "valid_until_wall_ms"},
    [F_LIVE_SINCE] = {"live_since_mono_ms", "live_since_ms"},
    [F_LAPSES] = {"lapses", "lapses"},
    [F_UPDATED] = {"updated_wall_ms", "updated_wall_ms"},
};

static int put_field(struct keep_lease_state *s, enum st_field f, const char *v)
{
	switch (f) {
	case F_NODE:
		return put_str(s->node, sizeof(s->node), v);
	case F_INSTANCE:
		return put_str(s->instance, sizeof(s->instance), v);
	case F_PID:
		return parse_i64(v, &s->pid);
	case F_CLOCK:
		return *v ? put_str(s->clock, sizeof(s->clock), v) : KEEP_ERR_PARSE;
	case F_BOOT:
		return put_str(s->boot_id, sizeof(s->boot_id), v);
	case F_PHASE:
		return put_str(s->phase, sizeof(s->phase), v);
	case F_REASON:
		return put_str(s->reason, sizeof(s->reason), v);
	case F_VERSION:
		return put_str(s->version, sizeof(s->version), v);
	case F_WRITTEN:
		return parse_i64(v, &s->written_at_ms);
	case F_VALID:
		return parse_i64(v, &s->valid_until_ms);
	case F_VALID_WALL:
		return parse_i64(v, &s->valid_until_wall_ms);
	case F_LIVE_SINCE:
		return parse_i64(v, &s->live_since_ms);
	case F_LAPSES:
		return parse_i64(v, &s->lapses);
	case F_UPDATED:
		return parse_i64(v, &s->updated_wall_ms);
	case F_COUNT:
		break;
	}
	return KEEP_ERR_PARSE;
}

int keep_lease_state_decode(const char *buf, size_t len, struct keep_lease_state *s)
{
	static const char hdr1[] = "keep-lease-state 1\n", hdr2[] = "keep-lease-state 2\n";
	char line[512];
	size_t pos;
	int f;

	memset(s, 0, sizeof(*s));
	if (len >= sizeof(hdr2) - 1 && memcmp(buf, hdr2, sizeof(hdr2) - 1) == 0)
		s->format = 2;
	else if (len >= sizeof(hdr1) - 1 && memcmp(buf, hdr1, sizeof(hdr1) - 1) == 0)
		s->format = 1;
	else
		return KEEP_ERR_NOTOURS;
	pos = sizeof(hdr2) - 1;
	if (s->format == 1) /* deadlines on CLOCK_MONOTONIC, which stops in a suspend */
		memcpy(s->clock, "monotonic", sizeof("monotonic"));
	for (f = 0; f < F_COUNT; f++) {
		const char *key = s->format == 1 ? st_keys[f].fmt1 : st_keys[f].fmt2;
		const char *nl, *v;
		size_t ll, kl;
		int rc;

		if (!key)
			continue;
		kl = strlen(key);
		nl = memchr(buf + pos, '\n', len - pos);
		if (!nl)
			return KEEP_ERR_PARSE;
		ll = (size_t)(nl - (buf + pos));
		if (ll >= sizeof(line) || memchr(buf + pos, '\0', ll))
			return KEEP_ERR_PARSE; /* a NUL would cut a value short */
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos += ll + 1;
		if (strncmp(line, key, kl) != 0 || line[kl] != ' ')
			return KEEP_ERR_PARSE;
		v = line + kl + 1;
		rc = put_field(s, (enum st_field)f, v);
		if (rc)
			return rc;
	}
	if (s->format == 2 && pos < len) {
		/* the two optional trailing lines, both or neither */
		static const char *const keys[2] = {"judge_offset_ms ", "clock_base_ms "};
		int64_t *vals[2] = {&s->judge_offset_ms, &s->clock_base_ms};

		for (f = 0; f < 2; f++) {
			const char *nl = memchr(buf + pos, '\n', len - pos);
			size_t ll, kl = strlen(keys[f]);

			if (!nl)
				return KEEP_ERR_PARSE;
			ll = (size_t)(nl - (buf + pos));
			if (ll >= sizeof(line) || memchr(buf + pos, '\0', ll))
				return KEEP_ERR_PARSE;
			memcpy(line, buf + pos, ll);
			line[ll] = '\0';
			pos += ll + 1;
			if (strncmp(line, keys[f], kl) != 0 || parse_i64(line + kl, vals[f]) != 0)
				return KEEP_ERR_PARSE;
		}
		s->have_judge = true;
	}
	if (pos != len)
		return KEEP_ERR_PARSE;
	return 0;
}

int64_t keep_lease_state_judge_wall(const struct keep_lease_state *s, int64_t boot_ms,
				    int64_t wall_ms, const char *boot_id)
{
	int64_t j = wall_ms;

	if (!s || !s->have_judge)
		return j;
	j = keep_sub_sat_ms(j, s->judge_offset_ms);
	if (s->clock_base_ms > 0 && keep_lease_state_incomparable(s, boot_id) == NULL) {
		int64_t ahead =
		    keep_sub_sat_ms(keep_sub_sat_ms(wall_ms, boot_ms), s->clock_base_ms);

		if (ahead > 0)
			j = keep_sub_sat_ms(j, ahead);
	}
	return j;
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

const char *keep_lease_state_incomparable(const struct keep_lease_state *s, const char *boot_id)
{
	if (s->format == 1 || strcmp(s->clock, "monotonic") == 0)
		return "its deadlines are on CLOCK_MONOTONIC (keep-lease-state 1, written by an "
		       "older lease-write): restart lease-write";
	if (strcmp(s->clock, KEEP_CLOCK_NAME) != 0)
		return "its deadlines are on a clock this version does not read";
	if (!boot_id || !boot_id[0] || strcmp(s->boot_id, "-") == 0 || !s->boot_id[0])
		return "no boot id (/proc/sys/kernel/random/boot_id) to tell which boot its "
		       "deadlines belong to";
	if (strcmp(s->boot_id, boot_id) != 0)
		return "it was written on another boot";
	return NULL;
}

bool keep_lease_state_valid(const struct keep_lease_state *s, int64_t now_ms, const char *boot_id)
{
	return !keep_lease_state_incomparable(s, boot_id) && strcmp(s->phase, "live") == 0 &&
	       now_ms < s->valid_until_ms;
}

int keep_new_instance(char *out, size_t outlen)
{
	unsigned char r[KEEP_INSTANCE_LEN / 2];

	if (outlen < KEEP_INSTANCE_LEN + 1 || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return KEEP_ERR_IO;
	keep_hex_encode(r, sizeof(r), out);
	return 0;
}
