/* keep — fencing and membership, sans I/O (ADR 0020 §2, §6; docs/fencing.md).
 *
 * Four pure parts, each driven by a command that reads the clocks and
 * calls the store:
 *
 *   keep_node_status()      what one node object shows (cluster status, §6)
 *   struct keep_watch       node-watch's watch of every peer: join, change,
 *                           leave, and `stale` candidates (§2)
 *   keep_fence_peer_*()     lease-fence --stdin: may this node act on a
 *                           stale line now (its own lease and live_since),
 *                           the decision on one fresh versioned read, and
 *                           on the re-read after a failed fence (§2)
 *   keep_fence_operator()   lease-fence NODE: the operator's fence (§2)
 *   keep_node_free()        the free rule of a record naming node A and
 *                           instance i (§2), for the ownership commands
 *
 * Nothing here reads a clock, sleeps, or touches a file or the store.
 * Deadlines are computed with keep_add_sat_ms (timing.h): one that
 * saturates is never reached, whatever time an object or a line carries.
 * *_mono_ms: a steady clock, CLOCK_BOOTTIME in cmd/ (lib/platform/clock.h; this
 * boot); *_wall_ms: the wall clock (ms since the epoch), compared with
 * other nodes' written_at. */
#ifndef KEEP_CORE_FENCE_H
#define KEEP_CORE_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "timing.h"

#define KEEP_FENCE_CONCURRENCY 8    /* fences at once (ADR §2 bounds, FENCE_CONCURRENCY) */
#define KEEP_WATCH_PEERS_MAX 100000 /* most nodes watched; more are refused */

/* ---- status ---------------------------------------------------------------- */

enum keep_node_status {
	KEEP_STATUS_LIVE = 0,
	KEEP_STATUS_RELEASED,
	KEEP_STATUS_FENCED,
	KEEP_STATUS_OLD_RUNNING, /* old format, fresh or changing (§6): an error */
	KEEP_STATUS_OLD_RETIRED, /* old format, stale: a retired node */
	KEEP_STATUS_UNREADABLE,	 /* not ours, malformed, or the read failed */
};

/* "live", "released", "fenced", "old-running", "old-retired", "unreadable". */
const char *keep_node_status_name(enum keep_node_status s);

/* The status of a decoded object o (NULL: unreadable) at now_wall_ms.
 * An old-format heartbeat is old-running when its written_at is less than
 * ttl + grace before now_wall_ms (or in the future), or when
 * changed_recently (the caller saw it change between listings within the
 * last ttl + grace); otherwise old-retired. */
enum keep_node_status keep_node_status(const struct keep_node_obj *o, int64_t now_wall_ms,
				       const struct keep_timing *t, bool changed_recently);

/* ---- the watch (node-watch) ------------------------------------------------ */

/* One node seen by a listing pass. */
struct keep_watch_input {
	const char *node; /* the id from the key nodes/<id> (borrowed) */
	bool readable;	  /* obj holds the decoded object */
	bool read_failed; /* the GET failed (not a decode error): keep the watch as it is */
	/* No body read: the listing shows a version token other than the last
	 * listing's, so a write landed on nodes/<id> since (docs/fencing.md,
	 * "Reading only what changed"). The peer's observed body stays as it
	 * was (no change event), and its watch starts again: a write is never
	 * evidence of staleness, only of life. Ignored for a peer not known
	 * yet (the driver reads a new node's body). readable/obj unused. */
	bool wrote;
	const struct keep_node_obj *obj; /* borrowed; NULL unless readable */
};

enum keep_watch_event_kind {
	KEEP_WEV_JOIN = 0, /* a node first seen */
	KEEP_WEV_CHANGE,   /* its status, instance or format changed (not each renewal) */
	KEEP_WEV_LEAVE,	   /* no longer listed */
	KEEP_WEV_STALE,	   /* a fence candidate (§2) */
};

