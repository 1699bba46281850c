/* keep — the upgrade from per-actor leases, sans I/O (ADR 0020 §6 and
 * "Cost, after"; docs/upgrade.md, docs/formats.md "Old per-actor leases
 * and markers").
 *
 *   codec     leases/<tenant>/<class>/<name>: the old per-actor lease
 *             (`wasmkeep-lease 1`) and the upgrade marker (`wasmkeep-lease 2`)
 *   mark      keep_upgrade_mark_decide(): what the first acquisition of an
 *             actor does with leases/KEY (held / create / replace / existing)
 *   seed      keep_upgrade_segment_gen(), keep_upgrade_actor_of(): the
 *             generations carried by wal/KEY/<gen>/… and snapshot/KEY/<gen>/…
 *   guard     struct keep_guard: the start guard over listings of nodes/
 *   forget    keep_upgrade_forget_decide(): may a node object be deleted?
 *
 * Nothing here reads a clock, sleeps, or touches a file or the store.
 * *_wall_ms: the wall clock (ms since the epoch, compared with other
 * nodes' written_at and an old lease's expires_at); *_mono_ms: this
 * process's steady clock (CLOCK_BOOTTIME in cmd/, lib/platform/clock.h). Pointer
 * arguments are borrowed for the call; outputs are copied into
 * caller-owned structs. */
#ifndef KEEP_CORE_UPGRADE_H
#define KEEP_CORE_UPGRADE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"
#include "timing.h"

#define KEEP_LEASES_PREFIX "leases/"		/* old leases and markers */
#define KEEP_WAL_PREFIX "wal/"			/* segment keys: wal/KEY/<generation>/… */
#define KEEP_SNAPSHOT_PREFIX "snapshot/"	/* snapshot/KEY/<generation>/… */
#define KEEP_LEASEOBJ_MAX 1024			/* bytes: largest leases/ object accepted */
#define KEEP_UPGRADE_GEN_MAX 9007199254740991LL /* 2^53 - 1, as ownerrec's generations */
/* The start guard's horizon (ms): how long an old (per-actor lease) node
 * may still act after its last heartbeat, which is the old binary's
 * heartbeat ttl (10 s): its renewals run on a task of their own, so a
 * stalled heartbeat does not stop them. upgrade-mark --horizon-ms
 * overrides it. */
#define KEEP_UPGRADE_HORIZON_MS 10000
#define KEEP_GUARD_NODES_MAX 100000 /* most old heartbeats tracked by the guard */
/* Failed listings of nodes/ in a row before the guard gives up (111):
 * listed again every half period, so about 5 periods of an unreachable
 * store (docs/upgrade.md "The start guard"). */
#define KEEP_GUARD_LIST_FAILURES 10

/* ---- codec ------------------------------------------------------------------ */

/* A decoded leases/ object.
 * Format 1, the old per-actor lease (written by per-actor-lease binaries):
 *   wasmkeep-lease 1
 *   node <id>                 the holder's node id (keep_node_id_valid)
 *   generation <int>          >= 0, decimal, no sign, no leading zero
 *   expires_at_ms <int>       > 0: the holder's wall clock (ms) when it expires
 * Format 2, the upgrade marker (written by keep, never by an old binary):
 *   wasmkeep-lease 2
 *   seed <int>                >= 0: the generation to seed the first record from
 *   [created <int>]           > seed: the first record was created at this
 *                             generation (the confirmed marker, issue 14 item 3:
 *                             a record missing under it was deleted out of band)
 * One field per line, '\n' after every line, in this order, nothing else. */
struct keep_lease_obj {
	int format;			 /* 1 (old lease) or 2 (marker) */
	char node[KEEP_NODE_ID_MAX + 1]; /* format 1 */
	int64_t generation;		 /* format 1 */
	int64_t expires_at_ms;		 /* format 1 (writer's wall clock) */
	int64_t seed;			 /* format 2 */
	int64_t created; /* format 2: the first record's generation; 0 unconfirmed */
};

