/* keep — running the ownership machines on a node (ownrun.h). */
#include "ownrun.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../local/holds.h"
#include "../local/metrics.h"
#include "../local/runlock.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "../platform/pool.h"
#include "cli.h"
#include "storecmd.h"
#include "upgrade.h"

/* ---- one action --------------------------------------------------------------- */

static void lease_view(const char *node_dir, struct keep_lease_view *v)
{
	struct keep_lease_state st;

	memset(v, 0, sizeof(*v));
	v->code = keep_holds_lease(node_dir, 0, &st); /* the boot clock read after the file */
	v->lost = strcmp(st.phase, "lost") == 0;
	snprintf(v->instance, sizeof(v->instance), "%s", st.instance);
	v->lapses = st.lapses;
	v->draining = st.instance[0] && keep_draining(node_dir, st.instance);
}

/* The cluster object, as this process read it (KEEP_OACT_CLUSTER_READ):
 * read once a process; threads (owner-acquire --jobs) wait for the first
 * read. A read that failed (timeout, 5xx, refused) is not kept: that
 * acquisition takes the marker path and a later one reads again. */
static pthread_mutex_t cluster_mu = PTHREAD_MUTEX_INITIALIZER;
static bool cluster_known;
static enum keep_cluster_view cluster_view;

static void cluster_read(struct keep_store *store, int64_t timeout_ms, struct keep_oreply *r)
{
	struct keep_buf body;
	struct keep_reply rep;
	struct keep_cluster_obj o;
	enum keep_cluster_read v;
	char why[81]; /* a reason of at most 80 bytes on stderr */

	pthread_mutex_lock(&cluster_mu);
	if (!cluster_known) {
		keep_buf_init(&body, KEEP_BODY_MAX);
		keep_store_set_timeout(store, timeout_ms);
		keep_store_get_ours(store, KEEP_CLUSTER_KEY, &body, &rep);
		v = keep_cluster_judge(rep.outcome, rep.not_ours, rep.detail, body.data, body.len,
				       &o, why, sizeof(why));
		cluster_view = keep_cluster_first_record_view(v, &cluster_known);
		if (v == KEEP_CLUSTER_READ_BAD)
			snprintf(r->detail, sizeof(r->detail),
				 "the object '" KEEP_CLUSTER_KEY
				 "' is not a keep cluster object (%s)",
				 why);
		keep_buf_release(&body);
	}
	r->outcome = KEEP_STORE_OK;
	r->cluster = cluster_known ? cluster_view : KEEP_CLUSTER_NOT_NATIVE;
	pthread_mutex_unlock(&cluster_mu);
}

static void store_reply(struct keep_oreply *r, const struct keep_reply *rep)
{
	r->outcome = rep->outcome;
	snprintf(r->version, sizeof(r->version), "%s", rep->version);
	snprintf(r->detail, sizeof(r->detail), "%s", rep->detail);
}

