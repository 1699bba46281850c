/* keep — holds, pending releases and unresolved acquires in the node's
 * state directory (ADR 0020 §3; docs/ownership.md "State directory").
 *
 * node_dir (state_dir/<node-id>) gains:
 *   holds/<H>                       one hold of key K ("keep-hold 1")
 *   pending/<H>.<gen>.<inst>.release  a pending release   ("keep-pending 1")
 *   pending/<H>.<gen>.<inst>.acquire  an unresolved acquire ("keep-pending 1")
 *   locks/<H>                       the per-actor lock (flock LOCK_EX)
 *   draining                        the instance being drained (owner-release --all)
 *   runs/<H>                        owner-run's run lock of K (lib/local/runlock.h)
 * where H is the lowercase hex SHA-256 of K (a key may be 386 bytes, more
 * than a file name allows; the files carry K itself). Every write is atomic
 * (keep_write_atomic_sd); files are strict "key value" lines.
 *
 * Return values: 0 or a negative keep_err; KEEP_ERR_IO keeps errno. Writes
 * and removals say how far they got (enum keep_sd, errno kept when not
 * DURABLE): "renamed but maybe not durable" is never "not written". */
#ifndef KEEP_HOLDS_H
#define KEEP_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"
#include "../core/owner.h"
#include "../core/ownio.h"

/* struct keep_hold, struct keep_pending and enum keep_sd are the ownership
 * machines' vocabulary (core/ownio.h). */

/* The application root this process serves (ADR 0022; docs/ownership.md
 * "Several applications on one cluster"): root's holds, pending entries,
 * locks and run locks live in holds/apps/ROOT/, pending/apps/ROOT/,
 * locks/apps/ROOT/ and runs/apps/ROOT/ of the node's directory; the lease
 * state, the draining mark and the fence record stay node_dir's own (one
 * lease, every root). root NULL or "" is the default root (the
 * directories themselves, today's layout). Process-wide: a command serves
 * one root (one --app), set once before any other call of this file or of
 * lib/local/runlock.h. 0; KEEP_ERR_INVAL (a '/' in root, "." or ".."; validate
 * with keep_app_root_valid first); KEEP_ERR_TOOBIG. */
int keep_holds_set_app(const char *root);
/* "/apps/ROOT" for the root set by keep_holds_set_app, "" for the default
 * root (static storage). */
const char *keep_holds_app_sub(void);

/* Create holds/, pending/ and locks/ under node_dir (mode 0700), each
 * with the application root's subdirectory (keep_holds_set_app). */
int keep_holds_init(const char *node_dir);

/* The file-name hash of key: 64 lowercase hex + NUL into out (>= 65 bytes). */
void keep_holds_key_hash(const char *key, char out[65]);

/* Take the per-actor lock of key: blocks until it is ours. *fd gets the
 * open descriptor (owned by the caller; release with keep_holds_unlock).
 * KEEP_ERR_IO on failure. */
int keep_holds_lock(const char *node_dir, const char *key, int *fd);
/* The same, waiting at most wait_ms (ms, boot clock; polled every 5 ms;
 * <= 0: blocks as keep_holds_lock). 0 taken (*fd as above); 1 still held
 * by another process when the wait ended (errno ETIMEDOUT, nothing kept
 * open); KEEP_ERR_IO/TOOBIG. The resolver bounds its lock waits by its
 * deadline with it (issue 23 item 3). */
int keep_holds_lock_ms(const char *node_dir, const char *key, int64_t wait_ms, int *fd);
/* Release a lock taken by keep_holds_lock (fd closed; -1 is a no-op). */
void keep_holds_unlock(int fd);

/* The run lock of key (owner-run's job): lib/local/runlock.h. */

/* Read the hold of key into *h: 0 found; 1 none; KEEP_ERR_PARSE/IO. */
int keep_hold_read(const char *node_dir, const char *key, struct keep_hold *h);
/* Register (replace) the hold h->key (an invalid hold is UNCHANGED, errno
 * EINVAL). */
enum keep_sd keep_hold_write(const char *node_dir, const struct keep_hold *h);
/* Remove the hold of key (absent is fine), fsync holds/. */
enum keep_sd keep_hold_remove(const char *node_dir, const char *key);
/* fsync holds/: DURABLE or UNCHANGED. A read of holds/<H> that found no
 * hold, followed by this, proves the hold's absence is durable. */
enum keep_sd keep_holds_sync(const char *node_dir);
/* Every hold: *out (owned by the caller, free()) gets *n entries, sorted by
 * key. Unreadable files are skipped with a count in *bad (may be NULL). */
int keep_holds_list(const char *node_dir, struct keep_hold **out, size_t *n, size_t *bad);

