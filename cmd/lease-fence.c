/* lease-fence — fence a node (ADR 0020 §2).
 *
 * Operator mode, `lease-fence NODE`: fence nodes/NODE over its current
 * object (If-Match the version read); refuse over a fence, a released
 * object or an old format, and over an absent object unless told
 * `--create` (then the fence is created, If-None-Match: *): a mistyped id
 * is refused with the known ids closest to it (issue 27).
 *
 * Peer mode, `lease-fence --stdin`: read node-watch's lines, and for each
 * `stale` candidate decide on one fresh versioned GET (lib/core/fence.c),
 * only while this node's own lease is valid and has been live long enough
 * for the line's watch to count: a line produced before a lapse of this
 * node (its live_since changed since) is dropped, and no fence goes before
 * live_since + write_every + attempt_timeout (keep_fence_peer_may, asked
 * before the read, on the decision, and right before the write; ADR 0020
 * §2, docs/fencing.md "After the fencer's own lapse"). Fences run on a pool of
 * KEEP_FENCE_CONCURRENCY threads, each with its own store handle and each
 * request bounded by (ttl - safety) / 3, so a hung fence never holds up
 * the others (and node-watch is another process). A `not-yet` decision is
 * taken again, on a new fresh read, at the moment its free_at_ms passes
 * (bounded), so a fence lands at the protocol's floor rather than at the
 * next stale line. See docs/fencing.md. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/core/fence.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/holds.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/parse.h"
#include "../lib/statedir.h"
#include "../lib/storecmd.h"
#include "../lib/supervise.h"

static const char usage[] =
    "usage: lease-fence [-c FILE] [--store URL] [--state-dir DIR] [--stats] [--json]\n"
    "                   [--create] NODE\n"
    "       lease-fence [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR] [--stats]\n"
    "                   [--json] --stdin\n"
    "\n"
    "NODE     operator fence of nodes/NODE over its live object (instance and\n"
    "         written_at kept). Prints `fenced node=.. instance=.. written_at_ms=..\n"
    "         free_at_ms=..`: records naming the node are free at free_at_ms.\n"
    "         Refuses a fenced, released or old-format object, and an absent one\n"
    "         (`refused ... reason=absent`, exit 1, with the known node ids closest\n"
    "         to NODE on stderr: a mistyped id). No node id or lease needed.\n"
    "  --create  fence NODE also when nodes/NODE is absent (a node that never\n"
    "         wrote, an object deleted): the fence is created with instance `-`.\n"
    "         `upgrade-mark forget NODE` removes such a fence again while no\n"
    "         ownership record names NODE.\n"
    "--stdin  peer fencing, fed by `node-watch --follow`: acts on `stale` lines\n"
    "         (other node-watch lines are ignored; a malformed line is reported\n"
    "         and skipped), only while this node's lease is valid, and never\n"
    "         before its live_since + write_every + attempt timeout: a line judged\n"
    "         before a lapse of this node is dropped (rewatch reason=own-lapse);\n"
    "         at most 8 fences at once. One line per stale line:\n"
    "         fenced|rewatch|not-yet|alive|already-fenced|skipped|failed|bad-object\n"
    "         node=.. instance=.. written_at_ms=.. [free_at_ms=..] [reason=..]\n"
    "         (a `fenced` line ends with decided_mono_ms=.. live_since_mono_ms=..:\n"
    "         the boot-clock time the write was allowed at, and this node's\n"
    "         live_since it was judged under)\n"
    "         (after a fence that did not land, the line says what a fresh read\n"
    "         shows: alive reason=wrote, already-fenced, or failed\n"
    "         reason=conflict-unchanged|ambiguous-unchanged when the node did not\n"
    "         write)\n"
    "         A not-yet is decided again on a fresh read when free_at_ms passes\n"
    "         (its own answer line follows), unless the input ended meanwhile.\n"
    "  --stats  at exit, one line on stderr: `stats requests=N get=N head=N put=N\n"
    "         delete=N list=N ok=N conflict=N not_found=N refused=N ambiguous=N\n"
    "         prog=lease-fence`\n"
    "  --check  validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit (NODE): 0 fenced; 1 refused (already fenced, released, old format), or\n"
    "the store refused the request (403, no such bucket); 17 nodes/NODE is not a\n"
    "keep node object; 100 usage or configuration; 111 store unreachable, the\n"
    "outcome unknown, or 5 fences that did not land (run it again).\n"
    "exit (--stdin): 0 at end of input or on SIGTERM; 100 usage; 111 store unusable.\n"
    "See docs/fencing.md.\n";

enum { OPT_STDIN = 0x2000, OPT_STATS, OPT_CREATE };

static const char *prog = "lease-fence";
struct ctx {
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	char boot_id[64];
	struct keep_metrics metrics;
	struct keep_reqstats stats; /* every store handle's requests */
	pthread_mutex_t lock;	    /* metrics, stdout, the queue */
	pthread_cond_t more;	    /* the queue has an entry, or the input ended */
	pthread_cond_t wake;	    /* the input ended (a not-yet retry waits on it) */
};

