/* keep — the node lease state machine, sans I/O (ADR 0020 §1, §4, §5;
 * the renewal-retry report).
 *
 * The machine never reads a clock and never calls the store. A driver
 * (lib/driver/leaserun.c for lease-write, sim/) loops:
 *
 *   keep_lease_next(sm, now_mono, now_wall, &act)     what to do now
 *     WAIT  -> sleep until act.until_mono_ms (or a signal), loop
 *     READ  -> versioned GET nodes/<id>, then keep_lease_on_read()
 *     WRITE -> encode act.obj, PUT nodes/<id> with act.cond/act.if_match,
 *              bounded by act.timeout_ms, then keep_lease_on_write()
 *     DONE  -> exit with keep_lease_exit_code()
 *     RUNS_PROBE, RUNS_SIGNAL, WAIT_GO -> see keep_lease_guard_runs,
 *              keep_lease_hold_first
 *   the state file written after every step, before the action is
 *   performed (keep_lease_state_project, keep_lease_on_state_write)
 *   keep_lease_poll_event() after each step, to print and persist.
 *
 * Times: *_mono_ms are the node's steady clock, CLOCK_BOOTTIME in cmd/
 * (lib/platform/clock.h: it never steps, and it counts the time the host was
 * suspended, so a deadline on it is a deadline in real time); any clock
 * with those two properties in sim/. (The names predate the switch from
 * CLOCK_MONOTONIC, which stops in a suspend: issue 13.) *_wall_ms are the
 * wall clock (written_at is the sender's wall clock at send, compared
 * with other nodes' clocks). A WRITE must be sent right after
 * keep_lease_next returned it: its written_at and its send time are the
 * now passed to that call.
 *
 * Validity is written_at + ttl - safety of the last write the store
 * acknowledged, kept as send_mono + ttl - safety (§1). Retries after a
 * failed attempt are scheduled against the validity left, never a whole
 * period later (renewal-retry report).
 *
 * Clock steps (docs/lease.md "Clocks"): every call that carries both
 * clocks (keep_lease_next, keep_lease_on_read, keep_lease_clocks) compares
 * the wall clock's progress since the previous such call with the steady
 * clock's. A difference beyond keep_timing_clock_step_ms is a step: event
 * CLOCK_STEP (step_ms, signed); a live lease lapses at once as on a
 * run-out (RAN_OUT, lapses + 1: every hold ends); no write sent before
 * the step was noticed makes the lease valid (peers judge it by a
 * written_at from the wall clock as it was); the next write goes at once
 * and its acknowledgement makes the lease valid again (RECOVERED). During
 * the start check a step cancels the shortcut (the full wait, on the
 * steady clock, still holds). A simulator drives a step by feeding a wall
 * clock that jumps against the steady one, and a suspend by advancing
 * both while the process runs nothing.
 *
 * The written_at floor (docs/lease.md "A wall clock behind the last
 * write"): every live written_at is above the highest written_at the
 * machine read on nodes/<id> (any instance, so across processes too). When
 * the start check is over and the wall clock is more than
 * keep_timing_clock_step_ms behind that floor, the check goes on reading
 * (event CLOCK_BEHIND, once) until the wall clock passes it; more than
 * ttl + grace behind, it gives up: STOPPED, reason CLOCK_BEHIND (exit
 * KEEP_EXIT_TEMP), an event LOST with that reason, nothing written. */
#ifndef KEEP_CORE_LEASE_H
#define KEEP_CORE_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "jobstop.h"
#include "timing.h"

enum keep_lease_phase {
	KEEP_LEASE_CHECK = 0, /* start check: reading, waiting ttl + grace */
	KEEP_LEASE_FIRST,     /* first write (If-None-Match: * or If-Match last read) */
	KEEP_LEASE_LIVE,      /* valid: renewing */
	KEEP_LEASE_RAN_OUT,   /* not valid, not lost: still writing If-Match (§1) */
	KEEP_LEASE_STOPPING,  /* clean stop: invalid locally, writing released (§4) */
	KEEP_LEASE_STOPPED,   /* terminal: stopped (released landed, or never went live) */
	KEEP_LEASE_LOST,      /* terminal: lost, reason set */
};

