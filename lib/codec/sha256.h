/* keep — SHA-256 (FIPS 180-4), self-contained.
 *
 * The state directory names files by the SHA-256 of an actor's key
 * (lib/local/holds.c). owner-check, run before every commit, reads those files:
 * hashing here keeps it from linking OpenSSL (docs/design.md "Layers"). */
#ifndef KEEP_SHA256_H
#define KEEP_SHA256_H

#include <stddef.h>

/* The SHA-256 digest of len bytes at data into out (32 bytes). */
void keep_sha256(const void *data, size_t len, unsigned char out[32]);

/* The digest as 64 lowercase hex digits and a NUL into out (65 bytes). */
void keep_sha256_hex(const void *data, size_t len, char out[65]);

#endif
