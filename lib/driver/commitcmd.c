/* keep — owner-commit's lines (issue 26; docs/ownership.md
 * "owner-commit", docs/formats.md "owner-commit"): the answer of a commit
 * or a claim, and --get's output. Process glue: prints as owner-commit;
 * every step of the commit is decided by lib/core/commit.c through
 * lib/driver/commit.c. */
#include "commitcmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/exitcode.h"
#include "../platform/line.h"
#include "cli.h"
#include "storecmd.h"

static const char *prog = "owner-commit";

int keep_commit_answer(const char *key, const char *object, const struct keep_commit_result *r)
{
	struct keep_buf b;
	char shown[KEEP_KEY_MAX * 4 + 8];

	if (r->detail[0] &&
	    (r->kind == KEEP_CR_ERROR || r->kind == KEEP_CR_UNKNOWN || r->kind == KEEP_CR_REFUSED))
		keep_warn(prog, "%s: %s", keep_line_escaped(object, shown, sizeof(shown)),
			  r->detail);
	keep_line_begin(&b, keep_commit_result_name(r->kind));
	keep_line_str(&b, "key", key);
	switch (r->kind) {
	case KEEP_CR_COMMITTED:
	case KEEP_CR_CLAIMED:
		keep_line_int(&b, "generation", r->generation);
		keep_line_str(&b, "object", object);
		keep_line_str(&b, "version", r->version);
		if (r->kind == KEEP_CR_CLAIMED) {
			if (r->previous > 0)
				keep_line_int(&b, "previous", r->previous);
			else
				keep_line_str(&b, "previous", NULL);
		}
		break;
	case KEEP_CR_REFUSED:
		keep_line_str(&b, "object", object);
		keep_line_str(&b, "reason", r->reason);
		if (strcmp(r->reason, "fenced") == 0)
			keep_line_int(&b, "generation", r->generation);
		else if (strcmp(r->reason, "grant-not-valid") == 0)
			keep_line_str(&b, "grant", keep_grant_name(r->grant));
		else if (strcmp(r->reason, "other-key") == 0)
			keep_line_str(&b, "owner", r->owner);
		else if (strcmp(r->reason, "changed") == 0)
			keep_line_str(&b, "version", r->version[0] ? r->version : NULL);
		break;
	case KEEP_CR_UNKNOWN:
		keep_line_str(&b, "object", object);
		keep_line_int(&b, "generation", r->generation);
		keep_line_str(&b, "reason", r->reason);
		break;
	case KEEP_CR_ERROR:
		keep_line_str(&b, "object", object);
		keep_line_str(&b, "reason", r->reason);
		break;
	}
	if (keep_line_end(&b) != 0)
		return KEEP_EXIT_TEMP;
	return r->exit_code;
}

int keep_commit_get_cmd(struct keep_store *store, const char *object, bool show)
{
	struct keep_fenced_read fr;
	struct keep_buf body, line;
	char shown[KEEP_KEY_MAX * 4 + 8];
	const char *mo, *mg;
	size_t off = 0;
	ssize_t n;

	keep_line_escaped(object, shown, sizeof(shown));
	keep_buf_init(&body, KEEP_FENCED_OBJECT_MAX);
	keep_fenced_get(store, object, &body, &fr);
	if (fr.reply.outcome == KEEP_STORE_NOT_FOUND) {
		keep_buf_release(&body);
		keep_warn(prog, "'%s': no such object", shown);
		return KEEP_EXIT_NO;
	}
	if (fr.reply.outcome != KEEP_STORE_OK) {
		keep_buf_release(&body);
		keep_warn(prog, "unable to read '%s': %s", shown, fr.why);
		return keep_exit_of_reply(&fr.reply);
	}
	if (!fr.ok) {
		keep_buf_release(&body);
		keep_warn(prog, "'%s' is not a fenced object: %s", shown, fr.why);
		return KEEP_EXIT_BAD_OBJECT;
	}
	mo = keep_meta_get(&fr.meta, KEEP_META_OWNER);
	mg = keep_meta_get(&fr.meta, KEEP_META_GENERATION);
	/* --show: the answer line on stdout (--json applies); without it the
	 * same fields on stderr, always text (stdout carries DATA) */
	if (show) {
		keep_line_begin(&line, "fence");
	} else {
		keep_buf_init(&line, KEEP_LINE_MAX);
		keep_line_start_fmt(&line, "fence", KEEP_LINE_TEXT);
	}
	keep_line_str(&line, "object", object);
	keep_line_str(&line, "key", fr.fence.key);
	keep_line_int(&line, "generation", fr.fence.generation);
	keep_line_str(&line, "version", fr.reply.version);
	keep_line_int(&line, "size", (int64_t)fr.fence.size);
	keep_line_str(&line, "sha256", fr.fence.sha256);
	keep_line_str(&line, "meta_owner", mo);
	keep_line_str(&line, "meta_generation", mg);
	if (show) {
		keep_buf_release(&body);
		return keep_line_end(&line) ? KEEP_EXIT_TEMP : KEEP_EXIT_OK;
	}
	/* the bytes exactly, then the fence on stderr */
	while (off < fr.fence.size) {
		n = write(STDOUT_FILENO, body.data + fr.fence.data_off + off, fr.fence.size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			keep_buf_release(&body);
			keep_buf_release(&line);
			keep_warn(prog, "unable to write DATA to stdout: %s",
				  n < 0 ? strerror(errno) : "short write");
			return KEEP_EXIT_TEMP;
		}
		off += (size_t)n;
	}
	keep_buf_release(&body);
	fprintf(stderr, "%s\n", keep_buf_str(&line));
	keep_buf_release(&line);
	return KEEP_EXIT_OK;
}
