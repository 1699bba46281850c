/* clockshim — an LD_PRELOAD library that offsets the clocks of one process
 * (tests only; built as build/FLAVOUR/tools/clockshim.so, no sanitizers).
 *
 *   KEEP_CLOCKSHIM_FILE=/path/to/offsets LD_PRELOAD=.../clockshim.so CMD
 *   (sanitizer build: ASAN_OPTIONS=...:verify_asan_link_order=0)
 *
 * The file holds up to three lines, each optional, in any order:
 *   monotonic_ms <signed ms>   added to CLOCK_MONOTONIC (_COARSE, _RAW)
 *   boottime_ms <signed ms>    added to CLOCK_BOOTTIME (_ALARM)
 *   realtime_ms <signed ms>    added to CLOCK_REALTIME (_COARSE, _ALARM), CLOCK_TAI,
 *                              gettimeofday() and time()
 * A missing or unreadable file means no offset. The file is looked at on
 * every clock call (one stat; re-read when its inode, size or mtime
 * changed), so a running process sees a new offset at its next clock
 * read: write it to a temp file and rename it over the old one.
 *
 * What the tests simulate with it:
 *   a suspend of S ms  SIGSTOP the process for S ms (nothing runs), then
 *                      monotonic_ms -= S before SIGCONT: the boot and wall
 *                      clocks went on, the monotonic clock did not, as in
 *                      a real suspend;
 *   a wall step of D   realtime_ms += D (a running process sees the wall
 *                      clock jump by D at its next read).
 *
 * Intercepted: clock_gettime, gettimeofday, time, clock_nanosleep with
 * TIMER_ABSTIME and pthread_cond_timedwait (their deadline, on the shifted
 * clock, is moved back to the real one: the kernel waits on the real
 * clock; the condition variable's clock is the one glibc keeps in bit 1 of
 * __data.__wrefs, set by pthread_condattr_setclock, and the wait is made
 * with pthread_cond_clockwait on that clock). Without the translation a
 * negative monotonic offset (a suspend) puts every deadline of a
 * CLOCK_MONOTONIC condition variable in the past and its waits spin
 * (lib/driver/ownrun.c's resolver, lease-fence's wait for a peer). Relative
 * waits (nanosleep, poll, curl's timeouts) need no change: an offset does
 * not change a duration. NOT translated: sem_timedwait,
 * pthread_cond_clockwait, timerfd/timer_settime with TIMER_ABSTIME; keep's
 * commands do not wait on those. The real clocks are read with raw system calls (no vDSO, no
 * dlsym): safe in a process whose sanitizer runtime intercepts the same
 * functions, and before it is initialised. Every call from the program
 * and its libraries (libcurl, OpenSSL) binds here, since a preloaded
 * library comes before libasan and libc in the lookup order;
 * tests/bats/0270-clockshim.bats checks it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_cond_clockwait */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int lock_word;
static int64_t off_mono, off_boot, off_real; /* ns */
static struct {
	int64_t ino, size, mtime_s, mtime_ns;
	int present;
} seen;
static const char *path;
static int path_done;

static void lock(void)
{
	while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
		;
}

static void unlock(void)
{
	__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

static int64_t parse_signed(const char *s, const char *end)
{
	int64_t v = 0;
	int neg = 0;

	if (s < end && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	while (s < end && *s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return neg ? -v : v;
}

static void parse(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	off_mono = off_boot = off_real = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		static const struct {
			const char *key;
			int64_t *dst;
		} keys[] = {{"monotonic_ms ", &off_mono},
			    {"boottime_ms ", &off_boot},
			    {"realtime_ms ", &off_real}};

		for (size_t i = 0; i < 3; i++) {
			size_t kl = strlen(keys[i].key);

			if ((size_t)(le - p) > kl && memcmp(p, keys[i].key, kl) == 0)
				*keys[i].dst = parse_signed(p + kl, le) * 1000000;
		}
		p = le + 1;
	}
}

/* Re-read the offsets if the file changed. Called under the lock. */
static void refresh(void)
{
	struct stat st;
	char buf[512];
	long fd, n;

	if (!path_done) {
		path = getenv("KEEP_CLOCKSHIM_FILE");
		path_done = 1;
	}
	if (!path || !*path)
		return;
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0) {
		if (seen.present)
			off_mono = off_boot = off_real = 0;
		seen.present = 0;
		return;
	}
	if (seen.present && seen.ino == (int64_t)st.st_ino && seen.size == (int64_t)st.st_size &&
	    seen.mtime_s == (int64_t)st.st_mtim.tv_sec &&
	    seen.mtime_ns == (int64_t)st.st_mtim.tv_nsec)
		return;
	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = syscall(SYS_read, fd, buf, sizeof(buf));
	syscall(SYS_close, fd);
	if (n < 0)
		return;
	parse(buf, (size_t)n);
	seen.present = 1;
	seen.ino = (int64_t)st.st_ino;
	seen.size = (int64_t)st.st_size;
	seen.mtime_s = (int64_t)st.st_mtim.tv_sec;
	seen.mtime_ns = (int64_t)st.st_mtim.tv_nsec;
}

/* The offset (ns) of clock id, after a refresh. */
static int64_t offset_of(clockid_t id)
{
	int64_t o = 0;

	lock();
	refresh();
	switch (id) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_MONOTONIC_RAW:
		o = off_mono;
		break;
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		o = off_boot;
		break;
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_REALTIME_ALARM:
	case CLOCK_TAI:
		o = off_real;
		break;
	default:
		break;
	}
	unlock();
	return o;
}

static void shift(struct timespec *ts, int64_t ns)
{
	int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + ns;

	if (t < 0)
		t = 0;
	ts->tv_sec = (time_t)(t / 1000000000);
	ts->tv_nsec = (long)(t % 1000000000);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int64_t o = offset_of(id);

	if (syscall(SYS_clock_gettime, id, ts) != 0)
		return -1;
	if (o)
		shift(ts, o);
	return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec; /* glibc declares tv nonnull */
	tv->tv_usec = ts.tv_nsec / 1000;
	if (tz)
		memset(tz, 0, sizeof(struct timezone));
	return 0;
}

time_t time(time_t *out)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	if (out)
		*out = ts.tv_sec;
	return ts.tv_sec;
}

int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	struct timespec real = *req;
	long r;

	if (flags & TIMER_ABSTIME)
		shift(&real, -offset_of(id));
	/* glibc's clock_nanosleep returns the error number, not -1 */
	r = syscall(SYS_clock_nanosleep, id, flags, &real, rem);
	return r == 0 ? 0 : errno;
}

/* glibc (2.30 and later): the clock of a condition variable is bit 1 of
 * __data.__wrefs (pthread_cond_common.c, __PTHREAD_COND_CLOCK_MONOTONIC_MASK) */
#ifndef __GLIBC__
#error "clockshim translates glibc's condition variables only"
#endif
int pthread_cond_timedwait(pthread_cond_t *restrict cond, pthread_mutex_t *restrict mutex,
			   const struct timespec *restrict abstime)
{
	unsigned int wrefs = __atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED);
	clockid_t id = (wrefs & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	struct timespec real = *abstime;

	shift(&real, -offset_of(id));
	return pthread_cond_clockwait(cond, mutex, id, &real);
}
