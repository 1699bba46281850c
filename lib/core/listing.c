/* keep — which bodies a listing pass reads, the watch's input and schedule
 * (listing.h; ADR 0020 §2). */
#include "listing.h"

#include <string.h>

const char *keep_listing_node_id(const char *key)
{
	static const char pfx[] = "nodes/";

	if (strncmp(key, pfx, sizeof(pfx) - 1) != 0 || !keep_node_id_valid(key + sizeof(pfx) - 1))
		return NULL;
	return key + sizeof(pfx) - 1;
}

bool keep_listing_need_read(const char *body_version, const char *listed_version, bool wanted)
{
	if (!wanted)
		return false;
	if (!body_version || !*body_version || !listed_version)
		return true;
	return strcmp(body_version, listed_version) != 0;
}

bool keep_listing_need_body(const struct keep_listed *prev, const char *listed, bool every,
			    bool *wrote)
{
	*wrote = false;
	if (every || !prev || !prev->decoded || !prev->obj)
		return true;
	if (strcmp(prev->listed ? prev->listed : "", listed) != 0) {
		*wrote = true;
		return false;
	}
	if (prev->obj->format == 3 && prev->obj->state == KEEP_NODE_LIVE)
		return true;
	return keep_listing_need_read(prev->body_version, listed, true);
}

void keep_watch_input_of(struct keep_watch_input *x, const char *node, bool wrote, bool decoded,
			 bool read_failed, const struct keep_node_obj *obj)
{
	memset(x, 0, sizeof(*x));
	x->node = node;
	x->wrote = wrote;
	x->readable = !wrote && decoded && obj;
	x->read_failed = !wrote && !x->readable && read_failed;
	x->obj = x->readable ? obj : NULL;
}

const char *keep_listing_health_name(enum keep_listing_health h)
{
	return h == KEEP_LISTING_OK ? "ok" : h == KEEP_LISTING_FAILING ? "failing" : "failed";
}

enum keep_listing_health keep_listing_health_of(bool listed, int64_t failing_since_mono_ms,
						int64_t now_mono_ms, int64_t ttl_ms)
{
	if (listed)
		return KEEP_LISTING_OK;
	return keep_sub_sat_ms(now_mono_ms, failing_since_mono_ms) >= ttl_ms ? KEEP_LISTING_FAILED
									     : KEEP_LISTING_FAILING;
}

void keep_watch_sched_init(struct keep_watch_sched *s, const struct keep_timing *t,
			   int64_t now_mono_ms)
{
	memset(s, 0, sizeof(*s));
	s->period_ms = t->period_ms > 0 ? t->period_ms : 1;
	s->ttl_ms = t->ttl_ms;
	s->next_pass_mono_ms = now_mono_ms;
	s->full_every = 1;
}

void keep_watch_sched_ring(struct keep_watch_sched *s, int64_t full_every)
{
	s->full_every = full_every < 1				 ? 1
			: full_every > KEEP_WATCH_FULL_EVERY_MAX ? KEEP_WATCH_FULL_EVERY_MAX
								 : full_every;
}

bool keep_watch_choose_mode(struct keep_watch *w, struct keep_watch_sched *s, size_t listed,
			    int64_t ring_from, int ring_k, int64_t full_every)
{
	int64_t n = listed > (size_t)INT64_MAX ? INT64_MAX : (int64_t)listed;
	bool ring = w->ring_k > 0;

	if (ring_from < 2)
		ring_from = 2;
	if (!ring && n >= ring_from) {
		keep_watch_set_ring(w, ring_k);
		keep_watch_sched_ring(s, full_every);
		keep_watch_ring(w, NULL, 0); /* the successors of this listing's ring */
		return true;
	}
	if (ring && n < ring_from - ring_from / 10) {
		keep_watch_set_ring(w, 0);
		keep_watch_sched_ring(s, 1);
		s->since_full = 0;
		return true;
	}
	return false;
}

bool keep_watch_ring_pass_due(const struct keep_watch_sched *s)
{
	return s->full_every > 1 && s->listed && s->since_full < s->full_every - 1;
}

enum keep_watch_do keep_watch_sched_due(struct keep_watch_sched *s, int64_t now_mono_ms)
{
	if (now_mono_ms >= s->next_pass_mono_ms) {
		s->next_pass_mono_ms = keep_add_sat_ms(now_mono_ms, s->period_ms);
		if (keep_watch_ring_pass_due(s)) {
			s->since_full++;
			return KEEP_WATCH_RING;
		}
		s->since_full = 0;
		return KEEP_WATCH_LIST;
	}
	return s->listed ? KEEP_WATCH_TICK : KEEP_WATCH_SLEEP;
}

enum keep_listing_health keep_watch_sched_listed(struct keep_watch_sched *s, bool listed,
						 int64_t now_mono_ms, int64_t now_wall_ms)
{
	enum keep_listing_health was = s->health;

	s->listed = listed;
	if (listed) {
		s->failures = 0;
		s->failing_since_mono_ms = s->failing_since_wall_ms = 0;
		s->health = keep_listing_health_of(true, 0, now_mono_ms, s->ttl_ms);
		return was;
	}
	if (s->failures++ == 0) {
		s->failing_since_mono_ms = now_mono_ms;
		s->failing_since_wall_ms = now_wall_ms;
	}
	s->health = keep_listing_health_of(false, s->failing_since_mono_ms, now_mono_ms, s->ttl_ms);
	return was;
}

int64_t keep_watch_sched_wake_mono_ms(const struct keep_watch_sched *s, const struct keep_watch *w,
				      int64_t live_since_mono_ms)
{
	int64_t wake = s->next_pass_mono_ms, due;

	/* between listings only while the last one succeeded: a candidate is
	 * never judged across a failed listing */
	due = s->listed && w ? keep_watch_next_stale_mono_ms(w, live_since_mono_ms) : 0;
	if (due && due < wake)
		wake = due;
	return wake;
}