void keep_ownio_perform(const struct keep_ownio *io, int *lock_fd, const struct keep_oact *act,
			struct keep_oreply *r)
{
	struct keep_reply rep;
	struct keep_node_read nr;
	struct keep_owner_read orr;
	struct keep_hold *hs = NULL;
	struct keep_pending *ps = NULL;
	size_t nh = 0, np = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&rep, 0, sizeof(rep));
	errno = 0;
	switch (act->kind) {
	case KEEP_OACT_LOCK:
		/* bounded by the machine (issue 23 item 3); errno ETIMEDOUT when
		 * another process still held it at the bound */
		r->failed =
		    keep_holds_lock_ms(io->node_dir, act->key, act->timeout_ms, lock_fd) != 0;
		break;
	case KEEP_OACT_UNLOCK:
		keep_holds_unlock(*lock_fd);
		*lock_fd = -1;
		break;
	case KEEP_OACT_LEASE:
		lease_view(io->node_dir, &r->lease);
		break;
	case KEEP_OACT_HOLD_READ:
		r->hold_rc = keep_hold_read(io->node_dir, act->key, &r->hold);
		break;
	case KEEP_OACT_HOLD_WRITE:
		r->sd = keep_hold_write(io->node_dir, &act->hold);
		break;
	case KEEP_OACT_HOLD_REMOVE:
		r->sd = keep_hold_remove(io->node_dir, act->key);
		break;
	case KEEP_OACT_HOLDS_SYNC:
		r->sd = keep_holds_sync(io->node_dir);
		break;
	case KEEP_OACT_PEND_READ:
		/* unsure counts as present: the safe answer (no regrant, no
		 * release of a stale copy) */
		rc = keep_pending_read(io->node_dir, &act->pend, &r->pend_now);
		r->exists = rc != 1;
		if (rc != 0)
			r->pend_now = act->pend;
		break;
	case KEEP_OACT_PEND_WRITE:
		r->sd = keep_pending_write(io->node_dir, &act->pend);
		break;
	case KEEP_OACT_PEND_REMOVE:
		r->sd = keep_pending_remove(io->node_dir, &act->pend);
		break;
	case KEEP_OACT_DRAIN_MARK:
		r->sd = keep_drain_mark(io->node_dir, act->pend.instance);
		break;
	case KEEP_OACT_LIST: {
		struct keep_run_entry *rs = NULL;
		size_t nrun = 0;

		if (keep_holds_list(io->node_dir, &hs, &nh, NULL) != 0 ||
		    keep_pending_list(io->node_dir, &ps, &np, NULL) != 0) {
			r->failed = true;
			r->err = errno;
			free(hs);
			free(ps);
			return;
		}
		/* runs/ unreadable: no run listed (no orphaned job swept this
		 * pass; every release still stops its key's job first) */
		if (keep_runs_list(io->node_dir, &rs, &nrun) != 0)
			nrun = 0;
		r->holds = hs;
		r->nholds = nh;
		r->pend = ps;
		r->npend = np;
		r->runs = rs;
		r->nruns = nrun;
		break;
	}
	case KEEP_OACT_REC_READ:
		keep_store_set_timeout(io->store, act->timeout_ms);
		keep_owner_read(io->store, act->key, &r->rec, &orr);
		store_reply(r, &orr.reply);
		r->decode_err = orr.derr;
		if (orr.derr)
			snprintf(r->detail, sizeof(r->detail), "%s", orr.why);
		break;
	case KEEP_OACT_REC_WRITE:
		keep_store_set_timeout(io->store, act->timeout_ms);
		keep_owner_put(io->store, act->key, &act->rec, act->cond, act->if_match, &rep);
		store_reply(r, &rep);
		break;
	case KEEP_OACT_NODE_READ:
		keep_store_set_timeout(io->store, act->timeout_ms);
		keep_node_read(io->store, act->node, KEEP_NODE_READ_ANY_FORMAT, &r->node, &nr);
		store_reply(r, &nr.reply);
		r->decode_err = nr.derr;
		if (nr.derr)
			snprintf(r->detail, sizeof(r->detail), "%s", nr.why);
		break;
	case KEEP_OACT_CLUSTER_READ:
		cluster_read(io->store, act->timeout_ms, r);
		break;
	case KEEP_OACT_MARK_READ:
	case KEEP_OACT_MARK_WRITE:
	case KEEP_OACT_KEYS_MAX:
		keep_store_set_timeout(io->store, act->timeout_ms);
		keep_upgrade_store_act(io->store, act, r);
		break;
	case KEEP_OACT_RUN_PROBE:
		keep_run_probe(io->node_dir, act->key, &r->run);
		break;
	case KEEP_OACT_RUN_SIGNAL: {
		struct keep_run_sig rs;

		if (keep_run_signal(io->node_dir, act->key,
				    act->sig == KEEP_JOBSTOP_KILL ? SIGKILL : SIGTERM, &rs) != 0)
			r->err = errno;
		r->npids = rs.npids;
		r->nrefused = rs.failed;
		r->pid = rs.pid;
		break;
	}
	case KEEP_OACT_NONE:
	case KEEP_OACT_WAIT:
	case KEEP_OACT_DONE:
		break;
	}
	if (r->sd != KEEP_SD_DURABLE || r->failed)
		r->err = errno;
}

