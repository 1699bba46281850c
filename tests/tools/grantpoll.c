/* grantpoll — owner-check's decision (lib/local/holds.c keep_grant_now, the very
 * function cmd/owner-check.c answers with), taken every INTERVAL ms for MS
 * ms in one process, so a clock test samples a grant far more often than
 * by starting a sanitizer-built owner-check each time.
 *
 *   grantpoll STATE_DIR NODE KEY GENERATION MS INTERVAL_MS
 *
 * One line per check: "<wall ms before> <wall ms after> NODE <exit code as
 * owner-check's> <boot ms before> <boot ms after>", the wall and boot
 * (CLOCK_BOOTTIME, the clock of the lease state file's valid_until_ms)
 * times read with raw system calls (never shifted by
 * tests/preload/clockshim.c, so lines from processes under different
 * offsets compare). Exit 0, or 100 on a usage error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/local/holds.h"

static int64_t real_ms(clockid_t c)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, c, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t real_wall_ms(void)
{
	return real_ms(CLOCK_REALTIME);
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
		int64_t b0 = real_ms(CLOCK_BOOTTIME), t0 = real_wall_ms();
		int code = keep_grant_now(dir, argv[3], gen, &g, NULL);
		int64_t t1 = real_wall_ms(), b1 = real_ms(CLOCK_BOOTTIME);

		printf("%lld %lld %s %d %lld %lld\n", (long long)t0, (long long)t1, argv[2], code,
		       (long long)b0, (long long)b1);
		struct timespec pause = {(time_t)(every / 1000), (long)(every % 1000) * 1000000};

		nanosleep(&pause, NULL);
	}
	return 0;
}
