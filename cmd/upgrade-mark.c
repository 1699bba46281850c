/* upgrade-mark — the scripted upgrade from per-actor leases (ADR 0020 §6;
 * docs/upgrade.md, docs/runbooks/upgrade.md).
 *
 * A driver of lib/core/upgrade.c and lib/driver/upgrade.c:
 *   guard    the start guard: lists nodes/ every half period until no
 *            old-format heartbeat is fresh; exit 16 when one is rewritten
 *   actors   marks leases/KEY for actors and seeds their first generation
 *   forget   deletes stale old-format heartbeats (never a format-3 object)
 *   native   creates the cluster object `cluster` (format native) on a
 *            bucket that never held leases/, wal/ or snapshot/ objects
 *            (lib/core/cluster.h; docs/upgrade.md "Native clusters") */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/base/exitcode.h"
#include "../lib/codec/ownerrec.h"
#include "../lib/core/cluster.h"
#include "../lib/core/upgrade.h"
#include "../lib/driver/batch.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/ownstore.h"
#include "../lib/driver/storecmd.h"
#include "../lib/driver/supervise.h"
#include "../lib/driver/upgrade.h"
#include "../lib/local/holds.h"
#include "../lib/local/metrics.h"
#include "../lib/platform/clock.h"
#include "../lib/platform/line.h"

static const char usage[] =
    "usage: upgrade-mark [-c FILE] [--store URL] [--horizon-ms MS] guard\n"
    "       upgrade-mark [-c FILE] [--store URL] actors [KEY... | --all]\n"
    "       upgrade-mark [-c FILE] [--store URL] [--horizon-ms MS] forget NODE | --stale\n"
    "       upgrade-mark [-c FILE] [--store URL] native\n"
    "\n"
    "guard   wait while any old-format heartbeat (nodes/<id>, wasmkeep-node 1|2)\n"
    "        was written less than horizon + ttl + grace ago, listing nodes/ every\n"
    "        half heartbeat period:\n"
    "          wait node=N format=F written_at_ms=W left_ms=L   (each fresh one, each pass)\n"
    "          pass old=N                                       exit 0\n"
    "          old-running node=N written_at_ms=W previous_written_at_ms=P   exit 16\n"
    "        one dated in the future lapses horizon + ttl + grace + max_skew after\n"
    "        this process first read it (a warning names it)\n"
    "actors  for each actor KEY (tenant/class/name; stdin, one a line, when no KEY;\n"
    "        --all: every actor found under leases/, owners/, wal/ and snapshot/),\n"
    "        refuse a live old lease, else put the wasmkeep-lease 2 marker:\n"
    "          marked key=K seed=S action=created|replaced|existing keys_max=M\n"
    "          held key=K node=N generation=G expires_at_ms=E live_until_ms=U\n"
    "          error key=K reason=invalid-key|bad-object|bad-key|store\n"
    "forget  delete NODE's old-format heartbeat, or (--stale) every one, once stale\n"
    "        by the guard's test; never a node lease (format 3), except (NODE\n"
    "        only) an operator's fence created over an absent object (`lease-fence\n"
    "        --create`, instance -) when no ownership record names NODE (every\n"
    "        record under owners/ is read first):\n"
    "          forgot node=N format=F written_at_ms=W [checked_records=R]\n"
    "          kept node=N reason=fresh|format-3|bad-object [left_ms=L]\n"
    "          kept node=N reason=named|unreadable key=K   (a record names N)\n"
    "          absent node=N\n"
    "native  on a bucket with no leases/, wal/ or snapshot/ object, create the\n"
    "        cluster object `cluster` (If-None-Match): first acquisitions then\n"
    "        skip the leases/ marker (2 requests a new actor); once, at setup:\n"
    "          native written_at_ms=W action=created|existing\n"
    "          refused reason=old-objects key=K   (exit 1, nothing written)\n"
    "          refused reason=upgraded written_at_ms=W   (exit 1)\n"
    "\n"
    "  --horizon-ms MS  how long an old node may act after its last heartbeat\n"
    "                   (default 10000, the old binary's heartbeat ttl)\n"
    "  --check          validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit: 0 done; 1 held (actors), kept (forget NODE), or the store refused a\n"
    "request (403, no such bucket); 16 an old node is running (guard); 17 an\n"
    "object is not ours or malformed; 100 usage; 111 store failure for now\n"
    "(timeout, 5xx: run it again), or the guard stopped (SIGTERM, SIGINT)\n"
    "before it passed.\n"
    "See docs/upgrade.md.\n";

enum { OPT_HORIZON = 0x2000, OPT_ALL, OPT_STALE };

static const char *prog = "upgrade-mark";

static volatile sig_atomic_t guard_stop; /* SIGTERM/SIGINT during the guard */

static void on_guard_signal(int sig)
{
	(void)sig;
	guard_stop = 1;
}

