/* keep — the lease state file's codec (see statefile.h). */
#include "statefile.h"

#include <inttypes.h>
#include <string.h>

#include "../base/err.h"
#include "../base/parse.h"

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
