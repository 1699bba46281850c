/* keep — Prometheus textfile metrics (see metrics.h). */
#include "metrics.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "../base/vocab.h"
#include "statedir.h"

/* Every series keep writes, with its HELP text (docs/metrics.md says
 * more; tests/bats/0740-metrics.bats holds the two together). */
static const struct {
	const char *name, *help;
} helps[] = {
    {"keep_node_lease_writes_total",
     "Node lease writes that landed (first write, renewals, adoptions, recovery, released)."},
    {"keep_node_lease_failures_total", "Node lease writes that failed (write-failed)."},
    {"keep_node_lease_ran_out_total", "Times the node lease ran out (no write landed in time)."},
    {"keep_node_lease_valid_seconds",
     "Validity left of the node lease when the file was written (0 when not valid)."},
    {"keep_clock_steps_total", "Wall-clock steps seen by lease-write (each ended every hold)."},
    {"keep_start_check_wait_seconds", "Wait left of the start check (0 outside it)."},
    {"keep_store_requests_total", "Store requests by operation and classified outcome."},
    {"keep_store_throttled_total",
     "Store replies that throttled the request (503 SlowDown, 429), by operation."},
    {"keep_nodes_listed", "Node objects found by the last listing of nodes/."},
    {"keep_watch_ring", "1 while node-watch runs in ring mode, 0 in full mode."},
    {"keep_watch_list_failures_total", "Listings of nodes/ that failed."},
    {"keep_watch_listing_failing_seconds",
     "How long the listings of nodes/ have been failing (0 while they succeed)."},
    {"keep_list_skipped_keys", "Keys the last listing of nodes/ skipped (not usable by keep)."},
    {"keep_stale_candidates_total", "Stale lines printed by node-watch (fence candidates)."},
    {"keep_fence_candidates_total", "Stale lines received by lease-fence."},
    {"keep_fence_bad_lines_total", "Malformed input lines lease-fence skipped."},
    {"keep_fences_total", "Fences this fencer wrote (peer fencing)."},
    {"keep_holds", "Holds registered in the state directory after the last pass."},
    {"keep_pending_releases", "Releases kept pending after the last pass."},
    {"keep_unresolved_acquires",
     "Acquisitions whose outcome is still unknown after the last pass."},
    {"keep_start_guard_wait_seconds", "Wait left of the start guard (0 once it passed)."},
};

const char *keep_metrics_help(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (strcmp(helps[i].name, name) == 0)
			return helps[i].help;
	return "A keep series (docs/metrics.md).";
}

void keep_metrics_init(struct keep_metrics *m, const char *textfile, const char *node)
{
	memset(m, 0, sizeof(*m));
	if (textfile)
		snprintf(m->path, sizeof(m->path), "%s", textfile);
	snprintf(m->node, sizeof(m->node), "%s", node ? node : "");
}

void keep_metrics_set_prog(struct keep_metrics *m, const char *textfile, const char *prog)
{
	const char *dot, *slash;
	int n;

	if (!textfile || !*textfile) {
		m->path[0] = '\0';
		return;
	}
	dot = strrchr(textfile, '.');
	slash = strrchr(textfile, '/');
	if (!dot || (slash && dot < slash))
		n = snprintf(m->path, sizeof(m->path), "%s.%s", textfile, prog);
	else
		n = snprintf(m->path, sizeof(m->path), "%.*s.%s%s", (int)(dot - textfile), textfile,
			     prog, dot);
	if (n < 0 || (size_t)n >= sizeof(m->path))
		m->path[0] = '\0';
}

void keep_metrics_set_app(struct keep_metrics *m, const char *root)
{
	char path[sizeof(m->path)];
	const char *dot, *slash;
	int n;

	m->app[0] = '\0';
	if (!root || !*root)
		return;
	if (!keep_app_root_valid(root) || strlen(root) >= sizeof(m->app)) {
		m->path[0] = '\0';
		return;
	}
	snprintf(m->app, sizeof(m->app), "%s", root);
	if (!m->path[0])
		return;
	dot = strrchr(m->path, '.');
	slash = strrchr(m->path, '/');
	if (!dot || (slash && dot < slash))
		n = snprintf(path, sizeof(path), "%s.%s", m->path, root);
	else
		n = snprintf(path, sizeof(path), "%.*s.%s%s", (int)(dot - m->path), m->path, root,
			     dot);
	if (n < 0 || (size_t)n >= sizeof(path))
		m->path[0] = '\0';
	else
		memcpy(m->path, path, (size_t)n + 1);
}