static struct ctx C;

/* Under C.lock: the request counters into the metrics, and the file. */
static void metrics_flush_locked(void)
{
	keep_reqstats_to_metrics(&C.stats, &C.metrics);
	keep_metrics_flush(&C.metrics);
}

static void metric_inc(const char *name)
{
	pthread_mutex_lock(&C.lock);
	keep_metrics_inc(&C.metrics, name, 1);
	metrics_flush_locked();
	pthread_mutex_unlock(&C.lock);
}

/* Versioned GET of nodes/<node>, decoded (keep_node_read): *r the GET's
 * reply, *derr 0 or why the object is unusable. */
static void read_node(struct keep_store *s, const char *node, struct keep_reply *r,
		      struct keep_node_obj *obj, int *derr)
{
	struct keep_node_read nr;

	keep_store_set_timeout(s, keep_timing_attempt_timeout_ms(&C.cfg.timing));
	keep_node_read(s, node, KEEP_NODE_READ_ANY_FORMAT, obj, &nr);
	*r = nr.reply;
	*derr = nr.derr;
	if (nr.reply.outcome == KEEP_STORE_OK && nr.derr)
		keep_warn(prog, "nodes/%s is not a valid node object: %s", node, nr.why);
	else if (nr.reply.outcome != KEEP_STORE_OK && nr.reply.outcome != KEEP_STORE_NOT_FOUND)
		keep_warn(prog, "unable to read nodes/%s: %s", node, nr.why);
}

/* Conditional PUT of o to nodes/<o->node>. */
static void write_node(struct keep_store *s, const struct keep_node_obj *o, enum keep_cond cond,
		       const char *if_match, struct keep_reply *r)
{
	char key[KEEP_NODE_ID_MAX + 8], version[KEEP_VERSION_MAX];
	struct keep_buf body;
	int rc;

	/* if_match may point into *r (the read's reply): copy it first */
	snprintf(version, sizeof(version), "%s", if_match ? if_match : "");
	snprintf(key, sizeof(key), "nodes/%s", o->node);
	keep_buf_init(&body, KEEP_NODEOBJ_MAX);
	memset(r, 0, sizeof(*r));
	rc = keep_node_obj_encode(o, &body);
	if (rc) {
		keep_reply_set(r, KEEP_STORE_REFUSED, 0, "encode: %s", keep_strerror(rc));
	} else {
		keep_store_set_timeout(s, keep_timing_attempt_timeout_ms(&C.cfg.timing));
		keep_store_put(s, key, body.data, body.len, cond,
			       cond == KEEP_COND_IF_MATCH ? version : NULL, r);
	}
	if (r->outcome != KEEP_STORE_OK)
		keep_warn(prog, "fence of nodes/%s: %s: %s", o->node, keep_outcome_name(r->outcome),
			  r->detail[0] ? r->detail : "-");
	keep_buf_release(&body);
}

/* ---- operator mode -------------------------------------------------------------- */

static void print_result(const char *type, const char *node, const struct keep_node_obj *o,
			 int64_t free_at, const char *reason)
{
	struct keep_buf b;

	keep_line_begin(&b, type);
	keep_line_str(&b, "node", node);
	/* "-": a fence created over an absent object names no instance */
	keep_line_str(&b, "instance", o && strcmp(o->instance, "-") != 0 ? o->instance : NULL);
	if (o && o->written_at_ms)
		keep_line_int(&b, "written_at_ms", o->written_at_ms);
	else
		keep_line_str(&b, "written_at_ms", NULL);
	if (free_at)
		keep_line_int(&b, "free_at_ms", free_at);
	if (strcmp(type, "already-fenced") == 0 && o && o->fenced_by[0])
		keep_line_str(&b, "fenced_by", o->fenced_by);
	if (reason)
		keep_line_str(&b, "reason", reason);
	keep_line_end(&b);
}

