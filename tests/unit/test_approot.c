/* Unit tests: application roots (ADR 0022): keep_app_root_valid
 * (lib/base/vocab.c) and the root's store wrapper (store/approot.c) over the fs
 * store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/base/err.h"
#include "../../lib/base/vocab.h"
#include "../../lib/core/cluster.h"
#include "../../lib/store/store.h"
#include "unit.h"

static char base[] = "/tmp/keep-test-approot-XXXXXX";

TEST(root_syntax)
{
	CHECK(keep_app_root_valid("billing"));
	CHECK(keep_app_root_valid("a"));
	CHECK(keep_app_root_valid("0"));
	CHECK(keep_app_root_valid("search-eu_2"));
	CHECK(keep_app_root_valid("abcdefghijklmnopqrstuvwxyz012345"));	  /* 32 bytes */
	CHECK(!keep_app_root_valid("abcdefghijklmnopqrstuvwxyz0123456")); /* 33 */
	CHECK(!keep_app_root_valid(""));
	CHECK(!keep_app_root_valid(NULL));
	CHECK(!keep_app_root_valid("Billing"));
	CHECK(!keep_app_root_valid("-x"));
	CHECK(!keep_app_root_valid("_x"));
	CHECK(!keep_app_root_valid("a/b"));
	CHECK(!keep_app_root_valid(".."));
	CHECK(!keep_app_root_valid("a.b"));
	CHECK(!keep_app_root_valid("a b"));
}

static struct keep_store *open_fs(void)
{
	struct keep_store *s = NULL;
	char err[256];

	if (keep_store_fs_open(base, NULL, &s, err, sizeof(err)) != 0) {
		printf("# open %s: %s\n", base, err);
		exit(2);
	}
	return s;
}

static void put(struct keep_store *s, const char *key, const char *body)
{
	struct keep_reply r;

	keep_store_put(s, key, body, strlen(body), KEEP_COND_IF_NONE_MATCH, NULL, &r);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
}

static bool has(struct keep_store *s, const char *key)
{
	struct keep_reply r;

	keep_store_head(s, key, &r);
	return r.outcome == KEEP_STORE_OK;
}

TEST(keys_under_the_root_nodes_and_cluster_shared)
{
	struct keep_store *raw = open_fs(), *b = NULL, *c = NULL;
	struct keep_list l;
	struct keep_reply r;

	CHECK_EQ_INT(keep_store_app_root(open_fs(), "billing", &b), 0);
	CHECK_EQ_INT(keep_store_app_root(open_fs(), "search", &c), 0);
	put(b, "owners/t/c/a", "b");
	put(c, "owners/t/c/a", "c");
	put(raw, "owners/t/c/a", "default");
	put(b, "nodes/n1", "node");
	put(b, "leases/t/c/a", "mark");
	CHECK(has(raw, "apps/billing/owners/t/c/a"));
	CHECK(has(raw, "apps/search/owners/t/c/a"));
	CHECK(has(raw, "apps/billing/leases/t/c/a"));
	CHECK(has(raw, "nodes/n1")); /* shared: not under the root */
	CHECK(!has(raw, "apps/billing/nodes/n1"));
	CHECK(has(c, "nodes/n1"));
	put(raw, "cluster", "x");
	CHECK(has(b, "cluster"));
	/* a listing under a root: its keys only, apps/ROOT/ cut off */
	keep_list_init(&l);
	keep_store_list(b, "owners/", &l, &r);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(l.n, 1);
	if (l.n == 1)
		CHECK_EQ_STR(l.v[0].key, "owners/t/c/a");
	keep_list_release(&l);
	keep_list_init(&l);
	keep_store_list(b, "", &l, &r);
	CHECK_EQ_INT(l.n, 2); /* leases/t/c/a, owners/t/c/a: not the shared keys */
	keep_list_release(&l);
	keep_list_init(&l);
	keep_store_list(b, "nodes/", &l, &r);
	CHECK_EQ_INT(l.n, 1);
	keep_list_release(&l);
	/* the default root's listing of owners/ never sees a root */
	keep_list_init(&l);
	keep_store_list(raw, "owners/", &l, &r);
	CHECK_EQ_INT(l.n, 1);
	keep_list_release(&l);
	keep_store_free(c);
	/* a root refused: the inner store is freed, nothing opened */
	CHECK_EQ_INT(keep_store_app_root(open_fs(), "Bad", &c), KEEP_ERR_INVAL);
	CHECK(c == NULL);
	keep_store_free(b);
	keep_store_free(raw);
}

/* The core's rule of a root's keys (lib/core/cluster.h): nodes/ and the
 * cluster object shared, everything else under apps/ROOT/. */
TEST(app_root_key_rule)
{
	char out[KEEP_KEY_MAX + 1], small[16];

	CHECK(keep_cluster_key_shared("nodes/n1"));
	CHECK(keep_cluster_key_shared("nodes/"));
	CHECK(keep_cluster_key_shared("cluster"));
	CHECK(!keep_cluster_key_shared("clusters"));
	CHECK(!keep_cluster_key_shared("cluster/x"));
	CHECK(!keep_cluster_key_shared("nodes"));
	CHECK(!keep_cluster_key_shared("owners/t/c/a"));
	CHECK(!keep_cluster_key_shared("apps/billing/nodes/n1"));
	CHECK(!keep_cluster_key_shared(""));

	CHECK_EQ_INT(keep_cluster_app_root_key("billing", "owners/t/c/a", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "apps/billing/owners/t/c/a");
	CHECK_EQ_INT(keep_cluster_app_root_key("billing", "owners/", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "apps/billing/owners/");
	CHECK_EQ_INT(keep_cluster_app_root_key("billing", "leases/t/c/a", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "apps/billing/leases/t/c/a");
	CHECK_EQ_INT(keep_cluster_app_root_key("billing", "nodes/n1", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "nodes/n1");
	CHECK_EQ_INT(keep_cluster_app_root_key("search", "cluster", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "cluster");
	/* two roots never share a record key */
	CHECK_EQ_INT(keep_cluster_app_root_key("search", "owners/t/c/a", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "apps/search/owners/t/c/a");
	/* too long once under the root: refused, whatever fits */
	CHECK_EQ_INT(keep_cluster_app_root_key("billing", "owners/x", small, sizeof(small)),
		     KEEP_ERR_TOOBIG);
	CHECK_EQ_INT(keep_cluster_app_root_key("b", "owners/", small, sizeof(small)), 0);
	CHECK_EQ_STR(small, "apps/b/owners/");
	CHECK_EQ_INT(keep_cluster_app_root_key("b", "owners/x", small, sizeof(small)), 0);
	CHECK_EQ_STR(small, "apps/b/owners/x"); /* 15 bytes + NUL: just fits */
	CHECK_EQ_INT(keep_cluster_app_root_key("b", "owners/xy", small, sizeof(small)),
		     KEEP_ERR_TOOBIG); /* one over */
	CHECK_EQ_INT(keep_cluster_app_root_key("b", "nodes/abcdefghi", small, sizeof(small)), 0);
	CHECK_EQ_INT(keep_cluster_app_root_key("b", "nodes/abcdefghij", small, sizeof(small)),
		     KEEP_ERR_TOOBIG);
}

int main(void)
{
	char cmd[600];
	int rc;

	unsetenv("KEEP_FAULT_FILE");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(root_syntax);
	RUN(keys_under_the_root_nodes_and_cluster_shared);
	RUN(app_root_key_rule);
	rc = unit_done();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		return 2;
	return rc;
}