enum keep_lease_reason {
	KEEP_REASON_NONE = 0,
	KEEP_REASON_FENCED,	  /* the object shows fenced */
	KEEP_REASON_REPLACED,	  /* another instance is live on it (twin) */
	KEEP_REASON_RELEASED,	  /* the object shows released, not by our stop */
	KEEP_REASON_REMOVED,	  /* the object is absent */
	KEEP_REASON_BAD_OBJECT,	  /* the object is not ours / malformed: never overwritten */
	KEEP_REASON_OLD_RUNNING,  /* an old-format heartbeat under our id keeps changing */
	KEEP_REASON_UNCONFIRMED,  /* clean stop: released not confirmed within its bound */
	KEEP_REASON_CLOCK_BEHIND, /* start check: the wall clock is more than ttl + grace
				     behind the last written_at of nodes/<id>: not started */
	KEEP_REASON_JOB_RUNNING,  /* a process of a job held a run lock of the node past its
				     SIGKILL: released (or the first write) not written */
};

enum keep_lease_act_kind {
	KEEP_LACT_WAIT = 0,
	KEEP_LACT_READ,
	KEEP_LACT_WRITE,
	KEEP_LACT_DONE,
	KEEP_LACT_RUNS_PROBE,  /* are run locks of the node held by jobs (lib/local/runlock.h
				  keep_runs_probe)? then keep_lease_on_runs_probe() */
	KEEP_LACT_RUNS_SIGNAL, /* send act.sig to every process of those jobs
				  (keep_run_signal), then keep_lease_on_runs_signal() */
	KEEP_LACT_WAIT_GO,     /* keep_lease_hold_first: wait for the supervisor's `go`
				  until act.until_mono_ms, then keep_lease_go() if it came */
};

struct keep_lease_action {
	enum keep_lease_act_kind kind;
	enum keep_jobstop_sig sig;	 /* RUNS_SIGNAL */
	int64_t until_mono_ms;		 /* WAIT: call keep_lease_next again at/after this */
	enum keep_cond cond;		 /* WRITE: IF_NONE_MATCH or IF_MATCH */
	char if_match[KEEP_VERSION_MAX]; /* WRITE with IF_MATCH: the version */
	struct keep_node_obj obj;	 /* WRITE: the object to encode and send */
	int64_t timeout_ms;		 /* READ/WRITE: bound of this attempt (ms) */
};

enum keep_lease_event_kind {
	KEEP_LEV_CHECK_START = 0, /* start check began (wait_ms: the wait) */
	KEEP_LEV_CHECK_READ,	  /* a start-check read (state/written_at of what it saw) */
	KEEP_LEV_CHECK_SHORTCUT,  /* a fence/release of the first-read instance ended the wait */
	KEEP_LEV_LIVE,		  /* first write acknowledged: valid */
	KEEP_LEV_RENEWED,	  /* a renewal acknowledged */
	KEEP_LEV_ADOPTED,	  /* a conflict/lost reply proved to be our own write: adopted */
	KEEP_LEV_WRITE_FAILED,	  /* an attempt failed (outcome); a retry is scheduled */
	KEEP_LEV_READ_FAILED,	  /* a re-read after a failed write failed; retried */
	KEEP_LEV_RAN_OUT,	  /* validity ran out: not lost, holds must be dropped */
	KEEP_LEV_RECOVERED,	  /* a write succeeded after running out: valid again */
	KEEP_LEV_BACK_TO_CHECK,	  /* the first write failed: back to the start check */
	KEEP_LEV_STOPPING,	  /* clean stop began: locally invalid from now */
	KEEP_LEV_RELEASED,	  /* released written: stopped */
	KEEP_LEV_STOPPED,	  /* stopped before the lease was ever live: nothing to release */
	KEEP_LEV_LOST,		  /* lost (reason) */
	KEEP_LEV_CLOCK_STEP,	  /* the wall clock stepped against the steady clock (step_ms) */
	KEEP_LEV_CLOCK_BEHIND,	  /* start check: the wall clock is wait_ms behind the last
				     written_at of nodes/<id> (written_at_ms): waiting */
	KEEP_LEV_JOBS_SIGNALLED,  /* before the first write or released: sig sent to npids
				     processes of jobs holding run locks of the node (pid) */
	KEEP_LEV_READ_STALE,	  /* a re-read showed this instance live with a written_at older
				     than the last write known landed (written_at_ms): a stale
				     replica or cache proves nothing; re-read after wait_ms */
};