struct keep_watch_event {
	enum keep_watch_event_kind kind;
	char node[KEEP_NODE_ID_MAX + 1];
	enum keep_node_status status;
	int format;			      /* 0 when unreadable */
	char instance[KEEP_INSTANCE_LEN + 1]; /* "-" when none */
	int64_t written_at_ms;		      /* 0 when unreadable */
	int64_t unchanged_ms;		      /* STALE: how long watched unchanged */
	/* STALE: this node's live_since_mono_ms the candidate was judged under
	 * (0 when unknown), and when its watch started counting, the later of
	 * the first read of this (instance, written_at) and that live_since
	 * (monotonic ms). lease-fence drops the candidate when its own
	 * live_since no longer matches (ADR §2; keep_fence_peer_may). */
	int64_t live_since_mono_ms;
	int64_t watch_since_mono_ms;
};

struct keep_watch_peer {
	char node[KEEP_NODE_ID_MAX + 1];
	bool readable;
	int format;
	enum keep_node_status status;
	char instance[KEEP_INSTANCE_LEN + 1];
	int64_t written_at_ms;
	int64_t since_mono_ms;	    /* first seen with this instance + written_at */
	int64_t changed_mono_ms;    /* last seen changing (0: never) */
	int64_t last_stale_mono_ms; /* last stale emitted (0: never) */
	bool seen;		    /* listed in the current pass */
	bool read_failed;	    /* the last pass's read of it failed: never stale on it */
	bool observed;		    /* its body or token was seen in the current pass */
	bool watched;		    /* ring mode: one of this node's successors (keep_watch_ring);
				       always true in full mode */
	bool unread;		    /* ring mode: watched since its last observation: no tick
				       judges it before a pass has looked at it */
	int64_t noticed_written_at_ms; /* ring mode: a GET showed this newer written_at, taken
					  as a write seen (keep_watch_observe) */
};

/* The watch. Owns peers[] and ev[]; release with keep_watch_release. */
struct keep_watch {
	struct keep_timing t;
	char self[KEEP_NODE_ID_MAX + 1]; /* "" when none: nothing is ever stale */
	struct keep_watch_peer *peers;	 /* sorted by node id */
	size_t n, alloc;
	struct keep_watch_event *ev; /* events of the last pass */
	size_t nev, evalloc;
	bool was_valid; /* this node's lease was valid at the last pass */
	int ring_k;	/* ring mode: successors watched (keep_watch_set_ring); 0: full */
};

/* Initialise for node self (NULL or "": no own lease, never stale). */
void keep_watch_init(struct keep_watch *w, const struct keep_timing *t, const char *self);
void keep_watch_release(struct keep_watch *w);

/* The time a peer must stay unchanged before it is a candidate:
 * write_every + attempt_timeout (ms). */
int64_t keep_watch_stale_after_ms(const struct keep_timing *t);

/* Feed one listing pass (every node listed, in any order) at now_mono_ms.
 * self_valid: this node's lease is valid now (lease state file);
 * live_since_mono_ms: its first acknowledged write after its last lapse
 * (0 when unknown). While not valid, no stale line is produced and every
 * watch restarts. The pass's events replace w->ev/w->nev: joins and
 * changes in input order, leaves, then stale candidates (each at most
 * once per write_every while it stays one).
 * 0, KEEP_ERR_NOMEM or KEEP_ERR_TOOBIG (too many nodes); on error the
 * watch is unchanged apart from events. */
int keep_watch_pass(struct keep_watch *w, const struct keep_watch_input *in, size_t n,
		    int64_t now_mono_ms, int64_t now_wall_ms, bool self_valid,
		    int64_t live_since_mono_ms);

/* Stale candidates due at now_mono_ms without a new listing (ADR §2 timing:
 * the candidate is sent the moment the watch bound passes, not at the next
 * listing). Judged on the bodies of the last pass exactly as
 * keep_watch_pass judges them; lease-fence then decides on one fresh read,
 * which must still show the instance and written_at watched. The events
 * replace w->ev/w->nev (stale lines only). While self_valid is false, no
 * candidate, and every watch restarts (as in a pass). 0 or KEEP_ERR_NOMEM. */
int keep_watch_tick(struct keep_watch *w, int64_t now_mono_ms, bool self_valid,
		    int64_t live_since_mono_ms);

