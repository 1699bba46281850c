/* keep — the acquisition of one ownership record, a sans-I/O machine (ADR
 * 0020 §2, §3, §6; issue 14, issue 18; docs/ownership.md "owner-acquire").
 *
 * The same shape as the node lease machine (lease.h): a driver
 * (cmd/owner-acquire.c, sim/) loops
 *
 *   keep_acquire_next(sm, now_mono, now_wall, &act)   what to do now
 *   perform act (ownio.h: lock, lease state, hold, pending entry, record,
 *                nodes/<id>, leases/ marker, segment keys)
 *   keep_acquire_on_reply(sm, now_mono, now_wall, &reply)
 *
 * until act.kind is DONE, then reads sm->res (the answer line and the exit
 * code) and sm->msg[] (warnings for stderr). Every decision and its order
 * is here; the decisions on one reply are owner.c's and mark.c's.
 *
 * The order, under the per-actor lock from the first read until the hold
 * is registered or the failure recorded (§3 "One lock per actor"):
 *   1. the lease state: valid (else refused with its code); not draining;
 *   2. this key's hold: unreadable or of another instance -> removed; of an
 *      earlier lease epoch (a lapse since) -> parked: its pending release
 *      written, then the hold removed; live -> regranted only while no
 *      pending release of its generation exists (issue 18);
 *   3. owners/KEY, then nodes/<holder> when the free rule needs it (a read
 *      issued after the record read, §2); an absent record goes through
 *      the cluster object first (cluster.h: read once a process by the
 *      driver): on a native cluster the record is created at generation 1
 *      with no marker (2 requests for a new actor); otherwise through
 *      the marker (§6, mark.h): a confirmed marker means the record was
 *      created: read again, still absent it was deleted out of band and the
 *      acquisition refuses (record-missing, issue 14 item 3); an
 *      unconfirmed one seeds the record at seed + 1;
 *   4. the lease state again right before the write: still valid, same
 *      instance, same epoch;
 *   5. the write; an unknown outcome (ambiguous, or a conflict) is read back
 *      once: ours -> held; replaced by a holder not free -> held elsewhere;
 *      anything else -> an unresolved acquire (exit 20);
 *   6. a first record: the marker is confirmed (created G) before the hold
 *      is registered; unconfirmed, the record is released instead;
 *   7. the lease state once more, after the write's reply (issue 13: an
 *      answer is about the moment it is given): still valid, same
 *      instance, same epoch; otherwise the hold never starts, the record
 *      written goes to the pending releases and the answer is refused
 *      reason=lease-lapsed with the lease's exit code (14 when it is valid
 *      again but lapsed since);
 *   8. the hold is registered: renamed into place (durable or not) it is
 *      held; not written, its release is parked (exit 111).
 * A regrant (our live hold at the record's generation: new=no) is judged
 * the same way after the record read (refused reason=lease-not-valid). */
#ifndef KEEP_CORE_ACQUIRE_H
#define KEEP_CORE_ACQUIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "mark.h"
#include "owner.h"
#include "ownio.h"
#include "timing.h"

enum keep_acq_result_kind {
	KEEP_AR_ACQUIRED = 0, /* acquired key=K generation=G version=V new=yes|no */
	KEEP_AR_HELD,	      /* held key=K node=N instance=I generation=G [free_at_ms=T] */
	KEEP_AR_UNKNOWN,      /* unknown key=K generation=G: kept for the resolver */
	KEEP_AR_REFUSED,      /* refused key=K reason=..: nothing written */
	KEEP_AR_ERROR,	      /* error key=K reason=..: see the exit code */
};

/* "acquired", "held", "unknown", "refused", "error" (the line's type). */
const char *keep_acq_result_name(enum keep_acq_result_kind k);

struct keep_acquire_result {
	enum keep_acq_result_kind kind;
	int exit_code;			/* exitcode.h */
	int64_t generation;		/* ACQUIRED, UNKNOWN */
	char version[KEEP_VERSION_MAX]; /* ACQUIRED */
	bool fresh;			/* ACQUIRED: a new hold (new=yes), or the same grant */
	struct keep_owner_rec holder;	/* HELD (instance "-" for a live old lease, §6) */
	int64_t free_at_ms;		/* HELD: when a fence or release frees it (wall ms), 0 */
	const char *reason;		/* REFUSED, ERROR (static): lease-not-valid, lease-lapsed,
					   draining, state-dir, store, bad-record, bad-lease, record-missing */
};

#define KEEP_ACQ_MSGS 4	     /* warnings kept per acquisition */
#define KEEP_ACQ_MSG_MAX 512 /* bytes per warning */