void keep_ownio_reply_release(struct keep_oreply *r)
{
	free((void *)r->holds);
	free((void *)r->pend);
	free((void *)r->runs);
	r->holds = NULL;
	r->pend = NULL;
	r->runs = NULL;
	r->nholds = r->npend = r->nruns = 0;
}

void keep_acquire_run(struct keep_acquire *sm, const struct keep_ownio *io)
{
	struct keep_oact act;
	struct keep_oreply r;
	int fd = -1;

	for (;;) {
		keep_acquire_next(sm, keep_boot_ms(), keep_judge_wall_ms(io->node_dir), &act);
		if (act.kind == KEEP_OACT_DONE || act.kind == KEEP_OACT_NONE)
			break;
		keep_ownio_perform(io, &fd, &act, &r);
		keep_acquire_on_reply(sm, keep_boot_ms(), keep_judge_wall_ms(io->node_dir), &r);
		keep_ownio_reply_release(&r);
	}
	keep_holds_unlock(fd); /* only if a failure left it taken */
}

/* ---- the resolver, with workers --------------------------------------------------- */

struct run {
	struct keep_resolver *r;
	const char *node_dir;
	keep_res_event_fn fn;
	void *ctx;
	struct keep_pool pool; /* its lock guards r, queue and nq */
	struct keep_oact queue[KEEP_RES_SLOTS + 1];
	size_t nq;
	int lock_fd[KEEP_RES_SLOTS + 1];
};

/* A worker's context: its store handle and the action it performs. */
struct worker {
	struct run *run;
	struct keep_store *store; /* borrowed */
	struct keep_oact act;
};

static void flush_events(struct run *run)
{
	struct keep_res_event ev;

	while (keep_resolver_poll_event(run->r, &ev))
		if (run->fn)
			run->fn(run->ctx, &ev);
}

/* Perform act (without the lock), then hand the reply back (with it). */
static void do_one(struct run *run, struct keep_store *store, const struct keep_oact *act)
{
	struct keep_ownio io = {run->node_dir, store};
	struct keep_oreply rp;
	int slot = act->slot < 0 || act->slot > KEEP_RES_SLOTS ? KEEP_RES_SLOTS : act->slot;

	/* a release's wait for the key's job is the machine's own RUN step
	 * (KEEP_JP_RUN), bounded by its deadline like its other steps */
	keep_ownio_perform(&io, &run->lock_fd[slot], act, &rp);
	keep_pool_lock(&run->pool);
	keep_resolver_on_reply(run->r, act->slot, keep_boot_ms(), keep_judge_wall_ms(run->node_dir),
			       &rp);
	flush_events(run);
	keep_pool_unlock(&run->pool); /* the pool then wakes the main loop */
	keep_ownio_reply_release(&rp);
}

/* The pool's take (under its lock): the oldest action queued. */
static bool take(void *queue, void *ctx)
{
	struct run *run = queue;
	struct worker *w = ctx;

	if (!run->nq)
		return false;
	w->act = run->queue[0];
	memmove(run->queue, run->queue + 1, --run->nq * sizeof(run->queue[0]));
	return true;
}

/* The pool's run: one action. */
static void run_act(void *ctx)
{
	struct worker *w = ctx;

	do_one(w->run, w->store, &w->act);
}

/* Wait on the pool's feeder condition until the boot clock reads until_ms
 * (ms), at most 100 ms (so a signal is noticed, and a suspend never
 * stretches the wait: the condition runs on CLOCK_MONOTONIC,
 * lib/platform/clock.h). Called with the lock held. */
static void main_wait(struct run *run, int64_t until_ms)
{
	int64_t left = keep_sub_sat_ms(until_ms, keep_boot_ms());

	if (left > 100 || until_ms == 0)
		left = 100;
	keep_pool_wait(&run->pool, left);
}

