/* owners-watch — poll several nodes' grant checks of one key and report any
 * moment two of them would let their hold act (issue 18: "both nodes'
 * owner-check never pass together"; docs/testing.md).
 *
 *   owners-watch --state-dir DIR --key KEY --nodes ID[,ID...] [--interval-ms MS]
 *
 * Every MS (default 20) ms, for each node: its hold of KEY (any
 * generation) and keep_grant_now, the whole of owner-check's decision
 * (cmd/owner-check.c only parses and prints around it), each judged on the
 * boot clock read after its files (one poll takes well under a ms; a hold
 * ends ttl + grace before another node may take its record). Two nodes OK at once: prints
 * `two-owners key=K NODE=G NODE=G` and exits 1 at once. On SIGTERM/SIGINT: prints `watch polls=N
 * ok=N` (how many polls, how many found a node OK) and exits 0. Usage
 * errors exit 100. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/base/exitcode.h"
#include "../../lib/local/holds.h"
#include "../../lib/platform/clock.h"

#define MAX_NODES 8

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: owners-watch --state-dir DIR --key KEY --nodes ID[,ID...] "
			"[--interval-ms MS]\n");
	return KEEP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *key = NULL;
	char nodes[MAX_NODES][128], path[MAX_NODES][4096];
	int n = 0, i;
	long interval = 20;
	long long polls = 0, oks = 0;
	struct sigaction sa;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
			dir = argv[++i];
		} else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc) {
			key = argv[++i];
		} else if (strcmp(argv[i], "--interval-ms") == 0 && i + 1 < argc) {
			interval = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
			char *list = argv[++i], *save = NULL, *t;

			for (t = strtok_r(list, ",", &save); t && n < MAX_NODES;
			     t = strtok_r(NULL, ",", &save))
				snprintf(nodes[n++], sizeof(nodes[0]), "%s", t);
		} else {
			return usage();
		}
	}
	if (!dir || !key || n < 2 || interval < 1)
		return usage();
	for (i = 0; i < n; i++)
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, nodes[i]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!stop) {
		int64_t gen[MAX_NODES];
		int ok = 0;
		struct timespec ts = {interval / 1000, (interval % 1000) * 1000000L};

		polls++;
		for (i = 0; i < n; i++) {
			struct keep_hold h;
			enum keep_grant g;

			gen[i] = 0;
			if (keep_hold_read(path[i], key, &h) != 0)
				continue;
			if (keep_grant_now(path[i], key, h.generation, &g, NULL) != KEEP_EXIT_OK)
				continue;
			gen[i] = h.generation;
			ok++;
		}
		if (ok)
			oks++;
		if (ok >= 2) {
			printf("two-owners key=%s", key);
			for (i = 0; i < n; i++)
				if (gen[i])
					printf(" %s=%lld", nodes[i], (long long)gen[i]);
			printf("\n");
			return KEEP_EXIT_NO;
		}
		nanosleep(&ts, NULL);
	}
	printf("watch polls=%lld ok=%lld\n", polls, oks);
	return KEEP_EXIT_OK;
}