/* When peer p of w becomes a stale candidate (§2, issue 18; monotonic ms,
 * this boot; it may be in the past): watched unchanged a full write_every
 * + attempt_timeout (keep_watch_stale_after_ms), counted from the later of
 * the moment p was first seen with its instance and written_at (or seen
 * writing) and live_since_mono_ms, this node's first acknowledged write
 * after its last lapse; once a candidate, again write_every after the
 * last stale line. Saturated: INT64_MAX is never reached. Judges nothing
 * else of p (keep_watch_peer_judged does). w and p borrowed. */
int64_t keep_watch_stale_due_mono_ms(const struct keep_watch *w, const struct keep_watch_peer *p,
				     int64_t live_since_mono_ms);

/* Is peer p of w judged now, at a pass or a tick (§2, issue 28)? Only a
 * peer that can be fenced (this pass's read of it did not fail; readable,
 * format 3, live, not this node) and, in ring mode, only on a pass that
 * observed it (observed: its body or token was seen in this pass), or at
 * a tick while it is watched (keep_watch_ring) and a pass has looked at
 * it since it became watched (not unread): a peer nobody looks at is
 * never judged on time alone. In full mode every peer is watched.
 * observed: false at a tick and when scheduling (keep_watch_next_stale_mono_ms).
 * w and p borrowed. */
bool keep_watch_peer_judged(const struct keep_watch *w, const struct keep_watch_peer *p,
			    bool observed);

/* Does a ring-mode GET x of known peer p show a write (issue 28;
 * docs/fencing.md "Ring mode")? True when x's body (not a changed token,
 * not a failed read) and p's last body are both format 3 and x names
 * another instance or written_at than p's body, and a written_at other
 * than the one already noticed (p->noticed_written_at_ms): a write seen,
 * exactly as a listing's changed token, so the watch restarts and the
 * body is taken at the next GET. Only for observations; a listing takes
 * every body it reads. x and p borrowed. */
bool keep_watch_observed_write(const struct keep_watch_peer *p, const struct keep_watch_input *x);

/* The earliest monotonic time at which a peer becomes (or, repeated once
 * per write_every, stays) a stale candidate on the bodies seen so far; 0
 * when none can (no own node id, no live peer watched). The driver wakes
 * then and calls keep_watch_tick. */
int64_t keep_watch_next_stale_mono_ms(const struct keep_watch *w, int64_t live_since_mono_ms);

/* ---- ring mode (issue 28; docs/fencing.md "Ring mode") ------------------------
 *
 * In full mode (the default) every peer is listed, and judged, every
 * period. In ring mode a node lists nodes/ only every full_every periods
 * (keep_watch_pass, as in full mode: joins, leaves, the ring itself, and
 * every peer judged on what that listing shows), and in the periods
 * between reads only the bodies of its watched peers (keep_watch_observe).
 * A peer is a candidate only on a pass that observed it, or at a tick when
 * it is watched: a peer not watched is never judged on time alone (it is
 * not being looked at), so ring mode never emits a candidate full mode
 * would not; the fence is decided on one fresh read either way. */

/* Ring mode with k successors (1..KEEP_WATCH_RING_MAX), or full mode (0). */
#define KEEP_WATCH_RING_MAX 16
/* The most peers one ring pass reads (GETs): k successors and, beyond
 * each candidate, one more, bounded; a watcher reads the first this many
 * keep_watch_ring names (the ids it fills are at most this many when max
 * is). A bound of the pass's cost, not of safety: a peer not read is not
 * judged (docs/fencing.md "Ring mode"). */
#define KEEP_WATCH_RING_READS_MAX (KEEP_WATCH_RING_MAX * 4)
void keep_watch_set_ring(struct keep_watch *w, int k);

/* The watched peers, after a pass or an observation: walking the ring of
 * peer ids (sorted, wrapping) from this node's own id, the next ring_k
 * peers that can be fenced (readable, format 3, live, not this node), and
 * beyond each of them that is a candidate now (a stale line emitted and
 * nothing changed since) one more: a run of dead successors is skipped
 * over the moment each becomes a candidate. Sets each peer's watched flag
 * and fills ids[0..max) with the watched peers' node ids (borrowed from
 * w: valid until the next pass or observation); returns how many. Full
 * mode: every peer watched, 0 returned (the listing reads them). */
