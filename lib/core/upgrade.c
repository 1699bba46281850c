/* keep — the upgrade from per-actor leases, sans I/O (ADR 0020 §6). */
#include "upgrade.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../base/parse.h"
#include "../codec/ownerrec.h"

/* ---- codec ------------------------------------------------------------------ */

static void seterr(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

/* 1..n ASCII digits, the first not '0'. */
static bool all_digits(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || s[0] == '0')
		return false;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Take the next line of [*p, end) into *line and *llen (without '\n');
 * false when no complete line is left. */
static bool next_line(const char **p, const char *end, const char **line, size_t *llen)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl)
		return false;
	*line = *p;
	*llen = (size_t)(nl - *p);
	*p = nl + 1;
	return true;
}

/* "name value": the value of a line starting with name and one space. */
static bool field(const char *line, size_t llen, const char *name, const char **val, size_t *vlen)
{
	size_t n = strlen(name);

	if (llen <= n + 1 || memcmp(line, name, n) != 0 || line[n] != ' ')
		return false;
	*val = line + n + 1;
	*vlen = llen - n - 1;
	return true;
}

int keep_lease_obj_decode(const char *buf, size_t len, struct keep_lease_obj *out, char *err,
			  size_t errlen)
{
	const char *p = buf, *end = buf + len, *line, *v;
	size_t llen, vlen, i;
	char id[KEEP_NODE_ID_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (len > KEEP_LEASEOBJ_MAX) {
		seterr(err, errlen, "object too big");
		return KEEP_ERR_TOOBIG;
	}
	if (!next_line(&p, end, &line, &llen)) {
		if (len >= 16 && memcmp(buf, "wasmkeep-lease ", 15) == 0 &&
		    (buf[15] == '1' || buf[15] == '2') && len == 16) {
			seterr(err, errlen, "no final newline");
			return KEEP_ERR_PARSE;
		}
		seterr(err, errlen, "not a wasmkeep-lease object");
		return KEEP_ERR_NOTOURS;
	}
	if (llen == 16 && memcmp(line, "wasmkeep-lease 1", 16) == 0)
		out->format = 1;
	else if (llen == 16 && memcmp(line, "wasmkeep-lease 2", 16) == 0)
		out->format = 2;
	else {
		seterr(err, errlen, "not a wasmkeep-lease object");
		return KEEP_ERR_NOTOURS;
	}
	for (i = 0; i < len; i++) {
		if (buf[i] == '\0' || buf[i] == '\r') {
			seterr(err, errlen, "NUL or CR in the object");
			return KEEP_ERR_PARSE;
		}
	}
	if (len == 0 || buf[len - 1] != '\n') {
		seterr(err, errlen, "no final newline");
		return KEEP_ERR_PARSE;
	}
	if (out->format == 2) {
		if (!next_line(&p, end, &line, &llen) || !field(line, llen, "seed", &v, &vlen) ||
		    !keep_dec_parse(v, vlen, KEEP_UPGRADE_GEN_MAX, &out->seed)) {
			seterr(err, errlen, "line 2: want 'seed <int>'");
			return KEEP_ERR_PARSE;
		}
		/* the confirmed form: the first record was created at created */
		if (p != end && (!next_line(&p, end, &line, &llen) ||
				 !field(line, llen, "created", &v, &vlen) ||
				 !keep_dec_parse(v, vlen, KEEP_UPGRADE_GEN_MAX, &out->created) ||
				 out->created <= out->seed)) {
			seterr(err, errlen, "line 3: want 'created <int>' (> seed)");
			return KEEP_ERR_PARSE;
		}
	} else {
		if (!next_line(&p, end, &line, &llen) || !field(line, llen, "node", &v, &vlen) ||
		    vlen > KEEP_NODE_ID_MAX) {
			seterr(err, errlen, "line 2: want 'node <id>'");
			return KEEP_ERR_PARSE;
		}
		memcpy(id, v, vlen);
		id[vlen] = '\0';
		if (!keep_node_id_valid(id)) {
			seterr(err, errlen, "line 2: bad node id");
			return KEEP_ERR_PARSE;
		}
		snprintf(out->node, sizeof(out->node), "%s", id);
		if (!next_line(&p, end, &line, &llen) ||
		    !field(line, llen, "generation", &v, &vlen) ||
		    !keep_dec_parse(v, vlen, KEEP_UPGRADE_GEN_MAX, &out->generation)) {
			seterr(err, errlen, "line 3: want 'generation <int>'");
			return KEEP_ERR_PARSE;
		}
		if (!next_line(&p, end, &line, &llen) ||
		    !field(line, llen, "expires_at_ms", &v, &vlen)) {
			seterr(err, errlen, "line 4: want 'expires_at_ms <int>' (> 0)");
			return KEEP_ERR_PARSE;
		}
		if (!keep_dec_parse(v, vlen, KEEP_WALL_MAX_MS, &out->expires_at_ms) ||
		    out->expires_at_ms <= 0) {
			/* digits past the bound (or past int64): a time far ahead */
			seterr(err, errlen,
			       all_digits(v, vlen) ? "line 4: expires_at_ms beyond year 9999 "
						     "(a corrupt or hostile time)"
						   : "line 4: want 'expires_at_ms <int>' (> 0)");
			return KEEP_ERR_PARSE;
		}
	}
	if (p != end) {
		seterr(err, errlen, "extra lines after the last field");
		return KEEP_ERR_PARSE;
	}
	return 0;
}

int keep_lease_obj_encode(const struct keep_lease_obj *o, struct keep_buf *out)
{
	size_t before = out->len;
	int rc;

	if (o->format == 2) {
		if (o->seed < 0 || o->seed > KEEP_UPGRADE_GEN_MAX || o->created < 0 ||
		    o->created > KEEP_UPGRADE_GEN_MAX || (o->created && o->created <= o->seed))
			return KEEP_ERR_INVAL;
		if (o->created)
			rc = keep_buf_addf(out, "wasmkeep-lease 2\nseed %lld\ncreated %lld\n",
					   (long long)o->seed, (long long)o->created);
		else
			rc =
			    keep_buf_addf(out, "wasmkeep-lease 2\nseed %lld\n", (long long)o->seed);
	} else if (o->format == 1) {
		if (!keep_node_id_valid(o->node) || o->generation < 0 ||
		    o->generation > KEEP_UPGRADE_GEN_MAX || o->expires_at_ms <= 0 ||
		    o->expires_at_ms > KEEP_WALL_MAX_MS)
			return KEEP_ERR_INVAL;
		rc = keep_buf_addf(
		    out, "wasmkeep-lease 1\nnode %s\ngeneration %lld\nexpires_at_ms %lld\n",
		    o->node, (long long)o->generation, (long long)o->expires_at_ms);
	} else {
		return KEEP_ERR_INVAL;
	}
	if (rc && out->len != before) {
		/* keep_buf_addf leaves the buffer unchanged on error; be sure */
		out->len = before;
		if (out->data)
			out->data[before] = '\0';
	}
	return rc;
}

bool keep_old_lease_live(const struct keep_lease_obj *o, int64_t now_wall_ms,
			 const struct keep_timing *t)
{
	if (o->format != 1)
		return false;
	return now_wall_ms < keep_add_sat_ms(o->expires_at_ms, t->grace_ms);
}

/* ---- marking ------------------------------------------------------------------- */

const char *keep_mark_verdict_name(enum keep_mark_verdict v)
{
	switch (v) {
	case KEEP_MARK_HELD:
		return "held";
	case KEEP_MARK_CREATE:
		return "create";
	case KEEP_MARK_REPLACE:
		return "replace";
	case KEEP_MARK_EXISTING:
		return "existing";
	case KEEP_MARK_BAD_OBJECT:
		return "bad-object";
	case KEEP_MARK_FAILED:
		return "failed";
	}
	return "unknown";
}

enum keep_mark_verdict keep_upgrade_mark_decide(enum keep_outcome outcome,
						const struct keep_lease_obj *o, int decode_err,
						int64_t now_wall_ms, const struct keep_timing *t)
{
	if (outcome == KEEP_STORE_NOT_FOUND)
		return KEEP_MARK_CREATE;
	if (outcome != KEEP_STORE_OK)
		return KEEP_MARK_FAILED;
	if (decode_err || !o)
		return KEEP_MARK_BAD_OBJECT;
	if (o->format == 2)
		return KEEP_MARK_EXISTING;
	if (o->format != 1)
		return KEEP_MARK_BAD_OBJECT;
	/* live by the old rules, whatever node it names, ours included: an old
	 * record has no instance to tell a predecessor from a past hold (§6) */
	if (keep_old_lease_live(o, now_wall_ms, t))
		return KEEP_MARK_HELD;
	return KEEP_MARK_REPLACE;
}

int64_t keep_upgrade_seed_of(int64_t old, int64_t highest)
{
	int64_t s = old > highest ? old : highest;

	return s < 0 ? 0 : s;
}

int keep_upgrade_segment_gen(const char *prefix, const char *key, int64_t *gen)
{
	size_t pl = strlen(prefix), i, n;
	const char *s;
	int64_t x = 0;

	if (strncmp(key, prefix, pl) != 0 || pl == 0 || prefix[pl - 1] != '/')
		return KEEP_ERR_INVAL;
	s = key + pl;
	n = strcspn(s, "/");
	if (n == 0 || n > 19)
		return KEEP_ERR_PARSE;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return KEEP_ERR_PARSE;
		if (x > (KEEP_UPGRADE_GEN_MAX - (s[i] - '0')) / 10)
			return KEEP_ERR_PARSE;
		x = x * 10 + (s[i] - '0');
	}
	*gen = x;
	return 0;
}

