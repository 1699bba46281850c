/* keep — forget's check of a created fence, sans I/O (ADR 0020 §2
 * "forget", §6; ADR 0022; docs/upgrade.md "forget").
 *
 * An operator's fence created over an absent nodes/<id> (`lease-fence
 * --create`) frees every ownership record that names id, so `upgrade-mark
 * forget` removes it only when no record of any application root names
 * id. The machine walks: LIST owners/ of the store as opened, each listed
 * key (KEY: the driver hands the listed key over, the machine says whether
 * it is a record key) and its READ; then LIST apps/ for the roots (each
 * once, at most KEEP_FCHECK_ROOTS_MAX), and for each root the same walk
 * of apps/ROOT/owners/. The first record that names id, or that cannot be
 * read, ends the check: the fence stays. A key a listing skipped (not
 * ours to read) also keeps it.
 *
 *   keep_fcheck_init()       start, for node id
 *   keep_fcheck_next()       the next action: LIST, KEY, READ, LIST_ROOTS,
 *                            KEY_ROOT, or DONE
 *   keep_fcheck_on_list() / keep_fcheck_on_key() / keep_fcheck_on_read()
 *   / keep_fcheck_on_root()  the reply to the action last asked for
 *   keep_fcheck_exit_code()  the done check's exit code
 *
 * Plain data, no I/O, no clock. */
#ifndef KEEP_CORE_FORGET_H
#define KEEP_CORE_FORGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"

#define KEEP_FCHECK_ROOTS_MAX 256 /* application roots checked; more keep the fence */
#define KEEP_FCHECK_KEY_MAX 1024  /* bytes: a listed key (the store's KEEP_KEY_MAX) */

enum keep_fcheck_act_kind {
	KEEP_FCHECK_LIST = 0,	/* LIST owners/ of root act.root ("": the store as opened) */
	KEEP_FCHECK_KEY,	/* hand over listed key number act.index of that LIST
				   (keep_fcheck_on_key) */
	KEEP_FCHECK_READ,	/* GET owners/act.key of root act.root */
	KEEP_FCHECK_LIST_ROOTS, /* LIST apps/ */
	KEEP_FCHECK_KEY_ROOT,	/* hand over listed key number act.index of apps/
				   (keep_fcheck_on_root) */
	KEEP_FCHECK_DONE,	/* read m->res */
};

struct keep_fcheck_act {
	enum keep_fcheck_act_kind kind;
	char root[KEEP_APP_ROOT_MAX + 1]; /* LIST, READ: "" or an application root */
	size_t index;			  /* KEY, KEY_ROOT */
	char key[KEEP_OWNER_KEY_MAX + 1]; /* READ: the record key tenant/class/name */
};

enum keep_fcheck_result {
	KEEP_FCHECK_CLEAR = 0,	    /* no record names the node: remove the fence, 0 */
	KEEP_FCHECK_NAMED,	    /* owners/key of root names it (generation): kept, 1 */
	KEEP_FCHECK_UNREADABLE,	    /* owners/key could not be read: kept, 1 or the read's */
	KEEP_FCHECK_SKIPPED,	    /* a listing skipped keys (skipped, first in key): kept, 1 */
	KEEP_FCHECK_TOO_MANY_ROOTS, /* over KEEP_FCHECK_ROOTS_MAX roots: kept, 1 */
	KEEP_FCHECK_FAILED,	    /* a LIST failed (of root, or of apps/ when roots_listing):
				       the fence stays, the listing's exit code */
};

/* The machine. Plain data; nothing to release. */
struct keep_fcheck {
	char node[KEEP_NODE_ID_MAX + 1];
	enum keep_fcheck_act_kind step; /* the action last asked for */
	bool done;
	enum keep_fcheck_result res; /* done */
	/* the walk */
	char root[KEEP_APP_ROOT_MAX + 1]; /* the root being checked */
	bool roots_listed;		  /* the default root is done: walking roots */
	size_t nlisted, next;		  /* the current LIST's keys, the next one */
	char roots[KEEP_FCHECK_ROOTS_MAX][KEEP_APP_ROOT_MAX + 1];
	size_t nroots, root_i;
	int64_t checked; /* records read and found clear, every root */
	int64_t in_root; /* of them, in the current root */
	/* the end */
	char key[KEEP_FCHECK_KEY_MAX + 1]; /* NAMED, UNREADABLE: the record key; SKIPPED: the
					     first skipped listed key */
	size_t nskipped;		   /* SKIPPED: keys skipped */
	int64_t generation;		   /* NAMED: the record's */
	bool roots_listing;		   /* FAILED: the LIST of apps/ failed */
	enum keep_outcome outcome;	   /* UNREADABLE, FAILED: the reply's */
	bool not_ours;			   /* UNREADABLE, FAILED: the reply's not_ours */
};

/* Start the check for node id (a valid node id, copied). */
void keep_fcheck_init(struct keep_fcheck *m, const char *node);

/* The next action into *act. DONE once m->done. */
void keep_fcheck_next(struct keep_fcheck *m, struct keep_fcheck_act *act);

/* The LIST (of owners/, or of apps/) answered: outcome and not_ours as
 * the store said; n keys listed (handed over one at a time, KEY or
 * KEY_ROOT); nskipped keys skipped (not ours to read), first_skipped the
 * first of them (borrowed, NULL when none). */
void keep_fcheck_on_list(struct keep_fcheck *m, enum keep_outcome outcome, bool not_ours, size_t n,
			 size_t nskipped, const char *first_skipped);

/* KEY: the listed key (borrowed; the store's key, with owners/ in front).
 * true: it is a record key, READ follows; false: it names no record,
 * skipped (the driver says so) and the walk goes on. */
bool keep_fcheck_on_key(struct keep_fcheck *m, const char *listed);

/* READ answered: outcome, not_ours, and the record (borrowed; NULL unless
 * OK and decoded). */
void keep_fcheck_on_read(struct keep_fcheck *m, enum keep_outcome outcome, bool not_ours,
			 const struct keep_owner_rec *rec);

/* KEY_ROOT: a listed key under apps/ (borrowed); its root is checked once,
 * however many of its keys are listed; a key that names no root is
 * ignored. */
void keep_fcheck_on_root(struct keep_fcheck *m, const char *listed);

/* The exit code of a done check (docs/exit-codes.md): CLEAR 0; NAMED,
 * SKIPPED, TOO_MANY_ROOTS 1; UNREADABLE 1 when the record was read but is
 * not ours or malformed, else the read's (keep_exit_of_outcome); FAILED
 * the listing's. */
int keep_fcheck_exit_code(const struct keep_fcheck *m);

/* May the created fence of m's node be removed (ADR 0020 §2 "forget";
 * ADR 0022; issue 27)? The fence frees every ownership record that names
 * the node, so it is removed only when the check is done and no record of
 * any application root names the node (CLEAR: every listing of owners/,
 * the store's and each root's, read to its end, every record read and
 * clear). Any other end (a record names it, one could not be read, a
 * listing skipped a key or failed, too many roots) and a check not done
 * keep it. m is borrowed. Pure. */
bool keep_fcheck_fence_removable(const struct keep_fcheck *m);

#endif
