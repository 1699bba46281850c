/* keep — owner-watch's decisions, sans I/O (watchlist.h). */
#include "watchlist.h"

#include <stdio.h>
#include <string.h>

#include "../base/exitcode.h"
#include "fence.h"
#include "listing.h"

void keep_watchlist_scope(const char *prefix, char *list, size_t listlen, char *want,
			  size_t wantlen)
{
	const char *slash = strrchr(prefix, '/');

	snprintf(want, wantlen, "%s%s", KEEP_OWNER_PREFIX, prefix);
	snprintf(list, listlen, "%s%.*s", KEEP_OWNER_PREFIX, slash ? (int)(slash - prefix + 1) : 0,
		 prefix);
}

const char *keep_watchlist_record(const char *key, const char *want)
{
	if (strncmp(key, want, strlen(want)) != 0 ||
	    !keep_owner_key_valid(key + strlen(KEEP_OWNER_PREFIX)))
		return NULL;
	return key + strlen(KEEP_OWNER_PREFIX);
}

size_t keep_watchlist_plan(const struct keep_wl_prev *prev, size_t nprev,
			   struct keep_wl_item *items, size_t n)
{
	size_t i, j = 0, reads = 0;

	for (i = 0; i < n; i++) {
		struct keep_wl_item *it = &items[i];
		int c = 1;

		while (j < nprev && (c = strcmp(prev[j].key, it->key)) < 0)
			j++;
		it->prev = j < nprev && c == 0 ? j : KEEP_WL_NONE;
		it->read = keep_listing_need_read(
		    it->prev != KEEP_WL_NONE ? prev[it->prev].body_version : NULL, it->listed,
		    it->wanted);
		if (it->read)
			reads++;
	}
	return reads;
}

const char *keep_holder_name(enum keep_holder h)
{
	switch (h) {
	case KEEP_HOLDER_NONE:
		return "-";
	case KEEP_HOLDER_LIVE:
		return "live";
	case KEEP_HOLDER_LIVE_OTHER:
		return "live-other-instance";
	case KEEP_HOLDER_FENCED:
		return "fenced";
	case KEEP_HOLDER_RELEASED:
		return "released";
	case KEEP_HOLDER_ABSENT:
		return "absent";
	case KEEP_HOLDER_OLD_FORMAT:
		return "old-format";
	case KEEP_HOLDER_UNREADABLE:
		return "unreadable";
	case KEEP_HOLDER_UNKNOWN:
		break;
	}
	return "unknown";
}

enum keep_holder keep_holder_of(const char *instance, bool present, const struct keep_node_obj *obj)
{
	if (!present)
		return KEEP_HOLDER_ABSENT;
	if (!obj)
		return KEEP_HOLDER_UNREADABLE;
	if (obj->format != 3)
		return KEEP_HOLDER_OLD_FORMAT;
	switch (obj->state) {
	case KEEP_NODE_LIVE:
		return instance && strcmp(obj->instance, instance) == 0 ? KEEP_HOLDER_LIVE
									: KEEP_HOLDER_LIVE_OTHER;
	case KEEP_NODE_FENCED:
		return KEEP_HOLDER_FENCED;
	case KEEP_NODE_RELEASED:
		return KEEP_HOLDER_RELEASED;
	}
	return KEEP_HOLDER_UNREADABLE;
}

enum keep_holder keep_holder_of_known(const char *instance, bool known, bool present,
				      const struct keep_node_obj *obj, bool every)
{
	if (!known)
		return every ? KEEP_HOLDER_UNREADABLE : KEEP_HOLDER_UNKNOWN;
	return keep_holder_of(instance, present, obj);
}

bool keep_owner_view_free(const struct keep_owner_view *v, bool known, bool present,
			  const struct keep_node_obj *obj, int64_t now_wall_ms,
			  const struct keep_timing *t)
{
	if (!v->readable)
		return false;
	if (!v->rec.held)
		return true;
	if (!known)
		return false;
	return keep_node_free(v->rec.node, v->rec.instance, present, obj, now_wall_ms, t, NULL) ==
	       KEEP_FREE_YES;
}

