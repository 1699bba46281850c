/* owner-acquire — acquire ownership records (ADR 0020 §2, §3; docs/ownership.md).
 *
 * A driver of lib/core/owner.c: under the per-actor lock, only while the
 * node lease is valid (checked again right before the write), it reads
 * owners/KEY, then nodes/<holder> when the free rule needs it, writes the
 * record at generation + 1, reads back an unknown outcome once, and
 * registers the hold in the state directory.
 *
 * A batch on stdin may run --jobs N acquisitions at once (N <= 32): N
 * threads, each with its own store handle (one connection kept alive per
 * thread), each key still under its own per-actor flock (a lock per open
 * file: two threads on one key take turns). Answer lines are tagged with
 * their key, in completion order. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/batch.h"
#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/core/owner.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/holds.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/statedir.h"
#include "../lib/upgrade.h"

static const char usage[] =
    "usage: owner-acquire [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                     [--jobs N] [--stats] [KEY...]\n"
    "\n"
    "Acquire the ownership record owners/KEY for this node (KEY is\n"
    "tenant/class/name; with no KEY, keys are read from stdin, one a line).\n"
    "  --jobs N  stdin: up to N (1..32, default 1) keys at once, each thread\n"
    "            with its own store connection; answers in completion order\n"
    "  --stats   at exit, one line on stderr: `stats requests=N get=N head=N\n"
    "            put=N delete=N list=N ok=N conflict=N not_found=N refused=N\n"
    "            ambiguous=N prog=owner-acquire`\n"
    "One answer line per key:\n"
    "  acquired key=K generation=G version=V new=yes|no\n"
    "  held key=K node=N instance=I generation=G [free_at_ms=T]\n"
    "  unknown key=K generation=G        outcome unknown, kept for the resolver\n"
    "  refused key=K reason=..           not held: lease-not-valid or draining (nothing\n"
    "                                    written), lease-lapsed (written, but the lease\n"
    "                                    was not valid at the reply: released in the\n"
    "                                    background)\n"
    "  error key=K reason=..             nothing written (store, bad record, bad key)\n"
    "\n"
    "exit (the first that applies over all keys): 100 bad key or usage;\n"
    "17 a record is not ours; 10..16 the node lease is not valid (as\n"
    "lease-status); 111 store failure; 20 unknown outcome (kept pending);\n"
    "1 held elsewhere; 0 every key acquired. See docs/exit-codes.md.\n";

static const char *prog = "owner-acquire";

#define JOBS_MAX KEEP_BATCH_JOBS_MAX

enum { OPT_JOBS = 0x2000, OPT_STATS };

/* Answer lines from several threads: one whole line at a time. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void emit(struct keep_buf *b)
{
	pthread_mutex_lock(&out_lock);
	keep_line_emit(b);
	pthread_mutex_unlock(&out_lock);
}

struct ctx {
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	struct keep_store *store;
};

/* Rank of an exit code for a batch: the highest rank wins. */
static void line_simple(const char *type, const char *key, const char *reason)
{
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, type);
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "reason", reason);
	emit(&b);
	keep_buf_release(&b);
}

static void line_acquired(const char *key, int64_t gen, const char *version, bool fresh)
{
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, "acquired");
	keep_line_str(&b, "key", key);
	keep_line_int(&b, "generation", gen);
	keep_line_str(&b, "version", version);
	keep_line_str(&b, "new", fresh ? "yes" : "no");
	emit(&b);
	keep_buf_release(&b);
}

static void line_held(const char *key, const struct keep_owner_rec *r, int64_t free_at_ms)
{
	struct keep_buf b;

	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start(&b, "held");
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "node", r->node);
	keep_line_str(&b, "instance", r->instance);
	keep_line_int(&b, "generation", r->generation);
	if (free_at_ms)
		keep_line_int(&b, "free_at_ms", free_at_ms);
	emit(&b);
	keep_buf_release(&b);
}

