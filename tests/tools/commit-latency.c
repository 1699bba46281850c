/* commit-latency — the fenced commit against a plain conditional PUT, in
 * one process on one kept-alive store connection (bench/commit.sh; docs/
 * performance.md "The fenced commit"; issue 26).
 *
 *   commit-latency --store URL [-n N]
 *
 * Three modes, their requests interleaved (put, commit, if-version, put,
 * ...) so that they share whatever load the machine and the server carry:
 *   put         keep_store_put If-Match the last version of bench/plain
 *               (a plain conditional write of the same bytes' size)
 *   commit      keep_commit_fenced of bench/fenced (the read, then the
 *               write If-Match the version read)
 *   if-version  keep_commit_fenced with the version the last commit answered
 *               (one write)
 * The grant check of the commits comes from a callback (a runtime that
 * holds its grant in memory: keep_commit_grant_fn) that says valid, so only
 * the store is measured. Counts the requests of each mode (keep_store_counted).
 * Prints one line per mode:
 *   latency mode=M n=N median_us=U p90_us=P requests=R get=G put=P failed=F
 * and `ratio commit=X if_version=Y` (medians over put's). Exit 0, 1 when a
 * request failed, 100 usage, 111 the store cannot be opened. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/base/exitcode.h"
#include "../../lib/driver/commit.h"
#include "../../lib/local/metrics.h"
#include "../../lib/store/store.h"

#define INST "0123456789abcdef0123456789abcdef"

enum { M_PUT = 0, M_COMMIT, M_IFV, M_N };
static const char *const mode_name[M_N] = {"put", "commit", "if-version"};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The grant: this process holds t/c/bench at generation 1, its lease valid. */
static int grant_valid(void *arg, const char *key, struct keep_grant_facts *f)
{
	(void)arg;
	(void)key;
	memset(f, 0, sizeof(*f));
	snprintf(f->lease_instance, sizeof(f->lease_instance), "%s", INST);
	snprintf(f->hold.instance, sizeof(f->hold.instance), "%s", INST);
	f->in.have_hold = true;
	f->in.hold_instance = f->hold.instance;
	f->in.hold_generation = 1;
	f->in.lease_instance = f->lease_instance;
	f->in.lease_valid = true;
	return KEEP_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
					     {NULL, 0, NULL, 0}};
	static char data[64];
	const char *url = NULL;
	struct keep_store *inner, *s[M_N];
	struct keep_reqstats st[M_N];
	struct keep_commit_opts o;
	struct keep_commit_result res;
	struct keep_reply r;
	char err[512], pv[KEEP_VERSION_MAX], cv[KEEP_VERSION_MAX];
	int64_t *t[M_N], t0;
	long n = 50, i, failed[M_N] = {0};
	int c, m;

	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		if (c == 's')
			url = optarg;
		else if (c == 'n')
			n = strtol(optarg, NULL, 10);
		else
			return KEEP_EXIT_USAGE;
	}
	if (!url || n < 1 || n > 100000) {
		fprintf(stderr, "usage: commit-latency --store URL [-n N]\n");
		return KEEP_EXIT_USAGE;
	}
	for (m = 0; m < M_N; m++) {
		keep_reqstats_init(&st[m]);
		if (keep_store_open(url, NULL, &inner, err, sizeof(err)) != 0 ||
		    keep_store_counted(inner, &st[m], &s[m]) != 0) {
			fprintf(stderr, "commit-latency: unable to open store '%s': %s\n", url,
				err);
			return KEEP_EXIT_TEMP;
		}
		t[m] = calloc((size_t)n, sizeof(int64_t));
		if (!t[m])
			return KEEP_EXIT_TEMP;
	}
	memset(&o, 0, sizeof(o));
	o.grant = grant_valid;
	/* the first version of each object (not measured) */
	memset(data, 'x', sizeof(data));
	keep_store_put(s[M_PUT], "bench/plain", data, sizeof(data), KEEP_COND_NONE, NULL, &r);
	snprintf(pv, sizeof(pv), "%s", r.version);
	keep_commit_fenced(s[M_IFV], "t/c/bench", 1, "bench/fenced", data, sizeof(data), &o, &res);
	snprintf(cv, sizeof(cv), "%s", res.version);
	if (r.outcome != KEEP_STORE_OK || res.kind != KEEP_CR_COMMITTED) {
		fprintf(stderr, "commit-latency: the first writes failed\n");
		return KEEP_EXIT_NO;
	}
	keep_reqstats_init(&st[M_PUT]);
	keep_reqstats_init(&st[M_IFV]);
	for (i = 0; i < n; i++) {
		snprintf(data, sizeof(data), "%063ld", i); /* new bytes every time */
		t0 = now_us();
		keep_store_put(s[M_PUT], "bench/plain", data, sizeof(data) - 1, KEEP_COND_IF_MATCH,
			       pv, &r);
		t[M_PUT][i] = now_us() - t0;
		if (r.outcome == KEEP_STORE_OK)
			snprintf(pv, sizeof(pv), "%s", r.version);
		else
			failed[M_PUT]++;
		t0 = now_us();
		keep_commit_fenced(s[M_COMMIT], "t/c/bench", 1, "bench/fenced", data,
				   sizeof(data) - 1, &o, &res);
		t[M_COMMIT][i] = now_us() - t0;
		failed[M_COMMIT] += res.kind != KEEP_CR_COMMITTED;
		/* the commit above moved the object: if-version follows it */
		if (res.kind == KEEP_CR_COMMITTED)
			snprintf(cv, sizeof(cv), "%s", res.version);
		o.if_version = cv;
		data[0] = 'v';
		t0 = now_us();
		keep_commit_fenced(s[M_IFV], "t/c/bench", 1, "bench/fenced", data, sizeof(data) - 1,
				   &o, &res);
		t[M_IFV][i] = now_us() - t0;
		o.if_version = NULL;
		failed[M_IFV] += res.kind != KEEP_CR_COMMITTED;
	}
	for (m = 0; m < M_N; m++) {
		qsort(t[m], (size_t)n, sizeof(int64_t), cmp64);
		printf("latency mode=%s n=%ld median_us=%" PRId64 " p90_us=%" PRId64
		       " requests=%.2f get=%.2f put=%.2f failed=%ld\n",
		       mode_name[m], n, t[m][n / 2], t[m][(n * 9) / 10],
		       (double)keep_reqstats_total(&st[m]) / (double)n,
		       (double)keep_reqstats_op(&st[m], KEEP_REQ_GET) / (double)n,
		       (double)keep_reqstats_op(&st[m], KEEP_REQ_PUT) / (double)n, failed[m]);
	}
	printf("ratio commit=%.2f if_version=%.2f\n",
	       (double)t[M_COMMIT][n / 2] / (double)(t[M_PUT][n / 2] ? t[M_PUT][n / 2] : 1),
	       (double)t[M_IFV][n / 2] / (double)(t[M_PUT][n / 2] ? t[M_PUT][n / 2] : 1));
	keep_store_del(s[M_PUT], "bench/plain", NULL, &r);
	keep_store_del(s[M_PUT], "bench/fenced", NULL, &r);
	for (m = 0; m < M_N; m++) {
		keep_store_free(s[m]);
		free(t[m]);
	}
	return failed[M_PUT] + failed[M_COMMIT] + failed[M_IFV] ? KEEP_EXIT_NO : KEEP_EXIT_OK;
}