static int find(struct keep_metrics *m, const char *name, const char *labels, bool gauge)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->s[i].name, name) == 0 && strcmp(m->s[i].labels, labels) == 0)
			return i;
	if (m->n == KEEP_METRICS_MAX)
		return -1;
	i = m->n++;
	snprintf(m->s[i].name, sizeof(m->s[i].name), "%s", name);
	snprintf(m->s[i].labels, sizeof(m->s[i].labels), "%s", labels);
	m->s[i].gauge = gauge;
	m->s[i].value = 0;
	m->dirty = true; /* a new series is written, whatever its first value */
	return i;
}

void keep_metrics_inc(struct keep_metrics *m, const char *name, int64_t v)
{
	int i = find(m, name, "", false);
	if (i >= 0) {
		m->s[i].value += v;
		m->dirty = true;
	}
}

void keep_metrics_set(struct keep_metrics *m, const char *name, int64_t v)
{
	int i = find(m, name, "", true);
	if (i >= 0 && m->s[i].value != v) {
		m->s[i].value = v;
		m->dirty = true;
	}
}

void keep_metrics_set_ms(struct keep_metrics *m, const char *name, int64_t ms)
{
	int i = find(m, name, "", true);

	if (i < 0)
		return;
	m->s[i].ms = true;
	if (m->s[i].value != ms) {
		m->s[i].value = ms;
		m->dirty = true;
	}
}

void keep_metrics_declare_requests(struct keep_metrics *m)
{
	int op, o;

	for (op = 0; op < KEEP_REQ_OPS; op++)
		for (o = 0; o < KEEP_REQ_OUTCOMES; o++) {
			char labels[96];

			snprintf(labels, sizeof(labels), "op=\"%s\",outcome=\"%s\"",
				 keep_req_op_name(op), keep_outcome_name(o));
			find(m, "keep_store_requests_total", labels, false);
		}
	for (op = 0; op < KEEP_REQ_OPS; op++) {
		char labels[32];

		snprintf(labels, sizeof(labels), "op=\"%s\"", keep_req_op_name(op));
		find(m, "keep_store_throttled_total", labels, false);
	}
}

void keep_metrics_throttled(struct keep_metrics *m, const char *op)
{
	char labels[32];
	int i;

	snprintf(labels, sizeof(labels), "op=\"%s\"", op);
	i = find(m, "keep_store_throttled_total", labels, false);
	if (i >= 0) {
		m->s[i].value++;
		m->dirty = true;
	}
}

void keep_metrics_store(struct keep_metrics *m, const char *op, enum keep_outcome o)
{
	char labels[96];
	int i;

	snprintf(labels, sizeof(labels), "op=\"%s\",outcome=\"%s\"", op, keep_outcome_name(o));
	i = find(m, "keep_store_requests_total", labels, false);
	if (i >= 0) {
		m->s[i].value++;
		m->dirty = true;
	}
}

void keep_metrics_flush(struct keep_metrics *m)
{
	struct keep_buf b;
	int i, j, k;

	if (!m->path[0] || !m->dirty)
		return;
	keep_buf_init(&b, 65536);
	/* one TYPE line per name, its series together (the text format, and
	 * node_exporter, refuse a name's series split by another's) */
	for (i = 0; i < m->n; i++) {
		for (k = 0; k < i && strcmp(m->s[k].name, m->s[i].name) != 0; k++)
			;
		if (k < i)
			continue; /* printed with the first of its name */
		keep_buf_addf(&b, "# HELP %s %s\n# TYPE %s %s\n", m->s[i].name,
			      keep_metrics_help(m->s[i].name), m->s[i].name,
			      m->s[i].gauge ? "gauge" : "counter");
		for (j = i; j < m->n; j++) {
			int64_t v = m->s[j].value;

			if (strcmp(m->s[j].name, m->s[i].name) != 0)
				continue;
			keep_buf_addf(&b, "%s{node=\"%s\"%s%s%s%s%s} ", m->s[j].name, m->node,
				      m->app[0] ? ",app=\"" : "", m->app, m->app[0] ? "\"" : "",
				      m->s[j].labels[0] ? "," : "", m->s[j].labels);
			if (m->s[j].ms) /* seconds, to the ms */
				keep_buf_addf(&b, "%s%" PRId64 ".%03" PRId64 "\n", v < 0 ? "-" : "",
					      (v < 0 ? -(v / 1000) : v / 1000),
					      (v < 0 ? -(v % 1000) : v % 1000));
			else
				keep_buf_addf(&b, "%" PRId64 "\n", v);
		}
	}
	/* no fsync: a textfile lost in a crash loses nothing (docs/metrics.md) */
	if (keep_write_replace(m->path, b.data ? b.data : "", b.len) == 0)
		m->dirty = false;
	keep_buf_release(&b);
}

void keep_metrics_release(struct keep_metrics *m)
{
	keep_metrics_flush(m);
}

/* ---- request accounting ------------------------------------------------------ */

