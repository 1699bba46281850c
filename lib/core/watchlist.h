/* keep — owner-watch's decisions, sans I/O (ADR 0020 §2, §3; docs/ownership.md
 * "Watching owners", docs/formats.md "owner-watch lines").
 *
 * owner-watch lists owners/PREFIX and nodes/ once a heartbeat period and
 * feeds what it listed and read here:
 *
 *   keep_watchlist_plan()       which listed records to read (GET) this
 *                               pass, over a whole sorted listing matched
 *                               with the previous pass
 *   keep_holder_of()            what the holder's nodes/<id> says of a hold
 *   keep_owner_watch_diff()     the event lines between two views of a key
 *
 * Reading only what changed is lib/core/listing.c's rule
 * (keep_listing_need_read, node-watch's too): an ownership record changes
 * only by a write, and every write changes the object's version token, so
 * a record whose listed token is the version of the body already held is
 * not read again. The same rule serves the holders' node objects, read
 * only for nodes that hold a watched record (wanted). Unlike node-watch,
 * nothing here judges staleness: a token that equals the body's version
 * means the body is exact, nothing more.
 *
 * Nothing here reads a clock, sleeps, or touches a file or the store.
 * Every pointer argument is borrowed for the call. */
#ifndef KEEP_CORE_WATCHLIST_H
#define KEEP_CORE_WATCHLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"
#include "timing.h"

/* ---- which records to read -------------------------------------------------- */

#define KEEP_WL_NONE ((size_t)-1) /* no previous entry */

/* An object as the previous pass left it. */
struct keep_wl_prev {
	const char *key;	  /* sorted bytewise, no duplicates */
	const char *body_version; /* "" or NULL: no body held */
};

/* An object of this pass's listing; prev and read are outputs. */
struct keep_wl_item {
	const char *key;    /* sorted bytewise, no duplicates */
	const char *listed; /* the listed version token */
	bool wanted;	    /* the caller needs its body */
	size_t prev;	    /* out: index in prev[] of the same key, or KEEP_WL_NONE */
	bool read;	    /* out: keep_listing_need_read(prev's body_version, listed, wanted) */
};

/* Match items[] with prev[] (both sorted by key) and decide every read.
 * Returns the number of items with read set. O(n + nprev). */
size_t keep_watchlist_plan(const struct keep_wl_prev *prev, size_t nprev,
			   struct keep_wl_item *items, size_t n);

/* The listing scope of owner-watch PREFIX (docs/ownership.md "Watching
 * owners"; prefix a valid one, keep_owner_key_prefix_valid, "" for every
 * record): *list gets what is listed, KEEP_OWNER_PREFIX + prefix up to and
 * including its last '/'; *want gets KEEP_OWNER_PREFIX + prefix, what a
 * listed key must start with (keep_watchlist_record). Both caller-owned,
 * listlen and wantlen bytes (truncated to fit, NUL-terminated). */
void keep_watchlist_scope(const char *prefix, char *list, size_t listlen, char *want,
			  size_t wantlen);

/* The actor key (KEEP_OWNER_PREFIX stripped; borrowed: a pointer into key)
 * of a listed key that is a record of the watch: it starts with want
 * (keep_watchlist_scope) and the rest after KEEP_OWNER_PREFIX is a valid
 * actor key (keep_owner_key_valid). NULL for anything else (a deeper key,
 * a stray object): not a record, skipped. */
const char *keep_watchlist_record(const char *key, const char *want);

/* ---- the holder of a record -------------------------------------------------- */

/* What nodes/<holder> shows of a hold (owner-show's `holder=` values). */
enum keep_holder {
	KEEP_HOLDER_NONE = 0,	/* the record names no holder ("-") */
	KEEP_HOLDER_LIVE,	/* live, naming the record's instance */
	KEEP_HOLDER_LIVE_OTHER, /* live, naming another instance: the node restarted */
	KEEP_HOLDER_FENCED,	/* fenced (by a peer or an operator) */
	KEEP_HOLDER_RELEASED,	/* released: a clean stop */
	KEEP_HOLDER_ABSENT,	/* no nodes/<holder> object */
	KEEP_HOLDER_OLD_FORMAT, /* an old-format heartbeat (format 1, 2) */
	KEEP_HOLDER_UNREADABLE, /* not ours, malformed, or the read failed */
	KEEP_HOLDER_UNKNOWN,	/* not read yet (owner-watch only; never printed) */
};

