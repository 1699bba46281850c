/* keep — lease-status's driver (ADR 0020 §1, §3 "Own"; docs/operations.md
 * "Readiness"): this node's lease state file, read and judged now
 * (lib/core/leasestate.h), the heartbeats of its fencing pipeline, the
 * paths keep-agent reads, and systemd's notify socket. Reads the node's
 * files and the boot clock, prints the lines and the diagnostics; the
 * judgement of the state is lib/core's. No store I/O: lease-status links
 * without the store's libraries (Makefile LIGHT_CMDS), so nothing here
 * may call the store. */
#ifndef KEEP_LEASESTATUS_H
#define KEEP_LEASESTATUS_H

#include "../local/config.h"
#include "../platform/line.h"
#include "cli.h"

/* lease-status: the line `lease node=ID phase=.. reason=.. instance=..
 * valid_ms=.. written_at_ms=.. lapses=..` (valid_ms: ms of validity left)
 * of the lease state file in dir (STATE_DIR/ID; borrowed) of node
 * cfg->node_id, judged on the boot clock read after the file, in format
 * fmt. Returns the exit code the state means (keep_lease_state_code;
 * docs/exit-codes.md: 0 valid, 10..13, 16, 17 lost, 14 ran out, 15 not
 * live or not comparable here, with a warning saying why); no state file:
 * `phase=none`, one warning (the nodes whose state is in the state
 * directory, or why it cannot be read), 15. */
int keep_leasestatus_show(const struct keep_config *cfg, const char *dir,
			  enum keep_line_format fmt);

/* lease-status --paths: the lines keep-agent reads (`node`, `dir`,
 * `metrics`, `period_ms`, `stall_ms` (ms: keep_timing_stall_ms),
 * `log_timestamps`, `apps`), for dir (STATE_DIR/ID; borrowed). Returns 0;
 * exits 100 when a path holds a newline. */
int keep_leasestatus_paths(const struct keep_config *cfg, const char *dir);

/* lease-status --progress: one line `progress node=ID part=PART state=..
 * pid=.. age_ms=.. stall_ms=..` (ms, on this boot's clock; + listing= for
 * node-watch) for each heartbeat file of the fencing pipeline in dir
 * (docs/formats.md "The watch state", "The fence state"): ok, stalled
 * (older than keep_timing_stall_ms, or of another boot), absent, or bad
 * (not exactly the file's keys of this node: a warning). Returns 0. */
int keep_leasestatus_progress(const struct keep_config *cfg, const char *dir,
			      enum keep_line_format fmt);

/* lease-status --notify: argv[first..argc) (borrowed) joined by newlines,
 * sent to $NOTIFY_SOCKET (keep_sd_notify), then 500 ms of lingering so
 * systemd finds the sender in its unit. Returns 0 (sent, or no socket:
 * nothing to do); exits 100 on a bad assignment or an unusable socket
 * address (usage errors through cli), 111 when the send failed. */
int keep_leasestatus_notify(struct keep_cli *cli, int argc, char **argv, int first);

#endif
