/* keep — the fenced commit, a sans-I/O machine (issue 26; ADR 0020 §3
 * "Own", the R2 grant document: a stale grant never commits;
 * docs/ownership.md "owner-commit").
 *
 * A holder of KEY at GENERATION writes OBJECT (any key outside keep's own
 * names) as a fenced object (lib/codec/fenced.h): the fence (KEY, GENERATION)
 * in the bytes the store's version token covers, then the application's
 * bytes. The store's condition, not a check made before the send, refuses
 * the write of a holder that was cut off meanwhile: a holder paused between
 * its grant check and its send (GC, SIGSTOP, a slow request) publishes
 * nothing once a later generation wrote its fence.
 *
 * The same shape as the other machines (docs/design.md "How a driver runs
 * a machine"): a driver (lib/driver/commit.c for owner-commit and
 * keep_commit_fenced, sim/ for the simulator) loops
 *
 *   keep_commit_next(sm, now_mono, &act)     what to do now
 *   perform act: the grant check's facts, a GET or a PUT of OBJECT, a wait
 *   keep_commit_on_reply(sm, now_mono, &reply)
 *
 * until act.kind is DONE, then reads sm->res.
 *
 * The order (a commit; a claim differs where said):
 *   1. the grant check (owner-check's rule, keep_owner_check): not valid
 *      now -> refused grant-not-valid, nothing sent;
 *   2. read OBJECT: its fence (owner key, generation g0) and version v.
 *      Absent -> the write is If-None-Match: * (a claim writes no data).
 *      Not a fenced object, another owner key's fence, a fence that does
 *      not decode -> refused (not-fenced, other-key, bad-fence), nothing
 *      written. g0 > GENERATION -> refused fenced, naming g0. Otherwise
 *      the write is If-Match v (a claim keeps the data it read; a claim
 *      that finds g0 = GENERATION is done: claimed, nothing written);
 *   3. the grant check again, right before the send;
 *   4. PUT OBJECT with that condition, the body carrying the fence
 *      (KEY, GENERATION);
 *   5. OK -> committed at the write's version. A conflict, or an unknown
 *      outcome (ambiguous: a lost reply may hide a write that landed) ->
 *      read again (step 2, without its grant check): a body that names
 *      GENERATION and carries these very bytes (size and SHA-256) is our
 *      write -> committed at the read's version; anything else is decided
 *      again as in step 2. At most KEEP_COMMIT_ROUNDS reads and as many
 *      PUTs per commit; a read or write that failed for now is tried again
 *      after KEEP_COMMIT_BACKOFF_MS, doubling.
 * With an expected version (--if-version V: the version the caller last
 * committed), steps 1-2 become the grant check alone and the first write
 * is If-Match V: one PUT when nothing changed. A conflict then reads: our
 * own write -> committed; still at V -> the same write again; anything
 * else -> refused changed (a compare-and-swap: the caller's bytes were
 * computed from V), or fenced when a later generation's fence is there.
 *
 * Once a send may have landed (an ambiguous PUT), an answer other than
 * committed or fenced is UNKNOWN: that write, conditioned on a version
 * whose fence is at most GENERATION, may still land until a later fence
 * replaces that version (then it never can). */
#ifndef KEEP_CORE_COMMIT_H
#define KEEP_CORE_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/vocab.h"
#include "../codec/fenced.h"
#include "owner.h"

#define KEEP_COMMIT_ROUNDS 4	   /* reads, and PUTs, per commit at most */
#define KEEP_COMMIT_BACKOFF_MS 100 /* first wait after a failed (ambiguous) request */
#define KEEP_COMMIT_BACKOFF_MAX_MS 1000

enum keep_commit_mode {
	KEEP_COMMIT_WRITE = 0, /* write the application's bytes */
	KEEP_COMMIT_CLAIM,     /* write this holder's fence over the bytes there */
};

enum keep_commit_result_kind {
	KEEP_CR_COMMITTED = 0, /* committed key=K generation=G object=O version=V */
	KEEP_CR_CLAIMED,       /* claimed key=K generation=G object=O version=V previous=G0|- */
	KEEP_CR_REFUSED,       /* refused key=K object=O reason=..: nothing of ours landed */
	KEEP_CR_UNKNOWN,       /* unknown key=K object=O generation=G reason=..: a send may land */
	KEEP_CR_ERROR,	       /* error key=K object=O reason=..: nothing landed (store) */
};

/* "committed", "claimed", "refused", "unknown", "error" (the line's type). */
const char *keep_commit_result_name(enum keep_commit_result_kind k);

