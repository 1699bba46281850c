/* keep — the cluster object `cluster`: does this bucket's cluster know it
 * never ran per-actor leases? (ADR 0020 §6 "First acquisition"; issue 16
 * item 6; docs/upgrade.md "Native clusters", docs/formats.md).
 *
 * A codec, sans I/O. The object is created once, with If-None-Match, by
 * `upgrade-mark native` on a bucket holding no leases/, wal/ or snapshot/
 * object, and never rewritten or removed by keep's tools:
 *
 *   wasmkeep-cluster 1
 *   format native
 *   written_at_ms 1767225600123
 *
 * `format native`: no actor of this cluster ever had an old lease, so a
 * first acquisition creates its record at generation 1 with no leases/
 * marker (2 requests: the record read and its creation). `format
 * upgraded` (reserved for a cluster that records its upgrade), no object,
 * or one that does not decode: every first acquisition takes the marker
 * path of §6 (mark.h), as before. */
#ifndef KEEP_CORE_CLUSTER_H
#define KEEP_CORE_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "../buf.h"
#include "timing.h"

#define KEEP_CLUSTER_KEY "cluster"
#define KEEP_CLUSTER_MAX 128 /* bytes: the largest body keep writes or decodes */

/* What an acquisition knows of the cluster (KEEP_OACT_CLUSTER_READ's
 * answer). 0 is the safe default: not known to be native. */
enum keep_cluster_view {
	KEEP_CLUSTER_NOT_NATIVE = 0, /* no object, `upgraded`, unreadable or a failed read */
	KEEP_CLUSTER_NATIVE,	     /* `format native`: first records skip the marker */
};

enum keep_cluster_format { KEEP_CLUSTER_FMT_NATIVE = 1, KEEP_CLUSTER_FMT_UPGRADED };

struct keep_cluster_obj {
	enum keep_cluster_format format;
	int64_t written_at_ms; /* wall ms, 1..KEEP_WALL_MAX_MS */
};

/* "native", "upgraded". */
const char *keep_cluster_format_name(enum keep_cluster_format f);

/* Decode the len bytes at body (strictly the three lines above, in order).
 * 0; KEEP_ERR_NOTOURS (another header), KEEP_ERR_PARSE (malformed: why
 * gets a one-line reason, whylen bytes), KEEP_ERR_TOOBIG (over
 * KEEP_CLUSTER_MAX). *o is zeroed on error. */
int keep_cluster_decode(const char *body, size_t len, struct keep_cluster_obj *o, char *why,
			size_t whylen);

/* The object `upgrade-mark native` creates, into *o: format native,
 * written_at_ms now->wall_ms, the writer's wall clock (never the judging
 * clock: every date keep writes into the bucket is at least the writer's
 * wall clock, issue 23; this one only informs). now is borrowed. */
void keep_cluster_native_obj(const struct keep_walls *now, struct keep_cluster_obj *o);

/* Append the body of o to out. 0, KEEP_ERR_INVAL (a bad field), or
 * keep_buf's error. */
int keep_cluster_encode(const struct keep_cluster_obj *o, struct keep_buf *out);

#endif
