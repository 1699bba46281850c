/* Unit tests: forget's check of a created fence (lib/core/forget.c; ADR
 * 0020 §2 "forget", §6; ADR 0022), driven against a bucket in memory:
 * the default root's owners/, apps/, and each root's owners/. */
#include <stdio.h>
#include <string.h>

#include "../../lib/core/forget.h"
#include "unit.h"

#define KEYS 300

/* One root's owners/: listed keys, and per key who holds it ("" nobody,
 * "?" undecodable, "!" the read fails ambiguous). */
struct root {
	const char *name; /* "" the default */
	const char *key[KEYS];
	const char *holder[KEYS];
	size_t n;
	size_t nskipped;
	enum keep_outcome list_fails; /* OK: it lists */
};

struct bucket {
	struct root root[4];
	size_t nroots;
	char apps[KEYS * 2][64]; /* apps/ listing */
	size_t napps;
	enum keep_outcome apps_fails;
	int lists, reads;
};

static const struct root *find_root(const struct bucket *b, const char *name)
{
	for (size_t i = 0; i < b->nroots; i++)
		if (strcmp(b->root[i].name, name) == 0)
			return &b->root[i];
	return NULL;
}

/* Run the machine to its end against b. */
static void fc_run(struct keep_fcheck *m, struct bucket *b, const char *node)
{
	static struct keep_fcheck_act act;
	const struct root *cur = NULL;
	char listed[KEEP_FCHECK_KEY_MAX + 1];

	keep_fcheck_init(m, node);
	for (int steps = 0; steps < 100000; steps++) {
		keep_fcheck_next(m, &act);
		switch (act.kind) {
		case KEEP_FCHECK_DONE:
			return;
		case KEEP_FCHECK_LIST:
			b->lists++;
			cur = find_root(b, act.root);
			if (!cur || cur->list_fails != KEEP_STORE_OK)
				keep_fcheck_on_list(m, cur ? cur->list_fails : KEEP_STORE_AMBIGUOUS,
						    false, 0, 0, NULL);
			else
				keep_fcheck_on_list(m, KEEP_STORE_OK, false, cur->n, cur->nskipped,
						    cur->nskipped ? "owners/\x01skipped" : NULL);
			break;
		case KEEP_FCHECK_KEY:
			snprintf(listed, sizeof(listed), "owners/%s", cur->key[act.index]);
			keep_fcheck_on_key(m, listed);
			break;
		case KEEP_FCHECK_READ: {
			struct keep_owner_rec rec;
			const char *h = NULL;

			b->reads++;
			for (size_t i = 0; i < cur->n; i++)
				if (strcmp(cur->key[i], act.key) == 0)
					h = cur->holder[i];
			memset(&rec, 0, sizeof(rec));
			rec.generation = 7;
			if (h && strcmp(h, "!") == 0) {
				keep_fcheck_on_read(m, KEEP_STORE_AMBIGUOUS, false, NULL);
			} else if (h && strcmp(h, "?") == 0) {
				keep_fcheck_on_read(m, KEEP_STORE_OK, true, NULL);
			} else {
				rec.held = h && h[0];
				snprintf(rec.node, sizeof(rec.node), "%s", h ? h : "");
				keep_fcheck_on_read(m, KEEP_STORE_OK, false, &rec);
			}
			break;
		}
		case KEEP_FCHECK_LIST_ROOTS:
			b->lists++;
			keep_fcheck_on_list(m, b->apps_fails, false,
					    b->apps_fails == KEEP_STORE_OK ? b->napps : 0, 0, NULL);
			break;
		case KEEP_FCHECK_KEY_ROOT:
			keep_fcheck_on_root(m, b->apps[act.index]);
			break;
		}
	}
	CHECK(!"the check never ended");
}

/* A bucket: the default root (2 records, nobody and n2), roots "a" (2
 * records, listed under apps/ by both keys) and "b" (1 record). */
static void bucket_init(struct bucket *b)
{
	memset(b, 0, sizeof(*b));
	b->root[0] =
	    (struct root){.name = "", .key = {"t/c/x", "t/c/y"}, .holder = {"", "n2"}, .n = 2};
	b->root[1] =
	    (struct root){.name = "a", .key = {"t/c/x", "t/c/z"}, .holder = {"n3", ""}, .n = 2};
	b->root[2] = (struct root){.name = "b", .key = {"u/c/x"}, .holder = {"n2"}, .n = 1};
	b->nroots = 3;
	snprintf(b->apps[0], sizeof(b->apps[0]), "apps/a/owners/t/c/x");
	snprintf(b->apps[1], sizeof(b->apps[1]), "apps/a/owners/t/c/z");
	snprintf(b->apps[2], sizeof(b->apps[2]), "apps/b/owners/u/c/x");
	snprintf(b->apps[3], sizeof(b->apps[3]), "apps/b/other"); /* no root: ignored */
	b->napps = 4;
}

TEST(no_record_of_any_root_names_the_node)
{
	static struct keep_fcheck m;
	struct bucket b;

	bucket_init(&b);
	fc_run(&m, &b, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_CLEAR);
	CHECK(keep_fcheck_fence_removable(&m));
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 0);
	CHECK_EQ_INT((int)m.checked, 5); /* each record once, every root */
	CHECK_EQ_INT((int)m.nroots, 2);	 /* a once, though listed twice */
	CHECK_EQ_INT(b.reads, 5);
	CHECK_EQ_INT(b.lists, 4); /* owners/, apps/, a's, b's */
}

