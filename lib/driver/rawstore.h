/* keep — keep-store's operations (docs/store.md; process glue): each
 * prints keep-store's answer line on stdout, its diagnostics on stderr,
 * and returns keep-store's exit code (docs/exit-codes.md: 0; 1 a refusal
 * or not found; the outcome's code otherwise); a local refusal (an
 * invalid key or prefix) exits 100, a local failure 111. s is borrowed;
 * b is a caller-owned line buffer (keep_buf_init'ed, KEEP_LINE_MAX * 2). */
#ifndef KEEP_RAWSTORE_H
#define KEEP_RAWSTORE_H

#include "../base/buf.h"
#include "../base/vocab.h"
#include "../store/store.h"

/* What deleting key by hand breaks, one line for the refusal (issue 23
 * item 6; docs/operations.md "Deleting objects by hand"), or NULL when
 * nothing: keep_hand_delete_judge worded. A static string. */
const char *keep_rawstore_del_breaks(const char *key);

/* get KEY: the body, exactly, on stdout. */
int keep_rawstore_get(struct keep_store *s, const char *key);
/* stat KEY: `object key=K version=V`. */
int keep_rawstore_stat(struct keep_store *s, const char *key, struct keep_buf *b);
/* put KEY <BODY: stdin (at most KEEP_BODY_MAX bytes) under cond (if_match:
 * the version for KEEP_COND_IF_MATCH, else NULL); `put key=K outcome=O
 * version=V`. */
int keep_rawstore_put(struct keep_store *s, const char *key, enum keep_cond cond,
		      const char *if_match, struct keep_buf *b);
/* del KEY [If-Match if_match]: `del key=K outcome=O`. */
int keep_rawstore_del(struct keep_store *s, const char *key, const char *if_match,
		      struct keep_buf *b);
/* list PREFIX: one `object key=K version=V` per key; skipped keys warned. */
int keep_rawstore_list(struct keep_store *s, const char *prefix, struct keep_buf *b);

#endif