const char *const keep_upgrade_actor_tops[KEEP_UPGRADE_ACTOR_TOPS] = {
    KEEP_LEASES_PREFIX, KEEP_OWNER_PREFIX, KEEP_WAL_PREFIX, KEEP_SNAPSHOT_PREFIX};

int64_t keep_guard_request_timeout_ms(const struct keep_timing *t)
{
	return keep_timing_attempt_timeout_ms(t);
}

int keep_upgrade_actor_of(const char *top, const char *key, char *out, size_t outlen)
{
	size_t tl = strlen(top), len;
	const char *s, *p;
	int segs = 0;
	bool exact = strcmp(top, KEEP_LEASES_PREFIX) == 0 || strcmp(top, KEEP_OWNER_PREFIX) == 0;
	char tmp[KEEP_OWNER_KEY_MAX + 1];

	if (strncmp(key, top, tl) != 0)
		return KEEP_ERR_INVAL;
	s = key + tl;
	p = s;
	while (segs < 3) {
		const char *slash = strchr(p, '/');

		segs++;
		if (segs == 3) {
			p = slash ? slash : p + strlen(p);
			break;
		}
		if (!slash)
			return KEEP_ERR_INVAL;
		p = slash + 1;
	}
	/* p: the end of the third segment */
	if (exact ? *p != '\0' : (*p != '/' || p[1] == '\0'))
		return KEEP_ERR_INVAL;
	len = (size_t)(p - s);
	if (len > KEEP_OWNER_KEY_MAX)
		return KEEP_ERR_INVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (!keep_owner_key_valid(tmp))
		return KEEP_ERR_INVAL;
	if (len + 1 > outlen)
		return KEEP_ERR_TOOBIG;
	memcpy(out, tmp, len + 1);
	return 0;
}