TEST(a_record_of_an_application_root_names_it)
{
	static struct keep_fcheck m;
	struct bucket b;

	bucket_init(&b);
	fc_run(&m, &b, "n3");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_NAMED);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_STR(m.key, "t/c/x");
	CHECK_EQ_STR(m.root, "a");
	CHECK_EQ_INT((int)m.generation, 7);
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 1);
	CHECK_EQ_INT(b.reads, 3); /* the first that names it ends the check */
	bucket_init(&b);
	fc_run(&m, &b, "n2"); /* the default root's own */
	CHECK_EQ_INT(m.res, KEEP_FCHECK_NAMED);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_STR(m.key, "t/c/y");
	CHECK_EQ_STR(m.root, "");
}

TEST(a_record_that_cannot_be_read_keeps_the_fence)
{
	static struct keep_fcheck m;
	struct bucket b;

	bucket_init(&b);
	b.root[2].holder[0] = "?"; /* not ours */
	fc_run(&m, &b, "n9");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_UNREADABLE);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_STR(m.key, "u/c/x");
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 1);
	bucket_init(&b);
	b.root[0].holder[0] = "!"; /* the read fails */
	fc_run(&m, &b, "n9");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_UNREADABLE);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 111);
}

TEST(a_listing_that_skipped_keys_keeps_the_fence)
{
	static struct keep_fcheck m;
	struct bucket b;

	bucket_init(&b);
	b.root[1].nskipped = 2;
	fc_run(&m, &b, "n9");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_SKIPPED);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_INT((int)m.nskipped, 2);
	CHECK_EQ_STR(m.key, "owners/\x01skipped");
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 1);
}

TEST(a_key_that_names_no_record_is_skipped_and_the_walk_goes_on)
{
	static struct keep_fcheck m;
	struct bucket b;

	bucket_init(&b);
	b.root[0].key[0] = "t/c/x/extra";
	fc_run(&m, &b, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_CLEAR);
	CHECK(keep_fcheck_fence_removable(&m));
	CHECK_EQ_INT((int)m.checked, 4);
}

TEST(failed_listings_keep_the_fence_with_their_code)
{
	static struct keep_fcheck m;
	struct bucket b;

	bucket_init(&b);
	b.apps_fails = KEEP_STORE_AMBIGUOUS;
	fc_run(&m, &b, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_FAILED);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK(m.roots_listing);
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 111);
	bucket_init(&b);
	b.root[2].list_fails = KEEP_STORE_REFUSED;
	fc_run(&m, &b, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_FAILED);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK(!m.roots_listing);
	CHECK_EQ_STR(m.root, "b");
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 1);
}

TEST(roots_are_bounded)
{
	static struct keep_fcheck m;
	static struct bucket b;

	bucket_init(&b);
	b.napps = 0;
	for (int i = 0; i < KEEP_FCHECK_ROOTS_MAX + 1; i++)
		snprintf(b.apps[b.napps++], sizeof(b.apps[0]), "apps/r%d/owners/t/c/x", i);
	fc_run(&m, &b, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_TOO_MANY_ROOTS);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_INT(keep_fcheck_exit_code(&m), 1);
	CHECK_EQ_INT(b.lists, 2);	 /* no root walked */
	b.napps = KEEP_FCHECK_ROOTS_MAX; /* exactly the bound: walked (no such roots here) */
	b.lists = 0;
	fc_run(&m, &b, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_FAILED);
	CHECK(!keep_fcheck_fence_removable(&m));
	CHECK_EQ_STR(m.root, "r0");
}

/* The fence goes only at the end of a clear check: a machine not done
 * (its result field still CLEAR, the zero value) keeps it. */
TEST(a_fence_is_removable_only_once_the_check_is_done_and_clear)
{
	static struct keep_fcheck m;

	keep_fcheck_init(&m, "n1");
	CHECK_EQ_INT(m.res, KEEP_FCHECK_CLEAR);
	CHECK(!m.done);
	CHECK(!keep_fcheck_fence_removable(&m));
	keep_fcheck_on_list(&m, KEEP_STORE_OK, false, 0, 0, NULL); /* owners/ empty */
	CHECK(!m.done);						   /* apps/ next */
	CHECK(!keep_fcheck_fence_removable(&m));
	keep_fcheck_on_list(&m, KEEP_STORE_OK, false, 0, 0, NULL); /* no roots */
	CHECK(m.done);
	CHECK(keep_fcheck_fence_removable(&m));
	keep_fcheck_init(&m, "n1");
	keep_fcheck_on_list(&m, KEEP_STORE_OK, false, 0, 0, NULL);
	keep_fcheck_on_list(&m, KEEP_STORE_AMBIGUOUS, false, 0, 0, NULL); /* apps/ fails */
	CHECK(m.done);
	CHECK(!keep_fcheck_fence_removable(&m));
}

int main(void)
{
	RUN(no_record_of_any_root_names_the_node);
	RUN(a_fence_is_removable_only_once_the_check_is_done_and_clear);
	RUN(a_record_of_an_application_root_names_it);
	RUN(a_record_that_cannot_be_read_keeps_the_fence);
	RUN(a_listing_that_skipped_keys_keeps_the_fence);
	RUN(a_key_that_names_no_record_is_skipped_and_the_walk_goes_on);
	RUN(failed_listings_keep_the_fence_with_their_code);
	RUN(roots_are_bounded);
	return unit_done();
}
