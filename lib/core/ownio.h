/* keep — what the ownership machines ask a driver to do, and what it hands
 * back (ADR 0020 §3, §4, §5, §6; docs/design.md "How a driver runs a
 * machine"; docs/ownership.md).
 *
 * The acquisition machine (acquire.h) and the resolver (resolver.h) never
 * read a clock, a file or the store: they answer keep_*_next(now) with one
 * struct keep_oact, the driver performs it (lib/driver/ownrun.c, for
 * owner-acquire and owner-release, on the state directory and a real
 * store, sim/ on its simulated ones) and hands the result back in a struct keep_oreply. The
 * state directory's files are described by the structs below; their codecs
 * and paths are lib/local/holds.c's.
 *
 * A state-directory change reports how far it got (enum keep_sd): the
 * machines tell "renamed into place but perhaps not durable" from "not
 * written" (issue 18), and send a release only after the hold's removal is
 * durable. */
#ifndef KEEP_CORE_OWNIO_H
#define KEEP_CORE_OWNIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/vocab.h"
#include "../codec/nodeobj.h"
#include "../codec/ownerrec.h"
#include "cluster.h"
#include "jobstop.h"
#include "upgrade.h"

/* A hold: this node acts as owner of key at generation while it exists,
 * its instance is the lease's, epoch equals the lease's lapses, no pending
 * release names it, and the lease is valid (keep_owner_check). File
 * holds/<sha256(key)>. */
struct keep_hold {
	char key[KEEP_OWNER_KEY_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1]; /* the lease-write instance that acquired it */
	int64_t generation;		      /* >= 1 */
	char version[KEEP_VERSION_MAX];	      /* the acquire's version (the record's while held) */
	int64_t epoch;			      /* the lease's lapses at acquisition (>= 0) */
	int64_t acquired_at_ms;		      /* wall ms, informational */
};

enum keep_pending_kind {
	KEEP_PENDING_RELEASE = 0, /* write nobody If-Match version */
	KEEP_PENDING_ACQUIRE,	  /* an unresolved acquire: read, then decide */
};

/* A pending release or an unresolved acquire. File
 * pending/<sha256(key)>.<generation>.<instance>.release|acquire. */
struct keep_pending {
	enum keep_pending_kind kind;
	char key[KEEP_OWNER_KEY_MAX + 1];
	char instance[KEEP_INSTANCE_LEN + 1];
	int64_t generation;		/* release: the hold's; acquire: the generation tried */
	char version[KEEP_VERSION_MAX]; /* release: If-Match; acquire: the write's condition
					   ("-" for If-None-Match) */
	int64_t at_ms;			/* wall ms when parked / tried */
};

/* How far a change of the state directory got. A write is a temp file,
 * fsync, rename, fsync of the directory; a removal is unlink, fsync of the
 * directory; a sync is the directory's fsync alone. */
enum keep_sd {
	KEEP_SD_DURABLE = 0, /* done, and the directory fsync succeeded */
	KEEP_SD_VISIBLE,     /* done (renamed / unlinked) but the directory fsync failed:
				other processes see it; a crash of the machine may undo it */
	KEEP_SD_UNCHANGED,   /* not done: nothing changed (the write or unlink failed) */
};

/* "durable", "visible", "unchanged". */
const char *keep_sd_name(enum keep_sd r);

/* A run lock of the state directory (runs/<H>; lib/local/runlock.h), as a LIST
 * answers it: whose job and whether its owner-run still runs. */
struct keep_run_entry {
	char key[KEEP_OWNER_KEY_MAX + 1];
	int64_t generation; /* CMD's generation (0: no CMD started; -1 unknown) */
	bool owner_alive;   /* the owner-run the file names runs (pid and start time) */
};

/* The node lease as the state file says, judged by the driver at the time
 * of the action (lib/local/holds.c keep_holds_lease). */
struct keep_lease_view {
	int code;  /* exitcode.h: 0 valid; 14 ran out; 10..13, 16, 17 lost;
		      15 starting, stopping, stopped or no lease state */
	bool lost; /* phase "lost": drop everything, write nothing (§1) */
	char instance[KEEP_INSTANCE_LEN + 1]; /* "" when there is no lease state */
	int64_t lapses;			      /* the lease epoch */
	bool draining; /* the drain mark names instance (no new acquisition) */
};