/* ---- the start guard ------------------------------------------------------------- */

int64_t keep_upgrade_old_left_ms(int64_t written_at_ms, int64_t now_wall_ms,
				 const struct keep_timing *t, int64_t horizon_ms)
{
	int64_t stale_at =
	    keep_add_sat_ms(keep_add_sat_ms(written_at_ms, horizon_ms), keep_timing_takeover_ms(t));

	if (stale_at == INT64_MAX)
		return INT64_MAX; /* saturated: never stale on the wall clock */
	return keep_sub_sat_ms(stale_at, now_wall_ms);
}

const char *keep_guard_state_name(enum keep_guard_state s)
{
	switch (s) {
	case KEEP_GUARD_FRESH:
		return "fresh";
	case KEEP_GUARD_STALE:
		return "stale";
	case KEEP_GUARD_LAPSED:
		return "lapsed";
	case KEEP_GUARD_REWRITTEN:
		return "rewritten";
	}
	return "unknown";
}

const char *keep_guard_verdict_name(enum keep_guard_verdict v)
{
	switch (v) {
	case KEEP_GV_PASS:
		return "pass";
	case KEEP_GV_WAIT:
		return "wait";
	case KEEP_GV_OLD_RUNNING:
		return "old-running";
	case KEEP_GV_REFUSED:
		return "refused";
	case KEEP_GV_GAVE_UP:
		return "gave-up";
	}
	return "unknown";
}

