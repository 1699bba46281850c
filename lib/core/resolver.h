/* keep — releases, pending releases, unresolved acquires and the drain, a
 * sans-I/O machine (ADR 0020 §1, §3, §4, §5 bounds; issues 14 and 18;
 * docs/ownership.md "owner-release").
 *
 * The same shape as the other machines (ownio.h), with up to
 * cfg.concurrency jobs in flight at once (KEEP_PENDING_CONCURRENCY, §5):
 *
 *   keep_resolver_next(r, now_mono, now_wall, &act)
 *     NONE  -> every job waits on a reply: wait for one
 *     WAIT  -> nothing is due before act.until_mono_ms (a reply may come
 *              first): wait, then call next again
 *     DONE  -> finished: keep_resolver_exit_code(), r->left
 *     else  -> perform act (on a worker of its own when several run at
 *              once), then keep_resolver_on_reply(r, act.slot, ...)
 *   keep_resolver_poll_event() after each reply: the answer lines.
 *
 * Modes:
 *   PASS     one pass (owner-release --pending)
 *   FOLLOW   a pass every write period, sooner when a backoff ends, until
 *            keep_resolver_stop (--pending --follow, the agent's resolver)
 *   DRAIN    mark the instance draining, park every hold, passes until
 *            nothing is pending or cfg.deadline_mono_ms (--all, §4)
 *   RELEASE  one hold, cfg.key: stop acting, then try its release, all
 *            within KEEP_RELEASE_TRIES_MS of the start, then leave it
 *            parked (KEY, §5); a per-actor lock still busy at that bound:
 *            nothing done, error reason=lock-busy, exit 111
 *
 * Bounds (issue 23 item 3): a deadline (the drain's, a release's) bounds
 * everything a job waits on, not only its writes: the per-actor lock
 * (LOCK's timeout_ms), every store request (REC_READ and REC_WRITE
 * timeout_ms: the store's timeout, never past the deadline); no lock is
 * taken and no request starts past it; the stop of the key's job before
 * a release (KEEP_JP_RUN) ends by it too. Without a deadline (PASS,
 * FOLLOW) the lock wait is bounded by one store timeout, and once stopped
 * no request starts.
 *
 * A pass: read the lease state (lost: every hold and entry dropped, nothing
 * written, §1); list holds/, pending/ and runs/; a job per stale hold
 * (another instance, or a lapse since), per hold of an owner-run that died
 * after starting CMD (its run lock names its generation and an owner-run
 * that no longer runs: its job is unsupervised; issue 24), or, draining,
 * per hold: park it (its pending
 * release written, then the hold removed) and release it; a job per pending
 * release whose backoff is due; a job per unresolved acquire. While the
 * lease is not valid, holds are parked and nothing is written to the store
 * (§3: retries pause). At most 32 jobs at once; after KEEP_PENDING_REFUSALS
 * store failures in a row no new job starts (§5); past the drain's deadline
 * no new job starts and every request is bounded by the time left.
 *
 * Every release write, of any job, is sent only under the actor's lock,
 * after a read of holds/ showing no hold that names the release's instance
 * and generation (one is removed first, durably), and after an fsync of
 * holds/ that followed that read: a release is never sent while its hold
 * may live (issue 18: "a hold and its pending release never coexist").
 * Then, once per job, the key's job is stopped (jobstop.h; issue 24):
 * while the key's run lock is held by a job whose generation is at most
 * the release's (or unknown), its processes get SIGTERM, then SIGKILL
 * after the lock file's kill_after_ms, and the release waits until the
 * lock is free; a job still holding it KEEP_JOBSTOP_EXIT_MS after the
 * SIGKILL, or at the job's own bound (the 1 s of RELEASE, the drain's
 * deadline), keeps the release pending, nothing sent. A job of a later
 * generation is not this release's: its record moved past the release's
 * If-Match, which can no longer apply. */
#ifndef KEEP_CORE_RESOLVER_H
#define KEEP_CORE_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "owner.h"
#include "ownio.h"
#include "timing.h"

enum keep_res_mode {
	KEEP_RES_PASS = 0,
	KEEP_RES_FOLLOW,
	KEEP_RES_DRAIN,
	KEEP_RES_RELEASE,
};

struct keep_resolver_cfg {
	enum keep_res_mode mode;
	struct keep_timing t;
	int64_t timeout_ms;	  /* each store request's bound (ms, > 0) */
	int concurrency;	  /* jobs at once, 1..KEEP_PENDING_CONCURRENCY; RELEASE: 1 */
	int64_t deadline_mono_ms; /* DRAIN: no job starts after it, and everything a job waits
				     on ends by it; RELEASE: set by the machine, its start +
				     KEEP_RELEASE_TRIES_MS (issue 23 item 3) */
	bool backoff;		  /* keep per-entry backoff across passes (FOLLOW, DRAIN) */
	char key[KEEP_OWNER_KEY_MAX + 1]; /* RELEASE: the hold's key */
};

