/* keep — stopping a job before anything of its key is freed, a sans-I/O
 * machine (issue 24; ADR 0020 §3 "Release": "the node stops acting as
 * owner before sending it", §4; docs/ownership.md "The job").
 *
 * A job is every process that holds a run lock: owner-run takes the run
 * lock of KEY (state_dir/<id>/runs/<H>, lib/local/runlock.h) before acquiring,
 * records the generation it acquired in the lock file before it starts
 * CMD, and CMD and every process it starts inherit the descriptor. A
 * release of KEY (resolver.h), the node's first write of a new instance
 * and its `released` (lease.h), and owner-run's own end are each preceded
 * by this schedule, which the caller embeds and drives:
 *
 *   keep_jobstop_next(js, now, &step)
 *     PROBE  -> is the lock held by a job? keep_jobstop_on_probe()
 *     SIGNAL -> send step.sig to every process of the job (the driver
 *               finds them), then keep_jobstop_on_signal()
 *     WAIT   -> nothing before step.until_mono_ms: call next() again then
 *     FREE   -> no process of the job holds the lock: go on
 *     HELD   -> still held past the bound (js->pid names one holder when
 *               the driver could see one): the caller frees nothing
 *
 * The schedule: a probe; held, SIGTERM to every holder at once; a probe
 * every KEEP_JOBSTOP_POLL_MS; still held kill_after_ms after the SIGTERM,
 * SIGKILL; still held KEEP_JOBSTOP_EXIT_MS after the SIGKILL (a process in
 * uninterruptible sleep, one the driver cannot signal or cannot see: another
 * user's), HELD. An outer deadline (deadline_mono_ms: the release's own
 * bound, the drain's, the clean stop's) cuts it short: HELD. Times are the
 * boot clock (ms). No clock, no signal, no file here: the driver does them. */
#ifndef KEEP_CORE_JOBSTOP_H
#define KEEP_CORE_JOBSTOP_H

#include <stdbool.h>
#include <stdint.h>

#define KEEP_JOBSTOP_POLL_MS 20	  /* ms between probes while a job is stopping */
#define KEEP_JOBSTOP_EXIT_MS 2000 /* ms: a process's exit after its SIGKILL */

/* The signals the schedule sends (the driver maps them: SIGTERM, SIGKILL). */
enum keep_jobstop_sig {
	KEEP_JOBSTOP_TERM = 0,
	KEEP_JOBSTOP_KILL,
};

/* What a probe of a run lock found (the driver fills it: lib/local/runlock.h
 * keep_run_probe, keep_runs_probe). */
struct keep_run_view {
	bool held;	       /* a process holds the lock (flock, exclusive) */
	int64_t generation;    /* the job's generation as the lock file says (0: owner-run
				  has not started CMD: it is acquiring or waiting) */
	int64_t kill_after_ms; /* owner-run's --kill-after from the lock file (-1: unreadable) */
	int nlocks;	       /* node-wide probes: run locks held by a job */
	int err;	       /* errno of a probe that could not tell (held is then true) */
};

enum keep_jobstop_kind {
	KEEP_JOBSTOP_PROBE = 0,
	KEEP_JOBSTOP_SIGNAL,
	KEEP_JOBSTOP_WAIT,
	KEEP_JOBSTOP_FREE,
	KEEP_JOBSTOP_HELD,
};

struct keep_jobstop_step {
	enum keep_jobstop_kind kind;
	enum keep_jobstop_sig sig; /* SIGNAL */
	int64_t until_mono_ms;	   /* WAIT */
};

enum keep_jobstop_phase {
	KEEP_JS_START = 0, /* the first probe */
	KEEP_JS_TERM,	   /* held: SIGTERM due */
	KEEP_JS_TERMED,	   /* SIGTERM sent: probing until kill_after */
	KEEP_JS_KILLED,	   /* SIGKILL sent: probing until the exit bound */
	KEEP_JS_FREE_DONE,
	KEEP_JS_HELD_DONE,
};

/* The machine. Fields are readable by drivers and tests; change them only
 * through the functions below. */