size_t keep_watch_ring(struct keep_watch *w, const char **ids, size_t max);

/* A ring-mode pass: the bodies of the watched peers read at now_mono_ms
 * (in: one input each; keep_watch_input_of with wrote false; a peer not
 * known is ignored; a GET that found nothing is a read_failed input: the
 * next full listing says whether it left). No join and no leave; a
 * candidate only among the peers observed here; the rest as
 * keep_watch_pass. 0 or KEEP_ERR_NOMEM. */
int keep_watch_observe(struct keep_watch *w, const struct keep_watch_input *in, size_t n,
		       int64_t now_mono_ms, int64_t now_wall_ms, bool self_valid,
		       int64_t live_since_mono_ms);

/* "join", "change", "leave", "stale". */
const char *keep_watch_event_name(enum keep_watch_event_kind k);

/* ---- peer fence (lease-fence --stdin) --------------------------------------- */

/* A stale line: what the watcher saw unchanged, and under which of its
 * own live periods (docs/fencing.md, "After the fencer's own lapse"). */
struct keep_stale {
	char node[KEEP_NODE_ID_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1];
	int64_t written_at_ms;
	/* The watcher's live_since_mono_ms when it produced the line, and its
	 * watch start for this peer (monotonic ms, this boot); 0 when the line
	 * did not carry them (an older node-watch, or a line typed by hand):
	 * the decision then counts the watch from the fencer's live_since. */
	int64_t live_since_mono_ms;
	int64_t watch_since_mono_ms;
};

/* The stale line of a KEEP_WEV_STALE event (every field copied). */
void keep_stale_of_event(const struct keep_watch_event *e, struct keep_stale *st);

/* The fencer's own node lease at the moment of a decision, read by the
 * driver (lease state file, or the simulator's lease machine). */
struct keep_fencer {
	bool valid;		    /* the lease is valid now */
	int64_t live_since_mono_ms; /* its first acknowledged write after its last lapse */
	int64_t now_mono_ms;	    /* now, on the same monotonic clock */
};

enum keep_fence_verdict {
	KEEP_FV_FENCE = 0,  /* write *obj, If-Match the read's version */
	KEEP_FV_CREATE,	    /* operator only: write *obj, If-None-Match: * */
	KEEP_FV_FENCED,	    /* done: the fence landed */
	KEEP_FV_REWATCH,    /* the node wrote (or is not live): watch again */
	KEEP_FV_NOT_YET,    /* written_at + ttl + grace not passed on our clock */
	KEEP_FV_ALIVE,	    /* the fence failed its condition: the node wrote meanwhile */
	KEEP_FV_ALREADY,    /* someone else fenced it */
	KEEP_FV_NOT_VALID,  /* this node's own lease is not valid: nothing done */
	KEEP_FV_REFUSED,    /* operator: released or old format: nothing done */
	KEEP_FV_BAD_OBJECT, /* the object is not ours or malformed: nothing written */
	KEEP_FV_FAILED,	    /* the store failed (retry later) */
};

/* Stable names: "fence", "create", "fenced", "rewatch", "not-yet",
 * "alive", "already-fenced", "not-valid", "refused", "bad-object",
 * "failed". */
const char *keep_fence_verdict_name(enum keep_fence_verdict v);

struct keep_fence_decision {
	enum keep_fence_verdict verdict;
	const char *reason;	  /* static; why (e.g. "changed", "old-format"), or NULL */
	struct keep_node_obj obj; /* FENCE/CREATE: the object to write */
	int64_t free_at_ms;	  /* written_at + ttl + grace (saturated) of the object; 0 */
};

/* The earliest monotonic time at which this node may fence on st (§2):
 * a full write_every + attempt_timeout counted from the later of its own
 * live_since and the line's watch start (saturated: never overflows). */
int64_t keep_fence_earliest_mono_ms(const struct keep_stale *st, const struct keep_fencer *me,
				    const struct keep_timing *t);

