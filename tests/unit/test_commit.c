/* Unit tests: the fenced object codec (lib/codec/fenced.c) and the fenced commit
 * machine (lib/core/commit.c; issue 26), driven by a small world: one
 * object in a bucket whose version tokens are either unique per write (the
 * fs store) or a hash of the body (S3's ETag), and a grant that a test
 * turns on and off. Each test checks the order of the actions, not only
 * the answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/err.h"
#include "../../lib/base/exitcode.h"
#include "../../lib/codec/fenced.h"
#include "../../lib/codec/sha256.h"
#include "../../lib/core/commit.h"
#include "unit.h"

#define IA "0123456789abcdef0123456789abcdef"
#define KEY "t/c/a"
#define OBJ "app/state"

/* ---- the codec ------------------------------------------------------------------- */

static int enc(const char *key, int64_t gen, const void *d, size_t n, struct keep_buf *b)
{
	keep_buf_init(b, KEEP_FENCED_OBJECT_MAX);
	return keep_fenced_encode(key, gen, d, n, b);
}

TEST(codec_roundtrip)
{
	static const char data[] = "line one\nline\0two\r\n";
	struct keep_buf b;
	struct keep_fence f;
	char err[128];
	char hex[65];

	CHECK_EQ_INT(enc(KEY, 7, data, sizeof(data) - 1, &b), 0);
	CHECK_EQ_INT(keep_fenced_decode(b.data, b.len, &f, err, sizeof(err)), 0);
	CHECK_EQ_STR(f.key, KEY);
	CHECK_EQ_INT(f.generation, 7);
	CHECK_EQ_INT(f.size, sizeof(data) - 1);
	CHECK(memcmp(b.data + f.data_off, data, sizeof(data) - 1) == 0);
	keep_sha256_hex(data, sizeof(data) - 1, hex);
	CHECK_EQ_STR(f.sha256, hex);
	{
		static const char head[] = "wasmkeep-fenced 1\nowner t/c/a\ngeneration 7\nsize 19\n"
					   "sha256 ";

		CHECK(strncmp(b.data, head, sizeof(head) - 1) == 0);
	}
	keep_buf_release(&b);
	/* no data at all */
	CHECK_EQ_INT(enc(KEY, 1, NULL, 0, &b), 0);
	CHECK_EQ_INT(keep_fenced_decode(b.data, b.len, &f, NULL, 0), 0);
	CHECK_EQ_INT(f.size, 0);
	CHECK_EQ_INT(f.data_off, b.len);
	keep_buf_release(&b);
}

TEST(codec_limits)
{
	static char big[KEEP_FENCED_DATA_MAX + 1];
	struct keep_buf b;
	struct keep_fence f;
	char key[KEEP_OWNER_KEY_MAX + 1];

	/* the largest data under the longest key fits in the object limit */
	memset(key, 'k', sizeof(key) - 1);
	key[KEEP_OWNER_SEGMENT_MAX] = '/';
	key[2 * KEEP_OWNER_SEGMENT_MAX + 1] = '/';
	key[KEEP_OWNER_KEY_MAX] = '\0';
	CHECK_EQ_INT(enc(key, KEEP_OWNER_GEN_MAX, big, KEEP_FENCED_DATA_MAX, &b), 0);
	CHECK(b.len <= KEEP_FENCED_OBJECT_MAX);
	CHECK_EQ_INT(keep_fenced_decode(b.data, b.len, &f, NULL, 0), 0);
	keep_buf_release(&b);
	CHECK_EQ_INT(enc(KEY, 1, big, KEEP_FENCED_DATA_MAX + 1, &b), KEEP_ERR_INVAL);
	CHECK_EQ_INT(enc("t/c", 1, "x", 1, &b), KEEP_ERR_INVAL);
	CHECK_EQ_INT(enc(KEY, 0, "x", 1, &b), KEEP_ERR_INVAL);
	CHECK_EQ_INT(enc(KEY, KEEP_OWNER_GEN_MAX + 1, "x", 1, &b), KEEP_ERR_INVAL);
	CHECK_EQ_INT(b.len, 0);
	keep_buf_release(&b);
}

static int dec(const char *s)
{
	struct keep_fence f;

	return keep_fenced_decode(s, strlen(s), &f, NULL, 0);
}

