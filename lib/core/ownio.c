/* keep — the ownership machines' actions and replies (ownio.h). */
#include "ownio.h"

#include <stdio.h>
#include <string.h>

void keep_copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strnlen(src, n - 1) : 0;

	memcpy(dst, src ? src : "", l);
	dst[l] = '\0';
}

const char *keep_sd_name(enum keep_sd r)
{
	switch (r) {
	case KEEP_SD_DURABLE:
		return "durable";
	case KEEP_SD_VISIBLE:
		return "visible";
	case KEEP_SD_UNCHANGED:
		return "unchanged";
	}
	return "unchanged";
}

const char *keep_oact_name(enum keep_oact_kind k)
{
	static const char *const n[] = {
	    [KEEP_OACT_NONE] = "none",
	    [KEEP_OACT_WAIT] = "wait",
	    [KEEP_OACT_LOCK] = "lock",
	    [KEEP_OACT_UNLOCK] = "unlock",
	    [KEEP_OACT_LEASE] = "lease",
	    [KEEP_OACT_HOLD_READ] = "hold-read",
	    [KEEP_OACT_HOLD_WRITE] = "hold-write",
	    [KEEP_OACT_HOLD_REMOVE] = "hold-remove",
	    [KEEP_OACT_HOLDS_SYNC] = "holds-sync",
	    [KEEP_OACT_PEND_READ] = "pend-read",
	    [KEEP_OACT_PEND_WRITE] = "pend-write",
	    [KEEP_OACT_PEND_REMOVE] = "pend-remove",
	    [KEEP_OACT_LIST] = "list",
	    [KEEP_OACT_REC_READ] = "rec-read",
	    [KEEP_OACT_REC_WRITE] = "rec-write",
	    [KEEP_OACT_NODE_READ] = "node-read",
	    [KEEP_OACT_MARK_READ] = "mark-read",
	    [KEEP_OACT_MARK_WRITE] = "mark-write",
	    [KEEP_OACT_KEYS_MAX] = "keys-max",
	    [KEEP_OACT_DRAIN_MARK] = "drain-mark",
	    [KEEP_OACT_CLUSTER_READ] = "cluster-read",
	    [KEEP_OACT_RUN_PROBE] = "run-probe",
	    [KEEP_OACT_RUN_SIGNAL] = "run-signal",
	    [KEEP_OACT_DONE] = "done",
	};

	if ((unsigned)k < sizeof(n) / sizeof(n[0]) && n[k])
		return n[k];
	return "none";
}

void keep_pending_of_hold(struct keep_pending *p, const struct keep_hold *h, int64_t at_ms)
{
	memset(p, 0, sizeof(*p));
	p->kind = KEEP_PENDING_RELEASE;
	keep_copy_str(p->key, sizeof(p->key), h->key);
	keep_copy_str(p->instance, sizeof(p->instance), h->instance);
	p->generation = h->generation;
	keep_copy_str(p->version, sizeof(p->version), h->version);
	p->at_ms = at_ms;
}

bool keep_pending_same(const struct keep_pending *a, const struct keep_pending *b)
{
	return a->kind == b->kind && a->generation == b->generation &&
	       strcmp(a->key, b->key) == 0 && strcmp(a->instance, b->instance) == 0;
}
