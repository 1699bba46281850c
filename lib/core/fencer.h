/* keep — the fencer: one fence of one node, peer or operator, as a sans-I/O
 * machine (ADR 0020 §2; docs/fencing.md; issue 25).
 *
 * The decisions of one read are keep_fence_peer_judge, keep_fence_operator
 * and keep_fence_read_back (fence.h); this machine owns what is done
 * around them, in order, and when:
 *
 *   keep_fencer_next(m, now_mono, now, &act)
 *     DONE   -> finished: m->exit_code (operator), m->text (operator: the
 *               last stderr line, or "")
 *     WAIT   -> a not-yet's retry: wait until act.until_mono_ms (the input
 *               ending or a stop abandons the job), then call next again
 *     LEASE  -> read this node's own lease (keep_fencer_view), then
 *               keep_fencer_on_lease
 *     READ   -> versioned GET of nodes/<act.node> within act.timeout_ms,
 *               then keep_fencer_on_read
 *     WRITE  -> PUT act.obj to nodes/<act.node> under act.cond (If-Match
 *               act.if_match), within act.timeout_ms; keep_fencer_on_write
 *     LIST   -> LIST nodes/ within act.timeout_ms; keep_fencer_on_list
 *   keep_fencer_poll_event() after each step: the answer lines and the
 *   operator's stderr lines, in order.
 *
 * Peer (lease-fence --stdin, one stale line): may -> read -> judge (on the
 * lease read after the read) -> may -> write -> (conflict or ambiguous)
 * re-read (the order: keep_fencer_peer_step); a `not-yet` is decided again
 * on a fresh read at free_at + 1 ms on the judging clock, at most
 * KEEP_FENCER_NOT_YET_RETRIES times, and only when free_at is within
 * takeover + max_skew of now (a later one is not waited for: the next
 * stale line comes first; keep_fencer_not_yet_retry_at).
 *
 * Operator (lease-fence NODE): read -> decide (keep_fence_operator, then
 * keep_fence_operator_absent: the `--create` consent) -> write; an
 * ambiguous write is read back once (our fence there: fenced; the read
 * failing too: exit 111); a conflict, or a fence that did not land, is
 * decided again on a fresh read, KEEP_FENCER_OPERATOR_TRIES in all
 * (keep_fencer_operator_try_again). An absent node without --create: the
 * refused line, one LIST of nodes/ and the KEEP_FENCER_CLOSEST known ids
 * closest to NODE (keep_fencer_closest_listed; nothing written).
 *
 * Nothing here reads a clock, sleeps, or touches a file or the store. */
#ifndef KEEP_CORE_FENCER_H
#define KEEP_CORE_FENCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "fence.h"
#include "timing.h"

#define KEEP_FENCER_OPERATOR_TRIES 5  /* operator: fresh reads and fences before giving up */
#define KEEP_FENCER_NOT_YET_RETRIES 3 /* peer: decisions again after a not-yet */
#define KEEP_FENCER_CLOSEST 3	      /* known ids named when an absent node is refused */
#define KEEP_FENCER_TEXT_MAX 1024     /* bytes of a stderr line (NUL included) */
#define KEEP_FENCER_EVENTS 4	      /* events a step can leave */

enum keep_fencer_mode {
	KEEP_FENCER_PEER = 0, /* lease-fence --stdin: one stale line */
	KEEP_FENCER_OPERATOR, /* lease-fence NODE */
};

struct keep_fencer_cfg {
	enum keep_fencer_mode mode;
	struct keep_timing t;
	struct keep_stale st;		 /* PEER: the line (st.node the node) */
	char node[KEEP_NODE_ID_MAX + 1]; /* OPERATOR: the node */
	bool create;			 /* OPERATOR: --create (a fence over an absent object) */
	char self[KEEP_NODE_ID_MAX + 1]; /* PEER: this node (the fence's fenced_by) */
};

