/* store-sockopt.so — LD_PRELOAD: log a process's TCP connects and its
 * TCP_QUICKACK / TCP_NODELAY setsockopt calls, one line each, to the file
 * $KEEP_SOCKOPT_LOG (tests/bats/0112-s3-kept-alive.bats):
 *   connect fd=N
 *   setsockopt fd=N TCP_QUICKACK=V | TCP_NODELAY=V
 * Nothing else changes: each call goes to the real one. */
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* what: "connect", "TCP_QUICKACK" or "TCP_NODELAY"; v ignored for connect */
static void logline(const char *what, int fd, int v)
{
	const char *path = getenv("KEEP_SOCKOPT_LOG");
	char line[128];
	int n, lf;

	if (!path || !*path)
		return;
	if (strcmp(what, "connect") == 0)
		n = snprintf(line, sizeof(line), "connect fd=%d\n", fd);
	else
		n = snprintf(line, sizeof(line), "setsockopt fd=%d %s=%d\n", fd, what, v);
	lf = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (lf < 0)
		return;
	if (n > 0 && write(lf, line, (size_t)n) < 0) {
		/* a test log: nothing to do */
	}
	close(lf);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);

	if (!real)
		real =
		    (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
	if (level == IPPROTO_TCP && (name == TCP_QUICKACK || name == TCP_NODELAY) && val &&
	    len >= (socklen_t)sizeof(int))
		logline(name == TCP_QUICKACK ? "TCP_QUICKACK" : "TCP_NODELAY", fd,
			*(const int *)val);
	return real(fd, level, name, val, len);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*real)(int, const struct sockaddr *, socklen_t);

	if (!real)
		real =
		    (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
	if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6))
		logline("connect", fd, 0);
	return real(fd, addr, len);
}