/* Register the hold; on failure we hold a record we cannot remember:
 * park it as a pending release so the resolver frees it. */
static int register_hold(struct ctx *x, const char *key, const char *instance, int64_t gen,
			 const char *version, int64_t epoch, bool fresh)
{
	struct keep_hold h;
	struct keep_lease_state was;
	int rc, lease_code;

	memset(&h, 0, sizeof(h));
	snprintf(h.key, sizeof(h.key), "%s", key);
	snprintf(h.instance, sizeof(h.instance), "%s", instance);
	h.generation = gen;
	snprintf(h.version, sizeof(h.version), "%s", version);
	h.epoch = epoch;
	h.acquired_at_ms = keep_wall_ms();
	/* issue 13: the lease is judged again now that the reply came; a
	 * lease that ran out, lapsed or stopped meanwhile gets no hold (the
	 * record is released in the background) and no `acquired` line */
	memset(&was, 0, sizeof(was));
	snprintf(was.instance, sizeof(was.instance), "%s", instance);
	was.lapses = epoch;
	rc = keep_hold_register_checked(x->node_dir, &h, &was, &lease_code);
	if (rc == 1) {
		keep_warn(prog,
			  "owners/%s was written at generation %lld, but the node lease was not "
			  "valid when the reply came: not held; its release is pending",
			  key, (long long)gen);
		line_simple("refused", key, "lease-lapsed");
		return lease_code;
	}
	if (rc != 0) {
		struct keep_pending p;

		keep_warn(prog, "unable to register the hold of '%s': %s; releasing it", key,
			  strerror(errno));
		memset(&p, 0, sizeof(p));
		p.kind = KEEP_PENDING_RELEASE;
		snprintf(p.key, sizeof(p.key), "%s", key);
		snprintf(p.instance, sizeof(p.instance), "%s", instance);
		p.generation = gen;
		snprintf(p.version, sizeof(p.version), "%s", version);
		p.at_ms = keep_wall_ms();
		(void)keep_pending_write(x->node_dir, &p);
		line_simple("error", key, "state-dir");
		return KEEP_EXIT_TEMP;
	}
	line_acquired(key, gen, version, fresh);
	return KEEP_EXIT_OK;
}

/* First acquisition (no owners/ record, ADR 0020 §6): mark leases/KEY
 * (lib/upgrade.h) and set *gen to the seed + 1. A live old lease, whatever
 * node it names (ours too), refuses with a held line. Returns an exit code. */
static int first_generation(struct ctx *x, const char *key, int64_t *gen)
{
	struct keep_mark_result m;
	struct keep_owner_rec old;

	keep_upgrade_mark_actor(x->store, key, keep_wall_ms(), &x->cfg.timing, &m);
	switch (m.kind) {
	case KEEP_MR_MARKED:
		if (m.seed >= KEEP_OWNER_GEN_MAX)
			break;
		*gen = m.seed + 1;
		return KEEP_EXIT_OK;
	case KEEP_MR_HELD:
		keep_owner_rec_held(&old, m.old.node, "-", m.old.generation);
		line_held(key, &old, m.live_until_ms);
		return KEEP_EXIT_NO;
	case KEEP_MR_BAD_OBJECT:
	case KEEP_MR_BAD_KEY:
		keep_warn(prog, "first acquisition of '%s': %s: nothing written", key, m.detail);
		line_simple("error", key, "bad-lease");
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_MR_FAILED:
		keep_warn(prog, "first acquisition of '%s': %s", key, m.detail);
		line_simple("error", key, "store");
		return KEEP_EXIT_TEMP;
	}
	keep_warn(prog, "first acquisition of '%s': seed %lld out of range", key,
		  (long long)m.seed);
	line_simple("error", key, "bad-lease");
	return KEEP_EXIT_BAD_OBJECT;
}

