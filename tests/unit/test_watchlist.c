/* Unit tests: owner-watch's decisions (lib/core/watchlist.c): which listed
 * objects to read (the rule of lib/core/listing.c), the holder state, and
 * the events between two views. */
#include <string.h>

#include "../../lib/core/listing.h"
#include "../../lib/core/watchlist.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"

TEST(need_read_only_what_changed)
{
	CHECK(keep_listing_need_read(NULL, "v1", true));   /* never read */
	CHECK(keep_listing_need_read("", "v1", true));	   /* last read failed */
	CHECK(!keep_listing_need_read("v1", "v1", true));  /* the body is exact */
	CHECK(keep_listing_need_read("v1", "v2", true));   /* a write landed */
	CHECK(!keep_listing_need_read(NULL, "v1", false)); /* not wanted */
	CHECK(!keep_listing_need_read("v1", "v2", false));
}

/* node-watch's use of the same rule (keep_listing_need_body). */
TEST(node_watch_reads_what_the_watch_needs)
{
	struct keep_node_obj o;
	struct keep_listed k = {"v1", "v1", true, &o};
	bool wrote;

	memset(&o, 0, sizeof(o));
	o.format = 3;
	o.state = KEEP_NODE_LIVE;
	CHECK(keep_listing_need_body(NULL, "v1", false, &wrote)); /* a new node */
	CHECK(!wrote);
	CHECK(!keep_listing_need_body(&k, "v2", false, &wrote)); /* a write landed */
	CHECK(wrote);
	CHECK(keep_listing_need_body(&k, "v1", false, &wrote)); /* live, unchanged: read */
	CHECK(!wrote);
	o.state = KEEP_NODE_FENCED; /* not live, body exact: not read */
	CHECK(!keep_listing_need_body(&k, "v1", false, &wrote));
	CHECK(!wrote);
	k.body_version = "v0"; /* not live, body at another token: read */
	CHECK(keep_listing_need_body(&k, "v1", false, &wrote));
	k.decoded = false; /* unreadable: read */
	CHECK(keep_listing_need_body(&k, "v1", false, &wrote));
	k.decoded = true;
	k.body_version = "v1";
	CHECK(keep_listing_need_body(&k, "v1", true, &wrote)); /* --once: every body */
}

/* Which listed keys are keep's: node objects (node-watch), and the records
 * of owner-watch PREFIX with what it lists. */
TEST(listed_keys_node_ids_and_records)
{
	char list[64], want[64];

	CHECK_EQ_STR(keep_listing_node_id("nodes/n1"), "n1");
	CHECK(keep_listing_node_id("nodes/x/y") == NULL);
	CHECK(keep_listing_node_id("nodes/") == NULL);
	CHECK(keep_listing_node_id("owners/n1") == NULL);
	CHECK(keep_listing_node_id("no") == NULL);

	keep_watchlist_scope("", list, sizeof(list), want, sizeof(want));
	CHECK_EQ_STR(list, "owners/");
	CHECK_EQ_STR(want, "owners/");
	keep_watchlist_scope("t1/c", list, sizeof(list), want, sizeof(want));
	CHECK_EQ_STR(list, "owners/t1/");
	CHECK_EQ_STR(want, "owners/t1/c");
	keep_watchlist_scope("t1/c1/", list, sizeof(list), want, sizeof(want));
	CHECK_EQ_STR(list, "owners/t1/c1/");
	CHECK_EQ_STR(want, "owners/t1/c1/");
	CHECK_EQ_STR(keep_watchlist_record("owners/t1/c1/n", "owners/t1/c"), "t1/c1/n");
	CHECK(keep_watchlist_record("owners/t1/d1/n", "owners/t1/c") == NULL); /* not PREFIX */
	CHECK(keep_watchlist_record("owners/t1/c1/n/deeper", "owners/t1/c") == NULL);
	CHECK(keep_watchlist_record("owners/t1/c1", "owners/") == NULL); /* not an actor key */
}

