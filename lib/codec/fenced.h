/* keep — the fenced object: an application's bytes under the fence of an
 * ownership grant (issue 26; docs/formats.md "Fenced objects",
 * docs/ownership.md "owner-commit"). A codec: no I/O, in libkeep-core.
 *
 * Format 1: five header lines, '\n' after each, then the application's
 * bytes, exactly `size` of them, any bytes (NUL and '\n' included):
 *
 *   wasmkeep-fenced 1
 *   owner <key>            an actor key (keep_owner_key_valid): whose fence
 *   generation <int>       1 .. 2^53 - 1: the generation of owners/<key>
 *                          whose holder wrote it (the fencing token)
 *   size <int>             0 .. KEEP_FENCED_DATA_MAX: bytes after the header
 *   sha256 <64 hex>        lowercase SHA-256 of those bytes
 *   <data>
 *
 * The fence is part of the bytes the store's version token covers: on S3
 * (and RGW) a plain PUT's ETag is the MD5 of the body, so two bodies that
 * differ only in their metadata have the same ETag, and a fence kept only
 * in user metadata is not enforced by If-Match (the ETag trap). A body that
 * names generation G + 1 can never have the version token of one that names
 * G, whatever the data.
 *
 * Strict: any other first line -> KEEP_ERR_NOTOURS (not a fenced object);
 * header 1 with a missing, extra, out-of-order or malformed header line, a
 * '\r' in the header, a size that is not the number of bytes after the
 * header, or a digest that does not match them -> KEEP_ERR_PARSE; more
 * than KEEP_FENCED_OBJECT_MAX bytes -> KEEP_ERR_TOOBIG. */
#ifndef KEEP_FENCED_H
#define KEEP_FENCED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "ownerrec.h"

#define KEEP_FENCED_OBJECT_MAX 65536 /* bytes: a whole fenced object (KEEP_BODY_MAX) */
#define KEEP_FENCED_HEADER_MAX 1024  /* bytes: the header is never longer than this */
/* bytes: the most application data a fenced object carries (its header
 * fits in KEEP_FENCED_HEADER_MAX, so the object stays within the store's
 * object limit whatever its key) */
#define KEEP_FENCED_DATA_MAX (KEEP_FENCED_OBJECT_MAX - KEEP_FENCED_HEADER_MAX)

/* The fence of a decoded object. */
struct keep_fence {
	char key[KEEP_OWNER_KEY_MAX + 1]; /* the owner key */
	int64_t generation;		  /* >= 1 */
	size_t size;			  /* bytes of data */
	char sha256[65];		  /* lowercase hex digest of the data */
	size_t data_off;		  /* the data starts this many bytes into the body */
};

/* Append the fenced object of data (len bytes, borrowed; NULL when len is
 * 0) under the fence (key, generation) to out (caller's buffer, at least
 * KEEP_FENCED_OBJECT_MAX bytes of max). 0; KEEP_ERR_INVAL for an invalid
 * key or generation, or len over KEEP_FENCED_DATA_MAX; buffer errors
 * (KEEP_ERR_NOMEM, KEEP_ERR_TOOBIG: out unchanged then). The fencing token
 * of ADR 0020 §3 ("Own": a stale grant never commits), in the body. */
int keep_fenced_encode(const char *key, int64_t generation, const void *data, size_t len,
		       struct keep_buf *out);

/* Decode the len bytes at buf (not NUL-terminated; borrowed) into *f
 * (caller's): the data is the f->size bytes at buf + f->data_off. Sizes in
 * bytes. 0; KEEP_ERR_NOTOURS;
 * KEEP_ERR_PARSE; KEEP_ERR_TOOBIG (the file comment). err (errlen bytes,
 * may be NULL) gets a one-line reason on failure. *f is only meaningful on
 * success. */
int keep_fenced_decode(const char *buf, size_t len, struct keep_fence *f, char *err, size_t errlen);

/* May an application commit a fenced object at this store key? Not under
 * keep's own names: a key whose first segment is nodes, owners, leases,
 * wal, snapshot, probe, cluster or apps (the node leases, the records, the
 * markers, the segment keys the upgrade seeds generations from, the
 * store probe's scratch keys, the cluster object, the application roots
 * of ADR 0022: an object of the default root there would be another
 * root's key; on the fs store a file
 * named like one of those directories would also block it). The key's
 * syntax is the store's (keep_key_valid, store/store.h), checked apart.
 * NULL is refused. true when allowed; false with a static reason in *why
 * (may be NULL). */
bool keep_fenced_object_allowed(const char *object, const char **why);

#endif
