/* keep — process exit codes: the ONE table (docs/exit-codes.md mirrors it).
 *
 * The agent and the runbooks branch on these numbers alone; never reuse a
 * number for another meaning. */
#ifndef KEEP_EXITCODE_H
#define KEEP_EXITCODE_H

#define KEEP_EXIT_OK 0	    /* done */
#define KEEP_EXIT_NO 1	    /* a definite "no": held elsewhere, refused, not valid, probe failed */
#define KEEP_EXIT_FENCED 10 /* node lease lost: fenced (by a peer or an operator) */
#define KEEP_EXIT_REPLACED 11	 /* node lease lost: another instance holds nodes/<id> (twin) */
#define KEEP_EXIT_RELEASED 12	 /* node lease lost: object shows released, not by this stop */
#define KEEP_EXIT_REMOVED 13	 /* node lease lost: nodes/<id> is absent */
#define KEEP_EXIT_RAN_OUT 14	 /* node lease not valid: it only ran out (not lost) */
#define KEEP_EXIT_NOT_LIVE 15	 /* node lease not valid: starting, stopped, or no lease state */
#define KEEP_EXIT_OLD_RUNNING 16 /* an old-format (per-actor lease) node is running */
#define KEEP_EXIT_BAD_OBJECT                                                                       \
	17 /* an object in the bucket is malformed or not ours; nothing written */
#define KEEP_EXIT_NOT_READY                                                                        \
	18 /* keep-agent status: the lease is valid but a part of the node is down */
#define KEEP_EXIT_UNKNOWN 20	 /* outcome unknown: kept pending, resolved in the background */
#define KEEP_EXIT_GRANT_ENDED 21 /* owner-run: the grant ended while CMD ran; CMD was stopped */
#define KEEP_EXIT_JOB_RUNNING                                                                      \
	22 /* lease-write: a job's process held a run lock of the node past SIGKILL: nothing       \
	      that frees the node's records (released, a new instance's first write) written */
#define KEEP_EXIT_SUPERSEDED 23 /* owner-commit: a later generation's fence is on the object */
#define KEEP_EXIT_USAGE 100	/* usage or configuration error: do not retry */
#define KEEP_EXIT_TEMP 111	/* temporary failure (store unreachable, 5xx, timeout): retry */

#endif
