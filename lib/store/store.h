/* keep — the store interface (docs/store.md, docs/design.md).
 *
 * One interface, several backends chosen by URL:
 *   file:///abs/dir          the embedded default (store/fs.c)
 *   s3://bucket[/prefix]     any S3-compatible store (store/s3.c)
 * and, in test builds (KEEP_FAULT_INJECTION), a fault-injecting wrapper
 * around either (store/fault.c), switched on by $KEEP_FAULT_FILE.
 *
 * Every request's result is classified (struct keep_reply.outcome) because
 * the protocol depends on it. The store layer NEVER retries a conditional
 * write by itself: a conflict after a retry could hide our own earlier
 * write, and only the protocol's re-read rules (ADR 0020 §1, §3) may judge
 * that. Reads may be retried internally by a backend.
 *
 * Return values: every operation returns 0 when a request was made or
 * decided and its outcome is in *reply, or a negative enum keep_err for a
 * local refusal before anything was sent (KEEP_ERR_INVAL for a bad key or
 * argument, KEEP_ERR_NOMEM); in that case nothing was sent or written. The
 * keep_store_* calls fill *reply in BOTH cases (a local refusal is REFUSED,
 * its detail naming the error), so a caller that only needs the outcome
 * reads the reply and may ignore the return value. */
#ifndef KEEP_STORE_H
#define KEEP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/vocab.h"

#define KEEP_KEY_MAX 1024     /* bytes, NUL excluded: longest key accepted */
#define KEEP_BODY_MAX 65536   /* bytes: largest object body read or written */
#define KEEP_LIST_MAX 1000000 /* entries: largest listing accepted */

/* enum keep_outcome, enum keep_cond, keep_outcome_name, KEEP_VERSION_MAX
 * and KEEP_DETAIL_MAX are the shared vocabulary (../vocab.h). */

struct keep_reply {
	enum keep_outcome outcome;
	char
	    version[KEEP_VERSION_MAX]; /* OK on get/head/put: the object's version token; else "" */
	int status;		       /* HTTP status, or 0 when none (fs, timeout, reset) */
	char detail[KEEP_DETAIL_MAX];  /* one-line reason for anything but OK; never a secret */
	/* REFUSED on get/head only: the object exists, but it can be no
	 * object of keep's (over KEEP_BODY_MAX; on fs, a file not in keep's
	 * format). Readers report it as not ours (exit 17, as for a body that
	 * does not decode), never as a store failure: retrying cannot help. */
	bool not_ours;
	/* the store throttled the request (S3 503 SlowDown or any 503, 429:
	 * lib/core/throttle.h keep_throttle_reply), beside the outcome, which
	 * stays AMBIGUOUS for the protocol's decisions (a throttled PUT may
	 * have been applied on some stores: docs/s3.md "Throttling"); counted
	 * in keep_store_throttled_total{op} and backed off by the counting
	 * wrapper (metrics.h keep_store_counted) */
	bool throttled;
};

struct keep_list_entry {
	char *key;			/* owned by the list; full key (prefix included) */
	char version[KEEP_VERSION_MAX]; /* the listed version token */
};

#define KEEP_LIST_SKIP_NAMED 4	/* skipped entries of a listing remembered by name */
#define KEEP_LIST_SKIP_TEXT 200 /* bytes, NUL included: a skipped key as printed */
#define KEEP_LIST_SKIP_WHY 64	/* bytes, NUL included: why it was skipped */

/* An entry a listing left out: a key keep cannot use (a control byte, a
 * NUL, too long, not under the prefix) or an entry it cannot read (its
 * version token). The key is kept escaped as a stdout line value
 * (keep_line_value), cut with "..." when longer than KEEP_LIST_SKIP_TEXT. */
struct keep_list_skip {
	char key[KEEP_LIST_SKIP_TEXT];
	char why[KEEP_LIST_SKIP_WHY];
};

struct keep_list {
	struct keep_list_entry *v; /* owned; sorted by key (bytewise) */
	size_t n, alloc;
	/* Foreign entries left out of v (reported, never failing the
	 * listing): how many, and the first KEEP_LIST_SKIP_NAMED by name.
	 * Folder markers (zero-byte keys ending in '/') are ignored, not
	 * counted here (docs/formats.md). */
	size_t nskipped;
	struct keep_list_skip skipped[KEEP_LIST_SKIP_NAMED];
};