enum keep_res_event_kind {
	KEEP_REV_RELEASED = 0, /* released key=K generation=G [reason=unresolved-acquire] */
	KEEP_REV_ENDED,	       /* ended key=K generation=G reason=.. */
	KEEP_REV_PENDING,      /* pending key=K generation=G version=V */
	KEEP_REV_DROPPED,      /* dropped key=K generation=G reason=lease-lost */
	KEEP_REV_NONE,	       /* none key=K (RELEASE: no hold) */
	KEEP_REV_ERROR,	       /* error key=K generation=G reason=state-dir: nothing sent */
	KEEP_REV_WARN,	       /* a warning for stderr: text */
	KEEP_REV_PASS,	       /* a pass ended: left entries left (DRAIN: holds too) */
};

/* "released", "ended", "pending", "dropped", "none", "error", "warn", "pass". */
const char *keep_res_event_name(enum keep_res_event_kind k);

#define KEEP_RES_TEXT_MAX 512 /* bytes of a WARN event's text */

struct keep_res_event {
	enum keep_res_event_kind kind;
	char key[KEEP_OWNER_KEY_MAX + 1];
	int64_t generation;
	char version[KEEP_VERSION_MAX]; /* PENDING */
	const char *reason;		/* static, or NULL */
	int64_t left;			/* PASS */
	char text[KEEP_RES_TEXT_MAX];	/* WARN */
};

enum keep_job_kind {
	KEEP_JOB_PARK = 0, /* a hold: park it, then release it (pass, drain, KEY) */
	KEEP_JOB_RELEASE,  /* a pending release: the same write again */
	KEEP_JOB_RESOLVE,  /* an unresolved acquire: read, then decide */
	KEEP_JOB_DROP,	   /* the lease was lost: remove a hold or an entry, write nothing */
};

/* One job's steps (its slot's phase). */
enum keep_job_phase {
	KEEP_JP_LOCK = 0,
	KEEP_JP_LEASE,	    /* RELEASE mode: before a retry, or to start */
	KEEP_JP_PEND_CHECK, /* the entry read again under the lock: it may have changed */
	KEEP_JP_HOLD_READ,
	KEEP_JP_PARK_PEND,
	KEEP_JP_PARK_HOLD,
	KEEP_JP_HOLD_REMOVE, /* a hold names the release: remove it first */
	KEEP_JP_SYNC,	     /* waiting for an fsync of holds/ after the hold read */
	KEEP_JP_RUN,	     /* the key's job stopped first (jobstop.h): no release is sent
				while a process of its job holds the run lock */
	KEEP_JP_REC_READ,
	KEEP_JP_WRITE,
	KEEP_JP_PEND_REMOVE,
	KEEP_JP_PEND_WRITE, /* RESOLVE: its release failed: a pending release */
	KEEP_JP_WAIT,	    /* RELEASE mode: between tries */
	KEEP_JP_UNLOCK,
	KEEP_JP_FREE,
};

/* How a job ended, for the pass's bounds. */
enum keep_job_end {
	KEEP_JE_DONE = 0, /* the entry (or hold) is gone: released, ended, dropped */
	KEEP_JE_STILL,	  /* kept: the record still names us (a conflict) */
	KEEP_JE_FAILED,	  /* kept: the store refused or failed (a refusal, §5) */
	KEEP_JE_LOCAL,	  /* kept: the state directory failed (nothing sent) */
	KEEP_JE_SKIPPED,  /* kept: not tried (paused, deadline, refusals, stop) */
};

struct keep_res_job {
	enum keep_job_kind kind;
	struct keep_hold hold; /* PARK: the hold; DROP of a hold */
	struct keep_pending p; /* the entry (PARK: once written) */
	bool drop_hold;	       /* DROP: a hold (else an entry) */
	bool resolved;	       /* RESOLVE: the read decided RELEASE (p.version is the read's) */
	bool orphan;	       /* PARK of a live hold whose owner-run died (its run lock says so) */
	char rel_version[KEEP_VERSION_MAX]; /* RESOLVE: the release's If-Match */
};

struct keep_res_slot {
	bool used;
	enum keep_job_phase phase;
	bool inflight;
	bool locked;
	bool sync_covered; /* SYNC: covered by the fsync in flight */
	struct keep_res_job job;
	enum keep_job_end end;
	enum keep_job_end after;    /* how the job ends once PEND_REMOVE is done */
	int64_t wait_until_mono_ms; /* WAIT; RUN: the job stop's next step */
	int tries;
	struct keep_jobstop js; /* RUN */
	bool run_done;		/* RUN passed: no job of the key holds its run lock */
};

