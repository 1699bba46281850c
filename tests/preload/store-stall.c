/* store-stall.so — LD_PRELOAD: stop the process (SIGSTOP) at its first
 * fsync of a regular file, the moment a store write on the fs backend holds
 * its key's lock with the new object staged (tests/bats/0111-fs-locks.bats,
 * 0100-store-conformance.bats). With KEEP_STALL_AT=send it stops at its
 * first send(2) instead (the S3 backend, before a request goes out). The
 * test resumes it with SIGCONT or kills it. Writes "stalled PID MS" (MS:
 * the wall clock, ms since the epoch) to $KEEP_STALL_LOG (when set) right
 * before stopping. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int stalled;

static void stall(void)
{
	const char *log = getenv("KEEP_STALL_LOG");
	struct timespec ts;
	char line[96];
	int fd, n;

	if (stalled)
		return;
	stalled = 1;
	if (log && *log) {
		clock_gettime(CLOCK_REALTIME, &ts);
		n = snprintf(line, sizeof(line), "stalled %ld %lld\n", (long)getpid(),
			     (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			if (n > 0 && write(fd, line, (size_t)n) < 0) {
				/* nothing to do */
			}
			close(fd);
		}
	}
	raise(SIGSTOP);
}

static int at_send(void)
{
	const char *at = getenv("KEEP_STALL_AT");

	return at && strcmp(at, "send") == 0;
}

int fsync(int fd)
{
	static int (*real)(int);
	struct stat st;

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	if (!at_send() && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		stall();
	return real(fd);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	static ssize_t (*real)(int, const void *, size_t, int);

	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
	if (at_send())
		stall();
	return real(fd, buf, len, flags);
}
