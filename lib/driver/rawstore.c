/* keep — keep-store's operations (docs/store.md): raw GET, HEAD, PUT,
 * DELETE and LIST on any backend, one answer line each, for operators
 * and tests. Process glue: prints its lines on stdout and its diagnostics
 * as keep-store; what a hand deletion breaks is keep_hand_delete_judge
 * (lib/core/owner.c). */
#include "rawstore.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../core/owner.h"
#include "../platform/line.h"
#include "cli.h"
#include "storecmd.h"

static const char *prog = "keep-store";

/* What deleting a key under a protocol prefix breaks (issue 23 item 6;
 * docs/operations.md "Deleting objects by hand"), or NULL for any other
 * key. One line each, for the refusal. */
const char *keep_rawstore_del_breaks(const char *key)
{
	switch (keep_hand_delete_judge(key)) {
	case KEEP_HAND_DELETE_NODE:
		return "a node lease: the node loses its lease at its next write (exit 13), "
		       "every record it holds stays held until someone runs `lease-fence` on "
		       "it, and its written_at floor is gone; fence it instead";
	case KEEP_HAND_DELETE_RECORD:
		return "an ownership record: its holder keeps acting while the next "
		       "acquisition creates it again at a lower generation (1 on a native "
		       "cluster): two owners, and fencing tokens that go backwards; release "
		       "it instead";
	case KEEP_HAND_DELETE_OK:
		break;
	}
	return NULL;
}

/* A local refusal (rc < 0 from the store layer) is fatal. */
static void check_rc(int rc, const char *verb, const char *key)
{
	char shown[300];

	if (rc == KEEP_ERR_INVAL)
		keep_die(KEEP_EXIT_USAGE, prog, "unable to %s '%s': invalid key", verb,
			 keep_line_escaped(key, shown, sizeof(shown)));
	if (rc)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to %s '%s': %s", verb,
			 keep_line_escaped(key, shown, sizeof(shown)), keep_strerror(rc));
}

/* Diagnose a reply that is not OK and return its exit code. */
static int fail_reply(const char *verb, const char *key, const struct keep_reply *r)
{
	if (r->outcome == KEEP_STORE_NOT_FOUND)
		keep_log(KEEP_LOG_FATAL, prog, "unable to %s '%s': not found", verb, key);
	else
		keep_log(KEEP_LOG_FATAL, prog, "unable to %s '%s': %s%s%s", verb, key,
			 keep_outcome_name(r->outcome), r->detail[0] ? ": " : "", r->detail);
	/* a raw tool: an object it cannot read is a refusal (1) like any other */
	return r->outcome == KEEP_STORE_REFUSED ? KEEP_EXIT_NO : keep_exit_of_reply(r);
}

static void emit(struct keep_buf *b)
{
	if (keep_line_emit(b))
		keep_die(KEEP_EXIT_TEMP, prog, "unable to write to stdout");
}

/* Read all of stdin into body (bounded by KEEP_BODY_MAX); exits 100 on a
 * read error or an oversized body, 111 out of memory. */
static void read_stdin(struct keep_buf *body)
{
	int rc = keep_read_all(STDIN_FILENO, body);

	if (rc == KEEP_ERR_TOOBIG)
		keep_die(KEEP_EXIT_USAGE, prog, "unable to put: body exceeds %d bytes",
			 KEEP_BODY_MAX);
	if (rc == KEEP_ERR_IO)
		keep_die(KEEP_EXIT_USAGE, prog, "unable to read stdin: %s", strerror(errno));
	if (rc)
		keep_die(KEEP_EXIT_TEMP, prog, "unable to read stdin: %s", keep_strerror(rc));
}

int keep_rawstore_get(struct keep_store *s, const char *key)
{
	struct keep_reply r;
	struct keep_buf body;
	int rc;

	keep_buf_init(&body, KEEP_BODY_MAX);
	check_rc(keep_store_get(s, key, &body, &r), "get", key);
	if (r.outcome != KEEP_STORE_OK) {
		keep_buf_release(&body);
		return fail_reply("get", key, &r);
	}
	rc = KEEP_EXIT_OK;
	if ((body.len && fwrite(body.data, 1, body.len, stdout) != body.len) || fflush(stdout)) {
		keep_log(KEEP_LOG_FATAL, prog, "unable to write to stdout");
		rc = KEEP_EXIT_TEMP;
	}
	keep_buf_release(&body);
	return rc;
}

int keep_rawstore_stat(struct keep_store *s, const char *key, struct keep_buf *b)
{
	struct keep_reply r;

	check_rc(keep_store_head(s, key, &r), "stat", key);
	if (r.outcome != KEEP_STORE_OK)
		return fail_reply("stat", key, &r);
	keep_line_start_out(b, "object");
	keep_line_str(b, "key", key);
	keep_line_str(b, "version", r.version);
	emit(b);
	return KEEP_EXIT_OK;
}

int keep_rawstore_put(struct keep_store *s, const char *key, enum keep_cond cond,
		      const char *if_match, struct keep_buf *b)
{
	struct keep_reply r;
	struct keep_buf body;
	int rc;

	keep_buf_init(&body, KEEP_BODY_MAX);
	read_stdin(&body);
	rc = keep_store_put(s, key, body.data, body.len, cond, if_match, &r);
	keep_buf_release(&body);
	check_rc(rc, "put", key);
	keep_line_start_out(b, "put");
	keep_line_str(b, "key", key);
	keep_line_str(b, "outcome", keep_outcome_name(r.outcome));
	keep_line_str(b, "version", r.outcome == KEEP_STORE_OK ? r.version : NULL);
	emit(b);
	return r.outcome == KEEP_STORE_OK ? KEEP_EXIT_OK : fail_reply("put", key, &r);
}

int keep_rawstore_del(struct keep_store *s, const char *key, const char *if_match,
		      struct keep_buf *b)
{
	struct keep_reply r;

	check_rc(keep_store_del(s, key, if_match, &r), "delete", key);
	keep_line_start_out(b, "del");
	keep_line_str(b, "key", key);
	keep_line_str(b, "outcome", keep_outcome_name(r.outcome));
	emit(b);
	return r.outcome == KEEP_STORE_OK ? KEEP_EXIT_OK : fail_reply("delete", key, &r);
}

int keep_rawstore_list(struct keep_store *s, const char *prefix, struct keep_buf *b)
{
	struct keep_reply r;
	struct keep_list l;
	size_t i;
	int rc;

	keep_list_init(&l);
	rc = keep_store_list(s, prefix, &l, &r);
	if (rc == KEEP_ERR_INVAL) {
		char shown[300];

		keep_die(KEEP_EXIT_USAGE, prog, "unable to list '%s': invalid prefix",
			 keep_line_escaped(prefix, shown, sizeof(shown)));
	}
	check_rc(rc, "list", prefix);
	if (r.outcome != KEEP_STORE_OK) {
		keep_list_release(&l);
		return fail_reply("list", prefix, &r);
	}
	keep_warn_skipped(prog, prefix, &l);
	for (i = 0; i < l.n; i++) {
		keep_line_start_out(b, "object");
		keep_line_str(b, "key", l.v[i].key);
		keep_line_str(b, "version", l.v[i].version);
		emit(b);
	}
	keep_list_release(&l);
	return KEEP_EXIT_OK;
}
