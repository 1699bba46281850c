/* keep — which bodies a listing pass reads, sans I/O (ADR 0020 §2 and "the
 * listing"; docs/fencing.md "Reading only what changed", docs/ownership.md
 * "Watching owners").
 *
 * node-watch lists nodes/, owner-watch lists owners/PREFIX and nodes/,
 * every period; a body is read (one GET) only when needed. The rule lives
 * here, once, so that lib/driver/nodewatch.c, lib/driver/ownerwatch.c and the
 * simulator (sim/) apply the same one:
 *
 *   keep_listing_need_read()  the rule: every write changes an object's
 *                             version token, so a body held at exactly the
 *                             listed token is exact and is not read again;
 *                             any other body (none held, or held at another
 *                             token) is read, when the caller needs it at all.
 *   keep_listing_need_body()  node-watch's use of it for the watch (§2): a
 *                             new or unreadable node is read; a token other
 *                             than the last listing's means a write landed:
 *                             the node is alive, nothing is read (*wrote,
 *                             fed to keep_watch_pass as keep_watch_input.wrote);
 *                             a token unchanged since the last listing is read
 *                             again while the body held is live (the watch is
 *                             judged on bodies, never on tokens), otherwise by
 *                             keep_listing_need_read (fenced, released,
 *                             old-format: no watch runs on it).
 *
 *   keep_watch_input_of()     a listed node as the watch's input;
 *   keep_watch_sched_*()      the watch's schedule (listings, ticks
 *                             between them) and its listings' health.
 *
 * Nothing here reads a clock or touches the store; pointers are borrowed. */
#ifndef KEEP_CORE_LISTING_H
#define KEEP_CORE_LISTING_H

#include <stdbool.h>
#include <stdint.h>

#include "../codec/nodeobj.h"
#include "fence.h"
#include "timing.h"

/* Is a read (GET) of a listed object needed?
 *   body_version: the version of the body held from an earlier read, "" or
 *     NULL when none (never read, or the last read failed or found nothing);
 *   listed_version: the version token this listing shows;
 *   wanted: the caller needs this object's body at all.
 * True when wanted and no body is held at exactly listed_version. */
bool keep_listing_need_read(const char *body_version, const char *listed_version, bool wanted);

/* The node id of a key a listing of nodes/ showed (borrowed: a pointer
 * into key), or NULL when the key is not a node object's: not under
 * nodes/, deeper (nodes/x/y), or not a valid id (keep_node_id_valid). Such
 * a key is not keep's: node-watch skips it (docs/fencing.md). */
const char *keep_listing_node_id(const char *key);

/* What the last pass knew of one node (NULL: not listed then). */
struct keep_listed {
	const char *listed;		 /* the version token the last listing showed (borrowed) */
	const char *body_version;	 /* the version of the body held, "" when none (borrowed) */
	bool decoded;			 /* a body is held and decoded */
	const struct keep_node_obj *obj; /* that body (borrowed), when decoded */
};

/* Does node-watch's pass read the node's body? prev: the last pass's
 * knowledge (NULL for a new node); listed: this listing's token
 * (borrowed); every: read every body (--once, cluster status). *wrote is
 * set when the body is not read because a write landed since the last
 * listing. */
bool keep_listing_need_body(const struct keep_listed *prev, const char *listed, bool every,
			    bool *wrote);

/* ---- one pass's input to the watch --------------------------------------- */

/* The watch's input for one listed node (borrowed pointers kept in *x):
 *   wrote: the listing showed a token other than the last listing's, so
 *     no body was read this pass (keep_listing_need_body's *wrote): the
 *     node is alive, and nothing else about it is judged;
 *   decoded: a body is held and decoded, *obj (a body read this pass, or
 *     one kept from an earlier pass at this very token);
 *   read_failed: this pass's GET failed (a store failure, not a decode
 *     error, not "not found", which the caller drops): the watch of the
 *     node stays as it was.
 * readable = !wrote && decoded; read_failed only when !wrote && !decoded;
 * obj only when readable. node-watch's pass and the simulator's both
 * build their input here (ADR 0020 §2). */
void keep_watch_input_of(struct keep_watch_input *x, const char *node, bool wrote, bool decoded,
			 bool read_failed, const struct keep_node_obj *obj);

/* ---- the watch's schedule and the health of its listings ------------------ */

/* The health of the listings of nodes/ (readiness: docs/operations.md
 * "Readiness", the watch state file, docs/formats.md "The watch state"):
 * ok; failing from the first failed listing; failed once the listings
 * have failed for ttl_ms (no stale candidate can have been seen in time:
 * this node should not be ready); ok again at the first listing that
 * succeeds. */
enum keep_listing_health { KEEP_LISTING_OK = 0, KEEP_LISTING_FAILING, KEEP_LISTING_FAILED };

/* "ok", "failing", "failed". */
const char *keep_listing_health_name(enum keep_listing_health h);

/* The health of the listings of nodes/ after one ended at now_mono_ms
 * (boot clock, ms; ADR 0020 §2 timing, issue 25): listed (it succeeded)
 * -> OK; failed -> FAILED once the listings have failed since
 * failing_since_mono_ms (the first failure of the run, this one's time
 * for a first failure) for at least ttl_ms, else FAILING. Saturating;
 * pure. keep_watch_sched_listed keeps failing_since. */
