/* Unit tests: the run lock file (lib/local/runlock.c; docs/ownership.md "The
 * job"). Its owner-run rewrites it while drains and releases read it: a
 * reader must never see a record without its owner, or it takes owner-run
 * for a process of the job and signals it (issue 22: a drain read the file
 * empty between a truncation and a write and SIGKILLed owner-run). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/local/runlock.h"
#include "../../lib/platform/clock.h"
#include "unit.h"

#define KEY "t/c/a"
#define REWRITE_MS 1500 /* ms the owner rewrites its record */
#define READ_MS 1000	/* ms the readers read beside it */

/* An owner-run's part: take the lock, say so on ready, rewrite the record
 * (generation 0, 7, 0, ...) for REWRITE_MS. Never returns. */
static void owner(const char *dir, int ready)
{
	int fd, i = 0;
	int64_t end;

	if (keep_run_lock_take(dir, KEY, 300, &fd) != 0)
		_exit(2);
	if (keep_run_lock_started(fd, KEY, 300, 7) != 0 || write(ready, "r", 1) != 1)
		_exit(3);
	end = keep_boot_ms() + REWRITE_MS;
	while (keep_boot_ms() < end)
		if (keep_run_lock_started(fd, KEY, 300, (i++ % 2) ? 7 : 0) != 0)
			_exit(4);
	_exit(0);
}

TEST(a_rewritten_record_always_names_its_owner)
{
	char dir[] = "/tmp/keep-test-runlock.XXXXXX";
	int p[2], st = 0, reads = 0, signalled = 0, torn = 0;
	char c;
	pid_t pid;
	int64_t end;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(pipe(p) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		owner(dir, p[1]);
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1);
	close(p[0]);
	end = keep_boot_ms() + READ_MS;
	while (keep_boot_ms() < end) {
		struct keep_run_sig sig;
		struct keep_run_view v, all;

		/* signal 0: who would be signalled (the owner never is); a
		 * scan of /proc is slow, the probes between them are many */
		if (reads % 64 == 0) {
			CHECK_EQ_INT(keep_run_signal(dir, KEY, 0, &sig), 0);
			signalled += sig.npids;
			CHECK_EQ_INT(keep_run_signal(dir, NULL, 0, &sig), 0);
			signalled += sig.npids;
		}
		keep_run_probe(dir, KEY, &v);
		keep_runs_probe(dir, &all);
		torn += v.generation != 0 && v.generation != 7;
		torn += all.kill_after_ms != 300 && all.kill_after_ms != -1;
		reads++;
	}
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &st, 0) == pid);
	printf("# %d rounds of reads beside the rewrites: %d signalled, %d torn\n", reads,
	       signalled, torn);
	CHECK(reads > 0);
	CHECK_EQ_INT(signalled, 0);
	CHECK_EQ_INT(torn, 0);
}

TEST(a_record_is_one_length_and_ends_in_its_end_line)
{
	char dir[] = "/tmp/keep-test-runlock.XXXXXX", path[512], buf[2048];
	struct keep_run_entry *e = NULL;
	size_t n = 0;
	int fd;
	FILE *f;
	size_t len;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ_INT(keep_run_lock_take(dir, KEY, 250, &fd), 0);
	CHECK_EQ_INT(keep_run_lock_started(fd, KEY, 250, 12345678901), 0);
	CHECK_EQ_INT(keep_runs_list(dir, &e, &n), 0);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_STR(e[0].key, KEY);
		CHECK_EQ_INT(e[0].generation, 12345678901);
		CHECK(e[0].owner_alive);
	}
	free(e);
	snprintf(path, sizeof(path), "%s/runs", dir);
	{
		char cmd[600];

		/* the one file of runs/ */
		snprintf(cmd, sizeof(cmd), "cat %s/*", path);
		f = popen(cmd, "r");
		CHECK(f != NULL);
		len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			pclose(f);
	}
	buf[len] = '\0';
	CHECK_EQ_INT(len, 1024);
	CHECK(strstr(buf, "\nkey t/c/a\nend\n") != NULL);
	keep_run_lock_drop(fd);
}

int main(void)
{
	RUN(a_rewritten_record_always_names_its_owner);
	RUN(a_record_is_one_length_and_ends_in_its_end_line);
	return unit_done();
}
