/* keep — holds, pending releases and unresolved acquires in the node's
 * state directory (ADR 0020 §3; docs/ownership.md "State directory").
 *
 * node_dir (state_dir/<node-id>) gains:
 *   holds/<H>                       one hold of key K ("keep-hold 1")
 *   pending/<H>.<gen>.<inst>.release  a pending release   ("keep-pending 1")
 *   pending/<H>.<gen>.<inst>.acquire  an unresolved acquire ("keep-pending 1")
 *   locks/<H>                       the per-actor lock (flock LOCK_EX)
 *   draining                        the instance being drained (owner-release --all)
 * where H is the lowercase hex SHA-256 of K (a key may be 386 bytes, more
 * than a file name allows; the files carry K itself). Every write is atomic
 * (keep_write_atomic); files are strict "key value" lines.
 *
 * Return values: 0 or a negative keep_err; KEEP_ERR_IO keeps errno. */
#ifndef KEEP_HOLDS_H
#define KEEP_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/owner.h"
#include "nodeobj.h"
#include "ownerrec.h"
#include "store/store.h"

/* A hold: this node acts as owner of key at generation while it exists,
 * its instance is the lease's, epoch equals the lease's lapses, and the
 * lease is valid (keep_owner_check). */
struct keep_hold {
	char key[KEEP_OWNER_KEY_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1]; /* the lease-write instance that acquired it */
	int64_t generation;		      /* >= 1 */
	char version[KEEP_VERSION_MAX];	      /* the acquire's version (the record's while held) */
	int64_t epoch;			      /* the lease's lapses at acquisition (>= 0) */
	int64_t acquired_at_ms;		      /* wall ms, informational */
};

enum keep_pending_kind {
	KEEP_PENDING_RELEASE = 0, /* write nobody If-Match version */
	KEEP_PENDING_ACQUIRE,	  /* an unresolved acquire: read, then decide */
};

struct keep_pending {
	enum keep_pending_kind kind;
	char key[KEEP_OWNER_KEY_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1];
	int64_t generation;		/* release: the hold's; acquire: the generation tried */
	char version[KEEP_VERSION_MAX]; /* release: If-Match; acquire: the write's condition
					   ("-" for If-None-Match) */
	int64_t at_ms;			/* wall ms when parked / tried */
};

/* Create holds/, pending/ and locks/ under node_dir (mode 0700). */
int keep_holds_init(const char *node_dir);

/* The file-name hash of key: 64 lowercase hex + NUL into out (>= 65 bytes). */
void keep_holds_key_hash(const char *key, char out[65]);

/* Take the per-actor lock of key: blocks until it is ours. *fd gets the
 * open descriptor (owned by the caller; release with keep_holds_unlock).
 * KEEP_ERR_IO on failure. */
int keep_holds_lock(const char *node_dir, const char *key, int *fd);
/* Release a lock taken by keep_holds_lock (fd closed; -1 is a no-op). */
void keep_holds_unlock(int fd);

/* Read the hold of key into *h: 0 found; 1 none; KEEP_ERR_PARSE/IO. */
int keep_hold_read(const char *node_dir, const char *key, struct keep_hold *h);
/* Register (replace) the hold h->key. */
int keep_hold_write(const char *node_dir, const struct keep_hold *h);
/* Remove the hold of key (absent is fine). */
int keep_hold_remove(const char *node_dir, const char *key);
/* Every hold: *out (owned by the caller, free()) gets *n entries, sorted by
 * key. Unreadable files are skipped with a count in *bad (may be NULL). */
int keep_holds_list(const char *node_dir, struct keep_hold **out, size_t *n, size_t *bad);

/* Write (replace) the pending entry p. */
int keep_pending_write(const char *node_dir, const struct keep_pending *p);
/* Remove the pending entry p (absent is fine). */
int keep_pending_remove(const char *node_dir, const struct keep_pending *p);
/* Every pending entry, as keep_holds_list (sorted by key, generation). */
int keep_pending_list(const char *node_dir, struct keep_pending **out, size_t *n, size_t *bad);

/* The drain mark: while node_dir/draining names instance, owner-acquire
 * refuses new acquisitions for that instance (§4: the stop releases every
 * hold; nothing new may start). set: 0 or KEEP_ERR_IO. draining: true when
 * the mark names instance. */
int keep_drain_mark(const char *node_dir, const char *instance);
bool keep_draining(const char *node_dir, const char *instance);

