/* keep — Prometheus textfile metrics (see metrics.h). */
#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
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