const char *keep_owe_name(enum keep_owe_kind k, enum keep_holder holder)
{
	switch (k) {
	case KEEP_OWE_ACQUIRED:
		return "acquired";
	case KEEP_OWE_RELEASED:
		return "released";
	case KEEP_OWE_HOLDER:
		switch (holder) {
		case KEEP_HOLDER_LIVE:
			return "holder-live";
		case KEEP_HOLDER_LIVE_OTHER:
			return "holder-live-other-instance";
		case KEEP_HOLDER_FENCED:
			return "holder-fenced";
		case KEEP_HOLDER_RELEASED:
			return "holder-released";
		case KEEP_HOLDER_ABSENT:
			return "holder-absent";
		case KEEP_HOLDER_OLD_FORMAT:
			return "holder-old-format";
		case KEEP_HOLDER_UNREADABLE:
			return "holder-unreadable";
		case KEEP_HOLDER_NONE:
		case KEEP_HOLDER_UNKNOWN:
			break;
		}
		return "holder-unknown";
	case KEEP_OWE_REMOVED:
		return "removed";
	case KEEP_OWE_UNREADABLE:
		return "unreadable";
	case KEEP_OWE_RECREATED:
		return "recreated";
	}
	return "unknown";
}

static bool is_held(const struct keep_owner_view *v)
{
	return v->seen && v->readable && v->rec.held;
}

static bool same_hold(const struct keep_owner_view *a, const struct keep_owner_view *b)
{
	return is_held(a) && is_held(b) && a->rec.generation == b->rec.generation &&
	       strcmp(a->rec.node, b->rec.node) == 0 &&
	       strcmp(a->rec.instance, b->rec.instance) == 0;
}

/* An event with the record's fields of v (node and instance when held). */
static void event_of(struct keep_owe *e, enum keep_owe_kind kind, const struct keep_owner_view *v)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (v->readable) {
		e->generation = v->rec.generation;
		if (v->rec.held) {
			snprintf(e->node, sizeof(e->node), "%s", v->rec.node);
			snprintf(e->instance, sizeof(e->instance), "%s", v->rec.instance);
		}
	}
}

bool keep_owner_watch_hand_deleted(const struct keep_owner_view *prev,
				   const struct keep_owner_view *cur, enum keep_owe_kind *kind)
{
	if (prev->seen && !cur->seen) {
		*kind = KEEP_OWE_REMOVED;
		return true;
	}
	if (prev->seen && prev->readable && cur->seen && cur->readable &&
	    cur->rec.generation < prev->rec.generation) {
		*kind = KEEP_OWE_RECREATED;
		return true;
	}
	return false;
}

size_t keep_owner_watch_diff(const struct keep_owner_view *prev, struct keep_owner_view *cur,
			     struct keep_owe ev[KEEP_OWE_MAX])
{
	bool prev_readable = prev->seen && prev->readable;
	enum keep_owe_kind hand;
	enum keep_holder base;
	size_t n = 0;

	/* the holder last known: a hold's baseline is live (it was acquired
	 * by a live node), and UNKNOWN never replaces a known state */
	cur->last_known_holder = KEEP_HOLDER_UNKNOWN;
	if (same_hold(prev, cur))
		cur->last_known_holder = prev->last_known_holder;
	if (is_held(cur) && cur->holder != KEEP_HOLDER_UNKNOWN)
		cur->last_known_holder = cur->holder;