struct ctx {
	struct keep_config cfg;
	struct keep_store *store;
	int64_t horizon_ms;
};

/* ---- helpers ------------------------------------------------------------- */

/* LIST nodes/ into *l (caller inits and releases), naming what it
 * skipped; *outcome (may be NULL) gets the reply's outcome. 0, or the exit
 * code of the failure (1 refused, 111 for now). */
static int list_nodes(struct ctx *x, struct keep_list *l, enum keep_outcome *outcome)
{
	struct keep_reply r;

	keep_store_list(x->store, "nodes/", l, &r);
	if (outcome)
		*outcome = r.outcome;
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(prog, "unable to list nodes/: %s: %s", keep_outcome_name(r.outcome),
			  r.detail[0] ? r.detail : "-");
		return keep_exit_of_reply(&r);
	}
	keep_warn_skipped(prog, "nodes/", l);
	return 0;
}

/* The node id of a listed key, or NULL when it is not nodes/<valid id>. */
static const char *node_of(const char *key)
{
	const char *id = key + strlen("nodes/");

	if (strncmp(key, "nodes/", 6) != 0 || !keep_node_id_valid(id))
		return NULL;
	return id;
}

/* ---- guard ---------------------------------------------------------------- */

/* Was id reported already? If not, remember it (as far as memory allows)
 * and say no. */
static bool warned_once(char (**set)[KEEP_NODE_ID_MAX + 1], size_t *n, const char *id)
{
	char(*ns)[KEEP_NODE_ID_MAX + 1];
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*set)[i], id) == 0)
			return true;
	if (*n >= KEEP_GUARD_NODES_MAX)
		return true; /* enough said */
	ns = realloc(*set, (*n + 1) * sizeof(**set));
	if (!ns)
		return false;
	*set = ns;
	snprintf(ns[*n], sizeof(ns[*n]), "%s", id);
	(*n)++;
	return false;
}