void keep_list_init(struct keep_list *l);
/* Free every entry and the array; the list is empty afterwards. */
void keep_list_release(struct keep_list *l);
/* Append a copy of key with version. 0, KEEP_ERR_NOMEM, KEEP_ERR_TOOBIG. */
int keep_list_add(struct keep_list *l, const char *key, const char *version);
/* Count a skipped entry: key (keylen bytes, any bytes) and why (static
 * or borrowed text; copied) are remembered while fewer than
 * KEEP_LIST_SKIP_NAMED were. Never fails. */
void keep_list_skip(struct keep_list *l, const void *key, size_t keylen, const char *why);
/* Move the skip records of src after dst's (counts added; names kept
 * while room is left). src's records are cleared. */
void keep_list_merge_skipped(struct keep_list *dst, struct keep_list *src);
/* Sort entries by key (bytewise). */
void keep_list_sort(struct keep_list *l);

/* User metadata of an object: S3's `x-amz-meta-NAME: VALUE` headers
 * (docs/store.md "User metadata"). A copy for people and tools (the AWS
 * CLI's head-object shows it); keep never decides on it: on S3 the version
 * token (ETag) of a plain PUT covers the body only, so metadata is not
 * protected by If-Match (docs/formats.md "Fenced objects"). NAME: 1..63
 * bytes of [a-z0-9-]; VALUE: 0..511 bytes of printable ASCII (0x20..0x7e),
 * no leading or trailing space. The fs store keeps none. */
#define KEEP_META_MAX 4		/* pairs on one object */
#define KEEP_META_NAME_MAX 64	/* bytes, NUL included */
#define KEEP_META_VALUE_MAX 512 /* bytes, NUL included */

struct keep_meta {
	size_t n;
	struct {
		char name[KEEP_META_NAME_MAX];	 /* without the x-amz-meta- prefix, lowercase */
		char value[KEEP_META_VALUE_MAX]; /* as stored */
	} v[KEEP_META_MAX];
};

/* Empty m (the caller's). */
void keep_meta_init(struct keep_meta *m);
/* Add NAME: VALUE to m (both borrowed, copied). 0; KEEP_ERR_INVAL (a name
 * or value outside the rules above; m unchanged); KEEP_ERR_TOOBIG
 * (KEEP_META_MAX pairs already). Store plumbing, no ADR rule: a copy of the
 * fence for people (issue 26). */
int keep_meta_add(struct keep_meta *m, const char *name, const char *value);
/* The value of name in m, or NULL (borrowed from m). */
const char *keep_meta_get(const struct keep_meta *m, const char *name);

struct keep_store;

struct keep_store_ops {
	const char *name; /* "fs", "s3", "fault" */
	/* Versioned GET: body replaced with the object's bytes (at most
	 * KEEP_BODY_MAX; a larger object is REFUSED with a detail saying so). */
	int (*get)(struct keep_store *s, const char *key, struct keep_buf *body,
		   struct keep_reply *reply);
	int (*head)(struct keep_store *s, const char *key, struct keep_reply *reply);
	/* PUT with a condition; if_match is the version token for
	 * KEEP_COND_IF_MATCH and ignored (may be NULL) otherwise. */
	int (*put)(struct keep_store *s, const char *key, const void *body, size_t len,
		   enum keep_cond cond, const char *if_match, struct keep_reply *reply);
	/* DELETE; if_match NULL for unconditional. NB: S3 stores may ignore
	 * If-Match on DELETE (RGW 16 does): the protocol never relies on it. */
	int (*del)(struct keep_store *s, const char *key, const char *if_match,
		   struct keep_reply *reply);
	/* LIST by prefix, every page; out is appended to (caller inits).
	 * A backend that fetches the listing in pages calls s->on_page (when
	 * set) after each page it received (keep_store_set_on_page). */
	int (*list)(struct keep_store *s, const char *prefix, struct keep_list *out,
		    struct keep_reply *reply);
	void (*free)(struct keep_store *s);
	/* PUT with user metadata: put's contract, meta (borrowed, valid by
	 * keep_meta_add's rules) stored with the object where the backend
	 * keeps metadata. NULL: the backend keeps none (fs); the dispatcher
	 * calls put, the metadata dropped. */
	int (*put_meta)(struct keep_store *s, const char *key, const void *body, size_t len,
			enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
			struct keep_reply *reply);
	/* GET that also returns the object's user metadata into *meta (n = 0
	 * when none; names lowercased; a pair keep's rules refuse is left
	 * out). NULL: the dispatcher calls get, meta empty. */
	int (*get_meta)(struct keep_store *s, const char *key, struct keep_buf *body,
			struct keep_meta *meta, struct keep_reply *reply);
};