enum keep_acq_phase {
	KEEP_AP_LOCK = 0,
	KEEP_AP_LEASE,
	KEEP_AP_HOLD,
	KEEP_AP_HOLD_DROP,
	KEEP_AP_PARK_PEND,
	KEEP_AP_PARK_HOLD,
	KEEP_AP_REGRANT,
	KEEP_AP_REC,
	KEEP_AP_CLUSTER, /* no record: is the cluster native (cluster.h)? */
	KEEP_AP_MARK,
	KEEP_AP_RECHECK, /* the marker is confirmed: owners/KEY read again */
	KEEP_AP_NODE,
	KEEP_AP_DROP_STALE,
	KEEP_AP_LEASE2,
	KEEP_AP_LEASE_SAME, /* a regrant: the lease after the record read */
	KEEP_AP_WRITE,
	KEEP_AP_RB,
	KEEP_AP_RB_NODE,
	KEEP_AP_CONFIRM,
	KEEP_AP_LEASE_REG, /* the lease after the write's reply, before registering */
	KEEP_AP_REGISTER,
	KEEP_AP_REG_PARK,
	KEEP_AP_UNRESOLVED,
	KEEP_AP_UNLOCK,
	KEEP_AP_DONE,
};

/* The machine. Fields are readable by drivers and tests; change them only
 * through the functions below. */
struct keep_acquire {
	struct keep_timing t;
	int64_t timeout_ms; /* each store request's bound (ms) */
	char node[KEEP_NODE_ID_MAX + 1];
	char key[KEEP_OWNER_KEY_MAX + 1];
	enum keep_acq_phase phase;
	bool inflight;

	struct keep_lease_view lease; /* as read at step 1 */
	struct keep_hold hold;	      /* this key's hold as read (step 2) */
	struct keep_owner_hold_view hv;
	struct keep_acq_decision d;
	struct keep_rb_decision rb;
	struct keep_mark mark;
	bool first;			       /* the record was absent: confirm the marker */
	int64_t first_gen;		       /* seed + 1 */
	int64_t gen;			       /* the generation written */
	char version[KEEP_VERSION_MAX];	       /* the write's (or read-back's) version */
	struct keep_acquire_result after_drop; /* DROP_STALE: the answer after it */
	bool answer_after_drop;		       /* ... when set (else go on by sm->d) */
	char detail[KEEP_DETAIL_MAX];	       /* the last reply's detail (messages) */
	int lapsed_code; /* LEASE_REG found the lease not valid: its exit code (else 0) */
	enum keep_outcome read_outcome; /* the last record or node read's outcome */

	struct keep_acquire_result res;
	char msg[KEEP_ACQ_MSGS][KEEP_ACQ_MSG_MAX];
	int nmsg;
};

/* Start the acquisition of key (a valid actor key) by node, with timing t
 * and timeout_ms (> 0) per store request. Strings and t are copied. */
void keep_acquire_init(struct keep_acquire *sm, const char *node, const char *key,
		       const struct keep_timing *t, int64_t timeout_ms);

/* Acquire only while the node lease is valid (ADR 0020 §3 "only while this
 * node's lease is valid, checked right before the record write"; issue 13:
 * an answer is about the moment it is given): the exit code that refuses
 * the acquisition on the lease state now (borrowed), or KEEP_EXIT_OK (0)
 * when it may go on. begun NULL: the first look, under the lock (step 1):
 * refused unless valid with an instance (the lease's own code, else
 * KEEP_EXIT_NOT_LIVE). begun (borrowed) the lease as step 1 saw it: a
 * later look (right before the write, after a regrant's record read, when
 * the write's reply came): refused with the lease's code while it is not
 * valid, and with KEEP_EXIT_RAN_OUT when it is valid again but under
 * another instance or after a lapse (keep_owner_hold_lapsed). The drain
 * mark is judged apart (reason=draining). */
int keep_acquire_lease_refusal(const struct keep_lease_view *begun,
			       const struct keep_lease_view *now);

/* What to do now (see the file comment). now_wall_ms stamps a registered
 * hold (informational). Calling it again while a reply is outstanding
 * answers NONE. */
void keep_acquire_next(struct keep_acquire *sm, int64_t now_mono_ms, int64_t now_wall_ms,
		       struct keep_oact *act);

/* The reply to the action last handed out. now_wall_ms is this node's wall
 * clock when the reply arrived: the free rule (§2) and an old lease (§6)
 * are judged on it. r is borrowed. */
void keep_acquire_on_reply(struct keep_acquire *sm, int64_t now_mono_ms, int64_t now_wall_ms,
			   const struct keep_oreply *r);

#endif