struct keep_lease_event {
	enum keep_lease_event_kind kind;
	enum keep_lease_reason reason; /* LOST */
	enum keep_outcome outcome;     /* WRITE_FAILED, CHECK_READ */
	int64_t written_at_ms;	     /* LIVE/RENEWED/ADOPTED/RECOVERED/RELEASED; CHECK_READ: seen */
	int64_t valid_until_mono_ms; /* LIVE/RENEWED/ADOPTED/RECOVERED */
	int64_t wait_ms; /* CHECK_START: the wait; WRITE_FAILED: until retry; CLOCK_BEHIND and
			    LOST clock-behind: how far the wall clock is behind */
	int64_t step_ms; /* CLOCK_STEP: wall progress minus steady progress (signed) */
	char state[16];	 /* CHECK_READ/LOST: what the object showed ("absent"...) */
	char other_instance[KEEP_INSTANCE_LEN + 1]; /* LOST/CHECK_READ: instance seen */
	char version[KEEP_VERSION_MAX];		    /* the version now held ("" when none) */
	enum keep_jobstop_sig sig;		    /* JOBS_SIGNALLED */
	int npids;				    /* JOBS_SIGNALLED */
	int64_t pid; /* JOBS_SIGNALLED; LOST job-running: a holder (0: none seen) */
};

#define KEEP_LEASE_EVENTS 16 /* event queue depth; the oldest are dropped past it */
#define KEEP_LEASE_SENDS 8   /* recent sends remembered for adoption */

/* The machine. Fields are readable by drivers and tests; change them only
 * through the functions below. */
struct keep_lease {
	struct keep_timing t;
	struct keep_node_obj tmpl; /* node, instance, host, pid, software of our writes */
	enum keep_lease_phase phase;
	enum keep_lease_reason reason;

	/* start check */
	int64_t check_start_mono_ms;
	int64_t check_deadline_mono_ms; /* 0 until the first successful read */
	int64_t next_read_mono_ms;
	bool have_base; /* a first successful read exists */
	bool base_absent;
	struct keep_node_obj base; /* what that first read showed */
	bool have_last;		   /* the last successful read */
	bool last_absent;
	char last_version[KEEP_VERSION_MAX];
	bool check_done; /* wait over (or shortcut): write next */

	/* the held write */
	char version[KEEP_VERSION_MAX]; /* version of the last acknowledged/adopted write */
	int64_t written_at_ms;		/* its written_at (wall, ms) */
	int64_t valid_until_mono_ms;	/* its send + ttl - safety (0: none) */
	int64_t live_since_mono_ms;	/* ack of the first write after the last lapse */
	int64_t lapses;			/* lease epoch: +1 on every run-out */
	int64_t seq;			/* seq of the last write sent */

	/* the attempt */
	bool inflight;		    /* a READ or WRITE was handed out, reply pending */
	bool readback;		    /* the next read is a re-read after a failed write */
	int64_t sent_mono_ms;	    /* send time of the inflight/last write */
	int64_t sent_written_at_ms; /* written_at of the inflight/last write */
	int64_t last_send_mono_ms;  /* send of the last write attempt (cadence) */
	int64_t next_write_mono_ms; /* when the next write is due */
	int failures;		    /* consecutive failed attempts */
	struct {
		int64_t written_at_ms, sent_mono_ms, seq;
	} sends[KEEP_LEASE_SENDS]; /* recent live sends, for adoption */
	int nsends;

	/* clean stop */
	bool stop_requested; /* stop asked while the first write's fate is open */
	int64_t stop_deadline_mono_ms;
	bool inflight_released; /* the write in flight is the clean stop's released */

