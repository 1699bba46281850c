/* Unit tests: the watch when a pass reads only what changed (`wrote`
 * inputs: docs/fencing.md, "Reading only what changed") and the stale
 * candidate sent the moment the watch bound passes (keep_watch_tick,
 * keep_watch_next_stale_mono_ms). Timing as test_fence.c: ttl 3000, grace
 * 1500, safety 600, period 1000: stale after 1000 + 800. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/core/fence.h"
#include "../../lib/core/listing.h"
#include "unit.h"

#define W0 1700000000000LL

static struct keep_timing timing(void)
{
	struct keep_timing t;

	memset(&t, 0, sizeof(t));
	t.ttl_ms = 3000;
	t.grace_ms = 1500;
	t.safety_ms = 600;
	t.max_skew_ms = 300;
	t.period_ms = 1000;
	return t;
}

static struct keep_node_obj live(const char *node, int64_t written_at)
{
	struct keep_node_obj o;

	memset(&o, 0, sizeof(o));
	o.format = 3;
	o.state = KEEP_NODE_LIVE;
	snprintf(o.node, sizeof(o.node), "%s", node);
	snprintf(o.instance, sizeof(o.instance), "0123456789abcdef0123456789abcdef");
	o.written_at_ms = written_at;
	o.seq = 1;
	return o;
}

static size_t stales(const struct keep_watch *w)
{
	size_t i, n = 0;

	for (i = 0; i < w->nev; i++)
		n += w->ev[i].kind == KEEP_WEV_STALE;
	return n;
}

static size_t count_events(const struct keep_watch *w, enum keep_watch_event_kind k)
{
	size_t i, n = 0;

	for (i = 0; i < w->nev; i++)
		n += w->ev[i].kind == k;
	return n;
}

static void body(struct keep_watch *w, const struct keep_node_obj *o, int64_t now)
{
	struct keep_watch_input in = {.node = o->node, .readable = true, .obj = o};

	CHECK_EQ_INT(keep_watch_pass(w, &in, 1, now, W0 + now, true, 1), 0);
}

static void wrote(struct keep_watch *w, const char *node, int64_t now)
{
	struct keep_watch_input in = {.node = node, .wrote = true};

	CHECK_EQ_INT(keep_watch_pass(w, &in, 1, now, W0 + now, true, 1), 0);
}

TEST(wrote_restarts_the_watch_without_a_body)
{
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_node_obj a = live("a", W0);
	int64_t now;

	keep_watch_init(&w, &t, "b");
	body(&w, &a, 1000);
	/* a node whose token keeps changing: never a candidate, no event */
	for (now = 2000; now <= 10000; now += 1000) {
		wrote(&w, "a", now);
		CHECK_EQ_INT(w.nev, 0);
		CHECK_EQ_INT(keep_watch_tick(&w, now + 999, true, 1), 0);
		CHECK_EQ_INT(stales(&w), 0);
	}
	/* the token stops changing at 11000: its body (a later written_at) is
	 * read, the watch starts from that read */
	a.written_at_ms = W0 + 9500;
	body(&w, &a, 11000);
	CHECK_EQ_INT(stales(&w), 0);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 11000 + 1800);
	CHECK_EQ_INT(keep_watch_tick(&w, 12799, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 0);
	CHECK_EQ_INT(keep_watch_tick(&w, 12800, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 1);
	CHECK_EQ_INT(w.ev[0].written_at_ms, W0 + 9500);
	CHECK_EQ_INT(w.ev[0].unchanged_ms, 1800);
	/* repeated at most once per write_every */
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 13800);
	keep_watch_release(&w);
}

TEST(wrote_never_earlier_than_the_body_watch)
{
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_node_obj a = live("a", W0);

	keep_watch_init(&w, &t, "b");
	body(&w, &a, 1000);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 2800);
	/* a write at 1500: the candidate moves past 2800 */
	wrote(&w, "a", 2000);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 3800);
	CHECK_EQ_INT(keep_watch_tick(&w, 2800, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 0);
	/* the same body read again: the watch counts from the write, never
	 * from the first read */
	body(&w, &a, 3000);
	CHECK_EQ_INT(stales(&w), 0);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 3800);
	keep_watch_release(&w);
}