static int guard(struct ctx *x)
{
	struct keep_guard g;
	struct keep_metrics m;
	struct keep_list l;
	struct keep_node_obj *objs = NULL;
	struct keep_guard_input *in = NULL;
	char(*warned)[KEEP_NODE_ID_MAX + 1] = NULL; /* unreadable objects reported */
	size_t i, n, cap = 0, nwarned = 0;
	int rc = KEEP_EXIT_TEMP;

	keep_guard_init(&g, &x->cfg.timing, x->horizon_ms);
	keep_metrics_init(&m, NULL, x->cfg.node_id);
	keep_metrics_set_prog(&m, x->cfg.metrics_textfile, prog);
	{
		/* a stop ends the wait at once (111: not passed) */
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_guard_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	for (;;) {
		int64_t now_mono, now_wall;
		enum keep_outcome lo;
		bool listed;

		if (guard_stop)
			goto out;

		keep_list_init(&l);
		keep_store_set_timeout(x->store, keep_timing_attempt_timeout_ms(&x->cfg.timing));
		listed = list_nodes(x, &l, &lo) == 0;
		if (listed && l.n > cap) {
			struct keep_node_obj *no = realloc(objs, l.n * sizeof(*no));
			struct keep_guard_input *ni;

			if (no)
				objs = no;
			ni = no ? realloc(in, l.n * sizeof(*ni)) : NULL;
			if (!no || !ni) {
				keep_list_release(&l);
				keep_warn(prog, "out of memory");
				goto out;
			}
			in = ni;
			cap = l.n;
		}
		n = 0;
		for (i = 0; listed && i < l.n; i++) {
			const char *id = node_of(l.v[i].key);
			struct keep_node_read nr;

			if (!id)
				continue;
			keep_node_read(x->store, id, KEEP_NODE_READ_ANY_FORMAT, &objs[n], &nr);
			if (nr.reply.outcome == KEEP_STORE_NOT_FOUND)
				continue; /* gone since the listing */
			in[n].node = id;
			in[n].read_failed = nr.reply.outcome != KEEP_STORE_OK;
			in[n].obj = nr.ok ? &objs[n] : NULL;
			if (in[n].read_failed)
				keep_warn(prog, "unable to read nodes/%s: %s", id, nr.why);
			else if (!nr.ok && !warned_once(&warned, &nwarned, id))
				/* not an old heartbeat the guard can judge, nor a node
				 * lease: reported (once), never taken as one */
				keep_warn(prog, "nodes/%s is not a valid node object (%s): ignored",
					  id, nr.why);
			n++;
		}
		now_mono = keep_boot_ms();
		now_wall = keep_judge_wall_cfg(&x->cfg);
		if (!listed) { /* the guard's retry rule (keep_guard_on_list_failure) */
			keep_list_release(&l);
			switch (keep_guard_on_list_failure(&g, lo, now_mono)) {
			case KEEP_GV_REFUSED: /* 403, no such bucket */
				rc = KEEP_EXIT_NO;
				goto out;
			case KEEP_GV_GAVE_UP:
				keep_warn(prog, "giving up after %d failed listings of nodes/",
					  g.list_failures);
				goto out;
			default:
				keep_sleep_until_boot(g.next_mono_ms);
				continue;
			}
		}
		if (keep_guard_pass(&g, in, n, now_mono, now_wall) != 0) {
			keep_list_release(&l);
			keep_warn(prog, "too many node objects, or out of memory");
			goto out;
		}
		keep_list_release(&l);
		for (i = 0; i < g.n; i++) {
			const struct keep_guard_entry *e = &g.e[i];

			if (e->lapsed_now)
				keep_warn(
				    prog,
				    "old-format heartbeat 'nodes/%s' is dated in the future "
				    "(written_at_ms=%lld, now %lld): lapsed on this node's count",
				    e->node, (long long)e->written_at_ms, (long long)now_wall);
		}
		if (g.verdict == KEEP_GV_OLD_RUNNING) {
			for (i = 0; i < g.n; i++) {
				const struct keep_guard_entry *e = &g.e[i];
				struct keep_buf b;

				if (!e->seen || e->state != KEEP_GUARD_REWRITTEN)
					continue;
				keep_line_begin(&b, "old-running");
				keep_line_str(&b, "node", e->node);
				keep_line_int(&b, "written_at_ms", e->written_at_ms);
				keep_line_int(&b, "previous_written_at_ms", e->prev_written_at_ms);
				keep_line_end(&b);
				keep_log(KEEP_LOG_FATAL, prog,
					 "an old (per-actor lease) node is running: "
					 "'nodes/%s' was rewritten; stop it first "
					 "(docs/runbooks/upgrade.md)",
					 e->node);
			}
			rc = KEEP_EXIT_OLD_RUNNING;
			goto out;
		}
		if (g.verdict == KEEP_GV_PASS) {
			struct keep_buf b;

			keep_line_begin(&b, "pass");
			keep_line_int(&b, "old", (int64_t)g.n);
			keep_line_end(&b);
			rc = KEEP_EXIT_OK;
			goto out;
		}
		for (i = 0; i < g.n; i++) {
			const struct keep_guard_entry *e = &g.e[i];
			struct keep_buf b;

			if (!e->seen || e->state != KEEP_GUARD_FRESH)
				continue;
			keep_line_begin(&b, "wait");
			keep_line_str(&b, "node", e->node);
			keep_line_int(&b, "format", e->format);
			keep_line_int(&b, "written_at_ms", e->written_at_ms);
			keep_line_int(&b, "left_ms", e->left_ms);
			keep_line_end(&b);
		}
		keep_metrics_set_ms(&m, "keep_start_guard_wait_seconds",
				    g.left_ms > 0 ? g.left_ms : 0);
		keep_metrics_flush(&m);
		if (g.left_ms > 0)
			keep_info(prog,
				  "waiting for old-format heartbeats to go stale: %lld ms left",
				  (long long)g.left_ms);
		else
			keep_info(prog, "a node object could not be read; listing again");
		keep_sleep_until_boot(g.next_mono_ms);
	}
out:
	keep_metrics_set_ms(&m, "keep_start_guard_wait_seconds", 0);
	keep_metrics_flush(&m);
	keep_guard_release(&g);
	free(objs);
	free(in);
	free(warned);
	return rc;
}

/* ---- actors ---------------------------------------------------------------- */

static void line_key(const char *type, const char *key, const char *reason)
{
	struct keep_buf b;

	keep_line_begin(&b, type);
	keep_line_str(&b, "key", key);
	keep_line_str(&b, "reason", reason);
	keep_line_end(&b);
}

static int mark_one(struct ctx *x, const char *key)
{
	struct keep_mark_result res;
	struct keep_buf b;

	if (!keep_owner_key_valid(key))
		return keep_cli_invalid_key(prog, key);
	keep_upgrade_mark_actor(x->store, key, keep_judge_wall_cfg(&x->cfg), &x->cfg.timing, &res);
	switch (res.kind) {
	case KEEP_MR_MARKED:
		keep_line_begin(&b, "marked");
		keep_line_str(&b, "key", key);
		keep_line_int(&b, "seed", res.seed);
		keep_line_str(&b, "action",
			      res.action == KEEP_MARK_CREATE	? "created"
			      : res.action == KEEP_MARK_REPLACE ? "replaced"
								: "existing");
		keep_line_int(&b, "keys_max", res.keys_max);
		keep_line_end(&b);
		return KEEP_EXIT_OK;
	case KEEP_MR_HELD:
		keep_line_begin(&b, "held");
		keep_line_str(&b, "key", key);
		keep_line_str(&b, "node", res.old.node);
		keep_line_int(&b, "generation", res.old.generation);
		keep_line_int(&b, "expires_at_ms", res.old.expires_at_ms);
		keep_line_int(&b, "live_until_ms", res.live_until_ms);
		keep_line_end(&b);
		return KEEP_EXIT_NO;
	case KEEP_MR_BAD_OBJECT:
		keep_warn(prog, "leases/%s is not ours or malformed (%s): nothing written", key,
			  res.detail);
		line_key("error", key, "bad-object");
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_MR_BAD_KEY:
		keep_warn(prog, "%s: nothing written", res.detail);
		line_key("error", key, "bad-key");
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_MR_FAILED:
		break;
	}
	keep_warn(prog, "unable to mark '%s': %s", key, res.detail);
	line_key("error", key, "store");
	return res.refused ? KEEP_EXIT_NO : KEEP_EXIT_TEMP;
}

/* Every actor found under leases/, owners/, wal/ and snapshot/, sorted,
 * each once, into *keys (caller inits and releases). 0 or an exit code. */
static int find_actors(struct ctx *x, struct keep_list *keys)
{
	static const char *const tops[] = {KEEP_LEASES_PREFIX, KEEP_OWNER_PREFIX, KEEP_WAL_PREFIX,
					   KEEP_SNAPSHOT_PREFIX};
	struct keep_list all;
	size_t t, i, w;

	keep_list_init(&all);
	for (t = 0; t < sizeof(tops) / sizeof(tops[0]); t++) {
		struct keep_list l;
		struct keep_reply r;

		keep_list_init(&l);
		keep_store_list(x->store, tops[t], &l, &r);
		if (r.outcome != KEEP_STORE_OK) {
			keep_warn(prog, "unable to list %s: %s: %s", tops[t],
				  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
			keep_list_release(&l);
			keep_list_release(&all);
			return keep_exit_of_reply(&r);
		}
		keep_warn_skipped(prog, tops[t], &l);
		for (i = 0; i < l.n; i++) {
			char key[KEEP_OWNER_KEY_MAX + 1];

			if (keep_upgrade_actor_of(tops[t], l.v[i].key, key, sizeof(key)) != 0) {
				keep_warn(prog, "'%s' names no actor: skipped", l.v[i].key);
				continue;
			}
			/* wal/ and snapshot/ list one key per segment: skip repeats */
			if (all.n && strcmp(all.v[all.n - 1].key, key) == 0)
				continue;
			if (keep_list_add(&all, key, "") != 0) {
				keep_warn(prog, "too many actors, or out of memory");
				keep_list_release(&l);
				keep_list_release(&all);
				return KEEP_EXIT_TEMP;
			}
		}
		keep_list_release(&l);
	}
	keep_list_sort(&all);
	for (i = 0, w = 0; i < all.n; i++) {
		if (w && strcmp(all.v[w - 1].key, all.v[i].key) == 0) {
			free(all.v[i].key);
			continue;
		}
		all.v[w++] = all.v[i];
	}
	all.n = w;
	*keys = all;
	return 0;
}

static int actors(struct ctx *x, char **argv, int argc, bool all)
{
	int worst = KEEP_EXIT_OK, rc, i;

	if (all) {
		struct keep_list keys;
		size_t k;

		keep_list_init(&keys);
		rc = find_actors(x, &keys);
		if (rc)
			return rc;
		for (k = 0; k < keys.n; k++)
			keep_exit_worst(&worst, mark_one(x, keys.v[k].key));
		keep_list_release(&keys);
		return worst;
	}
	if (argc > 0) {
		for (i = 0; i < argc; i++)
			keep_exit_worst(&worst, mark_one(x, argv[i]));
		return worst;
	}
	{
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		while ((n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[--n] = '\0';
			if (n == 0)
				continue;
			if ((size_t)n > KEEP_LINE_MAX) {
				keep_warn(prog, "input line too long");
				keep_exit_worst(&worst, KEEP_EXIT_USAGE);
				continue;
			}
			if (memchr(line, '\0', (size_t)n)) {
				keep_warn(prog, "input line with a NUL byte: refused");
				keep_exit_worst(&worst, KEEP_EXIT_USAGE);
				continue;
			}
			keep_exit_worst(&worst, mark_one(x, line));
		}
		free(line);
	}
	return worst;
}

/* ---- forget ------------------------------------------------------------------ */

/* The created fence of id (KEEP_FORGET_FENCE) may go only when no
 * ownership record names id: list owners/ and read every record
 * (keep_upgrade_forget_fence_record), saying how many were checked. 0 when
 * none names it (*checked: records read); else the exit code, with the
 * `kept` line said (1: a record names id, or one could not be read). */
static int fence_unnamed_root(struct ctx *x, const char *id, int64_t *checked)
{
	struct keep_owner_rec rec;
	struct keep_owner_read orr;
	struct keep_list l;
	struct keep_reply r;
	struct keep_buf b;
	int64_t next_say = keep_boot_ms() + x->cfg.timing.period_ms;
	size_t i, plen = strlen(KEEP_OWNER_PREFIX);
	int rc = 0;

	*checked = 0;
	keep_list_init(&l);
	keep_store_list(x->store, KEEP_OWNER_PREFIX, &l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(prog, "unable to list " KEEP_OWNER_PREFIX ": %s: %s",
			  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
		keep_list_release(&l);
		return keep_exit_of_reply(&r);
	}
	keep_warn_skipped(prog, KEEP_OWNER_PREFIX, &l);
	if (l.nskipped) { /* a key it cannot read may name id */
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "unreadable");
		keep_line_str(&b, "key", l.skipped[0].key);
		if (x->cfg.app[0])
			keep_line_str(&b, "app", x->cfg.app);
		keep_line_end(&b);
		keep_warn(prog,
			  "the listing of " KEEP_OWNER_PREFIX " skipped %zu key(s) it cannot read: "
			  "the fence of nodes/%s stays",
			  l.nskipped, id);
		keep_list_release(&l);
		return KEEP_EXIT_NO;
	}
	for (i = 0; i < l.n && !rc; i++) {
		const char *key = l.v[i].key + plen;
		enum keep_forget_record fr;

		if (strncmp(l.v[i].key, KEEP_OWNER_PREFIX, plen) != 0 ||
		    !keep_owner_key_valid(key)) {
			keep_warn(prog, "'%s' is no ownership record key: skipped", l.v[i].key);
			continue;
		}
		keep_owner_read(x->store, key, &rec, &orr);
		fr = keep_upgrade_forget_fence_record(id, orr.reply.outcome, orr.ok ? &rec : NULL);
		(*checked)++;
		if (fr == KEEP_FORGET_REC_CLEAR) {
			if (keep_boot_ms() >= next_say) { /* a long check says how far it is */
				keep_info(prog, "forget %s: %lld of %zu ownership records checked",
					  id, (long long)*checked, l.n);
				next_say = keep_boot_ms() + x->cfg.timing.period_ms;
			}
			continue;
		}
		keep_buf_init(&b, KEEP_LINE_MAX);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", fr == KEEP_FORGET_REC_NAMED ? "named" : "unreadable");
		keep_line_str(&b, "key", key);
		if (x->cfg.app[0])
			keep_line_str(&b, "app", x->cfg.app);
		keep_line_end(&b);
		if (fr == KEEP_FORGET_REC_NAMED) {
			keep_info(prog,
				  "owners/%s names %s (generation %lld): the fence of nodes/%s "
				  "frees it, so it stays",
				  key, id, (long long)rec.generation, id);
			rc = KEEP_EXIT_NO;
		} else {
			keep_warn(prog,
				  "owners/%s could not be read (%s): the fence of nodes/%s stays",
				  key, orr.why, id);
			rc = orr.reply.outcome == KEEP_STORE_OK ? KEEP_EXIT_NO
								: keep_exit_of_reply(&orr.reply);
		}
	}
	keep_list_release(&l);
	return rc;
}

/* The roots of the bucket (ADR 0022): every ROOT of an apps/ROOT/owners/
 * key, each once, into roots (at most max; more are refused: 1, said).
 * 0, or the exit code of the listing's failure. */
static int list_app_roots(struct ctx *x, char (*roots)[KEEP_APP_ROOT_MAX + 1], size_t max,
			  size_t *n)
{
	struct keep_list l;
	struct keep_reply r;
	size_t i, k;

	*n = 0;
	keep_list_init(&l);
	keep_store_list(x->store, "apps/", &l, &r);
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(prog, "unable to list apps/: %s: %s", keep_outcome_name(r.outcome),
			  r.detail[0] ? r.detail : "-");
		keep_list_release(&l);
		return keep_exit_of_reply(&r);
	}
	for (i = 0; i < l.n; i++) {
		char name[KEEP_APP_ROOT_MAX + 1];

		if (keep_upgrade_app_root_of(l.v[i].key, name, sizeof(name)) != 0)
			continue;
		for (k = 0; k < *n && strcmp(roots[k], name) != 0; k++)
			;
		if (k < *n)
			continue;
		if (*n == max) {
			keep_warn(prog, "over %zu application roots under apps/: the fence stays",
				  max);
			keep_list_release(&l);
			return KEEP_EXIT_NO;
		}
		snprintf(roots[(*n)++], sizeof(roots[0]), "%s", name);
	}
	keep_list_release(&l);
	return 0;
}

/* fence_unnamed_root over the default root and every application root of
 * the bucket (a record of any root may name id: nodes/ is shared). */
static int fence_unnamed(struct ctx *x, const char *id, int64_t *checked, size_t *nroots)
{
	static char roots[256][KEEP_APP_ROOT_MAX + 1];
	int64_t c = 0;
	size_t i;
	int rc;

	*nroots = 0;
	rc = fence_unnamed_root(x, id, checked);
	if (!rc)
		rc = list_app_roots(x, roots, sizeof(roots) / sizeof(roots[0]), nroots);
	for (i = 0; !rc && i < *nroots; i++) {
		struct ctx y = *x;

		_Static_assert(sizeof(y.cfg.app) == sizeof(roots[i]), "a root's buffer");
		memcpy(y.cfg.app, roots[i], sizeof(y.cfg.app)); /* NUL-terminated there */
		y.store = keep_store_open_or_die(prog, &y.cfg, NULL);
		rc = fence_unnamed_root(&y, id, &c);
		keep_store_free(y.store);
		*checked += c;
	}
	return rc;
}

/* Forget one node. quiet: --stale (no line for format-3 objects). */
static int forget_one(struct ctx *x, const char *id, bool quiet)
{
	struct keep_node_obj o;
	struct keep_node_read nr;
	enum keep_forget_verdict v;
	struct keep_reply r;
	struct keep_buf b;
	char k[KEEP_NODE_ID_MAX + 8];
	int64_t left = 0, checked = -1;
	size_t nroots = 0;
	int rc;

	keep_node_read(x->store, id, KEEP_NODE_READ_ANY_FORMAT, &o, &nr);
	v = keep_upgrade_forget_decide(nr.reply.outcome, nr.ok ? &o : NULL, nr.derr,
				       keep_judge_wall_cfg(&x->cfg), &x->cfg.timing, x->horizon_ms,
				       &left);
	keep_buf_init(&b, KEEP_LINE_MAX);
	switch (v) {
	case KEEP_FORGET_ABSENT:
		if (!quiet) {
			keep_line_start_out(&b, "absent");
			keep_line_str(&b, "node", id);
			keep_line_emit(&b);
			/* exit 0 (done: a second run finds it gone), but a typo
			 * must not pass for a removal */
			keep_info(prog,
				  "nodes/%s does not exist: nothing to forget (check the id: "
				  "`node-watch --once` lists the nodes)",
				  id);
		}
		keep_buf_release(&b);
		return KEEP_EXIT_OK;
	case KEEP_FORGET_FAILED:
		keep_warn(prog, "unable to read nodes/%s: %s", id, nr.why);
		keep_line_start_out(&b, "error");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "store");
		keep_line_end(&b);
		return keep_exit_of_reply(&nr.reply);
	case KEEP_FORGET_FENCE:
		if (quiet) { /* --stale forgets old heartbeats only */
			keep_buf_release(&b);
			return KEEP_EXIT_OK;
		}
		keep_buf_release(&b);
		rc = fence_unnamed(x, id, &checked, &nroots);
		if (rc)
			return rc;
		keep_info(prog,
			  "nodes/%s is an operator's fence created over an absent object; none of "
			  "the %lld ownership records under " KEEP_OWNER_PREFIX
			  "%s names %s: removing it",
			  id, (long long)checked,
			  nroots ? " and the application roots' apps/ROOT/owners/" : "", id);
		keep_buf_init(&b, KEEP_LINE_MAX);
		break;
	case KEEP_FORGET_FORMAT3:
		if (!quiet) {
			keep_line_start_out(&b, "kept");
			keep_line_str(&b, "node", id);
			keep_line_str(&b, "reason", "format-3");
			keep_line_emit(&b);
			keep_info(
			    prog,
			    "nodes/%s is a node lease that a node of this keep wrote (format 3): "
			    "nothing deleted; forget removes only old-format heartbeats and "
			    "fences created over an absent object (`lease-fence --create`); a "
			    "node retired for good stays listed (runbook revoke-a-node.md)",
			    id);
		}
		keep_buf_release(&b);
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_NO;
	case KEEP_FORGET_BAD_OBJECT:
		keep_warn(prog, "nodes/%s is not ours or malformed (%s): not deleted", id, nr.why);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "bad-object");
		keep_line_end(&b);
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_BAD_OBJECT;
	case KEEP_FORGET_FRESH:
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason", "fresh");
		keep_line_int(&b, "format", o.format);
		keep_line_int(&b, "written_at_ms", o.written_at_ms);
		keep_line_int(&b, "left_ms", left);
		keep_line_end(&b);
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_NO;
	case KEEP_FORGET_DELETE:
		break;
	}
	/* If-Match the read's version (a store that ignores it on DELETE, as
	 * RGW does, may delete a body rewritten since: an old-format heartbeat
	 * frees nothing either way, and a running old node writes it again) */
	snprintf(k, sizeof(k), "nodes/%s", id);
	keep_store_del(x->store, k, nr.reply.version, &r);
	if (r.outcome == KEEP_STORE_OK || r.outcome == KEEP_STORE_NOT_FOUND) {
		keep_line_start_out(&b, "forgot");
		keep_line_str(&b, "node", id);
		keep_line_int(&b, "format", o.format);
		keep_line_int(&b, "written_at_ms", o.written_at_ms);
		if (checked >= 0) /* a created fence: the records it checked */
			keep_line_int(&b, "checked_records", checked);
		keep_line_end(&b);
		return KEEP_EXIT_OK;
	}
	if (r.outcome == KEEP_STORE_CONFLICT) {
		/* the delete's condition failed: read again to say why — the
		 * object was rewritten since our read (look again next time), or
		 * it is unchanged and another request refused ours (a 409) */
		struct keep_node_read again;
		struct keep_node_obj o2;

		keep_node_read(x->store, id, KEEP_NODE_READ_ANY_FORMAT, &o2, &again);
		keep_line_start_out(&b, "kept");
		keep_line_str(&b, "node", id);
		keep_line_str(&b, "reason",
			      keep_forget_conflict_name(keep_upgrade_forget_on_conflict(
				  nr.reply.version, again.reply.outcome, again.reply.version)));
		keep_line_end(&b);
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_NO;
	}
	keep_warn(prog, "unable to delete nodes/%s: %s: %s", id, keep_outcome_name(r.outcome),
		  r.detail[0] ? r.detail : "-");
	keep_line_start_out(&b, "error");
	keep_line_str(&b, "node", id);
	keep_line_str(&b, "reason", "store");
	keep_line_end(&b);
	return keep_exit_of_reply(&r);
}

