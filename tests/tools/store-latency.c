/* store-latency — median latency of one kind of store request, on one
 * kept-alive connection or on a new connection each time (bench/s3-latency.sh,
 * tests/bats/0112-s3-kept-alive.bats; docs/performance.md "Kept-alive S3
 * requests").
 *
 *   store-latency --store URL [--op get|head|put|list] [-n N] [--fresh]
 *                 [--no-quickack] [--key KEY] [-v]
 *
 * Writes KEY once (get, head), then makes N requests through the store
 * interface: with one store handle (libcurl keeps its connection alive), or
 * with --fresh a new handle per request (a new connection each time).
 * --no-quickack turns off the S3 backend's TCP_QUICKACK (keep_s3_quickack),
 * to measure keep as it was before. Prints one line:
 *   latency op=OP mode=kept-alive|fresh quickack=on|off n=N median_us=M
 *           p90_us=P min_us=A max_us=B failed=F
 * and with -v each request's time on stderr. Credentials and endpoint come
 * from the environment, as for every command. Exit 0, or 1 when a request
 * failed, 100 on usage. */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/base/buf.h"
#include "../../lib/base/exitcode.h"
#include "../../lib/platform/clock.h"
#include "../../lib/store/s3_internal.h"
#include "../../lib/store/store.h"

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

static struct keep_store *open_store(const char *url)
{
	struct keep_store *s;
	char err[512];

	if (keep_store_open(url, NULL, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "store-latency: unable to open store '%s': %s\n", url, err);
		exit(KEEP_EXIT_TEMP);
	}
	return s;
}

/* One request of op; true when it was answered as expected. */
static bool request(struct keep_store *s, const char *op, const char *key)
{
	static const char body[] = "store-latency\n";
	struct keep_reply r;
	struct keep_buf b;
	struct keep_list l;
	bool ok;

	if (strcmp(op, "get") == 0) {
		keep_buf_init(&b, KEEP_BODY_MAX);
		keep_store_get(s, key, &b, &r);
		keep_buf_release(&b);
	} else if (strcmp(op, "head") == 0) {
		keep_store_head(s, key, &r);
	} else if (strcmp(op, "put") == 0) {
		keep_store_put(s, key, body, sizeof(body) - 1, KEEP_COND_NONE, NULL, &r);
	} else {
		keep_list_init(&l);
		keep_store_list(s, "bench/", &l, &r);
		keep_list_release(&l);
	}
	ok = r.outcome == KEEP_STORE_OK;
	if (!ok)
		fprintf(stderr, "store-latency: %s %s: %s: %s\n", op, key,
			keep_outcome_name(r.outcome), r.detail);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'}, {"op", required_argument, NULL, 'o'},
	    {"fresh", no_argument, NULL, 'f'},	     {"no-quickack", no_argument, NULL, 'q'},
	    {"key", required_argument, NULL, 'k'},   {NULL, 0, NULL, 0}};
	const char *url = NULL, *op = "get", *key = "bench/latency";
	bool fresh = false, verbose = false;
	struct keep_store *s = NULL;
	int64_t *t;
	long n = 50, i, failed = 0;
	int c;

	while ((c = getopt_long(argc, argv, "n:v", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			url = optarg;
			break;
		case 'o':
			op = optarg;
			break;
		case 'f':
			fresh = true;
			break;
		case 'q':
			keep_s3_quickack = false;
			break;
		case 'k':
			key = optarg;
			break;
		case 'n':
			n = strtol(optarg, NULL, 10);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			return KEEP_EXIT_USAGE;
		}
	}
	if (!url || n < 1 || n > 100000 ||
	    (strcmp(op, "get") && strcmp(op, "head") && strcmp(op, "put") && strcmp(op, "list"))) {
		fprintf(stderr, "usage: store-latency --store URL [--op get|head|put|list] [-n N] "
				"[--fresh] [--no-quickack] [--key KEY] [-v]\n");
		return KEEP_EXIT_USAGE;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return KEEP_EXIT_TEMP;
	s = open_store(url);
	if ((strcmp(op, "get") == 0 || strcmp(op, "head") == 0) && !request(s, "put", key))
		return KEEP_EXIT_NO;
	if (fresh) {
		keep_store_free(s);
		s = NULL;
	}
	for (i = 0; i < n; i++) {
		int64_t t0;

		if (fresh)
			s = open_store(url);
		t0 = now_us();
		if (!request(s, op, key))
			failed++;
		t[i] = now_us() - t0;
		if (fresh) {
			keep_store_free(s);
			s = NULL;
		}
		if (verbose)
			fprintf(stderr, "%ld %lld\n", i, (long long)t[i]);
	}
	keep_store_free(s);
	qsort(t, (size_t)n, sizeof(*t), cmp64);
	printf("latency op=%s mode=%s quickack=%s n=%ld median_us=%lld p90_us=%lld min_us=%lld "
	       "max_us=%lld failed=%ld\n",
	       op, fresh ? "fresh" : "kept-alive", keep_s3_quickack ? "on" : "off", n,
	       (long long)t[n / 2], (long long)t[(n * 9) / 10], (long long)t[0],
	       (long long)t[n - 1], failed);
	free(t);
	return failed ? KEEP_EXIT_NO : KEEP_EXIT_OK;
}