enum keep_oact_kind {
	KEEP_OACT_NONE = 0,    /* nothing now: a reply is outstanding (resolver) */
	KEEP_OACT_WAIT,	       /* sleep until until_mono_ms (or a signal), then next() */
	KEEP_OACT_LOCK,	       /* take the per-actor lock of key (flock), waiting at most
				  timeout_ms (0: as long as it takes); not taken in time:
				  reply.failed, reply.err ETIMEDOUT */
	KEEP_OACT_UNLOCK,      /* release the lock this slot holds */
	KEEP_OACT_LEASE,       /* read the lease state file into reply.lease */
	KEEP_OACT_HOLD_READ,   /* read holds/<key> into reply.hold_rc, reply.hold */
	KEEP_OACT_HOLD_WRITE,  /* write hold (atomic): reply.sd */
	KEEP_OACT_HOLD_REMOVE, /* unlink holds/<key>, fsync holds/ (absent counts as done): reply.sd
				*/
	KEEP_OACT_HOLDS_SYNC,  /* fsync holds/: reply.sd DURABLE or UNCHANGED */
	KEEP_OACT_PEND_READ,   /* the pending entry named like pend: reply.exists (true when it
				  cannot be told) and reply.pend_now (what it holds) */
	KEEP_OACT_PEND_WRITE,  /* write pending entry pend (atomic): reply.sd */
	KEEP_OACT_PEND_REMOVE, /* unlink pending entry pend, fsync pending/: reply.sd */
	KEEP_OACT_LIST,	       /* list holds/, pending/ and runs/: reply.holds, pend, runs */
	KEEP_OACT_REC_READ,    /* GET owners/<key>, decode: reply.outcome/version/rec/decode_err */
	KEEP_OACT_REC_WRITE,   /* PUT owners/<key> = rec, cond/if_match, bounded by timeout_ms */
	KEEP_OACT_NODE_READ,   /* GET nodes/<node>, decode, check the id: reply.node/decode_err */
	KEEP_OACT_MARK_READ,   /* GET leases/<key>, decode: reply.lobj/decode_err */
	KEEP_OACT_MARK_WRITE,  /* PUT leases/<key> = lobj, cond/if_match */
	KEEP_OACT_KEYS_MAX,    /* LIST wal/<key>/, snapshot/<key>/: reply.keys_max (§6) */
	KEEP_OACT_DRAIN_MARK,  /* write the drain mark naming pend.instance: reply.sd */
	KEEP_OACT_CLUSTER_READ, /* what the cluster object says (cluster.h): reply.cluster;
				   a driver reads `cluster` at most once a process and answers
				   later ones from that read (a failed read is not kept) */
	KEEP_OACT_RUN_PROBE,	/* is key's run lock held, and by a job of which generation
				   (jobstop.h; lib/local/runlock.h keep_run_probe): reply.run */
	KEEP_OACT_RUN_SIGNAL,	/* send sig to every process holding key's run lock
				   (keep_run_signal): reply.npids, failed, pid */
	KEEP_OACT_DONE,		/* finished: read the result */
};

/* "none", "wait", "lock", ... (the enum's names in lowercase, '-' for '_'). */
const char *keep_oact_name(enum keep_oact_kind k);

/* One action. Every field the kind does not name is zero. */
struct keep_oact {
	enum keep_oact_kind kind;
	int slot;			  /* resolver: the job's slot, to pass back; acquire: 0 */
	int64_t until_mono_ms;		  /* WAIT */
	char key[KEEP_OWNER_KEY_MAX + 1]; /* LOCK, HOLD_*, REC_*, MARK_*, KEYS_MAX */
	char node[KEEP_NODE_ID_MAX + 1];  /* NODE_READ */
	struct keep_owner_rec rec;	  /* REC_WRITE */
	struct keep_lease_obj lobj;	  /* MARK_WRITE */
	enum keep_cond cond;		  /* REC_WRITE, MARK_WRITE */
	char if_match[KEEP_VERSION_MAX];  /* with KEEP_COND_IF_MATCH */
	struct keep_hold hold;		  /* HOLD_WRITE */
	struct keep_pending pend;	  /* PEND_READ, PEND_WRITE, PEND_REMOVE; DRAIN_MARK's
					     instance */
	int64_t timeout_ms;		  /* store actions: bound of this attempt (ms); LOCK:
					     bound of the wait (0: none) */
	enum keep_jobstop_sig sig;	  /* RUN_SIGNAL */
};

/* The result of one action, filled by the driver (zero it first). */
struct keep_oreply {
	/* store actions */
	enum keep_outcome outcome;
	char version[KEEP_VERSION_MAX]; /* OK: the object's version token */
	int decode_err;			/* OK but undecodable: KEEP_ERR_PARSE, _NOTOURS, _TOOBIG */
	struct keep_owner_rec rec;	/* REC_READ, decoded */
	struct keep_node_obj node;	/* NODE_READ, decoded (its node id checked) */
	struct keep_lease_obj lobj;	/* MARK_READ, decoded */
	int64_t keys_max;		/* KEYS_MAX: highest generation in the segment keys */
	enum keep_cluster_view cluster; /* CLUSTER_READ; detail: set when the object was read
					   now and is not a cluster object (a warning) */
	char detail[KEEP_DETAIL_MAX];	/* not OK: a one-line reason (for messages) */
	/* local actions */
	bool failed;		      /* LOCK, LEASE (unreadable is a view, not a failure), LIST */
	enum keep_sd sd;	      /* HOLD_WRITE/REMOVE, HOLDS_SYNC, PEND_WRITE/REMOVE */
	int err;		      /* errno of a failed local action (messages only) */
	int hold_rc;		      /* HOLD_READ: 0 found, 1 none, < 0 unreadable (keep_err) */
	struct keep_hold hold;	      /* HOLD_READ found */
	bool exists;		      /* PEND_READ */
	struct keep_pending pend_now; /* PEND_READ, when it exists: the entry as stored */
	struct keep_lease_view lease; /* LEASE */
	struct keep_run_view run;     /* RUN_PROBE */
	int npids, nrefused;	      /* RUN_SIGNAL: processes signalled, of them refused */
	int64_t pid;		      /* RUN_SIGNAL: one of them (0: none found) */
	/* LIST: borrowed for the call (the machine copies what it keeps) */
	const struct keep_hold *holds;
	size_t nholds;
	const struct keep_pending *pend;
	size_t npend;
	const struct keep_run_entry *runs; /* the run locks of runs/ (owner-run's) */
	size_t nruns;
};

/* Copy the string src (NULL is "") into dst of n bytes (n >= 1),
 * truncated, always NUL-terminated. */
void keep_copy_str(char *dst, size_t n, const char *src);

/* Fill p as the pending release of hold h (kind release, h's key,
 * instance, generation and acquire version), parked at at_ms (wall). */
void keep_pending_of_hold(struct keep_pending *p, const struct keep_hold *h, int64_t at_ms);

/* Do two pending entries name the same thing (kind, key, instance,
 * generation)? */
bool keep_pending_same(const struct keep_pending *a, const struct keep_pending *b);

#endif
