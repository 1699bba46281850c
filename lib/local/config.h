/* keep — configuration (YAML via libyaml; docs/configuration.md).
 *
 * Sources, later wins: built-in defaults; the file (-c FILE, else
 * $KEEP_CONFIG, else /etc/keep/keep.yaml if it exists); command-line flags.
 * The file is strict: unknown keys, wrong types, numbers that are not plain
 * decimal integers in range, duplicate keys -> refused with a one-line
 * error naming the file, line and key.
 *
 *   node_id: n1                      # [A-Za-z0-9._-]{1,64}
 *   store: file:///var/lib/keep/bucket
 *   state_dir: /var/lib/keep         # absolute; the node's state is state_dir/<node_id>
 *   lease:
 *     ttl_ms: 10000
 *     grace_ms: 5000
 *     safety_ms: 2000
 *     max_skew_ms: 1000
 *     heartbeat_period_ms: 3000
 *     clock_step_ms: 0                 # 0: max_skew_ms / 2 (at least 20)
 *   s3:
 *     region: us-east-1
 *     endpoint: https://s3.example.com
 *     addressing: path               # path | virtual
 *     credentials_file: /etc/keep/credentials   # refused if group/other can read it
 *     tls_insecure: false            # only honoured for loopback endpoints
 *     timeout_ms: 10000
 *   metrics:
 *     textfile: /var/lib/prometheus/node-exporter/keep.prom   # "" = none
 *   apps: [billing, search]          # application roots the agent drains and resolves
 *                                    # besides the default one (ADR 0022)
 *   log:
 *     timestamps: auto               # auto | always | never (lib/platform/log.h)
 *     event_timestamps: false        # stdout's lines end with ts=
 */
#ifndef KEEP_CONFIG_H
#define KEEP_CONFIG_H

#include <stdbool.h>

#include "../codec/nodeobj.h"
#include "../core/timing.h"
#include "../platform/log.h"
#include "../store/store.h"

#define KEEP_PATH_MAX 1024 /* bytes, NUL excluded: longest path or URL accepted */
#define KEEP_APPS_MAX 16   /* entries: the most application roots in `apps:` */

struct keep_config {
	char path[KEEP_PATH_MAX + 1]; /* the file loaded, "" if none */
	char node_id[KEEP_NODE_ID_MAX + 1];
	char store[KEEP_PATH_MAX + 1];	   /* store URL */
	char state_dir[KEEP_PATH_MAX + 1]; /* base dir; node's dir is state_dir/node_id */
	struct keep_timing timing;
	char s3_region[128];
	char s3_endpoint[KEEP_PATH_MAX + 1];
	char s3_addressing[16];
	char s3_credentials_file[KEEP_PATH_MAX + 1];
	bool s3_tls_insecure;
	int64_t s3_timeout_ms;
	char metrics_textfile[KEEP_PATH_MAX + 1];
	enum keep_log_ts log_timestamps; /* log.timestamps (lib/platform/log.h) */
	bool log_event_timestamps;	 /* log.event_timestamps */
	/* The application root of this command (--app ROOT; ADR 0022,
	 * docs/ownership.md): "" is the default root (today's keys). */
	char app[KEEP_APP_ROOT_MAX + 1];
	/* `apps:`: the roots besides the default one that the agent drains
	 * and resolves (keep_app_root_valid each, no duplicates). */
	char apps[KEEP_APPS_MAX][KEEP_APP_ROOT_MAX + 1];
	size_t napps;
	/* `watch:` (node-watch; docs/fencing.md "Ring mode"): mode "full",
	 * "ring" or "auto"; successors (ring: peers read every period, 1..16);
	 * full_every (ring: a listing of nodes/ every that many periods,
	 * 2..100); ring_from (auto: ring mode from that many listed nodes,
	 * 2..1000000; keep_watch_choose_mode). */
	char watch_mode[8];
	int64_t watch_successors;
	int64_t watch_full_every;
	int64_t watch_ring_from;
};

/* Defaults: node_id "", store "", state_dir "/var/lib/keep", ADR timings,
 * s3 fields empty, timeout 10000, metrics "", log.timestamps from
 * $KEEP_LOG_TIMESTAMPS (auto when unset or not a value of it),
 * event_timestamps false, watch full (successors 3, full_every 10 when
 * ring, ring_from 200 when auto). */
void keep_config_defaults(struct keep_config *c);

/* Load path into c (over whatever c holds). path NULL: $KEEP_CONFIG, else
 * /etc/keep/keep.yaml when it exists, else nothing is loaded (0).
 * 0; KEEP_ERR_IO (named file unreadable), KEEP_ERR_CONFIG (bad content).
 * err gets "FILE:LINE: reason". c is unchanged on error. */
int keep_config_load(struct keep_config *c, const char *path, char *err, size_t errlen);

/* Final validation after flags were applied: timings (keep_timing_check),
 * node id syntax if set, the application root (app) if set, the store URL if set
 * (keep_store_url_check: its syntax and kind, no I/O; what opening the store would refuse),
 * state_dir absolute. Every command runs it, `--check` too: a configuration it passes is one the
 * commands accept. 0 or KEEP_ERR_CONFIG. */
int keep_config_check(const struct keep_config *c, char *err, size_t errlen);

/* watch.mode: 0 for "full", "ring" or "auto", else KEEP_ERR_CONFIG. mode
 * borrowed. */
#define KEEP_CONFIG_SUCCESSORS_MAX 16	  /* = KEEP_WATCH_RING_MAX (lib/core/fence.h) */
#define KEEP_CONFIG_FULL_EVERY_MAX 100	  /* = KEEP_WATCH_FULL_EVERY_MAX (listing.h) */
#define KEEP_CONFIG_RING_FROM_MAX 1000000 /* a listing of more is not run anyway */
int keep_config_watch_mode_check(const char *mode);

/* Fill store options borrowing c's strings (valid while c lives). */
void keep_config_store_opts(const struct keep_config *c, struct keep_store_opts *o);

/* The node's own state directory: state_dir/node_id, into out (outlen bytes).
 * KEEP_ERR_CONFIG if node_id is empty; KEEP_ERR_TOOBIG if it does not fit. */
int keep_config_node_dir(const struct keep_config *c, char *out, size_t outlen);

#endif
