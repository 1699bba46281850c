/* keep — the upgrade from per-actor leases over the store (ADR 0020 §6 and
 * "Cost, after"; docs/upgrade.md).
 *
 * I/O helpers shared by upgrade-mark and owner-acquire: they call the
 * store and feed the replies to lib/core/upgrade.c. They never print,
 * never exit and never read a clock: times come in as arguments. */
#ifndef KEEP_UPGRADE_H
#define KEEP_UPGRADE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/timing.h"
#include "core/upgrade.h"
#include "store/store.h"

#define KEEP_MARK_TRIES 4 /* reads of leases/KEY per marking before giving up */

enum keep_mark_result_kind {
	KEEP_MR_MARKED = 0, /* a marker is in place; seed is valid */
	KEEP_MR_HELD,	    /* a live old lease: refuse (old is the lease) */
	KEEP_MR_BAD_OBJECT, /* leases/KEY is not ours/malformed: nothing written */
	KEEP_MR_BAD_KEY,    /* a segment key carries no readable generation: nothing written */
	KEEP_MR_FAILED,	    /* the store failed, or KEEP_MARK_TRIES conflicts: retry later */
};

/* "marked", "held", "bad-object", "bad-key", "failed". */
const char *keep_mark_result_name(enum keep_mark_result_kind k);

struct keep_mark_result {
	enum keep_mark_result_kind kind;
	enum keep_mark_verdict action; /* MARKED: CREATE, REPLACE or EXISTING */
	int64_t seed;		       /* MARKED: max(old generation or marker seed, keys) */
	int64_t keys_max;	       /* MARKED: highest generation in the segment keys, 0 */
	struct keep_lease_obj old;     /* HELD: the live old lease; REPLACE: the one replaced */
	int64_t live_until_ms;	       /* HELD: expires_at + grace (wall ms) */
	bool refused; /* FAILED: the store refused a request (403, no such bucket: retrying
			 cannot help), not a timeout, 5xx or repeated conflicts */
	char detail[KEEP_DETAIL_MAX]; /* not MARKED: a one-line reason (object, key, store) */
};

/* The highest generation carried by the actor's segment keys: LIST
 * wal/KEY/ and snapshot/KEY/ (every page). 0 with *highest set (0 when no
 * key); KEEP_ERR_PARSE when a key carries no readable generation (detail
 * names it); KEEP_ERR_STORE when a listing failed (detail says why).
 * key: a valid actor key (borrowed); detail: KEEP_DETAIL_MAX bytes. */
int keep_upgrade_keys_max(struct keep_store *s, const char *key, int64_t *highest,
			  char detail[KEEP_DETAIL_MAX]);

/* Mark actor key for the upgrade (§6 "First acquisition"), judging an old
 * lease at now_wall_ms (wall ms) with t's grace:
 *   GET leases/KEY;
 *   a live old lease (expires_at + grace not passed), whatever node it
 *     names, this node's own id included -> HELD, nothing written;
 *   absent -> seed from the keys, PUT the marker If-None-Match: *;
 *   an expired old lease -> seed = max(its generation, keys), PUT the
 *     marker If-Match the read's version;
 *   a marker -> seed = max(its seed, keys); nothing written;
 *   a conflict or an ambiguous write -> read again (at most
 *     KEEP_MARK_TRIES reads): a landed write of ours reads as a marker.
 * Idempotent: a second call finds the marker and seeds the same way (or
 * higher, if keys appeared since). Never writes anything but a marker.
 * Costs a GET, the two LISTs and a PUT the first time.
 * s and key are borrowed; *res (caller-owned) is filled. 0, or
 * KEEP_ERR_INVAL when key is not a valid actor key (nothing sent). */
int keep_upgrade_mark_actor(struct keep_store *s, const char *key, int64_t now_wall_ms,
			    const struct keep_timing *t, struct keep_mark_result *res);

#endif