#define OPERATOR_TRIES 5 /* fresh reads and fences before giving up */
#define CLOSEST_IDS 3	 /* known ids named when a fence of an absent node is refused */

/* nodes/NODE is absent and --create was not given: nothing is written;
 * the refused line, and one fatal line naming the known node ids closest
 * to NODE (one LIST of nodes/; a failed listing is said instead). 1. */
static int refuse_absent(struct keep_store *s, const char *node)
{
	struct keep_list l;
	struct keep_reply r;
	struct keep_buf known;
	const char **ids;
	size_t i, n = 0, idx[CLOSEST_IDS], got = 0;

	print_result("refused", node, NULL, 0, "absent");
	keep_list_init(&l);
	keep_buf_init(&known, 4096);
	keep_store_set_timeout(s, keep_timing_attempt_timeout_ms(&C.cfg.timing));
	keep_store_list(s, "nodes/", &l, &r);
	ids = calloc(l.n ? l.n : 1, sizeof(*ids));
	if (r.outcome == KEEP_STORE_OK && ids) {
		for (i = 0; i < l.n; i++)
			if (strncmp(l.v[i].key, "nodes/", 6) == 0 &&
			    keep_node_id_valid(l.v[i].key + 6))
				ids[n++] = l.v[i].key + 6;
		got = keep_fence_closest(node, ids, n, idx, CLOSEST_IDS);
		for (i = 0; i < got; i++)
			keep_buf_addf(&known, "%s%s", i ? ", " : "", ids[idx[i]]);
		if (!got)
			keep_buf_addf(&known, "none: the bucket has no node");
		else if (n > got)
			keep_buf_addf(&known, " (of %zu)", n);
	} else {
		keep_buf_addf(&known, "unknown: the listing of nodes/ failed: %s: %s",
			      keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
	}
	keep_log(KEEP_LOG_FATAL, prog,
		 "nodes/%s does not exist: nothing written (known nodes closest to %s: %s); "
		 "`lease-fence --create %s` fences an id that never wrote",
		 node, node, known.data ? known.data : "-", node);
	free(ids);
	keep_buf_release(&known);
	keep_list_release(&l);
	return KEEP_EXIT_NO;
}

static int operator_fence(struct keep_store *s, const char *node, bool create)
{
	char last[KEEP_DETAIL_MAX + 64] = "-";
	int attempt;

	for (attempt = 0; attempt < OPERATOR_TRIES; attempt++) {
		struct keep_reply r;
		struct keep_node_obj obj;
		struct keep_fence_decision d, d2;
		struct keep_walls now;
		int derr;

		read_node(s, node, &r, &obj, &derr);
		/* a created fence is dated on the wall clock, never the judging
		 * clock of the node the configuration names (issue 23) */
		keep_walls_cfg(&C.cfg, &now);
		keep_fence_operator(node, r.outcome,
				    r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL, derr, &now,
				    &C.cfg.timing, &d);
		keep_fence_operator_absent(&d, create);
		switch (d.verdict) {
		case KEEP_FV_FENCE:
		case KEEP_FV_CREATE:
			break;
		case KEEP_FV_ALREADY:
			print_result("already-fenced", node, &obj, d.free_at_ms, NULL);
			keep_info(prog, "nodes/%s is already fenced (by %s)", node,
				  obj.fenced_by[0] ? obj.fenced_by : "?");
			return KEEP_EXIT_NO;
		case KEEP_FV_REFUSED:
			if (strcmp(d.reason, "absent") == 0)
				return refuse_absent(s, node);
			print_result("refused", node, &obj, 0, d.reason);
			if (strcmp(d.reason, "released") == 0)
				keep_info(prog,
					  "nodes/%s is released (a clean stop): nothing to fence; "
					  "its records are free at %lld",
					  node, (long long)d.free_at_ms);
			else
				keep_info(prog,
					  "nodes/%s is an old-format heartbeat: never fenced "
					  "(ADR 0020 section 6)",
					  node);
			return KEEP_EXIT_NO;
		case KEEP_FV_BAD_OBJECT:
			keep_die(KEEP_EXIT_BAD_OBJECT, prog,
				 "nodes/%s is not a keep node object (%s): nothing written", node,
				 d.reason ? d.reason : "unreadable");
		default:
			/* 403, no such bucket: 1; a timeout or 5xx: 111 */
			keep_die(keep_exit_of_reply(&r), prog, "unable to read nodes/%s: %s: %s",
				 node, keep_outcome_name(r.outcome), r.detail);
		}
		write_node(s, &d.obj,
			   d.verdict == KEEP_FV_CREATE ? KEEP_COND_IF_NONE_MATCH
						       : KEEP_COND_IF_MATCH,
			   r.version, &r);
		if (r.outcome == KEEP_STORE_OK) {
			metric_inc("keep_fences_total");
			print_result("fenced", node, &d.obj, d.free_at_ms, NULL);
			keep_metrics_flush(&C.metrics);
			return KEEP_EXIT_OK;
		}
		snprintf(last, sizeof(last), "%s: %s", keep_outcome_name(r.outcome),
			 r.detail[0] ? r.detail : "-");
		if (r.outcome == KEEP_STORE_REFUSED)
			keep_die(keep_exit_of_reply(&r), prog,
				 "unable to fence nodes/%s: the store refused the write: %s", node,
				 r.detail);
		if (r.outcome == KEEP_STORE_AMBIGUOUS) {
			/* the fence may have landed: read it back once */
			read_node(s, node, &r, &obj, &derr);
			keep_fence_after_write(&d.obj, r.outcome,
					       r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL,
					       derr, &C.cfg.timing, &d2);
			if (d2.verdict == KEEP_FV_FENCED) {
				metric_inc("keep_fences_total");
				print_result("fenced", node, &d.obj, d.free_at_ms, NULL);
				return KEEP_EXIT_OK;
			}
			if (d2.verdict == KEEP_FV_FAILED && r.outcome != KEEP_STORE_OK)
				keep_die(
				    KEEP_EXIT_TEMP, prog,
				    "fence of nodes/%s: outcome unknown (%s), and the read-back "
				    "failed: run it again",
				    node, last);
		}
		/* a conflict (the object changed since our read, or another
		 * request refused ours), or a fence that did not land: decide
		 * again on a fresh read */
	}
	keep_die(KEEP_EXIT_TEMP, prog,
		 "nodes/%s: %d fences did not land (the last: %s): run it again", node,
		 OPERATOR_TRIES, last);
}

/* ---- peer mode ------------------------------------------------------------------- */

#define QUEUE_MAX 64

struct queue {
	struct keep_stale q[QUEUE_MAX];
	size_t head, n;
	char busy[QUEUE_MAX + KEEP_FENCE_CONCURRENCY]
		 [KEEP_NODE_ID_MAX + 1]; /* queued or in flight */
	bool eof;
};

static struct queue Q;

struct worker {
	pthread_t tid;
	struct keep_store *store;
};

/* This node's lease now, from its lease state file (not valid when the
 * file is missing, unreadable, or another node's). */
static void own_lease(struct keep_fencer *me)
{
	struct keep_lease_state st;

	memset(me, 0, sizeof(*me));
	me->now_mono_ms = keep_boot_ms();
	if (keep_lease_state_read(C.node_dir, &st) != 0 || strcmp(st.node, C.cfg.node_id) != 0)
		return;
	me->valid = keep_lease_state_valid(&st, me->now_mono_ms, C.boot_id);
	me->live_since_mono_ms = me->valid ? st.live_since_ms : 0;
}

/* One answer line. A `fenced` line (me given) ends with the decision's
 * own time: decided_mono_ms, the boot-clock reading keep_fence_peer_may
 * allowed the write with, and live_since_mono_ms, the live period it was
 * judged under (docs/formats.md: their difference is the watch that
 * allowed it). */
static void peer_line_at(const char *type, const struct keep_stale *st, int64_t free_at,
			 const char *reason, const struct keep_fencer *me)
{
	struct keep_buf b;

	keep_line_begin(&b, type);
	keep_line_str(&b, "node", st->node);
	keep_line_str(&b, "instance", st->instance);
	keep_line_int(&b, "written_at_ms", st->written_at_ms);
	if (free_at)
		keep_line_int(&b, "free_at_ms", free_at);
	if (reason)
		keep_line_str(&b, "reason", reason);
	if (me) {
		keep_line_int(&b, "decided_mono_ms", me->now_mono_ms);
		keep_line_int(&b, "live_since_mono_ms", me->live_since_mono_ms);
	}
	keep_line_end(&b);
}

static void peer_line(const char *type, const struct keep_stale *st, int64_t free_at,
		      const char *reason)
{
	peer_line_at(type, st, free_at, reason, NULL);
}

/* May we act on st now (keep_fence_peer_may, on the lease state read
 * now, left in *me)? When not, its line is printed. */
static bool may_act(const struct keep_stale *st, struct keep_fencer *me)
{
	struct keep_fence_decision d;

	own_lease(me);
	if (keep_fence_peer_may(st, me, &C.cfg.timing, &d))
		return true;
	peer_line(d.verdict == KEEP_FV_NOT_VALID ? "skipped" : keep_fence_verdict_name(d.verdict),
		  st, 0, d.reason);
	return false;
}

/* A not-yet's retry: wait until free_at_wall_ms passes on our wall clock
 * (measured on the boot clock from now), unless the input ends or a
 * signal stops us first. Bounded: a free_at further away than ttl + grace
 * + max_skew is not waited for (the next stale line will come). true: the
 * time came. */
static bool wait_free_at(int64_t free_at_wall_ms)
{
	int64_t left = keep_sub_sat_ms(free_at_wall_ms, keep_judge_wall_cfg(&C.cfg)), deadline;
	bool ok;

	if (left > keep_timing_takeover_ms(&C.cfg.timing) + C.cfg.timing.max_skew_ms)
		return false;
	deadline = keep_boot_ms() + (left > 0 ? left : 0) + 1;
	pthread_mutex_lock(&C.lock);
	while (!Q.eof && !keep_stop_flag && keep_boot_ms() < deadline) {
		struct timespec ts;
		int64_t rest = deadline - keep_boot_ms();

		/* the condition variable runs on CLOCK_MONOTONIC (the only steady
		 * clock glibc gives it); slices of at most 200 ms, each followed
		 * by a look at the boot clock, so a suspend never stretches it */
		keep_mono_timespec_after(rest < 200 ? rest : 200, &ts);
		pthread_cond_timedwait(&C.wake, &C.lock, &ts);
	}
	ok = !Q.eof && !keep_stop_flag;
	pthread_mutex_unlock(&C.lock);
	return ok;
}

/* One decision on a fresh read; true when it was not-yet and the bound
 * free_at_ms (in *free_at) may be waited for. */
static bool peer_fence_once(struct keep_store *s, const struct keep_stale *st, int64_t *free_at);

#define NOT_YET_RETRIES 3 /* decisions again after a not-yet, each at its free_at */

static void peer_fence(struct keep_store *s, const struct keep_stale *st)
{
	int64_t free_at = 0;
	int i;

	for (i = 0; i <= NOT_YET_RETRIES; i++)
		if (!peer_fence_once(s, st, &free_at) || !wait_free_at(free_at))
			return;
}

static bool peer_fence_once(struct keep_store *s, const struct keep_stale *st, int64_t *free_at)
{
	struct keep_reply r;
	struct keep_node_obj obj;
	struct keep_fence_decision d, d2;
	const struct keep_fence_decision *res;
	struct keep_fencer me, at_write;
	enum keep_outcome wrote;
	struct keep_walls now;
	const char *reason;
	int derr;

	if (!may_act(st, &at_write))
		return false;
	read_node(s, st->node, &r, &obj, &derr);
	own_lease(&me);
	keep_walls_cfg(&C.cfg, &now); /* judged on the judging clock, dated on the wall */
	keep_fence_peer_judge(st, &me, r.outcome, r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL,
			      derr, &now, &C.cfg.timing, C.cfg.node_id, &d);
	if (d.verdict != KEEP_FV_FENCE) {
		peer_line(
		    d.verdict == KEEP_FV_NOT_VALID ? "skipped" : keep_fence_verdict_name(d.verdict),
		    st,
		    d.verdict == KEEP_FV_NOT_YET || d.verdict == KEEP_FV_ALREADY ? d.free_at_ms : 0,
		    d.reason);
		*free_at = d.free_at_ms;
		return d.verdict == KEEP_FV_NOT_YET;
	}
	if (!may_act(st, &at_write)) /* checked again right before the write */
		return false;
	write_node(s, &d.obj, KEEP_COND_IF_MATCH, r.version, &r);
	if (r.outcome == KEEP_STORE_OK) {
		metric_inc("keep_fences_total");
		peer_line_at("fenced", st, d.free_at_ms, NULL, &at_write);
		return false;
	}
	if (r.outcome != KEEP_STORE_CONFLICT && r.outcome != KEEP_STORE_AMBIGUOUS) {
		peer_line("failed", st, 0, keep_outcome_name(r.outcome));
		return false;
	}
	/* the condition failed (or the reply was lost): read once more (§2);
	 * the line says what that read shows, never more */
	wrote = r.outcome;
	read_node(s, st->node, &r, &obj, &derr);
	keep_fence_after_write(&d.obj, r.outcome, r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL,
			       derr, &C.cfg.timing, &d2);
	res = &d2;
	reason = d2.reason;
	if (d2.verdict == KEEP_FV_FENCED) {
		/* our fence landed (a lost reply): `fenced`, with its free_at */
		metric_inc("keep_fences_total");
		d2.free_at_ms = d.free_at_ms;
	} else if (d2.verdict == KEEP_FV_FAILED && r.outcome == KEEP_STORE_OK) {
		/* A did not write and our fence is not there: the write was
		 * refused by another request (a 409), or never landed */
		reason =
		    wrote == KEEP_STORE_CONFLICT ? "conflict-unchanged" : "ambiguous-unchanged";
	}
	peer_line_at(
	    keep_fence_verdict_name(res->verdict), st,
	    res->verdict == KEEP_FV_FENCED || res->verdict == KEEP_FV_ALREADY ? res->free_at_ms : 0,
	    reason, res->verdict == KEEP_FV_FENCED ? &at_write : NULL);
	return false;
}

static void busy_clear(const char *node)
{
	size_t i;

	for (i = 0; i < sizeof(Q.busy) / sizeof(Q.busy[0]); i++)
		if (strcmp(Q.busy[i], node) == 0) {
			Q.busy[i][0] = '\0';
			return;
		}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		struct keep_stale st;

		pthread_mutex_lock(&C.lock);
		while (!Q.n && !Q.eof)
			pthread_cond_wait(&C.more, &C.lock);
		if (!Q.n) {
			pthread_mutex_unlock(&C.lock);
			return NULL;
		}
		st = Q.q[Q.head];
		Q.head = (Q.head + 1) % QUEUE_MAX;
		Q.n--;
		pthread_mutex_unlock(&C.lock);

		peer_fence(w->store, &st);

		pthread_mutex_lock(&C.lock);
		busy_clear(st.node);
		metrics_flush_locked();
		pthread_mutex_unlock(&C.lock);
	}
}