/* A listing's progress hook: called after each page of a listing a
 * backend received (keep_store_set_on_page). arg is the one given there
 * (borrowed); pages counts the pages received so far in this listing
 * (1, 2, ...). It must not call the store it is the hook of. */
typedef void (*keep_store_on_page_fn)(void *arg, size_t pages);

struct keep_store {
	const struct keep_store_ops *ops;
	void *impl;	    /* backend state, owned by the backend */
	int64_t timeout_ms; /* whole-request bound per call (ms); 0 = backend default */
	/* listing progress hook, or NULL; wrappers pass both down on every
	 * call, as timeout_ms (keep_store_set_on_page) */
	keep_store_on_page_fn on_page;
	void *on_page_arg; /* borrowed */
};

struct keep_store_opts {
	/* S3 only; NULL or "" = from the environment or the default. */
	const char *region;	/* $AWS_REGION, $AWS_DEFAULT_REGION, then us-east-1 */
	const char *endpoint;	/* $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, then AWS */
	const char *addressing; /* "path" or "virtual" ("" = path if endpoint set, else virtual) */
	const char *credentials_file; /* refused if group/other may read it */
	bool tls_insecure;	      /* only honoured for a loopback endpoint */
	int64_t timeout_ms;	      /* default per-request bound (ms); 0 = 10000 */
};

/* Open the store named by url. On success *out is owned by the caller
 * (free with keep_store_free). In test builds, a fault wrapper is put
 * around the backend when $KEEP_FAULT_FILE is set.
 * Errors: KEEP_ERR_INVAL (bad URL), KEEP_ERR_STORE, KEEP_ERR_PERM,
 * KEEP_ERR_NOMEM; err (errlen bytes) then holds a one-line reason. */
int keep_store_open(const char *url, const struct keep_store_opts *opts, struct keep_store **out,
		    char *err, size_t errlen);

/* Check the syntax and kind of a store URL without any I/O: file:///DIR
 * with DIR absolute and at most KEEP_KEY_MAX bytes; s3://BUCKET[/PREFIX]
 * with a valid bucket name and prefix. The one check behind both
 * keep_store_open (which runs it first) and the configuration check
 * (keep_config_check: `--check` refuses what opening would).
 * 0, or KEEP_ERR_INVAL with a one-line reason in err (errlen bytes). */
int keep_store_url_check(const char *url, char *err, size_t errlen);
void keep_store_free(struct keep_store *s);

/* Set the whole-request bound for following calls (ms, > 0). A request
 * that outlives it is AMBIGUOUS. */
void keep_store_set_timeout(struct keep_store *s, int64_t timeout_ms);

/* Have fn(arg, pages) called after each page of every following listing
 * (keep_store_list), in the listing's thread, between its requests: a
 * caller whose liveness is judged by a heartbeat (node-watch's watch
 * file) beats there, so that one long listing of many pages is progress
 * too. fn NULL: no hook. arg is borrowed: it must outlive the listings
 * (or the hook be cleared first). Only paged backends call it: s3 after
 * each ListObjectsV2 page (1000 keys), including the last; fs lists a
 * directory in one go and never calls it. Never fails. Serves the
 * heartbeat listing of ADR 0020 §2 (a watcher that lists must keep
 * being seen to make progress; docs/store.md). */
void keep_store_set_on_page(struct keep_store *s, keep_store_on_page_fn fn, void *arg);

/* Thin dispatchers over s->ops, validating the key first (keep_key_valid).
 * Return and ownership as in struct keep_store_ops; a negative return
 * (nothing sent) also fills *reply as REFUSED "not sent: <error>". */
int keep_store_get(struct keep_store *s, const char *key, struct keep_buf *body,
		   struct keep_reply *reply);
