/* keep — the node's local state directory (docs/formats.md "Lease state file",
 * docs/ownership.md "State directory", docs/lease.md).
 *
 * state_dir/<node-id>/ holds, for the processes of one node:
 *   lease      the node lease state written by lease-write (this file's struct)
 *   (holds/, pending/, locks/ and metrics come with owner-acquire/release)
 * Every write is atomic: a temp file in the same directory, fsync, rename,
 * fsync of the directory. */
#ifndef KEEP_STATEDIR_H
#define KEEP_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ownio.h"
#include "nodeobj.h"
#include "store/store.h"

/* mkdir -p dir with mode 0700 for the created parts. 0 or KEEP_ERR_IO. */
int keep_mkdirs(const char *dir);

/* Write len bytes to path atomically (temp + fsync + rename + dir fsync),
 * file mode 0644, and say how far it got (issue 18): DURABLE; VISIBLE
 * (renamed into place, every process sees it, but the directory fsync
 * failed: a crash of the machine may undo it); UNCHANGED (nothing changed:
 * failed before the rename). errno is kept when not DURABLE. */
enum keep_sd keep_write_atomic_sd(const char *path, const void *data, size_t len);

/* Remove the temp files keep_write_atomic_sd left beside path
 * (`path.tmp.PID.N`) when the process PID is gone (a writer killed between
 * the temp's open and its rename: SIGKILL, the OOM killer, a crash).
 * Another live process's temps are kept. Returns how many were removed;
 * errors are ignored (a temp left is harmless: no reader looks at it). */
int keep_sweep_atomic_temps(const char *path);

/* keep_write_atomic_sd for callers that only need "durable or not": 0 when
 * DURABLE, else KEEP_ERR_IO (errno kept), VISIBLE included. */
int keep_write_atomic(const char *path, const void *data, size_t len);

/* Remove path (absent counts as removed), then fsync its directory:
 * DURABLE; VISIBLE (gone, the fsync failed); UNCHANGED (the unlink failed:
 * it is still there). errno kept when not DURABLE. */
enum keep_sd keep_remove_sd(const char *path);

/* fsync the directory dir: DURABLE or UNCHANGED (errno kept). */
enum keep_sd keep_sync_dir(const char *dir);

/* Read a whole small file (at most max bytes) into out (appended).
 * 0; KEEP_ERR_IO (errno ENOENT when absent); KEEP_ERR_TOOBIG. */
int keep_read_file(const char *path, struct keep_buf *out, size_t max);

/* The node lease state, as lease-write keeps it (file "lease";
 * docs/formats.md "Lease state file"). Deadlines are on the clock named by
 * `clock` (KEEP_CLOCK_NAME, "boottime", for every file this version
 * writes) and only on the boot `boot_id`: a reader compares them with its
 * own reading of that clock, and with nothing else. */
struct keep_lease_state {
	int format; /* 2 (written); 1: an older lease-write's file, read only */
	char node[KEEP_NODE_ID_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1];
	int64_t pid;			/* lease-write's pid */
	char clock[16];			/* "boottime"; a format 1 file reads as "monotonic" */
	char boot_id[64];		/* the deadlines are valid on this boot only */
	char phase[16];			/* starting | live | ran-out | stopping | stopped | lost */
	char reason[32];		/* "-" or the lost reason */
	char version[KEEP_VERSION_MAX]; /* "-" when none */
	int64_t written_at_ms;		/* wall ms of the held write; 0 when none */
	int64_t valid_until_ms;		/* on `clock`; 0 when not valid */
	int64_t valid_until_wall_ms;	/* informational: the same on the wall clock */
	int64_t live_since_ms; /* on `clock`: ack of the first write after the last lapse; 0 */
	int64_t lapses;	       /* lease epoch: grows on every run-out, clock step or loss */
	int64_t updated_wall_ms;
	/* since lease-write 0.1 with step offsets (optional trailing lines;
	 * absent in an older file: 0, have_judge false) */
	bool have_judge;
	int64_t judge_offset_ms; /* >= 0: subtract from the wall clock to judge others
				    (docs/lease.md "Judging others after a step") */
	int64_t clock_base_ms;	 /* wall - boot clock at lease-write's last clock
				    reading (this boot only): a reader whose own
				    wall - boot is larger sees a step not yet noticed */
};

/* Encode "keep-lease-state 2" (whatever s->format says) / decode format 2
 * or 1 (key value lines in a fixed order, strict). A format 1 file (an
 * older lease-write, deadlines on CLOCK_MONOTONIC) decodes with format 1
 * and clock "monotonic": readable, never comparable.
 * decode: 0, KEEP_ERR_PARSE, KEEP_ERR_NOTOURS. */
int keep_lease_state_encode(const struct keep_lease_state *s, struct keep_buf *out);
int keep_lease_state_decode(const char *buf, size_t len, struct keep_lease_state *s);

/* Write/read node_dir/lease. read: 0; KEEP_ERR_IO (ENOENT: no lease
 * state yet); KEEP_ERR_PARSE; KEEP_ERR_NOTOURS. */
int keep_lease_state_write(const char *node_dir, const struct keep_lease_state *s);
int keep_lease_state_read(const char *node_dir, struct keep_lease_state *s);

/* Can a reader on boot boot_id compare s's deadlines with its own reading
 * of the boot clock (clock.h)? NULL when it can; otherwise a static
 * one-line reason for the operator (an older lease-write's monotonic
 * file, an unknown clock, another boot, no boot id on this host). A state
 * that cannot be compared is never valid. */
const char *keep_lease_state_incomparable(const struct keep_lease_state *s, const char *boot_id);

/* True when s says valid at now_ms (the reader's boot clock, read AFTER
 * s was read): comparable (above), phase live and now_ms < valid_until_ms. */
bool keep_lease_state_valid(const struct keep_lease_state *s, int64_t now_ms, const char *boot_id);

/* The wall clock (ms) to judge ANOTHER node's freedom with, given the
 * state s (may be NULL: none) and this reader's own clock readings
 * boot_ms, wall_ms on boot boot_id: wall_ms - s->judge_offset_ms, less
 * any forward step since lease-write's last reading (its own wall - boot
 * beyond s->clock_base_ms, on the same boot only). Never later than
 * wall_ms. (docs/lease.md "Judging others after a step".) */
int64_t keep_lease_state_judge_wall(const struct keep_lease_state *s, int64_t boot_ms,
				    int64_t wall_ms, const char *boot_id);

/* A fresh random process instance: 32 lowercase hex (getrandom(2), the
 * kernel's CSPRNG)
 * into out (>= KEEP_INSTANCE_LEN + 1 bytes). 0 or KEEP_ERR_IO. */
int keep_new_instance(char *out, size_t outlen);

#endif
