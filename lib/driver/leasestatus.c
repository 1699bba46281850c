/* keep — lease-status's driver (ADR 0020 §1; docs/operations.md
 * "Readiness"): this node's lease state file judged now (lib/core/leasestate.h),
 * the heartbeats of its fencing pipeline, the paths keep-agent reads, and
 * systemd's notify socket. Reads the node's files and the boot clock,
 * prints; no store I/O (lease-status links without the store's libraries:
 * Makefile LIGHT_CMDS). */
#include "leasestatus.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/err.h"
#include "../base/exitcode.h"
#include "../codec/nodeobj.h"
#include "../core/leasestate.h"
#include "../core/timing.h"
#include "../local/metrics.h"
#include "../local/statedir.h"
#include "../platform/clock.h"
#include "../platform/log.h"
#include "supervise.h"

/* No lease state file for the node: no lease-write ran under this id and
 * state directory (a mistyped --node-id or --state-dir, or a node not
 * started yet). One warning naming the directory and the nodes whose
 * state is there (up to 5), so a health check's typo does not pass for a
 * node that is merely down (issue 27, the operator's walkthrough). Reads
 * the state directory only. */
static void warn_no_state(const struct keep_config *cfg, const char *dir)
{
	char seen[512] = "", p[KEEP_PATH_MAX + 2 * 256];
	struct dirent *e;
	struct stat sb;
	size_t n = 0, used = 0;
	DIR *d = opendir(cfg->state_dir);

	while (d && (e = readdir(d)) != NULL) {
		int w;

		if (e->d_name[0] == '.' || !keep_node_id_valid(e->d_name))
			continue;
		w = snprintf(p, sizeof(p), "%s/%s/lease", cfg->state_dir, e->d_name);
		if (w < 0 || (size_t)w >= sizeof(p) || stat(p, &sb) != 0)
			continue;
		if (n++ < 5 && used < sizeof(seen)) {
			w = snprintf(seen + used, sizeof(seen) - used, "%s%s", used ? ", " : "",
				     e->d_name);
			if (w > 0)
				used += (size_t)w;
		}
	}
	if (d)
		closedir(d);
	keep_warn("lease-status",
		  "no lease state for node %s in '%s': no node ran here under this id and "
		  "state directory (nodes with state there: %s%s); check --node-id and "
		  "--state-dir",
		  cfg->node_id, dir, n ? seen : "none", n > 5 ? ", ..." : "");
}

/* --paths: the lines keep-agent reads with `read` (a path with a newline
 * cannot be one line: refused). */
int keep_leasestatus_paths(const struct keep_config *cfg, const char *dir)
{
	struct keep_metrics m;

	keep_metrics_init(&m, NULL, cfg->node_id);
	keep_metrics_set_prog(&m, cfg->metrics_textfile, "keep-agent");
	if (strchr(dir, '\n') || strchr(m.path, '\n'))
		keep_die(KEEP_EXIT_USAGE, "lease-status", "a path with a newline: refused");
	printf("node %s\ndir %s\nmetrics %s\nperiod_ms %lld\nstall_ms %lld\nlog_timestamps %s\n",
	       cfg->node_id, dir, m.path, (long long)cfg->timing.period_ms,
	       (long long)keep_timing_stall_ms(&cfg->timing),
	       keep_log_ts_name(cfg->log_timestamps));
	/* apps: the application roots, space-separated (no root holds a
	 * space: keep_app_root_valid), "-" when none (ADR 0022) */
	fputs("apps", stdout);
	for (size_t i = 0; i < cfg->napps; i++)
		printf(" %s", cfg->apps[i]);
	fputs(cfg->napps ? "\n" : " -\n", stdout);
	keep_metrics_release(&m);
	return KEEP_EXIT_OK;
}

/* A plain decimal integer > 0 (no sign, no leading zero, at most 18 digits). */
static bool positive(const char *v, int64_t *out)
{
	int64_t x = 0;
	size_t i;

	if (!v || !*v || v[0] == '0' || strlen(v) > 18)
		return false;
	for (i = 0; v[i]; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (v[i] - '0');
	}
	*out = x;
	return true;
}

