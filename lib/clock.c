#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t ms_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t keep_mono_ms(void)
{
	return ms_of(CLOCK_MONOTONIC);
}

int64_t keep_wall_ms(void)
{
	return ms_of(CLOCK_REALTIME);
}

void keep_sleep_until_mono(int64_t deadline_ms)
{
	struct timespec ts;

	if (deadline_ms <= keep_mono_ms())
		return;
	ts.tv_sec = deadline_ms / 1000;
	ts.tv_nsec = (deadline_ms % 1000) * 1000000;
	/* returns early with EINTR on a signal: the caller's loop re-checks */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
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