	/* clocks */
	bool have_clocks;	     /* a reading of both clocks was fed */
	int64_t clocks_mono_ms;	     /* the last reading: steady clock */
	int64_t clocks_wall_ms;	     /* the last reading: wall clock */
	int64_t step_seq;	     /* seq of the last write sent before the last step was
					noticed: no write up to it makes the lease valid */
	int64_t clock_steps;	     /* steps noticed */
	int64_t step_sum_ms;	     /* signed sum of the steps noticed, carried over from
					the previous lease-write's state file (driver) */
	bool check_no_shortcut;	     /* a step during this start check: wait it out */
	int64_t floor_written_at_ms; /* the highest written_at read on nodes/<id> (any
					instance, format 3; wall ms): every live write is
					dated after it (docs/lease.md "Clocks") */
	bool floor_waiting;	     /* the start check waits for the wall clock to pass it */

	/* the jobs of the node (keep_lease_guard_runs): stopped before a write
	 * that frees its records */
	bool runs_guard;	    /* the driver performs RUNS_PROBE and RUNS_SIGNAL */
	int64_t runs_kill_after_ms; /* SIGTERM -> SIGKILL when a lock file does not say */
	bool runs_active;	    /* runs_js is running */
	bool runs_first_ok;	    /* no job before the first write of this instance */
	bool runs_stop_ok;	    /* no job before released */
	struct keep_jobstop runs_js;

	/* the driver's side (docs/lease.md "State file failures", "No
	 * supervisor"): the state file, the supervisor's `go`, an orphan */
	int64_t state_fail_since_mono_ms; /* the first failed state-file write in a row
					     (keep_lease_on_state_write; 0: the file is
					     current) */
	bool state_gave_up;		  /* failing for ttl - safety: stopped (exit 111) */
	bool go_held;			  /* the first write waits for keep_lease_go */
	int64_t orphan_deadline_mono_ms;  /* keep_lease_orphan: stopped by then (0: none) */
	bool inflight_write;		  /* the request out is a WRITE */

	/* events */
	struct keep_lease_event ev[KEEP_LEASE_EVENTS];
	int ev_head, ev_n;
};

/* Initialise a machine for node tmpl->node with process instance
 * tmpl->instance (32 hex; chosen once per process, never changed by the
 * machine), in the start-check phase beginning at now_mono_ms.
 * tmpl is copied (host, pid, software are repeated in every write).
 * t must have passed keep_timing_check. */
void keep_lease_init(struct keep_lease *sm, const struct keep_timing *t,
		     const struct keep_node_obj *tmpl, int64_t now_mono_ms);

/* What to do now (see the file comment). Fills *act; may queue events
 * (a run-out is noticed here). Calling it again without a reply while a
 * READ/WRITE is outstanding is a driver bug: it answers WAIT. */
void keep_lease_next(struct keep_lease *sm, int64_t now_mono_ms, int64_t now_wall_ms,
		     struct keep_lease_action *act);

/* Feed the reply to the READ last handed out.
 * outcome: the store's; version: the read's version token (OK only);
 * obj: the decoded object when outcome is OK and it decoded (NULL
 * otherwise); decode_err: 0, or KEEP_ERR_NOTOURS / KEEP_ERR_PARSE when
 * the object did not decode. */
void keep_lease_on_read(struct keep_lease *sm, int64_t now_mono_ms, int64_t now_wall_ms,
			enum keep_outcome outcome, const char *version,
			const struct keep_node_obj *obj, int decode_err);

/* Feed a reading of both clocks taken together (lib/platform/clock.h
 * keep_clocks_now; ms): detects a wall-clock step (see the file comment).
 * keep_lease_next and keep_lease_on_read do this themselves; a driver
 * calls it right before keep_lease_on_write with the reply's time, so a
 * write in flight across a step never makes the lease valid. */
/* The driver could not record the lease state at now (its state file
 * unwritable: docs/lease.md "State file failures"): a lapse, as a run-out
 * (RAN_OUT, lapses + 1: every hold ends; what readers last saw cannot be
 * taken back, so no hold from before may pass again). No-op unless LIVE.
 * The next write, once the driver resumes, goes at once. */
void keep_lease_lapse(struct keep_lease *sm, int64_t now_mono_ms);

