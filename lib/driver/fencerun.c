/* keep — lease-fence's driver: performs the fencer machine's actions
 * (lib/core/fencer.h) on the store and the lease state file, prints its
 * answer lines, and runs the peer mode's stdin reader, queue and fence
 * threads (ADR 0020 §2; docs/fencing.md). Reads the clocks, moves bytes
 * and prints; decides nothing. */
#include "fencerun.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/exitcode.h"
#include "../local/holds.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "../platform/log.h"
#include "cli.h"
#include "staleline.h"
#include "storecmd.h"

static struct keep_fencerun *F; /* the one run of this process */

/* Under F->pool.lock: the request counters into the metrics, and the file. */
void keep_fencerun_flush(void)
{
	keep_reqstats_to_metrics(&F->stats, &F->metrics);
	keep_metrics_flush(&F->metrics);
}

static void metric_inc(const char *name)
{
	keep_pool_lock(&F->pool);
	keep_metrics_inc(&F->metrics, name, 1);
	keep_fencerun_flush();
	keep_pool_unlock(&F->pool);
}

/* This node's lease now, from its lease state file
 * (keep_lease_state_fencer_view). */
static void own_lease(struct keep_fencer *me)
{
	struct keep_lease_state st;
	bool ok = keep_lease_state_read(F->node_dir, &st) == 0;
	/* on the boot clock read after the file (as node-watch does): the
	 * answer is about the moment it is given, never an earlier one
	 * (docs/lease.md "Answers are about the moment they are given") */
	int64_t now = keep_boot_ms();

	keep_lease_state_fencer_view(ok ? &st : NULL, F->cfg.node_id, now, F->boot_id, me);
}

/* Wait until until_mono_ms on the boot clock unless the input ends or a
 * signal stops us first (true: the time came). The pool's feeder condition
 * runs on CLOCK_MONOTONIC: slices of at most 200 ms, each followed by a
 * look at the boot clock, so a suspend never stretches it; the end of the
 * input (keep_pool_close) wakes it. */
static bool wait_until(int64_t until_mono_ms)
{
	bool ok;

	keep_pool_lock(&F->pool);
	while (!F->q.eof && !keep_stop_flag && keep_boot_ms() < until_mono_ms) {
		int64_t rest = until_mono_ms - keep_boot_ms();

		keep_pool_wait(&F->pool, rest < 200 ? rest : 200);
	}
	ok = !F->q.eof && !keep_stop_flag;
	keep_pool_unlock(&F->pool);
	return ok;
}

static void print_event(const struct keep_fencer_event *e)
{
	struct keep_buf b;

	if (e->kind == KEEP_FNE_INFO) {
		keep_info(F->prog, "%s", e->text);
		return;
	}
	if (e->landed)
		metric_inc("keep_fences_total");
	keep_line_begin(&b, e->type);
	keep_line_str(&b, "node", e->node);
	keep_line_str(&b, "instance", e->instance[0] ? e->instance : NULL);
	if (e->written_at_ms)
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
	else
		keep_line_str(&b, "written_at_ms", NULL);
	if (e->free_at_ms)
		keep_line_int(&b, "free_at_ms", e->free_at_ms);
	if (e->fenced_by[0])
		keep_line_str(&b, "fenced_by", e->fenced_by);
	if (e->reason)
		keep_line_str(&b, "reason", e->reason);
	if (e->at) {
		keep_line_int(&b, "decided_mono_ms", e->decided_mono_ms);
		keep_line_int(&b, "live_since_mono_ms", e->live_since_mono_ms);
	}
	keep_line_end(&b);
}

/* Run one fence (lib/core/fencer.h) to its end on store s: perform each
 * action, print each event. */
