/* keep — the real clocks, for drivers only (lib/core/ never reads a clock).
 * Monotonic and wall time are kept apart (docs/design.md "Conventions": one "now" per loop
 * iteration, passed down). */
#ifndef KEEP_CLOCK_H
#define KEEP_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in ms (shared by every process on this boot). */
int64_t keep_mono_ms(void);
/* CLOCK_REALTIME in ms since the epoch. */
int64_t keep_wall_ms(void);
/* Sleep until the monotonic time deadline_ms, or until a signal interrupts
 * (returns early). */
void keep_sleep_until_mono(int64_t deadline_ms);
/* This boot's id (/proc/sys/kernel/random/boot_id) into out (>= 40 bytes);
 * "" if unavailable. Monotonic times are only comparable within one boot. */
void keep_boot_id(char *out, size_t outlen);

#endif