TEST(codec_refusals)
{
	/* sha256 of "hi" */
	const char *h = "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4";
	char ok[512], s[512];

	snprintf(ok, sizeof(ok),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 3\nsize 2\nsha256 %s\nhi", h);
	CHECK_EQ_INT(dec(ok), 0);
	CHECK_EQ_INT(dec("hello\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec(""), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec("wasmkeep-owner 1\nnobody\ngeneration 1\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec("wasmkeep-fenced 2\nowner t/c/a\n"), KEEP_ERR_NOTOURS);
	snprintf(s, sizeof(s), "wasmkeep-fenced 1\nowner t/c\ngeneration 3\nsize 2\nsha256 %s\nhi",
		 h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE);
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 0\nsize 2\nsha256 %s\nhi", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE);
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 03\nsize 2\nsha256 %s\nhi", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE);
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 3\nsize 3\nsha256 %s\nhi", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE); /* size is not the bytes after the header */
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 3\nsize 2\nsha256 %s\nho", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE); /* digest */
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 3\nsize 2\r\nsha256 %s\nhi", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE);
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\ngeneration 3\nowner t/c/a\nsize 2\nsha256 %s\nhi", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE); /* out of order */
	CHECK_EQ_INT(dec("wasmkeep-fenced 1\nowner t/c/a\ngeneration 3\n"), KEEP_ERR_PARSE);
	snprintf(s, sizeof(s),
		 "wasmkeep-fenced 1\nowner t/c/a\ngeneration 3\nsize 2\nsha256 %.63s\nhi", h);
	CHECK_EQ_INT(dec(s), KEEP_ERR_PARSE);
	{
		static char big[KEEP_FENCED_OBJECT_MAX + 1];
		struct keep_fence f;

		memcpy(big, ok, strlen(ok));
		CHECK_EQ_INT(keep_fenced_decode(big, sizeof(big), &f, NULL, 0), KEEP_ERR_TOOBIG);
	}
}

TEST(object_names)
{
	const char *why = NULL;

	CHECK(keep_fenced_object_allowed("app/state", &why));
	CHECK(why == NULL);
	CHECK(keep_fenced_object_allowed("nodesx/y", NULL));
	CHECK(keep_fenced_object_allowed("my/nodes/x", NULL));
	CHECK(keep_fenced_object_allowed("state", NULL));
	CHECK(!keep_fenced_object_allowed("nodes/n1", &why));
	CHECK(why != NULL);
	CHECK(!keep_fenced_object_allowed("nodes", NULL));
	CHECK(!keep_fenced_object_allowed("owners/t/c/a", NULL));
	CHECK(!keep_fenced_object_allowed("leases/t/c/a", NULL));
	CHECK(!keep_fenced_object_allowed("wal/t/c/a/1/x", NULL));
	CHECK(!keep_fenced_object_allowed("snapshot/x", NULL));
	CHECK(!keep_fenced_object_allowed("probe/0123", NULL));
	CHECK(!keep_fenced_object_allowed("cluster", NULL));
	CHECK(!keep_fenced_object_allowed("cluster/x", NULL));
	CHECK(!keep_fenced_object_allowed("", NULL));
	CHECK(!keep_fenced_object_allowed(NULL, NULL));
}

/* ---- the machine ----------------------------------------------------------------- */

enum put_fx {
	PUT_APPLY = 0, /* applied if its condition holds; answered */
	PUT_LOST,      /* applied if its condition holds; the reply lost (ambiguous) */
	PUT_UNSENT,    /* not applied; ambiguous (a timeout before it left) */
	PUT_REFUSED,   /* not applied; refused (403) */
};

struct world {
	bool hash_versions; /* S3: a version is a hash of the body (same bytes, same token) */
	bool exists;
	char body[KEEP_FENCED_OBJECT_MAX + 16];
	size_t len;
	char ver[KEEP_VERSION_MAX];
	int writes;
	/* the grant */
	bool have_hold;
	int64_t hold_gen;
	int lease_code;	   /* 0 valid */
	int grant_fail_at; /* the Nth grant check (1-based) finds the lease lost; 0 never */
	int grants;
	/* scripts */
	enum put_fx put_fx[8];
	int puts;
	bool read_ambiguous[8];
	int reads;
	/* another holder's write that lands right before the Nth put (1-based) */
	int other_before_put;
	const char *other_key;
	int64_t other_gen;
	const char *other_data;
	char log[2048];
	int waits;
};

static void logf_(struct world *w, const char *s)
{
	size_t n = strlen(w->log);

	snprintf(w->log + n, sizeof(w->log) - n, "%s%s", n ? " " : "", s);
}

static void set_object(struct world *w, const void *body, size_t len)
{
	unsigned char md[32];

	memmove(w->body, body, len);
	w->len = len;
	w->exists = true;
	w->writes++;
	if (w->hash_versions) {
		keep_sha256(body, len, md);
		snprintf(w->ver, sizeof(w->ver), "\"%02x%02x%02x%02x%02x%02x\"", md[0], md[1],
			 md[2], md[3], md[4], md[5]);
	} else {
		snprintf(w->ver, sizeof(w->ver), "v%d", w->writes);
	}
}

static void put_fenced(struct world *w, const char *key, int64_t gen, const char *data)
{
	struct keep_buf b;

	keep_buf_init(&b, KEEP_FENCED_OBJECT_MAX);
	keep_fenced_encode(key, gen, data, strlen(data), &b);
	set_object(w, b.data, b.len);
	keep_buf_release(&b);
}

static void world_init(struct world *w, bool hash)
{
	memset(w, 0, sizeof(*w));
	w->hash_versions = hash;
	w->have_hold = true;
	w->hold_gen = 2;
}

static enum keep_outcome cond_ok(const struct world *w, const struct keep_cact *a)
{
	if (a->cond == KEEP_COND_IF_NONE_MATCH && w->exists)
		return KEEP_STORE_CONFLICT;
	if (a->cond == KEEP_COND_IF_MATCH && !w->exists)
		return KEEP_STORE_NOT_FOUND;
	if (a->cond == KEEP_COND_IF_MATCH && strcmp(a->if_match, w->ver) != 0)
		return KEEP_STORE_CONFLICT;
	return KEEP_STORE_OK;
}

/* Run sm to its end in w. */
static void drive(struct keep_commit *sm, struct world *w)
{
	struct keep_cact a;
	struct keep_creply r;
	int64_t now = 1000;
	char s[64];
	int guard = 0;

	for (;;) {
		keep_commit_next(sm, now, &a);
		if (a.kind == KEEP_CACT_DONE || ++guard > 100)
			return;
		memset(&r, 0, sizeof(r));
		switch (a.kind) {
		case KEEP_CACT_WAIT:
			logf_(w, "wait");
			w->waits++;
			now = a.until_mono_ms;
			continue;
		case KEEP_CACT_GRANT:
			w->grants++;
			logf_(w, "grant");
			r.grant.have_hold = w->have_hold;
			r.grant.hold_instance = IA;
			r.grant.hold_generation = w->hold_gen;
			r.grant.lease_instance = IA;
			if (w->grant_fail_at && w->grants >= w->grant_fail_at)
				w->lease_code = KEEP_EXIT_FENCED;
			r.grant.lease_valid = w->lease_code == 0;
			r.lease_code = w->lease_code;
			break;
		case KEEP_CACT_READ: {
			bool amb = w->reads < 8 && w->read_ambiguous[w->reads];

			w->reads++;
			logf_(w, amb ? "read-ambiguous" : "read");
			if (amb) {
				r.outcome = KEEP_STORE_AMBIGUOUS;
				break;
			}
			r.outcome = w->exists ? KEEP_STORE_OK : KEEP_STORE_NOT_FOUND;
			if (w->exists) {
				snprintf(r.version, sizeof(r.version), "%s", w->ver);
				r.body = w->body;
				r.len = w->len;
			}
			break;
		}
		case KEEP_CACT_PUT: {
			enum put_fx fx = w->puts < 8 ? w->put_fx[w->puts] : PUT_APPLY;

			w->puts++;
			if (w->other_before_put == w->puts)
				put_fenced(w, w->other_key ? w->other_key : KEY, w->other_gen,
					   w->other_data);
			snprintf(s, sizeof(s), "put-%s%s",
				 a.cond == KEEP_COND_IF_NONE_MATCH ? "if-none-match"
				 : a.cond == KEEP_COND_IF_MATCH	   ? "if-match"
								   : "uncond",
				 fx == PUT_LOST	    ? "-lost"
				 : fx == PUT_UNSENT ? "-unsent"
						    : "");
			logf_(w, s);
			CHECK_EQ_INT(a.generation, sm->generation);
			if (fx == PUT_UNSENT || fx == PUT_REFUSED) {
				r.outcome =
				    fx == PUT_UNSENT ? KEEP_STORE_AMBIGUOUS : KEEP_STORE_REFUSED;
				break;
			}
			r.outcome = cond_ok(w, &a);
			if (r.outcome == KEEP_STORE_OK) {
				set_object(w, a.body, a.len);
				snprintf(r.version, sizeof(r.version), "%s", w->ver);
			}
			if (fx == PUT_LOST) {
				r.outcome = KEEP_STORE_AMBIGUOUS;
				r.version[0] = '\0';
			}
			break;
		}
		default:
			return;
		}
		keep_commit_on_reply(sm, now, &r);
	}
}

static int commit(struct world *w, struct keep_commit *sm, int64_t gen, const char *data,
		  const char *if_version)
{
	struct keep_commit_cfg c = {.mode = KEEP_COMMIT_WRITE,
				    .key = KEY,
				    .generation = gen,
				    .object = OBJ,
				    .data = data,
				    .len = data ? strlen(data) : 0,
				    .if_version = if_version,
				    .timeout_ms = 1000};
	int rc = keep_commit_init(sm, &c);

	if (!rc)
		drive(sm, w);
	return rc;
}

static void claim(struct world *w, struct keep_commit *sm, int64_t gen)
{
	struct keep_commit_cfg c = {.mode = KEEP_COMMIT_CLAIM,
				    .key = KEY,
				    .generation = gen,
				    .object = OBJ,
				    .timeout_ms = 1000};

	CHECK_EQ_INT(keep_commit_init(sm, &c), 0);
	drive(sm, w);
}

/* The object's fence and data as a string "G:data" (or "absent"). */
static const char *object_is(const struct world *w)
{
	static char out[256];
	struct keep_fence f;

	if (!w->exists)
		return "absent";
	if (keep_fenced_decode(w->body, w->len, &f, NULL, 0))
		return "undecodable";
	snprintf(out, sizeof(out), "%lld:%.*s", (long long)f.generation, (int)f.size,
		 w->body + f.data_off);
	return out;
}

TEST(commit_absent_then_over_a_lower_fence)
{
	struct world w;
	struct keep_commit sm;

	world_init(&w, false);
	CHECK_EQ_INT(commit(&w, &sm, 2, "one", NULL), 0);
	CHECK_EQ_STR(w.log, "grant read grant put-if-none-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_INT(sm.res.exit_code, 0);
	CHECK_EQ_INT(sm.res.generation, 2);
	CHECK_EQ_STR(sm.res.version, w.ver);
	CHECK_EQ_STR(object_is(&w), "2:one");
	keep_commit_release(&sm);

	/* a lower generation's fence is replaced If-Match its version */
	world_init(&w, false);
	put_fenced(&w, KEY, 1, "old");
	CHECK_EQ_INT(commit(&w, &sm, 2, "new", NULL), 0);
	CHECK_EQ_STR(w.log, "grant read grant put-if-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_STR(object_is(&w), "2:new");
	keep_commit_release(&sm);
}

TEST(commit_refused_under_a_later_fence)
{
	struct world w;
	struct keep_commit sm;

	world_init(&w, false);
	put_fenced(&w, KEY, 3, "theirs");
	CHECK_EQ_INT(commit(&w, &sm, 2, "mine", NULL), 0);
	CHECK_EQ_STR(w.log, "grant read");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_REFUSED);
	CHECK_EQ_STR(sm.res.reason, "fenced");
	CHECK_EQ_INT(sm.res.generation, 3);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_SUPERSEDED);
	CHECK_EQ_STR(object_is(&w), "3:theirs");
	keep_commit_release(&sm);
}

TEST(commit_grant_checked_before_read_and_before_send)
{
	struct world w;
	struct keep_commit sm;

	/* not valid at step 1: nothing sent */
	world_init(&w, false);
	w.lease_code = KEEP_EXIT_RAN_OUT;
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_STR(w.log, "grant");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_REFUSED);
	CHECK_EQ_STR(sm.res.reason, "grant-not-valid");
	CHECK_EQ_INT(sm.res.grant, KEEP_GRANT_NOT_VALID);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_RAN_OUT);
	keep_commit_release(&sm);

	/* another generation's hold: exit 1 */
	world_init(&w, false);
	w.hold_gen = 5;
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_INT(sm.res.grant, KEEP_GRANT_OTHER_GEN);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_NO);
	keep_commit_release(&sm);

	/* lost between the read and the send: no PUT */
	world_init(&w, false);
	w.grant_fail_at = 2;
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_STR(w.log, "grant read grant");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_REFUSED);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_FENCED);
	CHECK_EQ_STR(object_is(&w), "absent");
	keep_commit_release(&sm);
}

