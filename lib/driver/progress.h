/* keep — progress lines while a store request waits (issue 27: a command
 * is never silent for longer than a heartbeat period while it waits;
 * docs/operations.md "Logs").
 *
 * keep_store_progress wraps a store: every request through it that is
 * still waiting a period after it was sent says so on stderr, once a
 * period (keep_timing_progress_due_ms), until its reply comes:
 *
 *   store-probe: info: waiting for the store: PUT probe/0f3a… (2 s so far; a request gives up after
 * 10 s)
 *
 * One watcher thread per wrapped store, started at its first request with
 * every signal blocked (signals stay the command's threads' business); the
 * request itself runs on the caller's thread, unchanged (the wrapper passes
 * its timeout and page hook down). keep_store_open_or_die wraps the store
 * of every command not running under keep-agent: the agent's long-running
 * children bound each request by their attempt timeout and warn on
 * failures themselves. */
#ifndef KEEP_PROGRESS_H
#define KEEP_PROGRESS_H

#include <stdint.h>

#include "../store/store.h"

/* Wrap inner: requests that wait longer than period_ms say so (above),
 * naming prog (borrowed: it must outlive the store); bound_ms > 0 is the
 * request bound the line names (0: not named). Ownership of inner passes
 * to the wrapper, also on failure (then freed); keep_store_free(*out)
 * stops the watcher and frees both. 0, KEEP_ERR_NOMEM, KEEP_ERR_IO (no
 * thread could be made: *out is inner, unwrapped, and 0 is returned
 * instead: progress lines are never worth failing a command). */
int keep_store_progress(struct keep_store *inner, const char *prog, int64_t period_ms,
			int64_t bound_ms, struct keep_store **out);

#endif