TEST(plan_matches_sorted_listings)
{
	struct keep_wl_prev prev[] = {{"owners/t/c/a", "v1"},
				      {"owners/t/c/b", "v2"},
				      {"owners/t/c/d", ""},
				      {"owners/t/c/e", "v5"}};
	struct keep_wl_item it[] = {
	    {"owners/t/c/a", "v1", true, 0, false},  /* unchanged: no read */
	    {"owners/t/c/b", "v3", true, 0, false},  /* changed: read */
	    {"owners/t/c/c", "v4", true, 0, false},  /* new: read */
	    {"owners/t/c/d", "v6", true, 0, false},  /* failed before: read */
	    {"owners/t/c/f", "v7", false, 0, false}, /* new, not wanted: no read */
	};
	size_t n = sizeof(it) / sizeof(it[0]);

	CHECK_EQ_INT(keep_watchlist_plan(prev, 4, it, n), 3);
	CHECK_EQ_INT(it[0].prev, 0);
	CHECK(!it[0].read);
	CHECK_EQ_INT(it[1].prev, 1);
	CHECK(it[1].read);
	CHECK(it[2].prev == KEEP_WL_NONE);
	CHECK(it[2].read);
	CHECK_EQ_INT(it[3].prev, 2);
	CHECK(it[3].read);
	CHECK(it[4].prev == KEEP_WL_NONE); /* e vanished: nothing matches it */
	CHECK(!it[4].read);
	/* nothing before: everything wanted is read */
	CHECK_EQ_INT(keep_watchlist_plan(NULL, 0, it, n), 4);
	/* nothing listed */
	CHECK_EQ_INT(keep_watchlist_plan(prev, 4, it, 0), 0);
}

static void nodeobj(struct keep_node_obj *o, int format, enum keep_node_state st, const char *inst)
{
	memset(o, 0, sizeof(*o));
	o->format = format;
	o->state = st;
	snprintf(o->instance, sizeof(o->instance), "%s", inst);
	snprintf(o->node, sizeof(o->node), "n1");
	o->written_at_ms = 1700000000000LL;
}

TEST(holder_of_node_object)
{
	struct keep_node_obj o;

	CHECK_EQ_INT(keep_holder_of(IA, false, NULL), KEEP_HOLDER_ABSENT);
	CHECK_EQ_INT(keep_holder_of(IA, true, NULL), KEEP_HOLDER_UNREADABLE);
	nodeobj(&o, 3, KEEP_NODE_LIVE, IA);
	CHECK_EQ_INT(keep_holder_of(IA, true, &o), KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_holder_of(IB, true, &o), KEEP_HOLDER_LIVE_OTHER);
	nodeobj(&o, 3, KEEP_NODE_FENCED, IA);
	CHECK_EQ_INT(keep_holder_of(IA, true, &o), KEEP_HOLDER_FENCED);
	CHECK_EQ_INT(keep_holder_of(IB, true, &o), KEEP_HOLDER_FENCED);
	nodeobj(&o, 3, KEEP_NODE_RELEASED, IA);
	CHECK_EQ_INT(keep_holder_of(IA, true, &o), KEEP_HOLDER_RELEASED);
	nodeobj(&o, 1, KEEP_NODE_LIVE, "-");
	CHECK_EQ_INT(keep_holder_of(IA, true, &o), KEEP_HOLDER_OLD_FORMAT);
	CHECK_EQ_STR(keep_holder_name(KEEP_HOLDER_NONE), "-");
	CHECK_EQ_STR(keep_holder_name(KEEP_HOLDER_LIVE_OTHER), "live-other-instance");
	CHECK_EQ_STR(keep_holder_name(KEEP_HOLDER_OLD_FORMAT), "old-format");
}

/* What a pass knows of the holder's node: a failed read not known before is
 * unknown in --follow (not compared), unreadable in --once. */
TEST(holder_of_known_node)
{
	struct keep_node_obj o;

	nodeobj(&o, 3, KEEP_NODE_LIVE, IA);
	CHECK_EQ_INT(keep_holder_of_known(IA, false, false, NULL, false), KEEP_HOLDER_UNKNOWN);
	CHECK_EQ_INT(keep_holder_of_known(IA, false, false, NULL, true), KEEP_HOLDER_UNREADABLE);
	CHECK_EQ_INT(keep_holder_of_known(IA, true, true, &o, false), KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_holder_of_known(IB, true, true, &o, true), KEEP_HOLDER_LIVE_OTHER);
	CHECK_EQ_INT(keep_holder_of_known(IA, true, false, NULL, false), KEEP_HOLDER_ABSENT);
}