/* The Kleppmann scenario: the holder of generation 2 passed both grant
 * checks, its PUT is held; generation 3 writes its fence first; the held
 * PUT conflicts, the read shows 3: refused fenced (not grant-not-valid,
 * although the grant is gone too). Same bytes or not, fs or S3 tokens. */
TEST(commit_kleppmann)
{
	const char *other[] = {"theirs", "mine"}; /* the ETag trap: the same bytes */
	struct world w;
	struct keep_commit sm;
	int i, hash;

	for (hash = 0; hash < 2; hash++)
		for (i = 0; i < 2; i++) {
			world_init(&w, hash);
			put_fenced(&w, KEY, 2, "mine"); /* our last commit */
			w.other_before_put = 1;
			w.other_gen = 3;
			w.other_data = other[i];
			w.grant_fail_at = 3; /* fenced meanwhile */
			CHECK_EQ_INT(commit(&w, &sm, 2, "mine2", NULL), 0);
			CHECK_EQ_STR(w.log, "grant read grant put-if-match read");
			CHECK_EQ_INT(sm.res.kind, KEEP_CR_REFUSED);
			CHECK_EQ_STR(sm.res.reason, "fenced");
			CHECK_EQ_INT(sm.res.generation, 3);
			CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_SUPERSEDED);
			CHECK_EQ_STR(object_is(&w), i ? "3:mine" : "3:theirs");
			keep_commit_release(&sm);
		}
}

