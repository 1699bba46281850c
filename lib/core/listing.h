/* keep — which node bodies a listing pass reads, sans I/O (ADR 0020 §2 and
 * "the listing"; docs/fencing.md "Reading only what changed").
 *
 * node-watch lists nodes/ every period; a body is read (one GET) only when
 * the watch needs it. The rule lives here so that cmd/node-watch.c and the
 * simulator (sim/) apply the same one: a new node, an unreadable one, and
 * one whose listed version token is the last listing's are read (the watch
 * is judged on bodies, never on tokens), unless the body held is at that
 * very token and not live (fenced, released, old-format: no watch runs on
 * it). A token other than the last listing's means a write landed: the
 * node is alive, nothing is read (*wrote, fed to keep_watch_pass as
 * keep_watch_input.wrote). */
#ifndef KEEP_CORE_LISTING_H
#define KEEP_CORE_LISTING_H

#include <stdbool.h>

#include "../nodeobj.h"

/* What the last pass knew of one node (NULL: not listed then). */
struct keep_listed {
	const char *listed;		 /* the version token the last listing showed (borrowed) */
	const char *body_version;	 /* the version of the body held, "" when none (borrowed) */
	bool decoded;			 /* a body is held and decoded */
	const struct keep_node_obj *obj; /* that body (borrowed), when decoded */
};

/* Does this pass read the node's body? prev: the last pass's knowledge
 * (NULL for a new node); listed: this listing's token (borrowed); every:
 * read every body (--once, cluster status). *wrote is set when the body is
 * not read because a write landed since the last listing. */
bool keep_listing_need_body(const struct keep_listed *prev, const char *listed, bool every,
			    bool *wrote);

#endif