TEST(tick_respects_own_lease_and_live_since)
{
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_node_obj a = live("a", W0);

	keep_watch_init(&w, &t, "b");
	body(&w, &a, 1000);
	/* counted from our own live_since when later */
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 5000), 6800);
	CHECK_EQ_INT(keep_watch_tick(&w, 6799, true, 5000), 0);
	CHECK_EQ_INT(stales(&w), 0);
	/* our lease not valid at a tick: nobody judged, every watch restarts */
	CHECK_EQ_INT(keep_watch_tick(&w, 6800, false, 5000), 0);
	CHECK_EQ_INT(stales(&w), 0);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 5000), 8600);
	CHECK_EQ_INT(keep_watch_tick(&w, 8600, true, 5000), 0);
	CHECK_EQ_INT(stales(&w), 1);
	keep_watch_release(&w);
}

TEST(no_deadline_without_self_or_live_peer)
{
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_node_obj a = live("a", W0), b = live("b", W0);
	struct keep_watch_input in = {.node = "a", .read_failed = true};

	keep_watch_init(&w, &t, NULL);
	body(&w, &a, 1000);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 0);
	keep_watch_release(&w);

	keep_watch_init(&w, &t, "b");
	body(&w, &b, 1000); /* self */
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 0);
	keep_watch_release(&w);

	keep_watch_init(&w, &t, "b");
	body(&w, &a, 1000);
	CHECK_EQ_INT(keep_watch_pass(&w, &in, 1, 2000, W0 + 2000, true, 1), 0);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 0); /* the last read failed */
	CHECK_EQ_INT(keep_watch_tick(&w, 9000, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 0);
	keep_watch_release(&w);
}

TEST(wrote_for_unknown_peer_ignored_and_old_format_rewritten)
{
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_node_obj old;

	keep_watch_init(&w, &t, "b");
	wrote(&w, "z", 1000);
	CHECK_EQ_INT(w.nev, 0);
	CHECK_EQ_INT(w.n, 0);
	memset(&old, 0, sizeof(old));
	old.format = 2;
	snprintf(old.node, sizeof(old.node), "o");
	old.written_at_ms = W0 - 3600000; /* an hour old: retired */
	body(&w, &old, 2000);
	CHECK_EQ_INT(w.ev[0].status, KEEP_STATUS_OLD_RETIRED);
	wrote(&w, "o", 3000); /* rewritten: an old version is running */
	CHECK_EQ_INT(w.nev, 1);
	CHECK_EQ_INT(w.ev[0].kind, KEEP_WEV_CHANGE);
	CHECK_EQ_INT(w.ev[0].status, KEEP_STATUS_OLD_RUNNING);
	keep_watch_release(&w);
}

/* A listed node as the watch's input (keep_watch_input_of): a write seen
 * in the listing is neither a body nor a failure; a failed GET is a
 * failure only without a body. */
TEST(watch_input_classification)
{
	struct keep_node_obj a = live("a", W0);
	struct keep_watch_input x;

	keep_watch_input_of(&x, "a", false, true, false, &a);
	CHECK(x.readable);
	CHECK(x.obj == &a);
	CHECK(!x.read_failed);
	CHECK(!x.wrote);
	keep_watch_input_of(&x, "a", true, true, true, &a); /* a write landed */
	CHECK(x.wrote);
	CHECK(!x.readable);
	CHECK(x.obj == NULL);
	CHECK(!x.read_failed);
	keep_watch_input_of(&x, "a", false, false, true, &a); /* the GET failed */
	CHECK(x.read_failed);
	CHECK(!x.readable);
	CHECK(x.obj == NULL);
	keep_watch_input_of(&x, "a", false, false, false, &a); /* not decodable */
	CHECK(!x.read_failed);
	CHECK(!x.readable);
	CHECK_EQ_STR(x.node, "a");
}

/* node-watch's schedule: the first listing at once, then one a period,
 * measured from when each was due; ticks between listings only after a
 * listing that succeeded; the wake is the earlier of the next listing and
 * the watch's next stale bound. */
