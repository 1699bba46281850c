/* keep — the node lease object nodes/<id> (ADR 0020 §1, §6; docs/formats.md).
 *
 * Format 3 (ours), one field per line, '\n' after every line:
 *
 *   wasmkeep-node 3
 *   <state> <instance>          state: live | released | fenced;
 *                               instance: [0-9a-f]{32}, or "-" (operator fence of an absent object)
 *   written_at_ms <int>         sender's wall clock at send (ms since epoch), > 0
 *   node <id>                   the node id (must match the key's id)
 *   seq <int>                   >= 0, grows on every write of a process (no two bodies alike: ABA)
 *   [host <hostname>]           optional heartbeat fields, in this order, each at most once
 *   [pid <int>]
 *   [software <token>]
 *   [fenced_by <id>|operator]   only with state fenced
 *   [fenced_at_ms <int>]        only with state fenced
 *
 * Strict: unknown header -> KEEP_ERR_NOTOURS; for header 3, any unknown,
 * duplicate, out-of-order or malformed line -> KEEP_ERR_PARSE.
 * Headers "wasmkeep-node 1" and "wasmkeep-node 2" are old-format heartbeats
 * (per-actor-lease binaries): only the header, "node" and "written_at_ms"
 * lines are read; other lines of theirs are skipped. */
#ifndef KEEP_NODEOBJ_H
#define KEEP_NODEOBJ_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/parse.h" /* KEEP_INSTANCE_LEN, KEEP_WALL_MAX_MS */

#define KEEP_NODE_ID_MAX 64   /* bytes, NUL excluded: [A-Za-z0-9._-], not starting with '.' */
#define KEEP_NODEOBJ_MAX 4096 /* bytes: largest node object accepted */

enum keep_node_state {
	KEEP_NODE_LIVE = 0,
	KEEP_NODE_RELEASED,
	KEEP_NODE_FENCED,
};

struct keep_node_obj {
	int format;			      /* 3; or 1, 2 for an old-format heartbeat */
	enum keep_node_state state;	      /* format 3 only (old formats: LIVE) */
	char instance[KEEP_INSTANCE_LEN + 1]; /* "-" when none */
	int64_t written_at_ms;		      /* ms since epoch, sender's clock */
	char node[KEEP_NODE_ID_MAX + 1];
	int64_t seq;			      /* format 3; -1 when absent (old formats) */
	char host[256];			      /* "" when absent */
	int64_t pid;			      /* 0 when absent */
	char software[64];		      /* "" when absent */
	char fenced_by[KEEP_NODE_ID_MAX + 1]; /* "" when absent */
	int64_t fenced_at_ms;		      /* 0 when absent */
};

/* "live", "released", "fenced". Never NULL. */
const char *keep_node_state_name(enum keep_node_state s);

/* Decode len bytes (not NUL-terminated necessarily) into *out.
 * 0; KEEP_ERR_NOTOURS (header not wasmkeep-node 1/2/3); KEEP_ERR_PARSE
 * (malformed; err says which line and why); KEEP_ERR_TOOBIG (> KEEP_NODEOBJ_MAX).
 * err (errlen bytes) gets a one-line reason on failure. */
int keep_node_obj_decode(const char *buf, size_t len, struct keep_node_obj *out, char *err,
			 size_t errlen);

/* Encode a format-3 object into out (appended). Refuses (KEEP_ERR_INVAL)
 * what decode would refuse. KEEP_ERR_NOMEM/TOOBIG from the buffer. */
int keep_node_obj_encode(const struct keep_node_obj *o, struct keep_buf *out);

/* o->host = host as the codec takes it: each byte outside printable ASCII
 * (space and below, DEL and above) becomes '_', cut to sizeof(o->host) - 1
 * bytes; NULL or "" leaves no host. host borrowed. */
void keep_node_obj_set_host(struct keep_node_obj *o, const char *host);

/* Node ids: 1..KEEP_NODE_ID_MAX of [A-Za-z0-9._-], not starting with '.'. */
int keep_node_id_valid(const char *id);

#endif
