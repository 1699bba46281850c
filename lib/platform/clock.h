/* keep — the real clocks, for drivers only (lib/core/ never reads a clock).
 *
 * Two clocks, kept apart (one "now" per loop iteration,
 * passed down; docs/lease.md "Clocks"):
 *
 *   the boot clock  CLOCK_BOOTTIME: never steps, and counts the time the
 *                   host was suspended. Every validity deadline, wait and
 *                   watch of keep is on it; the lease state file says so
 *                   (`clock boottime`). Comparable only within one boot.
 *   the wall clock  CLOCK_REALTIME: what written_at is stamped with and
 *                   what other nodes' written_at are compared with; it
 *                   may step (NTP, date -s), which lease-write detects.
 *
 * CLOCK_MONOTONIC is not used for deadlines: it stops while the host is
 * suspended, so a deadline kept on it moves into the future by the time
 * the host slept (issue 13: a fenced node's grants passed again after a
 * resume). */
#ifndef KEEP_CLOCK_H
#define KEEP_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* KEEP_CLOCK_NAME, the clock named in the lease state file's `clock`
 * line, is statefile.h's. */
#include "../codec/statefile.h"

/* CLOCK_BOOTTIME in ms (shared by every process on this boot). */
int64_t keep_boot_ms(void);
/* CLOCK_REALTIME in ms since the epoch. */
int64_t keep_wall_ms(void);
/* Both clocks read as one pair (ms): the boot clock is read before and
 * after the wall clock and the pair is retried (a few times at most) until
 * the two boot readings are within 1 ms, so a preemption between the reads
 * does not look like a wall-clock step. */
void keep_clocks_now(int64_t *boot_ms, int64_t *wall_ms);
/* Sleep until the boot clock reads deadline_ms, or until a signal
 * interrupts (returns early). */
void keep_sleep_until_boot(int64_t deadline_ms);
/* *ts = CLOCK_MONOTONIC now + ms (ms >= 0): an absolute time for
 * pthread_cond_timedwait on a condition variable set to CLOCK_MONOTONIC
 * (glibc's condition variables take no other steady clock). The caller
 * re-checks its boot-clock deadline after every wake. */
void keep_mono_timespec_after(int64_t ms, struct timespec *ts);

/* Former names, kept for code not yet converted: the same boot clock. */
int64_t keep_mono_ms(void);
void keep_sleep_until_mono(int64_t deadline_ms);

/* This boot's id (/proc/sys/kernel/random/boot_id) into out (>= 40 bytes);
 * "" if unavailable. Boot-clock times are only comparable within one boot. */
void keep_boot_id(char *out, size_t outlen);

#endif
