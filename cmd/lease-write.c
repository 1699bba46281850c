/* lease-write — hold this node's lease nodes/<id> (ADR 0020 §1, §4, §5).
 *
 * A driver of lib/core/lease.c, through lib/driver/leaserun.c: it reads
 * the clocks, calls the store, feeds the replies to the machine, prints
 * its events, and keeps the lease state file (state_dir/<id>/lease) that
 * every other command of the node reads. SIGTERM/SIGINT: the clean stop
 * (released, §4). This file: the usage, the flags, the calls. */
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/base/exitcode.h"
#include "../lib/base/parse.h"
#include "../lib/core/timing.h"
#include "../lib/driver/cli.h"
#include "../lib/driver/leaserun.h"
#include "../lib/driver/supervise.h"

static const char usage[] =
    "usage: lease-write [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                   [-v] [--check] [--clock-step-ms MS] [--go-fd FD]\n"
    "       lease-write [-c FILE] --node-id ID --clear-clock-offset\n"
    "\n"
    "Hold this node's lease nodes/<ID> until SIGTERM/SIGINT, then write\n"
    "`released` (clean stop). Neither `released` nor the first write of this\n"
    "instance is sent while a job holds a run lock of the node (owner-run's,\n"
    "STATE_DIR/ID/runs/): its processes get SIGTERM, SIGKILL after the job's\n"
    "--kill-after, and are waited for (2 s after the SIGKILL at most: then exit\n"
    "22, nothing written). Prints one event a line on stdout:\n"
    "  check-start check-read check-shortcut live adopted write-failed read-failed\n"
    "  ran-out recovered back-to-check stopping released stopped lost clock-step\n"
    "  clock-behind (and `renewed` with -v). State for other commands:\n"
    "  STATE_DIR/ID/lease.\n"
    "\n"
    "  -v, --verbose       also print every renewal\n"
    "  --check             validate the configuration, print `configuration OK`, exit\n"
    "  --clock-step-ms MS  a wall-clock step beyond MS (against the boot clock)\n"
    "                      ends every hold (lease.clock_step_ms; default\n"
    "                      max_skew_ms / 2, at least 20)\n"
    "  --go-fd FD          hold the first write, after the start check, until a\n"
    "                      line `go` is read from file descriptor FD (keep-agent:\n"
    "                      the start guard passed); EOF first: stop, nothing written\n"
    "  --clear-clock-offset  with the node's lease-write stopped: set the judging\n"
    "                      offset left by wall-clock steps to 0 (the operator checked\n"
    "                      the wall clock is right; docs/lease.md), print it, exit\n"
    "\n"
    "A clean stop that finds a fence in place of its `released` is done:\n"
    "`stopped ... reason=fenced`, exit 0. A refused first write goes back to the\n"
    "start check (`back-to-check`).\n"
    "\n"
    "exit: 0 stopped cleanly (released, or a fence found); 10 fenced; 11 another\n"
    "instance (twin); 12 released by another; 13 object removed; 16 an\n"
    "old-format node runs under this id;\n"
    "17 nodes/ID is not a keep object; 22 a job's process outlived its SIGKILL:\n"
    "released (or the first write) not written; 100 usage/config; 111 store\n"
    "unusable, release unconfirmed, or the wall clock more than ttl + grace behind the last\n"
    "written_at of nodes/ID (not started). See docs/exit-codes.md.\n";

enum { OPT_STEP = 0x2000, OPT_GO_FD, OPT_CLEAR_OFFSET };

/* the one run of this process (lib/driver/leaserun.h) */
static struct keep_leaserun d;

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    KEEP_CLI_LONGOPTS,
	    {"verbose", no_argument, NULL, 'v'},
	    {"check", no_argument, NULL, KEEP_OPT_CHECK},
	    {"go-fd", required_argument, NULL, OPT_GO_FD},
	    {"clock-step-ms", required_argument, NULL, OPT_STEP},
	    {"clear-clock-offset", no_argument, NULL, OPT_CLEAR_OFFSET},
	    {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	bool clear_offset = false;
	int64_t step_ms = -1, go_fd;
	int c;

	/* SIGTERM/SIGINT blocked before any thread: lib/driver/leaserun.h */
	keep_leaserun_init(&d, "lease-write");
	keep_supervised_start(d.prog); /* before any thread: lib/driver/supervise.h */
	keep_cli_init(&cli, d.prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:v", opts)) != -1) {
		switch (c) {
		case 'v':
			d.verbose = true;
			break;
		case OPT_STEP:
			step_ms = keep_cli_int_arg(&cli, "--clock-step-ms", optarg, 0, 86400000);
			break;
		case OPT_CLEAR_OFFSET:
			clear_offset = true;
			break;
		case OPT_GO_FD:
			if (!keep_dec_parse_str(optarg, 1023, &go_fd) ||
			    fcntl((int)go_fd, F_GETFD) < 0)
				keep_cli_usage_error(&cli, "--go-fd needs an open file descriptor");
			d.go_fd = (int)go_fd;
			break;
		}
	}
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	keep_cli_load_config(&cli, &d.cfg);
	if (step_ms >= 0) {
		char why[256];

		d.cfg.timing.clock_step_ms = step_ms;
		if (keep_timing_check(&d.cfg.timing, why, sizeof(why)) != 0)
			keep_die(KEEP_EXIT_USAGE, d.prog,
				 "invalid configuration: --clock-step-ms: %s", why);
	}
	keep_cli_require(&cli, &d.cfg, KEEP_NEED_NODE | KEEP_NEED_STORE);
	keep_leaserun_open(&d, clear_offset);
	if (clear_offset)
		return keep_leaserun_clear_clock_offset(&d);
	return keep_leaserun_run(&d);
}
