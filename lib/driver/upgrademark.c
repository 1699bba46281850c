/* keep — upgrade-mark's driver: guard, actors, native (ADR 0020 §6;
 * docs/upgrade.md). See upgrademark.h. */
#include "upgrademark.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../codec/ownerrec.h"
#include "../core/cluster.h"
#include "../core/mark.h"
#include "../core/upgrade.h"
#include "../local/holds.h"
#include "../local/metrics.h"
#include "../platform/clock.h"
#include "../platform/line.h"
#include "batch.h"
#include "cli.h"
#include "ownstore.h"
#include "storecmd.h"
#include "upgrade.h"

static volatile sig_atomic_t guard_stop; /* SIGTERM/SIGINT during the guard */

static void on_guard_signal(int sig)
{
	(void)sig;
	guard_stop = 1;
}

/* ---- helpers ------------------------------------------------------------- */

int keep_upgmark_list_nodes(const struct keep_upgmark *x, struct keep_list *l,
			    enum keep_outcome *outcome)
{
	struct keep_reply r;

	keep_store_list(x->store, "nodes/", l, &r);
	if (outcome)
		*outcome = r.outcome;
	if (r.outcome != KEEP_STORE_OK) {
		keep_warn(x->prog, "unable to list nodes/: %s: %s", keep_outcome_name(r.outcome),
			  r.detail[0] ? r.detail : "-");
		return keep_exit_of_reply(&r);
	}
	keep_warn_skipped(x->prog, "nodes/", l);
	return 0;
}

const char *keep_upgmark_node_of(const char *key)
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

