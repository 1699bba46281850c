/* keep — a long-running command under keep-agent never outlives it.
 *
 * keep-agent exports KEEP_SUPERVISOR_PID (its own pid) to the commands it
 * starts. Every long-running command (lease-write, node-watch --follow,
 * lease-fence --stdin, owner-release --pending --follow, upgrade-mark
 * guard) calls keep_supervised_start() first thing in main. Without the
 * variable (a command run by hand, by a test, by another supervisor) it
 * does nothing. With it:
 *
 *   - the process moves into a process group of its own (setpgid), so a
 *     terminal's SIGINT, sent to the foreground group, reaches the agent
 *     only; the agent then runs the one clean stop (ADR 0020 §4) and stops
 *     its children in order;
 *   - the kernel sends it SIGTERM the moment its parent ends, SIGKILL of
 *     the agent included (prctl PR_SET_PDEATHSIG); SIGTERM is every
 *     command's stop, so each exits within one heartbeat period;
 *   - a parent that already ended before that request (the race between
 *     fork and prctl) makes it exit at once (111), before doing anything.
 *
 * What lease-write does when orphaned (docs/lease.md, "No supervisor"):
 * the lease is locally invalid at once (every hold ends), one `released`
 * write is tried within a heartbeat period, no ownership record is
 * released (that is the drain's job, and the drain is the agent's). */
#ifndef KEEP_SUPERVISE_H
#define KEEP_SUPERVISE_H

#include <stdbool.h>

#define KEEP_SUPERVISOR_ENV "KEEP_SUPERVISOR_PID"

/* See the file comment. prog names the command in diagnostics
 * (borrowed). May exit the process with KEEP_EXIT_TEMP (supervisor
 * already gone) or KEEP_EXIT_USAGE (a malformed KEEP_SUPERVISOR_PID).
 * Call it once, before any thread is created (the death signal is set
 * on the calling thread, which must be the one that lives longest). */
void keep_supervised_start(const char *prog);

/* True when this process runs under keep-agent (keep_supervised_start
 * found KEEP_SUPERVISOR_PID). */
bool keep_supervised(void);

/* ---- systemd's notify socket (Type=notify; docs/operations.md) ---------------
 *
 * keep-agent tells systemd READY=1 when the node is live and STOPPING=1
 * when its clean stop starts, through `lease-status --notify` (the agent
 * is a shell script). */

#define KEEP_NOTIFY_ENV "NOTIFY_SOCKET"

/* Send msg (newline-separated VAR=VALUE assignments, at most 4096 bytes)
 * as one datagram to the unix socket named by $NOTIFY_SOCKET (a path, or
 * "@name" for the abstract namespace), as sd_notify(3) does. 0 when sent;
 * 1 when NOTIFY_SOCKET is unset or empty (nothing to do); KEEP_ERR_INVAL
 * for an unusable address or message; KEEP_ERR_IO when the send failed
 * (errno kept). msg borrowed. */
int keep_sd_notify(const char *msg);

/* True when it runs under keep-agent and the parent it started with is
 * gone (getppid() changed: re-parented to init or a subreaper). One
 * system call; cheap enough for every loop iteration. */
bool keep_supervisor_gone(void);

#endif