TEST(commit_lost_reply_read_back)
{
	struct world w;
	struct keep_commit sm;
	char v[KEEP_VERSION_MAX];

	/* landed: the read finds our generation and our bytes */
	world_init(&w, true);
	put_fenced(&w, KEY, 1, "old");
	w.put_fx[0] = PUT_LOST;
	CHECK_EQ_INT(commit(&w, &sm, 2, "new", NULL), 0);
	CHECK_EQ_STR(w.log, "grant read grant put-if-match-lost wait read");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_STR(sm.res.version, w.ver);
	CHECK_EQ_INT(w.writes, 2);
	keep_commit_release(&sm);

	/* not landed: the same write again, If-Match the version read */
	world_init(&w, true);
	put_fenced(&w, KEY, 1, "old");
	snprintf(v, sizeof(v), "%s", w.ver);
	w.put_fx[0] = PUT_UNSENT;
	CHECK_EQ_INT(commit(&w, &sm, 2, "new", NULL), 0);
	CHECK_EQ_STR(w.log, "grant read grant put-if-match-unsent wait read grant put-if-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_STR(object_is(&w), "2:new");
	keep_commit_release(&sm);

	/* our own generation with other bytes is not ours: written again */
	world_init(&w, false);
	put_fenced(&w, KEY, 2, "earlier");
	w.put_fx[0] = PUT_UNSENT;
	CHECK_EQ_INT(commit(&w, &sm, 2, "later", NULL), 0);
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_STR(object_is(&w), "2:later");
	keep_commit_release(&sm);
}

TEST(commit_bounded)
{
	struct world w;
	struct keep_commit sm;
	int i;

	/* ambiguous every time: 4 PUTs at most, then unknown (111) */
	world_init(&w, false);
	for (i = 0; i < 8; i++)
		w.put_fx[i] = PUT_UNSENT;
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_UNKNOWN);
	CHECK_EQ_STR(sm.res.reason, "store");
	CHECK_EQ_INT(sm.res.generation, 2);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_TEMP);
	CHECK(w.puts <= KEEP_COMMIT_ROUNDS);
	CHECK(w.reads <= KEEP_COMMIT_ROUNDS);
	CHECK(w.waits >= 1);
	keep_commit_release(&sm);

	/* reads failing: error store 111, nothing written */
	world_init(&w, false);
	for (i = 0; i < 8; i++)
		w.read_ambiguous[i] = true;
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_ERROR);
	CHECK_EQ_STR(sm.res.reason, "store");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_TEMP);
	CHECK_EQ_INT(w.reads, KEEP_COMMIT_ROUNDS);
	CHECK_EQ_INT(w.puts, 0);
	keep_commit_release(&sm);

	/* refused by the store: 1 */
	world_init(&w, false);
	w.put_fx[0] = PUT_REFUSED;
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_ERROR);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_NO);
	keep_commit_release(&sm);
}