/* Under the lock: the whole acquisition of one key. */
static int acquire_locked(struct ctx *x, const char *key)
{
	struct keep_lease_state st, st2;
	struct keep_owner_self self;
	struct keep_owner_hold_view hv = {false, 0};
	struct keep_hold h;
	struct keep_acq_decision d;
	struct keep_rb_decision rb;
	struct keep_owner_rec rec;
	struct keep_node_obj obj;
	struct keep_reply r;
	int derr, rc, have_hold;
	int64_t epoch, first_gen = 1;

	rc = keep_holds_lease(x->node_dir, keep_mono_ms(), &st);
	if (rc != KEEP_EXIT_OK) {
		line_simple("refused", key, "lease-not-valid");
		return rc;
	}
	if (keep_draining(x->node_dir, st.instance)) {
		line_simple("refused", key, "draining");
		return KEEP_EXIT_NOT_LIVE;
	}
	epoch = st.lapses;
	self.node = x->cfg.node_id;
	self.instance = st.instance;

	have_hold = keep_hold_read(x->node_dir, key, &h);
	if (have_hold < 0) {
		keep_warn(prog, "unreadable hold of '%s' dropped", key);
		(void)keep_hold_remove(x->node_dir, key);
		have_hold = 1;
	}
	if (have_hold == 0) {
		if (strcmp(h.instance, st.instance) != 0) {
			/* an earlier process's hold: that process is gone, and our
			 * instance frees its records (§2) */
			(void)keep_hold_remove(x->node_dir, key);
		} else if (keep_owner_hold_stale(h.instance, h.epoch, st.instance, st.lapses)) {
			/* a lapse since: the hold is over; release it in the background */
			struct keep_pending p;

			memset(&p, 0, sizeof(p));
			p.kind = KEEP_PENDING_RELEASE;
			snprintf(p.key, sizeof(p.key), "%s", key);
			snprintf(p.instance, sizeof(p.instance), "%s", h.instance);
			p.generation = h.generation;
			snprintf(p.version, sizeof(p.version), "%s", h.version);
			p.at_ms = keep_wall_ms();
			if (keep_pending_write(x->node_dir, &p) == 0)
				(void)keep_hold_remove(x->node_dir, key);
		} else {
			hv.live = true;
			hv.generation = h.generation;
		}
	}

	keep_owner_get(x->store, key, &rec, &derr, &r);
	if (r.outcome == KEEP_STORE_NOT_FOUND) {
		rc = first_generation(x, key, &first_gen);
		if (rc != KEEP_EXIT_OK) {
			if (hv.live)
				(void)keep_hold_remove(x->node_dir, key);
			return rc;
		}
	}
	keep_owner_acq_on_record(&self, &hv, r.outcome, r.version,
				 r.outcome == KEEP_STORE_OK && !derr ? &rec : NULL, derr,
				 first_gen /* seeded from leases/ (§6) */, &d);
	if (d.verdict == KEEP_ACQ_READ_NODE) {
		/* the free rule: a read of nodes/<holder> issued after the record read */
		keep_owner_get_node(x->store, d.rec.node, &obj, &derr, &r);
		keep_owner_acq_on_node(&self, r.outcome,
				       r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL,
				       keep_wall_ms(), &x->cfg.timing, &d);
	}
	if (hv.live && d.verdict != KEEP_ACQ_SAME && d.verdict != KEEP_ACQ_FAILED) {
		/* our hold no longer matches the record: stop acting on it. A
		 * failed read proves nothing changed: the hold stays (dropping it
		 * would leave the record naming us with no hold and no pending
		 * release: held until this process stops) */
		(void)keep_hold_remove(x->node_dir, key);
	}
	switch (d.verdict) {
	case KEEP_ACQ_SAME:
		/* issue 13: judged again after the record read */
		rc = keep_holds_lease_same(x->node_dir, &st, &st2);
		if (rc != KEEP_EXIT_OK) {
			line_simple("refused", key, "lease-not-valid");
			return rc;
		}
		line_acquired(key, h.generation, h.version, false);
		return KEEP_EXIT_OK;
	case KEEP_ACQ_HELD:
		line_held(key, &d.rec, d.free_at_ms);
		return KEEP_EXIT_NO;
	case KEEP_ACQ_BAD_RECORD:
		keep_warn(prog, "owners/%s is not a keep ownership record (%s): nothing written",
			  key, d.reason);
		line_simple("error", key, "bad-record");
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_ACQ_FAILED:
		keep_warn(prog, "unable to read owners/%s or its holder: %s: %s", key, d.reason,
			  r.detail[0] ? r.detail : "-");
		line_simple("error", key, "store");
		return KEEP_EXIT_TEMP;
	case KEEP_ACQ_READ_NODE:
	case KEEP_ACQ_WRITE:
		break;
	}

	/* right before the write: the lease must still be valid, same
	 * instance, same epoch (no lapse since we began) */
	rc = keep_holds_lease(x->node_dir, keep_mono_ms(), &st2);
	if (rc != KEEP_EXIT_OK || strcmp(st2.instance, st.instance) != 0 || st2.lapses != epoch) {
		line_simple("refused", key, "lease-not-valid");
		return rc != KEEP_EXIT_OK ? rc : KEEP_EXIT_RAN_OUT;
	}
	keep_owner_put(x->store, key, &d.next, d.cond, d.if_match, &r);
	if (r.outcome == KEEP_STORE_OK)
		return register_hold(x, key, st.instance, d.next.generation, r.version, epoch,
				     true);
	if (r.outcome == KEEP_STORE_REFUSED) {
		keep_warn(prog, "write of owners/%s refused: %s", key, r.detail);
		line_simple("error", key, "store");
		return KEEP_EXIT_TEMP;
	}

	/* unknown outcome (ambiguous, or a conflict that may hide our own
	 * landed write): read back once, still under the lock */
	keep_owner_get(x->store, key, &rec, &derr, &r);
	keep_owner_readback(&self, d.next.generation, r.outcome, r.version,
			    r.outcome == KEEP_STORE_OK && !derr ? &rec : NULL, derr, &rb);
	if (rb.verdict == KEEP_RB_READ_NODE) {
		keep_owner_get_node(x->store, rb.rec.node, &obj, &derr, &r);
		keep_owner_readback_on_node(&self, r.outcome,
					    r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL,
					    keep_wall_ms(), &x->cfg.timing, &rb);
	}
	switch (rb.verdict) {
	case KEEP_RB_OURS:
		return register_hold(x, key, st.instance, d.next.generation, rb.version, epoch,
				     true);
	case KEEP_RB_LOST:
		line_held(key, &rb.rec, rb.free_at_ms);
		return KEEP_EXIT_NO;
	default: {
		struct keep_pending p;
		struct keep_buf b;

		memset(&p, 0, sizeof(p));
		p.kind = KEEP_PENDING_ACQUIRE;
		snprintf(p.key, sizeof(p.key), "%s", key);
		snprintf(p.instance, sizeof(p.instance), "%s", st.instance);
		p.generation = d.next.generation;
		snprintf(p.version, sizeof(p.version), "%s",
			 d.cond == KEEP_COND_IF_MATCH ? d.if_match : "-");
		p.at_ms = keep_wall_ms();
		if (keep_pending_write(x->node_dir, &p) != 0)
			keep_warn(prog, "unable to record the unresolved acquire of '%s': %s", key,
				  strerror(errno));
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start(&b, "unknown");
		keep_line_str(&b, "key", key);
		keep_line_int(&b, "generation", p.generation);
		emit(&b);
		keep_buf_release(&b);
		return KEEP_EXIT_UNKNOWN;
	}
	}
}

