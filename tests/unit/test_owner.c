/* Unit tests: ownership records (lib/codec/ownerrec.c, lib/core/owner.c,
 * lib/local/holds.c codecs; ADR 0020 §2, §3). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/err.h"
#include "../../lib/codec/ownerrec.h"
#include "../../lib/core/owner.h"
#include "../../lib/local/holds.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"
#define W0 1700000000000LL

static void timing(struct keep_timing *t)
{
	t->ttl_ms = 3000;
	t->grace_ms = 1500;
	t->safety_ms = 600;
	t->max_skew_ms = 300;
	t->period_ms = 1000;
}

static int dec(const char *s, struct keep_owner_rec *r)
{
	return keep_owner_rec_decode(s, strlen(s), r, NULL, 0);
}

static void node(struct keep_node_obj *o, const char *id, enum keep_node_state st, const char *inst,
		 int64_t written_at, int format)
{
	memset(o, 0, sizeof(*o));
	o->format = format;
	o->state = st;
	snprintf(o->instance, sizeof(o->instance), "%s", inst);
	o->written_at_ms = written_at;
	snprintf(o->node, sizeof(o->node), "%s", id);
}

TEST(key_validity)
{
	char big[200];

	CHECK(keep_owner_key_valid("t/c/n"));
	CHECK(keep_owner_key_valid("T-1/c.x/n_2"));
	CHECK(!keep_owner_key_valid(NULL));
	CHECK(!keep_owner_key_valid("t/c"));
	CHECK(!keep_owner_key_valid("t/c/n/x"));
	CHECK(!keep_owner_key_valid("t//n"));
	CHECK(!keep_owner_key_valid("/t/c/n"));
	CHECK(!keep_owner_key_valid("t/c/n/"));
	CHECK(!keep_owner_key_valid("t/.c/n"));
	CHECK(!keep_owner_key_valid("t/c/n n"));
	CHECK(!keep_owner_key_valid("t/c/%41"));
	memset(big, 'x', 128);
	memcpy(big + 128, "/c/n", 5);
	CHECK(keep_owner_key_valid(big));
	memset(big, 'x', 129);
	memcpy(big + 129, "/c/n", 5);
	CHECK(!keep_owner_key_valid(big));
}

TEST(codec_round_trip)
{
	struct keep_owner_rec r, o;
	struct keep_buf b;

	keep_buf_init(&b, 4096);
	keep_owner_rec_held(&r, "n1", IA, 7);
	CHECK_EQ_INT(keep_owner_rec_encode(&r, &b), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "wasmkeep-owner 1\nheld n1 " IA "\ngeneration 7\n");
	CHECK_EQ_INT(dec(keep_buf_str(&b), &o), 0);
	CHECK(o.held);
	CHECK_EQ_STR(o.node, "n1");
	CHECK_EQ_STR(o.instance, IA);
	CHECK_EQ_INT(o.generation, 7);
	keep_buf_reset(&b);
	keep_owner_rec_nobody(&r, 7);
	CHECK_EQ_INT(keep_owner_rec_encode(&r, &b), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "wasmkeep-owner 1\nnobody\ngeneration 7\n");
	CHECK_EQ_INT(dec(keep_buf_str(&b), &o), 0);
	CHECK(!o.held);
	keep_owner_rec_nobody(&r, 0);
	CHECK_EQ_INT(keep_owner_rec_encode(&r, &b), KEEP_ERR_INVAL);
	keep_owner_rec_held(&r, "bad/id", IA, 1);
	CHECK_EQ_INT(keep_owner_rec_encode(&r, &b), KEEP_ERR_INVAL);
	keep_buf_release(&b);
}

TEST(codec_refuses_malformed)
{
	struct keep_owner_rec o;

	CHECK_EQ_INT(dec("hello\n", &o), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec("wasmkeep-owner 2\nnobody\ngeneration 1\n", &o), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration 1", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration 0\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration 01\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration -1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration 9007199254740992\n", &o),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration 1\nx 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\ngeneration 1\nnobody\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nheld n1\ngeneration 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nheld n1 ABC\ngeneration 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nheld .n " IA "\ngeneration 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nheld n1 " IA " x\ngeneration 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\r\nnobody\ngeneration 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\r\ngeneration 1\n", &o), KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    keep_owner_rec_decode("wasmkeep-owner 1\nno\0ody\ngeneration 1\n", 37, &o, NULL, 0),
	    KEEP_ERR_PARSE);
}

static const struct keep_owner_self self = {"n1", IA};

TEST(acquire_absent_nobody_self)
{
	struct keep_acq_decision d;
	struct keep_owner_rec r;
	struct keep_owner_hold_view live = {true, 4}, none = {false, 0};

	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_NOT_FOUND, "", NULL, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	CHECK_EQ_INT(d.cond, KEEP_COND_IF_NONE_MATCH);
	CHECK_EQ_INT(d.next.generation, 1);
	CHECK_EQ_STR(d.next.instance, IA);
	/* the issue-5 hook: a seeded first generation */
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_NOT_FOUND, "", NULL, 0, 9, &d);
	CHECK_EQ_INT(d.next.generation, 9);

	keep_owner_rec_nobody(&r, 4);
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_OK, "v4", &r, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	CHECK_EQ_INT(d.cond, KEEP_COND_IF_MATCH);
	CHECK_EQ_STR(d.if_match, "v4");
	CHECK_EQ_INT(d.next.generation, 5);

	/* R2: our own live hold at the record's generation: same grant */
	keep_owner_rec_held(&r, "n1", IA, 4);
	keep_owner_acq_on_record(&self, &live, KEEP_STORE_OK, "v4", &r, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_SAME);
	/* our instance, no hold here: a new generation */
	keep_owner_acq_on_record(&self, &none, KEEP_STORE_OK, "v4", &r, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	CHECK_EQ_INT(d.next.generation, 5);
	/* a live hold at another generation is not the record's: new generation */
	live.generation = 3;
	keep_owner_acq_on_record(&self, &live, KEEP_STORE_OK, "v4", &r, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	/* our node under another instance: the free rule decides */
	keep_owner_rec_held(&r, "n1", IB, 4);
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_OK, "v4", &r, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_READ_NODE);
	/* failures */
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_AMBIGUOUS, "", NULL, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_FAILED);
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_OK, "v", NULL, KEEP_ERR_NOTOURS, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_BAD_RECORD);
}