/* One heartbeat file of the fencing pipeline (docs/formats.md "The watch
 * state", "The fence state"), judged on this boot's clock: one line
 * `progress node=ID part=PART state=.. pid=.. age_ms=.. stall_ms=..`
 * (+ listing= for node-watch). The file is strict: its type, exactly its
 * keys, node = this node; anything else is `bad` (with a warning). */
static void print_progress(const struct keep_config *cfg, const char *dir, const char *part,
			   const char *file, const char *type, const char *const *keys,
			   const char *boot, enum keep_line_format fmt)
{
	char path[KEEP_PATH_MAX + 100], err[128];
	const char *state = "absent", *listing = NULL, *v;
	int64_t pid = 0, updated = 0, age = -1;
	struct keep_line l;
	struct keep_buf in, b;
	size_t i, nkeys = 0;
	bool parsed = false;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	keep_buf_init(&in, KEEP_LINE_MAX + 2);
	if (keep_read_file(path, &in, KEEP_LINE_MAX + 1) != 0) {
		if (errno != ENOENT) {
			state = "bad";
			snprintf(err, sizeof(err), "unreadable (%s)", strerror(errno));
		}
	} else {
		state = "bad";
		snprintf(err, sizeof(err), "not one line");
		if (in.len && in.data[in.len - 1] == '\n' && !memchr(in.data, '\n', in.len - 1) &&
		    keep_line_parse(in.data, in.len - 1, &l, err, sizeof(err)) == 0)
			parsed = true;
	}
	keep_buf_release(&in);
	if (parsed) {
		while (keys[nkeys])
			nkeys++;
		snprintf(err, sizeof(err), "not a %s line of node %s", type, cfg->node_id);
		/* exactly these keys, in this order */
		for (i = 0; i < l.n && i < nkeys && strcmp(l.f[i].key, keys[i]) == 0; i++)
			;
		listing = keep_line_get(&l, "listing");
		if (strcmp(l.type, type) == 0 && i == nkeys && l.n == nkeys &&
		    (v = keep_line_get(&l, "node")) && strcmp(v, cfg->node_id) == 0 &&
		    positive(keep_line_get(&l, "pid"), &pid) &&
		    positive(keep_line_get(&l, "updated_mono_ms"), &updated) &&
		    (!listing || strcmp(listing, "ok") == 0 || strcmp(listing, "failing") == 0 ||
		     strcmp(listing, "failed") == 0)) {
			int64_t now = keep_boot_ms(); /* after the read: the age is now's */

			state = keep_timing_heartbeat_stalled(keep_line_get(&l, "boot"), boot,
							      updated, now, &cfg->timing, &age)
				    ? "stalled"
				    : "ok";
		}
	}
	if (strcmp(state, "bad") == 0)
		keep_warn("lease-status", "'%s': %s", path, err);
	keep_buf_init(&b, KEEP_LINE_MAX);
	keep_line_start_fmt(&b, "progress", fmt);
	keep_line_str(&b, "node", cfg->node_id);
	keep_line_str(&b, "part", part);
	keep_line_str(&b, "state", state);
	if (pid)
		keep_line_int(&b, "pid", pid);
	else
		keep_line_str(&b, "pid", NULL);
	if (age >= 0)
		keep_line_int(&b, "age_ms", age);
	else
		keep_line_str(&b, "age_ms", NULL);
	keep_line_int(&b, "stall_ms", keep_timing_stall_ms(&cfg->timing));
	if (strcmp(part, "node-watch") == 0)
		keep_line_str(&b, "listing", pid ? listing : NULL);
	keep_line_emit(&b);
	keep_buf_release(&b);
	if (parsed)
		keep_line_release(&l);
}

int keep_leasestatus_progress(const struct keep_config *cfg, const char *dir,
			      enum keep_line_format fmt)
{
	static const char *const watch_keys[] = {
	    "node",	     "pid",	      "boot",	  "updated_mono_ms", "listing",
	    "since_mono_ms", "since_wall_ms", "failures", "reason",	     NULL};
	static const char *const fence_keys[] = {"node",  "pid", "boot", "updated_mono_ms",
						 "lines", NULL};
	char boot[64];

	keep_boot_id(boot, sizeof(boot));
	print_progress(cfg, dir, "node-watch", "watch", "watch", watch_keys, boot, fmt);
	print_progress(cfg, dir, "lease-fence", "fence", "fence", fence_keys, boot, fmt);
	return KEEP_EXIT_OK;
}