static int forget(struct ctx *x, const char *node, bool stale)
{
	struct keep_list l;
	size_t i;
	int worst = KEEP_EXIT_OK, rc;

	if (!stale)
		return forget_one(x, node, false);
	keep_list_init(&l);
	rc = list_nodes(x, &l, NULL);
	if (rc) {
		keep_list_release(&l);
		return rc;
	}
	for (i = 0; i < l.n; i++) {
		const char *id = node_of(l.v[i].key);

		if (id)
			keep_exit_worst(&worst, forget_one(x, id, true));
	}
	keep_list_release(&l);
	return worst;
}

/* ---- native ------------------------------------------------------------------- */

/* Print `TYPE [reason=R] [key=K] written_at_ms=W [action=A]` (NULL and
 * w 0: left out). 0, or 111 when stdout is closed. */
static int native_line(const char *type, const char *reason, const char *key, int64_t w,
		       const char *action)
{
	struct keep_buf line;
	int rc;

	keep_buf_init(&line, KEEP_LINE_MAX);
	keep_line_start_out(&line, type);
	if (reason)
		keep_line_str(&line, "reason", reason);
	if (key)
		keep_line_str(&line, "key", key);
	if (w)
		keep_line_int(&line, "written_at_ms", w);
	if (action)
		keep_line_str(&line, "action", action);
	rc = keep_line_end(&line) == 0 ? 0 : KEEP_EXIT_TEMP;
	keep_buf_release(&line);
	return rc;
}