TEST(commit_contention)
{
	struct world w;
	struct keep_commit sm;

	/* another commit of this generation lands before each of ours */
	world_init(&w, false);
	w.other_before_put = 1;
	w.other_gen = 2;
	w.other_data = "racer";
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	/* the second round wins: the racer wrote once */
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_STR(w.log, "grant read grant put-if-none-match read grant put-if-match");
	keep_commit_release(&sm);
}

TEST(commit_refuses_what_it_cannot_read)
{
	struct world w;
	struct keep_commit sm;
	struct keep_creply r;
	struct keep_cact a;

	world_init(&w, false);
	set_object(&w, "plain bytes", 11);
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_STR(sm.res.reason, "not-fenced");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_BAD_OBJECT);
	CHECK_EQ_INT(w.puts, 0);
	keep_commit_release(&sm);

	world_init(&w, false);
	put_fenced(&w, "t/c/b", 1, "x");
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_STR(sm.res.reason, "other-key");
	CHECK_EQ_STR(sm.res.owner, "t/c/b");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_BAD_OBJECT);
	keep_commit_release(&sm);

	world_init(&w, false);
	put_fenced(&w, KEY, 1, "xy");
	w.body[w.len - 1] = 'z'; /* the digest no longer matches */
	CHECK_EQ_INT(commit(&w, &sm, 2, "x", NULL), 0);
	CHECK_EQ_STR(sm.res.reason, "bad-fence");
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_BAD_OBJECT);
	CHECK(sm.res.detail[0] != '\0');
	keep_commit_release(&sm);

	/* an object no object of keep's can be (over the limit): the
	 * driver reads it as OK with not_ours */
	{
		struct keep_commit_cfg c = {.mode = KEEP_COMMIT_WRITE,
					    .key = KEY,
					    .generation = 2,
					    .object = OBJ,
					    .data = "x",
					    .len = 1,
					    .timeout_ms = 1000};

		CHECK_EQ_INT(keep_commit_init(&sm, &c), 0);
		keep_commit_next(&sm, 0, &a);
		memset(&r, 0, sizeof(r));
		r.grant.have_hold = true;
		r.grant.hold_instance = IA;
		r.grant.hold_generation = 2;
		r.grant.lease_instance = IA;
		r.grant.lease_valid = true;
		keep_commit_on_reply(&sm, 0, &r);
		keep_commit_next(&sm, 0, &a);
		CHECK_EQ_INT(a.kind, KEEP_CACT_READ);
		memset(&r, 0, sizeof(r));
		r.outcome = KEEP_STORE_OK;
		r.not_ours = true;
		keep_commit_on_reply(&sm, 0, &r);
		keep_commit_next(&sm, 0, &a);
		CHECK_EQ_INT(a.kind, KEEP_CACT_DONE);
		CHECK_EQ_STR(sm.res.reason, "not-fenced");
		keep_commit_release(&sm);
	}
}