struct keep_commit_result {
	enum keep_commit_result_kind kind;
	int exit_code;			    /* exitcode.h */
	const char *reason;		    /* static: REFUSED, UNKNOWN, ERROR (below); else NULL */
	int64_t generation;		    /* COMMITTED, CLAIMED: ours; REFUSED fenced: g0 */
	char version[KEEP_VERSION_MAX];	    /* COMMITTED, CLAIMED; REFUSED changed: the object's */
	int64_t previous;		    /* CLAIMED: the generation of the fence replaced (0: the
					       object was absent) */
	enum keep_grant grant;		    /* REFUSED grant-not-valid: owner-check's verdict */
	char owner[KEEP_OWNER_KEY_MAX + 1]; /* REFUSED other-key: the key the fence names */
	char detail[KEEP_DETAIL_MAX];	    /* a one-line reason (bad fence, store) or "" */
};
/* Reasons: fenced (exit 23, KEEP_EXIT_SUPERSEDED), grant-not-valid (1 or
 * the lease's code, as owner-check), not-fenced, other-key, bad-fence (17),
 * changed (1), store (1 refused by the store; 111 failed for now),
 * contention (111: conflicts in every round). UNKNOWN: the reason the
 * commit stopped (store, contention, grant-not-valid, changed), exit 111. */

/* What the machine asks for. */
enum keep_cact_kind {
	KEEP_CACT_NONE = 0, /* a reply is outstanding */
	KEEP_CACT_GRANT,    /* the grant check's facts now: reply.grant, reply.lease_code */
	KEEP_CACT_READ,	    /* GET object: reply.outcome/version/body/len/not_ours */
	KEEP_CACT_PUT,	    /* PUT object = body (len bytes), cond/if_match; the fence also as
			       user metadata (x-amz-meta-keep-owner, -generation) where the
			       store keeps it: reply.outcome/version */
	KEEP_CACT_WAIT,	    /* sleep until until_mono_ms, then next() */
	KEEP_CACT_DONE,	    /* finished: read sm->res */
};

/* "none", "grant", "read", "put", "wait", "done". */
const char *keep_cact_name(enum keep_cact_kind k);

struct keep_cact {
	enum keep_cact_kind kind;
	const char *key;    /* the owner key (borrowed from the machine) */
	int64_t generation; /* the fence written */
	const char *object; /* the store key (borrowed from the machine) */
	const void *body;   /* PUT: the fenced object (borrowed until the next call) */
	size_t len;
	enum keep_cond cond;		 /* PUT */
	char if_match[KEEP_VERSION_MAX]; /* PUT with KEEP_COND_IF_MATCH */
	int64_t until_mono_ms;		 /* WAIT */
	int64_t timeout_ms;		 /* READ, PUT: the request's bound (ms) */
};

/* The result of an action, filled by the driver (zero it first). */
struct keep_creply {
	/* GRANT: the hold and the lease state as read now (strings borrowed
	 * for the call; keep_grant_read in lib/local/holds.h fills them from the
	 * state directory), and the lease state's exit code (0 valid) */
	struct keep_grant_input grant;
	int lease_code;
	/* READ, PUT */
	enum keep_outcome outcome;
	char version[KEEP_VERSION_MAX]; /* OK: the object's version token */
	bool not_ours;	  /* READ OK: the store holds something no object of keep's can be
			     (over the object limit; on fs a foreign file): not fenced */
	const char *body; /* READ OK: the object's bytes (borrowed for the call) */
	size_t len;
	char detail[KEEP_DETAIL_MAX]; /* not OK: a one-line reason */
};

enum keep_commit_phase {
	KEEP_CP_GRANT = 0, /* step 1 */
	KEEP_CP_READ,	   /* step 2 (and 5) */
	KEEP_CP_GRANT2,	   /* step 3 */
	KEEP_CP_PUT,	   /* step 4 */
	KEEP_CP_WAIT,	   /* a backoff before the next read */
	KEEP_CP_DONE,
};

struct keep_commit_cfg {
	enum keep_commit_mode mode;
	const char *key;	/* the owner key (copied) */
	int64_t generation;	/* 1 .. 2^53 - 1 */
	const char *object;	/* the store key (copied; keep_fenced_object_allowed) */
	const void *data;	/* WRITE: the application's bytes (copied), len bytes */
	size_t len;		/* at most KEEP_FENCED_DATA_MAX */
	const char *if_version; /* WRITE: NULL, or the version the caller last committed */
	int64_t timeout_ms;	/* each store request's bound (ms, > 0) */
};

