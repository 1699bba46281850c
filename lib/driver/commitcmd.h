/* keep — owner-commit's lines (issue 26; docs/ownership.md
 * "owner-commit"; process glue, printing as owner-commit). */
#ifndef KEEP_COMMITCMD_H
#define KEEP_COMMITCMD_H

#include <stdbool.h>

#include "../store/store.h"
#include "commit.h"

/* Print the answer line of a commit or a claim of key's grant on object
 * (committed, claimed, refused, unknown, error; docs/formats.md), and its
 * detail as a warning when there is one; return r's exit code (111 when
 * stdout fails). Strings borrowed. */
int keep_commit_answer(const char *key, const char *object, const struct keep_commit_result *r);

/* owner-commit --get [--show] OBJECT on store (borrowed): read the fenced
 * object; without show its bytes exactly on stdout and the `fence` line
 * on stderr (always text), with show the `fence` line on stdout. Exit
 * code: 0; 1 no such object; 17 not a fenced object; the read's code. */
int keep_commit_get_cmd(struct keep_store *store, const char *object, bool show);

#endif