static void run_fence(struct keep_store *s, struct keep_fencer_m *m)
{
	for (;;) {
		struct keep_fencer_action a;
		struct keep_fencer_event e;
		struct keep_walls now;
		struct keep_reply r;

		keep_walls_cfg(&F->cfg, &now);
		keep_fencer_next(m, keep_boot_ms(), &now, &a);
		keep_store_set_timeout(s, a.timeout_ms);
		if (a.kind == KEEP_FNA_DONE ||
		    (a.kind == KEEP_FNA_WAIT && !wait_until(a.until_mono_ms)))
			return;
		if (a.kind == KEEP_FNA_LEASE) {
			struct keep_fencer me;

			own_lease(&me);
			keep_walls_cfg(&F->cfg,
				       &now); /* judged on the judging clock, dated on the wall */
			keep_fencer_on_lease(m, &me, &now);
		} else if (a.kind == KEEP_FNA_READ) {
			struct keep_node_obj obj;
			struct keep_node_read nr;

			keep_node_read(s, a.node, KEEP_NODE_READ_ANY_FORMAT, &obj, &nr);
			if (nr.reply.outcome == KEEP_STORE_OK && nr.derr)
				keep_warn(F->prog, "nodes/%s is not a valid node object: %s",
					  a.node, nr.why);
			else if (nr.reply.outcome != KEEP_STORE_OK &&
				 nr.reply.outcome != KEEP_STORE_NOT_FOUND)
				keep_warn(F->prog, "unable to read nodes/%s: %s", a.node, nr.why);
			keep_walls_cfg(&F->cfg, &now);
			keep_fencer_on_read(
			    m,
			    &(struct keep_fencer_read){nr.reply.outcome, nr.reply.not_ours,
						       nr.reply.version, nr.reply.detail,
						       nr.derr ? NULL : &obj, nr.derr},
			    &now);
		} else if (a.kind == KEEP_FNA_WRITE) {
			keep_node_write(s, &a.obj, a.cond, a.if_match, &r);
			if (r.outcome != KEEP_STORE_OK)
				keep_warn(F->prog, "fence of nodes/%s: %s: %s", a.node,
					  keep_outcome_name(r.outcome),
					  r.detail[0] ? r.detail : "-");
			keep_fencer_on_write(m, r.outcome, r.detail);
		} else if (a.kind == KEEP_FNA_LIST) {
			struct keep_list l;
			const char **keys;
			size_t i;

			keep_list_init(&l);
			keep_store_list(s, "nodes/", &l, &r);
			keys = calloc(l.n ? l.n : 1, sizeof(*keys));
			for (i = 0; keys && i < l.n; i++)
				keys[i] = l.v[i].key;
			keep_fencer_on_list(m, keys ? r.outcome : KEEP_STORE_REFUSED,
					    keys ? r.detail : "no memory", keys, l.n);
			free(keys);
			keep_list_release(&l);
		}
		while (keep_fencer_poll_event(m, &e))
			print_event(&e);
	}
}

int keep_fencerun_operator(struct keep_store *s, const char *node, bool create)
{
	struct keep_fencer_cfg cfg = {
	    .mode = KEEP_FENCER_OPERATOR, .t = F->cfg.timing, .create = create};
	struct keep_fencer_m m;

	snprintf(cfg.node, sizeof(cfg.node), "%s", node);
	keep_fencer_init(&m, &cfg);
	run_fence(s, &m);
	if (m.text[0])
		keep_log(KEEP_LOG_FATAL, F->prog, "%s", m.text);
	return m.exit_code;
}

/* ---- peer mode ------------------------------------------------------------------- */

/* A fence thread's context: its store handle and the fence it runs. */
struct worker {
	struct keep_store *s; /* borrowed */
	struct keep_fencer_cfg cfg;
};

/* The pool's take (under its lock): the fencer queue's next node
 * (keep_fencer_queue_take: one fence per node at a time). */
static bool take(void *queue, void *ctx)
{
	struct worker *w = ctx;

	return keep_fencer_queue_take(queue, &w->cfg.st);
}

/* The pool's run: one peer fence, then the queue hears it ended. */
static void run(void *ctx)
{
	struct worker *w = ctx;
	struct keep_fencer_m m;

	keep_fencer_init(&m, &w->cfg);
	run_fence(w->s, &m);
	keep_pool_lock(&F->pool);
	keep_fencer_queue_done(&F->q, w->cfg.st.node);
	keep_fencerun_flush();
	keep_pool_unlock(&F->pool);
	w->cfg.st.node[0] = '\0';
}

/* Write STATE_DIR/ID/fence, the reader's heartbeat (one line, the
 * stdout line format; docs/formats.md "The fence state"):
 *   fence node=ID pid=P boot=B updated_mono_ms=U lines=N
 * updated_mono_ms: now on the boot clock; lines: input lines read. */
