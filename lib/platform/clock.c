/* keep — the real clocks (clock.h). */
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int64_t ms_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t keep_boot_ms(void)
{
	return ms_of(CLOCK_BOOTTIME);
}

int64_t keep_wall_ms(void)
{
	return ms_of(CLOCK_REALTIME);
}

void keep_clocks_now(int64_t *boot_ms, int64_t *wall_ms)
{
	int64_t b0, w, b1;
	int i;

	for (i = 0;; i++) {
		b0 = keep_boot_ms();
		w = keep_wall_ms();
		b1 = keep_boot_ms();
		if (b1 - b0 <= 1 || i == 4)
			break;
	}
	*boot_ms = b0;
	*wall_ms = w;
}

void keep_sleep_until_boot(int64_t deadline_ms)
{
	struct timespec ts;

	if (deadline_ms <= keep_boot_ms())
		return;
	ts.tv_sec = deadline_ms / 1000;
	ts.tv_nsec = (deadline_ms % 1000) * 1000000;
	/* returns early with EINTR on a signal: the caller's loop re-checks */
	clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &ts, NULL);
}

void keep_mono_timespec_after(int64_t ms, struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	if (ms < 0)
		ms = 0;
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

int64_t keep_mono_ms(void)
{
	return keep_boot_ms();
}

void keep_sleep_until_mono(int64_t deadline_ms)
{
	keep_sleep_until_boot(deadline_ms);
}

void keep_boot_id(char *out, size_t outlen)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	size_t n;

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)outlen, f)) {
		n = strlen(out);
		while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = '\0';
	}
	fclose(f);
}
