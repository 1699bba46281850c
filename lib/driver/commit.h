/* keep — the fenced commit on a node: the machine of lib/core/commit.h
 * run against a store and the grant check's facts (process glue; issue
 * 26; docs/ownership.md "owner-commit", docs/formats.md "Fenced objects").
 *
 * The calls for runtimes and commands (owner-commit is their driver):
 *
 *   keep_commit_fenced   write an application's bytes under the fence of a
 *                        grant (KEY, GENERATION): refused once a later
 *                        generation's fence is on the object
 *   keep_claim_fenced    a new holder writes its fence over the bytes
 *                        there, cutting every straggler of an older
 *                        generation off before it reads the state
 *   keep_fenced_get      read a fenced object: its fence and its bytes
 *
 * A holder follows the order acquire, claim, read, work, commit
 * (docs/ownership.md). These calls block (each store request is bounded
 * by the store's timeout) and never print; they read the boot clock and,
 * for the grant check, the node's state directory. Thread-safe as far as
 * the store handle is used by one thread at a time. */
#ifndef KEEP_COMMIT_H
#define KEEP_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../codec/fenced.h"
#include "../core/commit.h"
#include "../local/holds.h"
#include "../store/store.h"

/* The user metadata a fenced object carries where the store keeps it
 * (S3: x-amz-meta-keep-owner, x-amz-meta-keep-generation): a copy of the
 * fence for people and tools; never decided on. */
#define KEEP_META_OWNER "keep-owner"
#define KEEP_META_GENERATION "keep-generation"

/* The grant check's facts for key, now (ADR 0020 §3 "Own"): fill *f as
 * keep_grant_read does (holds.h), its strings pointing into *f, and return
 * the lease's exit code (0 valid). For a runtime that keeps its grants
 * elsewhere than a node's state directory. arg is the caller's. */
typedef int (*keep_commit_grant_fn)(void *arg, const char *key, struct keep_grant_facts *f);

struct keep_commit_opts {
	/* where the grant check reads: the node's state directory
	 * (state_dir/<node-id>, keep_grant_read), or grant(grant_arg, ...)
	 * when grant is set (node_dir is then not used) */
	const char *node_dir;
	keep_commit_grant_fn grant;
	void *grant_arg;
	/* keep_commit_fenced: NULL, or the version the caller last committed
	 * (a compare-and-swap: one PUT If-Match it; refused `changed` when the
	 * object moved on). Only a version this holder's own commit or claim
	 * answered may be given: its fence is then at most GENERATION, which
	 * is what makes writing over it safe without reading it first. */
	const char *if_version;
	int64_t timeout_ms; /* each store request's bound (ms); <= 0: 10000 */
};

/* Commit len bytes at data (at most KEEP_FENCED_DATA_MAX; borrowed) to the
 * store key object, fenced by (key, generation), on store (borrowed; one
 * thread at a time): ADR 0020 §3 "Own" and the R2 grant document (a stale
 * grant never commits), enforced by the store's condition (issue 26). Runs the machine of
 * lib/core/commit.h to its end: *res is its answer (kind, exit code, reason, version). Returns 0
 * (*res filled), or KEEP_ERR_INVAL for an invalid key, generation, object (the store's key syntax,
 * or under keep's own names: keep_fenced_object_allowed), data over the limit or a bad if_version,
 * KEEP_ERR_NOMEM: then nothing was sent and *res is an ERROR with exit 100 (111 for NOMEM). */
int keep_commit_fenced(struct keep_store *store, const char *key, int64_t generation,
		       const char *object, const void *data, size_t len,
		       const struct keep_commit_opts *o, struct keep_commit_result *res);

/* Claim object for (key, generation): write this fence over the bytes
 * there (an absent object is created with no bytes), unless the object
 * already carries it (claimed, nothing written). Same contract as
 * keep_commit_fenced (o->if_version is not used). */
int keep_claim_fenced(struct keep_store *store, const char *key, int64_t generation,
		      const char *object, const struct keep_commit_opts *o,
		      struct keep_commit_result *res);

/* What one read of a fenced object found. */
struct keep_fenced_read {
	struct keep_reply reply;   /* the GET's: OK (version), NOT_FOUND, ...; an object no object
				      of keep's can be reads as OK with not_ours set */
	bool ok;		   /* decoded: fence and data valid */
	int derr;		   /* OK but not decoded: KEEP_ERR_NOTOURS, _PARSE, _TOOBIG */
	char why[KEEP_DETAIL_MAX]; /* !ok: one line (the decode error, or "OUTCOME: detail") */
	struct keep_fence fence;   /* ok: the fence; the data is fence.size bytes at
				      body->data + fence.data_off */
	struct keep_meta meta;	   /* the object's user metadata (none on fs) */
};

/* GET object from store into body (caller's, initialised; at least
 * KEEP_FENCED_OBJECT_MAX bytes of max) and decode it into *fr. Returns 0
 * when a request was made (*fr filled, fr->ok tells), or KEEP_ERR_INVAL for
 * an invalid object key (nothing sent). Never prints. */
int keep_fenced_get(struct keep_store *store, const char *object, struct keep_buf *body,
		    struct keep_fenced_read *fr);

#endif
