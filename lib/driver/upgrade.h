/* keep — the upgrade from per-actor leases over the store (ADR 0020 §6 and
 * "Cost, after"; docs/upgrade.md).
 *
 * I/O helpers shared by upgrade-mark and owner-acquire: they call the
 * store and feed the replies to lib/core/upgrade.c and lib/core/mark.c.
 * They never print, never exit and never read a clock: times come in as
 * arguments. */
#ifndef KEEP_UPGRADE_H
#define KEEP_UPGRADE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/mark.h"
#include "../core/timing.h"
#include "../core/upgrade.h"
#include "../store/store.h"

/* enum keep_mark_result_kind, struct keep_mark_result and KEEP_MARK_TRIES
 * are the marking machine's (core/mark.h). */

/* The highest generation carried by the actor's segment keys: LIST
 * wal/KEY/ and snapshot/KEY/ (every page). 0 with *highest set (0 when no
 * key); KEEP_ERR_PARSE when a key carries no readable generation (detail
 * names it); KEEP_ERR_PERM when the store refused a listing (403, no such
 * bucket), KEEP_ERR_STORE when one failed otherwise (detail says why).
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
 * A driver of the marking machine (core/mark.h); res->created tells a
 * confirmed marker (its first record was created: issue 14 item 3).
 * Costs a GET, the two LISTs and a PUT the first time.
 * s and key are borrowed; *res (caller-owned) is filled. 0, or
 * KEEP_ERR_INVAL when key is not a valid actor key (nothing sent). */
int keep_upgrade_mark_actor(struct keep_store *s, const char *key, int64_t now_wall_ms,
			    const struct keep_timing *t, struct keep_mark_result *res);

/* Perform one marking action of core/mark.h against s: MARK_READ (GET
 * leases/KEY, decoded; a decode error's reason in r->detail; an object keep
 * cannot hold is decode_err KEEP_ERR_NOTOURS), KEYS_MAX
 * (keep_upgrade_keys_max: a refused listing is REFUSED, any other failure
 * AMBIGUOUS, a key without a generation decode_err KEEP_ERR_PARSE, with
 * r->detail) or MARK_WRITE (the marker, conditional). *r (caller-owned) is filled; any other action
 * is answered REFUSED. */
void keep_upgrade_store_act(struct keep_store *s, const struct keep_oact *act,
			    struct keep_oreply *r);

#endif