TEST(schedule_lists_each_period_and_ticks_between)
{
	struct keep_timing t = timing();
	struct keep_watch_sched sc;
	struct keep_watch w;
	struct keep_node_obj a = live("a", W0);

	keep_watch_init(&w, &t, "b");
	keep_watch_sched_init(&sc, &t, 500);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 499), KEEP_WATCH_SLEEP);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 500), KEEP_WATCH_LIST);
	CHECK_EQ_INT(sc.next_pass_mono_ms, 1500);
	/* no listing has succeeded yet: nothing between listings */
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 900), KEEP_WATCH_SLEEP);
	CHECK_EQ_INT(keep_watch_sched_wake_mono_ms(&sc, &w, 1), 1500);
	/* a listing that succeeded, a live peer in it */
	keep_watch_sched_listed(&sc, true, 600, W0 + 600);
	body(&w, &a, 600);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 900), KEEP_WATCH_TICK);
	/* the peer's bound (1800 after it was first seen) is later than the
	 * next listing: wake for the listing */
	CHECK_EQ_INT(keep_watch_sched_wake_mono_ms(&sc, &w, 1), 1500);
	/* a late wake (a slow pass): the next listing a period after this one */
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 2100), KEEP_WATCH_LIST);
	CHECK_EQ_INT(sc.next_pass_mono_ms, 3100);
	keep_watch_sched_listed(&sc, true, 2100, W0 + 2100);
	/* now the peer's bound (600 + 1800) comes before the listing */
	CHECK_EQ_INT(keep_watch_sched_wake_mono_ms(&sc, &w, 1),
		     keep_watch_next_stale_mono_ms(&w, 1));
	CHECK(keep_watch_sched_wake_mono_ms(&sc, &w, 1) < 3100);
	/* a failed listing: no tick, and the wake is the next listing only */
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 3100), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, false, 3100, W0 + 3100);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 3500), KEEP_WATCH_SLEEP);
	CHECK_EQ_INT(keep_watch_sched_wake_mono_ms(&sc, &w, 1), 4100);
	keep_watch_release(&w);
}

/* The listings' health: failing from the first failure, failed once they
 * have failed for ttl, ok at the first success; the previous health is
 * returned. */
TEST(listing_health_moves_ok_failing_failed_ok)
{
	struct keep_timing t = timing();
	struct keep_watch_sched sc;

	keep_watch_sched_init(&sc, &t, 0);
	CHECK_EQ_INT(keep_watch_sched_listed(&sc, true, 0, W0), KEEP_LISTING_OK);
	CHECK_EQ_INT(sc.health, KEEP_LISTING_OK);
	CHECK_EQ_INT(keep_watch_sched_listed(&sc, false, 1000, W0 + 1000), KEEP_LISTING_OK);
	CHECK_EQ_INT(sc.health, KEEP_LISTING_FAILING);
	CHECK_EQ_INT(sc.failures, 1);
	CHECK_EQ_INT(sc.failing_since_mono_ms, 1000);
	CHECK_EQ_INT(sc.failing_since_wall_ms, W0 + 1000);
	/* ttl 3000: failing until 3999, failed at 4000 */
	CHECK_EQ_INT(keep_watch_sched_listed(&sc, false, 3999, W0 + 3999), KEEP_LISTING_FAILING);
	CHECK_EQ_INT(sc.health, KEEP_LISTING_FAILING);
	CHECK_EQ_INT(sc.failing_since_mono_ms, 1000);
	CHECK_EQ_INT(keep_watch_sched_listed(&sc, false, 4000, W0 + 4000), KEEP_LISTING_FAILING);
	CHECK_EQ_INT(sc.health, KEEP_LISTING_FAILED);
	CHECK_EQ_INT(sc.failures, 3);
	CHECK_EQ_STR(keep_listing_health_name(sc.health), "failed");
	CHECK_EQ_INT(keep_watch_sched_listed(&sc, true, 5000, W0 + 5000), KEEP_LISTING_FAILED);
	CHECK_EQ_INT(sc.health, KEEP_LISTING_OK);
	CHECK_EQ_INT(sc.failures, 0);
	CHECK_EQ_INT(sc.failing_since_mono_ms, 0);
	CHECK_EQ_INT(sc.failing_since_wall_ms, 0);
	CHECK(sc.listed);
}