/* "-", "live", "live-other-instance", "fenced", "released", "absent",
 * "old-format", "unreadable", "unknown". */
const char *keep_holder_name(enum keep_holder h);

/* The holder state of a record naming instance, from the read of its
 * node: present false -> ABSENT; obj NULL (unreadable or failed) ->
 * UNREADABLE; format 1 or 2 -> OLD_FORMAT; live -> LIVE when it names
 * instance, else LIVE_OTHER; fenced, released as the object says. */
enum keep_holder keep_holder_of(const char *instance, bool present,
				const struct keep_node_obj *obj);

/* The holder state of a held record naming instance, from what one pass
 * of owner-watch knows of its node: known false (nodes/<holder> was
 * listed but its read failed, and no earlier pass knew it) -> UNREADABLE
 * when every (--once shows it so) else UNKNOWN (never compared, read again
 * next pass); otherwise keep_holder_of(instance, present, obj). */
enum keep_holder keep_holder_of_known(const char *instance, bool known, bool present,
				      const struct keep_node_obj *obj, bool every);

/* ---- events ------------------------------------------------------------------ */

/* One key as a pass sees it. */
struct keep_owner_view {
	bool seen;			    /* false: not listed (absent) */
	bool readable;			    /* the record decoded (else state unreadable) */
	struct keep_owner_rec rec;	    /* valid when readable */
	enum keep_holder holder;	    /* held records: the holder's state; else NONE */
	enum keep_holder last_known_holder; /* the last holder other than UNKNOWN */
};

/* Is the record of view v free at now_wall_ms (owner-watch's free=, the
 * same as owner-show's; ADR 0020 §2 free rule)? Not readable -> false;
 * held by nobody -> true; its holder's node not known (known false, as
 * keep_holder_of_known) -> false; else keep_node_free(rec.node,
 * rec.instance, present, obj, now_wall_ms, t) is KEEP_FREE_YES (a free
 * LATER is not free). Pointers borrowed; obj NULL when not decoded. */
bool keep_owner_view_free(const struct keep_owner_view *v, bool known, bool present,
			  const struct keep_node_obj *obj, int64_t now_wall_ms,
			  const struct keep_timing *t);

/* `owner-watch --once`'s exit code over its records (docs/exit-codes.md):
 * 111 when a read failed (a record's, or the node's of a held record
 * whose holder is unreadable and not known), else 17 when a record is
 * not readable (not ours, malformed), else 0. Add each record's view
 * with keep_owner_once_add, starting from a zeroed struct. */
struct keep_owner_once {
	bool failed, bad;
};

/* read_failed: the record's read failed; v: its view (borrowed);
 * node_known: the holder's nodes/<id> was read (keep_holder_of_known). */
void keep_owner_once_add(struct keep_owner_once *o, bool read_failed,
			 const struct keep_owner_view *v, bool node_known);

/* 0, 17 or 111, as above. */
int keep_owner_once_exit(const struct keep_owner_once *o);

enum keep_owe_kind {
	KEEP_OWE_ACQUIRED = 0, /* held by a new (node, instance, generation) */
	KEEP_OWE_RELEASED,     /* held -> nobody (or nobody at a later generation) */
	KEEP_OWE_HOLDER,       /* the same hold; its holder's node object changed state */
	KEEP_OWE_REMOVED,      /* the record is no longer listed (keep never deletes one) */
	KEEP_OWE_UNREADABLE,   /* the record stopped decoding (not ours, malformed) */
	KEEP_OWE_RECREATED,    /* its generation went back: deleted by hand and created
				  again between two listings (issue 23 item 6) */
};

/* "acquired", "released", "holder-" + the holder name ("holder-fenced", ...),
 * "removed", "unreadable", "recreated": the event line's TYPE. holder is
 * used for HOLDER only. */
const char *keep_owe_name(enum keep_owe_kind k, enum keep_holder holder);

struct keep_owe {
	enum keep_owe_kind kind;
	char node[KEEP_NODE_ID_MAX + 1];      /* acquired: the new holder; released, holder-*,
						 removed: the (last) holder; "" when none */
	char instance[KEEP_INSTANCE_LEN + 1]; /* likewise; "" when none */
	int64_t generation;		      /* the record's (removed: the last seen); 0 none */
	char previous_node[KEEP_NODE_ID_MAX + 1]; /* acquired: the holder before, "" none */
	/* acquired/released: acquisitions between the two views that no event
	 * reported (generation arithmetic); 0 when unknown */
	int64_t missed;
	int64_t previous_generation; /* recreated: the generation before (higher) */
	enum keep_holder holder;     /* HOLDER: the new state */
};