TEST(acquire_free_rule)
{
	struct keep_timing t;
	struct keep_acq_decision d;
	struct keep_owner_rec r;
	struct keep_node_obj o;

	timing(&t);
	keep_owner_rec_held(&r, "n2", IB, 3);
#define ON(outcome, obj, now)                                                                      \
	do {                                                                                       \
		keep_owner_acq_on_record(&self, NULL, KEEP_STORE_OK, "v3", &r, 0, 1, &d);          \
		CHECK_EQ_INT(d.verdict, KEEP_ACQ_READ_NODE);                                       \
		keep_owner_acq_on_node(&self, outcome, obj, now, &t, &d);                          \
	} while (0)
	/* live naming the record's instance: held */
	node(&o, "n2", KEEP_NODE_LIVE, IB, W0, 3);
	ON(KEEP_STORE_OK, &o, W0 + 100000);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_HELD);
	CHECK_EQ_STR(d.rec.node, "n2");
	/* live naming another instance: free at once */
	node(&o, "n2", KEEP_NODE_LIVE, IA, W0, 3);
	ON(KEEP_STORE_OK, &o, W0);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	CHECK_EQ_INT(d.next.generation, 4);
	CHECK_EQ_STR(d.if_match, "v3");
	/* fenced: free only after written_at + ttl + grace */
	node(&o, "n2", KEEP_NODE_FENCED, IB, W0, 3);
	ON(KEEP_STORE_OK, &o, W0 + 4499);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_HELD);
	CHECK_EQ_INT(d.free_at_ms, W0 + 4500);
	ON(KEEP_STORE_OK, &o, W0 + 4500);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	/* released naming any instance: the same bound */
	node(&o, "n2", KEEP_NODE_RELEASED, IA, W0, 3);
	ON(KEEP_STORE_OK, &o, W0 + 4500);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	/* absent and old formats free nothing, ever */
	ON(KEEP_STORE_NOT_FOUND, NULL, W0 + 1000000);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_HELD);
	node(&o, "n2", KEEP_NODE_LIVE, "-", W0, 2);
	ON(KEEP_STORE_OK, &o, W0 + 1000000);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_HELD);
	/* a failed read of the node: nothing written */
	ON(KEEP_STORE_AMBIGUOUS, NULL, W0);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_FAILED);
#undef ON
}