/* ---- ring mode (docs/fencing.md "Ring mode") ---------------------------- */

/* A full pass of live peers ids[0..n) all written at wa, at now. */
static void list_all(struct keep_watch *w, const char *const *ids, size_t n, int64_t wa,
		     int64_t now)
{
	struct keep_node_obj o[8];
	struct keep_watch_input in[8];
	size_t i;

	for (i = 0; i < n; i++) {
		o[i] = live(ids[i], wa);
		keep_watch_input_of(&in[i], ids[i], false, true, false, &o[i]);
	}
	CHECK_EQ_INT(keep_watch_pass(w, in, n, now, W0 + now, true, 1), 0);
}

/* A ring observation of one peer's body (written at wa) at now. */
static void observe1(struct keep_watch *w, const char *node, int64_t wa, int64_t now)
{
	struct keep_node_obj o = live(node, wa);
	struct keep_watch_input in;

	keep_watch_input_of(&in, node, false, true, false, &o);
	CHECK_EQ_INT(keep_watch_observe(w, &in, 1, now, W0 + now, true, 1), 0);
}

static bool is_stale(const struct keep_watch *w, const char *node)
{
	size_t i;

	for (i = 0; i < w->nev; i++)
		if (w->ev[i].kind == KEEP_WEV_STALE && strcmp(w->ev[i].node, node) == 0)
			return true;
	return false;
}

/* The successors: the next k live peers after this node's id, wrapping;
 * a peer that is not live is skipped; beyond a candidate one more. */
TEST(ring_successors_wrap_skip_and_extend)
{
	static const char *const ids[] = {"a", "b", "d", "e", "f"};
	struct keep_timing t = timing();
	struct keep_watch w;
	const char *got[8];
	struct keep_node_obj fenced = live("e", W0);
	struct keep_watch_input in;

	keep_watch_init(&w, &t, "c");
	keep_watch_set_ring(&w, 2);
	list_all(&w, ids, 5, W0, 100);
	CHECK_EQ_INT(keep_watch_ring(&w, got, 8), 2);
	CHECK_EQ_STR(got[0], "d");
	CHECK_EQ_STR(got[1], "e");
	/* a fenced peer is not in the ring */
	fenced.state = KEEP_NODE_FENCED;
	keep_watch_input_of(&in, "e", false, true, false, &fenced);
	CHECK_EQ_INT(keep_watch_observe(&w, &in, 1, 200, W0 + 200, true, 1), 0);
	CHECK_EQ_INT(keep_watch_ring(&w, got, 8), 2);
	CHECK_EQ_STR(got[0], "d");
	CHECK_EQ_STR(got[1], "f");
	keep_watch_release(&w);
	/* wrapping past the end of the sorted ids */
	keep_watch_init(&w, &t, "f");
	keep_watch_set_ring(&w, 2);
	list_all(&w, ids, 5, W0, 100);
	CHECK_EQ_INT(keep_watch_ring(&w, got, 8), 2);
	CHECK_EQ_STR(got[0], "a");
	CHECK_EQ_STR(got[1], "b");
	/* d, e not looked at: never a candidate at a tick; a and b are */
	observe1(&w, "a", W0, 1100);
	CHECK_EQ_INT(keep_watch_tick(&w, 1900, true, 1), 0);
	CHECK(is_stale(&w, "a"));
	CHECK(!is_stale(&w, "d"));
	CHECK(!is_stale(&w, "e"));
	/* b was never observed since it became watched: no tick judges it */
	CHECK(!is_stale(&w, "b"));
	/* a is a candidate now: one more successor is watched beyond it */
	CHECK_EQ_INT(keep_watch_ring(&w, got, 8), 3);
	CHECK_EQ_STR(got[2], "d");
	/* full mode: every peer watched, nothing to GET */
	keep_watch_set_ring(&w, 0);
	CHECK_EQ_INT(keep_watch_ring(&w, got, 8), 0);
	keep_watch_release(&w);
}

