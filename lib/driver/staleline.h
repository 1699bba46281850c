/* keep — the `stale` line, node-watch's fence candidate as lease-fence
 * reads it: its one codec (docs/formats.md "node-watch"; ADR 0020 §2).
 *
 *   stale node=ID instance=I written_at_ms=W unchanged_ms=U
 *         [live_since_mono_ms=L] [watch_since_mono_ms=S] [ts=..]
 *
 * Encoded and decoded only here: node-watch writes it, lease-fence --stdin
 * reads it. Process glue (the line format of lib/platform/line.c). */
#ifndef KEEP_STALELINE_H
#define KEEP_STALELINE_H

#include <stddef.h>

#include "../base/buf.h"
#include "../core/fence.h"

/* Begin the stale line of event e (a KEEP_WEV_STALE) in b, as
 * keep_line_begin does (b initialised here, caller-owned; text or --json):
 * every field above, live_since_mono_ms and watch_since_mono_ms only when
 * > 0. The caller emits it with keep_line_end. */
void keep_stale_line_begin(struct keep_buf *b, const struct keep_watch_event *e);

/* Decode one input line s (len bytes, no newline) of node-watch's output:
 * 1 a stale candidate in *st (caller-owned, filled), 0 another record of
 * node-watch (join, change, leave, node: to ignore), -1 malformed (why in
 * err, errlen bytes): longer than KEEP_LINE_MAX, not a line, an unknown
 * record type or key, a missing or bad node, instance or written_at_ms
 * (> 0), a bad unchanged_ms, live_since_mono_ms or watch_since_mono_ms
 * (those three optional; the two mono times > 0). */
int keep_stale_line_decode(const char *s, size_t len, struct keep_stale *st, char *err,
			   size_t errlen);

#endif