/* The state file's write result (docs/lease.md "State file failures").
 * The driver writes the file from the machine (keep_lease_state_project)
 * after keep_lease_next and every reply, and BEFORE it performs the action
 * keep_lease_next returned (what the node's other commands trust is never
 * behind what the store is sent), and feeds each result here, at
 * now_mono_ms. ok false: the file cannot be kept current, so
 *   - a LIVE lease lapses (keep_lease_lapse: RAN_OUT, lapses + 1);
 *   - a renewal or first write just handed out (not yet sent) is withdrawn:
 *     answered here as a write whose fate is unknown (it is read back once
 *     the file can be written again); the driver must not send it;
 *   - until a write succeeds, keep_lease_next sends nothing (peers must not
 *     see alive a node whose commands refuse its holds): it answers WAIT,
 *     KEEP_LEASE_STATE_RETRY_MS at a time, the driver writing the file
 *     again at each; past ttl - safety from the first failure it gives the
 *     lease up: the clean stop (released is still written), exit 111.
 * Nothing of this once the clean stop began. Returns a mask of
 * KEEP_LEASE_SAVE_AGAIN (the projection changed: write the file again
 * once, feeding that result too) and KEEP_LEASE_WITHDRAWN (do not send
 * the action). */
#define KEEP_LEASE_STATE_RETRY_MS 100
#define KEEP_LEASE_SAVE_AGAIN 1
#define KEEP_LEASE_WITHDRAWN 2
int keep_lease_on_state_write(struct keep_lease *sm, int64_t now_mono_ms, bool ok);

/* --go-fd (keep-agent's start guard, docs/lease.md "Starting"): the first
 * write of this instance waits, once the start check passed, until the
 * driver calls keep_lease_go; meanwhile keep_lease_next answers WAIT_GO
 * (poll for the line until act.until_mono_ms, KEEP_LEASE_STATE_RETRY_MS
 * from now). Call once after keep_lease_init. A stop while held writes
 * nothing (keep_lease_stop). */
void keep_lease_hold_first(struct keep_lease *sm);
void keep_lease_go(struct keep_lease *sm);

/* The supervisor's `go` channel ended (end of input, or a read error)
 * before `go` came: the start guard will never let this instance write,
 * so it stops at now_mono_ms with nothing written (keep_lease_stop).
 * Ignored once `go` came, or without keep_lease_hold_first. */
void keep_lease_go_closed(struct keep_lease *sm, int64_t now_mono_ms);

/* The supervisor is gone (keep-agent killed: docs/lease.md "No
 * supervisor"): the clean stop (keep_lease_stop) at now_mono_ms, bounded
 * by one write period instead of ttl - safety; every attempt's timeout_ms
 * ends by then, and past it the machine stops with reason UNCONFIRMED
 * (exit 111, event LOST), whatever it was doing (jobs of the node being
 * stopped included). Idempotent: the first call sets the bound. */
void keep_lease_orphan(struct keep_lease *sm, int64_t now_mono_ms);

/* The judging offset (ms, >= 0; docs/lease.md "Judging others after a
 * step"): max(0, step_sum_ms). Every judgement of ANOTHER node's freedom
 * on this node (a peer's written_at against our wall clock) uses the wall
 * clock minus this: a forward step of S ms, right or wrong, never lets this
 * node judge a peer free S ms early; a step back cancels it. */
int64_t keep_lease_judge_offset_ms(const struct keep_lease *sm);

void keep_lease_clocks(struct keep_lease *sm, int64_t now_mono_ms, int64_t now_wall_ms);

/* Feed the reply to the WRITE last handed out (version: the new version
 * token when outcome is OK). now_mono_ms is when the reply arrived. */
void keep_lease_on_write(struct keep_lease *sm, int64_t now_mono_ms, enum keep_outcome outcome,
			 const char *version);

/* Begin the clean stop (§4) at now_mono_ms: locally invalid at once, even
 * with a renewal in flight (its reply, when it lands, only gives the
 * version to release over); the next actions write released (If-Match,
 * written_at kept), bounded by ttl - safety from now: every attempt's
 * timeout_ms ends by then (issue 23 item 3), and past it the machine stops
 * with reason UNCONFIRMED (exit 111). Before the lease was ever live it
 * just stops. Idempotent. */