/* Decode len bytes at buf (not necessarily NUL-terminated). 0;
 * KEEP_ERR_NOTOURS (the first line is not `wasmkeep-lease 1` or `2`);
 * KEEP_ERR_PARSE (a missing, extra, out-of-order or malformed line, '\r',
 * NUL, no final '\n'); KEEP_ERR_TOOBIG (> KEEP_LEASEOBJ_MAX). err (errlen
 * bytes, may be NULL) gets a one-line reason on failure. */
int keep_lease_obj_decode(const char *buf, size_t len, struct keep_lease_obj *out, char *err,
			  size_t errlen);

/* Append the encoding of o (format 1 or 2) to out. KEEP_ERR_INVAL for what
 * decode would refuse; KEEP_ERR_NOMEM/TOOBIG from the buffer. Format 1 is
 * only written by tests and tools (keep never writes an old lease). */
int keep_lease_obj_encode(const struct keep_lease_obj *o, struct keep_buf *out);

/* Is an old lease (format 1) live by the old rules at now_wall_ms:
 * now_wall_ms < expires_at_ms + grace_ms (§6)? false for a marker. */
bool keep_old_lease_live(const struct keep_lease_obj *o, int64_t now_wall_ms,
			 const struct keep_timing *t);

/* ---- marking (first acquisition, §6) ----------------------------------------- */

enum keep_mark_verdict {
	KEEP_MARK_HELD = 0,   /* a live old lease (whatever node, ours too): refuse */
	KEEP_MARK_CREATE,     /* absent: PUT the marker If-None-Match: * */
	KEEP_MARK_REPLACE,    /* an expired old lease: PUT the marker If-Match the read */
	KEEP_MARK_EXISTING,   /* a marker exists: seed from it (and the keys) */
	KEEP_MARK_BAD_OBJECT, /* not ours or malformed: nothing written */
	KEEP_MARK_FAILED,     /* the read failed (retry later) */
};

/* "held", "create", "replace", "existing", "bad-object", "failed". */
const char *keep_mark_verdict_name(enum keep_mark_verdict v);

/* Decide on a versioned GET of leases/KEY: outcome (NOT_FOUND = absent),
 * o the decoded object (NULL unless OK and decoded), decode_err its error.
 * CREATE, REPLACE and EXISTING need the seed from the keys next
 * (keep_upgrade_seed_of). */
enum keep_mark_verdict keep_upgrade_mark_decide(enum keep_outcome outcome,
						const struct keep_lease_obj *o, int decode_err,
						int64_t now_wall_ms, const struct keep_timing *t);

/* The seed (§6): max(old, highest), each >= 0; old is the old lease's
 * generation or the marker's seed (0 when absent), highest the highest
 * generation found in the actor's segment keys (0 when none). */
int64_t keep_upgrade_seed_of(int64_t old, int64_t highest);

/* The generation carried by a segment key: prefix is the actor's segment
 * prefix ("wal/" KEY "/" or "snapshot/" KEY "/"), key a listed key under
 * it; the generation is the next segment, 1..19 ASCII digits (leading
 * zeros allowed: the old writer may pad), value <= KEEP_UPGRADE_GEN_MAX.
 * 0 with *gen set; KEEP_ERR_INVAL (key not under prefix); KEEP_ERR_PARSE
 * (a generation segment that is not such a number: refuse, never guess). */
int keep_upgrade_segment_gen(const char *prefix, const char *key, int64_t *gen);

/* The actor key tenant/class/name of a listed key under top ("leases/",
 * "owners/", "wal/" or "snapshot/"): the three segments after top, into
 * out (outlen bytes). leases/ and owners/ keys must have exactly three;
 * wal/ and snapshot/ keys at least four (the generation follows).
 * 0; KEEP_ERR_INVAL (not under top, too few or too many segments, or not
 * a valid actor key); KEEP_ERR_TOOBIG (out too small). */
int keep_upgrade_actor_of(const char *top, const char *key, char *out, size_t outlen);

/* The prefixes under which `upgrade-mark actors --all` finds actors, in
 * the order it lists them (ADR 0020 §6; docs/upgrade.md): leases/,
 * owners/, wal/, snapshot/; each key's actor is keep_upgrade_actor_of. */