static void write_fence_state(size_t lines)
{
	char path[sizeof(F->node_dir) + 16];
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, "fence");
	keep_line_str(&b, "node", F->cfg.node_id);
	keep_line_int(&b, "pid", (int64_t)getpid());
	keep_line_str(&b, "boot", F->boot_id);
	keep_line_int(&b, "updated_mono_ms", keep_boot_ms());
	keep_line_int(&b, "lines", (int64_t)lines);
	keep_buf_add(&b, "\n", 1);
	snprintf(path, sizeof(path), "%s/fence", F->node_dir);
	if (keep_mkdirs(F->node_dir) != 0 || keep_write_atomic(path, b.data, b.len) != 0)
		keep_warn(F->prog, "unable to write '%s': %s", path, strerror(errno));
	keep_buf_release(&b);
}

/* Wait for input on stdin, up to the next heartbeat: the fence state is
 * rewritten once per heartbeat period while this reader runs, with input
 * or without (a stopped or stuck lease-fence is seen by its age, not only
 * by its absence; docs/operations.md "Readiness"). 1: input (or EOF) to
 * read; 0: stop. stdin is unbuffered (keep_fencerun_peer), so poll sees every byte
 * not yet read; the input is node-watch's, whole lines. */
static int wait_input(int64_t *next_beat, size_t lines)
{
	for (;;) {
		struct pollfd p = {.fd = 0, .events = POLLIN};
		int64_t now = keep_boot_ms(), left;
		int pr;

		if (keep_stop_flag)
			return 0;
		if (now >= *next_beat) {
			write_fence_state(lines);
			*next_beat = now + F->cfg.timing.period_ms;
		}
		left = *next_beat - now;
		pr = poll(&p, 1, left > 0 ? (int)left : 0);
		if (pr > 0)
			return 1;
		if (pr < 0 && errno != EINTR)
			return 1; /* let the read report it */
	}
}

int keep_fencerun_peer(struct keep_store **stores)
{
	struct worker w[KEEP_FENCE_CONCURRENCY];
	void *wctx[KEEP_FENCE_CONCURRENCY];
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int64_t next_beat = 0;
	ssize_t got;
	int i;

	/* one read(2) per byte: the input is a few short lines a period, and
	 * poll(2) then never misses a line already in a stdio buffer */
	setvbuf(stdin, NULL, _IONBF, 0);
	for (i = 0; i < KEEP_FENCE_CONCURRENCY; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].s = stores[i];
		w[i].cfg.mode = KEEP_FENCER_PEER;
		w[i].cfg.t = F->cfg.timing;
		snprintf(w[i].cfg.self, sizeof(w[i].cfg.self), "%s", F->cfg.node_id);
		wctx[i] = &w[i];
	}
	if (keep_pool_start(&F->pool, KEEP_FENCE_CONCURRENCY, wctx, &F->q, take, run) !=
	    KEEP_FENCE_CONCURRENCY)
		keep_die(KEEP_EXIT_TEMP, F->prog, "unable to start a fence thread");
	while (wait_input(&next_beat, lineno) && (got = getline(&line, &cap, stdin)) >= 0) {
		struct keep_stale st;
		struct keep_fencer_event skipped;
		char err[256];
		size_t len = (size_t)got;
		bool taken;
		int rc;

		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		rc = keep_stale_line_decode(line, len, &st, err, sizeof(err));
		if (rc < 0) {
			keep_warn(F->prog, "input line %zu: %s: skipped", lineno, err);
			metric_inc("keep_fence_bad_lines_total");
			continue;
		}
		if (rc == 0)
			continue;
		metric_inc("keep_fence_candidates_total");
		keep_pool_lock(&F->pool);
		taken = keep_fencer_queue_admit(&F->q, &st, &skipped);
		if (taken)
			keep_pool_wake(&F->pool);
		keep_pool_unlock(&F->pool);
		if (!taken)
			print_event(&skipped);
	}
	free(line);
	keep_pool_lock(&F->pool);
	F->q.eof = true;
	keep_pool_unlock(&F->pool);
	keep_pool_close(&F->pool); /* fences queued still run; their waits end now */
	return KEEP_EXIT_OK;
}

void keep_fencerun_init(struct keep_fencerun *f, const char *prog_name)
{
	memset(f, 0, sizeof(*f));
	F = f;
	f->prog = prog_name;
	keep_pool_init(&f->pool);
	keep_reqstats_init(&f->stats);
}