void keep_lease_stop(struct keep_lease *sm, int64_t now_mono_ms);

/* Guard the writes that free the node's records (issue 24; docs/lease.md
 * "Jobs of the node"): the first write of this instance (a new instance
 * frees an earlier one's records, §2) and the clean stop's released are
 * sent only once no run lock of the node is held by a job (jobstop.h,
 * keep_run_is_job: an owner-run's CMD and whatever it started, of an
 * earlier instance before the first write). Before each of those writes
 * the machine asks RUNS_PROBE; while a job holds one, RUNS_SIGNAL SIGTERM,
 * SIGKILL after the lock file's kill_after_ms (default_kill_after_ms when
 * it does not say), and waits until none is held. Past
 * KEEP_JOBSTOP_EXIT_MS after the SIGKILL (or, stopping, past the stop's
 * bound) it gives up: STOPPED, reason JOB_RUNNING (exit 22), event LOST
 * naming a holder's pid, nothing written. A driver that performs the two
 * actions calls this once after keep_lease_init; without it no RUNS_*
 * action is ever asked (the unit tests of the lease alone). */
void keep_lease_guard_runs(struct keep_lease *sm, int64_t default_kill_after_ms);

/* The replies to RUNS_PROBE (v: the node-wide view, lib/local/runlock.h
 * keep_runs_probe: v->held when a job holds a run lock) and RUNS_SIGNAL
 * (the signal reached npids processes, failed of them refused it, pid one
 * of them; 0: none). */
void keep_lease_on_runs_probe(struct keep_lease *sm, int64_t now_mono_ms,
			      const struct keep_run_view *v);
void keep_lease_on_runs_signal(struct keep_lease *sm, int64_t now_mono_ms, int npids, int failed,
			       int64_t pid);

/* True while the node lease is valid at now_mono_ms: phase LIVE and
 * now < valid_until. */
bool keep_lease_valid(const struct keep_lease *sm, int64_t now_mono_ms);

/* Did this instance ever write nodes/<id> (a write acknowledged, or
 * adopted)? Before it did, a stop frees nothing and a loss lost nothing. */
bool keep_lease_ever_wrote(const struct keep_lease *sm);

/* Is the LOST event e a twin met in the start check: another instance of
 * this node live (REPLACED) before this instance ever wrote? Then nothing
 * was held and nothing lost: lease-write says "not starting" (runbook
 * twin-detected.md), not "lost". e borrowed. */
bool keep_lease_twin_at_start(const struct keep_lease *sm, const struct keep_lease_event *e);

/* The keep_node_lease_valid_seconds gauge (ms; docs/metrics.md): how long
 * the lease stays valid from now_mono_ms (keep_lease_valid), 0 when it is
 * not, and 0 from a stop signal on: stop_asked, a signal the driver has
 * not handed to keep_lease_stop yet (the stopping machine is locally
 * invalid already). A node being stopped announces no validity. */
int64_t keep_lease_valid_gauge_ms(const struct keep_lease *sm, int64_t now_mono_ms,
				  bool stop_asked);

/* ---- the rules' decisions (pure; the machine above runs on them) ---- */

/* The end of the validity a write acknowledged (or adopted) gives (ms, on
 * the steady clock): sent_mono_ms, the send of that write (ms, steady
 * clock; for an adopted write not remembered, an estimate never later
 * than its send), + ttl - safety (keep_timing_valid_for_ms): written_at +
 * ttl - safety of the last acknowledged write, counted from the send, not
 * the acknowledgement (ADR 0020 §1). t borrowed. Never fails. */
int64_t keep_lease_validity_end_ms(const struct keep_timing *t, int64_t sent_mono_ms);

/* The delay (ms, > 0) before the next attempt after `failures` (>= 1)
 * failed attempts in a row, in phase `phase`, at now_mono_ms (steady
 * clock) with the validity ending at valid_until_mono_ms (ms): a backoff
 * from the retry floor (an attempt's bound / 16, 10..250 ms) doubling up
 * to one write period; while LIVE the retry starts no later than the last
 * moment a whole attempt still fits before the lease runs out (the floor
 * after that point); STOPPING the floor; RAN_OUT at most half a write
 * period, so recovering nodes renew close together. Retries are scheduled
 * within the validity left, never a whole period later (ADR 0020 §1, §5;
 * the renewal-retry report). t borrowed. */