static struct keep_owner_view held(const char *node, const char *inst, int64_t gen,
				   enum keep_holder h)
{
	struct keep_owner_view v;

	memset(&v, 0, sizeof(v));
	v.seen = v.readable = true;
	keep_owner_rec_held(&v.rec, node, inst, gen);
	v.holder = h;
	v.last_known_holder = h;
	return v;
}

static struct keep_owner_view nobody(int64_t gen)
{
	struct keep_owner_view v;

	memset(&v, 0, sizeof(v));
	v.seen = v.readable = true;
	keep_owner_rec_nobody(&v.rec, gen);
	return v;
}

static struct keep_owner_view unseen(void)
{
	struct keep_owner_view v;

	memset(&v, 0, sizeof(v));
	return v;
}

/* free= (the §2 free rule on what the pass knows of the holder's node). */
TEST(owner_view_free)
{
	struct keep_timing t = {10000, 5000, 2000, 1000, 3000, 0};
	struct keep_owner_view v = held("n1", IA, 4, KEEP_HOLDER_FENCED);
	struct keep_owner_view nb = nobody(5);
	struct keep_node_obj o;
	const int64_t w = 1700000000000LL; /* nodeobj's written_at */

	nodeobj(&o, 3, KEEP_NODE_FENCED, IA);
	CHECK(keep_owner_view_free(&nb, false, false, NULL, w, &t));	     /* nobody: free */
	CHECK(!keep_owner_view_free(&v, false, false, NULL, w + 99999, &t)); /* not known */
	CHECK(!keep_owner_view_free(&v, true, true, &o, w + 14999, &t));     /* later */
	CHECK(keep_owner_view_free(&v, true, true, &o, w + 15000, &t));
	CHECK(!keep_owner_view_free(&v, true, false, NULL, w + 99999, &t)); /* absent */
	nodeobj(&o, 3, KEEP_NODE_LIVE, IB);
	CHECK(keep_owner_view_free(&v, true, true, &o, w, &t)); /* live, another instance */
	v.readable = false;
	CHECK(!keep_owner_view_free(&v, true, true, &o, w, &t)); /* unreadable */
}

TEST(diff_acquire_release_takeover)
{
	struct keep_owner_view p = unseen(), c = held("n1", IA, 1, KEEP_HOLDER_LIVE);
	struct keep_owe ev[KEEP_OWE_MAX];

	/* first seen held: acquired, nothing missed known */
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_ACQUIRED);
	CHECK_EQ_STR(ev[0].node, "n1");
	CHECK_EQ_STR(ev[0].instance, IA);
	CHECK_EQ_INT(ev[0].generation, 1);
	CHECK_EQ_STR(ev[0].previous_node, "");
	CHECK_EQ_INT(ev[0].missed, 0);
	CHECK_EQ_STR(keep_owe_name(ev[0].kind, ev[0].holder), "acquired");
	/* unchanged: nothing */
	p = c;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 0);
	/* released: the holder named, the generation kept */
	c = nobody(1);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_RELEASED);
	CHECK_EQ_STR(ev[0].node, "n1");
	CHECK_EQ_INT(ev[0].generation, 1);
	CHECK_EQ_INT(ev[0].missed, 0);
	/* nobody -> held by n2 at 2 */
	p = c;
	c = held("n2", IB, 2, KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_ACQUIRED);
	CHECK_EQ_STR(ev[0].previous_node, "");
	CHECK_EQ_INT(ev[0].missed, 0);
	/* a takeover straight from n2 to n1 at 3: previous_node n2 */
	p = c;
	c = held("n1", IA, 3, KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_STR(ev[0].previous_node, "n2");
	CHECK_EQ_INT(ev[0].missed, 0);
	/* two acquisitions between two listings: 3 -> 6 held, two unseen */
	p = c;
	c = held("n2", IB, 6, KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].missed, 2);
	/* released after one more unseen acquisition: by its holder, whom
	 * this watch never saw (not n2, the holder of generation 6) */
	p = c;
	c = nobody(7);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_RELEASED);
	CHECK_EQ_STR(ev[0].node, "");
	CHECK_EQ_STR(ev[0].instance, "");
	CHECK_EQ_INT(ev[0].generation, 7);
	CHECK_EQ_INT(ev[0].missed, 1);
	/* released with nothing missed: by the holder seen */
	p = held("n2", IB, 7, KEEP_HOLDER_LIVE);
	c = nobody(7);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_STR(ev[0].node, "n2");
	CHECK_EQ_INT(ev[0].missed, 0);
	/* nobody at a later generation: released, the holder unknown */
	p = c;
	c = nobody(9);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_RELEASED);
	CHECK_EQ_STR(ev[0].node, "");
	CHECK_EQ_INT(ev[0].missed, 2);
	/* a key first seen as nobody: acquired and released unseen */
	p = unseen();
	c = nobody(1);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_RELEASED);
	CHECK_EQ_INT(ev[0].missed, 1);
}

