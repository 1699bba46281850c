/* Unit tests: request accounting (lib/local/metrics.c, keep_store_counted): every
 * request through the wrapper is counted by operation and outcome, local
 * refusals are not, the summary line and the metric series agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/base/err.h"
#include "../../lib/local/metrics.h"
#include "../../lib/store/store.h"
#include "unit.h"

static char base[] = "/tmp/keep-test-reqstats-XXXXXX";

static struct keep_store *open_counted(struct keep_reqstats *st)
{
	struct keep_store *s = NULL, *c = NULL;
	char url[300], err[256];

	snprintf(url, sizeof(url), "file://%s", base);
	if (keep_store_open(url, NULL, &s, err, sizeof(err)) != 0) {
		printf("# open %s: %s\n", url, err);
		exit(2);
	}
	if (keep_store_counted(s, st, &c) != 0)
		exit(2);
	return c;
}

TEST(counts_by_op_and_outcome)
{
	struct keep_reqstats st;
	struct keep_store *s;
	struct keep_reply r;
	struct keep_buf body;
	struct keep_list l;
	char v[KEEP_VERSION_MAX];

	keep_reqstats_init(&st);
	s = open_counted(&st);
	keep_buf_init(&body, KEEP_BODY_MAX);
	CHECK_EQ_INT(keep_store_get(s, "a/x", &body, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_store_put(s, "a/x", "1", 1, KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	snprintf(v, sizeof(v), "%s", r.version);
	CHECK_EQ_INT(keep_store_put(s, "a/x", "2", 1, KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_CONFLICT);
	CHECK_EQ_INT(keep_store_put(s, "a/x", "2", 1, KEEP_COND_IF_MATCH, v, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(keep_store_get(s, "a/x", &body, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	keep_list_init(&l);
	CHECK_EQ_INT(keep_store_list(s, "a/", &l, &r), 0);
	CHECK_EQ_INT(l.n, 1);
	keep_list_release(&l);
	/* a bad key is refused locally: nothing sent, nothing counted */
	CHECK(keep_store_get(s, "../x", &body, &r) != 0);

	CHECK_EQ_INT(keep_reqstats_total(&st), 6);
	CHECK_EQ_INT(keep_reqstats_op(&st, KEEP_REQ_GET), 2);
	CHECK_EQ_INT(keep_reqstats_op(&st, KEEP_REQ_PUT), 3);
	CHECK_EQ_INT(keep_reqstats_op(&st, KEEP_REQ_LIST), 1);
	CHECK_EQ_INT(keep_reqstats_outcome(&st, KEEP_STORE_OK), 4);
	CHECK_EQ_INT(keep_reqstats_outcome(&st, KEEP_STORE_CONFLICT), 1);
	CHECK_EQ_INT(keep_reqstats_outcome(&st, KEEP_STORE_NOT_FOUND), 1);

	keep_buf_reset(&body);
	keep_reqstats_format(&st, &body);
	CHECK_EQ_STR(body.data, "stats requests=6 get=2 head=0 put=3 delete=0 list=1 ok=4 "
				"conflict=1 not_found=1 refused=0 ambiguous=0");
	keep_buf_release(&body);
	keep_store_free(s);
}

TEST(timeout_passed_down)
{
	struct keep_reqstats st;
	struct keep_store *s;
	struct keep_reply r;

	keep_reqstats_init(&st);
	s = open_counted(&st);
	keep_store_set_timeout(s, 1234);
	CHECK_EQ_INT(keep_store_head(s, "a/none", &r), 0);
	CHECK_EQ_INT(s->timeout_ms, 1234);
	CHECK_EQ_INT(keep_reqstats_op(&st, KEEP_REQ_HEAD), 1);
	keep_store_free(s);
}

static void count_page(void *arg, size_t pages)
{
	(void)pages;
	++*(int *)arg;
}

/* the listing progress hook is set through the wrapper; fs lists in one
 * go and never calls it (store.h keep_store_set_on_page) */
TEST(on_page_fs_never_called)
{
	struct keep_reqstats st;
	struct keep_store *s;
	struct keep_reply r;
	struct keep_list l;
	int calls = 0;

	keep_reqstats_init(&st);
	s = open_counted(&st);
	keep_store_set_on_page(s, count_page, &calls);
	CHECK(s->on_page == count_page && s->on_page_arg == &calls);
	CHECK_EQ_INT(keep_store_put(s, "p/x", "1", 1, KEEP_COND_NONE, NULL, &r), 0);
	keep_list_init(&l);
	CHECK_EQ_INT(keep_store_list(s, "p/", &l, &r), 0);
	CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
	CHECK_EQ_INT(l.n, 1);
	keep_list_release(&l);
	CHECK_EQ_INT(calls, 0);
	keep_store_set_on_page(s, NULL, &calls);
	CHECK(s->on_page == NULL && s->on_page_arg == NULL);
	keep_store_free(s);
}

TEST(metrics_series)
{
	struct keep_reqstats st;
	struct keep_metrics m;
	int i, found = 0;

	keep_reqstats_init(&st);
	keep_metrics_init(&m, NULL, "n1");
	keep_reqstats_add(&st, KEEP_REQ_LIST, KEEP_STORE_OK);
	keep_reqstats_add(&st, KEEP_REQ_LIST, KEEP_STORE_OK);
	keep_reqstats_add(&st, KEEP_REQ_GET, KEEP_STORE_AMBIGUOUS);
	keep_reqstats_throttled(&st, KEEP_REQ_GET); /* that one was a 503 SlowDown */
	keep_reqstats_to_metrics(&st, &m);
	keep_reqstats_to_metrics(&st, &m); /* values, not increments */
	for (i = 0; i < m.n; i++) {
		if (strcmp(m.s[i].name, "keep_store_throttled_total") == 0) {
			CHECK_EQ_INT(m.s[i].value,
				     strcmp(m.s[i].labels, "op=\"get\"") == 0 ? 1 : 0);
			found += 10;
		}
		if (strcmp(m.s[i].labels, "op=\"list\",outcome=\"ok\"") == 0) {
			CHECK_EQ_INT(m.s[i].value, 2);
			found++;
		}
		if (strcmp(m.s[i].labels, "op=\"get\",outcome=\"ambiguous\"") == 0) {
			CHECK_EQ_INT(m.s[i].value, 1);
			found++;
		}
	}
	CHECK_EQ_INT(found, 2 + 10 * KEEP_REQ_OPS);
	/* the pairs seen, and the throttled counter of every op from 0 */
	CHECK_EQ_INT(m.n, 2 + KEEP_REQ_OPS);
}

int main(void)
{
	char cmd[400];

	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(counts_by_op_and_outcome);
	RUN(timeout_passed_down);
	RUN(on_page_fs_never_called);
	RUN(metrics_series);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", base);
	return unit_done();
}