void keep_guard_init(struct keep_guard *g, const struct keep_timing *t, int64_t horizon_ms)
{
	memset(g, 0, sizeof(*g));
	g->t = *t;
	g->horizon_ms = horizon_ms < 0 ? 0 : horizon_ms;
	g->verdict = KEEP_GV_WAIT;
}

void keep_guard_release(struct keep_guard *g)
{
	free(g->e);
	g->e = NULL;
	g->n = g->alloc = 0;
}

static struct keep_guard_entry *guard_find(struct keep_guard *g, const char *node)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->e[i].node, node) == 0)
			return &g->e[i];
	return NULL;
}

int keep_guard_pass(struct keep_guard *g, const struct keep_guard_input *in, size_t n,
		    int64_t now_mono_ms, int64_t now_wall_ms)
{
	size_t i, added = 0;
	bool failed = false, fresh = false, rewritten = false;
	int64_t longest = 0, lapse_ms, step;

	/* room first, so that an error leaves the guard unchanged */
	for (i = 0; i < n; i++)
		if (in[i].obj && (in[i].obj->format == 1 || in[i].obj->format == 2) &&
		    !guard_find(g, in[i].node))
			added++;
	if (g->n + added > KEEP_GUARD_NODES_MAX)
		return KEEP_ERR_TOOBIG;
	if (g->n + added > g->alloc) {
		size_t na = g->alloc ? g->alloc : 8;
		struct keep_guard_entry *ne;

		while (na < g->n + added)
			na *= 2;
		ne = realloc(g->e, na * sizeof(*ne));
		if (!ne)
			return KEEP_ERR_NOMEM;
		g->e = ne;
		g->alloc = na;
	}

	g->list_failures = 0;
	for (i = 0; i < g->n; i++) {
		g->e[i].seen = false;
		g->e[i].lapsed_now = false;
	}
	lapse_ms = keep_add_sat_ms(keep_add_sat_ms(g->horizon_ms, keep_timing_takeover_ms(&g->t)),
				   g->t.max_skew_ms);
	for (i = 0; i < n; i++) {
		const struct keep_node_obj *o = in[i].obj;
		struct keep_guard_entry *e;
		int64_t wall_left, mono_left;

		if (in[i].read_failed) {
			failed = true;
			continue;
		}
		if (!o || (o->format != 1 && o->format != 2))
			continue; /* format 3, or unreadable: not an old heartbeat */
		e = guard_find(g, in[i].node);
		if (!e) {
			e = &g->e[g->n++];
			memset(e, 0, sizeof(*e));
			snprintf(e->node, sizeof(e->node), "%s", in[i].node);
			e->written_at_ms = o->written_at_ms;
			e->first_read_mono_ms = now_mono_ms;
		} else if (e->written_at_ms != o->written_at_ms) {
			/* rewritten between listings: an old node is running */
			e->prev_written_at_ms = e->written_at_ms;
			e->written_at_ms = o->written_at_ms;
			e->first_read_mono_ms = now_mono_ms;
			e->warned = false;
			e->state = KEEP_GUARD_REWRITTEN;
			e->format = o->format;
			e->seen = true;
			e->left_ms = 0;
			rewritten = true;
			continue;
		}
		e->format = o->format;
		e->seen = true;
		wall_left =
		    keep_upgrade_old_left_ms(o->written_at_ms, now_wall_ms, &g->t, g->horizon_ms);
		mono_left =
		    keep_sub_sat_ms(keep_add_sat_ms(e->first_read_mono_ms, lapse_ms), now_mono_ms);
		if (wall_left <= 0) {
			e->state = KEEP_GUARD_STALE;
			e->left_ms = 0;
		} else if (mono_left <= 0) {
			e->state = KEEP_GUARD_LAPSED;
			e->left_ms = 0;
			if (!e->warned) {
				e->warned = true;
				e->lapsed_now = true;
			}
		} else {
			e->state = KEEP_GUARD_FRESH;
			e->left_ms = wall_left < mono_left ? wall_left : mono_left;
			fresh = true;
			if (e->left_ms > longest)
				longest = e->left_ms;
		}
	}
	g->incomplete = failed;
	g->left_ms = longest;
	if (rewritten) {
		g->verdict = KEEP_GV_OLD_RUNNING;
		g->next_mono_ms = now_mono_ms;
		return 0;
	}
	if (!fresh && !failed) {
		g->verdict = KEEP_GV_PASS;
		g->next_mono_ms = now_mono_ms;
		return 0;
	}
	g->verdict = KEEP_GV_WAIT;
	step = g->t.period_ms / 2;
	if (fresh && longest < step)
		step = longest;
	if (step < 1)
		step = 1;
	g->next_mono_ms = keep_add_sat_ms(now_mono_ms, step);
	return 0;
}

