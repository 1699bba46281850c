/* Unit tests: the ownership rules of ADR 0020 §1, §3, §4, §5 as one function
 * each (lib/core/owner.c, lib/core/acquire.c, lib/core/resolver.c; the map
 * of docs/design.md "Where each rule of ADR 0020 lives"). */
#include <stdint.h>
#include <string.h>

#include "../../lib/base/exitcode.h"
#include "../../lib/core/acquire.h"
#include "../../lib/core/owner.h"
#include "../../lib/core/resolver.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define IB "fedcba9876543210fedcba9876543210"

static void lease(struct keep_lease_view *l, int code, const char *inst, int64_t lapses)
{
	memset(l, 0, sizeof(*l));
	l->code = code;
	snprintf(l->instance, sizeof(l->instance), "%s", inst);
	l->lapses = lapses;
}

/* §1: a lapse ends every hold (the hold's epoch against the lease's). */
TEST(hold_lapsed)
{
	struct keep_grant_input in;

	CHECK(!keep_owner_hold_lapsed(2, 2));
	CHECK(keep_owner_hold_lapsed(1, 2));
	CHECK(keep_owner_hold_lapsed(0, 1));
	/* the grant check answers LAPSED on it, before a pending release */
	memset(&in, 0, sizeof(in));
	in.have_hold = true;
	in.hold_instance = IA;
	in.lease_instance = IA;
	in.hold_generation = 4;
	in.hold_epoch = 1;
	in.lease_lapses = 2;
	in.release_pending = true;
	in.lease_valid = true;
	CHECK_EQ_INT(keep_owner_check(&in, 4), KEEP_GRANT_LAPSED);
	in.hold_epoch = 2;
	CHECK_EQ_INT(keep_owner_check(&in, 4), KEEP_GRANT_RELEASING);
	CHECK(keep_owner_hold_stale(IA, 1, IA, 2));
	CHECK(!keep_owner_hold_stale(IA, 2, IA, 2));
}

/* §3, issue 13: acquire only while the lease is valid, at the start, right
 * before the write and when the reply came. */
TEST(acquire_lease_refusal)
{
	struct keep_lease_view b, n;

	/* the first look: valid with an instance */
	lease(&n, KEEP_EXIT_OK, IA, 3);
	CHECK_EQ_INT(keep_acquire_lease_refusal(NULL, &n), KEEP_EXIT_OK);
	lease(&n, KEEP_EXIT_RAN_OUT, IA, 3);
	CHECK_EQ_INT(keep_acquire_lease_refusal(NULL, &n), KEEP_EXIT_RAN_OUT);
	lease(&n, KEEP_EXIT_OK, "", 0); /* valid, yet no instance: not live */
	CHECK_EQ_INT(keep_acquire_lease_refusal(NULL, &n), KEEP_EXIT_NOT_LIVE);
	lease(&n, KEEP_EXIT_NOT_LIVE, "", 0);
	CHECK_EQ_INT(keep_acquire_lease_refusal(NULL, &n), KEEP_EXIT_NOT_LIVE);
	/* a later look: still valid, same instance, same epoch */
	lease(&b, KEEP_EXIT_OK, IA, 3);
	lease(&n, KEEP_EXIT_OK, IA, 3);
	CHECK_EQ_INT(keep_acquire_lease_refusal(&b, &n), KEEP_EXIT_OK);
	n.draining = true; /* the drain mark is judged apart */
	CHECK_EQ_INT(keep_acquire_lease_refusal(&b, &n), KEEP_EXIT_OK);
	lease(&n, KEEP_EXIT_OK, IA, 4); /* valid again, but lapsed since */
	CHECK_EQ_INT(keep_acquire_lease_refusal(&b, &n), KEEP_EXIT_RAN_OUT);
	lease(&n, KEEP_EXIT_OK, IB, 3); /* another instance */
	CHECK_EQ_INT(keep_acquire_lease_refusal(&b, &n), KEEP_EXIT_RAN_OUT);
	lease(&n, 12, IA, 3); /* not valid: the lease's own code */
	CHECK_EQ_INT(keep_acquire_lease_refusal(&b, &n), 12);
	lease(&n, KEEP_EXIT_RAN_OUT, IA, 4);
	CHECK_EQ_INT(keep_acquire_lease_refusal(&b, &n), KEEP_EXIT_RAN_OUT);
}