void keep_resolver_run(struct keep_resolver *r, const char *node_dir,
		       struct keep_store *const *stores, int workers, volatile sig_atomic_t *stop,
		       keep_res_event_fn fn, void *ctx)
{
	struct run run;
	struct worker w[KEEP_RES_SLOTS];
	void *wctx[KEEP_RES_SLOTS];
	struct keep_oact act;
	bool stopped = false;
	int i, started = 0;

	memset(&run, 0, sizeof(run));
	run.r = r;
	run.node_dir = node_dir;
	run.fn = fn;
	run.ctx = ctx;
	for (i = 0; i <= KEEP_RES_SLOTS; i++)
		run.lock_fd[i] = -1;
	if (workers < 1)
		workers = 1;
	if (workers > KEEP_RES_SLOTS)
		workers = KEEP_RES_SLOTS;
	keep_pool_init(&run.pool);
	if (workers > 1) {
		for (i = 0; i < workers; i++) {
			w[i] = (struct worker){.run = &run, .store = stores[i]};
			wctx[i] = &w[i];
		}
		started = keep_pool_start(&run.pool, workers, wctx, &run, take, run_act);
		if (started == 0)
			keep_die(KEEP_EXIT_TEMP, NULL, "unable to start a thread");
	}
	keep_pool_lock(&run.pool);
	for (;;) {
		if (stop && *stop && !stopped) {
			keep_resolver_stop(r);
			stopped = true;
		}
		keep_resolver_next(r, keep_boot_ms(), keep_judge_wall_ms(node_dir), &act);
		flush_events(&run);
		if (act.kind == KEEP_OACT_DONE)
			break;
		if (act.kind == KEEP_OACT_NONE) {
			main_wait(&run, 0);
			continue;
		}
		if (act.kind == KEEP_OACT_WAIT) {
			if (started == 0) {
				/* one thread: nothing can arrive but a signal */
				keep_pool_unlock(&run.pool);
				keep_sleep_until_boot(act.until_mono_ms < keep_boot_ms() + 100
							  ? act.until_mono_ms
							  : keep_boot_ms() + 100);
				keep_pool_lock(&run.pool);
			} else {
				main_wait(&run, act.until_mono_ms);
			}
			continue;
		}
		if (started == 0) {
			keep_pool_unlock(&run.pool);
			do_one(&run, stores[0], &act);
			keep_pool_lock(&run.pool);
			continue;
		}
		run.queue[run.nq++] = act;
		keep_pool_wake(&run.pool);
	}
	keep_pool_unlock(&run.pool);
	keep_pool_close(&run.pool);
	for (i = 0; i <= KEEP_RES_SLOTS; i++)
		keep_holds_unlock(run.lock_fd[i]);
	keep_pool_destroy(&run.pool);
}

/* ---- what owner-acquire and owner-release share ---------------------------------- */

void keep_owncmd_setup(struct keep_owncmd *x, const struct keep_cli *cli,
		       struct keep_reqstats *stats, int nstores, struct keep_store **stores)
{
	int i;

	struct keep_lease_state st;