int keep_upgmark_guard(const struct keep_upgmark *x)
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
	keep_metrics_set_prog(&m, x->cfg.metrics_textfile, x->prog);
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
		keep_store_set_timeout(x->store, keep_guard_request_timeout_ms(&x->cfg.timing));
		listed = keep_upgmark_list_nodes(x, &l, &lo) == 0;
		if (listed && l.n > cap) {
			struct keep_node_obj *no = realloc(objs, l.n * sizeof(*no));
			struct keep_guard_input *ni;

			if (no)
				objs = no;
			ni = no ? realloc(in, l.n * sizeof(*ni)) : NULL;
			if (!no || !ni) {
				keep_list_release(&l);
				keep_warn(x->prog, "out of memory");
				goto out;
			}
			in = ni;
			cap = l.n;
		}
		n = 0;
		for (i = 0; listed && i < l.n; i++) {
			const char *id = keep_upgmark_node_of(l.v[i].key);
			struct keep_node_read nr;

			if (!id)
				continue;
			keep_node_read(x->store, id, KEEP_NODE_READ_ANY_FORMAT, &objs[n], &nr);
			if (!keep_guard_input_of(&in[n], id, nr.reply.outcome,
						 nr.ok ? &objs[n] : NULL))
				continue; /* gone since the listing */
			if (in[n].read_failed)
				keep_warn(x->prog, "unable to read nodes/%s: %s", id, nr.why);
			else if (!nr.ok && !warned_once(&warned, &nwarned, id))
				/* not an old heartbeat the guard can judge, nor a node
				 * lease: reported (once), never taken as one */
				keep_warn(x->prog,
					  "nodes/%s is not a valid node object (%s): ignored", id,
					  nr.why);
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
				keep_warn(x->prog, "giving up after %d failed listings of nodes/",
					  g.list_failures);
				goto out;
			default:
				keep_sleep_until_boot(g.next_mono_ms);
				continue;
			}
		}
		if (keep_guard_pass(&g, in, n, now_mono, now_wall) != 0) {
			keep_list_release(&l);
			keep_warn(x->prog, "too many node objects, or out of memory");
			goto out;
		}
		keep_list_release(&l);
		for (i = 0; i < g.n; i++) {
			const struct keep_guard_entry *e = &g.e[i];

			if (e->lapsed_now)
				keep_warn(
				    x->prog,
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
				keep_log(KEEP_LOG_FATAL, x->prog,
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
			keep_info(x->prog,
				  "waiting for old-format heartbeats to go stale: %lld ms left",
				  (long long)g.left_ms);
		else
			keep_info(x->prog, "a node object could not be read; listing again");
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

static int mark_one(const struct keep_upgmark *x, const char *key)
{
	struct keep_mark_result res;
	struct keep_buf b;

	if (!keep_owner_key_valid(key))
		return keep_cli_invalid_key(x->prog, key);
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
		return keep_mark_result_exit_code(&res);
	case KEEP_MR_HELD:
		keep_line_begin(&b, "held");
		keep_line_str(&b, "key", key);
		keep_line_str(&b, "node", res.old.node);
		keep_line_int(&b, "generation", res.old.generation);
		keep_line_int(&b, "expires_at_ms", res.old.expires_at_ms);
		keep_line_int(&b, "live_until_ms", res.live_until_ms);
		keep_line_end(&b);
		return keep_mark_result_exit_code(&res);
	case KEEP_MR_BAD_OBJECT:
		keep_warn(x->prog, "leases/%s is not ours or malformed (%s): nothing written", key,
			  res.detail);
		line_key("error", key, "bad-object");
		return keep_mark_result_exit_code(&res);
	case KEEP_MR_BAD_KEY:
		keep_warn(x->prog, "%s: nothing written", res.detail);
		line_key("error", key, "bad-key");
		return keep_mark_result_exit_code(&res);
	case KEEP_MR_FAILED:
		break;
	}
	keep_warn(x->prog, "unable to mark '%s': %s", key, res.detail);
	line_key("error", key, "store");
	return keep_mark_result_exit_code(&res);
}

/* Every actor found under keep_upgrade_actor_tops, sorted,
 * each once, into *keys (caller inits and releases). 0 or an exit code. */
static int find_actors(const struct keep_upgmark *x, struct keep_list *keys)
{
	const char *const *tops = keep_upgrade_actor_tops;
	struct keep_list all;
	size_t t, i, w;

	keep_list_init(&all);
	for (t = 0; t < KEEP_UPGRADE_ACTOR_TOPS; t++) {
		struct keep_list l;
		struct keep_reply r;

		keep_list_init(&l);
		keep_store_list(x->store, tops[t], &l, &r);
		if (r.outcome != KEEP_STORE_OK) {
			keep_warn(x->prog, "unable to list %s: %s: %s", tops[t],
				  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
			keep_list_release(&l);
			keep_list_release(&all);
			return keep_exit_of_reply(&r);
		}
		keep_warn_skipped(x->prog, tops[t], &l);
		for (i = 0; i < l.n; i++) {
			char key[KEEP_OWNER_KEY_MAX + 1];

			if (keep_upgrade_actor_of(tops[t], l.v[i].key, key, sizeof(key)) != 0) {
				keep_warn(x->prog, "'%s' names no actor: skipped", l.v[i].key);
				continue;
			}
			/* wal/ and snapshot/ list one key per segment: skip repeats */
			if (all.n && strcmp(all.v[all.n - 1].key, key) == 0)
				continue;
			if (keep_list_add(&all, key, "") != 0) {
				keep_warn(x->prog, "too many actors, or out of memory");
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

int keep_upgmark_actors(const struct keep_upgmark *x, char *const *keys, int nkeys, bool all)
{
	int worst = KEEP_EXIT_OK, rc, i;

	if (all) {
		struct keep_list found;
		size_t k;

		keep_list_init(&found);
		rc = find_actors(x, &found);
		if (rc)
			return rc;
		for (k = 0; k < found.n; k++)
			keep_exit_worst(&worst, mark_one(x, found.v[k].key));
		keep_list_release(&found);
		return worst;
	}
	if (nkeys > 0) {
		for (i = 0; i < nkeys; i++)
			keep_exit_worst(&worst, mark_one(x, keys[i]));
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
				keep_warn(x->prog, "input line too long");
				keep_exit_worst(&worst, KEEP_EXIT_USAGE);
				continue;
			}
			if (memchr(line, '\0', (size_t)n)) {
				keep_warn(x->prog, "input line with a NUL byte: refused");
				keep_exit_worst(&worst, KEEP_EXIT_USAGE);
				continue;
			}
			keep_exit_worst(&worst, mark_one(x, line));
		}
		free(line);
	}
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

int keep_upgmark_native(const struct keep_upgmark *x)
{
	struct keep_native m;
	struct keep_native_act act;
	struct keep_native_reply nr;
	struct keep_walls now;
	struct keep_reply r;
	struct keep_buf b;
	struct keep_list l;
	int rc;

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
	rc = keep_native_exit_code(&m);
	switch (m.res) {
	case KEEP_NATIVE_CREATED:
		return native_line("native", NULL, NULL, m.obj.written_at_ms, "created");
	case KEEP_NATIVE_EXISTING:
		return native_line("native", NULL, NULL, m.obj.written_at_ms, "existing");
	case KEEP_NATIVE_UPGRADED:
		native_line("refused", "upgraded", NULL, m.obj.written_at_ms, NULL);
		return rc;
	case KEEP_NATIVE_OLD_OBJECTS:
		keep_warn(x->prog,
			  "%s holds objects: this cluster ran per-actor leases (or something "
			  "else wrote there); not native, nothing written (docs/upgrade.md)",
			  m.old_prefix);
		native_line("refused", "old-objects", m.key, 0, NULL);
		return rc;
	case KEEP_NATIVE_BAD_OBJECT:
		keep_warn(x->prog,
			  "the object '" KEEP_CLUSTER_KEY "' is not a keep cluster object (%s)",
			  m.why);
		return rc;
	case KEEP_NATIVE_FAILED:
		keep_warn(x->prog, "unable to %s %s: %s: %s",
			  m.failed_act == KEEP_NATIVE_ACT_LIST	   ? "list"
			  : m.failed_act == KEEP_NATIVE_ACT_CREATE ? "create"
								   : "read",
			  m.failed_act == KEEP_NATIVE_ACT_LIST ? m.old_prefix : KEEP_CLUSTER_KEY,
			  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
		return rc;
	case KEEP_NATIVE_ENCODE:
		keep_warn(x->prog, "unable to encode the cluster object");
		return rc;
	case KEEP_NATIVE_GAVE_UP:
		break;
	}
	keep_warn(x->prog,
		  "the create of '" KEEP_CLUSTER_KEY "' conflicted %d times while a read found "
		  "no object (a stale replica, or a store that ignores If-None-Match): nothing "
		  "written; run it again later",
		  m.conflicts);
	return rc;
}