#define KEEP_UPGRADE_ACTOR_TOPS 4
extern const char *const keep_upgrade_actor_tops[KEEP_UPGRADE_ACTOR_TOPS];

/* ---- the start guard (§6) ------------------------------------------------------ */

/* How long until an old heartbeat written at written_at_ms is stale on the
 * wall clock: written_at + horizon + ttl + grace - now_wall (ms; <= 0:
 * stale). Used by the guard and by forget (the same test). */
int64_t keep_upgrade_old_left_ms(int64_t written_at_ms, int64_t now_wall_ms,
				 const struct keep_timing *t, int64_t horizon_ms);

/* One node object of a listing of nodes/. */
struct keep_guard_input {
	const char *node;		 /* the id of the key nodes/<id> (borrowed) */
	bool read_failed;		 /* the GET failed: the pass cannot pass */
	const struct keep_node_obj *obj; /* decoded (borrowed), NULL when unreadable */
};

/* One versioned GET of nodes/<node> (listed) as the guard's input (ADR
 * 0020 §6; docs/upgrade.md "The start guard"): outcome NOT_FOUND (gone
 * since the listing) is no input: false, *in untouched; any other outcome
 * but OK is read_failed (the pass cannot pass); OK with obj NULL (not a
 * node object the guard can judge) is an input the pass ignores. Fills
 * *in and returns true otherwise. node and obj are borrowed, as in *in. */
bool keep_guard_input_of(struct keep_guard_input *in, const char *node, enum keep_outcome outcome,
			 const struct keep_node_obj *obj);

enum keep_guard_state {
	KEEP_GUARD_FRESH = 0, /* written less than horizon + ttl + grace ago: wait */
	KEEP_GUARD_STALE,     /* stale: it holds nothing up */
	KEEP_GUARD_LAPSED,    /* dated ahead, lapsed on this process's monotonic count */
	KEEP_GUARD_REWRITTEN, /* its written_at changed between listings: an old node runs */
};

/* "fresh", "stale", "lapsed", "rewritten". */
const char *keep_guard_state_name(enum keep_guard_state s);

/* One old-format heartbeat the guard has seen. */
struct keep_guard_entry {
	char node[KEEP_NODE_ID_MAX + 1];
	int format;		     /* 1 or 2 */
	int64_t written_at_ms;	     /* of the body first read (wall, writer's clock) */
	int64_t prev_written_at_ms;  /* REWRITTEN: the one before; else 0 */
	int64_t first_read_mono_ms;  /* when this process first read this body */
	int64_t left_ms;	     /* FRESH: how long until it is stale or lapses */
	enum keep_guard_state state; /* as of the last pass */
	bool warned;		     /* a LAPSED warning was reported (once per body) */
	bool lapsed_now;	     /* LAPSED first in the last pass: warn now */
	bool seen;		     /* listed in the last pass */
};

enum keep_guard_verdict {
	KEEP_GV_PASS = 0,    /* no fresh old heartbeat: go on */
	KEEP_GV_WAIT,	     /* wait; list again at next_mono_ms */
	KEEP_GV_OLD_RUNNING, /* an old heartbeat was rewritten: exit 16 */
	KEEP_GV_REFUSED,     /* the listing was refused (403, no such bucket): exit 1 */
	KEEP_GV_GAVE_UP,     /* KEEP_GUARD_LIST_FAILURES failed listings in a row: 111 */
};

/* "pass", "wait", "old-running", "refused", "gave-up". */
const char *keep_guard_verdict_name(enum keep_guard_verdict v);

/* The guard. Owns e[]; release with keep_guard_release. */
struct keep_guard {
	struct keep_timing t;
	int64_t horizon_ms;
	struct keep_guard_entry *e; /* in first-seen order */
	size_t n, alloc;
	enum keep_guard_verdict verdict; /* of the last pass */
	int64_t left_ms;		 /* WAIT: the longest wait left (0 when unknown) */
	int64_t next_mono_ms;		 /* WAIT: list again at this time */
	bool incomplete;		 /* the last pass had a failed read */
	int list_failures;		 /* failed listings since the last pass */
};