	keep_cli_setup(cli, &x->cfg, KEEP_NEED_NODE | KEEP_NEED_STORE);
	if (keep_config_node_dir(&x->cfg, x->node_dir, sizeof(x->node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, cli->prog, "state directory path too long");
	x->never_ran = keep_lease_state_read(x->node_dir, &st) == KEEP_ERR_IO && errno == ENOENT;
	if (!(x->never_ran && x->keep_absent))
		keep_cli_node_dir(cli, &x->cfg, x->node_dir, sizeof(x->node_dir));
	for (i = 0; i < nstores; i++)
		stores[i] = keep_store_open_or_die(cli->prog, &x->cfg, stats);
	x->store = stores[0];
	x->store_timeout_ms = x->cfg.s3_timeout_ms > 0 ? x->cfg.s3_timeout_ms : 10000;
}

void keep_owncmd_warn_never_ran(const struct keep_owncmd *x, const char *prog)
{
	if (x->never_ran)
		keep_warn(prog,
			  "no lease state for node %s in '%s': no node ran here under this id "
			  "and state directory (check --node-id and --state-dir; is keep-agent "
			  "or lease-write running for this node?)",
			  x->cfg.node_id, x->node_dir);
}

int keep_acquire_never_ran(const char *prog, const char *key)
{
	struct keep_buf b;

	if (!keep_owner_key_valid(key))
		return keep_cli_invalid_key(prog, key);
	keep_line_begin(&b, "refused");
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "reason", "lease-not-valid");
	keep_line_end(&b);
	return KEEP_EXIT_NOT_LIVE;
}

int keep_owncmd_batch(const struct keep_owncmd *x, int jobs, struct keep_store *const *stores,
		      int (*fn)(void *ctx, const char *key), const char *prog)
{
	struct keep_owncmd xs[KEEP_BATCH_JOBS_MAX];
	void *ctxs[KEEP_BATCH_JOBS_MAX];
	int i;

	if (jobs < 1)
		jobs = 1;
	if (jobs > KEEP_BATCH_JOBS_MAX)
		jobs = KEEP_BATCH_JOBS_MAX;
	for (i = 0; i < jobs; i++) {
		xs[i] = *x;
		xs[i].store = stores[i];
		ctxs[i] = &xs[i];
	}
	return keep_batch_run(stdin, jobs, ctxs, fn, prog);
}

int keep_owncmd_keys(const struct keep_owncmd *x, int n, char *const *keys, int jobs,
		     struct keep_store *const *stores, int (*fn)(void *ctx, const char *key),
		     const char *prog)
{
	struct keep_owncmd one = *x;
	int i, worst = 0;

	if (n == 0) /* keys on stdin: worker i has its own store connection */
		return keep_owncmd_batch(x, jobs, stores, fn, prog);
	for (i = 0; i < n; i++)
		keep_exit_worst(&worst, fn(&one, keys[i]));
	return worst;
}

void keep_owncmd_resolver_cfg(const struct keep_owncmd *x, enum keep_res_mode mode,
			      struct keep_resolver_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->t = x->cfg.timing;
	c->timeout_ms = x->store_timeout_ms;
	c->concurrency = KEEP_PENDING_CONCURRENCY;
	c->backoff = mode == KEEP_RES_FOLLOW || mode == KEEP_RES_DRAIN;
}

void keep_res_event_line(const struct keep_res_event *ev)
{
	struct keep_buf b;

	if (ev->kind == KEEP_REV_WARN || ev->kind == KEEP_REV_PASS)
		return;
	keep_line_begin(&b, keep_res_event_name(ev->kind));
	keep_line_str(&b, "key", ev->key);
	if (ev->generation > 0)
		keep_line_int(&b, "generation", ev->generation);
	if (ev->kind == KEEP_REV_PENDING)
		keep_line_str(&b, "version", ev->version);
	else if (ev->reason)
		keep_line_str(&b, "reason", ev->reason);
	keep_line_end(&b);
}

void keep_owncmd_gauges(const char *node_dir, struct keep_metrics *m,
			const struct keep_reqstats *stats)
{
	struct keep_hold *holds = NULL;
	struct keep_pending *pend = NULL;
	size_t nh = 0, np = 0, i;
	int64_t releases = 0, acquires = 0;

	if (keep_holds_list(node_dir, &holds, &nh, NULL) == 0)
		keep_metrics_set(m, "keep_holds", (int64_t)nh);
	if (keep_pending_list(node_dir, &pend, &np, NULL) == 0) {
		for (i = 0; i < np; i++) {
			if (pend[i].kind == KEEP_PENDING_ACQUIRE)
				acquires++;
			else
				releases++;
		}
		keep_metrics_set(m, "keep_pending_releases", releases);
		keep_metrics_set(m, "keep_unresolved_acquires", acquires);
	}
	free(holds);
	free(pend);
	keep_reqstats_to_metrics(stats, m);
	keep_metrics_flush(m);
}

/* Sleep on the boot clock until until_ms, in steps of at most 100 ms so a
 * stop is noticed; false when *stop ended it. */
static bool wait_sleep(int64_t until_ms, volatile sig_atomic_t *stop)
{
	int64_t now;

	while ((now = keep_boot_ms()) < until_ms) {
		if (stop && *stop)
			return false;
		keep_sleep_until_boot(until_ms - now > 100 ? now + 100 : until_ms);
	}
	return !(stop && *stop);
}

/* A uniform random 32-bit value for the jitter of --wait's backoff. */
static uint32_t jitter_rnd(void)
{
	uint32_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint32_t)ts.tv_nsec ^ (uint32_t)getpid();
}