/* ---- forget ------------------------------------------------------------------------ */

const char *keep_forget_verdict_name(enum keep_forget_verdict v)
{
	switch (v) {
	case KEEP_FORGET_DELETE:
		return "delete";
	case KEEP_FORGET_FRESH:
		return "fresh";
	case KEEP_FORGET_FORMAT3:
		return "format-3";
	case KEEP_FORGET_ABSENT:
		return "absent";
	case KEEP_FORGET_BAD_OBJECT:
		return "bad-object";
	case KEEP_FORGET_FAILED:
		return "failed";
	case KEEP_FORGET_FENCE:
		return "created-fence";
	}
	return "unknown";
}

enum keep_forget_verdict keep_upgrade_forget_decide(enum keep_outcome outcome,
						    const struct keep_node_obj *o, int decode_err,
						    int64_t now_wall_ms,
						    const struct keep_timing *t, int64_t horizon_ms,
						    int64_t *left_ms)
{
	int64_t left;

	if (left_ms)
		*left_ms = 0;
	if (outcome == KEEP_STORE_NOT_FOUND)
		return KEEP_FORGET_ABSENT;
	if (outcome != KEEP_STORE_OK)
		return KEEP_FORGET_FAILED;
	if (decode_err || !o)
		return KEEP_FORGET_BAD_OBJECT;
	if (o->format == 3)
		return o->state == KEEP_NODE_FENCED && strcmp(o->instance, "-") == 0 &&
			       strcmp(o->fenced_by, "operator") == 0
			   ? KEEP_FORGET_FENCE
			   : KEEP_FORGET_FORMAT3;
	if (o->format != 1 && o->format != 2)
		return KEEP_FORGET_BAD_OBJECT;
	left = keep_upgrade_old_left_ms(o->written_at_ms, now_wall_ms, t, horizon_ms);
	if (left_ms)
		*left_ms = left > 0 ? left : 0;
	return left <= 0 ? KEEP_FORGET_DELETE : KEEP_FORGET_FRESH;
}

enum keep_forget_record keep_upgrade_forget_fence_record(const char *node,
							 enum keep_outcome outcome,
							 const struct keep_owner_rec *rec)
{
	if (outcome == KEEP_STORE_NOT_FOUND)
		return KEEP_FORGET_REC_CLEAR; /* deleted since it was listed */
	if (outcome != KEEP_STORE_OK || !rec)
		return KEEP_FORGET_REC_UNKNOWN;
	return rec->held && strcmp(rec->node, node) == 0 ? KEEP_FORGET_REC_NAMED
							 : KEEP_FORGET_REC_CLEAR;
}