enum keep_listing_health keep_listing_health_of(bool listed, int64_t failing_since_mono_ms,
						int64_t now_mono_ms, int64_t ttl_ms);

/* node-watch --follow's schedule (ADR 0020 §2 timing; docs/fencing.md
 * "When a candidate goes"): a listing pass every period_ms, the first at
 * once; between listings, while the last one succeeded, a tick of the
 * watch (keep_watch_tick) the moment a watch bound passes, so that a
 * candidate goes then and not at the next listing; never a tick across a
 * failed listing (a candidate is judged only on a listing that
 * succeeded). All times on the boot clock (ms) but failing_since_wall_ms
 * (wall, for the state file's reader). */
struct keep_watch_sched {
	int64_t period_ms, ttl_ms;
	int64_t next_pass_mono_ms; /* the next listing is due then */
	bool listed;		   /* the last listing succeeded */
	enum keep_listing_health health;
	int64_t failures;	       /* failed listings in a row */
	int64_t failing_since_mono_ms; /* the first of them; 0 while ok */
	int64_t failing_since_wall_ms; /* the same moment, wall; 0 while ok */
	int64_t full_every;	       /* ring mode: a listing every full_every passes (1: full) */
	int64_t since_full;	       /* ring passes since the last listing */
};

/* What the watch's driver does at a wake-up. */
enum keep_watch_do {
	KEEP_WATCH_SLEEP = 0, /* nothing due: sleep until keep_watch_sched_wake_mono_ms */
	KEEP_WATCH_LIST,      /* list nodes/, read what keep_listing_need_body asks, pass */
	KEEP_WATCH_TICK,      /* keep_watch_tick on the last pass's bodies */
	KEEP_WATCH_RING,      /* ring mode: GET each peer keep_watch_ring names, then
				 keep_watch_observe */
};

/* A schedule whose first listing is due at now_mono_ms (t: period_ms,
 * ttl_ms; copied). */
void keep_watch_sched_init(struct keep_watch_sched *s, const struct keep_timing *t,
			   int64_t now_mono_ms);

/* Ring mode (docs/fencing.md "Ring mode"): of every full_every passes
 * (2..KEEP_WATCH_FULL_EVERY_MAX) one lists nodes/ and the others are ring
 * passes; after a listing that failed the next pass lists again. 1: full
 * mode (every pass a listing, the default). */
#define KEEP_WATCH_FULL_EVERY_MAX 100
void keep_watch_sched_ring(struct keep_watch_sched *s, int64_t full_every);

/* Is the pass now due a ring pass rather than a listing (issue 28;
 * docs/fencing.md "Ring mode")? True in ring mode (s->full_every > 1)
 * when the last listing succeeded and fewer than full_every - 1 ring
 * passes followed it (s->since_full): one pass of every full_every lists
 * nodes/, and a listing that failed is followed by a listing. s borrowed;
 * keep_watch_sched_due counts the passes. */
bool keep_watch_ring_pass_due(const struct keep_watch_sched *s);

/* The watch mode chosen by the size of the cluster (`watch: {mode: auto}`;
 * docs/fencing.md "Choosing the mode"): ring mode with ring_k successors
 * and a listing every full_every passes once a listing showed at least
 * ring_from nodes, full mode again once one showed fewer than
 * ring_from - ring_from / 10 (a band, so that a cluster at the threshold
 * does not flap). Called after each listing that succeeded, with the
 * number of nodes/ objects it listed; switches w and s
 * (keep_watch_set_ring, keep_watch_sched_ring) only when the mode
 * changes, which is safe at any listing: ring mode never emits a
 * candidate full mode would not. Returns true when it switched.
 * ring_from < 2 is 2. */
bool keep_watch_choose_mode(struct keep_watch *w, struct keep_watch_sched *s, size_t listed,
			    int64_t ring_from, int ring_k, int64_t full_every);

/* What is due at now_mono_ms: a pass when one is (the next one is then
 * due a period later: a slow pass does not push the cadence back by its
 * own length beyond one period): LIST, or in ring mode RING between
 * listings that succeeded; else TICK after a listing that succeeded,
 * else SLEEP. */
enum keep_watch_do keep_watch_sched_due(struct keep_watch_sched *s, int64_t now_mono_ms);

/* A listing ended at now_mono_ms (wall: now_wall_ms), listed or failed:
 * the failure count and the health move (see keep_listing_health). The
 * previous health is returned, so that the driver says each change once. */
enum keep_listing_health keep_watch_sched_listed(struct keep_watch_sched *s, bool listed,
						 int64_t now_mono_ms, int64_t now_wall_ms);

/* When to wake next (boot clock, ms): the next listing, or the watch's
 * next stale bound (keep_watch_next_stale_mono_ms(w, live_since_mono_ms))
 * when earlier and the last listing succeeded. w is borrowed. */
int64_t keep_watch_sched_wake_mono_ms(const struct keep_watch_sched *s, const struct keep_watch *w,
				      int64_t live_since_mono_ms);

#endif