enum keep_fencer_act_kind {
	KEEP_FNA_DONE = 0,
	KEEP_FNA_WAIT,
	KEEP_FNA_LEASE,
	KEEP_FNA_READ,
	KEEP_FNA_WRITE,
	KEEP_FNA_LIST,
};

struct keep_fencer_action {
	enum keep_fencer_act_kind kind;
	const char *node;		 /* READ, WRITE: the node (points into the machine) */
	int64_t timeout_ms;		 /* READ, WRITE, LIST: the request's bound (ms) */
	int64_t until_mono_ms;		 /* WAIT: next is due then (monotonic ms) */
	enum keep_cond cond;		 /* WRITE */
	char if_match[KEEP_VERSION_MAX]; /* WRITE, IF_MATCH: the read's version */
	struct keep_node_obj obj;	 /* WRITE: the object to write */
};

/* A versioned GET of nodes/<node> as the driver saw it. */
struct keep_fencer_read {
	enum keep_outcome outcome;
	bool not_ours;			 /* the store holds something keep cannot */
	const char *version;		 /* OK: the version token (borrowed) */
	const char *detail;		 /* not OK: the reply's reason (borrowed, or NULL) */
	const struct keep_node_obj *obj; /* OK and decoded; NULL otherwise (borrowed) */
	int derr;			 /* OK but not decoded: why (KEEP_ERR_*) */
};

enum keep_fencer_ev_kind {
	KEEP_FNE_LINE = 0, /* an answer line on stdout */
	KEEP_FNE_INFO,	   /* operator: a line on stderr, level info */
};

/* One answer line (docs/formats.md "lease-fence"): `TYPE node=.. instance=..
 * written_at_ms=.. [free_at_ms=..] [fenced_by=..] [reason=..]
 * [decided_mono_ms=.. live_since_mono_ms=..]`. */
struct keep_fencer_event {
	enum keep_fencer_ev_kind kind;
	const char *type;		 /* LINE: "fenced", "skipped", "not-yet", ... (static) */
	char node[KEEP_NODE_ID_MAX + 1]; /* LINE */
	char instance[KEEP_INSTANCE_LEN + 1]; /* LINE: "" prints "-" */
	int64_t written_at_ms;		      /* LINE: 0 prints "-" */
	int64_t free_at_ms;		      /* LINE: 0 omitted */
	char fenced_by[KEEP_NODE_ID_MAX + 1]; /* LINE: "" omitted */
	const char *reason;		      /* LINE: static or NULL (omitted) */
	bool at;			 /* LINE: decided_mono_ms and live_since_mono_ms given */
	int64_t decided_mono_ms;	 /* the boot-clock time the write was allowed at */
	int64_t live_since_mono_ms;	 /* the live period it was judged under */
	bool landed;			 /* LINE: a fence of ours landed (a fences metric) */
	char text[KEEP_FENCER_TEXT_MAX]; /* INFO */
};

enum keep_fencer_phase {
	KEEP_FNP_MAY = 0, /* PEER: own lease before the read */
	KEEP_FNP_READ,	  /* the decision's read */
	KEEP_FNP_JUDGE,	  /* PEER: own lease after the read: the judgement */
	KEEP_FNP_MAY_AGAIN /* PEER: own lease right before the write */,
	KEEP_FNP_WRITE,
	KEEP_FNP_REREAD,  /* after a conflict or an ambiguous write */
	KEEP_FNP_LIST,	  /* OPERATOR: absent: the known ids */
	KEEP_FNP_NOT_YET, /* PEER: a not-yet decided: the wait is set on the next call */
	KEEP_FNP_WAIT,
	KEEP_FNP_DONE,
};