/* The machine. Fields are readable by drivers and tests; change them only
 * through the functions below. */
struct keep_commit {
	enum keep_commit_mode mode;
	char key[KEEP_OWNER_KEY_MAX + 1];
	int64_t generation;
	char *object; /* owned */
	int64_t timeout_ms;
	enum keep_commit_phase phase;
	bool inflight;

	struct keep_buf data;	       /* the application's bytes (a claim: those read) */
	char sha256[65];	       /* of data */
	struct keep_buf body;	       /* the fenced object to send */
	bool cas;		       /* an expected version was given (--if-version) */
	char expect[KEEP_VERSION_MAX]; /* cas: the version the object must be at */
	enum keep_cond cond;	       /* the next PUT's condition */
	char if_match[KEEP_VERSION_MAX];
	bool checking;	    /* the next read may find our own write (after a send) */
	bool maybe_landed;  /* a PUT ended ambiguous: it may land */
	int reads, puts;    /* so far */
	int fails;	    /* failed (ambiguous) requests in a row: the backoff */
	int64_t wait_until; /* KEEP_CP_WAIT: mono ms */
	int64_t previous;   /* a claim: the fence read (0: absent) */
	bool last_conflict; /* the last PUT was a conflict (contention when rounds run out) */
	enum keep_outcome last_fail; /* the last failed request's outcome */

	struct keep_commit_result res;
};

/* Start a commit or a claim (ADR 0020 §3 "Own"; issue 26) in *sm (the
 * caller's; release with keep_commit_release). cfg is borrowed; what it
 * points to is copied (data: len bytes).
 * 0; KEEP_ERR_INVAL for an invalid key, generation, object (a store key
 * keep_fenced_object_allowed refuses; the store's own key syntax is the
 * driver's to check first), data over KEEP_FENCED_DATA_MAX, an empty or
 * oversized if_version, or timeout_ms < 1; KEEP_ERR_NOMEM. On error the
 * machine holds nothing to release. */
int keep_commit_init(struct keep_commit *sm, const struct keep_commit_cfg *cfg);

/* Free what the machine owns (safe after a failed init only if it was
 * zeroed; always safe after a successful one). */
void keep_commit_release(struct keep_commit *sm);

/* What to do now (the order of the file comment). now_mono_ms: the driver's steady clock (ms; the
 * boot clock in the commands), for the backoff's WAIT. Called while a reply is outstanding: NONE.
 * act is overwritten; its pointers are borrowed from sm until the next call. */
void keep_commit_next(struct keep_commit *sm, int64_t now_mono_ms, struct keep_cact *act);

/* The reply to the action last handed out (r and what it points to are
 * borrowed for the call). now_mono_ms: steady clock (ms), for the backoff.
 * A reply with nothing outstanding is ignored. Never fails. */
void keep_commit_on_reply(struct keep_commit *sm, int64_t now_mono_ms, const struct keep_creply *r);

/* What the fence f found in OBJECT (decoded, borrowed) means for a write
 * by the holder of key (borrowed) at generation (step 2 of the file
 * comment; ADR 0020 §3 "Own", the R2 grant document: a stale grant never
 * commits). */
enum keep_commit_fence {
	KEEP_CF_OTHER_KEY = 0, /* another owner key's fence: refused other-key (17) */
	KEEP_CF_FENCED,	       /* a later generation's fence: refused fenced (23), definite
				  whatever was sent (every send was conditioned on a version
				  whose fence was at most generation, and it is gone) */
	KEEP_CF_SAME,	       /* generation's own fence: our write (keep_commit_own_write)
				  or a claim made; else written over If-Match its version */
	KEEP_CF_EARLIER,       /* an earlier holder's: written over If-Match its version */
};
/* Pure; no error. */
enum keep_commit_fence keep_commit_fence_judge(const struct keep_fence *f, const char *key,
					       int64_t generation);

/* Is the object read back after a conflict or a lost reply (step 5) our
 * own write: its fence f (borrowed) names generation and carries these
 * very bytes, len bytes of data whose lowercase hex SHA-256 is sha256
 * (borrowed, 64 hex digits)? Then the commit is done at the read's
 * version (issue 26: a lost reply read back by generation and digest).
 * The fence's key is judged first (keep_commit_fence_judge). Pure. */
bool keep_commit_own_write(const struct keep_fence *f, int64_t generation, size_t len,
			   const char *sha256);

#endif