/* A ring observation showing a newer written_at is a write seen (as a
 * listing's changed token): the watch restarts, and the body is taken at
 * the next observation, which restarts it once more; so two reads that
 * fall in one gap between a live peer's writes never make it a candidate,
 * and a dead peer's watch counts from the same moment as in full mode. */
TEST(ring_a_newer_write_counts_as_in_a_listing)
{
	static const char *const ids[] = {"a", "b"};
	struct keep_timing t = timing();
	struct keep_watch w;

	keep_watch_init(&w, &t, "b");
	keep_watch_set_ring(&w, 1);
	list_all(&w, ids, 2, W0, 100);
	keep_watch_ring(&w, NULL, 0);
	/* a wrote at W0 + 1000: seen at 1005, its watch restarts there */
	observe1(&w, "a", W0 + 1000, 1005);
	CHECK_EQ_INT(stales(&w), 0);
	/* read again at 2000 before its next write (at 2010): taken now */
	observe1(&w, "a", W0 + 1000, 2000);
	CHECK_EQ_INT(keep_watch_next_stale_mono_ms(&w, 1), 2000 + 1800);
	/* a tick at 1005 + 1800 does not judge it: not unchanged that long */
	CHECK_EQ_INT(keep_watch_tick(&w, 2805, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 0);
	/* it wrote at 2010: seen at 3000, the watch restarts */
	observe1(&w, "a", W0 + 2010, 3000);
	CHECK_EQ_INT(keep_watch_tick(&w, 3800, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 0);
	/* dead after that write: observed unchanged, a candidate 1800 after
	 * the observation that took the body */
	observe1(&w, "a", W0 + 2010, 4000);
	observe1(&w, "a", W0 + 2010, 5000);
	CHECK_EQ_INT(stales(&w), 0);
	CHECK_EQ_INT(keep_watch_tick(&w, 5799, true, 1), 0);
	CHECK_EQ_INT(stales(&w), 0);
	CHECK_EQ_INT(keep_watch_tick(&w, 5800, true, 1), 0);
	CHECK(is_stale(&w, "a"));
	keep_watch_release(&w);
}

/* A peer not watched is judged at a full listing that shows it unchanged
 * since the last one (full_every periods apart), never between listings;
 * an observation names no join and no leave. */
TEST(ring_unwatched_peer_judged_only_at_a_listing)
{
	static const char *const ids[] = {"a", "c", "d"};
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_watch_input in;

	keep_watch_init(&w, &t, "b");
	keep_watch_set_ring(&w, 1);
	list_all(&w, ids, 3, W0, 100);
	keep_watch_ring(&w, NULL, 0); /* watches c */
	observe1(&w, "c", W0 + 1000, 1100);
	CHECK_EQ_INT(count_events(&w, KEEP_WEV_LEAVE), 0);
	CHECK_EQ_INT(keep_watch_tick(&w, 9000, true, 1), 0);
	CHECK(!is_stale(&w, "a"));
	CHECK(!is_stale(&w, "d"));
	/* the next listing: a and d unchanged since 100: candidates there */
	list_all(&w, ids, 3, W0, 10100);
	CHECK(is_stale(&w, "a"));
	CHECK(is_stale(&w, "d"));
	/* an observation of an unknown node is ignored (no join) */
	{
		struct keep_node_obj z = live("z", W0);

		keep_watch_input_of(&in, "z", false, true, false, &z);
		CHECK_EQ_INT(keep_watch_observe(&w, &in, 1, 10200, W0 + 10200, true, 1), 0);
		CHECK_EQ_INT(count_events(&w, KEEP_WEV_JOIN), 0);
	}
	keep_watch_release(&w);
}

/* Ring mode's schedule: one listing every full_every passes, ring passes
 * between; after a failed listing the next pass lists again. */
TEST(ring_schedule_lists_every_full_every_passes)
{
	struct keep_timing t = timing();
	struct keep_watch_sched sc;

	keep_watch_sched_init(&sc, &t, 0);
	keep_watch_sched_ring(&sc, 3);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 0), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, true, 10, W0 + 10);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 1000), KEEP_WATCH_RING);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 2000), KEEP_WATCH_RING);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 3000), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, false, 3010, W0 + 3010);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 4000), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, true, 4010, W0 + 4010);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 4500), KEEP_WATCH_TICK);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 5000), KEEP_WATCH_RING);
	/* full mode */
	keep_watch_sched_ring(&sc, 1);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 6000), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, true, 6010, W0 + 6010);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 7000), KEEP_WATCH_LIST);
}