void keep_acquire_wait(struct keep_acquire *sm, const struct keep_owncmd *x, const char *key,
		       int64_t wait_ms, volatile sig_atomic_t *stop, const char *prog)
{
	struct keep_ownio io = {x->node_dir, x->store};
	struct keep_acqwait w;
	struct keep_acqwait_step st;
	struct keep_buf b;
	int i;

	keep_acqwait_init(&w, keep_boot_ms(), wait_ms, x->cfg.timing.period_ms);
	for (;;) {
		keep_acquire_init(sm, x->cfg.node_id, key, &x->cfg.timing, x->store_timeout_ms);
		keep_acquire_run(sm, &io);
		/* the schedule is the machine's (lib/core/acqwait.h), on the clock
		 * the acquisition judged the holder with */
		keep_acqwait_after(&w, &sm->res, keep_boot_ms(), keep_judge_wall_ms(x->node_dir),
				   jitter_rnd(), &st);
		if (st.kind == KEEP_ACQWAIT_DONE || (stop && *stop))
			return;
		for (i = 0; i < sm->nmsg; i++)
			keep_warn(prog, "%s", sm->msg[i]);
		if (st.line == KEEP_ACQWAIT_LINE_WAITING) {
			keep_line_begin(&b, "waiting");
			keep_line_str(&b, "key", key);
			keep_line_str(&b, "node", sm->res.holder.node);
			if (sm->res.free_at_ms > 0)
				keep_line_int(&b, "free_at_ms", sm->res.free_at_ms);
			else
				keep_line_str(&b, "free_at_ms", NULL);
			keep_line_end(&b);
		} else if (st.line == KEEP_ACQWAIT_LINE_RETRYING) {
			keep_line_begin(&b, "retrying");
			keep_line_str(&b, "key", key);
			keep_line_str(&b, "reason", st.reason);
			keep_line_int(&b, "code", st.code);
			keep_line_int(&b, "in_ms", st.in_ms);
			keep_line_end(&b);
		}
		if (!wait_sleep(st.until_mono_ms, stop) || st.kind == KEEP_ACQWAIT_GIVE_UP)
			return;
	}
}

void keep_owncmd_close(struct keep_store **stores, int n)
{
	for (int i = 0; i < n; i++)
		keep_store_free(stores[i]);
}

/* See ownrun.h. */
int keep_acquire_answer(const char *prog, const struct keep_acquire *sm)
{
	const struct keep_acquire_result *r = &sm->res;
	struct keep_buf b;
	int i;

	for (i = 0; i < sm->nmsg; i++)
		keep_warn(prog, "%s", sm->msg[i]);
	keep_line_begin(&b, keep_acq_result_name(r->kind));
	keep_line_str(&b, "key", sm->key);
	switch (r->kind) {
	case KEEP_AR_ACQUIRED:
		keep_line_int(&b, "generation", r->generation);
		keep_line_str(&b, "version", r->version);
		keep_line_bool(&b, "new", r->fresh);
		break;
	case KEEP_AR_HELD:
		keep_line_str(&b, "node", r->holder.node);
		keep_line_str(&b, "instance", r->holder.instance);
		keep_line_int(&b, "generation", r->holder.generation);
		if (r->free_at_ms)
			keep_line_int(&b, "free_at_ms", r->free_at_ms);
		break;
	case KEEP_AR_UNKNOWN:
		keep_line_int(&b, "generation", r->generation);
		break;
	case KEEP_AR_REFUSED:
	case KEEP_AR_ERROR:
		keep_line_str(&b, "reason", r->reason);
		break;
	}
	keep_line_end(&b);
	return r->exit_code;
}