#define NOTIFY_LINGER_MS 500 /* the sender stays this long after its message */

/* --notify: argv[first..argc) joined by newlines, sent (keep_sd_notify).
 * 0 sent or nothing to do; 100 a bad assignment; 111 not sent. */
int keep_leasestatus_notify(struct keep_cli *cli, int argc, char **argv, int first)
{
	char msg[4097];
	size_t n = 0;
	int i, rc;

	if (first >= argc)
		keep_cli_usage_error(cli, "--notify needs VAR=VALUE");
	for (i = first; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (!strchr(argv[i], '=') || argv[i][0] == '=' || strchr(argv[i], '\n') ||
		    n + l + 1 >= sizeof(msg))
			keep_cli_usage_error(cli, "--notify: '%s' is not one VAR=VALUE", argv[i]);
		memcpy(msg + n, argv[i], l);
		n += l;
		msg[n++] = '\n';
	}
	msg[n - 1] = '\0';
	rc = keep_sd_notify(msg);
	if (rc < 0)
		keep_die(rc == KEEP_ERR_INVAL ? KEEP_EXIT_USAGE : KEEP_EXIT_TEMP, "lease-status",
			 "unable to notify systemd through $NOTIFY_SOCKET: %s",
			 rc == KEEP_ERR_INVAL ? "an unusable socket address" : strerror(errno));
	/* systemd maps a message to its unit by the sender's pid: a sender
	 * gone before systemd reads its message is not found (sd_notify(3)) */
	if (rc == 0)
		keep_sleep_until_boot(keep_boot_ms() + NOTIFY_LINGER_MS);
	return KEEP_EXIT_OK;
}

/* See leasestatus.h. */
int keep_leasestatus_show(const struct keep_config *cfg, const char *dir, enum keep_line_format fmt)
{
	struct keep_lease_state st;
	struct keep_buf b;
	char boot[64];
	int64_t now;
	int rc;
	bool valid;
	const char *why;

	keep_line_begin_fmt(&b, "lease", fmt);
	keep_line_str(&b, "node", cfg->node_id);
	rc = keep_lease_state_read(dir, &st);
	if (rc) {
		int e = errno; /* KEEP_ERR_IO's; the line's output may change errno */

		keep_line_str(&b, "phase", "none");
		keep_line_end(&b);
		/* the one line says why: a status run as another user than the
		 * agent's (EACCES) answers "not live" about a node that may well
		 * be live (docs/operations.md "Readiness") */
		if (rc == KEEP_ERR_IO && (e == EACCES || e == EPERM))
			keep_warn("lease-status",
				  "unable to read the lease state in '%s': %s: this answer is not "
				  "about the node (run it as the user the agent runs as, or root)",
				  dir, strerror(e));
		else if (rc == KEEP_ERR_IO && e == ENOENT)
			warn_no_state(cfg, dir);
		else if (rc == KEEP_ERR_IO)
			keep_warn("lease-status", "unreadable lease state in '%s': %s", dir,
				  strerror(e));
		else if (rc != KEEP_ERR_IO)
			keep_warn("lease-status",
				  "unreadable lease state in '%s': not a keep lease state file",
				  dir);
		return KEEP_EXIT_NOT_LIVE;
	}
	now = keep_boot_ms(); /* after the read: the answer is about now */
	keep_boot_id(boot, sizeof(boot));
	why = keep_lease_state_incomparable(&st, boot);
	if (why)
		keep_warn("lease-status", "the lease state in '%s' is not valid here: %s", dir,
			  why);
	valid = keep_lease_state_valid(&st, now, boot);
	keep_line_str(&b, "phase", keep_lease_state_shown_phase(&st, now, boot));
	/* the state file's "-" is an absent value (null in JSON) */
	keep_line_str(&b, "reason", strcmp(st.reason, "-") != 0 ? st.reason : NULL);
	keep_line_str(&b, "instance", strcmp(st.instance, "-") != 0 ? st.instance : NULL);
	keep_line_int(&b, "valid_ms", valid ? st.valid_until_ms - now : 0);
	keep_line_int(&b, "written_at_ms", st.written_at_ms);
	keep_line_int(&b, "lapses", st.lapses);
	keep_line_end(&b);
	return keep_lease_state_code(&st, now, boot);
}