/* watch mode auto: ring mode from ring_from listed nodes, full mode again
 * below ring_from - ring_from / 10 (a band: no flapping at the threshold);
 * a call that changes nothing switches nothing. */
TEST(auto_mode_switches_at_ring_from_with_a_band)
{
	static const char *const ids[] = {"a", "b", "d", "e", "f"};
	const char *got[8];
	struct keep_timing t = timing();
	struct keep_watch w;
	struct keep_watch_sched sc;

	keep_watch_init(&w, &t, "c");
	keep_watch_sched_init(&sc, &t, 0);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 0), KEEP_WATCH_LIST);
	list_all(&w, ids, 5, 0, 10);
	keep_watch_sched_listed(&sc, true, 10, W0 + 10);
	/* 6 listed (5 peers and this node), ring from 20: full stays */
	CHECK(!keep_watch_choose_mode(&w, &sc, 6, 20, 2, 3));
	CHECK_EQ_INT(w.ring_k, 0);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 1000), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, true, 1010, W0 + 1010);
	/* 20 listed: ring, with this listing's successors watched */
	CHECK(keep_watch_choose_mode(&w, &sc, 20, 20, 2, 3));
	CHECK_EQ_INT(w.ring_k, 2);
	CHECK_EQ_INT(keep_watch_ring(&w, got, 8), 2);
	CHECK_EQ_STR(got[0], "d");
	CHECK_EQ_STR(got[1], "e");
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 2000), KEEP_WATCH_RING);
	/* still ring: nothing switches */
	CHECK(!keep_watch_choose_mode(&w, &sc, 25, 20, 2, 3));
	/* 18 listed: within the band (full below 20 - 2) */
	CHECK(!keep_watch_choose_mode(&w, &sc, 18, 20, 2, 3));
	CHECK_EQ_INT(w.ring_k, 2);
	/* 17: full again, every pass a listing */
	CHECK(keep_watch_choose_mode(&w, &sc, 17, 20, 2, 3));
	CHECK_EQ_INT(w.ring_k, 0);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 3000), KEEP_WATCH_LIST);
	keep_watch_sched_listed(&sc, true, 3010, W0 + 3010);
	CHECK_EQ_INT(keep_watch_sched_due(&sc, 4000), KEEP_WATCH_LIST);
	/* ring_from below 2 is 2 */
	CHECK(keep_watch_choose_mode(&w, &sc, 2, 0, 1, 2));
	CHECK_EQ_INT(w.ring_k, 1);
	keep_watch_release(&w);
}

/* A heartbeat of the fencing pipeline is stalled past two periods and the
 * attempt timeout (keep_timing_stall_ms; docs/operations.md "Readiness"):
 * 2 * 1000 + (3000 - 600) / 3 here, 2 * 3000 + (10000 - 2000) / 3 with the
 * defaults. */
TEST(heartbeat_stalls_past_two_periods_and_an_attempt)
{
	struct keep_timing t = timing();

	CHECK_EQ_INT(keep_timing_stall_ms(&t), 2800);
	keep_timing_defaults(&t);
	CHECK_EQ_INT(keep_timing_stall_ms(&t), 8666);
}

/* lease-status --progress on one heartbeat file: stalled at the bound
 * plus 1 ms, not at it; another boot's file (or one naming none) is
 * stalled with no age; a file dated ahead is 0 ms old. */