/* Write (replace) the pending entry p. */
enum keep_sd keep_pending_write(const char *node_dir, const struct keep_pending *p);
/* Remove the pending entry p (absent is fine), fsync pending/. */
enum keep_sd keep_pending_remove(const char *node_dir, const struct keep_pending *p);
/* Does the pending entry p (its kind, key, generation, instance) exist?
 * 1 yes, 0 no, KEEP_ERR_IO when it cannot be told (errno kept). */
int keep_pending_exists(const char *node_dir, const struct keep_pending *p);
/* Read the pending entry named like p (its kind, key, generation,
 * instance) into *out: 0 found; 1 none; KEEP_ERR_PARSE (unreadable, or not
 * the entry its name says) or KEEP_ERR_IO. */
int keep_pending_read(const char *node_dir, const struct keep_pending *p, struct keep_pending *out);
/* Every pending entry, as keep_holds_list (sorted by key, generation). */
int keep_pending_list(const char *node_dir, struct keep_pending **out, size_t *n, size_t *bad);

/* The drain mark: while node_dir/draining names instance, owner-acquire
 * refuses new acquisitions for that instance (§4: the stop releases every
 * hold; nothing new may start). draining: true when the mark names
 * instance. */
enum keep_sd keep_drain_mark(const char *node_dir, const char *instance);
bool keep_draining(const char *node_dir, const char *instance);

/* ---- helpers shared by the ownership commands (I/O; never in core) ---- */

struct keep_lease_state;

/* Read node_dir/lease into *st and judge it on this boot, at the boot
 * clock (lib/platform/clock.h) read AFTER the file, or at now_ms if that is later
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
 * Reads the hold, whether a pending release names it (issue 18: a hold
 * whose release is pending ended; unsure counts as pending), then the
 * lease state, then the boot clock, so the answer is about the moment it
 * returns. *g gets the verdict (core/owner.h keep_owner_check); *why (may
 * be NULL) as keep_holds_lease_why. Returns owner-check's exit code: 0 the
 * grant may act; 1 no such hold (none, another generation or instance, a
 * lapse since, its release pending); the lease's code (10..17) while the
 * lease is not valid. Never touches the store. */
int keep_grant_now(const char *node_dir, const char *key, int64_t generation, enum keep_grant *g,
		   const char **why);

/* What keep_grant_now reads, for a caller whose decision is a machine's
 * (the fenced commit, lib/core/commit.h): the hold of key, whether a
 * pending release names it, then the lease state judged on the boot clock
 * read after its file, into *f (zeroed first; f->in's strings point into
 * f itself: valid while *f is). Returns the lease state's exit code (also
 * in f->lease_code; 0 valid); *why as keep_holds_lease_why. Never touches
 * the store. (ADR 0020 §3 "Own".) */
struct keep_grant_facts {
	struct keep_grant_input in; /* keep_owner_check's input */
	int lease_code;		    /* the lease state's exit code (0: valid now) */
	struct keep_hold hold;	    /* the hold read (zero when none) */
	char lease_instance[KEEP_INSTANCE_LEN + 1];
};
int keep_grant_read(const char *node_dir, const char *key, struct keep_grant_facts *f,
		    const char **why);

/* The wall clock (ms) this node judges ANOTHER node's freedom with (a
 * peer's written_at + ttl + grace, a fence's free_at, a record's holder,
 * a peer's staleness): this node's wall clock less the judging offset
 * lease-write records in node_dir/lease after a wall-clock step, less any
 * forward step it has not noticed yet (keep_lease_state_judge_wall).
 * node_dir NULL or "" (no node id), or no readable state: the wall clock
 * itself. Reads the file, then the clocks. Never fails. (ADR 0020 §1, §2;
 * docs/lease.md "Judging others after a step".) */
int64_t keep_judge_wall_ms(const char *node_dir);
/* The same for the node cfg names (its node_id under its state_dir; no
 * node id: the wall clock itself). */
struct keep_config;
int64_t keep_judge_wall_cfg(const struct keep_config *cfg);

/* Both wall clocks of one decision from ONE reading of the clocks (ms;
 * core/timing.h struct keep_walls): w->wall_ms the wall clock, what every
 * date this node writes into the bucket is at least (issue 23),
 * w->judge_wall_ms what keep_judge_wall_ms would answer for that same
 * reading (other nodes are judged with it). node_dir as for
 * keep_judge_wall_ms; the _cfg form as keep_judge_wall_cfg. Reads the
 * state file, then the clocks. Never fails. */
void keep_walls_now(const char *node_dir, struct keep_walls *w);
void keep_walls_cfg(const struct keep_config *cfg, struct keep_walls *w);

/* Codecs of the two files (exposed for the unit tests). decode: 0,
 * KEEP_ERR_PARSE or KEEP_ERR_NOTOURS. */
int keep_hold_encode(const struct keep_hold *h, struct keep_buf *out);
int keep_hold_decode(const char *buf, size_t len, struct keep_hold *h);
int keep_pending_encode(const struct keep_pending *p, struct keep_buf *out);
int keep_pending_decode(const char *buf, size_t len, struct keep_pending *p);

#endif