/* Backoff of one entry, kept across passes. */
struct keep_res_backoff {
	struct keep_pending id;
	int attempts;
	int64_t next_mono_ms;
};

enum keep_res_phase {
	KEEP_RP_START = 0, /* DRAIN: the lease, then the drain mark; others: a pass */
	KEEP_RP_MARK,	   /* DRAIN: writing the drain mark */
	KEEP_RP_LEASE,	   /* a pass: the lease state */
	KEEP_RP_LIST,	   /* a pass: the listing */
	KEEP_RP_RUN,	   /* a pass: jobs */
	KEEP_RP_IDLE,	   /* between passes (FOLLOW, DRAIN) */
	KEEP_RP_DONE,
};

#define KEEP_RES_SLOTS KEEP_PENDING_CONCURRENCY
#define KEEP_RES_PASS_SLOT KEEP_RES_SLOTS /* the slot of the pass's own actions */

struct keep_resolver {
	struct keep_resolver_cfg cfg;
	enum keep_res_phase phase;
	bool pass_inflight; /* a pass-slot action is out (lease, list, mark, sync) */
	bool stop;	    /* keep_resolver_stop: no new job or pass */
	struct keep_lease_view lease;
	bool paused; /* this pass: the lease is not valid (nothing written) */
	bool marked; /* DRAIN: the drain mark was written */
	int64_t passes;

	struct keep_res_job *queue; /* this pass's jobs, in order */
	size_t nqueue, aqueue, next_job;
	int64_t left;	     /* entries left after the last pass (-1: unknown) */
	int64_t pass_left;   /* this pass: counted as jobs end */
	int refusals;	     /* store failures in a row (§5) */
	int writes_inflight; /* release writes handed out, reply pending */
	bool refused_stop;   /* this pass stopped on the refusal bound */
	int64_t next_pass_mono_ms;

	struct keep_res_slot slot[KEEP_RES_SLOTS];
	bool sync_inflight;

	struct keep_res_backoff *bo;
	size_t nbo, abo;

	/* the last listing, for gauges */
	size_t last_holds, last_releases, last_acquires;
	bool list_failed;

	/* RELEASE mode's answer */
	int exit_code;

	struct keep_res_event *ev;
	size_t ev_head, nev, aev;
	bool oom; /* an allocation failed: the pass ended early (retried later) */
};

/* Set up a machine for cfg (copied; concurrency clamped to 1..32). The
 * machine owns memory: release it with keep_resolver_release. */
void keep_resolver_init(struct keep_resolver *r, const struct keep_resolver_cfg *cfg);
void keep_resolver_release(struct keep_resolver *r);

/* What to do now (file comment). now_wall_ms stamps parked entries. */
void keep_resolver_next(struct keep_resolver *r, int64_t now_mono_ms, int64_t now_wall_ms,
			struct keep_oact *act);

/* The reply to the action handed out for slot (act.slot). rp is borrowed
 * (LIST arrays are copied as needed). */
void keep_resolver_on_reply(struct keep_resolver *r, int slot, int64_t now_mono_ms,
			    int64_t now_wall_ms, const struct keep_oreply *rp);

/* Stop: no new pass or job; DONE once the jobs in flight end. A DRAIN
 * ignores it: the drain is what a clean stop waits for, and its deadline
 * bounds it (ADR 0020 §4). */
void keep_resolver_stop(struct keep_resolver *r);

/* Pop the oldest event into *ev. true if there was one. */
bool keep_resolver_poll_event(struct keep_resolver *r, struct keep_res_event *ev);

/* The exit code once DONE (exitcode.h): PASS and DRAIN 0 when nothing is
 * left, else 20; FOLLOW 0; RELEASE 0 released, ended or dropped; 1 no
 * hold; 20 parked; 111 the state directory failed (nothing sent). */
int keep_resolver_exit_code(const struct keep_resolver *r);

/* How many jobs run at once (ADR 0020 §5 bounds; §4): cfg->concurrency
 * clamped to 1..KEEP_PENDING_CONCURRENCY (32 pending entries at once); 1
 * in RELEASE mode, whatever cfg says: a release of one key runs alone, its
 * steps in order. keep_resolver_init stores it in r->cfg.concurrency. cfg
 * is borrowed. No errors. */
int keep_resolver_jobs_at_once(const struct keep_resolver_cfg *cfg);

/* Does job j take its actor's lock first (ADR 0020 §3 "One lock per
 * actor": the lock, keep_holds_lock in lib/local/holds.c, orders this
 * node's acquisitions and resolutions of a key; the acquisition machine
 * takes it first too)? Every job does, but the drop of a pending entry
 * after the lease was lost (KEEP_JOB_DROP of an entry: one file removed,
 * nothing read, nothing sent, §1). j is borrowed. No errors. */
