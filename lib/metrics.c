/* keep — Prometheus textfile metrics (see metrics.h). */
#include "metrics.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "statedir.h"

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
		keep_buf_addf(&b, "# TYPE %s %s\n", m->s[i].name,
			      m->s[i].gauge ? "gauge" : "counter");
		for (j = i; j < m->n; j++)
			if (strcmp(m->s[j].name, m->s[i].name) == 0)
				keep_buf_addf(&b, "%s{node=\"%s\"%s%s} %" PRId64 "\n", m->s[j].name,
					      m->node, m->s[j].labels[0] ? "," : "", m->s[j].labels,
					      m->s[j].value);
	}
	if (keep_write_atomic(m->path, b.data ? b.data : "", b.len) == 0)
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

	for (i = 0; i < KEEP_REQ_OPS; i++)
		for (j = 0; j < KEEP_REQ_OUTCOMES; j++)
			atomic_store_explicit(&st->n[i][j], 0, memory_order_relaxed);
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
}
