/* keep — the cluster object `cluster`: does this bucket's cluster know it
 * never ran per-actor leases? (ADR 0020 §6 "First acquisition"; issue 16
 * item 6; docs/upgrade.md "Native clusters", docs/formats.md).
 *
 * A codec, sans I/O. The object is created once, with If-None-Match, by
 * `upgrade-mark native` on a bucket holding no leases/, wal/ or snapshot/
 * object, and never rewritten or removed by keep's tools:
 *
 *   wasmkeep-cluster 1
 *   format native
 *   written_at_ms 1767225600123
 *
 * `format native`: no actor of this cluster ever had an old lease, so a
 * first acquisition creates its record at generation 1 with no leases/
 * marker (2 requests: the record read and its creation). `format
 * upgraded` (reserved for a cluster that records its upgrade), no object,
 * or one that does not decode: every first acquisition takes the marker
 * path of §6 (mark.h), as before. */
#ifndef KEEP_CORE_CLUSTER_H
#define KEEP_CORE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/vocab.h"
#include "timing.h"

#define KEEP_CLUSTER_KEY "cluster"
#define KEEP_CLUSTER_MAX 128 /* bytes: the largest body keep writes or decodes */

/* What an acquisition knows of the cluster (KEEP_OACT_CLUSTER_READ's
 * answer). 0 is the safe default: not known to be native. */
enum keep_cluster_view {
	KEEP_CLUSTER_NOT_NATIVE = 0, /* no object, `upgraded`, unreadable or a failed read */
	KEEP_CLUSTER_NATIVE,	     /* `format native`: first records skip the marker */
};

enum keep_cluster_format { KEEP_CLUSTER_FMT_NATIVE = 1, KEEP_CLUSTER_FMT_UPGRADED };

struct keep_cluster_obj {
	enum keep_cluster_format format;
	int64_t written_at_ms; /* wall ms, 1..KEEP_WALL_MAX_MS */
};

/* "native", "upgraded". */
const char *keep_cluster_format_name(enum keep_cluster_format f);

/* Decode the len bytes at body (strictly the three lines above, in order).
 * 0; KEEP_ERR_NOTOURS (another header), KEEP_ERR_PARSE (malformed: why
 * gets a one-line reason, whylen bytes), KEEP_ERR_TOOBIG (over
 * KEEP_CLUSTER_MAX). *o is zeroed on error. */
int keep_cluster_decode(const char *body, size_t len, struct keep_cluster_obj *o, char *why,
			size_t whylen);

/* The object `upgrade-mark native` creates, into *o: format native,
 * written_at_ms now->wall_ms, the writer's wall clock (never the judging
 * clock: every date keep writes into the bucket is at least the writer's
 * wall clock, issue 23; this one only informs). now is borrowed. */
void keep_cluster_native_obj(const struct keep_walls *now, struct keep_cluster_obj *o);

/* Append the body of o to out. 0, KEEP_ERR_INVAL (a bad field), or
 * keep_buf's error. */
int keep_cluster_encode(const struct keep_cluster_obj *o, struct keep_buf *out);

/* ---- the judgement of one read of `cluster` ---------------------------------- */

enum keep_cluster_read {
	KEEP_CLUSTER_READ_ABSENT = 0, /* not found: no object */
	KEEP_CLUSTER_READ_NATIVE,     /* a cluster object, format native */
	KEEP_CLUSTER_READ_UPGRADED,   /* a cluster object, format upgraded */
	KEEP_CLUSTER_READ_BAD,	      /* not ours (the store said so) or does not decode */
	KEEP_CLUSTER_READ_FAILED,     /* the read failed (timeout, 5xx, refused) */
};

/* Judge one GET of `cluster`: outcome, not_ours (the store's refusal of an
 * object keep cannot hold: over 64 KiB), detail (the reply's diagnostic,
 * borrowed, may be NULL), body/len (the body read, borrowed, NULL when
 * none). *o gets the decoded object (NATIVE, UPGRADED; else zeroed). BAD:
 * why (whylen bytes) gets the reason, `detail` for not_ours, the codec's
 * for a body that does not decode; else why[0] is '\0'. The one judgement
 * of `owner-acquire`'s read (lib/driver/ownrun.c, KEEP_OACT_CLUSTER_READ) and of
 * `upgrade-mark native` (docs/upgrade.md "Native clusters"). */
enum keep_cluster_read keep_cluster_judge(enum keep_outcome outcome, bool not_ours,
					  const char *detail, const char *body, size_t len,
					  struct keep_cluster_obj *o, char *why, size_t whylen);

/* A native cluster creates a first record without the marker (ADR 0020
 * §6, issue 16): the view one read of `cluster`, judged v, gives an
 * acquisition. KEEP_CLUSTER_NATIVE only for a read that found format
 * native; no object, `upgraded`, an unreadable object and a failed read
 * all send a first record through leases/. *keep (may be NULL): whether
 * a process keeps this view for its later acquisitions (the object is
 * only ever created, never changed back): false for a failed read, which
 * the next acquisition tries again. Pure. */
enum keep_cluster_view keep_cluster_first_record_view(enum keep_cluster_read v, bool *keep);

/* ---- several applications on one cluster (ADR 0022) ------------------------------ */

/* Is key (a key of the protocol, as a command asks for it) one every
 * application root of the cluster shares: a node object (nodes/...) or the
 * cluster object (`cluster`)? A listing prefix is judged the same way. */
bool keep_cluster_key_shared(const char *key);