TEST(readback)
{
	struct keep_timing t;
	struct keep_rb_decision d;
	struct keep_owner_rec r;
	struct keep_node_obj o;

	timing(&t);
	keep_owner_rec_held(&r, "n1", IA, 5);
	keep_owner_readback(&self, 5, "v4", KEEP_STORE_OK, "v5", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_OURS);
	CHECK_EQ_STR(d.version, "v5");
	/* ours after If-None-Match (a first record) */
	keep_owner_readback(&self, 5, "", KEEP_STORE_OK, "v5", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_OURS);
	/* ours at another generation: unresolved */
	keep_owner_readback(&self, 6, "v5", KEEP_STORE_OK, "v5", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
	keep_owner_readback(&self, 5, "v4", KEEP_STORE_AMBIGUOUS, "", NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
	keep_owner_readback(&self, 1, "", KEEP_STORE_NOT_FOUND, "", NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
	keep_owner_rec_nobody(&r, 5);
	keep_owner_readback(&self, 6, "v", KEEP_STORE_OK, "v", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
	/* replaced by a live holder: lost */
	keep_owner_rec_held(&r, "n2", IB, 6);
	keep_owner_readback(&self, 6, "v5", KEEP_STORE_OK, "v6", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_READ_NODE);
	node(&o, "n2", KEEP_NODE_LIVE, IB, W0, 3);
	keep_owner_readback_on_node(&self, KEEP_STORE_OK, &o, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_LOST);
	/* created by another holder after our If-None-Match: replaced, lost */
	keep_owner_readback(&self, 1, "", KEEP_STORE_OK, "v6", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_READ_NODE);
	keep_owner_readback_on_node(&self, KEEP_STORE_OK, &o, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_LOST);
	/* replaced by a free holder: unresolved */
	keep_owner_readback(&self, 6, "v5", KEEP_STORE_OK, "v6", &r, 0, &d);
	node(&o, "n2", KEEP_NODE_LIVE, IA, W0, 3);
	keep_owner_readback_on_node(&self, KEEP_STORE_OK, &o, W0, &t, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
}

/* Issue 23 item 2 (ADR §3): a record unchanged since the read the write was
 * conditioned on is never "lost", whoever it names and whatever that
 * holder's node object shows now: the write may still land. */
TEST(readback_unchanged_stays_unresolved)
{
	struct keep_rb_decision d;
	struct keep_owner_rec r;

	/* the write went If-Match v5 over a record naming n2 (free then, by
	 * its node object); the read-back finds it still at v5 */
	keep_owner_rec_held(&r, "n2", IB, 5);
	keep_owner_readback(&self, 6, "v5", KEEP_STORE_OK, "v5", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
	CHECK_EQ_INT(d.rec.generation, 5);
	/* our own earlier instance, unchanged: unresolved as well */
	keep_owner_rec_held(&r, "n1", IB, 5);
	keep_owner_readback(&self, 6, "v5", KEEP_STORE_OK, "v5", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
	/* a NULL condition counts as If-None-Match: a present record held by
	 * another was created since */
	keep_owner_rec_held(&r, "n2", IB, 1);
	keep_owner_readback(&self, 1, NULL, KEEP_STORE_OK, "v1", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_READ_NODE);
}

TEST(pending_release_ends)
{
	struct keep_pend_decision d;
	struct keep_owner_rec r;

	keep_owner_rec_held(&r, "n1", IA, 3);
	keep_owner_pending_on_read(IA, 3, KEEP_STORE_OK, &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_KEEP); /* never adopts the version */
	keep_owner_rec_held(&r, "n1", IA, 4);	 /* a later hold of this node */
	keep_owner_pending_on_read(IA, 3, KEEP_STORE_OK, &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	keep_owner_rec_nobody(&r, 3);
	keep_owner_pending_on_read(IA, 3, KEEP_STORE_OK, &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	keep_owner_rec_held(&r, "n2", IB, 3);
	keep_owner_pending_on_read(IA, 3, KEEP_STORE_OK, &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	keep_owner_pending_on_read(IA, 3, KEEP_STORE_NOT_FOUND, NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	keep_owner_pending_on_read(IA, 3, KEEP_STORE_AMBIGUOUS, NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_KEEP);
}

TEST(resolver)
{
	struct keep_pend_decision d;
	struct keep_owner_rec r;

	keep_owner_rec_held(&r, "n1", IA, 2);
	/* landed, no hold here: release If-Match that read's version */
	keep_owner_resolve_on_read(IA, 2, "v1", true, false, KEEP_STORE_OK, "v2", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_RELEASE);
	CHECK_EQ_STR(d.version, "v2");
	/* landed under an earlier instance: released too (it is ours to free) */
	keep_owner_resolve_on_read(IA, 2, "v1", false, false, KEEP_STORE_OK, "v2", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_RELEASE);
	/* a hold exists here (a second acquisition at the same generation): never */
	keep_owner_resolve_on_read(IA, 2, "v1", true, true, KEEP_STORE_OK, "v2", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	CHECK_EQ_STR(d.reason, "hold-exists");
	/* unchanged since the condition: kept until the record decides, however
	 * long (issue 14 item 2); ended only once the instance is an earlier one */
	keep_owner_rec_held(&r, "n2", IB, 1);
	keep_owner_resolve_on_read(IA, 2, "v1", true, false, KEEP_STORE_OK, "v1", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_KEEP);
	CHECK_EQ_STR(d.reason, "unchanged");
	keep_owner_resolve_on_read(IA, 2, "v1", false, false, KEEP_STORE_OK, "v1", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	CHECK_EQ_STR(d.reason, "old-instance");
	/* changed to anything else: ends */
	keep_owner_resolve_on_read(IA, 2, "v1", true, false, KEEP_STORE_OK, "v9", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	CHECK_EQ_STR(d.reason, "not-landed");
	/* still absent after an If-None-Match attempt: kept */
	keep_owner_resolve_on_read(IA, 1, "", true, false, KEEP_STORE_NOT_FOUND, "", NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_KEEP);
	keep_owner_resolve_on_read(IA, 1, "", false, false, KEEP_STORE_NOT_FOUND, "", NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	/* absent after an If-Match attempt: the record went away: ends */
	keep_owner_resolve_on_read(IA, 2, "v1", true, false, KEEP_STORE_NOT_FOUND, "", NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	keep_owner_resolve_on_read(IA, 1, "", true, false, KEEP_STORE_AMBIGUOUS, "", NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_KEEP);
}

TEST(grant_check)
{
	struct keep_grant_input in = {true, IA, 3, 2, IA, true, 2, false};

	CHECK_EQ_INT(keep_owner_check(&in, 3), KEEP_GRANT_OK);
	CHECK_EQ_INT(keep_owner_check(&in, 2), KEEP_GRANT_OTHER_GEN);
	in.lease_lapses = 3;
	CHECK_EQ_INT(keep_owner_check(&in, 3), KEEP_GRANT_LAPSED);
	in.lease_lapses = 2;
	/* a hold whose pending release exists never acts (issue 18) */
	in.release_pending = true;
	CHECK_EQ_INT(keep_owner_check(&in, 3), KEEP_GRANT_RELEASING);
	in.release_pending = false;
	in.lease_valid = false;
	CHECK_EQ_INT(keep_owner_check(&in, 3), KEEP_GRANT_NOT_VALID);
	in.lease_valid = true;
	in.lease_instance = IB;
	CHECK_EQ_INT(keep_owner_check(&in, 3), KEEP_GRANT_OLD_INSTANCE);
	in.have_hold = false;
	CHECK_EQ_INT(keep_owner_check(&in, 3), KEEP_GRANT_NO_HOLD);
	CHECK(keep_owner_hold_stale(IA, 1, IA, 2));
	CHECK(keep_owner_hold_stale(IA, 2, IB, 2));
	CHECK(!keep_owner_hold_stale(IA, 2, IA, 2));
}

TEST(backoff)
{
	CHECK_EQ_INT(keep_owner_backoff_ms(1), 200);
	CHECK_EQ_INT(keep_owner_backoff_ms(2), 400);
	CHECK_EQ_INT(keep_owner_backoff_ms(5), 3200);
	CHECK_EQ_INT(keep_owner_backoff_ms(6), 5000);
	CHECK_EQ_INT(keep_owner_backoff_ms(1000), 5000);
}

TEST(hand_delete)
{
	CHECK_EQ_INT(keep_hand_delete_judge("nodes/n1"), KEEP_HAND_DELETE_NODE);
	CHECK_EQ_INT(keep_hand_delete_judge("owners/t/c/a"), KEEP_HAND_DELETE_RECORD);
	CHECK_EQ_INT(keep_hand_delete_judge("apps/billing/owners/t/c/a"), KEEP_HAND_DELETE_RECORD);
	CHECK_EQ_INT(keep_hand_delete_judge("apps/b_1-x/owners/k"), KEEP_HAND_DELETE_RECORD);
	/* nodes/ is shared: no node lease lives under a root */
	CHECK_EQ_INT(keep_hand_delete_judge("apps/billing/nodes/n1"), KEEP_HAND_DELETE_OK);
	/* not a valid root: not a record keep reads */
	CHECK_EQ_INT(keep_hand_delete_judge("apps/Billing/owners/k"), KEEP_HAND_DELETE_OK);
	CHECK_EQ_INT(keep_hand_delete_judge("apps//owners/k"), KEEP_HAND_DELETE_OK);
	CHECK_EQ_INT(keep_hand_delete_judge("apps/owners/k"), KEEP_HAND_DELETE_OK);
	CHECK_EQ_INT(keep_hand_delete_judge("apps/abcdefghijabcdefghijabcdefghijabc/owners/k"),
		     KEEP_HAND_DELETE_OK);
	CHECK_EQ_INT(keep_hand_delete_judge("scratch/owners/k"), KEEP_HAND_DELETE_OK);
	CHECK_EQ_INT(keep_hand_delete_judge("nodesx"), KEEP_HAND_DELETE_OK);
	CHECK_EQ_INT(keep_hand_delete_judge("cluster"), KEEP_HAND_DELETE_OK);
}

TEST(state_files)
{
	struct keep_hold h, h2;
	struct keep_pending p, p2;
	struct keep_buf b;

	memset(&h, 0, sizeof(h));
	snprintf(h.key, sizeof(h.key), "t/c/n");
	snprintf(h.instance, sizeof(h.instance), IA);
	h.generation = 3;
	snprintf(h.version, sizeof(h.version), "\"etag 1\"");
	h.epoch = 0;
	h.acquired_at_ms = W0;
	keep_buf_init(&b, 4096);
	CHECK_EQ_INT(keep_hold_encode(&h, &b), 0);
	CHECK_EQ_INT(keep_hold_decode(b.data, b.len, &h2), 0);
	CHECK_EQ_STR(h2.version, "\"etag 1\"");
	CHECK_EQ_INT(h2.generation, 3);
	CHECK_EQ_INT(keep_hold_decode(b.data, b.len - 1, &h2), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_hold_decode("keep-hold 2\n", 12, &h2), KEEP_ERR_NOTOURS);
	keep_buf_reset(&b);
	memset(&p, 0, sizeof(p));
	p.kind = KEEP_PENDING_ACQUIRE;
	snprintf(p.key, sizeof(p.key), "t/c/n");
	snprintf(p.instance, sizeof(p.instance), IA);
	p.generation = 1;
	snprintf(p.version, sizeof(p.version), "-");
	CHECK_EQ_INT(keep_pending_encode(&p, &b), 0);
	CHECK_EQ_INT(keep_pending_decode(b.data, b.len, &p2), 0);
	CHECK_EQ_INT(p2.kind, KEEP_PENDING_ACQUIRE);
	CHECK_EQ_STR(p2.version, "-");
	keep_buf_release(&b);
}

/* owner-watch's PREFIX: the start of a key, by the key's own rule. */
TEST(key_prefix_validity)
{
	CHECK(keep_owner_key_prefix_valid(""));
	CHECK(keep_owner_key_prefix_valid("t"));
	CHECK(keep_owner_key_prefix_valid("t/"));
	CHECK(keep_owner_key_prefix_valid("t/c/"));
	CHECK(keep_owner_key_prefix_valid("t/c/na"));
	CHECK(keep_owner_key_prefix_valid("a-b_c.d/x"));
	CHECK(!keep_owner_key_prefix_valid(NULL));
	CHECK(!keep_owner_key_prefix_valid("/"));
	CHECK(!keep_owner_key_prefix_valid("t//"));
	CHECK(!keep_owner_key_prefix_valid("t/c/n/"));
	CHECK(!keep_owner_key_prefix_valid(".t"));
	CHECK(!keep_owner_key_prefix_valid("t/.c"));
	CHECK(!keep_owner_key_prefix_valid("t c"));
	CHECK(!keep_owner_key_prefix_valid("t/\x01"));
}

int main(void)
{
	RUN(key_validity);
	RUN(key_prefix_validity);
	RUN(codec_round_trip);
	RUN(codec_refuses_malformed);
	RUN(acquire_absent_nobody_self);
	RUN(acquire_free_rule);
	RUN(readback);
	RUN(readback_unchanged_stays_unresolved);
	RUN(pending_release_ends);
	RUN(resolver);
	RUN(grant_check);
	RUN(backoff);
	RUN(hand_delete);
	RUN(state_files);
	return unit_done();
}
