/* keep — ownership records, sans I/O (ADR 0020 §2, §3, §4; the R2 grant
 * document; docs/ownership.md).
 *
 * Pure decisions for the ownership commands (cmd/owner-*.c), which read the
 * clocks, the store and the state directory and feed the results here:
 *
 *   acquire    keep_owner_acq_on_record()  after the read of owners/KEY
 *              keep_owner_acq_on_node()    after the read of nodes/<holder>,
 *                                          issued AFTER the record read (§2)
 *   unknown    keep_owner_readback()       the one read-back after an acquire
 *                                          whose outcome is unknown (§3)
 *              keep_owner_readback_on_node()
 *   release    keep_owner_pending_on_read() a pending release after a failed
 *                                          retry: does the entry end? (§3)
 *   resolve    keep_owner_resolve_on_read() an unresolved acquire (§3)
 *   grant      keep_owner_check()          may this hold act now? (§3 "Own";
 *                                          R2: a stale grant never commits)
 *
 * Nothing here reads a clock, sleeps, or touches a file or the store.
 * *_wall_ms are the wall clock (ms since the epoch); *_mono_ms monotonic.
 * Every pointer argument is borrowed for the call; outputs are plain
 * values copied into caller-owned structs. */
#ifndef KEEP_CORE_OWNER_H
#define KEEP_CORE_OWNER_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"
#include "timing.h"

#define KEEP_PENDING_CONCURRENCY 32 /* pending entries at once (ADR §5 bounds) */
#define KEEP_PENDING_REFUSALS 32    /* refusals in a row before a pass stops (§5) */
#define KEEP_RELEASE_TRIES_MS 1000  /* a foreground release waits this long, then parks (§5) */
#define KEEP_BACKOFF_MIN_MS 200	    /* first retry of a pending entry */
#define KEEP_BACKOFF_MAX_MS 5000    /* retries of a pending entry back off up to this */

/* Who we are: this node's id and its lease-write process instance (both
 * borrowed strings). */
struct keep_owner_self {
	const char *node;
	const char *instance;
};

/* ---- acquire (§3) ----------------------------------------------------------- */

enum keep_acq_verdict {
	KEEP_ACQ_WRITE = 0,  /* write d->next with d->cond (If-Match d->if_match) */
	KEEP_ACQ_READ_NODE,  /* read nodes/<d->rec.node> now, then keep_owner_acq_on_node */
	KEEP_ACQ_SAME,	     /* our live hold at the record's generation: return it unchanged */
	KEEP_ACQ_HELD,	     /* held by d->rec's holder, not free: the routing answer */
	KEEP_ACQ_BAD_RECORD, /* the record is not ours or malformed: nothing written */
	KEEP_ACQ_FAILED,     /* a read failed: nothing written (retry later) */
};

/* "write", "read-node", "same", "held", "bad-record", "failed". */
const char *keep_acq_verdict_name(enum keep_acq_verdict v);

struct keep_acq_decision {
	enum keep_acq_verdict verdict;
	struct keep_owner_rec rec;	 /* the record read (valid unless absent/failed) */
	bool absent;			 /* the record did not exist */
	enum keep_cond cond;		 /* WRITE: KEEP_COND_IF_MATCH or KEEP_COND_IF_NONE_MATCH */
	char if_match[KEEP_VERSION_MAX]; /* WRITE with IF_MATCH: the record read's version */
	struct keep_owner_rec next;	 /* WRITE: held by self at the new generation */
	int64_t free_at_ms;		 /* HELD: when a fence/release frees it (wall ms); 0 */
	const char *reason;		 /* static: why (for lines and logs), or NULL */
};

/* Our hold of the key as registered in the state directory, as far as the
 * acquisition cares: present and live (its instance is the lease's, its
 * epoch is the lease's current lapses), at generation. */
struct keep_owner_hold_view {
	bool live;
	int64_t generation;
};