void keep_reqstats_init(struct keep_reqstats *st)
{
	int i, j;

	for (i = 0; i < KEEP_REQ_OPS; i++) {
		for (j = 0; j < KEEP_REQ_OUTCOMES; j++)
			atomic_store_explicit(&st->n[i][j], 0, memory_order_relaxed);
		atomic_store_explicit(&st->throttled[i], 0, memory_order_relaxed);
	}
}

const char *keep_req_op_name(enum keep_req_op op)
{
	static const char *names[KEEP_REQ_OPS] = {"get", "head", "put", "delete", "list"};

	return (unsigned)op < KEEP_REQ_OPS ? names[op] : "get";
}

void keep_reqstats_add(struct keep_reqstats *st, enum keep_req_op op, enum keep_outcome o)
{
	if ((unsigned)op >= KEEP_REQ_OPS || (unsigned)o >= KEEP_REQ_OUTCOMES)
		return;
	atomic_fetch_add_explicit(&st->n[op][o], 1, memory_order_relaxed);
}

void keep_reqstats_throttled(struct keep_reqstats *st, enum keep_req_op op)
{
	if ((unsigned)op < KEEP_REQ_OPS)
		atomic_fetch_add_explicit(&st->throttled[op], 1, memory_order_relaxed);
}

int64_t keep_reqstats_throttled_op(const struct keep_reqstats *st, enum keep_req_op op)
{
	if ((unsigned)op >= KEEP_REQ_OPS)
		return 0;
	return atomic_load_explicit(&((struct keep_reqstats *)st)->throttled[op],
				    memory_order_relaxed);
}

static int64_t cell(const struct keep_reqstats *st, int op, int o)
{
	return atomic_load_explicit(&((struct keep_reqstats *)st)->n[op][o], memory_order_relaxed);
}

int64_t keep_reqstats_op(const struct keep_reqstats *st, enum keep_req_op op)
{
	int64_t t = 0;
	int o;

	for (o = 0; o < KEEP_REQ_OUTCOMES; o++)
		t += cell(st, op, o);
	return t;
}

int64_t keep_reqstats_outcome(const struct keep_reqstats *st, enum keep_outcome o)
{
	int64_t t = 0;
	int op;

	for (op = 0; op < KEEP_REQ_OPS; op++)
		t += cell(st, op, o);
	return t;
}

int64_t keep_reqstats_total(const struct keep_reqstats *st)
{
	int64_t t = 0;
	int op;

	for (op = 0; op < KEEP_REQ_OPS; op++)
		t += keep_reqstats_op(st, op);
	return t;
}

void keep_reqstats_format(const struct keep_reqstats *st, struct keep_buf *out)
{
	static const char *onames[KEEP_REQ_OUTCOMES] = {"ok", "conflict", "not_found", "refused",
							"ambiguous"};
	int i;

	keep_buf_reset(out);
	keep_buf_addf(out, "stats requests=%" PRId64, keep_reqstats_total(st));
	for (i = 0; i < KEEP_REQ_OPS; i++)
		keep_buf_addf(out, " %s=%" PRId64, keep_req_op_name(i), keep_reqstats_op(st, i));
	for (i = 0; i < KEEP_REQ_OUTCOMES; i++)
		keep_buf_addf(out, " %s=%" PRId64, onames[i], keep_reqstats_outcome(st, i));
}

void keep_reqstats_print(const struct keep_reqstats *st, const char *prog)
{
	struct keep_buf b;

	keep_buf_init(&b, 1024);
	keep_reqstats_format(st, &b);
	fprintf(stderr, "%s prog=%s\n", b.data ? b.data : "stats", prog);
	fflush(stderr);
	keep_buf_release(&b);
}

void keep_reqstats_to_metrics(const struct keep_reqstats *st, struct keep_metrics *m)
{
	int op, o;

	for (op = 0; op < KEEP_REQ_OPS; op++)
		for (o = 0; o < KEEP_REQ_OUTCOMES; o++) {
			char labels[96];
			int64_t v = cell(st, op, o);
			int i;

			if (!v)
				continue;
			snprintf(labels, sizeof(labels), "op=\"%s\",outcome=\"%s\"",
				 keep_req_op_name(op), keep_outcome_name(o));
			i = find(m, "keep_store_requests_total", labels, false);
			if (i >= 0 && m->s[i].value != v) {
				m->s[i].value = v;
				m->dirty = true;
			}
		}
	for (op = 0; op < KEEP_REQ_OPS; op++) {
		char labels[32];
		int64_t v = keep_reqstats_throttled_op(st, op);
		int i;

		snprintf(labels, sizeof(labels), "op=\"%s\"", keep_req_op_name(op));
		i = find(m, "keep_store_throttled_total", labels, false);
		if (i >= 0 && m->s[i].value != v) {
			m->s[i].value = v;
			m->dirty = true;
		}
	}
}