TEST(diff_holder_states)
{
	struct keep_owner_view p = held("n1", IA, 4, KEEP_HOLDER_LIVE), c = p;
	struct keep_owe ev[KEEP_OWE_MAX];

	c.holder = KEEP_HOLDER_FENCED;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_HOLDER);
	CHECK_EQ_INT(ev[0].holder, KEEP_HOLDER_FENCED);
	CHECK_EQ_STR(keep_owe_name(ev[0].kind, ev[0].holder), "holder-fenced");
	CHECK_EQ_STR(ev[0].node, "n1");
	CHECK_EQ_INT(ev[0].generation, 4);
	CHECK_EQ_INT(c.last_known_holder, KEEP_HOLDER_FENCED);
	/* a pass whose node read failed: UNKNOWN, no event, last known kept */
	p = c;
	c.holder = KEEP_HOLDER_UNKNOWN;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 0);
	CHECK_EQ_INT(c.last_known_holder, KEEP_HOLDER_FENCED);
	/* known again and still fenced: nothing */
	p = c;
	c.holder = KEEP_HOLDER_FENCED;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 0);
	/* the node restarted (another instance live) */
	p = c;
	c.holder = KEEP_HOLDER_LIVE_OTHER;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_STR(keep_owe_name(ev[0].kind, ev[0].holder), "holder-live-other-instance");
	/* released (clean stop) and absent */
	p = c;
	c.holder = KEEP_HOLDER_RELEASED;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_STR(keep_owe_name(ev[0].kind, ev[0].holder), "holder-released");
	p = c;
	c.holder = KEEP_HOLDER_ABSENT;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_STR(keep_owe_name(ev[0].kind, ev[0].holder), "holder-absent");
	/* acquired with its holder not known yet, then known live: nothing more */
	p = nobody(4);
	c = held("n2", IB, 5, KEEP_HOLDER_UNKNOWN);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(c.last_known_holder, KEEP_HOLDER_UNKNOWN);
	p = c;
	c.holder = KEEP_HOLDER_LIVE;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 0);
	/* ... or known fenced: the fence is reported */
	c.holder = KEEP_HOLDER_FENCED;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_HOLDER);
	/* acquired by a holder already fenced: acquired, then holder-fenced */
	p = nobody(5);
	c = held("n2", IB, 6, KEEP_HOLDER_FENCED);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 2);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_ACQUIRED);
	CHECK_EQ_INT(ev[1].kind, KEEP_OWE_HOLDER);
	CHECK_EQ_INT(ev[1].holder, KEEP_HOLDER_FENCED);
	CHECK_EQ_INT(ev[1].generation, 6);
}

/* owner-watch --once: a failed read (the record's, or an unknown holder
 * node's) is 111 and outranks a bad record's 17. */
TEST(once_exit_of_the_records)
{
	struct keep_owner_view ok = {.seen = true, .readable = true}, bad = {.seen = true};
	struct keep_owner_view held = ok;
	struct keep_owner_once o;

	held.rec.held = true;
	held.holder = KEEP_HOLDER_UNREADABLE;
	memset(&o, 0, sizeof(o));
	keep_owner_once_add(&o, false, &ok, false);
	CHECK_EQ_INT(keep_owner_once_exit(&o), 0);
	keep_owner_once_add(&o, false, &held, true); /* the node was read: bad node, not failed */
	CHECK_EQ_INT(keep_owner_once_exit(&o), 0);
	keep_owner_once_add(&o, false, &bad, false);
	CHECK_EQ_INT(keep_owner_once_exit(&o), 17);
	keep_owner_once_add(&o, false, &held, false); /* the node's read failed */
	CHECK_EQ_INT(keep_owner_once_exit(&o), 111);
	memset(&o, 0, sizeof(o));
	keep_owner_once_add(&o, true, &bad, false); /* the record's read failed */
	CHECK_EQ_INT(keep_owner_once_exit(&o), 111);
}