	if (!cur->seen) {
		if (keep_owner_watch_hand_deleted(prev, cur, &hand))
			event_of(&ev[n++], hand, prev);
		return n;
	}
	if (!cur->readable) {
		if (!prev->seen || prev->readable)
			event_of(&ev[n++], KEEP_OWE_UNREADABLE, cur);
		return n;
	}
	if (keep_owner_watch_hand_deleted(prev, cur, &hand)) {
		/* keep never lowers a generation: deleted and created again */
		event_of(&ev[n], hand, cur);
		if (is_held(prev))
			snprintf(ev[n].previous_node, sizeof(ev[n].previous_node), "%s",
				 prev->rec.node);
		ev[n++].previous_generation = prev->rec.generation;
	}
	if (cur->rec.held) {
		if (same_hold(prev, cur)) {
			base = prev->last_known_holder == KEEP_HOLDER_UNKNOWN
				   ? KEEP_HOLDER_LIVE
				   : prev->last_known_holder;
			if (cur->holder != KEEP_HOLDER_UNKNOWN && cur->holder != base) {
				event_of(&ev[n], KEEP_OWE_HOLDER, cur);
				ev[n++].holder = cur->holder;
			}
			return n;
		}
		event_of(&ev[n], KEEP_OWE_ACQUIRED, cur);
		if (is_held(prev))
			snprintf(ev[n].previous_node, sizeof(ev[n].previous_node), "%s",
				 prev->rec.node);
		if (prev_readable && cur->rec.generation > prev->rec.generation)
			ev[n].missed = cur->rec.generation - prev->rec.generation - 1;
		n++;
		if (cur->holder != KEEP_HOLDER_UNKNOWN && cur->holder != KEEP_HOLDER_LIVE) {
			event_of(&ev[n], KEEP_OWE_HOLDER, cur);
			ev[n++].holder = cur->holder;
		}
		return n;
	}
	/* nobody */
	if (is_held(prev)) {
		/* released by the holder seen; or, when later generations were
		 * acquired unseen, by a holder this watch never saw: then
		 * unknown (naming the one seen named the wrong node) */
		event_of(&ev[n], KEEP_OWE_RELEASED,
			 cur->rec.generation > prev->rec.generation ? cur : prev);
		ev[n].generation = cur->rec.generation;
		if (cur->rec.generation > prev->rec.generation)
			ev[n].missed = cur->rec.generation - prev->rec.generation;
		return n + 1;
	}
	if (!prev->seen) {
		/* created and released between two listings: one acquisition unseen */
		event_of(&ev[n], KEEP_OWE_RELEASED, cur);
		ev[n].missed = 1;
		return n + 1;
	}
	if (!prev->readable) {
		event_of(&ev[n], KEEP_OWE_RELEASED, cur);
		return n + 1;
	}
	if (cur->rec.generation > prev->rec.generation) {
		/* nobody at a later generation: acquired and released unseen */
		event_of(&ev[n], KEEP_OWE_RELEASED, cur);
		ev[n].missed = cur->rec.generation - prev->rec.generation;
		return n + 1;
	}
	return n;
}

void keep_owner_once_add(struct keep_owner_once *o, bool read_failed,
			 const struct keep_owner_view *v, bool node_known)
{
	if (read_failed)
		o->failed = true;
	else if (!v->readable)
		o->bad = true;
	else if (v->rec.held && v->holder == KEEP_HOLDER_UNREADABLE && !node_known)
		o->failed = true; /* the node's read failed */
}

int keep_owner_once_exit(const struct keep_owner_once *o)
{
	return o->failed ? KEEP_EXIT_TEMP : o->bad ? KEEP_EXIT_BAD_OBJECT : KEEP_EXIT_OK;
}

enum keep_wl_keep keep_watchlist_keep(bool gone, bool read_failed, bool have_prev, bool drop_unseen,
				      bool every)
{
	if (gone)
		return KEEP_WL_KEEP_DROP;
	if (!read_failed || every)
		return KEEP_WL_KEEP_NEW;
	if (have_prev)
		return KEEP_WL_KEEP_PREV;
	return drop_unseen ? KEEP_WL_KEEP_DROP : KEEP_WL_KEEP_NEW;
}

const char *keep_watchlist_body_version(bool not_ours, const char *listed, const char *read_version)
{
	return not_ours ? listed : read_version;
}

int64_t keep_owner_watch_next_pass_ms(int64_t pass_start_mono_ms, const struct keep_timing *t)
{
	return keep_add_sat_ms(pass_start_mono_ms, t->period_ms);
}

void keep_owner_watch_baseline(struct keep_owner_view *v)
{
	v->last_known_holder = v->holder;
}
