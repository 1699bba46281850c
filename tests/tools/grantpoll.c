/* grantpoll — owner-check's decision (lib/holds.c keep_grant_now, the very
 * function cmd/owner-check.c answers with), taken every INTERVAL ms for MS
 * ms in one process, so a clock test samples a grant far more often than
 * by starting a sanitizer-built owner-check each time.
 *
 *   grantpoll STATE_DIR NODE KEY GENERATION MS INTERVAL_MS
 *
 * One line per check: "<wall ms before> <wall ms after> NODE <exit code as
 * owner-check's>", the wall times read with a raw system call (never
 * shifted by tests/preload/clockshim.c, so lines from processes under
 * different offsets compare). Exit 0, or 100 on a usage error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/holds.h"

static int64_t real_wall_ms(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	char dir[4096];
	int64_t end, every, gen;

	if (argc != 7) {
		fprintf(stderr, "usage: grantpoll STATE_DIR NODE KEY GENERATION MS INTERVAL_MS\n");
		return 100;
	}
	snprintf(dir, sizeof(dir), "%s/%s", argv[1], argv[2]);
	gen = strtoll(argv[4], NULL, 10);
	end = real_wall_ms() + strtoll(argv[5], NULL, 10);
	every = strtoll(argv[6], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (real_wall_ms() < end) {
		enum keep_grant g;
		int64_t t0 = real_wall_ms();
		int code = keep_grant_now(dir, argv[3], gen, &g, NULL);

		printf("%lld %lld %s %d\n", (long long)t0, (long long)real_wall_ms(), argv[2],
		       code);
		struct timespec pause = {(time_t)(every / 1000), (long)(every % 1000) * 1000000};

		nanosleep(&pause, NULL);
	}
	return 0;
}