/* What a pass keeps after a read: gone drops; a result is taken; a
 * failed read keeps an earlier view, else a record not seen yet waits for
 * the next pass (a holder's node is kept as not known); --once keeps the
 * failed read. */
TEST(pass_keeps_after_a_read)
{
	CHECK_EQ_INT(keep_watchlist_keep(true, true, true, true, false), KEEP_WL_KEEP_DROP);
	CHECK_EQ_INT(keep_watchlist_keep(false, false, true, true, false), KEEP_WL_KEEP_NEW);
	CHECK_EQ_INT(keep_watchlist_keep(false, true, true, true, false), KEEP_WL_KEEP_PREV);
	CHECK_EQ_INT(keep_watchlist_keep(false, true, false, true, false), KEEP_WL_KEEP_DROP);
	CHECK_EQ_INT(keep_watchlist_keep(false, true, false, false, false), KEEP_WL_KEEP_NEW);
	CHECK_EQ_INT(keep_watchlist_keep(false, true, true, true, true), KEEP_WL_KEEP_NEW);
	CHECK_EQ_INT(keep_watchlist_keep(true, false, false, true, true), KEEP_WL_KEEP_DROP);
}

/* An oversized body (not ours, no version) is known by its listed token;
 * the next pass starts a period after this one's start; the baseline. */
TEST(pass_version_schedule_and_baseline)
{
	struct keep_timing t;
	struct keep_owner_view v;

	CHECK_EQ_STR(keep_watchlist_body_version(true, "L1", ""), "L1");
	CHECK_EQ_STR(keep_watchlist_body_version(false, "L1", "R1"), "R1");
	keep_timing_defaults(&t);
	CHECK(keep_owner_watch_next_pass_ms(5000, &t) == 5000 + t.period_ms);
	CHECK(keep_owner_watch_next_pass_ms(INT64_MAX - 1, &t) == INT64_MAX);
	memset(&v, 0, sizeof(v));
	v.holder = KEEP_HOLDER_FENCED;
	v.last_known_holder = KEEP_HOLDER_LIVE;
	keep_owner_watch_baseline(&v);
	CHECK_EQ_INT(v.last_known_holder, KEEP_HOLDER_FENCED);
}

TEST(diff_removed_and_unreadable)
{
	struct keep_owner_view p = held("n1", IA, 2, KEEP_HOLDER_LIVE), c = unseen();
	struct keep_owe ev[KEEP_OWE_MAX];

	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_REMOVED);
	CHECK_EQ_STR(ev[0].node, "n1");
	CHECK_EQ_INT(ev[0].generation, 2);
	/* not listed before nor now: nothing */
	p = unseen();
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 0);
	/* readable -> unreadable, once */
	p = held("n1", IA, 2, KEEP_HOLDER_LIVE);
	memset(&c, 0, sizeof(c));
	c.seen = true;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_UNREADABLE);
	CHECK_EQ_STR(ev[0].node, "");
	p = c;
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 0);
	/* readable again: held -> acquired with nothing known before */
	c = held("n1", IA, 3, KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_ACQUIRED);
	CHECK_EQ_INT(ev[0].missed, 0);
	/* an unreadable key removed */
	memset(&p, 0, sizeof(p));
	p.seen = true;
	c = unseen();
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_REMOVED);
	CHECK_EQ_INT(ev[0].generation, 0);
	CHECK_EQ_STR(keep_owe_name(KEEP_OWE_REMOVED, KEEP_HOLDER_NONE), "removed");
	CHECK_EQ_STR(keep_owe_name(KEEP_OWE_UNREADABLE, KEEP_HOLDER_NONE), "unreadable");
}

/* Issue 23 item 6: a record deleted by hand and created again between two
 * listings (a native cluster: generation 1 again) is reported. */