/* Was stale line st produced under another live period of this node
 * (§2, issue 18; docs/fencing.md "After the fencer's own lapse")? True
 * when the line carries a live_since other than me's, or a watch start
 * before me's live_since: this node lapsed (and recovered) since, so the
 * watch behind the line counts for nothing and the line is dropped
 * (keep_fence_peer_may: REWATCH "own-lapse"). A line without them (0)
 * is not lapsed by this test. st and me borrowed. */
bool keep_fence_peer_line_lapsed(const struct keep_stale *st, const struct keep_fencer *me);

/* May this node act on stale line st now (§2: "only while B's own node
 * lease is valid, and only after B has seen A's object unchanged for a
 * full lease period plus one attempt timeout, counted from B's first
 * acknowledged lease write after any lapse of its own")? The driver asks
 * it before the read and again right before the fence write, each time
 * with its lease state read then. true: go on. false, with d holding:
 *   NOT_VALID "own lease not valid" (or "own live_since unknown": valid
 *     with no live_since, which a lease-write never reports);
 *   REWATCH "own-lapse": the line was produced under another live period
 *     of this node (its live_since_mono_ms differs from me's, or its watch
 *     started before me's live_since): this node lapsed since, and its
 *     watch of the peer starts again (a queued or retried line included);
 *   REWATCH "watch-too-short": now_mono_ms is before
 *     keep_fence_earliest_mono_ms (a line without a watch start, fed right
 *     after a recovery, or one that claims a watch it cannot have had). */
bool keep_fence_peer_may(const struct keep_stale *st, const struct keep_fencer *me,
			 const struct keep_timing *t, struct keep_fence_decision *d);

/* The peer's decision on one fresh versioned GET of nodes/<st->node>
 * (§2): keep_fence_peer_may first, then on that read alone:
 *   outcome/obj/decode_err: the GET's reply (obj NULL unless OK and decoded);
 *   me: this node's lease now; self: this node's id (the fence's fenced_by);
 *   now: this node's two wall clocks (timing.h): the peer is judged on
 *        now->judge_wall_ms, the fence is dated now->wall_ms (issue 23).
 * FENCE when the object is format 3, live, names st's instance and
 * written_at, and written_at + ttl + grace <= now->judge_wall_ms; the
 * object to write keeps the instance, written_at and heartbeat fields,
 * state fenced, seq + 1, fenced_by self, fenced_at now->wall_ms (a date
 * this node writes: its own wall clock, never the judging clock).
 * Otherwise the verdicts of the table in docs/fencing.md. All pointers
 * borrowed; d is filled (caller-owned). */
void keep_fence_peer_judge(const struct keep_stale *st, const struct keep_fencer *me,
			   enum keep_outcome outcome, const struct keep_node_obj *obj,
			   int decode_err, const struct keep_walls *now,
			   const struct keep_timing *t, const char *self,
			   struct keep_fence_decision *d);

/* After a fence write that did not land for sure (a conflict, or an
 * ambiguous reply), the one re-read: `sent` is the fence we wrote.
 * FENCED when the read shows our own fence (same fenced_by and
 * fenced_at_ms, same instance and written_at: an ambiguous write that
 * landed); ALREADY for any other fence; ALIVE (reason "wrote") for a live
 * object with another instance or written_at (the node wrote); FAILED
 * (reason "unchanged") for a live object with the fence's instance and
 * written_at: the node did not write, and the fence did not land (another
 * request refused it, or an ambiguous write never landed); REWATCH for
 * released or absent; BAD_OBJECT / FAILED as the read says. */
void keep_fence_read_back(const struct keep_node_obj *sent, enum keep_outcome outcome,
			  const struct keep_node_obj *obj, int decode_err,
			  const struct keep_timing *t, struct keep_fence_decision *d);

/* ---- operator fence (lease-fence NODE) -------------------------------------- */

