/* keep — owner-run's driver (issues 15, 24; ADR 0020 §3 "Own",
 * "Release"; docs/ownership.md "owner-run"): the run lock, the
 * acquisition, CMD in its own process group under the grant, the job's
 * stop (lib/core/jobstop.h) and the release on every exit after the
 * acquisition. Process glue: it reads the clocks, forks, signals, prints
 * the lines of owner-run(1); every deadline and bound is a lib/core
 * function (keep_owner_grant_recheck_ms, keep_jobstop_*,
 * keep_jobstop_kill_after_ms). One run per process: it installs signal
 * handlers, blocks signals and becomes the subreaper of its job. */
#ifndef KEEP_OWNERRUN_H
#define KEEP_OWNERRUN_H

#include <stdint.h>

#include "cli.h"

/* Is CMD's name found and executable as execvp will look for it (PATH
 * when it has no '/')? 0; else 127 not found or 126 not executable, with
 * one line on stderr. Checked before acquiring: no generation is taken
 * for a CMD that cannot run. name: borrowed. */
int keep_owner_run_cmd_check(const char *name);

/* owner-run KEY -- CMD: cli parsed (its configuration not read yet:
 * loaded here), key a valid actor key, cmd a NULL-terminated argv
 * (borrowed, cmd[0] checked by keep_owner_run_cmd_check), wait_ms the
 * --wait bound (ms; 0 none), kill_after the --kill-after flag (ms; -1 the
 * default: keep_jobstop_kill_after_ms). Prints the acquisition's answer,
 * `grant-ended`, `exited` and the release's lines; returns the exit code
 * of owner-run(1) (docs/exit-codes.md): CMD's status, 21 the grant ended,
 * 128 + N a signal before CMD started, 1 running here already or held,
 * the acquisition's code, 100 a --kill-after above safety_ms / 2, 111. */
int keep_owner_run(struct keep_cli *cli, const char *key, char **cmd, int64_t wait_ms,
		   int64_t kill_after);

#endif