bool keep_guard_input_of(struct keep_guard_input *in, const char *node, enum keep_outcome outcome,
			 const struct keep_node_obj *obj)
{
	if (outcome == KEEP_STORE_NOT_FOUND)
		return false;
	in->node = node;
	in->read_failed = outcome != KEEP_STORE_OK;
	in->obj = obj;
	return true;
}

enum keep_guard_verdict keep_guard_on_list_failure(struct keep_guard *g, enum keep_outcome outcome,
						   int64_t now_mono_ms)
{
	if (keep_exit_of_outcome(outcome, false) == KEEP_EXIT_NO)
		g->verdict = KEEP_GV_REFUSED; /* listing again cannot help */
	else if (++g->list_failures >= KEEP_GUARD_LIST_FAILURES)
		g->verdict = KEEP_GV_GAVE_UP;
	else {
		g->verdict = KEEP_GV_WAIT;
		g->next_mono_ms = keep_add_sat_ms(now_mono_ms, g->t.period_ms / 2 + 1);
	}
	return g->verdict;
}

const char *keep_forget_conflict_name(enum keep_forget_conflict c)
{
	return c == KEEP_FORGET_UNCHANGED ? "conflict-unchanged" : "changed";
}

enum keep_forget_conflict keep_upgrade_forget_on_conflict(const char *read_version,
							  enum keep_outcome again,
							  const char *again_version)
{
	return again == KEEP_STORE_OK && strcmp(again_version, read_version) == 0
		   ? KEEP_FORGET_UNCHANGED
		   : KEEP_FORGET_CHANGED;
}

enum keep_forget_delete keep_upgrade_forget_on_delete(enum keep_outcome outcome)
{
	if (outcome == KEEP_STORE_OK || outcome == KEEP_STORE_NOT_FOUND)
		return KEEP_FORGET_DEL_DONE;
	if (outcome == KEEP_STORE_CONFLICT)
		return KEEP_FORGET_DEL_CONFLICT;
	return KEEP_FORGET_DEL_FAILED;
}

int keep_upgrade_forget_exit(enum keep_forget_verdict v, enum keep_forget_delete dv, int store_exit,
			     bool quiet)
{
	switch (v) {
	case KEEP_FORGET_ABSENT:
		return KEEP_EXIT_OK;
	case KEEP_FORGET_FAILED:
		return store_exit;
	case KEEP_FORGET_FRESH:
	case KEEP_FORGET_FORMAT3:
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_NO;
	case KEEP_FORGET_BAD_OBJECT:
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_BAD_OBJECT;
	case KEEP_FORGET_FENCE:
		if (quiet)
			return KEEP_EXIT_OK;
		break;
	case KEEP_FORGET_DELETE:
		break;
	}
	switch (dv) {
	case KEEP_FORGET_DEL_DONE:
		return KEEP_EXIT_OK;
	case KEEP_FORGET_DEL_CONFLICT:
		return quiet ? KEEP_EXIT_OK : KEEP_EXIT_NO;
	case KEEP_FORGET_DEL_FAILED:
		break;
	}
	return store_exit;
}

int keep_upgrade_app_root_of(const char *key, char *out, size_t outlen)
{
	const char *root, *slash;
	char name[KEEP_APP_ROOT_MAX + 1];
	size_t len;

	if (strncmp(key, "apps/", 5) != 0)
		return KEEP_ERR_INVAL;
	root = key + 5;
	slash = strchr(root, '/');
	len = slash ? (size_t)(slash - root) : 0;
	if (!slash || len > KEEP_APP_ROOT_MAX || strncmp(slash, "/owners/", 8) != 0)
		return KEEP_ERR_INVAL;
	memcpy(name, root, len);
	name[len] = '\0';
	if (!keep_app_root_valid(name))
		return KEEP_ERR_INVAL;
	if (len >= outlen)
		return KEEP_ERR_TOOBIG;
	memcpy(out, name, len + 1);
	return 0;
}