struct keep_fencer_m {
	struct keep_fencer_cfg cfg;
	enum keep_fencer_phase phase;
	int decisions;			/* PEER: decisions taken (1 + not-yet retries) */
	int tries;			/* OPERATOR: fences tried */
	struct keep_fencer me;		/* PEER: the lease the write was allowed under */
	struct keep_fence_decision d;	/* the decision being carried out */
	char version[KEEP_VERSION_MAX]; /* the decision's read's version */
	struct keep_node_obj seen;	/* the decision's read's object (operator lines) */
	bool have_seen;
	enum keep_outcome read_outcome; /* PEER: the decision's read, judged after the lease */
	int read_derr;
	enum keep_outcome wrote;	 /* the fence write's outcome */
	char last[KEEP_DETAIL_MAX + 64]; /* OPERATOR: the last fence's failure */
	int64_t until_mono_ms;		 /* WAIT */
	struct keep_fencer_event ev[KEEP_FENCER_EVENTS];
	size_t nev, evhead;
	int exit_code;			 /* DONE, OPERATOR: 0 fenced; 1; 17; 111 */
	char text[KEEP_FENCER_TEXT_MAX]; /* DONE, OPERATOR: a fatal line for stderr, or "" */
};

/* The peer's order of steps (§2, issue 18): the phase after phase `at`
 * of a peer fence, when that step let the fence go on (go_on) or not:
 *   MAY (own lease valid, keep_fence_peer_may) -> READ;
 *   READ (the reply, whatever it is) -> JUDGE: judged on the lease read
 *     after the read, never before it;
 *   JUDGE (a FENCE verdict) -> MAY_AGAIN: may again right before the write;
 *   MAY_AGAIN -> WRITE (If-Match the read's version);
 *   WRITE (a conflict, or a lost reply: the fence may not have landed)
 *     -> REREAD, read back once;
 *   anything else, a step that does not go on, and REREAD -> DONE.
 * A JUDGE that is a not-yet is keep_fencer_not_yet_retry_at's, not this.
 * Pure; no pointer. */
enum keep_fencer_phase keep_fencer_peer_step(enum keep_fencer_phase at, bool go_on);

/* A peer's not-yet (§2 timing: "free_at + 1 on the judging clock"): is
 * the decision taken again, and when? decisions: the decisions taken so
 * far (1 + the retries); free_at_ms: the not-yet's written_at + ttl +
 * grace (wall ms, the judging clock); judge_wall_ms: the judging clock
 * now; now_mono_ms: the steady clock at the same moment. True, with
 * *until_mono_ms = now_mono_ms + (free_at_ms - judge_wall_ms, at least 0)
 * + 1 (saturated), when decisions <= KEEP_FENCER_NOT_YET_RETRIES and
 * free_at_ms is at most takeover + max_skew (keep_timing_takeover_ms +
 * t->max_skew_ms) after judge_wall_ms; false otherwise: the job ends
 * (the next stale line comes first), *until_mono_ms untouched. t and
 * until_mono_ms borrowed. */
bool keep_fencer_not_yet_retry_at(int decisions, int64_t free_at_ms, int64_t judge_wall_ms,
				  int64_t now_mono_ms, const struct keep_timing *t,
				  int64_t *until_mono_ms);

/* The operator's tries (§2, issue 23): after a fence that did not land
 * (a conflict, or an ambiguous write whose read-back shows it did not),
 * may the operator decide again on a fresh read? tries: the fences tried
 * so far, this one included. True while tries < KEEP_FENCER_OPERATOR_TRIES
 * (5 in all); false: it gives up (exit 111, "run it again"). Pure. */
bool keep_fencer_operator_try_again(int tries);

/* The known ids an absent node's refusal names (issue 27; lease-fence
 * NODE without --create): among the node objects of a LIST of nodes/
 * (keys[0..n), borrowed; keys not under nodes/ or not a valid node id,
 * keep_listing_node_id's rule, are skipped), the KEEP_FENCER_CLOSEST
 * closest to node by keep_fence_closest's edit distance, closest first,
 * ties in listing order, into best[0..KEEP_FENCER_CLOSEST) (pointers into
 * keys). Returns how many; *total: the node ids listed. Any n: compared
 * in windows of 256, no allocation. */
size_t keep_fencer_closest_listed(const char *node, const char *const *keys, size_t n,
				  const char *best[KEEP_FENCER_CLOSEST], size_t *total);

