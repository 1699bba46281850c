/* lease-write — hold this node's lease nodes/<id> (ADR 0020 §1, §4, §5).
 *
 * A driver of lib/core/lease.c: it reads the clocks, calls the store,
 * feeds the replies to the machine, prints its events, and keeps the
 * lease state file (state_dir/<id>/lease) that every other command of
 * the node reads. SIGTERM/SIGINT: the clean stop (released, §4). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../lib/cli.h"
#include "../lib/clock.h"
#include "../lib/core/lease.h"
#include "../lib/err.h"
#include "../lib/exitcode.h"
#include "../lib/line.h"
#include "../lib/metrics.h"
#include "../lib/statedir.h"

static const char usage[] =
    "usage: lease-write [-c FILE] [--store URL] [--node-id ID] [--state-dir DIR]\n"
    "                   [-v] [--check]\n"
    "\n"
    "Hold this node's lease nodes/<ID> until SIGTERM/SIGINT, then write\n"
    "`released` (clean stop). Prints one event a line on stdout:\n"
    "  check-start check-read check-shortcut live adopted write-failed read-failed\n"
    "  ran-out recovered back-to-check stopping released stopped lost\n"
    "  (and `renewed` with -v). State for other commands: STATE_DIR/ID/lease.\n"
    "\n"
    "  -v, --verbose   also print every renewal\n"
    "  --check         validate the configuration, print `configuration OK`, exit\n"
    "\n"
    "exit: 0 stopped cleanly; 10 fenced; 11 another instance (twin); 12 released by\n"
    "another; 13 object removed; 16 an old-format node runs under this id;\n"
    "17 nodes/ID is not a keep object; 100 usage/config; 111 store unusable or\n"
    "release unconfirmed. See docs/exit-codes.md.\n";

struct driver {
	const char *prog;
	struct keep_config cfg;
	char node_dir[KEEP_PATH_MAX + 80];
	char key[KEEP_NODE_ID_MAX + 8];
	char boot_id[64];
	struct keep_store *store;
	struct keep_lease sm;
	struct keep_metrics metrics;
	bool verbose;
};

static void save_state(struct driver *d, int64_t now_mono)
{
	struct keep_lease_state st;
	int64_t wall = keep_wall_ms();

	memset(&st, 0, sizeof(st));
	snprintf(st.node, sizeof(st.node), "%s", d->cfg.node_id);
	snprintf(st.instance, sizeof(st.instance), "%s", d->sm.tmpl.instance);
	st.pid = (int64_t)getpid();
	snprintf(st.boot_id, sizeof(st.boot_id), "%s", d->boot_id);
	snprintf(st.phase, sizeof(st.phase), "%s", keep_lease_phase_name(d->sm.phase));
	snprintf(st.reason, sizeof(st.reason), "%s", keep_lease_reason_name(d->sm.reason));
	snprintf(st.version, sizeof(st.version), "%s", d->sm.version[0] ? d->sm.version : "-");
	st.written_at_ms = d->sm.written_at_ms;
	if (keep_lease_valid(&d->sm, now_mono)) {
		st.valid_until_mono_ms = d->sm.valid_until_mono_ms;
		st.valid_until_wall_ms = wall + (d->sm.valid_until_mono_ms - now_mono);
		st.live_since_mono_ms = d->sm.live_since_mono_ms;
	}
	st.lapses = d->sm.lapses + (d->sm.phase == KEEP_LEASE_LOST ? 1 : 0);
	st.updated_wall_ms = wall;
	if (keep_lease_state_write(d->node_dir, &st) != 0)
		keep_warn(d->prog, "unable to write lease state in '%s': %s", d->node_dir,
			  strerror(errno));
}

static void print_event(struct driver *d, const struct keep_lease_event *e, int64_t now_mono)
{
	struct keep_buf b;

	static struct keep_lease_event last_read;

	if (e->kind == KEEP_LEV_RENEWED && !d->verbose)
		return;
	if (e->kind == KEEP_LEV_CHECK_READ && !d->verbose) {
		/* print a start-check read only when what it saw changed */
		bool same = last_read.kind == KEEP_LEV_CHECK_READ &&
			    last_read.outcome == e->outcome &&
			    last_read.written_at_ms == e->written_at_ms &&
			    strcmp(last_read.state, e->state) == 0 &&
			    strcmp(last_read.other_instance, e->other_instance) == 0;
		last_read = *e;
		if (same)
			return;
	}
	keep_line_begin(&b, keep_lease_event_name(e->kind));
	keep_line_str(&b, "node", d->cfg.node_id);
	keep_line_str(&b, "instance", d->sm.tmpl.instance);
	switch (e->kind) {
	case KEEP_LEV_CHECK_START:
		keep_line_int(&b, "wait_ms", e->wait_ms);
		break;
	case KEEP_LEV_CHECK_READ:
		keep_line_str(&b, "outcome", keep_outcome_name(e->outcome));
		keep_line_str(&b, "state", e->state[0] ? e->state : NULL);
		keep_line_str(&b, "seen_instance", e->other_instance[0] ? e->other_instance : NULL);
		if (e->written_at_ms)
			keep_line_int(&b, "written_at_ms", e->written_at_ms);
		break;
	case KEEP_LEV_LIVE:
	case KEEP_LEV_RENEWED:
	case KEEP_LEV_ADOPTED:
	case KEEP_LEV_RECOVERED:
		keep_line_str(&b, "version", e->version);
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
		keep_line_int(&b, "valid_ms",
			      e->valid_until_mono_ms > now_mono ? e->valid_until_mono_ms - now_mono
								: 0);
		break;
	case KEEP_LEV_WRITE_FAILED:
	case KEEP_LEV_READ_FAILED:
		keep_line_str(&b, "outcome", keep_outcome_name(e->outcome));
		keep_line_int(&b, "retry_ms", e->wait_ms);
		break;
	case KEEP_LEV_RAN_OUT:
		keep_line_int(&b, "lapses", d->sm.lapses);
		break;
	case KEEP_LEV_RELEASED:
		keep_line_str(&b, "version", e->version);
		keep_line_int(&b, "written_at_ms", e->written_at_ms);
		break;
	case KEEP_LEV_LOST:
		keep_line_str(&b, "reason", keep_lease_reason_name(e->reason));
		keep_line_str(&b, "state", e->state[0] ? e->state : NULL);
		keep_line_str(&b, "seen_instance", e->other_instance[0] ? e->other_instance : NULL);
		break;
	default:
		break;
	}
	keep_line_end(&b);
}