/* Decide on the read of owners/KEY:
 *   outcome/version: the GET's (version valid when OK);
 *   rec: the decoded record (NULL unless OK and decoded), decode_err its
 *        decode error (0, KEEP_ERR_NOTOURS, KEEP_ERR_PARSE, KEEP_ERR_TOOBIG);
 *   hold: our registered hold of this key (NULL: none);
 *   first_generation: the generation of a first record (>= 1). Issue 5
 *        (the upgrade, §6) seeds it from leases/; until then the driver
 *        passes 1. Only used when the record is absent.
 * Verdicts: absent -> WRITE If-None-Match at first_generation; nobody ->
 * WRITE If-Match at generation + 1; held by self (node and instance) with
 * hold->live at the record's generation -> SAME; held by self with no live
 * hold -> WRITE at generation + 1; held by anyone else (another node, or
 * this node under another instance) -> READ_NODE (the free rule needs a
 * read of nodes/<node> issued after this one). */
void keep_owner_acq_on_record(const struct keep_owner_self *self,
			      const struct keep_owner_hold_view *hold, enum keep_outcome outcome,
			      const char *version, const struct keep_owner_rec *rec, int decode_err,
			      int64_t first_generation, struct keep_acq_decision *d);

/* The generation an acquisition writes (ADR 0020 §3, §6; docs/ownership.md
 * "owner-acquire"): rec the record read (borrowed; NULL when it was
 * absent). A record naming nobody, a free holder (§2) or our own
 * instance is taken at rec->generation + 1 (keep_owner_acq_on_record and
 * keep_owner_acq_on_node decide which records those are); an absent one
 * at first_generation, the seed + 1 of §6 (1 on a native cluster; below
 * 1 counts as 1). No errors; a record at KEEP_OWNER_GEN_MAX is refused
 * before (bad-record). */
int64_t keep_owner_acq_generation(const struct keep_owner_rec *rec, int64_t first_generation);

/* After READ_NODE: the read of nodes/<d->rec.node> (issued after the record
 * read). outcome NOT_FOUND: absent; obj: the decoded object (NULL when
 * absent, failed or undecodable). Free (keep_node_free, §2) -> WRITE
 * If-Match d->if_match at generation + 1; LATER -> HELD with free_at_ms;
 * not free -> HELD; a failed read -> FAILED. d is updated in place. */
void keep_owner_acq_on_node(const struct keep_owner_self *self, enum keep_outcome outcome,
			    const struct keep_node_obj *obj, int64_t now_wall_ms,
			    const struct keep_timing *t, struct keep_acq_decision *d);

/* ---- the read-back of an unknown outcome (§3) -------------------------------- */

enum keep_rb_verdict {
	KEEP_RB_OURS = 0,   /* names self at the generation tried: hold it at the read's version */
	KEEP_RB_READ_NODE,  /* another holder: read nodes/<r->rec.node>, then _on_node */
	KEEP_RB_LOST,	    /* replaced by a holder that is not free: the race is lost */
	KEEP_RB_UNRESOLVED, /* anything else: keep an unresolved acquire, exit "unknown" */
};

/* "ours", "read-node", "lost", "unresolved". */
const char *keep_rb_verdict_name(enum keep_rb_verdict v);

struct keep_rb_decision {
	enum keep_rb_verdict verdict;
	struct keep_owner_rec rec;	/* the record read back (when it decoded) */
	char version[KEEP_VERSION_MAX]; /* OURS: the read's version (the hold's) */
	int64_t free_at_ms;		/* LOST by a fence/release not yet old enough; 0 */
};

/* The read-back after a write of a record naming self at gen_tried that
 * ended ambiguous or in a conflict (§3), still under the actor's lock:
 *   cond_version: the version the write was conditioned on (If-Match),
 *     "" (or NULL) for If-None-Match (the record was absent);
 *   outcome/version/rec/decode_err as for keep_owner_acq_on_record.
 * Names self at gen_tried -> OURS (hold it at the read's version).
 * Replaced since the read the write was conditioned on (present with a
 * version other than cond_version, or present after If-None-Match) and
 * held by another holder -> READ_NODE (the free rule on that holder
 * decides LOST). Everything else -> UNRESOLVED: above all the record
 * unchanged (the same version as cond_version, or still absent after
 * If-None-Match), whoever it names: the write may still be in flight and
 * land (issue 23 item 2; before, an unchanged record held by a holder not
 * free answered LOST, and a write that landed later named this live
 * instance with nothing here to release it); and a failed or undecodable
 * read, an absent record, nobody, self at another generation. */
