/* keep — the judgement of a node's lease state file, sans I/O (ADR 0020
 * §1, §2, §3 "Own"; docs/lease.md "The state file", "Clocks";
 * docs/formats.md "Lease state file"; docs/exit-codes.md).
 *
 * The file is read (lib/local/statedir.c) and decoded (lib/codec/statefile.c) by the
 * caller; the clocks and the boot id are read by the caller too, the boot
 * clock AFTER the file (docs/lease.md "Answers are about the moment they
 * are given"). These functions only judge: whether the state's deadlines
 * can be compared here, whether it is valid now, the exit code it means,
 * the wall clock to judge other nodes with, and the node's own lease as
 * its fencer and its watch see it. owner-check, lease-status, the
 * ownership commands (lib/local/holds.c), node-watch, lease-fence
 * (lib/driver/fencerun.c) and the simulator (sim/sim.c) take these rules from
 * here and from nowhere else. The writer's side is here too: what
 * lease-write writes into the file from its machine
 * (keep_lease_state_project, keep_lease_state_stopping). */
#ifndef KEEP_CORE_LEASESTATE_H
#define KEEP_CORE_LEASESTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../codec/statefile.h"
#include "fencer.h"
#include "lease.h"

/* Can a reader on boot boot_id (may be NULL or "": none on this host)
 * compare s's deadlines with its own reading of the boot clock? NULL when
 * it can; otherwise a static one-line reason for the operator (an older
 * lease-write's monotonic file, an unknown clock, another boot, no boot
 * id). A state that cannot be compared is never valid. s is borrowed.
 * (docs/lease.md "Clocks"; issue 13.) */
const char *keep_lease_state_incomparable(const struct keep_lease_state *s, const char *boot_id);

/* True when s says valid at now_ms (ms on the reader's boot clock, read
 * AFTER s was read): comparable (above), phase "live" and
 * now_ms < s->valid_until_ms (valid up to, not at, its end). s is
 * borrowed. (ADR 0020 §1.) */
bool keep_lease_state_valid(const struct keep_lease_state *s, int64_t now_ms, const char *boot_id);

/* The exit code of a lease state that is comparable but not valid, from
 * its phase and reason as the state file names them (keep_lease_phase_name,
 * keep_lease_reason_name, lib/core/lease.h): "ran-out" and "live" (past its
 * validity) 14; "lost" by reason: fenced 10, replaced 11, released 12,
 * removed 13, old-version-running 16, bad-object 17; anything else
 * (starting, stopping, stopped, a lost reason without a code, NULL) 15.
 * Never 0. Strings borrowed. (docs/exit-codes.md.) */
int keep_lease_phase_code(const char *phase, const char *reason);

/* The exit code of lease state s at now_ms (ms, the reader's boot clock
 * read after s) on boot boot_id: 0 valid (keep_lease_state_valid); 15 when
 * its deadlines cannot be compared here (keep_lease_state_incomparable);
 * else keep_lease_phase_code. s NULL (no readable state): 15. s borrowed.
 * The one mapping owner-check, lease-status and the ownership commands
 * answer with (ADR 0020 §1, §3 "Own"; docs/exit-codes.md). */
int keep_lease_state_code(const struct keep_lease_state *s, int64_t now_ms, const char *boot_id);

/* The phase lease-status prints for s at now_ms on boot boot_id: s's own,
 * except "ran-out" for a comparable "live" state past its validity (the
 * next write of lease-write would say so). Never NULL; points into s or
 * at a static string. (docs/operations.md "Readiness".) */
const char *keep_lease_state_shown_phase(const struct keep_lease_state *s, int64_t now_ms,
					 const char *boot_id);

/* The wall clock (ms) to judge ANOTHER node's freedom with, given the
 * state s (may be NULL: none) and this reader's own clock readings
 * boot_ms, wall_ms (ms) on boot boot_id: wall_ms - s->judge_offset_ms,
 * less any forward step since lease-write's last reading (its own wall -
 * boot beyond s->clock_base_ms, on the same boot only). Never later than
 * wall_ms; never fails. (docs/lease.md "Judging others after a step";
 * issue 13.) */