/* Print and persist what the machine reported since the last call. */
static void drain_events(struct driver *d)
{
	struct keep_lease_event e;
	int64_t now = keep_mono_ms();
	bool any = false;

	while (keep_lease_poll_event(&d->sm, &e)) {
		any = true;
		print_event(d, &e, now);
		switch (e.kind) {
		case KEEP_LEV_LIVE:
		case KEEP_LEV_RENEWED:
		case KEEP_LEV_ADOPTED:
		case KEEP_LEV_RECOVERED:
		case KEEP_LEV_RELEASED:
			keep_metrics_inc(&d->metrics, "keep_node_lease_writes_total", 1);
			break;
		case KEEP_LEV_WRITE_FAILED:
			keep_metrics_inc(&d->metrics, "keep_node_lease_failures_total", 1);
			break;
		case KEEP_LEV_RAN_OUT:
			keep_metrics_inc(&d->metrics, "keep_node_lease_ran_out_total", 1);
			break;
		case KEEP_LEV_LOST:
			if (e.reason != KEEP_REASON_UNCONFIRMED)
				fprintf(stderr,
					"%s: fatal: node lease lost: %s (nodes/%s shows %s)\n",
					d->prog, keep_lease_reason_name(e.reason), d->cfg.node_id,
					e.state[0] ? e.state : "?");
			else
				keep_warn(d->prog,
					  "clean stop: released not confirmed in time; peers will "
					  "fence nodes/%s after ttl + grace",
					  d->cfg.node_id);
			break;
		default:
			break;
		}
	}
	if (any || d->sm.phase == KEEP_LEASE_LIVE)
		save_state(d, now);
	keep_metrics_set(&d->metrics, "keep_node_lease_valid_ms",
			 keep_lease_valid(&d->sm, now) ? d->sm.valid_until_mono_ms - now : 0);
	keep_metrics_flush(&d->metrics);
}

