/* keep — the node's local state directory (docs/formats.md "Lease state file",
 * docs/ownership.md "State directory", docs/lease.md).
 *
 * state_dir/<node-id>/ holds, for the processes of one node:
 *   lease      the node lease state written by lease-write (struct
 *              keep_lease_state and its codec: statefile.h; its judgement,
 *              sans I/O: core/leasestate.h)
 *   (holds/, pending/, locks/ and metrics come with owner-acquire/release)
 * Every write is atomic: a temp file in the same directory, fsync, rename,
 * fsync of the directory. */
#ifndef KEEP_STATEDIR_H
#define KEEP_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../codec/nodeobj.h"
#include "../core/leasestate.h"
#include "../core/ownio.h"
#include "../store/store.h"

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

/* Replace path with len bytes (temp + rename, file mode 0644) without any
 * fsync: readers never see a torn file, but a crash of the machine may
 * leave the previous content or an empty file. For files nothing depends
 * on after a crash, which the next write rewrites whole: the metrics
 * textfile (node_exporter's textfile collector reads whatever is there;
 * docs/metrics.md). Not for protocol state. 0, or KEEP_ERR_IO (errno kept;
 * nothing changed: the temp is removed). */
int keep_write_replace(const char *path, const void *data, size_t len);

/* Remove path (absent counts as removed), then fsync its directory:
 * DURABLE; VISIBLE (gone, the fsync failed); UNCHANGED (the unlink failed:
 * it is still there). errno kept when not DURABLE. */
enum keep_sd keep_remove_sd(const char *path);

/* fsync the directory dir: DURABLE or UNCHANGED (errno kept). */
enum keep_sd keep_sync_dir(const char *dir);

/* Read a whole small file (at most max bytes) into out (appended).
 * 0; KEEP_ERR_IO (errno ENOENT when absent); KEEP_ERR_TOOBIG. */
int keep_read_file(const char *path, struct keep_buf *out, size_t max);

/* Write/read node_dir/lease. read: 0; KEEP_ERR_IO (ENOENT: no lease
 * state yet); KEEP_ERR_PARSE; KEEP_ERR_NOTOURS. */
int keep_lease_state_write(const char *node_dir, const struct keep_lease_state *s);
int keep_lease_state_read(const char *node_dir, struct keep_lease_state *s);

/* A fresh random process instance: 32 lowercase hex (getrandom(2), the
 * kernel's CSPRNG)
 * into out (>= KEEP_INSTANCE_LEN + 1 bytes). 0 or KEEP_ERR_IO. */
int keep_new_instance(char *out, size_t outlen);

#endif