struct keep_jobstop {
	enum keep_jobstop_phase phase;
	bool inflight; /* a PROBE or SIGNAL was handed out */
	enum keep_jobstop_kind out;
	int64_t kill_after_ms;	  /* SIGTERM -> SIGKILL (the lock file's, else the default) */
	int64_t deadline_mono_ms; /* outer bound (0: none) */
	int64_t term_mono_ms, kill_mono_ms, next_probe_mono_ms;
	bool cut;	    /* HELD because the outer deadline passed (not the exit bound) */
	int signals;	    /* signals sent */
	int64_t pid;	    /* a holder the last signal reached, or saw (0: none seen) */
	int npids;	    /* processes the last signal was sent to */
	int failed;	    /* ... of which the signal failed (EPERM) */
	int64_t generation; /* the last probe's */
};

/* Start a schedule. default_kill_after_ms: SIGTERM -> SIGKILL when the lock
 * file does not say (ms, >= 0); deadline_mono_ms: the caller's own bound
 * on the boot clock (0: none). */
void keep_jobstop_init(struct keep_jobstop *js, int64_t default_kill_after_ms,
		       int64_t deadline_mono_ms);

/* What to do now (file comment). Calling it while a PROBE or SIGNAL is
 * outstanding answers WAIT until now + KEEP_JOBSTOP_POLL_MS. */
void keep_jobstop_next(struct keep_jobstop *js, int64_t now_mono_ms, struct keep_jobstop_step *st);

/* The probe's answer: held is whether a JOB holds the lock (the caller
 * decides what counts: a resolver, a job of a generation up to the one it
 * releases; lease.h, any job). kill_after_ms: the lock file's (-1: keep
 * the default). */
void keep_jobstop_on_probe(struct keep_jobstop *js, int64_t now_mono_ms, bool held,
			   int64_t kill_after_ms, int64_t generation);

/* The signal was sent to npids processes (failed of them refused it),
 * pid one of them (0: none found). */
void keep_jobstop_on_signal(struct keep_jobstop *js, int64_t now_mono_ms, int npids, int failed,
			    int64_t pid);

/* true once FREE or HELD was answered. */
bool keep_jobstop_done(const struct keep_jobstop *js);

/* Is the lock v probed held by a job: a process holds it and the file
 * records a generation (v->generation != 0: -1 for an older owner-run's
 * file without one), or the probe could not tell (v->err)? A lock held by
 * an owner-run that has not started CMD (generation 0: acquiring or
 * waiting) is no job: nothing of its key runs. */
bool keep_run_is_job(const struct keep_run_view *v);

/* The default SIGTERM -> SIGKILL bound of owner-run for safety_ms:
 * min(safety_ms / 2, 1000) ms (docs/ownership.md "owner-run"). */
int64_t keep_jobstop_default_kill_after_ms(int64_t safety_ms);

/* owner-run's SIGTERM -> SIGKILL bound (ms) for a requested --kill-after
 * (requested_ms < 0: none given) and the node's safety_ms: the default
 * when none was given; the request when at most safety_ms / 2 (the job
 * must be gone before another node's grant may begin: its stop, the wait
 * for its processes and the release fit the safety margin); -1 when the
 * request is above that (a usage error, exit 100). */
int64_t keep_jobstop_kill_after_ms(int64_t requested_ms, int64_t safety_ms);

/* Is signal sig (a signal number of this system, 1..SIGRTMAX) a stop of
 * owner-run's job (issue 24; ADR 0020 §3; docs/ownership.md "owner-run"):
 * one whose default action would end owner-run, so that the job is
 * stopped (that signal first) and the key released before it ends? true
 * for every signal but SIGKILL and SIGSTOP (not catchable), those ignored
 * or stopping by default (SIGCHLD, SIGCONT, SIGURG, SIGWINCH, SIGTSTP,
 * SIGTTIN, SIGTTOU) and the crash signals (SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGTRAP: a fault of owner-run itself ends it as a crash; the
 * key's next release stops the rest of the job); every realtime signal
 * (SIGRTMIN..SIGRTMAX) is one (glibc's own, just below SIGRTMIN, answer
 * true too: sigaddset refuses them, so the driver never catches them).
 * false for anything out of range (< 1, > SIGRTMAX). Pure: a decision on a number, no signal sent
 * or caught here (lib/driver/ownerrun.c installs the handlers). */
bool keep_jobstop_stop_signal(int sig);

#endif