#define KEEP_OWE_MAX 3 /* events one key can produce in one pass */

/* Does a key show a deletion by hand between two passes (issue 23 item 6;
 * docs/operations.md "Deleting objects by hand")? keep never deletes an
 * ownership record and never lowers its generation, so: prev seen and cur
 * not listed -> true, *kind REMOVED; prev and cur both seen and readable,
 * cur at a LOWER generation than prev -> true, *kind RECREATED (deleted
 * and created again between two listings); anything else -> false, *kind
 * untouched. prev, cur and kind borrowed. keep_owner_watch_diff reports
 * it. */
bool keep_owner_watch_hand_deleted(const struct keep_owner_view *prev,
				   const struct keep_owner_view *cur, enum keep_owe_kind *kind);

/* The events between prev (the last pass's view; prev->seen false for a key
 * not listed before) and cur (this pass's; cur->seen false when the key
 * vanished). Writes up to KEEP_OWE_MAX events to ev[] and returns their
 * number:
 *   held by (node, instance, generation) not held so before -> ACQUIRED,
 *     then HOLDER when its holder is known and not LIVE;
 *   the same hold, its holder changed from the last known state (UNKNOWN
 *     is never compared) -> HOLDER;
 *   held -> nobody, or nobody -> nobody at a later generation -> RELEASED;
 *   readable -> unreadable -> UNREADABLE; listed -> not listed -> REMOVED;
 *   readable -> readable at a LOWER generation -> RECREATED first (node,
 *     instance, generation: the record now; previous_node and
 *     previous_generation: before), then the events above: keep never
 *     lowers a generation, so the record was deleted by hand and created
 *     again between two listings (a native cluster has no marker to stop
 *     it): a holder of the old record may still act, with a fencing token
 *     above the new one (issue 23 item 6).
 * missed counts the acquisitions the generations prove were not seen:
 * cur - prev - 1 for ACQUIRED, cur - prev for RELEASED, when prev was a
 * readable view; a key first seen as nobody was acquired and released
 * unseen (RELEASED, node "", missed 1). Sets cur->last_known_holder. */
size_t keep_owner_watch_diff(const struct keep_owner_view *prev, struct keep_owner_view *cur,
			     struct keep_owe ev[KEEP_OWE_MAX]);

/* ---- a pass ------------------------------------------------------------------ */

/* What a pass keeps of one object after its read (a record of
 * owners/PREFIX, or a holder's nodes/<id>; §2 the listing). */
enum keep_wl_keep {
	KEEP_WL_KEEP_NEW = 0, /* the read's result */
	KEEP_WL_KEEP_PREV,    /* the read failed: the view of an earlier pass stays, read
				 again next pass */
	KEEP_WL_KEEP_DROP,    /* not in this pass: gone since the listing, or a failed
				 read of an object no pass has seen (drop_unseen) */
};
/* gone: the read answered not found; read_failed: it failed (no answer
 * about the object); have_prev: an earlier pass has a view of it;
 * drop_unseen: an object never seen is left out of the pass until a read
 * succeeds (records: else kept as a failed read); every (--once): a failed
 * read is kept as it is, never an older view. */
enum keep_wl_keep keep_watchlist_keep(bool gone, bool read_failed, bool have_prev, bool drop_unseen,
				      bool every);

/* The version a record's view is known by (owner-watch reads it again
 * only when the listing shows another): the read's, or the listed one for
 * a body keep cannot hold (not_ours: over KEEP_BODY_MAX, read with no
 * version), so it is reported once and not read again until it changes
 * (issue 16). Strings borrowed; returns one of them. */
const char *keep_watchlist_body_version(bool not_ours, const char *listed,
					const char *read_version);

/* When owner-watch's next pass starts (boot-clock ms): a period after the
 * start of this one, failed or not (saturating). */
int64_t keep_owner_watch_next_pass_ms(int64_t pass_start_mono_ms, const struct keep_timing *t);

/* The first pass of --follow is the baseline (no events before
 * `synced`): call it on each of its views; v's last_known_holder is its
 * holder. */
void keep_owner_watch_baseline(struct keep_owner_view *v);

#endif
