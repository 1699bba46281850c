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

/* Are the n bytes at s lowercase hex digits only (n >= 1)? */
bool keep_hex_valid(const char *s, size_t n);

/* A process instance: exactly 32 lowercase hex digits (n bytes at s). */
bool keep_instance_valid(const char *s, size_t n);

/* Write n bytes of in as 2n lowercase hex digits and a NUL into out
 * (2n + 1 bytes). */
void keep_hex_encode(const unsigned char *in, size_t n, char *out);

#endif