static int acquire_one(struct ctx *x, const char *key)
{
	int fd, rc;

	if (!keep_owner_key_valid(key)) {
		keep_warn(prog,
			  "invalid key '%s' (tenant/class/name, each [A-Za-z0-9._-]{1,128}, "
			  "not starting with '.')",
			  key);
		line_simple("error", key, "invalid-key");
		return KEEP_EXIT_USAGE;
	}
	if (keep_holds_lock(x->node_dir, key, &fd) != 0) {
		keep_warn(prog, "unable to lock '%s': %s", key, strerror(errno));
		line_simple("error", key, "state-dir");
		return KEEP_EXIT_TEMP;
	}
	rc = acquire_locked(x, key);
	keep_holds_unlock(fd);
	return rc;
}

static int acquire_cb(void *ctx, const char *key)
{
	return acquire_one(ctx, key);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"jobs", required_argument, NULL, OPT_JOBS},
					     {"stats", no_argument, NULL, OPT_STATS},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct ctx x;
	struct keep_store_opts so;
	struct keep_reqstats stats;
	struct keep_store *stores[JOBS_MAX];
	char err[512];
	bool opt_stats = false;
	int c, rc, i, jobs = 1, nstores, worst = KEEP_EXIT_OK;

	memset(&x, 0, sizeof(x));
	keep_cli_init(&cli, prog, usage);
	while ((c = getopt_long(argc, argv, "hc:", opts, NULL)) != -1) {
		if (keep_cli_common_opt(&cli, c, optarg))
			continue;
		switch (c) {
		case OPT_JOBS: {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > JOBS_MAX)
				keep_cli_usage_error(&cli, "--jobs wants 1..%d", JOBS_MAX);
			jobs = (int)v;
			break;
		}
		case OPT_STATS:
			opt_stats = true;
			break;
		default:
			keep_cli_usage_error(&cli, "unknown option");
		}
	}
	keep_cli_load_config(&cli, &x.cfg);
	if (!x.cfg.node_id[0])
		keep_cli_usage_error(&cli, "no node id (--node-id or node_id: in the config)");
	if (!x.cfg.store[0])
		keep_cli_usage_error(&cli, "no store (--store or store: in the config)");
	if (keep_config_node_dir(&x.cfg, x.node_dir, sizeof(x.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, prog, "state directory path too long");
	if (keep_holds_init(x.node_dir) != 0)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to create the state directory '%s': %s",
			 x.node_dir, strerror(errno));
	keep_config_store_opts(&x.cfg, &so);
	keep_reqstats_init(&stats);
	nstores = optind < argc ? 1 : jobs;
	for (i = 0; i < nstores; i++) {
		rc = keep_store_open(x.cfg.store, &so, &stores[i], err, sizeof(err));
		if (rc == 0) {
			rc = keep_store_counted(stores[i], &stats, &stores[i]);
			if (rc)
				snprintf(err, sizeof(err), "out of memory");
		}
		if (rc)
			keep_die(rc == KEEP_ERR_INVAL || rc == KEEP_ERR_PERM ? KEEP_EXIT_USAGE
									     : KEEP_EXIT_TEMP,
				 prog, "unable to open store '%s': %s", x.cfg.store, err);
	}
	x.store = stores[0];

	if (optind < argc) {
		for (i = optind; i < argc; i++)
			keep_exit_worst(&worst, acquire_one(&x, argv[i]));
	} else {
		/* keys on stdin: worker i has its own store connection */
		struct ctx xs[JOBS_MAX];
		void *ctxs[JOBS_MAX];

		ctxs[0] = &x;
		for (i = 0; jobs > 1 && i < jobs; i++) {
			xs[i] = x;
			xs[i].store = stores[i];
			ctxs[i] = &xs[i];
		}
		worst = keep_batch_run(stdin, jobs, ctxs, acquire_cb, prog);
	}
	for (i = 0; i < nstores; i++)
		keep_store_free(stores[i]);
	if (opt_stats)
		keep_reqstats_print(&stats, prog);
	return worst;
}
