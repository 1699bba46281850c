/* keep — the strict number and token parsers every decoder and command
 * shares (one copy: issue 14). Pure functions, in libkeep-core.
 *
 * Decimal: 1..19 ASCII digits, no sign, no space, no leading zero ("0"
 * itself allowed), at most max (no overflow). Hex: lowercase only. */
#ifndef KEEP_PARSE_H
#define KEEP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parse the n bytes at s (not NUL-terminated) as a strict decimal <= max
 * (max >= 0). true with *out set; false (and *out untouched) otherwise. */
bool keep_dec_parse(const char *s, size_t n, int64_t max, int64_t *out);

/* keep_dec_parse of a NUL-terminated string (NULL is false). */
bool keep_dec_parse_str(const char *s, int64_t max, int64_t *out);

/* A duration flag's value (owner-acquire --wait=D, owner-run): a strict
 * decimal (as above) with an optional unit: none or "ms" (milliseconds,
 * like every *_ms flag and setting), "s", "m", "h". The result in ms must
 * be <= max_ms. true with *out_ms set; false (and *out_ms untouched)
 * otherwise (NULL, empty, another unit, overflow). */
bool keep_duration_parse(const char *s, int64_t max_ms, int64_t *out_ms);

/* Are the n bytes at s lowercase hex digits only (n >= 1)? */
bool keep_hex_valid(const char *s, size_t n);

/* The latest wall time (ms since the epoch) any keep object or line may
 * carry: 9999-12-31T23:59:59.999Z. A decoder has no clock, so this static
 * bound is what it checks: a timestamp above it (written_at_ms,
 * fenced_at_ms, an old lease's expires_at_ms) is malformed (KEEP_ERR_PARSE,
 * exit 17 where a command refuses a bad object). Below it, every deadline
 * computed from such a time (+ ttl + grace, + horizon ...) fits in int64
 * by a wide margin; keep_add_sat_ms is used anyway (docs/formats.md,
 * "Time bounds"). */
#define KEEP_WALL_MAX_MS 253402300799999LL

#define KEEP_INSTANCE_LEN 32 /* hex chars of an instance token */

/* A process instance: exactly 32 lowercase hex digits (n bytes at s). */
bool keep_instance_valid(const char *s, size_t n);

/* Write n bytes of in as 2n lowercase hex digits and a NUL into out
 * (2n + 1 bytes). */
void keep_hex_encode(const unsigned char *in, size_t n, char *out);

#endif