void keep_owner_readback(const struct keep_owner_self *self, int64_t gen_tried,
			 const char *cond_version, enum keep_outcome outcome, const char *version,
			 const struct keep_owner_rec *rec, int decode_err,
			 struct keep_rb_decision *d);

/* Was the record read back after an acquire whose outcome is unknown
 * replaced since the read the write was conditioned on (ADR 0020 §3, issue
 * 23 item 2)? cond_version: the write's If-Match version, "" or NULL for
 * If-None-Match; version: the read-back's version of the present record
 * (borrowed strings). Replaced: any version after If-None-Match, another
 * version after If-Match. Only a replaced record can make the race lost
 * (keep_owner_readback, then the free rule on its holder); an unchanged
 * one stays unresolved, whoever it names: the write may still land. */
bool keep_owner_readback_replaced(const char *cond_version, const char *version);

/* After RB_READ_NODE (the record was replaced since the write's condition
 * and names another holder): the holder is free -> UNRESOLVED (we cannot
 * tell more); not free or free later -> LOST (that holder won the race: a
 * write conditioned on the replaced version can never land); a failed read
 * -> UNRESOLVED. */
void keep_owner_readback_on_node(const struct keep_owner_self *self, enum keep_outcome outcome,
				 const struct keep_node_obj *obj, int64_t now_wall_ms,
				 const struct keep_timing *t, struct keep_rb_decision *d);

/* ---- pending releases and unresolved acquires (§3) ---------------------------- */

enum keep_pend_verdict {
	KEEP_PEND_KEEP = 0, /* keep the entry; retry later (backoff) */
	KEEP_PEND_END,	    /* the entry ends: nothing to do */
	KEEP_PEND_RELEASE,  /* resolver: release If-Match the read's version (d->version) */
};

/* "keep", "end", "release". */
const char *keep_pend_verdict_name(enum keep_pend_verdict v);

struct keep_pend_decision {
	enum keep_pend_verdict verdict;
	char version[KEEP_VERSION_MAX]; /* RELEASE: the version to condition on */
	const char *reason;		/* static: why, or NULL */
};

/* A pending release (instance, generation g, acquire version v) whose write
 * did not land (conflict or not found): on a read of the record since,
 * does the entry end? It ends when the record no longer names instance at
 * g (absent, nobody, another holder, another generation); it is kept when
 * it still does (whatever its version: a retry never adopts a later
 * version) or when the read failed or did not decode. */
void keep_owner_pending_on_read(const char *instance, int64_t generation, enum keep_outcome outcome,
				const struct keep_owner_rec *rec, int decode_err,
				struct keep_pend_decision *d);

/* An unresolved acquire (instance, generation tried; cond_version: the
 * version the write was conditioned on, "" for If-None-Match), on a read of
 * the record made under the actor's lock (§3: "reads the record until it
 * can decide"; issue 14 item 2):
 *   has_hold: a hold of this key is registered here at the generation
 *     tried or a later one (resolver.c: an earlier one is not a hold for
 *     it);
 *   current: instance is the node lease's current instance;
 * a hold here -> END (a later acquisition holds it, maybe at this very
 * generation); names instance at the generation tried -> RELEASE If-Match
 * the read's version; unchanged since the write's condition (same version,
 * or still absent after If-None-Match) -> KEEP while current (the write may
 * still be in flight and land, however late), END once the instance is an
 * earlier one (a record naming it is free by §2 whenever it lands);
 * anything else -> END; a failed or undecodable read -> KEEP. */
void keep_owner_resolve_on_read(const char *instance, int64_t gen_tried, const char *cond_version,
				bool current, bool has_hold, enum keep_outcome outcome,
				const char *version, const struct keep_owner_rec *rec,
				int decode_err, struct keep_pend_decision *d);

/* The backoff before retry number attempts (>= 1) of a pending entry (ms):
 * KEEP_BACKOFF_MIN_MS doubling, at most KEEP_BACKOFF_MAX_MS. */
int64_t keep_owner_backoff_ms(int attempts);

/* ---- the grant check (§3 "Own") ------------------------------------------------ */

