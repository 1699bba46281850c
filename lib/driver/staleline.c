/* keep — the `stale` line's codec (staleline.h; ADR 0020 §2). */
#include "staleline.h"

#include <stdio.h>
#include <string.h>

#include "../base/parse.h"
#include "../codec/nodeobj.h"
#include "../platform/line.h"

void keep_stale_line_begin(struct keep_buf *b, const struct keep_watch_event *e)
{
	keep_line_begin(b, keep_watch_event_name(KEEP_WEV_STALE));
	keep_line_str(b, "node", e->node);
	keep_line_str(b, "instance", e->instance);
	if (e->written_at_ms)
		keep_line_int(b, "written_at_ms", e->written_at_ms);
	else
		keep_line_str(b, "written_at_ms", NULL);
	keep_line_int(b, "unchanged_ms", e->unchanged_ms);
	/* under which live period of the watcher it was judged: lease-fence
	 * drops the line if that node lapsed since (docs/fencing.md) */
	if (e->live_since_mono_ms > 0)
		keep_line_int(b, "live_since_mono_ms", e->live_since_mono_ms);
	if (e->watch_since_mono_ms > 0)
		keep_line_int(b, "watch_since_mono_ms", e->watch_since_mono_ms);
}

int keep_stale_line_decode(const char *s, size_t len, struct keep_stale *st, char *err,
			   size_t errlen)
{
	static const char *other[] = {"join", "change", "leave", "node"};
	struct keep_line l;
	const char *v;
	int64_t n;
	size_t i;
	int rc = -1;

	if (len > KEEP_LINE_MAX) {
		snprintf(err, errlen, "line longer than %d bytes", KEEP_LINE_MAX);
		return -1;
	}
	if (keep_line_parse(s, len, &l, err, errlen) != 0)
		return -1;
	if (strcmp(l.type, "stale") != 0) {
		for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
			if (strcmp(l.type, other[i]) == 0)
				rc = 0;
		if (rc)
			snprintf(err, errlen, "unknown record type '%s'", l.type);
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (strcmp(l.f[i].key, "node") && strcmp(l.f[i].key, "instance") &&
		    strcmp(l.f[i].key, "written_at_ms") && strcmp(l.f[i].key, "unchanged_ms") &&
		    strcmp(l.f[i].key, "live_since_mono_ms") &&
		    strcmp(l.f[i].key, "watch_since_mono_ms") && strcmp(l.f[i].key, "ts")) {
			snprintf(err, errlen, "unknown key '%s'", l.f[i].key);
			goto out;
		}
	memset(st, 0, sizeof(*st));
	v = keep_line_get(&l, "node");
	if (!v || !keep_node_id_valid(v)) {
		snprintf(err, errlen, "missing or bad node");
		goto out;
	}
	snprintf(st->node, sizeof(st->node), "%s", v);
	v = keep_line_get(&l, "instance");
	if (!v || !keep_instance_valid(v, strlen(v))) {
		snprintf(err, errlen, "missing or bad instance");
		goto out;
	}
	snprintf(st->instance, sizeof(st->instance), "%s", v);
	if (!keep_dec_parse_str(keep_line_get(&l, "written_at_ms"), KEEP_WALL_MAX_MS,
				&st->written_at_ms) ||
	    st->written_at_ms <= 0) {
		snprintf(err, errlen, "missing or bad written_at_ms");
		goto out;
	}
	v = keep_line_get(&l, "unchanged_ms");
	if (v && !keep_dec_parse_str(v, INT64_MAX, &n)) {
		snprintf(err, errlen, "bad unchanged_ms");
		goto out;
	}
	/* the watcher's own live period and watch start (node-watch >= issue
	 * 18); absent in older lines: the decision then counts from our own
	 * live_since alone */
	v = keep_line_get(&l, "live_since_mono_ms");
	if (v && (!keep_dec_parse_str(v, INT64_MAX, &st->live_since_mono_ms) ||
		  st->live_since_mono_ms <= 0)) {
		snprintf(err, errlen, "bad live_since_mono_ms");
		goto out;
	}
	v = keep_line_get(&l, "watch_since_mono_ms");
	if (v && (!keep_dec_parse_str(v, INT64_MAX, &st->watch_since_mono_ms) ||
		  st->watch_since_mono_ms <= 0)) {
		snprintf(err, errlen, "bad watch_since_mono_ms");
		goto out;
	}
	rc = 1;
out:
	keep_line_release(&l);
	return rc;
}
