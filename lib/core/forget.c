/* keep — forget's check of a created fence (see forget.h). */
#include "forget.h"

#include <stdio.h>
#include <string.h>

#include "../base/exitcode.h"
#include "upgrade.h"

void keep_fcheck_init(struct keep_fcheck *m, const char *node)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->node, sizeof(m->node), "%s", node);
	m->step = KEEP_FCHECK_LIST;
}

static void fc_end(struct keep_fcheck *m, enum keep_fcheck_result res)
{
	m->done = true;
	m->res = res;
	m->step = KEEP_FCHECK_DONE;
}

/* The walk of one root's listing is over: on to the roots, or the next. */
static void fc_root_done(struct keep_fcheck *m)
{
	if (!m->roots_listed) {
		m->roots_listed = true;
		m->step = KEEP_FCHECK_LIST_ROOTS;
		return;
	}
	if (m->root_i == m->nroots) {
		fc_end(m, KEEP_FCHECK_CLEAR);
		return;
	}
	snprintf(m->root, sizeof(m->root), "%s", m->roots[m->root_i++]);
	m->in_root = 0;
	m->step = KEEP_FCHECK_LIST;
}

void keep_fcheck_next(struct keep_fcheck *m, struct keep_fcheck_act *act)
{
	memset(act, 0, sizeof(*act));
	act->kind = m->step;
	switch (m->step) {
	case KEEP_FCHECK_LIST:
	case KEEP_FCHECK_READ:
		snprintf(act->root, sizeof(act->root), "%s", m->root);
		if (m->step == KEEP_FCHECK_READ)
			snprintf(act->key, sizeof(act->key), "%.*s", (int)sizeof(act->key) - 1,
				 m->key); /* a record key (keep_fcheck_on_key) */
		break;
	case KEEP_FCHECK_KEY:
	case KEEP_FCHECK_KEY_ROOT:
		act->index = m->next;
		break;
	case KEEP_FCHECK_LIST_ROOTS:
	case KEEP_FCHECK_DONE:
		break;
	}
}

/* The next listed key of the current LIST, or the end of that walk. */
static void fc_next_key(struct keep_fcheck *m)
{
	bool roots = m->step == KEEP_FCHECK_KEY_ROOT || m->step == KEEP_FCHECK_LIST_ROOTS;

	if (m->next < m->nlisted) {
		m->step = roots ? KEEP_FCHECK_KEY_ROOT : KEEP_FCHECK_KEY;
		return;
	}
	if (roots) { /* the roots are known: walk them */
		m->root_i = 0;
		fc_root_done(m);
		return;
	}
	fc_root_done(m);
}

void keep_fcheck_on_list(struct keep_fcheck *m, enum keep_outcome outcome, bool not_ours, size_t n,
			 size_t nskipped, const char *first_skipped)
{
	if (m->done)
		return;
	if (outcome != KEEP_STORE_OK) {
		m->outcome = outcome;
		m->not_ours = not_ours;
		m->roots_listing = m->step == KEEP_FCHECK_LIST_ROOTS;
		fc_end(m, KEEP_FCHECK_FAILED);
		return;
	}
	if (m->step == KEEP_FCHECK_LIST && nskipped) {
		/* a key it cannot read may name the node */
		m->nskipped = nskipped;
		snprintf(m->key, sizeof(m->key), "%s", first_skipped ? first_skipped : "-");
		fc_end(m, KEEP_FCHECK_SKIPPED);
		return;
	}
	m->nlisted = n;
	m->next = 0;
	fc_next_key(m);
}

bool keep_fcheck_on_key(struct keep_fcheck *m, const char *listed)
{
	size_t plen = strlen(KEEP_OWNER_PREFIX);

	if (m->done || m->step != KEEP_FCHECK_KEY)
		return false;
	m->next++;
	if (strncmp(listed, KEEP_OWNER_PREFIX, plen) != 0 || !keep_owner_key_valid(listed + plen)) {
		fc_next_key(m);
		return false;
	}
	snprintf(m->key, sizeof(m->key), "%s", listed + plen);
	m->step = KEEP_FCHECK_READ;
	return true;
}

void keep_fcheck_on_read(struct keep_fcheck *m, enum keep_outcome outcome, bool not_ours,
			 const struct keep_owner_rec *rec)
{
	enum keep_forget_record fr;

	if (m->done || m->step != KEEP_FCHECK_READ)
		return;
	fr = keep_upgrade_forget_fence_record(m->node, outcome, rec);
	if (fr == KEEP_FORGET_REC_NAMED) {
		m->generation = rec->generation;
		fc_end(m, KEEP_FCHECK_NAMED);
		return;
	}
	if (fr != KEEP_FORGET_REC_CLEAR) {
		m->outcome = outcome;
		m->not_ours = not_ours;
		fc_end(m, KEEP_FCHECK_UNREADABLE);
		return;
	}
	m->checked++;
	m->in_root++;
	fc_next_key(m);
}

void keep_fcheck_on_root(struct keep_fcheck *m, const char *listed)
{
	char name[KEEP_APP_ROOT_MAX + 1];
	size_t k;

	if (m->done || m->step != KEEP_FCHECK_KEY_ROOT)
		return;
	m->next++;
	if (keep_upgrade_app_root_of(listed, name, sizeof(name)) == 0) {
		for (k = 0; k < m->nroots && strcmp(m->roots[k], name) != 0; k++)
			;
		if (k == m->nroots) {
			if (m->nroots == KEEP_FCHECK_ROOTS_MAX) {
				fc_end(m, KEEP_FCHECK_TOO_MANY_ROOTS);
				return;
			}
			snprintf(m->roots[m->nroots++], sizeof(m->roots[0]), "%s", name);
		}
	}
	fc_next_key(m);
}

int keep_fcheck_exit_code(const struct keep_fcheck *m)
{
	switch (m->res) {
	case KEEP_FCHECK_CLEAR:
		return KEEP_EXIT_OK;
	case KEEP_FCHECK_NAMED:
	case KEEP_FCHECK_SKIPPED:
	case KEEP_FCHECK_TOO_MANY_ROOTS:
		return KEEP_EXIT_NO;
	case KEEP_FCHECK_UNREADABLE:
		return m->outcome == KEEP_STORE_OK ? KEEP_EXIT_NO
						   : keep_exit_of_outcome(m->outcome, m->not_ours);
	case KEEP_FCHECK_FAILED:
		break;
	}
	return keep_exit_of_outcome(m->outcome, m->not_ours);
}

bool keep_fcheck_fence_removable(const struct keep_fcheck *m)
{
	return m->done && m->res == KEEP_FCHECK_CLEAR;
}