/* Queue a stale candidate; false (with why) when it is not taken. */
static bool enqueue(const struct keep_stale *st, const char **why)
{
	size_t i, slot = (size_t)-1;
	bool ok = false;

	pthread_mutex_lock(&C.lock);
	for (i = 0; i < sizeof(Q.busy) / sizeof(Q.busy[0]); i++) {
		if (strcmp(Q.busy[i], st->node) == 0) {
			*why = "a fence of this node is in flight";
			goto out;
		}
		if (!Q.busy[i][0] && slot == (size_t)-1)
			slot = i;
	}
	if (Q.n == QUEUE_MAX || slot == (size_t)-1) {
		*why = "busy";
		goto out;
	}
	snprintf(Q.busy[slot], sizeof(Q.busy[slot]), "%s", st->node);
	Q.q[(Q.head + Q.n) % QUEUE_MAX] = *st;
	Q.n++;
	pthread_cond_signal(&C.more);
	ok = true;
out:
	pthread_mutex_unlock(&C.lock);
	return ok;
}

/* A line of node-watch's output: 1 a stale candidate in *st, 0 a line to
 * ignore, -1 malformed (why in err). */
static int parse_input(const char *s, size_t len, struct keep_stale *st, char *err, size_t errlen)
{
	static const char *other[] = {"join", "change", "leave", "node"};
	struct keep_line l;
	const char *v;
	int64_t n;
	size_t i;
	int rc = -1;

	if (keep_line_parse(s, len, &l, err, errlen) != 0)
		return -1;
	if (strcmp(l.type, "stale") != 0) {
		for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
			if (strcmp(l.type, other[i]) == 0)
				rc = 0;
		if (rc)
			snprintf(err, errlen, "unknown record type '%s'", l.type);
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (strcmp(l.f[i].key, "node") && strcmp(l.f[i].key, "instance") &&
		    strcmp(l.f[i].key, "written_at_ms") && strcmp(l.f[i].key, "unchanged_ms") &&
		    strcmp(l.f[i].key, "live_since_mono_ms") &&
		    strcmp(l.f[i].key, "watch_since_mono_ms") && strcmp(l.f[i].key, "ts")) {
			snprintf(err, errlen, "unknown key '%s'", l.f[i].key);
			goto out;
		}
	memset(st, 0, sizeof(*st));
	v = keep_line_get(&l, "node");
	if (!v || !keep_node_id_valid(v)) {
		snprintf(err, errlen, "missing or bad node");
		goto out;
	}
	snprintf(st->node, sizeof(st->node), "%s", v);
	v = keep_line_get(&l, "instance");
	if (!v || !keep_instance_valid(v, strlen(v))) {
		snprintf(err, errlen, "missing or bad instance");
		goto out;
	}
	snprintf(st->instance, sizeof(st->instance), "%s", v);
	if (!keep_dec_parse_str(keep_line_get(&l, "written_at_ms"), KEEP_WALL_MAX_MS,
				&st->written_at_ms) ||
	    st->written_at_ms <= 0) {
		snprintf(err, errlen, "missing or bad written_at_ms");
		goto out;
	}
	v = keep_line_get(&l, "unchanged_ms");
	if (v && !keep_dec_parse_str(v, INT64_MAX, &n)) {
		snprintf(err, errlen, "bad unchanged_ms");
		goto out;
	}
	/* the watcher's own live period and watch start (node-watch >= issue
	 * 18); absent in older lines: the decision then counts from our own
	 * live_since alone */
	v = keep_line_get(&l, "live_since_mono_ms");
	if (v && (!keep_dec_parse_str(v, INT64_MAX, &st->live_since_mono_ms) ||
		  st->live_since_mono_ms <= 0)) {
		snprintf(err, errlen, "bad live_since_mono_ms");
		goto out;
	}
	v = keep_line_get(&l, "watch_since_mono_ms");
	if (v && (!keep_dec_parse_str(v, INT64_MAX, &st->watch_since_mono_ms) ||
		  st->watch_since_mono_ms <= 0)) {
		snprintf(err, errlen, "bad watch_since_mono_ms");
		goto out;
	}
	rc = 1;
out:
	keep_line_release(&l);
	return rc;
}

/* Write STATE_DIR/ID/fence, the reader's heartbeat (one line, the
 * stdout line format; docs/formats.md "The fence state"):
 *   fence node=ID pid=P boot=B updated_mono_ms=U lines=N
 * updated_mono_ms: now on the boot clock; lines: input lines read. */
static void write_fence_state(size_t lines)
{
	char path[sizeof(C.node_dir) + 16];
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, "fence");
	keep_line_str(&b, "node", C.cfg.node_id);
	keep_line_int(&b, "pid", (int64_t)getpid());
	keep_line_str(&b, "boot", C.boot_id);
	keep_line_int(&b, "updated_mono_ms", keep_boot_ms());
	keep_line_int(&b, "lines", (int64_t)lines);
	keep_buf_add(&b, "\n", 1);
	snprintf(path, sizeof(path), "%s/fence", C.node_dir);
	if (keep_mkdirs(C.node_dir) != 0 || keep_write_atomic(path, b.data, b.len) != 0)
		keep_warn(prog, "unable to write '%s': %s", path, strerror(errno));
	keep_buf_release(&b);
}

