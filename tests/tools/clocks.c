/* clocks — print this process's clocks, as the code under test reads them
 * (tests/bats/0270-clockshim.bats checks tests/preload/clockshim.c with it).
 *
 *   clocks                     one line: monotonic_ms=.. boottime_ms=..
 *                              realtime_ms=.. gettimeofday_ms=.. time_s=..
 *                              keep_boot_ms=.. keep_wall_ms=.. (lib/platform/clock.c)
 *   clocks sleep CLOCK MS      clock_nanosleep(CLOCK, TIMER_ABSTIME, now + MS)
 *                              where CLOCK is monotonic|boottime|realtime;
 *                              prints slept_ms=.. measured on the kernel's
 *                              own CLOCK_BOOTTIME (a raw system call, which
 *                              no preload can shift)
 *   clocks condwait MS         pthread_cond_timedwait on a condition
 *                              variable set to CLOCK_MONOTONIC, deadline
 *                              now + MS, until it times out; prints
 *                              waited_ms=.. (raw CLOCK_BOOTTIME, as above)
 *                              and wakes=.. (the returns it took)
 * Every form first loads libcurl as an S3 store does (dlopen,
 * lib/store/curlfn_internal.h), so that its clock calls are bound as in a
 * command that talks to S3 (0270 checks they bind to the shim).
 * exit 0, or 100 on a usage error; 111 when libcurl cannot be loaded. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/platform/clock.h"
#include "../../lib/store/curlfn_internal.h"

static int64_t ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t raw_boot_ms(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct timeval tv;
	char err[256];

	if (keep_curl_load(err, sizeof(err)) != 0) {
		fprintf(stderr, "clocks: %s\n", err);
		return 111;
	}
	if (argc == 1) {
		gettimeofday(&tv, NULL);
		printf("monotonic_ms=%lld boottime_ms=%lld realtime_ms=%lld gettimeofday_ms=%lld "
		       "time_s=%lld keep_boot_ms=%lld keep_wall_ms=%lld\n",
		       (long long)ms(CLOCK_MONOTONIC), (long long)ms(CLOCK_BOOTTIME),
		       (long long)ms(CLOCK_REALTIME),
		       (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000, (long long)time(NULL),
		       (long long)keep_boot_ms(), (long long)keep_wall_ms());
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "sleep") == 0) {
		clockid_t id;
		struct timespec ts;
		int64_t t0, d = strtoll(argv[3], NULL, 10);

		if (strcmp(argv[2], "monotonic") == 0)
			id = CLOCK_MONOTONIC;
		else if (strcmp(argv[2], "boottime") == 0)
			id = CLOCK_BOOTTIME;
		else if (strcmp(argv[2], "realtime") == 0)
			id = CLOCK_REALTIME;
		else
			return 100;
		t0 = raw_boot_ms();
		clock_gettime(id, &ts);
		ts.tv_sec += d / 1000;
		ts.tv_nsec += (d % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		while (clock_nanosleep(id, TIMER_ABSTIME, &ts, NULL) != 0)
			;
		printf("slept_ms=%lld\n", (long long)(raw_boot_ms() - t0));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "condwait") == 0) {
		pthread_condattr_t ca;
		pthread_cond_t cv;
		pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
		struct timespec ts;
		int64_t t0, d = strtoll(argv[2], NULL, 10);
		long wakes = 0;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&cv, &ca);
		t0 = raw_boot_ms();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += d / 1000;
		ts.tv_nsec += (d % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&mu);
		while (wakes++ < 1000000 && pthread_cond_timedwait(&cv, &mu, &ts) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&mu);
		printf("waited_ms=%lld wakes=%ld\n", (long long)(raw_boot_ms() - t0), wakes);
		return 0;
	}
	fprintf(stderr, "usage: clocks [sleep monotonic|boottime|realtime MS | condwait MS]\n");
	return 100;
}
