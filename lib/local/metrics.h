/* keep — Prometheus metrics as a node_exporter textfile collector file.
 *
 * A command keeps its counters and gauges in memory and rewrites its own
 * file atomically (temp + rename) on keep_metrics_flush when something
 * changed. Each command writes its own file, PATH with the command's
 * series (PATH is metrics.textfile from the config, e.g. keep.prom; the
 * file name gets the command's name inserted: keep.lease-write.prom), so
 * separate processes never overwrite each other. No path: all no-ops.
 *
 * The file is what `promtool check metrics` accepts: every name has one
 * `# HELP` line (from the table in metrics.c) and one `# TYPE` line, its
 * series together under them; counters end in _total; times are in
 * seconds (a gauge set with keep_metrics_set_ms is kept in ms and written
 * in seconds, to the ms). A command declares every counter it has at 0
 * when it starts (keep_metrics_inc(.., 0), keep_metrics_declare_requests)
 * and flushes, so `increase()` sees the first event. docs/metrics.md lists
 * every series. */
#ifndef KEEP_METRICS_H
#define KEEP_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../store/store.h"

#define KEEP_METRICS_MAX 96 /* series per process */

struct keep_metrics {
	char path[1200]; /* "" = disabled */
	char node[80];
	char app[40]; /* the application root labelling every series ("": none) */
	bool dirty;
	int n;
	struct {
		char name[64];
		char labels[96]; /* e.g. op="put",outcome="ok"; node label added on output */
		bool gauge;
		bool ms; /* value in ms, written in seconds (keep_metrics_set_ms) */
		int64_t value;
	} s[KEEP_METRICS_MAX];
};

/* Count one reply the store throttled to op ("get", "put", ...:
 * keep_store_throttled_total{op}; issue 28), for a command that counts its
 * requests itself (lease-write). */
void keep_metrics_throttled(struct keep_metrics *m, const char *op);

/* textfile: the configured path ("" or NULL disables); prog is inserted
 * before the extension. node labels every series. */
void keep_metrics_init(struct keep_metrics *m, const char *textfile, const char *node);
/* Set the process name inserted into the file name (default: none). */
void keep_metrics_set_prog(struct keep_metrics *m, const char *textfile, const char *prog);
/* The application root of the process (ADR 0022; docs/metrics.md): every
 * series gets the label app="ROOT" after node, and the file name gets
 * ".ROOT" after the process name (keep.owner-release.billing.prom: the
 * resolver of each root writes its own file). Call after
 * keep_metrics_set_prog. root NULL or "": the default root, no label and
 * the file name unchanged (today's series). root is copied; a root that
 * is not valid (keep_app_root_valid) or that makes the path too long
 * disables the file. */
void keep_metrics_set_app(struct keep_metrics *m, const char *root);
/* Add v to counter name (created at 0). Silently ignored past KEEP_METRICS_MAX. */
void keep_metrics_inc(struct keep_metrics *m, const char *name, int64_t v);
/* Set gauge name to v. */
void keep_metrics_set(struct keep_metrics *m, const char *name, int64_t v);
/* Set gauge name (a *_seconds name) to ms milliseconds: written in seconds
 * with three decimals. */
void keep_metrics_set_ms(struct keep_metrics *m, const char *name, int64_t ms);
/* Every keep_store_requests_total{op,outcome} series (5 operations x 5
 * outcomes) at 0, as a command that counts its requests starts. */
void keep_metrics_declare_requests(struct keep_metrics *m);
/* The HELP text of a series name (static; a generic line for a name the
 * table does not know). */
const char *keep_metrics_help(const char *name);
/* Count one store request: keep_store_requests_total{op=,outcome=}. */
void keep_metrics_store(struct keep_metrics *m, const char *op, enum keep_outcome o);
/* Rewrite the file if anything changed. Errors are ignored (metrics never
 * stop the protocol). */
