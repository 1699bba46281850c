/* keep — the words every layer shares: the outcome of a store request, the
 * condition of a write, and the sizes of a version token and a reply's
 * detail (docs/design.md "Layers").
 *
 * A leaf: it includes nothing of keep's, so lib/core (sans I/O) and the
 * codecs use these words without the store layer (lib/store/store.h
 * includes this file for its own interface). Built into libkeep-core.a. */
#ifndef KEEP_VOCAB_H
#define KEEP_VOCAB_H

#include <stdbool.h>

#define KEEP_VERSION_MAX 160 /* bytes, NUL included: an opaque version token */
#define KEEP_DETAIL_MAX 256  /* bytes, NUL included: a reply's diagnostic */

/* The result of a store request, classified because the protocol depends
 * on it (ADR 0020 §1, §3). */
enum keep_outcome {
	KEEP_STORE_OK = 0,    /* done; version token returned (200, 204) */
	KEEP_STORE_CONFLICT,  /* the condition failed; nothing written by THIS request (412, 409) */
	KEEP_STORE_NOT_FOUND, /* no such object (404) */
	KEEP_STORE_REFUSED,   /* definite error, nothing written (400, 403, bucket missing) */
	KEEP_STORE_AMBIGUOUS, /* may or may not have landed (timeout, reset, 5xx, lost reply) */
};

/* The stable lowercase name of an outcome: ok, conflict, not-found,
 * refused, ambiguous. Never NULL. */
const char *keep_outcome_name(enum keep_outcome o);

/* The exit code for a store request's outcome: THE table (docs/exit-codes.md,
 * lib/base/exitcode.h). OK 0; REFUSED 17 when not_ours (an object keep cannot
 * hold), else 1 (a definite answer: 403, no such bucket, 4xx; retrying
 * cannot help); CONFLICT and NOT_FOUND 1; AMBIGUOUS 111 (timeout, 5xx,
 * lost reply: retry). A caller for which CONFLICT or NOT_FOUND means
 * something else decides those itself. keep_exit_of_reply (storecmd.h) is
 * this on a reply; the ownership machines (lib/core) use it directly. */
int keep_exit_of_outcome(enum keep_outcome o, bool not_ours);

/* How bad an exit code is, for "the worst of many answers" (a stdin
 * batch, `--once` over many objects, `forget --stale`;
 * docs/exit-codes.md): 0 ok < 1 no < 20 unknown < 111 temporary < the
 * lease's codes (10-16) < 17 bad object < 100 usage. */
int keep_exit_rank(int code);

/* *worst = rc when rc ranks worse (keep_exit_rank). */
void keep_exit_worst(int *worst, int rc);

/* The condition of a write. */
enum keep_cond {
	KEEP_COND_NONE =
	    0, /* unconditional PUT: never used by the protocol; tools and tests only */
	KEEP_COND_IF_NONE_MATCH, /* create only if absent (If-None-Match: *) */
	KEEP_COND_IF_MATCH, /* replace only if the current version is the given token (If-Match) */
};

/* ---- an application root (ADR 0022; docs/ownership.md "Several applications
 * on one cluster") ---- */

#define KEEP_APP_ROOT_MAX 32 /* bytes, NUL excluded: longest application root */

/* An application root's syntax: 1..KEEP_APP_ROOT_MAX bytes of [a-z0-9_-],
 * the first a letter or digit (a path segment on every store and a
 * metrics label value as it is). true when valid. */
bool keep_app_root_valid(const char *root);

#endif