int64_t keep_lease_state_judge_wall(const struct keep_lease_state *s, int64_t boot_ms,
				    int64_t wall_ms, const char *boot_id);

/* This node's own lease as its fencer and its watch see it (ADR 0020 §2;
 * docs/fencing.md "After the fencer's own lapse"), from its state file:
 * s the state read (NULL: none readable), node_id this node's id (NULL or
 * "": none configured), now_mono_ms (ms, the boot clock read after the
 * file), boot_id this boot's. A state of another node, or none, is not
 * valid and has no live_since; otherwise valid is keep_lease_state_valid
 * and live_since the file's. me is filled (caller-owned) through
 * keep_fencer_view (fencer.h); s and the strings are borrowed. */
void keep_lease_state_fencer_view(const struct keep_lease_state *s, const char *node_id,
				  int64_t now_mono_ms, const char *boot_id, struct keep_fencer *me);

/* ---- the state file lease-write writes (its projection of the machine) ---- */

/* The lease-dependent lines of lease-write's state file for its machine
 * sm at now_mono_ms (boot clock) with the wall clock wall_ms read beside
 * it (docs/formats.md "Lease state file"; ADR 0020 §1): phase, reason,
 * version ("-" before the first write), written_at; the validity
 * (valid_until on both clocks, live_since) only while keep_lease_valid
 * says valid, and a live lease past its validity is published as
 * "ran-out" at once (a reader must not wait for the tick that counts the
 * lapse); lapses + 1 once lost (every hold of the current epoch is stale);
 * the judging lines (offset, clock base); updated_wall_ms = wall_ms,
 * format 2. The identity lines (node, instance, pid, clock, boot id) are
 * the caller's. st is overwritten; sm is borrowed. */
void keep_lease_state_project(const struct keep_lease *sm, int64_t now_mono_ms, int64_t wall_ms,
			      struct keep_lease_state *st);

/* From a stop's signal on (SIGTERM, SIGINT), a state that says live is
 * written as "stopping" with its validity zeroed: no reader may see the
 * lease valid once its stop began (docs/lease.md "A clean stop"; ADR 0020
 * §4). Other phases are left as they are. Returns true when st changed
 * (it said live: the driver writes it again at once), false otherwise. st
 * caller-owned. */
bool keep_lease_state_stopping(struct keep_lease_state *st);

/* Whether lease-write writes its state file now, after keep_lease_next or
 * a reply fed to sm (borrowed) and before the action is performed or an
 * event printed (docs/lease.md "The state file": rewritten on every change
 * and every renewal; "State file failures"): true when the machine queued
 * events since they were last polled, while the lease is LIVE (the
 * validity published follows every write; a live lease past its validity
 * is written ran-out at once), and while a failed write of the file is
 * being tried again (state_fail_since_mono_ms). The simulator asks the
 * same. ADR 0020 §1. */
bool keep_lease_state_due(const struct keep_lease *sm);

/* The restart carry (docs/lease.md "Judging others after a step"): a new
 * lease-write of the node starts its machine sm with the judging offset
 * of prev (the state file an earlier process of the node left; NULL:
 * none), plus the move of the wall clock against the boot clock since
 * prev's clock base (now_mono_ms, wall_ms: this process's readings; same
 * boot boot_id only) when it is beyond the step threshold
 * (keep_timing_clock_step_ms of sm's timing: as within a process, NTP's
 * slewing and the ms rounding of two readings are not steps; they added
 * up restart after restart). Never below 0. Returns the offset carried
 * (ms; > 0: peers are judged that late). prev borrowed. */
int64_t keep_lease_restart_carry(struct keep_lease *sm, const struct keep_lease_state *prev,
				 const char *boot_id, int64_t now_mono_ms, int64_t wall_ms);

/* lease-write --clear-clock-offset (docs/lease.md "Judging others after a
 * step": the operator checked the wall clock is right): st's judging
 * offset set to 0 and its clock base to wall_ms - now_mono_ms (0 when st
 * is of another boot than boot_id: no base to compare). Returns the
 * offset the node judged with before (ms: wall_ms - its judging wall). */
int64_t keep_lease_state_clear_offset(struct keep_lease_state *st, int64_t now_mono_ms,
				      int64_t wall_ms, const char *boot_id);

#endif