TEST(commit_invalid_config)
{
	struct keep_commit sm;
	struct keep_commit_cfg c = {.mode = KEEP_COMMIT_WRITE,
				    .key = KEY,
				    .generation = 1,
				    .object = "nodes/n1",
				    .timeout_ms = 1000};

	CHECK_EQ_INT(keep_commit_init(&sm, &c), KEEP_ERR_INVAL);
	c.object = OBJ;
	c.generation = 0;
	CHECK_EQ_INT(keep_commit_init(&sm, &c), KEEP_ERR_INVAL);
	c.generation = 1;
	c.len = KEEP_FENCED_DATA_MAX + 1;
	c.data = "x";
	CHECK_EQ_INT(keep_commit_init(&sm, &c), KEEP_ERR_INVAL);
	c.len = 0;
	c.if_version = "";
	CHECK_EQ_INT(keep_commit_init(&sm, &c), KEEP_ERR_INVAL);
	c.if_version = "a\nb";
	CHECK_EQ_INT(keep_commit_init(&sm, &c), KEEP_ERR_INVAL);
	c.if_version = NULL;
	c.key = "t/c";
	CHECK_EQ_INT(keep_commit_init(&sm, &c), KEEP_ERR_INVAL);
	c.key = KEY;
	CHECK_EQ_INT(keep_commit_init(&sm, &c), 0);
	keep_commit_release(&sm);
}