int keep_store_head(struct keep_store *s, const char *key, struct keep_reply *reply);
int keep_store_put(struct keep_store *s, const char *key, const void *body, size_t len,
		   enum keep_cond cond, const char *if_match, struct keep_reply *reply);
int keep_store_del(struct keep_store *s, const char *key, const char *if_match,
		   struct keep_reply *reply);
int keep_store_list(struct keep_store *s, const char *prefix, struct keep_list *out,
		    struct keep_reply *reply);
/* keep_store_put with user metadata meta (borrowed; NULL or empty: none),
 * and keep_store_get returning it into *meta (caller owned; emptied
 * first). On a backend that keeps no metadata (fs) the metadata is dropped
 * and none is returned (docs/store.md "User metadata"). A meta that breaks
 * keep_meta_add's rules is a local refusal (KEEP_ERR_INVAL). */
int keep_store_put_meta(struct keep_store *s, const char *key, const void *body, size_t len,
			enum keep_cond cond, const char *if_match, const struct keep_meta *meta,
			struct keep_reply *reply);
int keep_store_get_meta(struct keep_store *s, const char *key, struct keep_buf *body,
			struct keep_meta *meta, struct keep_reply *reply);

/* keep_store_get for an object keep is about to decode: an object no
 * object of keep's can be (reply->not_ours: over KEEP_BODY_MAX, or a
 * foreign fs file) is answered OK with an empty body, not_ours still set
 * and the detail kept, so the caller's decoder refuses it as not ours
 * (exit 17) instead of the read failing. Otherwise exactly keep_store_get
 * (same return value; reply always filled). body: KEEP_BODY_MAX bytes. */
int keep_store_get_ours(struct keep_store *s, const char *key, struct keep_buf *body,
			struct keep_reply *reply);

/* A key is valid when it is 1..KEEP_KEY_MAX bytes, does not start with
 * '/', has no empty, "." or ".." segment, no NUL (implied), no control
 * byte, no backslash, and is valid for every backend. A prefix for LIST
 * may be "" or end with '/'. Predicates: true when valid. */
bool keep_key_valid(const char *key);
bool keep_prefix_valid(const char *prefix);

/* Set a reply's outcome and printf-style detail; version cleared. */
void keep_reply_set(struct keep_reply *r, enum keep_outcome o, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Backend URL checks (keep_store_url_check dispatches on the scheme; the
 * constructors below run them too): rest is the URL after "scheme://".
 * No I/O. 0 or KEEP_ERR_INVAL with a reason in err. */
int keep_store_fs_url_check(const char *rest, char *err, size_t errlen);
int keep_store_s3_url_check(const char *rest, char *err, size_t errlen);
/* Backend constructors (store.c dispatches on the URL scheme). Same
 * contract as keep_store_open; rest is the URL after "scheme://". */
int keep_store_fs_open(const char *rest, const struct keep_store_opts *opts,
		       struct keep_store **out, char *err, size_t errlen);
int keep_store_s3_open(const char *rest, const struct keep_store_opts *opts,
		       struct keep_store **out, char *err, size_t errlen);
/* ---- an application's root (ADR 0022; docs/ownership.md "Several
 * applications on one cluster") ---- */

/* keep_app_root_valid and KEEP_APP_ROOT_MAX: ../vocab.h */

/* Wrap inner (ownership passes to the wrapper, freed on error too) so that
 * every key but the shared ones is the application root's: KEY is stored
 * at apps/ROOT/KEY, except nodes/... and the cluster object, which every
 * root shares. A LIST of a prefix under the root returns its keys with
 * apps/ROOT/ cut off (the callers see the keys they asked for). root is
 * copied. 0; KEEP_ERR_INVAL (root not valid); KEEP_ERR_NOMEM. A key too
 * long once under the root is refused locally (KEEP_ERR_INVAL, the reply
 * REFUSED), nothing sent. */
int keep_store_app_root(struct keep_store *inner, const char *root, struct keep_store **out);

/* Wrap inner (ownership passes to the wrapper) with the fault injector
 * reading rules from path on every call. Test builds only. */
int keep_store_fault_wrap(struct keep_store *inner, const char *path, struct keep_store **out,
			  char *err, size_t errlen);

#endif
