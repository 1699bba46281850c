/* keep — Prometheus metrics as a node_exporter textfile collector file.
 *
 * A command keeps its counters and gauges in memory and rewrites its own
 * file atomically (temp + rename) on keep_metrics_flush when something
 * changed. Each command writes its own file, PATH with the command's
 * series (PATH is metrics.textfile from the config, e.g. keep.prom; the
 * file name gets the command's name inserted: keep.lease-write.prom), so
 * separate processes never overwrite each other. No path: all no-ops.
 * docs/metrics.md lists every series. */
#ifndef KEEP_METRICS_H
#define KEEP_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

#define KEEP_METRICS_MAX 64 /* series per process */

struct keep_metrics {
	char path[1200]; /* "" = disabled */
	char node[80];
	bool dirty;
	int n;
	struct {
		char name[64];
		char labels[96]; /* e.g. op="put",outcome="ok"; node label added on output */
		bool gauge;
		int64_t value;
	} s[KEEP_METRICS_MAX];
};

/* textfile: the configured path ("" or NULL disables); prog is inserted
 * before the extension. node labels every series. */
void keep_metrics_init(struct keep_metrics *m, const char *textfile, const char *node);
/* Set the process name inserted into the file name (default: none). */
void keep_metrics_set_prog(struct keep_metrics *m, const char *textfile, const char *prog);
/* Add v to counter name (created at 0). Silently ignored past KEEP_METRICS_MAX. */
void keep_metrics_inc(struct keep_metrics *m, const char *name, int64_t v);
/* Set gauge name to v. */
void keep_metrics_set(struct keep_metrics *m, const char *name, int64_t v);
/* Count one store request: keep_store_requests_total{op=,outcome=}. */
void keep_metrics_store(struct keep_metrics *m, const char *op, enum keep_outcome o);
/* Rewrite the file if anything changed. Errors are ignored (metrics never
 * stop the protocol). */
void keep_metrics_flush(struct keep_metrics *m);
void keep_metrics_release(struct keep_metrics *m);

#endif
