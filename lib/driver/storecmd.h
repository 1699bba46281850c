/* keep — the store plumbing every command shares (docs/exit-codes.md).
 *
 * One copy of what each command did for itself: open the configured store
 * (and die with the documented code when it cannot be opened), map a
 * store reply to an exit code, read and decode nodes/<id>, and read an
 * object of keep's whatever the bucket holds at its key. The calls that
 * print or exit say so. No clock reads. */
#ifndef KEEP_STORECMD_H
#define KEEP_STORECMD_H

#include <stdbool.h>

#include "../codec/nodeobj.h"
#include "../local/config.h"
#include "../local/metrics.h"
#include "../store/store.h"

/* The exit code for a keep_store_open error: KEEP_EXIT_TEMP (111) for
 * KEEP_ERR_STORE (e.g. the fs directory is missing) and KEEP_ERR_NOMEM;
 * KEEP_EXIT_USAGE (100) for everything else (a bad URL, region or
 * addressing, no credentials, a credentials file refused or unreadable):
 * a configuration error, retrying cannot help. */
int keep_exit_of_open(int err);

/* Open cfg's store (keep_config_store_opts) for prog. With stats, every
 * request is counted (keep_store_counted). Unless the process runs under
 * keep-agent (keep_supervised), a request still waiting after a heartbeat
 * period says so on stderr, once a period (keep_store_progress). On failure print
 * "PROG: fatal: unable to open store 'URL': why" and exit with
 * keep_exit_of_open(err). Returns the store, owned by the caller
 * (keep_store_free). */
struct keep_store *keep_store_open_or_die(const char *prog, const struct keep_config *cfg,
					  struct keep_reqstats *stats);

/* The exit code for a store reply (the one table, docs/exit-codes.md;
 * keep_exit_of_outcome in vocab.h, which the sans-I/O machines use):
 * OK 0; REFUSED with not_ours 17 (an object keep cannot hold); CONFLICT,
 * NOT_FOUND and any other REFUSED 1 (a definite answer: 403, no such
 * bucket, 4xx; retrying cannot help); AMBIGUOUS 111 (timeout, 5xx, lost
 * reply: retry). A caller for which CONFLICT or NOT_FOUND means something
 * else decides those itself. */
int keep_exit_of_reply(const struct keep_reply *r);

/* What one read of nodes/<id> found. */
struct keep_node_read {
	struct keep_reply reply; /* the GET's (version on OK); an object keep
				    cannot hold reads as OK (keep_store_get_ours) */
	bool ok;		 /* decoded into *obj, and it names the node */
	int derr;		 /* reply OK but not usable: KEEP_ERR_NOTOURS, _PARSE,
				    _TOOBIG (decode), or _PARSE for another node's name */
	char why[160];		 /* !ok: one line: the decode error, or "OUTCOME: detail" */
};

#define KEEP_NODE_READ_ANY_FORMAT 0 /* the object must name the node, any format */
#define KEEP_NODE_READ_V3_ONLY 1    /* only a format-3 object must name it (lease-write) */

/* GET nodes/<node> (keep_store_get_ours) and decode it into *obj (caller
 * owned; valid only when nr->ok). An object naming another node than its
 * key is unusable (derr KEEP_ERR_PARSE) — for a format-3 object only when
 * check is KEEP_NODE_READ_V3_ONLY. Never prints. ADR 0020 §1, §2: the
 * versioned read every decision on a node lease starts from. */
void keep_node_read(struct keep_store *s, const char *node, int check, struct keep_node_obj *obj,
		    struct keep_node_read *nr);

/* PUT o to nodes/<o->node> under cond (if_match: the version for
 * KEEP_COND_IF_MATCH; borrowed, may point into *r) within the store's
 * timeout; *r the reply (REFUSED "encode: .." when o does not encode:
 * nothing sent). Never prints. ADR 0020 §2: a fence's conditional write. */
void keep_node_write(struct keep_store *s, const struct keep_node_obj *o, enum keep_cond cond,
		     const char *if_match, struct keep_reply *r);

/* Warn on stderr about the entries a listing of prefix skipped (struct
 * keep_list's skip records): one line per named entry,
 * "PROG: warning: listing PREFIX: skipped KEY: WHY" (KEY escaped as a
 * stdout line value), then "... and N more" when more were skipped.
 * Nothing when none was. */
void keep_warn_skipped(const char *prog, const char *prefix, const struct keep_list *l);

#endif
