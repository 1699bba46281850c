/* keep — a long-running command under keep-agent never outlives it (supervise.h). */
#include "supervise.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../base/err.h"
#include "../base/exitcode.h"
#include "cli.h"

static pid_t parent_at_start; /* 0: not supervised */

void keep_supervised_start(const char *prog)
{
	const char *v = getenv(KEEP_SUPERVISOR_ENV);
	pid_t want, ppid;
	char *end;
	long n;

	if (!v || !*v)
		return;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n <= 1)
		keep_die(KEEP_EXIT_USAGE, prog, "bad %s '%s' (a process id)", KEEP_SUPERVISOR_ENV,
			 v);
	want = (pid_t)n;
	/* out of the agent's process group: a terminal's Ctrl-C is the
	 * agent's to act on (EPERM as a session leader: already apart) */
	(void)setpgid(0, 0);
#ifdef __linux__
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
#endif
	ppid = getppid();
	if (ppid != want) {
		/* the agent ended before the request above (no signal will
		 * come), or something stands between it and us (a wrapper):
		 * then we are tied to that parent instead */
		if (kill(want, 0) != 0 && errno == ESRCH)
			keep_die(KEEP_EXIT_TEMP, prog, "keep-agent (pid %ld) is gone: not starting",
				 (long)want);
		keep_warn(prog,
			  "started by pid %ld, not by keep-agent (pid %ld): this process ends "
			  "with pid %ld",
			  (long)ppid, (long)want, (long)ppid);
	}
	parent_at_start = ppid;
}

bool keep_supervised(void)
{
	return parent_at_start != 0;
}

bool keep_supervisor_gone(void)
{
	return parent_at_start != 0 && getppid() != parent_at_start;
}

int keep_sd_notify(const char *msg)
{
	const char *path = getenv(KEEP_NOTIFY_ENV);
	struct sockaddr_un sa;
	size_t plen, mlen = msg ? strlen(msg) : 0;
	socklen_t salen;
	ssize_t n;
	int fd, saved;

	if (!path || !*path)
		return 1;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sa.sun_path) || !mlen ||
	    mlen > 4096)
		return KEEP_ERR_INVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* the abstract namespace */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return KEEP_ERR_IO;
	do
		n = sendto(fd, msg, mlen, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	while (n < 0 && errno == EINTR);
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)mlen ? 0 : KEEP_ERR_IO;
}
