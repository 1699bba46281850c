/* keep — run locks and the processes of a job (process glue; issue 24;
 * docs/ownership.md "The job"; ADR 0020 §3 "Release": the node stops
 * acting as owner before a release is sent).
 *
 * owner-run takes the run lock of KEY, state_dir/<id>/runs/<H> (H as the
 * hold's file name, lib/local/holds.h), before acquiring it: flock(LOCK_EX) on a
 * descriptor that is not close-on-exec, so CMD and every process it starts
 * hold the lock as long as one of them keeps the descriptor. The file is
 * "key value" lines, rewritten in place by its owner-run (nothing else
 * writes it):
 *
 *   kill_after_ms N   owner-run's --kill-after (SIGTERM -> SIGKILL, ms)
 *   generation G      the generation CMD runs under; 0 until CMD starts
 *   owner_pid P       owner-run's pid
 *   owner_start T     its start time (/proc/P/stat field 22: a pid comes back)
 *   key K             the key (the rest of the line)
 *   end               the record is whole
 *
 * then newlines up to 1024 bytes: every record has one length and is
 * rewritten by one pwrite, never truncated first. A reader takes a record
 * when two reads agree and it has its `end` line (retried 1 ms apart, 50
 * times, while the writer holds the file); a file without a generation
 * line or without its `end` line reads as generation -1: a job of unknown
 * generation.
 *
 * The decisions (when to probe, whom to signal when, how long to wait) are
 * lib/core/jobstop.h's; this file performs them: a probe is a flock test
 * (LOCK_SH | LOCK_NB, held for microseconds: a concurrent
 * keep_run_lock_take retries), a signal is a scan of /proc for the
 * processes whose open descriptors hold the lock (/proc/PID/fd and the
 * `lock:` line of /proc/PID/fdinfo: FLOCK, WRITE), which needs the right
 * to read them (the same user, or root). Return values: 0 or a negative
 * keep_err (errno kept for KEEP_ERR_IO). */
#ifndef KEEP_RUNLOCK_H
#define KEEP_RUNLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/jobstop.h"
#include "../core/ownio.h"

#define KEEP_RUN_TAKE_MS 200 /* ms keep_run_lock_take retries a lock a probe holds */

/* Take the run lock of key, exclusively, without waiting for a holder
 * (a probe's shared lock is retried for KEEP_RUN_TAKE_MS): the file is
 * created (runs/ too), truncated and written with kill_after_ms,
 * generation 0, this process's pid and start time, and key. 0 taken (*fd
 * owned by the caller, NOT close-on-exec); 1 held by another process (*fd
 * -1); KEEP_ERR_IO/TOOBIG (errno kept). */
int keep_run_lock_take(const char *node_dir, const char *key, int64_t kill_after_ms, int *fd);

/* CMD is about to start under generation (> 0): rewrite the file of fd
 * (taken by keep_run_lock_take) with it. 0 or KEEP_ERR_IO. */
int keep_run_lock_started(int fd, const char *key, int64_t kill_after_ms, int64_t generation);

/* Drop a run lock taken by keep_run_lock_take (fd closed; -1 is a no-op;
 * the lock lives on in processes that kept the descriptor). */
void keep_run_lock_drop(int fd);

/* Probe key's run lock into *v: held (a flock test), and what the file
 * says. No file: not held (no owner-run ever ran key here). A test that
 * fails otherwise answers held, with v->err (the safe answer: nothing is
 * freed on it). Never fails. */
void keep_run_probe(const char *node_dir, const char *key, struct keep_run_view *v);

/* Probe every run lock of the node (every file of runs/ and of each
 * application root's runs/apps/ROOT/, whatever root this process serves:
 * the lease is the node's) into *v: v->nlocks the locks
 * held by a JOB (a generation recorded, or an older owner-run's file),
 * v->held when there is one, v->kill_after_ms the largest of theirs (-1:
 * none readable). A lock held by an owner-run that has not started CMD
 * (generation 0: acquiring or waiting) is no job and is not counted. An
 * unreadable runs/ (not ENOENT) answers held with v->err. Never fails. */
void keep_runs_probe(const char *node_dir, struct keep_run_view *v);

/* Every run lock file of the node (runs/): *out (owned by the caller,
 * free()) gets *n entries, each the file's key and generation and whether
 * the owner-run it names still runs (its pid with its start time). A file
 * that cannot be read or names no key is skipped. 0, or KEEP_ERR_IO when
 * runs/ cannot be listed (absent: 0 entries). */
int keep_runs_list(const char *node_dir, struct keep_run_entry **out, size_t *n);

/* What a signal reached. */
struct keep_run_sig {
	int npids;   /* processes signalled */
	int failed;  /* of them, kill() refused (EPERM) */
	int64_t pid; /* the lowest pid signalled (0: none) */
};

/* Send sig to every process other than the caller that holds key's run
 * lock (key NULL: every run lock of the node that a job holds, every
 * application root's included, as keep_runs_probe counts them), found by a scan of /proc. 0, or
 * KEEP_ERR_IO when /proc cannot be read (nothing signalled). */
int keep_run_signal(const char *node_dir, const char *key, int sig, struct keep_run_sig *out);

/* owner-run's own job: every process of process group pgid (CMD's) and
 * every descendant of the caller. While owner-run lives it is the
 * subreaper of its job (PR_SET_CHILD_SUBREAPER): an orphan of the job
 * comes back to it, so every process that inherited the run lock is one
 * of these, and no scan of descriptors is needed. keep_job_signal sends
 * sig to the group at once, then to each descendant outside it (one scan
 * of /proc; KEEP_ERR_IO when /proc cannot be read: the group only);
 * keep_job_alive says whether any is left (zombies not counted: the caller
 * reaps its children first). */
int keep_job_signal(pid_t pgid, int sig, struct keep_run_sig *out);
bool keep_job_alive(pid_t pgid);

/* The start time of process pid (/proc/PID/stat field 22, clock ticks
 * since boot), or -1 when it does not run (or is a zombie). */
int64_t keep_proc_start(pid_t pid);

#endif
