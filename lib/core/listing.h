/* keep — which bodies a listing pass reads, sans I/O (ADR 0020 §2 and "the
 * listing"; docs/fencing.md "Reading only what changed", docs/ownership.md
 * "Watching owners").
 *
 * node-watch lists nodes/, owner-watch lists owners/PREFIX and nodes/,
 * every period; a body is read (one GET) only when needed. The rule lives
 * here, once, so that cmd/node-watch.c, cmd/owner-watch.c and the
 * simulator (sim/) apply the same one:
 *
 *   keep_listing_need_read()  the rule: every write changes an object's
 *                             version token, so a body held at exactly the
 *                             listed token is exact and is not read again;
 *                             any other body (none held, or held at another
 *                             token) is read, when the caller needs it at all.
 *   keep_listing_need_body()  node-watch's use of it for the watch (§2): a
 *                             new or unreadable node is read; a token other
 *                             than the last listing's means a write landed:
 *                             the node is alive, nothing is read (*wrote,
 *                             fed to keep_watch_pass as keep_watch_input.wrote);
 *                             a token unchanged since the last listing is read
 *                             again while the body held is live (the watch is
 *                             judged on bodies, never on tokens), otherwise by
 *                             keep_listing_need_read (fenced, released,
 *                             old-format: no watch runs on it).
 *
 * Nothing here reads a clock or touches the store; pointers are borrowed. */
#ifndef KEEP_CORE_LISTING_H
#define KEEP_CORE_LISTING_H

#include <stdbool.h>

#include "../nodeobj.h"

/* Is a read (GET) of a listed object needed?
 *   body_version: the version of the body held from an earlier read, "" or
 *     NULL when none (never read, or the last read failed or found nothing);
 *   listed_version: the version token this listing shows;
 *   wanted: the caller needs this object's body at all.
 * True when wanted and no body is held at exactly listed_version. */
bool keep_listing_need_read(const char *body_version, const char *listed_version, bool wanted);

/* What the last pass knew of one node (NULL: not listed then). */
struct keep_listed {
	const char *listed;		 /* the version token the last listing showed (borrowed) */
	const char *body_version;	 /* the version of the body held, "" when none (borrowed) */
	bool decoded;			 /* a body is held and decoded */
	const struct keep_node_obj *obj; /* that body (borrowed), when decoded */
};

/* Does node-watch's pass read the node's body? prev: the last pass's
 * knowledge (NULL for a new node); listed: this listing's token
 * (borrowed); every: read every body (--once, cluster status). *wrote is
 * set when the body is not read because a write landed since the last
 * listing. */
bool keep_listing_need_body(const struct keep_listed *prev, const char *listed, bool every,
			    bool *wrote);

#endif
