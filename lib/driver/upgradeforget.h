/* keep — `upgrade-mark forget`'s driver (ADR 0020 §2 "forget", §6;
 * docs/upgrade.md, docs/runbooks/forget-old-heartbeats.md): deletes stale
 * old-format heartbeats and, for one NODE, an operator's fence created over
 * an absent object once no ownership record of any root names the node
 * (issue 27). The decisions are keep_upgrade_forget_* (lib/core/upgrade.h);
 * this file reads, lists and deletes on the store and prints the answer
 * lines and diagnostics as x->prog's. */
#ifndef KEEP_UPGRADEFORGET_H
#define KEEP_UPGRADEFORGET_H

#include <stdbool.h>

#include "upgrademark.h"

/* upgrade-mark forget NODE (node: a valid node id, borrowed; stale false)
 * or --stale (node NULL, stale true: every listed node, quietly for
 * format-3 objects). Prints `forgot`, `kept`, `absent` or `error` lines;
 * the fence check opens one store of its own per application root
 * (exits 100/111 as keep_store_open_or_die when it cannot). Returns the
 * worst exit code: 0 done (or absent), 1 kept (NODE) or the store refused,
 * 17 not ours or malformed (NODE), 111 the store failed for now. */
int keep_upgmark_forget(const struct keep_upgmark *x, const char *node, bool stale);

#endif
