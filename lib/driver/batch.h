/* keep — keys on stdin, run by up to KEEP_BATCH_JOBS_MAX workers at once
 * (owner-acquire and owner-release --jobs; ADR 0020 §5 bounds).
 *
 * Each worker calls fn with a context of its own (for example its own
 * store handle, so each keeps one connection alive); keys are handed out
 * in input order; answer lines are the callback's, tagged with their key.
 * The batch's exit code is the worst of its keys by keep_exit_rank
 * (lib/base/vocab.h). */
#ifndef KEEP_BATCH_H
#define KEEP_BATCH_H

#include <stdio.h>

#include "../base/vocab.h"

#define KEEP_BATCH_JOBS_MAX 32 /* workers at once */

/* Read keys from in, one a line (the newline cut; empty lines skipped; a
 * line over KEEP_LINE_MAX bytes or with a NUL byte is refused with a
 * warning naming prog and counts as exit 100), and call fn(ctxs[i], key)
 * for each on jobs workers (1..KEEP_BATCH_JOBS_MAX; 1 runs in the calling
 * thread). ctxs are borrowed; key is valid during the call only. Returns
 * the worst exit code of the keys (0 when there were none). Out of memory
 * or no thread at all: dies with exit 111. */
int keep_batch_run(FILE *in, int jobs, void *const *ctxs, int (*fn)(void *ctx, const char *key),
		   const char *prog);

#endif
