/* keep-sim --scale — the request-accounting model (issue 28 item 1;
 * docs/scale.md, docs/testing.md "The scale model").
 *
 * Plays N nodes at the default timings (lib/core/timing.c) against one
 * simulated bucket and counts, where each store call would go, what every
 * node asks of the store at steady state: PUTs, GETs, LIST pages of 1,000
 * keys, keys listed, payload bytes sent and received (node bodies encoded
 * with lib/codec/nodeobj.c, listing entries as S3's ListObjectsV2 XML). Every
 * decision is lib/core's: the node lease (lease.c), which bodies a pass
 * reads (listing.c), the watch and its stale candidates (fence.c), the
 * peer fence (fencer.c). Then one node is killed and the time from its
 * death to its fence is reported on the model's clock.
 *
 * Every lease machine is played; the watches of all nodes (mode full,
 * "played=N") or, above --sample's threshold, of an evenly spaced sample
 * of them against the full cluster state (the listing of nodes/ is the
 * same for every node). One line per run on out (see scale_run). */
#ifndef KEEP_SIM_SCALE_H
#define KEEP_SIM_SCALE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* How a node watches its peers: the full watch of ADR 0020 §2 (list
 * nodes/ every period), or ring mode (docs/fencing.md "Ring mode": one GET
 * of each of `successors` peers every period, a listing every
 * `full_every` periods). */
enum scale_mode {
	SCALE_FULL = 0,
	SCALE_RING,
	SCALE_MODE_COUNT,
};

#define SCALE_SAMPLE_DEFAULT 100   /* watches played above SCALE_FULL_MAX nodes */
#define SCALE_FULL_MAX 1000	   /* nodes whose watches are all played by default */
#define SCALE_NODES_MAX 100000	   /* most nodes modelled (KEEP_WATCH_PEERS_MAX) */
#define SCALE_PERIODS_DEFAULT 10   /* periods counted at steady state */
#define SCALE_JITTER_DEFAULT_MS 20 /* a process wakes up to this late (ms) */

struct scale_opts {
	enum scale_mode mode;
	int64_t nodes;	    /* N >= 2 */
	int64_t periods;    /* periods counted, >= 1 */
	int64_t sample;	    /* watches played; 0: all (N) */
	int64_t jitter_ms;  /* each wake-up is 0..jitter_ms late (uniform), >= 0 */
	uint64_t seed;	    /* start phases, jitter, the victim's death phase */
	int64_t successors; /* ring: peers read every period (1..16; default 3) */
	int64_t full_every; /* ring: a listing every that many periods (2..100; default 10) */
	bool kill_watchers; /* ring: the victim dies with its K watchers (every watch played) */
};

/* "full", "ring". Never NULL. */
const char *scale_mode_name(enum scale_mode m);

/* Parse a mode's name (borrowed) into *out: 0, or -1 when it is not a
 * mode. */
int scale_mode_parse(const char *name, enum scale_mode *out);

/* Fill *o (caller-owned) with the defaults for N nodes: mode full,
 * SCALE_PERIODS_DEFAULT periods, every watch played up to SCALE_FULL_MAX
 * nodes, else SCALE_SAMPLE_DEFAULT, jitter SCALE_JITTER_DEFAULT_MS, seed 1. */
void scale_opts_defaults(struct scale_opts *o, int64_t nodes);

/* Run the model once (ADR 0020 §1 the lease, §2 the watch and the peer
 * fence, as lib/core implements them) and print its line to out (borrowed;
 * nothing else is written there). Counts are per node and per period_ms
 * of the counted window; rates per second; bytes are payload bytes; times
 * in ms on the model's clock; $ per 30-day month at the list prices in
 * scale.c (docs/scale.md):
 *   scale-model mode=M [successors=K full_every=M] nodes=N played=S periods=P
 *   period_ms=.. jitter_ms=..
 *   put_per_node_period=.. get_per_node_period=.. list_pages_per_node_period=..
 *   keys_listed_per_node_period=.. requests_per_node_period=..
 *   bytes_sent_per_node_period=.. bytes_received_per_node_period=..
 *   cluster_put_per_s=.. cluster_get_per_s=.. cluster_list_per_s=..
 *   cluster_requests_per_s=.. cluster_keys_listed_per_period=..
 *   s3_usd_month=.. r2_usd_month=.. death_to_fence_ms=.. over_floor_ms=..
 *   fencers=.. fence_reads=.. fence_writes=.. fences_landed=..
 *   start_candidates=.. false_candidates=.. bound_over_floor_ms=..
 *   [watchers_killed=K]
 * 0; 1 when the run broke a rule it checks (a lease not live at steady
 * state, a live node taken for a stale candidate at steady state, no fence
 * within the liveness bound of docs/fencing.md "Ring mode" (fenced by
 * max(floor, candidate bound) + 2 attempt timeouts, the candidate bound
 * being the last write + 2 periods + write_every + attempt timeout while
 * a watcher lives, in full mode, or the last write + 3 x full_every
 * periods when the K watchers died with it: bound_over_floor_ms), a
 * fence before the dead node's last written_at + ttl + grace: a line
 * `scale-model error: ...` on out); -1 out of memory. */
int scale_run(const struct scale_opts *o, FILE *out);

#endif