static void do_read(struct driver *d, const struct keep_lease_action *act)
{
	struct keep_reply r;
	struct keep_buf body;
	struct keep_node_obj obj;
	char err[256];
	int derr = 0, rc;

	keep_buf_init(&body, KEEP_BODY_MAX);
	keep_store_set_timeout(d->store, act->timeout_ms);
	memset(&r, 0, sizeof(r));
	rc = keep_store_get(d->store, d->key, &body, &r);
	if (rc)
		keep_reply_set(&r, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
	keep_metrics_store(&d->metrics, "get", r.outcome);
	if (r.outcome == KEEP_STORE_OK) {
		derr = keep_node_obj_decode(body.data ? body.data : "", body.len, &obj, err,
					    sizeof(err));
		if (!derr && obj.format == 3 && strcmp(obj.node, d->cfg.node_id) != 0) {
			derr = KEEP_ERR_PARSE;
			snprintf(err, sizeof(err), "object names node '%s'", obj.node);
		}
		if (derr)
			keep_warn(d->prog, "nodes/%s is not a valid node lease: %s", d->cfg.node_id,
				  err);
	} else if (r.outcome != KEEP_STORE_NOT_FOUND) {
		keep_warn(d->prog, "unable to read nodes/%s: %s: %s", d->cfg.node_id,
			  keep_outcome_name(r.outcome), r.detail);
	}
	keep_lease_on_read(&d->sm, keep_mono_ms(), keep_wall_ms(), r.outcome, r.version,
			   r.outcome == KEEP_STORE_OK && !derr ? &obj : NULL, derr);
	keep_buf_release(&body);
}

static void do_write(struct driver *d, const struct keep_lease_action *act)
{
	struct keep_reply r;
	struct keep_buf body;
	int rc;

	keep_buf_init(&body, KEEP_NODEOBJ_MAX);
	memset(&r, 0, sizeof(r));
	rc = keep_node_obj_encode(&act->obj, &body);
	if (rc) {
		/* cannot happen with a validated node id; refuse loudly */
		keep_reply_set(&r, KEEP_STORE_REFUSED, 0, "encode: %s", keep_strerror(rc));
	} else {
		keep_store_set_timeout(d->store, act->timeout_ms);
		rc = keep_store_put(d->store, d->key, body.data, body.len, act->cond,
				    act->cond == KEEP_COND_IF_MATCH ? act->if_match : NULL, &r);
		if (rc)
			keep_reply_set(&r, KEEP_STORE_REFUSED, 0, "%s", keep_strerror(rc));
	}
	keep_metrics_store(&d->metrics, "put", r.outcome);
	if (r.outcome != KEEP_STORE_OK)
		keep_warn(d->prog, "lease write nodes/%s: %s: %s", d->cfg.node_id,
			  keep_outcome_name(r.outcome), r.detail[0] ? r.detail : "-");
	keep_lease_on_write(&d->sm, keep_mono_ms(), r.outcome, r.version);
	keep_buf_release(&body);
}

/* The start check's wait: the keep_start_check_wait_ms gauge and, when
 * stderr is a terminal, a progress line each time the whole seconds left
 * change. */
static void check_progress(struct driver *d, int64_t now_mono)
{
	static int64_t last_s = -1;
	int64_t left = 0;

	if (d->sm.phase == KEEP_LEASE_CHECK && d->sm.check_deadline_mono_ms > now_mono)
		left = d->sm.check_deadline_mono_ms - now_mono;
	keep_metrics_set(&d->metrics, "keep_start_check_wait_ms", left);
	keep_metrics_flush(&d->metrics);
	if (left > 0 && (left + 999) / 1000 != last_s && isatty(2)) {
		last_s = (left + 999) / 1000;
		fprintf(stderr, "%s: start check: waiting %lld s more for nodes/%s (ttl + grace)\n",
			d->prog, (long long)last_s, d->cfg.node_id);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {KEEP_CLI_LONGOPTS,
					     {"verbose", no_argument, NULL, 'v'},
					     {"check", no_argument, NULL, KEEP_OPT_CHECK},
					     {NULL, 0, NULL, 0}};
	struct keep_cli cli;
	struct driver d;
	struct keep_store_opts so;
	struct keep_node_obj tmpl;
	char err[512];
	int c, rc;

	memset(&d, 0, sizeof(d));
	d.prog = "lease-write";
	keep_cli_init(&cli, d.prog, usage);
	while ((c = keep_cli_next(&cli, argc, argv, "hc:v", opts)) != -1) {
		switch (c) {
		case 'v':
			d.verbose = true;
			break;
		}
	}
	if (optind != argc)
		keep_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	keep_cli_setup(&cli, &d.cfg, KEEP_NEED_NODE | KEEP_NEED_STORE);
	if (keep_config_node_dir(&d.cfg, d.node_dir, sizeof(d.node_dir)) != 0)
		keep_die(KEEP_EXIT_USAGE, d.prog, "state directory path too long");
	if (keep_mkdirs(d.node_dir) != 0)
		keep_die(KEEP_EXIT_TEMP, d.prog, "unable to create state directory '%s': %s",
			 d.node_dir, strerror(errno));
	{
		/* one lease-write per node per state directory: a twin on this
		 * machine is refused before it can touch the shared state file */
		char lock[KEEP_PATH_MAX + 100];
		int fd;

		snprintf(lock, sizeof(lock), "%s/lease.lock", d.node_dir);
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			keep_die(KEEP_EXIT_TEMP, d.prog, "unable to open '%s': %s", lock,
				 strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) != 0)
			keep_die(KEEP_EXIT_REPLACED, d.prog,
				 "another lease-write for node '%s' is running with state "
				 "directory '%s'",
				 d.cfg.node_id, d.node_dir);
		/* fd stays open (and locked) for the life of the process */
	}
	snprintf(d.key, sizeof(d.key), "nodes/%s", d.cfg.node_id);
	keep_boot_id(d.boot_id, sizeof(d.boot_id));
	keep_metrics_init(&d.metrics, NULL, d.cfg.node_id);
	keep_metrics_set_prog(&d.metrics, d.cfg.metrics_textfile, d.prog);
	/* counters exist from the start: an alert on the first increase sees it */
	keep_metrics_inc(&d.metrics, "keep_node_lease_writes_total", 0);
	keep_metrics_inc(&d.metrics, "keep_node_lease_failures_total", 0);
	keep_metrics_inc(&d.metrics, "keep_node_lease_ran_out_total", 0);

	keep_config_store_opts(&d.cfg, &so);
	rc = keep_store_open(d.cfg.store, &so, &d.store, err, sizeof(err));
	if (rc)
		keep_die(rc == KEEP_ERR_INVAL || rc == KEEP_ERR_PERM ? KEEP_EXIT_USAGE
								     : KEEP_EXIT_TEMP,
			 d.prog, "unable to open store '%s': %s", d.cfg.store, err);

	memset(&tmpl, 0, sizeof(tmpl));
	snprintf(tmpl.node, sizeof(tmpl.node), "%s", d.cfg.node_id);
	if (keep_new_instance(tmpl.instance, sizeof(tmpl.instance)) != 0)
		keep_die(KEEP_EXIT_TEMP, d.prog, "unable to draw a random instance");
	if (gethostname(tmpl.host, sizeof(tmpl.host) - 1) != 0)
		tmpl.host[0] = '\0';
	for (char *p = tmpl.host; *p; p++)
		if (*p <= ' ' || *p > '~')
			*p = '_';
	tmpl.pid = (int64_t)getpid();
	snprintf(tmpl.software, sizeof(tmpl.software), "keep/0.1");

	keep_cli_stop_signals();

	keep_lease_init(&d.sm, &d.cfg.timing, &tmpl, keep_mono_ms());
	for (;;) {
		struct keep_lease_action act;
		int64_t now = keep_mono_ms();

		if (keep_stop_flag == 1) {
			keep_stop_flag = 2;
			keep_lease_stop(&d.sm, now);
		}
		keep_lease_next(&d.sm, now, keep_wall_ms(), &act);
		drain_events(&d);
		if (act.kind == KEEP_LACT_DONE)
			break;
		switch (act.kind) {
		case KEEP_LACT_WAIT:
			check_progress(&d, now);
			if (keep_stop_flag != 1)
				keep_sleep_until_mono(act.until_mono_ms);
			break;
		case KEEP_LACT_READ:
			do_read(&d, &act);
			break;
		case KEEP_LACT_WRITE:
			do_write(&d, &act);
			break;
		default:
			break;
		}
		drain_events(&d);
	}
	save_state(&d, keep_mono_ms());
	rc = keep_lease_exit_code(&d.sm);
	keep_store_free(d.store);
	keep_metrics_release(&d.metrics);
	return rc;
}