TEST(heartbeat_file_judged_on_this_boot)
{
	struct keep_timing t = timing(); /* stall 2800 ms */
	int64_t age;

	CHECK(!keep_timing_heartbeat_stalled("b1", "b1", 1000, 3800, &t, &age));
	CHECK_EQ_INT(age, 2800);
	CHECK(keep_timing_heartbeat_stalled("b1", "b1", 1000, 3801, &t, &age));
	CHECK_EQ_INT(age, 2801);
	CHECK(keep_timing_heartbeat_stalled("b0", "b1", 1000, 1000, &t, &age));
	CHECK_EQ_INT(age, -1);
	CHECK(keep_timing_heartbeat_stalled(NULL, "b1", 1000, 1000, &t, &age));
	CHECK_EQ_INT(age, -1);
	CHECK(!keep_timing_heartbeat_stalled("-", "", 1000, 1000, &t, &age)); /* boot unknown */
	CHECK(!keep_timing_heartbeat_stalled("b1", "b1", 5000, 1000, &t, &age));
	CHECK_EQ_INT(age, 0);
}

/* node-watch's watch state is written again a period after the last. */
TEST(heartbeat_due_a_period_after_the_last)
{
	struct keep_timing t = timing(); /* period 1000 */

	CHECK(!keep_timing_heartbeat_due(5000, 5999, &t));
	CHECK(keep_timing_heartbeat_due(5000, 6000, &t));
	CHECK(!keep_timing_heartbeat_due(5000, 4000, &t));	    /* the clock behind: not due */
	CHECK(keep_timing_heartbeat_due(INT64_MIN, INT64_MAX, &t)); /* saturates */
}

/* The listings' health, on its own: ok, failing, failed after ttl. */
TEST(listing_health_of_a_run_of_failures)
{
	CHECK_EQ_INT(keep_listing_health_of(true, 0, 5000, 3000), KEEP_LISTING_OK);
	CHECK_EQ_INT(keep_listing_health_of(true, 1000, 9000, 3000), KEEP_LISTING_OK);
	CHECK_EQ_INT(keep_listing_health_of(false, 5000, 5000, 3000), KEEP_LISTING_FAILING);
	CHECK_EQ_INT(keep_listing_health_of(false, 5000, 7999, 3000), KEEP_LISTING_FAILING);
	CHECK_EQ_INT(keep_listing_health_of(false, 5000, 8000, 3000), KEEP_LISTING_FAILED);
	CHECK_EQ_INT(keep_listing_health_of(false, INT64_MIN, INT64_MAX, 3000),
		     KEEP_LISTING_FAILED); /* saturating */
}

/* Ring mode: one pass of full_every lists nodes/, the others are ring
 * passes, and a failed listing is followed by a listing. */
TEST(ring_pass_due_between_listings)
{
	struct keep_timing t = timing();
	struct keep_watch_sched s;

	keep_watch_sched_init(&s, &t, 0);
	s.listed = true;
	CHECK(!keep_watch_ring_pass_due(&s)); /* full mode */
	keep_watch_sched_ring(&s, 3);
	CHECK(keep_watch_ring_pass_due(&s));
	s.since_full = 1;
	CHECK(keep_watch_ring_pass_due(&s));
	s.since_full = 2; /* full_every - 1 ring passes: a listing */
	CHECK(!keep_watch_ring_pass_due(&s));
	s.since_full = 0;
	s.listed = false; /* the last listing failed */
	CHECK(!keep_watch_ring_pass_due(&s));
}

int main(void)
{
	RUN(heartbeat_stalls_past_two_periods_and_an_attempt);
	RUN(auto_mode_switches_at_ring_from_with_a_band);
	RUN(ring_successors_wrap_skip_and_extend);
	RUN(ring_a_newer_write_counts_as_in_a_listing);
	RUN(ring_unwatched_peer_judged_only_at_a_listing);
	RUN(ring_schedule_lists_every_full_every_passes);
	RUN(wrote_restarts_the_watch_without_a_body);
	RUN(wrote_never_earlier_than_the_body_watch);
	RUN(tick_respects_own_lease_and_live_since);
	RUN(no_deadline_without_self_or_live_peer);
	RUN(wrote_for_unknown_peer_ignored_and_old_format_rewritten);
	RUN(watch_input_classification);
	RUN(schedule_lists_each_period_and_ticks_between);
	RUN(listing_health_moves_ok_failing_failed_ok);
	RUN(heartbeat_file_judged_on_this_boot);
	RUN(heartbeat_due_a_period_after_the_last);
	RUN(listing_health_of_a_run_of_failures);
	RUN(ring_pass_due_between_listings);
	return unit_done();
}