/* Initialise with timing t (copied) and horizon_ms (>= 0). */
void keep_guard_init(struct keep_guard *g, const struct keep_timing *t, int64_t horizon_ms);
void keep_guard_release(struct keep_guard *g);

/* Feed one complete listing of nodes/ (every object listed, any order) at
 * now_mono_ms/now_wall_ms. Format-3 and unreadable objects are ignored; an
 * old-format one (1, 2) is, by its body:
 *   REWRITTEN when its written_at differs from the one last read (in any
 *     earlier pass, even one it was absent from);
 *   STALE when keep_upgrade_old_left_ms <= 0;
 *   LAPSED when first_read_mono + horizon + ttl + grace + max_skew <=
 *     now_mono_ms (a body dated ahead, or a wall clock stepped back);
 *   FRESH otherwise, left_ms = the smaller of the two bounds.
 * Verdict: OLD_RUNNING if any REWRITTEN; else WAIT if any FRESH or any read
 * failed (next_mono_ms = now + min(period / 2, longest left), at least 1
 * ms later); else PASS. g->e[] shows each heartbeat's state.
 * 0, KEEP_ERR_NOMEM, KEEP_ERR_TOOBIG (more than KEEP_GUARD_NODES_MAX); on
 * error the guard is unchanged. */
int keep_guard_pass(struct keep_guard *g, const struct keep_guard_input *in, size_t n,
		    int64_t now_mono_ms, int64_t now_wall_ms);

/* The bound of each request of the start guard (ms): one attempt's
 * timeout (keep_timing_attempt_timeout_ms), so a pass that hangs is
 * retried on the guard's schedule, never waited on (docs/upgrade.md "The
 * start guard"). */
int64_t keep_guard_request_timeout_ms(const struct keep_timing *t);

/* A listing of nodes/ failed at now_mono_ms with outcome (not OK): the
 * guard's retry rule. An outcome whose exit code is 1 (refused, not found:
 * keep_exit_of_outcome) cannot be helped by listing again: REFUSED. The
 * KEEP_GUARD_LIST_FAILURES-th failure in a row: GAVE_UP. Otherwise WAIT,
 * g->next_mono_ms = now + period / 2 + 1 (saturating). Sets and returns
 * g->verdict; a pass (keep_guard_pass) resets the count. docs/upgrade.md
 * "The start guard"; ADR 0020 §6. */
enum keep_guard_verdict keep_guard_on_list_failure(struct keep_guard *g, enum keep_outcome outcome,
						   int64_t now_mono_ms);

/* ---- forget (§2 "forget", §6) -------------------------------------------------- */

enum keep_forget_verdict {
	KEEP_FORGET_DELETE = 0, /* a stale old-format heartbeat: delete it */
	KEEP_FORGET_FRESH,	/* old format, not stale by the guard's test (or dated ahead) */
	KEEP_FORGET_FORMAT3,	/* a node lease (format 3): never deleted */
	KEEP_FORGET_ABSENT,	/* nothing to delete */
	KEEP_FORGET_BAD_OBJECT, /* not ours or malformed: never deleted */
	KEEP_FORGET_FAILED,	/* the read failed */
	KEEP_FORGET_FENCE,	/* an operator's fence created over an absent object
				   (instance "-"): deleted only when no ownership record
				   names the node (keep_upgrade_forget_fence_record) */
};

/* "delete", "fresh", "format-3", "absent", "bad-object", "failed",
 * "created-fence". */
const char *keep_forget_verdict_name(enum keep_forget_verdict v);

/* Decide on one versioned GET of nodes/<id>: outcome, o (NULL unless OK
 * and decoded), decode_err. DELETE only for format 1 or 2 with
 * keep_upgrade_old_left_ms <= 0; *left_ms (may be NULL) gets that value
 * for old formats, else 0. A body dated ahead is FRESH: forget has no
 * monotonic count of it (docs/runbooks/forget-old-heartbeats.md).
 * A format-3 fence with instance "-" by the operator (`lease-fence
 * --create` over an absent object: it names no process that ever wrote)
 * is FENCE: the driver checks every ownership record first (issue 27: a
 * mistyped fence can be removed); any other format-3 object is FORMAT3,
 * never deleted. */
