/* keep — the node lease state file's codec (docs/formats.md "Lease state
 * file"): the struct lease-write keeps in state_dir/<id>/lease and its
 * strict encoder and decoder. Pure (no I/O): the file's reading and
 * writing are lib/local/statedir.c's, its judgement lib/core/leasestate.c's. */
#ifndef KEEP_STATEFILE_H
#define KEEP_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/vocab.h"
#include "nodeobj.h"

/* The clock named in the lease state file's `clock` line: the boot clock,
 * CLOCK_BOOTTIME (lib/platform/clock.h reads it; docs/lease.md "Clocks"). */
#define KEEP_CLOCK_NAME "boottime"

/* The node lease state, as lease-write keeps it (file "lease";
 * docs/formats.md "Lease state file"). Deadlines are on the clock named by
 * `clock` (KEEP_CLOCK_NAME, "boottime", for every file this version
 * writes) and only on the boot `boot_id`: a reader compares them with its
 * own reading of that clock, and with nothing else. */
struct keep_lease_state {
	int format; /* 2 (written); 1: an older lease-write's file, read only */
	char node[KEEP_NODE_ID_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1];
	int64_t pid;			/* lease-write's pid */
	char clock[16];			/* "boottime"; a format 1 file reads as "monotonic" */
	char boot_id[64];		/* the deadlines are valid on this boot only */
	char phase[16];			/* starting | live | ran-out | stopping | stopped | lost */
	char reason[32];		/* "-" or the lost reason */
	char version[KEEP_VERSION_MAX]; /* "-" when none */
	int64_t written_at_ms;		/* wall ms of the held write; 0 when none */
	int64_t valid_until_ms;		/* on `clock`; 0 when not valid */
	int64_t valid_until_wall_ms;	/* informational: the same on the wall clock */
	int64_t live_since_ms; /* on `clock`: ack of the first write after the last lapse; 0 */
	int64_t lapses;	       /* lease epoch: grows on every run-out, clock step or loss */
	int64_t updated_wall_ms;
	/* since lease-write 0.1 with step offsets (optional trailing lines;
	 * absent in an older file: 0, have_judge false) */
	bool have_judge;
	int64_t judge_offset_ms; /* >= 0: subtract from the wall clock to judge others
				    (docs/lease.md "Judging others after a step") */
	int64_t clock_base_ms;	 /* wall - boot clock at lease-write's last clock
				    reading (this boot only): a reader whose own
				    wall - boot is larger sees a step not yet noticed */
};

/* Encode "keep-lease-state 2" (whatever s->format says) / decode format 2
 * or 1 (key value lines in a fixed order, strict). A format 1 file (an
 * older lease-write, deadlines on CLOCK_MONOTONIC) decodes with format 1
 * and clock "monotonic": readable, never comparable.
 * decode: 0, KEEP_ERR_PARSE, KEEP_ERR_NOTOURS. */
int keep_lease_state_encode(const struct keep_lease_state *s, struct keep_buf *out);
int keep_lease_state_decode(const char *buf, size_t len, struct keep_lease_state *s);

#endif
