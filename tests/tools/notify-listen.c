/* notify-listen — a fake systemd notify socket for the tests
 * (tests/bats/0711-systemd-notify.bats; docs/testing.md).
 *
 *   notify-listen PATH
 *
 * Binds a unix datagram socket at PATH (removed first if it exists, and at
 * the end), prints `listening path=PATH`, then one line per datagram
 * received, until SIGTERM or SIGINT:
 *
 *   notify pid=P msg="READY=1\nSTATUS=node n1 is live"
 *
 * P is the sender's pid (SO_PASSCRED, as systemd reads it), msg the
 * datagram in the value syntax of keep's lines (lib/platform/line.h: quoted, \n for
 * each newline). stdout is flushed after each line. Exit 0 on a signal,
 * 100 on a usage error, 111 when the socket cannot be made. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../lib/base/buf.h"
#include "../../lib/platform/line.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa;
	struct sigaction act;
	char buf[8192], ctl[CMSG_SPACE(sizeof(struct ucred))];
	int fd, on = 1, rc = 0;

	if (argc != 2 || argv[1][0] != '/' || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify-listen PATH (absolute, at most %zu bytes)\n",
			sizeof(sa.sun_path) - 1);
		return 100;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_signal; /* no SA_RESTART: recvmsg returns EINTR */
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, argv[1], strlen(argv[1]));
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "notify-listen: fatal: unable to bind '%s': %s\n", argv[1],
			strerror(errno));
		return 111;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("listening path=%s\n", argv[1]);
	while (!stop) {
		struct iovec iov = {buf, sizeof(buf) - 1};
		struct msghdr mh;
		struct cmsghdr *c;
		struct keep_buf line;
		ssize_t n;
		long pid = 0;

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl;
		mh.msg_controllen = sizeof(ctl);
		n = recvmsg(fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "notify-listen: fatal: recvmsg: %s\n", strerror(errno));
			rc = 111;
			break;
		}
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
				pid = (long)uc.pid;
			}
		keep_buf_init(&line, 4 * sizeof(buf) + 64);
		keep_line_start(&line, "notify");
		keep_line_int(&line, "pid", pid);
		keep_buf_add(&line, " msg=", 5);
		keep_line_value(&line, buf, (size_t)n);
		printf("%s\n", keep_buf_str(&line));
		keep_buf_release(&line);
	}
	close(fd);
	unlink(argv[1]);
	return rc;
}