enum keep_forget_verdict keep_upgrade_forget_decide(enum keep_outcome outcome,
						    const struct keep_node_obj *o, int decode_err,
						    int64_t now_wall_ms,
						    const struct keep_timing *t, int64_t horizon_ms,
						    int64_t *left_ms);

/* What one read of an ownership record says about removing the created
 * fence of `node` (KEEP_FORGET_FENCE): the fence frees the records that
 * name node (ADR 0020 §2: the free rule reads nodes/<node>, and an absent
 * object frees nothing), so it stays while any record names it. */
enum keep_forget_record {
	KEEP_FORGET_REC_CLEAR = 0, /* absent, nobody, or held by another node */
	KEEP_FORGET_REC_NAMED,	   /* held by node: the fence stays */
	KEEP_FORGET_REC_UNKNOWN,   /* unreadable or the read failed: the fence stays */
};
/* outcome and rec (NULL unless OK and decoded) of one GET of owners/KEY. */
enum keep_forget_record keep_upgrade_forget_fence_record(const char *node,
							 enum keep_outcome outcome,
							 const struct keep_owner_rec *rec);

/* The conditional DELETE of an old heartbeat (If-Match the version read)
 * answered conflict; nodes/<id> was read again. CHANGED: it is gone, the
 * read failed, or it has another version (rewritten since our read: look
 * again next time); UNCHANGED: the same version, so another request
 * refused ours (a 409). read_version and again_version are borrowed. */
enum keep_forget_conflict {
	KEEP_FORGET_CHANGED = 0, /* `kept ... reason=changed` */
	KEEP_FORGET_UNCHANGED,	 /* `kept ... reason=conflict-unchanged` */
};
/* "changed", "conflict-unchanged". */
const char *keep_forget_conflict_name(enum keep_forget_conflict c);
enum keep_forget_conflict keep_upgrade_forget_on_conflict(const char *read_version,
							  enum keep_outcome again,
							  const char *again_version);

/* What the reply to forget's conditional DELETE of nodes/<id> (If-Match
 * the version read; ADR 0020 §6, docs/upgrade.md) says. */
enum keep_forget_delete {
	KEEP_FORGET_DEL_DONE = 0, /* OK, or NOT_FOUND (gone already): `forgot ...` */
	KEEP_FORGET_DEL_CONFLICT, /* the condition failed: read nodes/<id> again and
				     ask keep_upgrade_forget_on_conflict why */
	KEEP_FORGET_DEL_FAILED,	  /* refused, ambiguous, anything else: `error ...
				     reason=store`, the reply's exit code */
};
/* Classify the DELETE's outcome (a plain function of it). */
enum keep_forget_delete keep_upgrade_forget_on_delete(enum keep_outcome outcome);

/* The exit code of forget's answer for one node (ADR 0020 §6;
 * docs/exit-codes.md, docs/upgrade.md). v: the verdict; dv: the class of
 * the DELETE when one was sent (v DELETE, or FENCE after its check),
 * else ignored; store_exit: the failed request's exit code (v FAILED, or
 * dv FAILED). Absent and removed: 0. Kept: 1 (fresh, format 3, the
 * delete's condition failed), 17 (a bad object). A failure: store_exit.
 * quiet (`forget --stale`, which walks every node and forgets what it
 * may): a kept node, and a created fence (never touched there), is 0;
 * a failure still is not. */
int keep_upgrade_forget_exit(enum keep_forget_verdict v, enum keep_forget_delete dv, int store_exit,
			     bool quiet);

/* The application root ROOT of a listed key apps/ROOT/owners/… (ADR 0022:
 * the roots whose records forget reads before it removes a created
 * fence), into out (outlen bytes). 0; KEEP_ERR_INVAL (not under apps/, no
 * /owners/ after the root, or not a valid root: keep_app_root_valid);
 * KEEP_ERR_TOOBIG (out too small). */
int keep_upgrade_app_root_of(const char *key, char *out, size_t outlen);

#endif