int64_t keep_lease_retry_delay_ms(const struct keep_timing *t, enum keep_lease_phase phase,
				  int failures, int64_t valid_until_mono_ms, int64_t now_mono_ms);

/* The bound of the attempt (READ or WRITE) the machine sm (borrowed) hands
 * out at now_mono_ms (ms, steady clock): a third of ttl - safety
 * (keep_timing_attempt_timeout_ms), cut to end by the clean stop's bound
 * while STOPPING (ttl - safety from the stop: issue 23 item 3, the stop
 * fits systemd's TimeoutStopSec) and by an orphan's bound
 * (keep_lease_orphan); never below 1 ms. ADR 0020 §4, §5. */
int64_t keep_lease_attempt_timeout_ms(const struct keep_lease *sm, int64_t now_mono_ms);

/* The end of the start check's wait (ms, steady clock): ttl + grace
 * (keep_timing_takeover_ms) after first_read_sent_mono_ms, the send of
 * its first successful read of nodes/<id>. The first write goes once a
 * read sent at or after it succeeds (ADR 0020 §1). t borrowed. */
int64_t keep_lease_start_check_end_ms(const struct keep_timing *t, int64_t first_read_sent_mono_ms);

/* Does the start-check read that showed `seen` (borrowed; NULL: absent)
 * end the wait early (ADR 0020 §1)? True when it shows a fence or release
 * (format 3, not live) of the instance the first read showed (not "-"),
 * whose kept written_at + ttl + grace has passed on the wall clock
 * now_wall_ms (ms) less the judging offset (keep_lease_judge_offset_ms),
 * the read was sent before the wait's end, and no wall-clock step was
 * noticed during this check. sm borrowed (its first read, its send). */
bool keep_lease_start_check_shortcut(const struct keep_lease *sm, const struct keep_node_obj *seen,
				     int64_t now_wall_ms);

/* Is a failed write of phase `phase` re-read once (ADR 0020 §1: a failed
 * condition is not proof of a fence)? True for a conflict or not-found,
 * and for a first write whose fate is unknown (ambiguous): the re-read
 * decides (keep_lease_read_adopts, keep_lease_reread_stale). Otherwise
 * the write is retried in place (keep_lease_retry_delay_ms) or, a first
 * write refused, goes back to the start check. */
bool keep_lease_write_reread(enum keep_lease_phase phase, enum keep_outcome outcome);

/* Does a failed first write go back to the start check, same instance
 * (ADR 0020 §1; issue 23 item 5)? phase the machine's; outcome the
 * write's reply; reread_not_ours true when it is asked after the write's
 * re-read (keep_lease_write_reread) showed no live write of this
 * instance (a conflict not ours). True in phase FIRST for a refusal
 * (4xx: nothing landed, never retried in place) or a re-read not ours;
 * false in any other phase. */
bool keep_lease_first_write_back_to_check(enum keep_lease_phase phase, enum keep_outcome outcome,
					  bool reread_not_ours);

/* Does a read of nodes/<id> that showed o (borrowed; NULL: absent or
 * unreadable) adopt it as our own write (ADR 0020 §1)? True when o is a
 * live object (format 3) of this instance (sm->tmpl.instance): a failed
 * condition or a lost reply proved to be our own write; after a failed
 * write anything else is lost (a first write: back to the start check;
 * the clean stop: released or a fence end it). A re-read is first checked
 * with keep_lease_reread_stale. sm borrowed. */
bool keep_lease_read_adopts(const struct keep_lease *sm, const struct keep_node_obj *o);

/* Does the re-read after a failed write, showing o (borrowed; NULL:
 * absent) under version (borrowed; may be NULL), prove nothing (ADR 0020
 * §1; issue 28)? True when o is our own live write (keep_lease_read_adopts)
 * with a written_at older than the write sm holds, or that very write
 * (same written_at) under the version sm holds (the conflict changed
 * nothing): a stale replica or cache answered. The held write is then
 * retried on the failed-write pacing (keep_lease_retry_delay_ms), never at
 * once (event read-stale). sm borrowed. */