enum keep_grant {
	KEEP_GRANT_OK = 0,	 /* this hold may act now */
	KEEP_GRANT_NO_HOLD,	 /* no hold of the key here */
	KEEP_GRANT_OTHER_GEN,	 /* a hold at another generation: a stale grant */
	KEEP_GRANT_OLD_INSTANCE, /* the hold belongs to an earlier process instance */
	KEEP_GRANT_LAPSED,	 /* the lease lapsed since the hold was acquired */
	KEEP_GRANT_RELEASING,	 /* a release of this hold is pending: it ended (issue 18) */
	KEEP_GRANT_NOT_VALID,	 /* the node lease is not valid now */
};

/* "ok", "no-hold", "other-generation", "old-instance", "lapsed", "releasing",
 * "not-valid". */
const char *keep_grant_name(enum keep_grant g);

/* The hold as registered and the lease as its state file says. */
struct keep_grant_input {
	bool have_hold;
	const char *hold_instance; /* borrowed */
	int64_t hold_generation;
	int64_t hold_epoch;	    /* the lease's lapses when the hold was acquired */
	const char *lease_instance; /* borrowed; "" when there is no lease state */
	bool lease_valid;	    /* the lease state says valid now */
	int64_t lease_lapses;	    /* the lease's current epoch */
	bool release_pending;	    /* a pending release names the hold (key, instance,
				       generation): pending/<H>.<gen>.<instance>.release */
};

/* May the hold of a key at generation act now? OK only when a hold exists
 * at exactly generation, of the lease's current instance, acquired in the
 * current lease epoch (no lapse since), no pending release names it (a
 * hold and its pending release never coexist as a live hold: issue 18,
 * docs/ownership.md "The invariant"), and the lease is valid now. The
 * first failing test, in the order of enum keep_grant, is returned. */
enum keep_grant keep_owner_check(const struct keep_grant_input *in, int64_t generation);

/* The exit code of a grant check's verdict g (ADR 0020 §3 "Own";
 * owner-check's, the one rule of keep_grant_now and the fenced commit):
 * 0 for OK; the lease's own code
 * lease_code (10..17, exitcode.h) when the hold lapsed or the lease is not
 * valid while the lease state gives a code; else 1 (no such hold: none,
 * another generation or instance, a lapse since, its release pending). */
int keep_owner_check_code(enum keep_grant g, int lease_code);

/* When a grant that holds now may end without any file of the state
 * directory changing (owner-run's re-check, ms on the boot clock): the
 * first instant past the lease's validity deadline, valid_until_ms + 1
 * (the lease is valid before, not at, its end); 0 (no such moment) when
 * the lease state has no deadline (valid_until_ms <= 0). Every other end
 * of a grant (a lapse, a release, another generation) changes a file. */
int64_t keep_owner_grant_recheck_ms(int64_t valid_until_ms);

/* Did the node lease lapse since a hold was acquired (ADR 0020 §1: a lapse
 * drops every hold; the hold's epoch is the lease's lapses when it was
 * acquired, lease_lapses the lease's count now)? true: the hold is over,
 * whatever else holds (keep_owner_check answers LAPSED; the acquisition
 * and the resolver park it). No errors. */
bool keep_owner_hold_lapsed(int64_t hold_epoch, int64_t lease_lapses);

/* Is a registered hold stale: of another instance than the lease's, or
 * acquired in an earlier lease epoch (a lapse since: §1 "drops every hold
 * into the pending releases")? */
bool keep_owner_hold_stale(const char *hold_instance, int64_t hold_epoch,
			   const char *lease_instance, int64_t lease_lapses);

/* What a deletion of a key by hand breaks (issue 23 item 6;
 * docs/operations.md "Deleting objects by hand"): */
enum keep_hand_delete {
	KEEP_HAND_DELETE_OK = 0, /* nothing of the protocol */
	KEEP_HAND_DELETE_NODE,	 /* nodes/<id>: a node lease (frees nothing, §2) */
	KEEP_HAND_DELETE_RECORD, /* owners/KEY or apps/ROOT/owners/KEY (ADR 0022):
				    an ownership record (two owners, §3) */
};

/* Judge a raw key (as the bucket names it, NUL-terminated, borrowed) a
 * hand deletion would remove. An application root's records count only
 * under a valid root (keep_app_root_valid); `nodes/` is shared by every
 * root, so apps/ROOT/nodes/ is no node lease. */
enum keep_hand_delete keep_hand_delete_judge(const char *key);

#endif
