/* keep — stopping a job before its key is freed (jobstop.h; issue 24). */
#include "jobstop.h"

#include <signal.h>
#include <string.h>

void keep_jobstop_init(struct keep_jobstop *js, int64_t default_kill_after_ms,
		       int64_t deadline_mono_ms)
{
	memset(js, 0, sizeof(*js));
	js->phase = KEEP_JS_START;
	js->kill_after_ms = default_kill_after_ms > 0 ? default_kill_after_ms : 0;
	js->deadline_mono_ms = deadline_mono_ms;
}

int64_t keep_jobstop_default_kill_after_ms(int64_t safety_ms)
{
	int64_t k = safety_ms / 2;

	return k > 1000 ? 1000 : k < 0 ? 0 : k;
}

int64_t keep_jobstop_kill_after_ms(int64_t requested_ms, int64_t safety_ms)
{
	if (requested_ms < 0)
		return keep_jobstop_default_kill_after_ms(safety_ms);
	return requested_ms > safety_ms / 2 ? -1 : requested_ms;
}

bool keep_jobstop_done(const struct keep_jobstop *js)
{
	return js->phase == KEEP_JS_FREE_DONE || js->phase == KEEP_JS_HELD_DONE;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

void keep_jobstop_next(struct keep_jobstop *js, int64_t now, struct keep_jobstop_step *st)
{
	int64_t due;

	memset(st, 0, sizeof(*st));
	switch (js->phase) {
	case KEEP_JS_FREE_DONE:
		st->kind = KEEP_JOBSTOP_FREE;
		return;
	case KEEP_JS_HELD_DONE:
		st->kind = KEEP_JOBSTOP_HELD;
		return;
	default:
		break;
	}
	if (js->inflight) {
		st->kind = KEEP_JOBSTOP_WAIT;
		st->until_mono_ms = now + KEEP_JOBSTOP_POLL_MS;
		return;
	}
	if (js->deadline_mono_ms && now >= js->deadline_mono_ms) {
		/* the caller's own bound passed: whatever the job does, it frees
		 * nothing now */
		js->phase = KEEP_JS_HELD_DONE;
		js->cut = true;
		st->kind = KEEP_JOBSTOP_HELD;
		return;
	}
	switch (js->phase) {
	case KEEP_JS_START:
		st->kind = KEEP_JOBSTOP_PROBE;
		break;
	case KEEP_JS_TERM:
		st->kind = KEEP_JOBSTOP_SIGNAL;
		st->sig = KEEP_JOBSTOP_TERM;
		break;
	case KEEP_JS_TERMED:
		due = js->term_mono_ms + js->kill_after_ms;
		if (now >= due) {
			st->kind = KEEP_JOBSTOP_SIGNAL;
			st->sig = KEEP_JOBSTOP_KILL;
			break;
		}
		if (now >= js->next_probe_mono_ms) {
			st->kind = KEEP_JOBSTOP_PROBE;
			break;
		}
		st->kind = KEEP_JOBSTOP_WAIT;
		st->until_mono_ms = min64(js->next_probe_mono_ms, due);
		if (js->deadline_mono_ms)
			st->until_mono_ms = min64(st->until_mono_ms, js->deadline_mono_ms);
		return;
	case KEEP_JS_KILLED:
		due = js->kill_mono_ms + KEEP_JOBSTOP_EXIT_MS;
		if (now >= due) {
			/* SIGKILL did not end it: a process in uninterruptible
			 * sleep, or one this process cannot signal or see */
			js->phase = KEEP_JS_HELD_DONE;
			st->kind = KEEP_JOBSTOP_HELD;
			return;
		}
		if (now >= js->next_probe_mono_ms) {
			st->kind = KEEP_JOBSTOP_PROBE;
			break;
		}
		st->kind = KEEP_JOBSTOP_WAIT;
		st->until_mono_ms = min64(js->next_probe_mono_ms, due);
		if (js->deadline_mono_ms)
			st->until_mono_ms = min64(st->until_mono_ms, js->deadline_mono_ms);
		return;
	default:
		st->kind = KEEP_JOBSTOP_HELD;
		return;
	}
	js->inflight = true;
	js->out = st->kind;
}

void keep_jobstop_on_probe(struct keep_jobstop *js, int64_t now, bool held, int64_t kill_after_ms,
			   int64_t generation)
{
	if (!js->inflight || js->out != KEEP_JOBSTOP_PROBE)
		return;
	js->inflight = false;
	js->generation = generation;
	if (!held) {
		js->phase = KEEP_JS_FREE_DONE;
		return;
	}
	if (js->phase == KEEP_JS_START) {
		/* the lock file's bound is the job's own (owner-run --kill-after) */
		if (kill_after_ms >= 0)
			js->kill_after_ms = kill_after_ms;
		js->phase = KEEP_JS_TERM;
		return;
	}
	js->next_probe_mono_ms = now + KEEP_JOBSTOP_POLL_MS;
}

void keep_jobstop_on_signal(struct keep_jobstop *js, int64_t now, int npids, int failed,
			    int64_t pid)
{
	if (!js->inflight || js->out != KEEP_JOBSTOP_SIGNAL)
		return;
	js->inflight = false;
	js->signals++;
	js->npids = npids;
	js->failed = failed;
	if (pid > 0)
		js->pid = pid;
	js->next_probe_mono_ms = now + KEEP_JOBSTOP_POLL_MS;
	if (js->phase == KEEP_JS_TERM) {
		js->phase = KEEP_JS_TERMED;
		js->term_mono_ms = now;
	} else {
		js->phase = KEEP_JS_KILLED;
		js->kill_mono_ms = now;
	}
}

bool keep_run_is_job(const struct keep_run_view *v)
{
	return v->held && (v->err != 0 || v->generation != 0);
}

bool keep_jobstop_stop_signal(int sig)
{
	static const int skip[] = {SIGKILL, SIGSTOP, SIGCHLD, SIGCONT, SIGURG, SIGWINCH, SIGTSTP,
				   SIGTTIN, SIGTTOU, SIGSEGV, SIGBUS,  SIGILL, SIGFPE,	 SIGTRAP};
	size_t i;

	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		return true;
	if (sig < 1 || sig >= SIGRTMIN)
		return false;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (skip[i] == sig)
			return false;
	return true;
}
