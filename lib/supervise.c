/* keep — a long-running command under keep-agent never outlives it (supervise.h). */
#include "supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"
#include "exitcode.h"

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