bool keep_lease_reread_stale(const struct keep_lease *sm, const char *version,
			     const struct keep_node_obj *o);

/* Does the clean stop's re-read, showing o (borrowed; NULL: absent or
 * unreadable), find a fence (format 3, fenced) instead of its released?
 * Then the stop is done (ADR 0020 §4: "a fence, done"; issue 23 item 5):
 * STOPPED, exit 0, the fence reported (event stopped, reason fenced). */
bool keep_lease_stop_fenced(const struct keep_node_obj *o);

/* Has the LIVE lease of sm (borrowed) run out at now_mono_ms (ms, steady
 * clock): now at or past its validity end? A lease that only ran out is
 * not lost: it goes RAN_OUT, lapses + 1 (a new epoch: every hold of the
 * previous one ends), and goes on writing If-Match (ADR 0020 §1). False
 * in any other phase. */
bool keep_lease_ran_out(const struct keep_lease *sm, int64_t now_mono_ms);

/* The wall-clock step (ms, signed: wall progress minus steady progress)
 * between the reading last_mono_ms/last_wall_ms and now_mono_ms/now_wall_ms
 * (ms), or 0 when within keep_timing_clock_step_ms(t) either way (NTP's
 * slewing, the readings' rounding: not a step). A step ends every hold
 * (keep_lease_clocks; issue 13, docs/lease.md "Clocks"). t borrowed. */
int64_t keep_lease_wall_step_ms(const struct keep_timing *t, int64_t last_mono_ms,
				int64_t last_wall_ms, int64_t now_mono_ms, int64_t now_wall_ms);

/* keep_lease_next's gate while the state file fails (keep_lease_on_state_write;
 * docs/lease.md "State file failures"; ADR 0020 §1, issue 18), at
 * now_mono_ms (ms, steady clock): OPEN when the file is current, the clean
 * stop began (or was asked, or the lease was given up) or the machine is
 * terminal; HOLD while it fails: nothing is sent until it is written
 * again; GIVE_UP once it has failed for ttl - safety
 * (keep_timing_valid_for_ms) from the first failure: the clean stop, exit
 * 111. sm borrowed. */
enum keep_lease_state_gate {
	KEEP_LEASE_GATE_OPEN = 0,
	KEEP_LEASE_GATE_HOLD,
	KEEP_LEASE_GATE_GIVE_UP,
};
enum keep_lease_state_gate keep_lease_state_fail_gate(const struct keep_lease *sm,
						      int64_t now_mono_ms);

/* Does the first write of sm (borrowed) wait for the start guard's `go`
 * (ADR 0020 §6; keep_lease_hold_first)? True in phase FIRST (the start
 * check passed) until keep_lease_go: keep_lease_next answers WAIT_GO. */
bool keep_lease_first_waits_go(const struct keep_lease *sm);

/* Does the next write of sm (borrowed) wait for the node's jobs (issue 24;
 * ADR 0020 §1, §4; keep_lease_guard_runs)? True, with the guard on, before
 * the first write of this instance and before released, until a probe
 * found no run lock of the node held by a job: keep_lease_next then asks
 * RUNS_PROBE, RUNS_SIGNAL or WAIT, and past the bound writes nothing
 * (STOPPED, reason JOB_RUNNING, exit 22). */
bool keep_lease_write_waits_jobs(const struct keep_lease *sm);

/* Pop the oldest queued event into *ev. true if there was one. */
bool keep_lease_poll_event(struct keep_lease *sm, struct keep_lease_event *ev);

/* The process exit code for a terminal phase (exitcode.h): STOPPED -> 0
 * (111 when the lease was given up because the state file failed:
 * keep_lease_on_state_write), LOST -> by reason. */
int keep_lease_exit_code(const struct keep_lease *sm);

/* Stable lowercase names for lines and the state file. Never NULL. */
const char *keep_lease_phase_name(enum keep_lease_phase p);
const char *keep_lease_reason_name(enum keep_lease_reason r);
const char *keep_lease_event_name(enum keep_lease_event_kind k);

#endif
