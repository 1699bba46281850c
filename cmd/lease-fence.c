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
#include "../lib/core/fencer.h"
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
	struct keep_fencer_queue q; /* under lock */
	pthread_mutex_t lock;	    /* metrics, the queue */
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

/* This node's lease now, from its lease state file (keep_fencer_view). */
static void own_lease(struct keep_fencer *me)
{
	struct keep_lease_state st;
	int64_t now = keep_boot_ms();
	bool ok =
	    keep_lease_state_read(C.node_dir, &st) == 0 && strcmp(st.node, C.cfg.node_id) == 0;

	keep_fencer_view(ok, ok && keep_lease_state_valid(&st, now, C.boot_id),
			 ok ? st.live_since_ms : 0, now, me);
}

/* Wait until until_mono_ms on the boot clock unless the input ends or a
 * signal stops us first (true: the time came). The condition variable
 * runs on CLOCK_MONOTONIC: slices of at most 200 ms, each followed by a
 * look at the boot clock, so a suspend never stretches it. */
static bool wait_until(int64_t until_mono_ms)
{
	bool ok;

	pthread_mutex_lock(&C.lock);
	while (!C.q.eof && !keep_stop_flag && keep_boot_ms() < until_mono_ms) {
		struct timespec ts;
		int64_t rest = until_mono_ms - keep_boot_ms();

		keep_mono_timespec_after(rest < 200 ? rest : 200, &ts);
		pthread_cond_timedwait(&C.wake, &C.lock, &ts);
	}
	ok = !C.q.eof && !keep_stop_flag;
	pthread_mutex_unlock(&C.lock);
	return ok;
}

static void print_event(const struct keep_fencer_event *e)
{
	struct keep_buf b;

	if (e->kind == KEEP_FNE_INFO) {
		keep_info(prog, "%s", e->text);
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

		keep_walls_cfg(&C.cfg, &now);
		keep_fencer_next(m, keep_boot_ms(), &now, &a);
		keep_store_set_timeout(s, a.timeout_ms);
		if (a.kind == KEEP_FNA_DONE ||
		    (a.kind == KEEP_FNA_WAIT && !wait_until(a.until_mono_ms)))
			return;
		if (a.kind == KEEP_FNA_LEASE) {
			struct keep_fencer me;

			own_lease(&me);
			keep_walls_cfg(&C.cfg,
				       &now); /* judged on the judging clock, dated on the wall */
			keep_fencer_on_lease(m, &me, &now);
		} else if (a.kind == KEEP_FNA_READ) {
			struct keep_node_obj obj;
			struct keep_node_read nr;

			keep_node_read(s, a.node, KEEP_NODE_READ_ANY_FORMAT, &obj, &nr);
			if (nr.reply.outcome == KEEP_STORE_OK && nr.derr)
				keep_warn(prog, "nodes/%s is not a valid node object: %s", a.node,
					  nr.why);
			else if (nr.reply.outcome != KEEP_STORE_OK &&
				 nr.reply.outcome != KEEP_STORE_NOT_FOUND)
				keep_warn(prog, "unable to read nodes/%s: %s", a.node, nr.why);
			keep_walls_cfg(&C.cfg, &now);
			keep_fencer_on_read(
			    m,
			    &(struct keep_fencer_read){nr.reply.outcome, nr.reply.not_ours,
						       nr.reply.version, nr.reply.detail,
						       nr.derr ? NULL : &obj, nr.derr},
			    &now);
		} else if (a.kind == KEEP_FNA_WRITE) {
			keep_node_write(s, &a.obj, a.cond, a.if_match, &r);
			if (r.outcome != KEEP_STORE_OK)
				keep_warn(prog, "fence of nodes/%s: %s: %s", a.node,
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

static int operator_fence(struct keep_store *s, const char *node, bool create)
{
	struct keep_fencer_cfg cfg = {
	    .mode = KEEP_FENCER_OPERATOR, .t = C.cfg.timing, .create = create};
	struct keep_fencer_m m;

	snprintf(cfg.node, sizeof(cfg.node), "%s", node);
	keep_fencer_init(&m, &cfg);
	run_fence(s, &m);
	if (m.text[0])
		keep_log(KEEP_LOG_FATAL, prog, "%s", m.text);
	return m.exit_code;
}

/* ---- peer mode ------------------------------------------------------------------- */

static void *worker_main(void *arg)
{
	struct keep_store *s = arg;
	struct keep_fencer_cfg cfg = {.mode = KEEP_FENCER_PEER, .t = C.cfg.timing};
	struct keep_fencer_m m;

	snprintf(cfg.self, sizeof(cfg.self), "%s", C.cfg.node_id);
	for (;;) {
		pthread_mutex_lock(&C.lock);
		while (!keep_fencer_queue_take(&C.q, &cfg.st) && !C.q.eof)
			pthread_cond_wait(&C.more, &C.lock);
		pthread_mutex_unlock(&C.lock);
		if (!cfg.st.node[0])
			return NULL;
		keep_fencer_init(&m, &cfg);
		run_fence(s, &m);
		pthread_mutex_lock(&C.lock);
		keep_fencer_queue_done(&C.q, cfg.st.node);
		metrics_flush_locked();
		pthread_mutex_unlock(&C.lock);
		cfg.st.node[0] = '\0';
	}
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
	pthread_t w[KEEP_FENCE_CONCURRENCY];
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int64_t next_beat = 0;
	ssize_t got;
	int i;

	/* one read(2) per byte: the input is a few short lines a period, and
	 * poll(2) then never misses a line already in a stdio buffer */
	setvbuf(stdin, NULL, _IONBF, 0);
	for (i = 0; i < KEEP_FENCE_CONCURRENCY; i++) {
		if (pthread_create(&w[i], NULL, worker_main, stores[i]) != 0)
			keep_die(KEEP_EXIT_TEMP, prog, "unable to start a fence thread");
	}
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
		pthread_mutex_lock(&C.lock);
		taken = keep_fencer_queue_admit(&C.q, &st, &skipped);
		if (taken)
			pthread_cond_signal(&C.more);
		pthread_mutex_unlock(&C.lock);
		if (!taken)
			print_event(&skipped);
	}
	free(line);
	pthread_mutex_lock(&C.lock);
	C.q.eof = true;
	pthread_cond_broadcast(&C.more);
	pthread_cond_broadcast(&C.wake);
	pthread_mutex_unlock(&C.lock);
	for (i = 0; i < KEEP_FENCE_CONCURRENCY; i++)
		pthread_join(w[i], NULL);
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