TEST(claim_modes)
{
	struct world w;
	struct keep_commit sm;

	/* absent: created with no bytes */
	world_init(&w, true);
	claim(&w, &sm, 2);
	CHECK_EQ_STR(w.log, "grant read grant put-if-none-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_CLAIMED);
	CHECK_EQ_INT(sm.res.previous, 0);
	CHECK_EQ_STR(object_is(&w), "2:");
	keep_commit_release(&sm);

	/* a lower fence: its bytes kept under ours */
	world_init(&w, true);
	put_fenced(&w, KEY, 1, "state");
	claim(&w, &sm, 2);
	CHECK_EQ_STR(w.log, "grant read grant put-if-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_CLAIMED);
	CHECK_EQ_INT(sm.res.previous, 1);
	CHECK_EQ_STR(object_is(&w), "2:state");
	keep_commit_release(&sm);

	/* already ours: nothing written */
	claim(&w, &sm, 2);
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_CLAIMED);
	CHECK_EQ_INT(sm.res.previous, 2);
	CHECK_EQ_INT(w.writes, 2);
	keep_commit_release(&sm);

	/* a later one: fenced */
	put_fenced(&w, KEY, 3, "state");
	claim(&w, &sm, 2);
	CHECK_EQ_STR(sm.res.reason, "fenced");
	CHECK_EQ_INT(sm.res.generation, 3);
	keep_commit_release(&sm);

	/* the claim's reply lost: the read finds our fence */
	world_init(&w, false);
	put_fenced(&w, KEY, 1, "state");
	w.put_fx[0] = PUT_LOST;
	claim(&w, &sm, 2);
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_CLAIMED);
	CHECK_EQ_INT(sm.res.previous, 1);
	CHECK_EQ_STR(sm.res.version, w.ver);
	keep_commit_release(&sm);
}

