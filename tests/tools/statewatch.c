/* statewatch — print the wall ms at which a node's lease state file first
 * shows each new phase (bench/owner-run.sh: when the grant ended on the
 * node, independently of owner-run).
 *
 *   statewatch NODE_DIR        until killed: one line per phase change,
 *                              "<wall ms> <phase> <boot ms> <valid until>",
 *                              the wall and boot clocks read right after
 *                              the file was (inotify wakes it on every
 *                              rename into NODE_DIR); <valid until>: the
 *                              valid_until_ms (boot clock) of the last state
 *                              read whose phase was live, 0 before one
 * exit 0 when killed by SIGTERM; 111 when inotify fails; 100 usage. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "../../lib/local/statedir.h"
#include "../../lib/platform/clock.h"

int main(int argc, char **argv)
{
	struct keep_lease_state st;
	char last[16] = "", buf[4096];
	long long until = 0;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: statewatch NODE_DIR\n");
		return 100;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, SIG_DFL);
	fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		perror("statewatch: inotify");
		return 111;
	}
	for (;;) {
		if (keep_lease_state_read(argv[1], &st) == 0) {
			if (strcmp(st.phase, "live") == 0)
				until = (long long)st.valid_until_ms;
			if (strcmp(st.phase, last) != 0) {
				printf("%lld %s %lld %lld\n", (long long)keep_wall_ms(), st.phase,
				       (long long)keep_boot_ms(), until);
				snprintf(last, sizeof(last), "%s", st.phase);
			}
		}
		if (read(fd, buf, sizeof(buf)) <= 0)
			return 111;
	}
}
