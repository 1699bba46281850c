/* keep-sim — the deterministic simulator of node leases and ownership
 * records (ADR 0020, Verification item 2; docs/testing.md "Simulator").
 *
 * One run is one seed: a cluster of nodes driving the real node lease
 * machine (lib/core/lease.c), fence decisions (lib/core/fence.c), the
 * listing rule (lib/core/listing.c) and the ownership machines
 * (lib/core/acquire.c, lib/core/resolver.c) against a simulated
 * linearizable bucket and simulated state directories, under a scheduler
 * that delays, reorders, applies late and loses requests, crashes, pauses,
 * cuts off and twins processes, fences nodes, fails state directories and
 * deletes records and node objects by hand. Every step is checked against the true simulated time.
 * Everything comes from the seed: a run is reproducible bit for bit. */
#ifndef KEEP_SIM_H
#define KEEP_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Deliberately broken models; each must be caught by an invariant. */
enum sim_broken {
	SIM_REAL = 0,
	SIM_B_UNCOND_FENCE,	 /* fences (peer and operator) written without a condition */
	SIM_B_REUSE_GEN,	 /* a re-acquire writes the record's generation, not owner.c's */
	SIM_B_ADOPT_ANY,	 /* a conflict re-read adopts a live object of any instance */
	SIM_B_VALIDITY_REPLY,	 /* validity counted from the reply, not the send */
	SIM_B_NO_ACTOR_LOCK,	 /* the resolver and acquisitions ignore the per-actor lock */
	SIM_B_TRUST_PRE_LAPSE,	 /* holds from before a lapse trusted after the recovery write */
	SIM_B_NO_START_WAIT,	 /* the start check does not wait ttl + grace */
	SIM_B_GIVE_UP_EARLY,	 /* the resolver gives an unresolved acquire up after 2 x the
				  * store timeout (the rule before issue 14) */
	SIM_B_DRAIN_NO_DEADLINE, /* the drain never looks at its deadline */
	SIM_B_SEED_NO_MARKER,	 /* a first generation seeded without leases/ */
	SIM_B_RELEASE_WITH_HOLD, /* a hold removal that failed is taken as done, and its
				  * release sent (issue 18 item 1) */
	SIM_B_GRANT_IGNORES_PENDING, /* owner-check does not look at pending releases */
	SIM_B_OLD_STATEDIR,	     /* the state-dir rules before issue 18: a hold renamed
				      * into place taken as not written, the regrant and a
				      * pending release's retry blind to each other, owner-check
				      * blind to pending releases (item 2) */
	SIM_B_FENCE_NO_REWATCH,	     /* lease-fence decides on its lease's validity alone
				      * (the legacy decision, before issue 18 item 3): a stale
				      * line from before a lapse of the fencer's own fences */
	SIM_B_JUDGE_NO_OFFSET,	     /* other nodes' freedom judged on the raw wall clock: no
				      * judging offset after a step, no unnoticed step */
	SIM_B_IGNORE_STEPS,	     /* the lease machine never notices a wall-clock step
				      * (no lapse, no judging offset) */
	SIM_B_FENCE_JUDGE_DATE,	     /* fences dated on the judging clock, not the wall clock
				      * (issue 23 item 1: a fence the operator creates over a
				      * deleted nodes/<id>, under a judging offset) */
	SIM_B_RB_IGNORES_VERSION,    /* an acquisition's read-back takes an unchanged record
				      * for a replaced one (issue 23 item 2) */
	SIM_B_COMMIT_UNCOND,	     /* a fenced commit's PUT sent without its condition */
	SIM_B_FENCE_META_ONLY,	     /* the fence kept in user metadata only: the version
				      * token (S3's, a hash of the body) covers the data alone */
	SIM_B_RELEASE_IGNORES_JOB,   /* a release does not wait for the key's job: its probe
				      * of the run lock answers free (issue 24) */
	SIM_B_LEASE_IGNORES_JOBS,    /* the lease's released and a new instance's first write
				      * do not wait for the node's jobs: its probe of the run
				      * locks answers free (issue 24) */
	SIM_B_FENCE_READBACK_LIVE,   /* the read-back after an ambiguous fence write takes
				      * an unchanged live object (the fence's instance and
				      * written_at) for the fence: reported fenced while the
				      * node still runs */
	SIM_B_ADOPT_STALE,	     /* a conflict re-read served by a stale replica (our own
				      * live write, not newer than the last one acknowledged)
				      * is adopted and written over at once (issue 28) */
	SIM_B_COUNT,
};

struct sim_result {
	uint64_t acquisitions; /* holds registered */
	uint64_t fences;       /* fences that landed (peers and operator) */
	uint64_t lost;	       /* processes whose node lease ended lost */
	uint64_t events;       /* scheduler steps */
	uint64_t commits;      /* fenced-object writes that landed (commits and claims) */
	bool violated;	       /* an invariant failed (the run stops there) */
	int64_t at_ms;	       /* true simulated time of the violation */
	char why[512];	       /* one line: which invariant and who */
};

/* Stable names ("real", "unconditional-fence", ...). Never NULL. */
const char *sim_broken_name(enum sim_broken b);

/* Parse a broken model's name. 0, or -1 when unknown. */
int sim_broken_parse(const char *name, enum sim_broken *out);

/* Run one seed of model b. trace: NULL, or a stream for the step-by-step
 * trace (--verbose). Fills *res. Deterministic: same seed and model, same
 * result and trace. */
void sim_run(uint64_t seed, enum sim_broken b, FILE *trace, struct sim_result *res);

#endif