TEST(if_version)
{
	struct world w;
	struct keep_commit sm;
	char v[KEEP_VERSION_MAX];

	/* unchanged: one PUT, no read */
	world_init(&w, true);
	put_fenced(&w, KEY, 2, "one");
	snprintf(v, sizeof(v), "%s", w.ver);
	CHECK_EQ_INT(commit(&w, &sm, 2, "two", v), 0);
	CHECK_EQ_STR(w.log, "grant put-if-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	CHECK_EQ_STR(object_is(&w), "2:two");
	keep_commit_release(&sm);

	/* moved on (another commit of ours): refused changed, the version named */
	w.log[0] = '\0';
	CHECK_EQ_INT(commit(&w, &sm, 2, "three", v), 0);
	CHECK_EQ_STR(w.log, "grant put-if-match read");
	CHECK_EQ_STR(sm.res.reason, "changed");
	CHECK_EQ_STR(sm.res.version, w.ver);
	CHECK_EQ_INT(sm.res.exit_code, KEEP_EXIT_NO);
	CHECK_EQ_STR(object_is(&w), "2:two");
	keep_commit_release(&sm);

	/* a later holder's fence: fenced */
	snprintf(v, sizeof(v), "%s", w.ver);
	put_fenced(&w, KEY, 3, "two"); /* the same bytes: the ETag differs anyway */
	CHECK(strcmp(v, w.ver) != 0);
	CHECK_EQ_INT(commit(&w, &sm, 2, "three", v), 0);
	CHECK_EQ_STR(sm.res.reason, "fenced");
	keep_commit_release(&sm);

	/* lost reply: read back as ours */
	world_init(&w, false);
	put_fenced(&w, KEY, 2, "one");
	snprintf(v, sizeof(v), "%s", w.ver);
	w.put_fx[0] = PUT_LOST;
	CHECK_EQ_INT(commit(&w, &sm, 2, "two", v), 0);
	CHECK_EQ_STR(w.log, "grant put-if-match-lost wait read");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	keep_commit_release(&sm);

	/* not sent: still at V, the same write again */
	world_init(&w, false);
	put_fenced(&w, KEY, 2, "one");
	snprintf(v, sizeof(v), "%s", w.ver);
	w.put_fx[0] = PUT_UNSENT;
	CHECK_EQ_INT(commit(&w, &sm, 2, "two", v), 0);
	CHECK_EQ_STR(w.log, "grant put-if-match-unsent wait read grant put-if-match");
	CHECK_EQ_INT(sm.res.kind, KEEP_CR_COMMITTED);
	keep_commit_release(&sm);
}

/* The trap the format closes: with S3's tokens (a hash of the body), a
 * fence kept outside the body would leave the version unchanged when the
 * next holder commits the same bytes. In the body, the token differs. */
TEST(etag_trap_closed_by_the_body)
{
	struct world w;
	char v1[KEEP_VERSION_MAX];

	world_init(&w, true);
	put_fenced(&w, KEY, 1, "same");
	snprintf(v1, sizeof(v1), "%s", w.ver);
	put_fenced(&w, KEY, 2, "same");
	CHECK(strcmp(v1, w.ver) != 0);
	/* the same body again: the same token (that is what S3 does) */
	put_fenced(&w, KEY, 1, "same");
	CHECK_EQ_STR(w.ver, v1);
}

/* ---- the rules (commit.h keep_commit_fence_judge, keep_commit_own_write) ---------- */

static void fence_of(const char *key, int64_t gen, const char *data, struct keep_fence *f)
{
	struct keep_buf b;
	char err[128];

	CHECK_EQ_INT(enc(key, gen, data, strlen(data), &b), 0);
	CHECK_EQ_INT(keep_fenced_decode(b.data, b.len, f, err, sizeof(err)), 0);
	keep_buf_release(&b);
}

TEST(a_later_fence_refuses_a_stale_grant)
{
	struct keep_fence f;

	fence_of(KEY, 7, "x", &f);
	CHECK_EQ_INT(keep_commit_fence_judge(&f, KEY, 6), KEEP_CF_FENCED); /* stale */
	CHECK_EQ_INT(keep_commit_fence_judge(&f, KEY, 1), KEEP_CF_FENCED);
	CHECK_EQ_INT(keep_commit_fence_judge(&f, KEY, 7), KEEP_CF_SAME);
	CHECK_EQ_INT(keep_commit_fence_judge(&f, KEY, 8), KEEP_CF_EARLIER);
	CHECK_EQ_INT(keep_commit_fence_judge(&f, KEY, 9007199254740991LL), KEEP_CF_EARLIER);
	/* another key's fence, whatever its generation */
	CHECK_EQ_INT(keep_commit_fence_judge(&f, "t/c/b", 8), KEEP_CF_OTHER_KEY);
	CHECK_EQ_INT(keep_commit_fence_judge(&f, "t/c/b", 6), KEEP_CF_OTHER_KEY);
	CHECK_EQ_INT(keep_commit_fence_judge(&f, "t/c/a/", 7), KEEP_CF_OTHER_KEY);
}

TEST(a_lost_reply_is_read_back_by_generation_and_digest)
{
	struct keep_fence f;
	char hex[65], other[65];

	fence_of(KEY, 5, "payload", &f);
	keep_sha256_hex("payload", 7, hex);
	keep_sha256_hex("payloaD", 7, other);
	CHECK(keep_commit_own_write(&f, 5, 7, hex));
	CHECK(!keep_commit_own_write(&f, 4, 7, hex)); /* another generation */
	CHECK(!keep_commit_own_write(&f, 6, 7, hex));
	CHECK(!keep_commit_own_write(&f, 5, 6, hex));	/* another size */
	CHECK(!keep_commit_own_write(&f, 5, 7, other)); /* other bytes, same size */
	fence_of(KEY, 5, "", &f);			/* an empty write */
	keep_sha256_hex("", 0, hex);
	CHECK(keep_commit_own_write(&f, 5, 0, hex));
	CHECK(!keep_commit_own_write(&f, 5, 0, other));
}

int main(void)
{
	RUN(codec_roundtrip);
	RUN(a_later_fence_refuses_a_stale_grant);
	RUN(a_lost_reply_is_read_back_by_generation_and_digest);
	RUN(codec_limits);
	RUN(codec_refusals);
	RUN(object_names);
	RUN(commit_absent_then_over_a_lower_fence);
	RUN(commit_refused_under_a_later_fence);
	RUN(commit_grant_checked_before_read_and_before_send);
	RUN(commit_kleppmann);
	RUN(commit_lost_reply_read_back);
	RUN(commit_bounded);
	RUN(commit_contention);
	RUN(commit_refuses_what_it_cannot_read);
	RUN(commit_invalid_config);
	RUN(claim_modes);
	RUN(if_version);
	RUN(etag_trap_closed_by_the_body);
	return unit_done();
}