/* ---- helpers shared by the ownership commands (I/O; never in core) ---- */

struct keep_lease_state;

/* Read node_dir/lease into *st and judge it on this boot, at the boot
 * clock (lib/clock.h) read AFTER the file, or at now_ms if that is later
 * (a reading the caller took before is never trusted alone: whatever the
 * process waited on since, the answer is about now).
 * Returns the exit code a command should use when the lease is not valid
 * (exitcode.h: 0 valid; 14 ran out, including live past its validity;
 * 10..13, 16, 17 lost by reason; 15 starting, stopping, stopped, no lease
 * state, or a state whose clock this reader cannot compare). *st is
 * zeroed when there is no readable state. (ADR 0020 §1, §3 "Own".) */
int keep_holds_lease(const char *node_dir, int64_t now_ms, struct keep_lease_state *st);
/* The same; *why (may be NULL) gets a static one-line reason when the
 * state's deadlines cannot be compared here (keep_lease_state_incomparable:
 * an older lease-write's monotonic file, another boot), else NULL. */
int keep_holds_lease_why(const char *node_dir, int64_t now_ms, struct keep_lease_state *st,
			 const char **why);
/* The grant check of owner-check (ADR 0020 §3 "Own"; R2: a stale grant
 * never commits): may this node's hold of key at generation act now?
 * Reads the hold, then the lease state, then the boot clock, so the
 * answer is about the moment it returns. *g gets the verdict
 * (core/owner.h keep_owner_check); *why (may be NULL) as
 * keep_holds_lease_why. Returns owner-check's exit code: 0 the grant may
 * act; 1 no such hold (none, another generation or instance, a lapse
 * since); the lease's code (10..17) while the lease is not valid. */
int keep_grant_now(const char *node_dir, const char *key, int64_t generation, enum keep_grant *g,
		   const char **why);
/* The lease is valid now (keep_holds_lease) AND still the one *was
 * describes: same instance, same lapses (no lapse, step or restart
 * since). 0, the lease's code, or 14 when it lapsed since. *st gets the
 * state read now. */
int keep_holds_lease_same(const char *node_dir, const struct keep_lease_state *was,
			  struct keep_lease_state *st);
/* After an acquisition's write landed (its reply came): register the hold
 * h only if the lease is still the valid one *was described
 * (keep_holds_lease_same, read after the reply); otherwise the hold never
 * starts and a pending release of h (instance, generation, version) is
 * written instead, as a lapse does with every hold (docs/ownership.md).
 * *lease_code gets keep_holds_lease_same's code. Returns 0 registered; 1
 * not registered, parked as a pending release; or a negative keep_err
 * (the hold or pending file could not be written; errno kept). Call it
 * under the actor's lock. */
int keep_hold_register_checked(const char *node_dir, const struct keep_hold *h,
			       const struct keep_lease_state *was, int *lease_code);

/* GET owners/<key> and decode: *reply gets the outcome (local errors are
 * REFUSED with a detail); when OK, *rec the record and *decode_err 0, or
 * the decode error. Always 0. All pointers borrowed. */
int keep_owner_get(struct keep_store *s, const char *key, struct keep_owner_rec *rec,
		   int *decode_err, struct keep_reply *reply);

/* GET nodes/<node> and decode as keep_owner_get; an object naming another
 * node than its key is a decode error (KEEP_ERR_PARSE). Always 0. */
int keep_owner_get_node(struct keep_store *s, const char *node, struct keep_node_obj *obj,
			int *decode_err, struct keep_reply *reply);

/* PUT owners/<key> = encode(rec) with cond (If-Match if_match). Never a
 * DELETE (RGW ignores If-Match on DELETE). Outcome in *reply (a NOT_FOUND
 * reply to an If-Match write is reported as CONFLICT: the condition
 * failed). Always 0. */
int keep_owner_put(struct keep_store *s, const char *key, const struct keep_owner_rec *rec,
		   enum keep_cond cond, const char *if_match, struct keep_reply *reply);

/* Codecs of the two files (exposed for the unit tests). decode: 0,
 * KEEP_ERR_PARSE or KEEP_ERR_NOTOURS. */
int keep_hold_encode(const struct keep_hold *h, struct keep_buf *out);
int keep_hold_decode(const char *buf, size_t len, struct keep_hold *h);
int keep_pending_encode(const struct keep_pending *p, struct keep_buf *out);
int keep_pending_decode(const char *buf, size_t len, struct keep_pending *p);

#endif