/* §3, §6: nobody, free or our own instance -> generation + 1; absent -> the
 * first generation. */
TEST(acq_generation)
{
	struct keep_owner_rec r;
	struct keep_owner_self self = {"n1", IA};
	struct keep_acq_decision d;

	keep_owner_rec_nobody(&r, 7);
	CHECK_EQ_INT(keep_owner_acq_generation(&r, 1), 8);
	CHECK_EQ_INT(keep_owner_acq_generation(&r, 40), 8); /* only absent takes the seed */
	CHECK_EQ_INT(keep_owner_acq_generation(NULL, 42), 42);
	CHECK_EQ_INT(keep_owner_acq_generation(NULL, 1), 1);
	CHECK_EQ_INT(keep_owner_acq_generation(NULL, 0), 1);
	CHECK_EQ_INT(keep_owner_acq_generation(NULL, -5), 1);
	/* what the acquisition writes */
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_OK, "\"v7\"", &r, 0, 1, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	CHECK_EQ_INT(d.next.generation, 8);
	keep_owner_acq_on_record(&self, NULL, KEEP_STORE_NOT_FOUND, "", NULL, 0, 5, &d);
	CHECK_EQ_INT(d.verdict, KEEP_ACQ_WRITE);
	CHECK_EQ_INT(d.next.generation, 5);
}

/* §3, issue 23: lost only when replaced since the read the write was
 * conditioned on. */
TEST(readback_replaced)
{
	struct keep_owner_self self = {"n1", IA};
	struct keep_owner_rec r;
	struct keep_rb_decision d;

	CHECK(!keep_owner_readback_replaced("\"v1\"", "\"v1\""));
	CHECK(keep_owner_readback_replaced("\"v1\"", "\"v2\""));
	CHECK(keep_owner_readback_replaced("", "\"v1\""));   /* present after If-None-Match */
	CHECK(keep_owner_readback_replaced(NULL, "\"v1\"")); /* the same */
	CHECK(keep_owner_readback_replaced("\"v1\"", NULL));
	/* another holder: replaced -> the free rule on it; unchanged -> unresolved */
	keep_owner_rec_held(&r, "n2", IB, 4);
	keep_owner_readback(&self, 5, "\"v1\"", KEEP_STORE_OK, "\"v2\"", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_READ_NODE);
	keep_owner_readback(&self, 5, "\"v1\"", KEEP_STORE_OK, "\"v1\"", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_RB_UNRESOLVED);
}

/* §3, issue 14: the resolver reads an unresolved acquire until it can
 * decide; never releases under a hold (the resolver's hold read feeds
 * has_hold, before any read of the record). */