bool keep_resolver_job_takes_lock(const struct keep_res_job *j);

/* Is a release's hold possibly alive (ADR 0020 §3; issue 18: a release is
 * never sent while its hold may live; a hold and its pending release never
 * coexist)? On the read of holds/ under the actor's lock: hold_rc and h
 * (borrowed) as the HOLD_READ reply gives them (0: h read; > 0: no hold;
 * < 0: unreadable), p (borrowed) the pending release. true: a hold names
 * the release's instance and generation, or may (unreadable): it must be
 * removed, durably, before the release is sent; false: the release waits
 * only for an fsync of holds/ after that read. No errors. */
bool keep_resolver_release_hold_may_live(int hold_rc, const struct keep_hold *h,
					 const struct keep_pending *p);

/* The release write of job j into act (ADR 0020 §3 "Release"): the
 * record nobody at the hold's generation, If-Match the acquire's version
 * (the pending entry's, p.version, kept from the acquisition: never a
 * later version read since, which keep_owner_pending_on_read never
 * adopts); an unresolved acquire whose read showed it landed
 * (KEEP_JOB_RESOLVE) is released If-Match that read's version
 * (rel_version). Sets act->kind, rec, cond and if_match only; the caller
 * sets the slot, key and timeout. j is borrowed, act the caller's. Sent
 * only after the hold stopped acting (parked, removed durably) and the
 * key's job stopped (KEEP_JP_RUN). */
void keep_resolver_release_write(const struct keep_res_job *j, struct keep_oact *act);

/* Do the store's failures stop a pass (ADR 0020 §5 bounds)? in_a_row: the
 * store failures in a row (a success, a conflict or a not-found resets
 * it; the resolver adds the release writes in flight before it sends one
 * more). true at KEEP_PENDING_REFUSALS (32): no new write is sent and no
 * new entry starts until the next pass (a refusing bucket gets no burst).
 * No errors. */
bool keep_resolver_refusals_stop(int in_a_row);

/* Do retries pause on this lease state (ADR 0020 §3 "retries ... pause
 * while this node's lease is invalid")? l (borrowed) as a pass read it:
 * true while the lease is not valid (code != 0) but not lost: holds are
 * parked, no pending entry is retried, nothing is written to the store.
 * A lost lease does not pause: its pass drops everything, writing nothing
 * (§1). No errors. */
bool keep_resolver_retries_paused(const struct keep_lease_view *l);

/* Is the state directory drained (ADR 0020 §4; issue 23): left, the
 * entries (and, draining, holds) a pass left, -1 when unknown. true only
 * at 0: a drain (and a pass) reports drained, exit 0, only with nothing
 * pending; a drain ends then, or at its deadline, exit 20. No errors. */
bool keep_resolver_drained(int64_t left);

/* The deadline that bounds everything a job waits on (boot-clock ms; 0:
 * none), ADR 0020 §4, §5 bounds, issue 23 item 3: the drain's
 * (cfg.deadline_mono_ms, keep_resolver_drain_deadline_ms), or a
 * foreground release's (keep_resolver_release_deadline_ms, set when it
 * starts); none for PASS and FOLLOW. It bounds the per-actor lock's wait,
 * every store request (a read after a conflict too), each no longer than
 * the store's timeout, and the stop of the key's job (KEEP_JP_RUN, issue
 * 24), not only the writes: nothing starts past it. r is borrowed. */
int64_t keep_resolver_wait_deadline_ms(const struct keep_resolver *r);

/* A foreground release's deadline (owner-release KEY; ADR 0020 §5 bounds,
 * issue 23 item 3): start_mono_ms + KEEP_RELEASE_TRIES_MS (1 s; boot-clock
 * ms, saturating: keep_add_sat_ms). Everything the release waits on (the
 * lock included) ends by it; then the hold is parked (exit 20), and a lock
 * still busy at it means nothing was done (error reason=lock-busy, exit
 * 111). No errors. */
int64_t keep_resolver_release_deadline_ms(int64_t start_mono_ms);

/* The drain's deadline, cfg.deadline_mono_ms for DRAIN (owner-release
 * --all; ADR 0020 §4, issue 23 item 3): now_mono_ms + wait_ms (boot-clock
 * ms, saturating: keep_add_sat_ms); wait_ms < 0 (no --wait-ms) means
 * ttl + grace (keep_timing_takeover_ms: as long as a peer would wait
 * before it takes the node's records over). t is borrowed. */
int64_t keep_resolver_drain_deadline_ms(const struct keep_timing *t, int64_t now_mono_ms,
					int64_t wait_ms);

#endif