/* upgrade-mark native: see the usage; a driver of keep_native_*
 * (lib/core/cluster.h): never written over an old object, a conflict read
 * again at most KEEP_NATIVE_CONFLICTS_MAX times. */
static int native(struct ctx *x)
{
	struct keep_native m;
	struct keep_native_act act;
	struct keep_native_reply nr;
	struct keep_walls now;
	struct keep_reply r;
	struct keep_buf b;
	struct keep_list l;

	_Static_assert(KEEP_NATIVE_KEY_MAX == KEEP_KEY_MAX, "a listed key fits the machine's");
	memset(&r, 0, sizeof(r));
	keep_native_init(&m);
	for (;;) {
		keep_walls_cfg(&x->cfg, &now);
		keep_native_next(&m, &now, &act);
		if (act.kind == KEEP_NATIVE_ACT_DONE)
			break;
		memset(&nr, 0, sizeof(nr));
		keep_buf_init(&b, KEEP_BODY_MAX);
		keep_list_init(&l);
		if (act.kind == KEEP_NATIVE_ACT_READ) {
			keep_store_get_ours(x->store, KEEP_CLUSTER_KEY, &b, &r);
			nr.body = b.data;
			nr.len = b.len;
		} else if (act.kind == KEEP_NATIVE_ACT_LIST) {
			keep_store_list(x->store, act.prefix, &l, &r);
			nr.first = l.n ? l.v[0].key : l.nskipped ? l.skipped[0].key : NULL;
		} else {
			keep_store_put(x->store, KEEP_CLUSTER_KEY, act.body, act.len,
				       KEEP_COND_IF_NONE_MATCH, NULL, &r);
		}
		nr.outcome = r.outcome;
		nr.not_ours = r.not_ours;
		nr.detail = r.detail;
		keep_native_on_reply(&m, &nr);
		keep_list_release(&l);
		keep_buf_release(&b);
	}
	switch (m.res) {
	case KEEP_NATIVE_CREATED:
		return native_line("native", NULL, NULL, m.obj.written_at_ms, "created");
	case KEEP_NATIVE_EXISTING:
		return native_line("native", NULL, NULL, m.obj.written_at_ms, "existing");
	case KEEP_NATIVE_UPGRADED:
		native_line("refused", "upgraded", NULL, m.obj.written_at_ms, NULL);
		return KEEP_EXIT_NO;
	case KEEP_NATIVE_OLD_OBJECTS:
		keep_warn(prog,
			  "%s holds objects: this cluster ran per-actor leases (or something "
			  "else wrote there); not native, nothing written (docs/upgrade.md)",
			  m.old_prefix);
		native_line("refused", "old-objects", m.key, 0, NULL);
		return KEEP_EXIT_NO;
	case KEEP_NATIVE_BAD_OBJECT:
		keep_warn(prog,
			  "the object '" KEEP_CLUSTER_KEY "' is not a keep cluster object (%s)",
			  m.why);
		return KEEP_EXIT_BAD_OBJECT;
	case KEEP_NATIVE_FAILED:
		keep_warn(prog, "unable to %s %s: %s: %s",
			  m.failed_act == KEEP_NATIVE_ACT_LIST	   ? "list"
			  : m.failed_act == KEEP_NATIVE_ACT_CREATE ? "create"
								   : "read",
			  m.failed_act == KEEP_NATIVE_ACT_LIST ? m.old_prefix : KEEP_CLUSTER_KEY,
			  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
		return keep_exit_of_reply(&r);
	case KEEP_NATIVE_ENCODE:
		keep_warn(prog, "unable to encode the cluster object");
		return KEEP_EXIT_TEMP;
	case KEEP_NATIVE_GAVE_UP:
		break;
	}
	keep_warn(prog,
		  "the create of '" KEEP_CLUSTER_KEY "' conflicted %d times while a read found "
		  "no object (a stale replica, or a store that ignores If-None-Match): nothing "
		  "written; run it again later",
		  m.conflicts);
	return KEEP_EXIT_TEMP;
}

/* ---- main ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"horizon-ms", required_argument, NULL, OPT_HORIZON},
					     {"all", no_argument, NULL, OPT_ALL},
					     {"stale", no_argument, NULL, OPT_STALE},
					     {"check", no_argument, NULL, KEEP_OPT_CHECK},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct ctx x;
	const char *sub;
	bool all = false, stale = false;
	int c, rc;

	keep_supervised_start(prog); /* under keep-agent: never outlive it */
	memset(&x, 0, sizeof(x));
	x.horizon_ms = KEEP_UPGRADE_HORIZON_MS;
	keep_cli_init(&cli, prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:", opts)) != -1) {
		switch (c) {
		case OPT_HORIZON:
			x.horizon_ms = keep_cli_int_arg(&cli, "--horizon-ms", optarg, 0, 86400000);
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_STALE:
			stale = true;
			break;
		}
	}
	keep_cli_setup(&cli, &x.cfg, KEEP_NEED_STORE);
	if (optind >= argc)
		keep_cli_usage_error(&cli, "no subcommand (guard, actors, forget or native)");
	sub = argv[optind++];
	if (strcmp(sub, "guard") == 0) {
		if (optind != argc || all || stale)
			keep_cli_usage_error(&cli, "guard takes no argument");
	} else if (strcmp(sub, "actors") == 0) {
		if (stale || (all && optind != argc))
			keep_cli_usage_error(&cli, "give keys, --all, or keys on stdin");
	} else if (strcmp(sub, "forget") == 0) {
		if (all || (stale ? optind != argc : optind + 1 != argc))
			keep_cli_usage_error(&cli, "give either NODE or --stale");
		if (!stale && !keep_node_id_valid(argv[optind]))
			keep_cli_usage_error(&cli, "invalid node id '%s'", argv[optind]);
	} else if (strcmp(sub, "native") == 0) {
		if (optind != argc || all || stale)
			keep_cli_usage_error(&cli, "native takes no argument");
	} else {
		keep_cli_usage_error(&cli, "unknown subcommand '%s'", sub);
	}

	x.store = keep_store_open_or_die(prog, &x.cfg, NULL);
	if (strcmp(sub, "guard") == 0)
		rc = guard(&x);
	else if (strcmp(sub, "actors") == 0)
		rc = actors(&x, argv + optind, argc - optind, all);
	else if (strcmp(sub, "native") == 0)
		rc = native(&x);
	else
		rc = forget(&x, stale ? NULL : argv[optind], stale);
	keep_store_free(x.store);
	return rc;
}