/* The bucket's key of key for application root root (ADR 0022; issue 27;
 * docs/ownership.md "Several applications on one cluster"): a shared key
 * (keep_cluster_key_shared) is itself, every other key (owners/,
 * leases/, pending releases, fenced objects...) lies under apps/ROOT/, so
 * that two roots never see each other's records. root is a valid
 * application root (keep_app_root_valid; the caller checks it); root and
 * key are borrowed; out gets the key, NUL-terminated (outlen bytes).
 * 0; KEEP_ERR_TOOBIG when it does not fit in outlen (the store refuses
 * a key over its KEEP_KEY_MAX: outlen KEEP_KEY_MAX + 1). Pure. */
int keep_cluster_app_root_key(const char *root, const char *key, char *out, size_t outlen);

/* ---- `upgrade-mark native`: the machine ----------------------------------------- */

/* The most creates of `cluster` answered conflict (each read again, and
 * the old prefixes listed again while it is absent) before native gives
 * up (111): a race with another run ends at `action=existing` on the first
 * read again; a store that answers every create so while every read finds
 * no object (a broken store, a stale replica, a fault) would otherwise be
 * asked for ever (docs/upgrade.md "Native clusters"). */
#define KEEP_NATIVE_CONFLICTS_MAX 3
/* bytes, NUL excluded: a listed key (the store's KEEP_KEY_MAX) */
#define KEEP_NATIVE_KEY_MAX 1024

enum keep_native_act_kind {
	KEEP_NATIVE_ACT_READ = 0, /* GET `cluster` (keep_store_get_ours: a body up to 64 KiB) */
	KEEP_NATIVE_ACT_LIST,	  /* LIST act.prefix */
	KEEP_NATIVE_ACT_CREATE,	  /* PUT `cluster` act.body (act.len bytes) If-None-Match: * */
	KEEP_NATIVE_ACT_DONE,	  /* read m->res */
};

struct keep_native_act {
	enum keep_native_act_kind kind;
	const char *prefix;		 /* LIST: "leases/", "wal/" or "snapshot/" (static) */
	char body[KEEP_CLUSTER_MAX + 1]; /* CREATE: the encoded object, NUL-terminated */
	size_t len;			 /* CREATE: bytes of body */
	struct keep_cluster_obj obj;	 /* CREATE: what body encodes */
};

/* The reply to the last action. Pointers are borrowed for the call. */
struct keep_native_reply {
	enum keep_outcome outcome;
	bool not_ours;	    /* READ: the store refused an object keep cannot hold */
	const char *detail; /* the reply's diagnostic (may be NULL) */
	const char *body;   /* READ, OK: the body (may be NULL when empty) */
	size_t len;	    /* READ, OK: its bytes */
	const char *first;  /* LIST, OK: the first key listed or skipped; NULL when none */
};

enum keep_native_result {
	KEEP_NATIVE_CREATED = 0, /* created now: `native ... action=created`, 0 */
	KEEP_NATIVE_EXISTING,	 /* a native object was there: `action=existing`, 0 */
	KEEP_NATIVE_UPGRADED,	 /* an upgraded object: `refused reason=upgraded`, 1 */
	KEEP_NATIVE_OLD_OBJECTS, /* res_key under an old prefix: `refused reason=old-objects`, 1 */
	KEEP_NATIVE_BAD_OBJECT,	 /* `cluster` is not a cluster object (why): 17 */
	KEEP_NATIVE_FAILED,	 /* a request failed (failed_act, outcome): its reply's code */
	KEEP_NATIVE_ENCODE,	 /* the object could not be encoded (a wall clock past 9999): 111 */
	KEEP_NATIVE_GAVE_UP,	 /* KEEP_NATIVE_CONFLICTS_MAX conflicts, no object read: 111 */
};

/* The machine. Plain data; nothing to release. */
struct keep_native {
	enum keep_native_act_kind step; /* the action last asked for */
	size_t list_i;			/* LIST: the prefix */
	int conflicts;			/* creates answered conflict so far */
	bool done;
	enum keep_native_result res;	      /* done */
	struct keep_cluster_obj obj;	      /* CREATED, EXISTING, UPGRADED */
	char key[KEEP_NATIVE_KEY_MAX + 1];    /* OLD_OBJECTS: the first key found */
	const char *old_prefix;		      /* OLD_OBJECTS, FAILED (a LIST): the prefix */
	enum keep_native_act_kind failed_act; /* FAILED: READ, LIST or CREATE */
	enum keep_outcome outcome;	      /* FAILED: the reply's outcome */
	bool not_ours;			      /* FAILED: the reply's not_ours */
	char why[KEEP_DETAIL_MAX];	      /* BAD_OBJECT: the reason */
};

/* Start: read `cluster`; absent, list leases/, wal/ and snapshot/ (any key,
 * listed or skipped as foreign, refuses); all empty, create the object
 * If-None-Match; a conflict reads again (ADR 0020 §6; docs/upgrade.md
 * "Native clusters"). */
void keep_native_init(struct keep_native *m);

/* The next action into *act. now (borrowed) dates a CREATE's object: the
 * writer's wall clock (keep_cluster_native_obj). DONE once m->done. */
void keep_native_next(struct keep_native *m, const struct keep_walls *now,
		      struct keep_native_act *act);

/* Feed the reply r (borrowed) to the action last asked for. */
void keep_native_on_reply(struct keep_native *m, const struct keep_native_reply *r);

/* The exit code of a done machine's result (docs/exit-codes.md): CREATED
 * and EXISTING 0; UPGRADED and OLD_OBJECTS 1; BAD_OBJECT 17; FAILED the
 * failed reply's (keep_exit_of_outcome); ENCODE and GAVE_UP 111. */
int keep_native_exit_code(const struct keep_native *m);

#endif