/* Start one fence (cfg copied; PEER: cfg->st.node the node). ADR 0020 §2. */
void keep_fencer_init(struct keep_fencer_m *m, const struct keep_fencer_cfg *cfg);

/* What to do now (see above); now_mono_ms: the driver's steady clock, now
 * its two wall clocks (timing.h; a not-yet's wait is set on judge_wall_ms).
 * act is caller-owned; act->node points into m. */
void keep_fencer_next(struct keep_fencer_m *m, int64_t now_mono_ms, const struct keep_walls *now,
		      struct keep_fencer_action *act);

/* The own lease a LEASE action asked for (keep_fencer_view). */
void keep_fencer_on_lease(struct keep_fencer_m *m, const struct keep_fencer *me,
			  const struct keep_walls *now);

/* The reply of a READ (r borrowed; now: the clocks read after it). */
void keep_fencer_on_read(struct keep_fencer_m *m, const struct keep_fencer_read *r,
			 const struct keep_walls *now);

/* The outcome of a WRITE (detail: the reply's reason, or NULL). */
void keep_fencer_on_write(struct keep_fencer_m *m, enum keep_outcome outcome, const char *detail);

/* The reply of a LIST of nodes/: on OK, keys[0..n) the listed keys
 * (borrowed); otherwise outcome and detail say why. */
void keep_fencer_on_list(struct keep_fencer_m *m, enum keep_outcome outcome, const char *detail,
			 const char *const *keys, size_t n);

/* The next event of the last step into *e; false when none is left. */
bool keep_fencer_poll_event(struct keep_fencer_m *m, struct keep_fencer_event *e);

/* ---- the peer's queue --------------------------------------------------------- */

#define KEEP_FENCER_QUEUE_MAX 64 /* stale lines waiting for a worker */

/* lease-fence --stdin's lines waiting for a fence worker, and the nodes
 * queued or in flight: one fence per node at a time (a later line of a
 * node whose fence is queued or running is dropped, "a fence of this node
 * is in flight"), at most KEEP_FENCER_QUEUE_MAX lines waiting and
 * KEEP_FENCE_CONCURRENCY running (a line beyond: dropped, "busy"). Pure
 * data: the driver holds its lock around every call. */
struct keep_fencer_queue {
	struct keep_stale q[KEEP_FENCER_QUEUE_MAX];
	size_t head, n;
	char busy[KEEP_FENCER_QUEUE_MAX + KEEP_FENCE_CONCURRENCY][KEEP_NODE_ID_MAX + 1];
	bool eof; /* the input ended: workers leave once the queue is empty */
};

/* Queue st (copied); false when it is dropped, with *skipped its answer
 * line (`skipped ... reason=busy|a fence of this node is in flight`). */
bool keep_fencer_queue_admit(struct keep_fencer_queue *q, const struct keep_stale *st,
			     struct keep_fencer_event *skipped);

/* The oldest waiting line into *st; false when none waits. */
bool keep_fencer_queue_take(struct keep_fencer_queue *q, struct keep_stale *st);

/* The fence of node ended: its next line is taken again. */
void keep_fencer_queue_done(struct keep_fencer_queue *q, const char *node);

/* ---- this node's own lease, as a fencer sees it ------------------------------ */

/* What a node's lease state says to its fencer and its watch (§2), at
 * now_mono_ms on the lease's own clock (the boot clock, this boot):
 *   read_ok: the state file was read and names this node (false: not
 *     valid, no live_since);
 *   valid: the lease state's validity at now_mono_ms (keep_lease_state_valid);
 *   live_since_mono_ms: the file's live_since (kept when not valid: the
 *     watch schedules its next candidate from it; a fence decision never
 *     uses it while not valid, keep_fence_peer_may).
 * me is filled (caller-owned). The one function lease-fence, node-watch
 * and the simulator take their own lease's view from. */
void keep_fencer_view(bool read_ok, bool valid, int64_t live_since_mono_ms, int64_t now_mono_ms,
		      struct keep_fencer *me);

#endif
