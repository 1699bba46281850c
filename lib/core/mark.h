/* keep — marking an actor for the upgrade, sans I/O: the first
 * acquisition's step over leases/KEY (ADR 0020 §6 "First acquisition";
 * docs/upgrade.md; issue 14 item 3, docs/ownership.md "What an operator may
 * delete").
 *
 * A machine in the shape of the others (ownio.h): keep_mark_next() asks for
 * MARK_READ (GET leases/KEY), KEYS_MAX (the highest generation in the
 * actor's wal/ and snapshot/ keys) and MARK_WRITE (the marker, conditional),
 * and ends DONE with res filled. Driven on its own by upgrade-mark
 * (lib/driver/upgrade.c keep_upgrade_mark_actor) and inside the acquisition
 * machine (acquire.c), which then creates the record at seed + 1 and
 * confirms the marker (keep_mark_confirm_obj).
 *
 * The marker's `created G` line (the confirmed marker) says the first record
 * was created at G: a missing record under a confirmed marker was deleted
 * out of band, and the acquisition refuses (reason record-missing) instead
 * of handing out a generation again. */
#ifndef KEEP_CORE_MARK_H
#define KEEP_CORE_MARK_H

#include <stdbool.h>
#include <stdint.h>

#include "ownio.h"
#include "timing.h"
#include "upgrade.h"

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
	enum keep_mark_verdict action;	/* MARKED: CREATE, REPLACE or EXISTING */
	int64_t seed;			/* MARKED: max(old generation or marker seed, keys) */
	int64_t keys_max;		/* MARKED: highest generation in the segment keys, 0 */
	int64_t created;		/* MARKED, EXISTING: the confirmed first generation, 0 */
	char version[KEEP_VERSION_MAX]; /* MARKED: the marker's version (to confirm it) */
	struct keep_lease_obj old;	/* HELD: the live old lease; REPLACE: the one replaced */
	int64_t live_until_ms;		/* HELD: expires_at + grace (wall ms, saturated) */
	bool refused; /* FAILED: the store refused a request (403, no such bucket: retrying
			 cannot help), not a timeout, 5xx or repeated conflicts */
	char detail[KEEP_DETAIL_MAX]; /* not MARKED: a one-line reason (object, key, store) */
};

enum keep_mark_phase { KEEP_MK_READ = 0, KEEP_MK_KEYS, KEEP_MK_WRITE, KEEP_MK_DONE };

struct keep_mark {
	struct keep_timing t;
	char key[KEEP_OWNER_KEY_MAX + 1];
	enum keep_mark_phase phase;
	int tries;
	enum keep_mark_verdict v;	     /* of the last read */
	struct keep_lease_obj o;	     /* the last read's object */
	char read_version[KEEP_VERSION_MAX]; /* the last read's version */
	struct keep_lease_obj marker;	     /* WRITE: the marker sent */
	struct keep_mark_result res;
};

/* The exit code a marking's result means (lib/base/exitcode.h,
 * docs/exit-codes.md; ADR 0020 §6 "First acquisition"): MARKED 0; HELD 1
 * (a live old lease: retry once it expires); BAD_OBJECT and BAD_KEY 17
 * (nothing written: an operator must look); FAILED 1 when the store
 * refused a request (res->refused: 403, no such bucket), else 111 (for
 * now). res is borrowed. Shared by upgrade-mark actors and the
 * acquisition machine's first acquisition (acquire.c). */
int keep_mark_result_exit_code(const struct keep_mark_result *res);

/* Start marking key (a valid actor key, copied) with timing t (copied). */
void keep_mark_init(struct keep_mark *m, const char *key, const struct keep_timing *t);

/* The next action (MARK_READ, KEYS_MAX, MARK_WRITE) or DONE. */
void keep_mark_next(struct keep_mark *m, struct keep_oact *act);

/* The reply to the last action; now_wall_ms judges an old lease (§6:
 * live while expires_at + grace has not passed on this clock). */
void keep_mark_on_reply(struct keep_mark *m, int64_t now_wall_ms, const struct keep_oreply *r);

/* The confirmed marker for a first record created at generation created:
 * fills *o (format 2, the seed kept). */
void keep_mark_confirm_obj(const struct keep_mark_result *res, int64_t created,
			   struct keep_lease_obj *o);

/* Was owners/KEY deleted by hand (issue 14 item 3; docs/ownership.md "What
 * an operator may delete")? The marking res (borrowed) found a confirmed
 * marker (MARKED with created > 0: the first record was created at
 * res->created) and the read of owners/KEY made after it answered again
 * NOT_FOUND. Then the record's generations are unknown and none may be
 * handed out again: the acquisition refuses (reason record-missing, 17)
 * instead of creating seed + 1. false for an unconfirmed marker (a first
 * acquisition stopped between its writes) and for any other outcome (the
 * record exists: decided on that read). Pure. */
bool keep_mark_record_deleted(const struct keep_mark_result *res, enum keep_outcome again);

#endif