/* The operator's decision on a versioned GET of nodes/<node> (§2,
 * "wasmkeep cluster fence"), now: the operator's two wall clocks
 * (timing.h; without a node id both are the host's wall clock):
 *   absent -> CREATE (state fenced, instance "-", written_at = fenced_at
 *     = now->wall_ms: "its written_at set to the operator's clock", never
 *     the judging clock: records naming the node are free at that
 *     written_at + ttl + grace, and a written_at dated S ms early frees
 *     them S ms before the node's last write could have lapsed (issue 23);
 *     free_at_ms = written_at + ttl + grace);
 *   format 3 live -> FENCE (If-Match that read; instance and written_at
 *     kept, fenced_at now->wall_ms);
 *   fenced -> ALREADY; released or old format -> REFUSED;
 *   unreadable -> BAD_OBJECT; a failed read -> FAILED.
 * fenced_by is "operator". All pointers borrowed; d is filled. */
void keep_fence_operator(const char *node, enum keep_outcome outcome,
			 const struct keep_node_obj *obj, int decode_err,
			 const struct keep_walls *now, const struct keep_timing *t,
			 struct keep_fence_decision *d);

/* The operator's consent to a created fence (issue 27): a fence over an
 * absent nodes/NODE is written only when asked for (`lease-fence --create
 * NODE`), never by a mistyped id. create false turns a CREATE decision of
 * keep_fence_operator into REFUSED, reason "absent" (nothing written; the
 * driver names the known ids closest to NODE, keep_fence_closest); any
 * other decision, and every decision with create true, is left as it is.
 * ADR 0020 §2 (a fence over an absent object stays possible: a deleted
 * object, a machine gone before it ever wrote). d is caller-owned. */
void keep_fence_operator_absent(struct keep_fence_decision *d, bool create);

/* The ids of ids[0..n) closest to node by edit distance (insertions,
 * deletions, substitutions and swaps of two neighbours, each 1), closest
 * first, ties in the order of ids: their indexes into out[0..k). Returns
 * how many (min(n, k)). Ids longer than KEEP_NODE_ID_MAX are skipped. All
 * pointers borrowed; no allocation. For the refusal of a fence of an
 * absent node (lease-fence: "did you mean"). */
size_t keep_fence_closest(const char *node, const char *const *ids, size_t n, size_t *out,
			  size_t k);

/* ---- the free rule (§2) ------------------------------------------------------ */

enum keep_free {
	KEEP_FREE_NO = 0, /* held: nothing proves the holder lapsed */
	KEEP_FREE_YES,	  /* free now */
	KEEP_FREE_LATER,  /* free at *free_at_ms on the reader's wall clock, not yet */
};

/* When the records a fenced or released object o frees are free (§2 free
 * rule; docs/fencing.md): o's written_at + ttl + grace
 * (keep_timing_takeover_ms), wall ms on the reader's judging clock;
 * INT64_MAX (never) when the sum saturates. Judges nothing of o's state or
 * format (keep_node_free does). o and t borrowed. */
int64_t keep_node_free_at_ms(const struct keep_node_obj *o, const struct keep_timing *t);

/* How old an object dated written_at_ms is at now_wall_ms (ms; node-watch's
 * age_ms and ahead_ms; docs/formats.md "Time bounds"): *age_ms = now -
 * written_at, 0 when it is dated ahead of this clock; *ahead_ms =
 * written_at - now when dated ahead, else 0. Saturating. */
void keep_node_age(int64_t written_at_ms, int64_t now_wall_ms, int64_t *age_ms, int64_t *ahead_ms);

/* Is a record naming node `node` and instance `instance` free, on the
 * evidence of a read of nodes/<node> issued AFTER the read of the record?
 *   present: the read found an object (false: absent -> NO);
 *   obj: the decoded object (NULL: unreadable -> NO).
 * Free only on a format-3 object naming `node` in any state other than
 * live naming `instance`: live naming another instance -> YES;
 * fenced or released naming any instance -> YES once written_at + ttl +
 * grace <= now_wall_ms, else LATER (with *free_at_ms; INT64_MAX, never,
 * when the sum saturates). Absent objects and old formats (1, 2) free
 * nothing. free_at_ms may be NULL. */
enum keep_free keep_node_free(const char *node, const char *instance, bool present,
			      const struct keep_node_obj *obj, int64_t now_wall_ms,
			      const struct keep_timing *t, int64_t *free_at_ms);

#endif