/* Wait for input on stdin, up to the next heartbeat: the fence state is
 * rewritten once per heartbeat period while this reader runs, with input
 * or without (a stopped or stuck lease-fence is seen by its age, not only
 * by its absence; docs/operations.md "Readiness"). 1: input (or EOF) to
 * read; 0: stop. stdin is unbuffered (peer_mode), so poll sees every byte
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
			*next_beat = now + C.cfg.timing.period_ms;
		}
		left = *next_beat - now;
		pr = poll(&p, 1, left > 0 ? (int)left : 0);
		if (pr > 0)
			return 1;
		if (pr < 0 && errno != EINTR)
			return 1; /* let the read report it */
	}
}

static int peer_mode(struct keep_store **stores)
{
	struct worker w[KEEP_FENCE_CONCURRENCY];
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int64_t next_beat = 0;
	ssize_t got;
	int i;

	/* one read(2) per byte: the input is a few short lines a period, and
	 * poll(2) then never misses a line already in a stdio buffer */
	setvbuf(stdin, NULL, _IONBF, 0);
	for (i = 0; i < KEEP_FENCE_CONCURRENCY; i++) {
		w[i].store = stores[i];
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0)
			keep_die(KEEP_EXIT_TEMP, prog, "unable to start a fence thread");
	}
	while (wait_input(&next_beat, lineno) && (got = getline(&line, &cap, stdin)) >= 0) {
		struct keep_stale st;
		char err[256];
		const char *why;
		size_t len = (size_t)got;
		int rc;

		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		if (len > KEEP_LINE_MAX) {
			snprintf(err, sizeof(err), "line longer than %d bytes", KEEP_LINE_MAX);
			rc = -1;
		} else {
			rc = parse_input(line, len, &st, err, sizeof(err));
		}
		if (rc < 0) {
			keep_warn(prog, "input line %zu: %s: skipped", lineno, err);
			metric_inc("keep_fence_bad_lines_total");
			continue;
		}
		if (rc == 0)
			continue;
		metric_inc("keep_fence_candidates_total");
		if (!enqueue(&st, &why))
			peer_line("skipped", &st, 0, why);
	}
	free(line);
	pthread_mutex_lock(&C.lock);
	Q.eof = true;
	pthread_cond_broadcast(&C.more);
	pthread_cond_broadcast(&C.wake);
	pthread_mutex_unlock(&C.lock);
	for (i = 0; i < KEEP_FENCE_CONCURRENCY; i++)
		pthread_join(w[i].tid, NULL);
	return KEEP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"stdin", no_argument, NULL, OPT_STDIN},
					     {"stats", no_argument, NULL, OPT_STATS},
					     {"create", no_argument, NULL, OPT_CREATE},
					     {"check", no_argument, NULL, KEEP_OPT_CHECK},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct keep_store *stores[KEEP_FENCE_CONCURRENCY];
	const char *target = NULL;
	bool from_stdin = false, opt_stats = false, create = false;
	pthread_condattr_t ca;
	int c, rc, i, nstores;

	keep_supervised_start(prog); /* under keep-agent: never outlive it */
	memset(&C, 0, sizeof(C));
	pthread_mutex_init(&C.lock, NULL);
	pthread_cond_init(&C.more, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* keep_mono_timespec_after */
	pthread_cond_init(&C.wake, &ca);
	pthread_condattr_destroy(&ca);
	keep_reqstats_init(&C.stats);
	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		switch (c) {
		case OPT_STDIN:
			from_stdin = true;
			break;
		case OPT_STATS:
			opt_stats = true;
			break;
		case OPT_CREATE:
			create = true;
			break;
		}
	}
	if (optind < argc)
		target = argv[optind++];
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (!cli.check_only && !!target == from_stdin)
		keep_cli_usage_error(&cli, "give either NODE or --stdin");
	if (target && !keep_node_id_valid(target))
		keep_cli_usage_error(&cli, "invalid node id '%s'", target);
	if (create && from_stdin)
		keep_cli_usage_error(&cli,
				     "--create is for an operator's fence of NODE, not --stdin");
	keep_cli_load_config(&cli, &C.cfg);
	if (from_stdin && !C.cfg.node_id[0])
		keep_cli_usage_error(&cli, "--stdin needs a node id (--node-id or node_id:)");
	keep_cli_setup(&cli, &C.cfg, KEEP_NEED_STORE);
	if (from_stdin && keep_config_node_dir(&C.cfg, C.node_dir, sizeof(C.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, prog, "state directory path too long");
	keep_boot_id(C.boot_id, sizeof(C.boot_id));
	keep_metrics_init(&C.metrics, NULL, C.cfg.node_id[0] ? C.cfg.node_id : "operator");
	/* only the long-running peer mode owns the metrics file: an operator's
	 * one-shot fence on a node host must not wipe the agent's counters */
	keep_metrics_set_prog(&C.metrics, from_stdin ? C.cfg.metrics_textfile : NULL, prog);
	/* every counter from 0, written now: a fencer that never fences (it
	 * lost every race) still shows keep_fences_total, and increase() sees
	 * the first fence (docs/metrics.md) */
	keep_metrics_inc(&C.metrics, "keep_fences_total", 0);
	keep_metrics_inc(&C.metrics, "keep_fence_candidates_total", 0);
	keep_metrics_inc(&C.metrics, "keep_fence_bad_lines_total", 0);
	keep_metrics_declare_requests(&C.metrics);
	keep_metrics_flush(&C.metrics);

	keep_cli_stop_signals();

	nstores = from_stdin ? KEEP_FENCE_CONCURRENCY : 1;
	for (i = 0; i < nstores; i++)
		stores[i] = keep_store_open_or_die(prog, &C.cfg, &C.stats);
	rc = from_stdin ? peer_mode(stores) : operator_fence(stores[0], target, create);
	for (i = 0; i < nstores; i++)
		keep_store_free(stores[i]);
	if (opt_stats)
		keep_reqstats_print(&C.stats, prog);
	metrics_flush_locked();
	keep_metrics_release(&C.metrics);
	return rc;
}