TEST(diff_recreated_at_a_lower_generation)
{
	struct keep_owner_view p = held("n1", IA, 7, KEEP_HOLDER_LIVE),
			       c = held("n2", IB, 1, KEEP_HOLDER_LIVE);
	struct keep_owe ev[KEEP_OWE_MAX];

	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 2);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_RECREATED);
	CHECK_EQ_STR(ev[0].node, "n2");
	CHECK_EQ_INT(ev[0].generation, 1);
	CHECK_EQ_STR(ev[0].previous_node, "n1");
	CHECK_EQ_INT(ev[0].previous_generation, 7);
	CHECK_EQ_INT(ev[1].kind, KEEP_OWE_ACQUIRED);
	CHECK_EQ_STR(keep_owe_name(KEEP_OWE_RECREATED, KEEP_HOLDER_NONE), "recreated");
	/* ... by a holder already known not live: three events */
	c = held("n2", IB, 1, KEEP_HOLDER_FENCED);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 3);
	CHECK_EQ_INT(ev[2].kind, KEEP_OWE_HOLDER);
	/* created again as nobody, below a released record: one event */
	p = nobody(4);
	c = nobody(1);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_RECREATED);
	CHECK_EQ_STR(ev[0].previous_node, "");
	CHECK_EQ_INT(ev[0].previous_generation, 4);
	/* a higher generation is an ordinary change, never recreated */
	p = held("n1", IA, 1, KEEP_HOLDER_LIVE);
	c = held("n2", IB, 2, KEEP_HOLDER_LIVE);
	CHECK_EQ_INT(keep_owner_watch_diff(&p, &c, ev), 1);
	CHECK_EQ_INT(ev[0].kind, KEEP_OWE_ACQUIRED);
}

/* Issue 23 item 6: what a hand deletion looks like between two passes. */
TEST(hand_deleted_removed_or_recreated)
{
	struct keep_owner_view p = held("n1", IA, 7, KEEP_HOLDER_LIVE), c = unseen();
	enum keep_owe_kind k = KEEP_OWE_ACQUIRED;

	CHECK(keep_owner_watch_hand_deleted(&p, &c, &k));
	CHECK_EQ_INT(k, KEEP_OWE_REMOVED);
	c = held("n2", IB, 1, KEEP_HOLDER_LIVE);
	k = KEEP_OWE_ACQUIRED;
	CHECK(keep_owner_watch_hand_deleted(&p, &c, &k));
	CHECK_EQ_INT(k, KEEP_OWE_RECREATED);
	/* the same or a higher generation: no deletion seen */
	k = KEEP_OWE_ACQUIRED;
	c = held("n2", IB, 7, KEEP_HOLDER_LIVE);
	CHECK(!keep_owner_watch_hand_deleted(&p, &c, &k));
	c = held("n2", IB, 8, KEEP_HOLDER_LIVE);
	CHECK(!keep_owner_watch_hand_deleted(&p, &c, &k));
	CHECK_EQ_INT(k, KEEP_OWE_ACQUIRED);
	/* an unreadable side says nothing of the generation */
	c = held("n2", IB, 1, KEEP_HOLDER_LIVE);
	c.readable = false;
	CHECK(!keep_owner_watch_hand_deleted(&p, &c, &k));
	p.readable = false;
	c.readable = true;
	CHECK(!keep_owner_watch_hand_deleted(&p, &c, &k));
	/* never listed before: nothing removed */
	p = unseen();
	c = unseen();
	CHECK(!keep_owner_watch_hand_deleted(&p, &c, &k));
	CHECK_EQ_INT(k, KEEP_OWE_ACQUIRED);
}

int main(void)
{
	RUN(need_read_only_what_changed);
	RUN(node_watch_reads_what_the_watch_needs);
	RUN(listed_keys_node_ids_and_records);
	RUN(plan_matches_sorted_listings);
	RUN(holder_of_node_object);
	RUN(holder_of_known_node);
	RUN(owner_view_free);
	RUN(diff_acquire_release_takeover);
	RUN(diff_holder_states);
	RUN(once_exit_of_the_records);
	RUN(pass_keeps_after_a_read);
	RUN(pass_version_schedule_and_baseline);
	RUN(diff_removed_and_unreadable);
	RUN(diff_recreated_at_a_lower_generation);
	RUN(hand_deleted_removed_or_recreated);
	return unit_done();
}