TEST(resolve_never_under_a_hold)
{
	struct keep_owner_rec r;
	struct keep_pend_decision d;

	keep_owner_rec_held(&r, "n1", IA, 5);
	/* landed, no hold here: released If-Match the read's version */
	keep_owner_resolve_on_read(IA, 5, "\"v1\"", true, false, KEEP_STORE_OK, "\"v2\"", &r, 0,
				   &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_RELEASE);
	CHECK_EQ_STR(d.version, "\"v2\"");
	/* the same, with a hold: ends, nothing released */
	keep_owner_resolve_on_read(IA, 5, "\"v1\"", true, true, KEEP_STORE_OK, "\"v2\"", &r, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	CHECK_EQ_STR(d.reason, "hold-exists");
	/* as the resolver asks it, before reading */
	keep_owner_resolve_on_read(IA, 5, "", false, true, KEEP_STORE_OK, NULL, NULL, 0, &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
	CHECK_EQ_STR(d.reason, "hold-exists");
	/* unchanged while current: read again later */
	keep_owner_rec_held(&r, "n2", IB, 4);
	keep_owner_resolve_on_read(IA, 5, "\"v1\"", true, false, KEEP_STORE_OK, "\"v1\"", &r, 0,
				   &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_KEEP);
	keep_owner_resolve_on_read(IA, 5, "\"v1\"", false, false, KEEP_STORE_OK, "\"v1\"", &r, 0,
				   &d);
	CHECK_EQ_INT(d.verdict, KEEP_PEND_END);
}

/* §5 bounds: 32 entries at once; a release of one key runs alone. */
TEST(jobs_at_once)
{
	struct keep_resolver_cfg c;
	struct keep_resolver r;

	memset(&c, 0, sizeof(c));
	c.mode = KEEP_RES_PASS;
	c.concurrency = 7;
	CHECK_EQ_INT(keep_resolver_jobs_at_once(&c), 7);
	c.concurrency = 1000;
	CHECK_EQ_INT(keep_resolver_jobs_at_once(&c), KEEP_PENDING_CONCURRENCY);
	CHECK_EQ_INT(KEEP_PENDING_CONCURRENCY, 32);
	c.concurrency = 0;
	CHECK_EQ_INT(keep_resolver_jobs_at_once(&c), 1);
	c.concurrency = -3;
	CHECK_EQ_INT(keep_resolver_jobs_at_once(&c), 1);
	c.mode = KEEP_RES_RELEASE;
	c.concurrency = 32;
	CHECK_EQ_INT(keep_resolver_jobs_at_once(&c), 1);
	c.mode = KEEP_RES_DRAIN;
	CHECK_EQ_INT(keep_resolver_jobs_at_once(&c), 32);
	keep_resolver_init(&r, &c);
	CHECK_EQ_INT(r.cfg.concurrency, 32);
	keep_resolver_release(&r);
}

/* §3: one lock per actor; only dropping an entry after a lost lease skips it. */
TEST(job_takes_lock)
{
	struct keep_res_job j;

	memset(&j, 0, sizeof(j));
	j.kind = KEEP_JOB_PARK;
	CHECK(keep_resolver_job_takes_lock(&j));
	j.kind = KEEP_JOB_RELEASE;
	CHECK(keep_resolver_job_takes_lock(&j));
	j.kind = KEEP_JOB_RESOLVE;
	CHECK(keep_resolver_job_takes_lock(&j));
	j.kind = KEEP_JOB_DROP;
	j.drop_hold = true;
	CHECK(keep_resolver_job_takes_lock(&j));
	j.drop_hold = false;
	CHECK(!keep_resolver_job_takes_lock(&j));
}

/* §3, issue 18: a release is never sent while its hold may live. */
TEST(release_hold_may_live)
{
	struct keep_hold h;
	struct keep_pending p;

	memset(&h, 0, sizeof(h));
	memset(&p, 0, sizeof(p));
	snprintf(h.instance, sizeof(h.instance), IA);
	snprintf(p.instance, sizeof(p.instance), IA);
	h.generation = 3;
	p.generation = 3;
	CHECK(keep_resolver_release_hold_may_live(0, &h, &p));
	CHECK(keep_resolver_release_hold_may_live(-1, &h, &p)); /* unreadable */
	CHECK(!keep_resolver_release_hold_may_live(1, &h, &p)); /* no hold */
	h.generation = 4;					/* a later acquisition's */
	CHECK(!keep_resolver_release_hold_may_live(0, &h, &p));
	h.generation = 3;
	snprintf(h.instance, sizeof(h.instance), IB);
	CHECK(!keep_resolver_release_hold_may_live(0, &h, &p));
}

/* §3: the same write If-Match the acquire's version. */
TEST(release_write)
{
	struct keep_res_job j;
	struct keep_oact a;

	memset(&j, 0, sizeof(j));
	memset(&a, 0, sizeof(a));
	j.kind = KEEP_JOB_RELEASE;
	j.p.generation = 6;
	snprintf(j.p.version, sizeof(j.p.version), "\"acq\"");
	snprintf(j.rel_version, sizeof(j.rel_version), "\"later\"");
	keep_resolver_release_write(&j, &a);
	CHECK_EQ_INT(a.kind, KEEP_OACT_REC_WRITE);
	CHECK_EQ_INT(a.cond, KEEP_COND_IF_MATCH);
	CHECK_EQ_STR(a.if_match, "\"acq\"");
	CHECK(!a.rec.held);
	CHECK_EQ_INT(a.rec.generation, 6);
	j.kind = KEEP_JOB_PARK;
	keep_resolver_release_write(&j, &a);
	CHECK_EQ_STR(a.if_match, "\"acq\"");
	/* an unresolved acquire that landed: the read's version */
	j.kind = KEEP_JOB_RESOLVE;
	keep_resolver_release_write(&j, &a);
	CHECK_EQ_STR(a.if_match, "\"later\"");
	CHECK_EQ_INT(a.rec.generation, 6);
}

/* §5 bounds: 32 refusals in a row stop a pass. */
TEST(refusals_stop)
{
	CHECK(!keep_resolver_refusals_stop(0));
	CHECK(!keep_resolver_refusals_stop(KEEP_PENDING_REFUSALS - 1));
	CHECK(keep_resolver_refusals_stop(KEEP_PENDING_REFUSALS));
	CHECK(keep_resolver_refusals_stop(KEEP_PENDING_REFUSALS + 5));
	CHECK_EQ_INT(KEEP_PENDING_REFUSALS, 32);
}

/* §3: retries pause while the lease is invalid (a lost lease drops instead). */
TEST(retries_paused)
{
	struct keep_lease_view l;

	lease(&l, KEEP_EXIT_OK, IA, 0);
	CHECK(!keep_resolver_retries_paused(&l));
	lease(&l, KEEP_EXIT_RAN_OUT, IA, 1);
	CHECK(keep_resolver_retries_paused(&l));
	lease(&l, KEEP_EXIT_NOT_LIVE, "", 0);
	CHECK(keep_resolver_retries_paused(&l));
	lease(&l, 12, IA, 1);
	l.lost = true;
	CHECK(!keep_resolver_retries_paused(&l));
}

/* §4: drained only with nothing pending. */
TEST(drained)
{
	struct keep_resolver_cfg c;
	struct keep_resolver r;

	CHECK(keep_resolver_drained(0));
	CHECK(!keep_resolver_drained(1));
	CHECK(!keep_resolver_drained(-1)); /* unknown */
	memset(&c, 0, sizeof(c));
	c.mode = KEEP_RES_DRAIN;
	keep_resolver_init(&r, &c);
	r.left = 0;
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_OK);
	r.left = 2;
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	r.left = -1;
	CHECK_EQ_INT(keep_resolver_exit_code(&r), KEEP_EXIT_UNKNOWN);
	keep_resolver_release(&r);
}

/* §4, §5, issue 23: the drain's or a release's deadline bounds every wait;
 * none for a pass or a follow. */
TEST(wait_deadline)
{
	struct keep_resolver_cfg c;
	struct keep_resolver r;

	memset(&c, 0, sizeof(c));
	c.deadline_mono_ms = 5000;
	c.mode = KEEP_RES_DRAIN;
	keep_resolver_init(&r, &c);
	CHECK_EQ_INT(keep_resolver_wait_deadline_ms(&r), 5000);
	keep_resolver_release(&r);
	c.mode = KEEP_RES_RELEASE;
	keep_resolver_init(&r, &c);
	CHECK_EQ_INT(keep_resolver_wait_deadline_ms(&r), 5000);
	keep_resolver_release(&r);
	c.mode = KEEP_RES_PASS;
	keep_resolver_init(&r, &c);
	CHECK_EQ_INT(keep_resolver_wait_deadline_ms(&r), 0);
	keep_resolver_release(&r);
	c.mode = KEEP_RES_FOLLOW;
	keep_resolver_init(&r, &c);
	CHECK_EQ_INT(keep_resolver_wait_deadline_ms(&r), 0);
	keep_resolver_release(&r);
}

/* §5: a foreground release's 1 s from its start. */
TEST(release_deadline)
{
	CHECK_EQ_INT(KEEP_RELEASE_TRIES_MS, 1000);
	CHECK_EQ_INT(keep_resolver_release_deadline_ms(1000), 2000);
	CHECK_EQ_INT(keep_resolver_release_deadline_ms(0), 1000);
	CHECK_EQ_INT(keep_resolver_release_deadline_ms(INT64_MAX - 10), INT64_MAX);
}

int main(void)
{
	RUN(hold_lapsed);
	RUN(acquire_lease_refusal);
	RUN(acq_generation);
	RUN(readback_replaced);
	RUN(resolve_never_under_a_hold);
	RUN(jobs_at_once);
	RUN(job_takes_lock);
	RUN(release_hold_may_live);
	RUN(release_write);
	RUN(refusals_stop);
	RUN(retries_paused);
	RUN(drained);
	RUN(wait_deadline);
	RUN(release_deadline);
	return unit_done();
}