void keep_metrics_flush(struct keep_metrics *m);
void keep_metrics_release(struct keep_metrics *m);

/* ---- request accounting ------------------------------------------------------
 *
 * Every store request a command makes, counted by operation and classified
 * outcome, the same way in every command: the command wraps the store it
 * opened with keep_store_counted(), so requests made inside the library
 * (ownership helpers, the upgrade marker) are counted too. Counters are
 * atomic: one keep_reqstats may be shared by several store handles used
 * from several threads. A local refusal (a bad key: nothing sent) is not a
 * request and is not counted. */

enum keep_req_op {
	KEEP_REQ_GET = 0,
	KEEP_REQ_HEAD,
	KEEP_REQ_PUT,
	KEEP_REQ_DEL,
	KEEP_REQ_LIST, /* one LIST call, every page of it */
};
#define KEEP_REQ_OPS 5
#define KEEP_REQ_OUTCOMES 5 /* enum keep_outcome */

struct keep_reqstats {
	_Atomic int64_t n[KEEP_REQ_OPS][KEEP_REQ_OUTCOMES];
	_Atomic int64_t throttled[KEEP_REQ_OPS]; /* replies the store throttled (issue 28) */
};

/* Zero every counter. */
void keep_reqstats_init(struct keep_reqstats *st);
/* "get", "head", "put", "delete", "list". */
const char *keep_req_op_name(enum keep_req_op op);
/* Count one request (thread-safe). */
void keep_reqstats_add(struct keep_reqstats *st, enum keep_req_op op, enum keep_outcome o);
/* Count one throttled reply (struct keep_reply.throttled; thread-safe),
 * and read the count of one operation. */
void keep_reqstats_throttled(struct keep_reqstats *st, enum keep_req_op op);
int64_t keep_reqstats_throttled_op(const struct keep_reqstats *st, enum keep_req_op op);
/* Totals: every request; one operation (any outcome); one outcome (any op). */
int64_t keep_reqstats_total(const struct keep_reqstats *st);
int64_t keep_reqstats_op(const struct keep_reqstats *st, enum keep_req_op op);
int64_t keep_reqstats_outcome(const struct keep_reqstats *st, enum keep_outcome o);

/* Wrap inner so that every request through the returned store is counted
 * in *st (borrowed: it must outlive the store). Ownership of inner passes
 * to the wrapper, also on failure (then freed); keep_store_free(*out)
 * frees both. The wrapper passes its timeout_ms down on every call.
 * Throttled replies (issue 28; docs/s3.md "Throttling") are counted, and
 * the wrapper backs off: after n throttled replies in a row, the next
 * request of this handle waits a full-jitter delay (lib/core/throttle.h
 * keep_backoff_ms, base KEEP_BACKOFF_BASE_MS, cap KEEP_BACKOFF_CAP_MS, ms)
 * before it is sent; a reply not throttled ends the run. lease-write does
 * not use the wrapper: the node lease keeps its schedule.
 * 0 or KEEP_ERR_NOMEM. */
int keep_store_counted(struct keep_store *inner, struct keep_reqstats *st, struct keep_store **out);

/* The --stats summary, one line without a newline into out (replaced):
 * `stats requests=N get=N head=N put=N delete=N list=N ok=N conflict=N
 * not_found=N refused=N ambiguous=N` (the line format, lib/platform/line.h). */
void keep_reqstats_format(const struct keep_reqstats *st, struct keep_buf *out);
/* Print that line on stderr with ` prog=PROG` appended (stdout keeps only
 * records). */
void keep_reqstats_print(const struct keep_reqstats *st, const char *prog);
/* Copy the counters into m as keep_store_requests_total{op,outcome}
 * (every pair seen so far; the metric's values become the counters') and
 * keep_store_throttled_total{op} (every op, from 0). */
void keep_reqstats_to_metrics(const struct keep_reqstats *st, struct keep_metrics *m);

#endif
