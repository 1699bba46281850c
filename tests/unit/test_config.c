/* Unit tests: the configuration file (lib/local/config.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/base/err.h"
#include "../../lib/local/config.h"
#include "unit.h"

static char last_err[512];

/* Write text to a new temp file; its path into path (64 bytes). */
static void tmpfile_with(char *path, const char *text)
{
	int fd;
	size_t n = strlen(text);

	snprintf(path, 64, "/tmp/keep-test-config-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, n) != (ssize_t)n) {
		printf("# cannot write temp file\n");
		exit(2);
	}
	close(fd);
}

/* Load text over defaults; the result code. The config goes to *c. */
static int load(const char *text, struct keep_config *c)
{
	char path[64];
	int rc;

	keep_config_defaults(c);
	tmpfile_with(path, text);
	rc = keep_config_load(c, path, last_err, sizeof(last_err));
	unlink(path);
	return rc;
}

static int load_s(const char *text)
{
	struct keep_config c;

	return load(text, &c);
}

static const char *full = "# a full file\n"
			  "node_id: n1\n"
			  "store: file:///var/lib/keep/bucket\n"
			  "state_dir: /srv/keep\n"
			  "lease:\n"
			  "  ttl_ms: 20000\n"
			  "  grace_ms: 6000\n"
			  "  safety_ms: 3000\n"
			  "  max_skew_ms: 0\n"
			  "  heartbeat_period_ms: 5000\n"
			  "s3:\n"
			  "  region: eu-west-1\n"
			  "  endpoint: \"https://s3.example.com\"\n"
			  "  addressing: virtual\n"
			  "  credentials_file: /etc/keep/credentials\n"
			  "  tls_insecure: true\n"
			  "  timeout_ms: 4000\n"
			  "metrics:\n"
			  "  textfile: ''\n";

TEST(defaults)
{
	struct keep_config c;
	char err[256];

	keep_config_defaults(&c);
	CHECK_EQ_STR(c.node_id, "");
	CHECK_EQ_STR(c.store, "");
	CHECK_EQ_STR(c.state_dir, "/var/lib/keep");
	CHECK_EQ_INT(c.timing.ttl_ms, 10000);
	CHECK_EQ_INT(c.timing.period_ms, 3000);
	CHECK_EQ_INT(c.s3_timeout_ms, 10000);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0);
}

TEST(good_file_loads)
{
	struct keep_config c;
	struct keep_store_opts o;
	char err[256];

	CHECK_EQ_INT(load(full, &c), 0);
	CHECK_EQ_STR(c.node_id, "n1");
	CHECK_EQ_STR(c.store, "file:///var/lib/keep/bucket");
	CHECK_EQ_STR(c.state_dir, "/srv/keep");
	CHECK_EQ_INT(c.timing.ttl_ms, 20000);
	CHECK_EQ_INT(c.timing.grace_ms, 6000);
	CHECK_EQ_INT(c.timing.safety_ms, 3000);
	CHECK_EQ_INT(c.timing.max_skew_ms, 0);
	CHECK_EQ_INT(c.timing.period_ms, 5000);
	CHECK_EQ_STR(c.s3_region, "eu-west-1");
	CHECK_EQ_STR(c.s3_endpoint, "https://s3.example.com");
	CHECK_EQ_STR(c.s3_addressing, "virtual");
	CHECK_EQ_STR(c.s3_credentials_file, "/etc/keep/credentials");
	CHECK(c.s3_tls_insecure);
	CHECK_EQ_INT(c.s3_timeout_ms, 4000);
	CHECK_EQ_STR(c.metrics_textfile, "");
	CHECK(strncmp(c.path, "/tmp/keep-test-config-", 22) == 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0);
	keep_config_store_opts(&c, &o);
	CHECK_EQ_STR(o.region, "eu-west-1");
	CHECK_EQ_INT(o.timeout_ms, 4000);
	CHECK(o.tls_insecure);
}

TEST(empty_and_comment_only)
{
	struct keep_config c;

	CHECK_EQ_INT(load("", &c), 0);
	CHECK_EQ_STR(c.state_dir, "/var/lib/keep");
	CHECK_EQ_INT(load("# only a comment\n\n# another\n", &c), 0);
	CHECK_EQ_INT(c.timing.ttl_ms, 10000);
	CHECK_EQ_INT(load("---\n", &c), 0);
}

TEST(unknown_key)
{
	CHECK_EQ_INT(load_s("node_id: n1\nnodeid: n2\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, ":2: unknown key 'nodeid'") != NULL);
	CHECK_EQ_INT(load_s("lease:\n  ttl: 5\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, ":2: unknown key 'ttl'") != NULL);
	CHECK_EQ_INT(load_s("s3:\n  bucket: b\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("metrics:\n  port: 9100\n"), KEEP_ERR_CONFIG);
}

TEST(apps_list)
{
	struct keep_config c;
	char err[256];

	CHECK_EQ_INT(load("apps: [billing, search-eu]\n", &c), 0);
	CHECK_EQ_INT(c.napps, 2);
	CHECK_EQ_STR(c.apps[0], "billing");
	CHECK_EQ_STR(c.apps[1], "search-eu");
	CHECK_EQ_INT(load("apps:\n  - a\n  - b_2\n", &c), 0);
	CHECK_EQ_INT(c.napps, 2);
	CHECK_EQ_INT(load("apps: []\n", &c), 0);
	CHECK_EQ_INT(c.napps, 0);
	CHECK_EQ_INT(load_s("apps: billing\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, ":1: 'apps' must be a list of application roots") != NULL);
	CHECK_EQ_INT(load_s("apps: [a, Bad]\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "'apps': 'Bad' is not a valid application root") != NULL);
	CHECK_EQ_INT(load_s("apps: [a, a]\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "'apps': 'a' is listed twice") != NULL);
	CHECK_EQ_INT(load_s("apps: [[a]]\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("apps: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, "
			    "b5, b6]\n"),
		     KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "more than 16 roots") != NULL);
	/* --app: checked with the rest (keep_config_check) */
	keep_config_defaults(&c);
	snprintf(c.app, sizeof(c.app), "%s", "Bad");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	snprintf(c.app, sizeof(c.app), "%s", "good");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0);
}

TEST(duplicate_key)
{
	CHECK_EQ_INT(load_s("node_id: n1\nnode_id: n2\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "duplicate key 'node_id'") != NULL);
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 9000\n  ttl_ms: 9000\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 9000\nlease:\n  grace_ms: 9000\n"), KEEP_ERR_CONFIG);
}

TEST(bad_integers)
{
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 10k\n"), KEEP_ERR_CONFIG);	/* junk */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 10000.0\n"), KEEP_ERR_CONFIG);	/* float */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 1e4\n"), KEEP_ERR_CONFIG);	/* exponent */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: -1\n"), KEEP_ERR_CONFIG);	/* negative */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: +10000\n"), KEEP_ERR_CONFIG);	/* sign */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 0x10\n"), KEEP_ERR_CONFIG);	/* hex */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 010000\n"), KEEP_ERR_CONFIG);	/* leading 0 */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms:\n"), KEEP_ERR_CONFIG);		/* empty */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: \"10000\"\n"), KEEP_ERR_CONFIG); /* quoted */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 86400001\n"), KEEP_ERR_CONFIG);	/* range */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 99999999999999999999999\n"),
		     KEEP_ERR_CONFIG);						  /* overflow */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: [1]\n"), KEEP_ERR_CONFIG);	  /* sequence */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: !!int 10000\n"), KEEP_ERR_CONFIG); /* tag */
	CHECK_EQ_INT(load_s("lease:\n  ttl_ms: 86400000\n"), 0);
	CHECK_EQ_INT(load_s("s3:\n  timeout_ms: 1.5\n"), KEEP_ERR_CONFIG);
}

TEST(bad_booleans)
{
	struct keep_config c;

	CHECK_EQ_INT(load_s("s3:\n  tls_insecure: yes\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("s3:\n  tls_insecure: True\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("s3:\n  tls_insecure: 1\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("s3:\n  tls_insecure: \"true\"\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load("s3:\n  tls_insecure: false\n", &c), 0);
	CHECK(!c.s3_tls_insecure);
}

TEST(timing_rules)
{
	struct keep_config c;
	char err[256];

	/* grace + safety < 2 * skew */
	CHECK_EQ_INT(load("lease:\n  grace_ms: 1000\n  safety_ms: 1000\n  max_skew_ms: 1001\n", &c),
		     0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	CHECK(strstr(err, "max_skew_ms") != NULL);
	/* period > ttl / 3 */
	CHECK_EQ_INT(load("lease:\n  ttl_ms: 9000\n  heartbeat_period_ms: 3001\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	CHECK(strstr(err, "heartbeat_period_ms") != NULL);
	CHECK_EQ_INT(load("lease:\n  ttl_ms: 9000\n  heartbeat_period_ms: 3000\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0);
	/* safety >= ttl */
	CHECK_EQ_INT(
	    load("lease:\n  ttl_ms: 3000\n  safety_ms: 3000\n  heartbeat_period_ms: 1000\n", &c),
	    0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	/* zero ttl */
	CHECK_EQ_INT(load("lease:\n  ttl_ms: 0\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
}

/* lease.clock_step_ms (issue 13): 0 = max(max_skew / 2, 20); else 20..;
 * the threshold in force at most grace + safety - max_skew. */
TEST(clock_step_rules)
{
	struct keep_config c;
	char err[256];

	CHECK_EQ_INT(load("lease:\n  clock_step_ms: 0\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0);
	CHECK_EQ_INT(keep_timing_clock_step_ms(&c.timing), 500); /* max_skew 1000 / 2 */
	CHECK_EQ_INT(load("lease:\n  clock_step_ms: 6000\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0); /* 5000 + 2000 - 1000 */
	CHECK_EQ_INT(keep_timing_clock_step_ms(&c.timing), 6000);
	CHECK_EQ_INT(load("lease:\n  clock_step_ms: 6001\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	CHECK(strstr(err, "clock_step_ms (6001) must not exceed") != NULL);
	CHECK_EQ_INT(load("lease:\n  clock_step_ms: 19\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	CHECK(strstr(err, "20..") != NULL);
	CHECK_EQ_INT(load("lease:\n  max_skew_ms: 0\n", &c), 0);
	CHECK_EQ_INT(keep_timing_clock_step_ms(&c.timing), KEEP_CLOCK_STEP_MIN_MS);
	CHECK_EQ_INT(load("lease:\n  clock_step_ms: -5\n", &c), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load("lease:\n  clock_step_ms: \"500\"\n", &c), KEEP_ERR_CONFIG);
	/* the default's floor must fit too */
	CHECK_EQ_INT(load("lease:\n  grace_ms: 5\n  safety_ms: 5\n  max_skew_ms: 0\n", &c), 0);
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	CHECK(strstr(err, "the default") != NULL);
}

TEST(strings)
{
	struct keep_config c;
	char text[2200];
	char err[256];

	/* over-long: refused, never truncated */
	snprintf(text, sizeof(text), "state_dir: /%01100d\n", 0);
	CHECK_EQ_INT(load_s(text), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "too long") != NULL);
	snprintf(text, sizeof(text), "s3:\n  region: r%0127d\n", 0);
	CHECK_EQ_INT(load_s(text), KEEP_ERR_CONFIG);
	snprintf(text, sizeof(text), "s3:\n  region: r%0126d\n", 0);
	CHECK_EQ_INT(load_s(text), 0);
	CHECK_EQ_INT(load_s("node_id: .bad\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("node_id: a/b\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("store: http://x\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("store: s3://bucket/prefix\n"), 0);
	CHECK_EQ_INT(load_s("s3:\n  addressing: auto\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("s3:\n  addressing: path\n"), 0);
	CHECK_EQ_INT(load_s("state_dir: \"\"\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("metrics:\n  textfile: \"a\\nb\"\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("node_id: [n1]\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("lease: 5\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("lease:\n"), KEEP_ERR_CONFIG);
	/* flags-style values set after loading are checked too */
	keep_config_defaults(&c);
	snprintf(c.node_id, sizeof(c.node_id), "bad id");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	keep_config_defaults(&c);
	snprintf(c.store, sizeof(c.store), "ftp://x");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
}

/* store URLs and state_dir: what opening the store would refuse, refused
 * by the check (keep_store_url_check, no I/O); state_dir absolute */
TEST(store_url_and_state_dir)
{
	struct keep_config c;
	char err[512];

	CHECK_EQ_INT(load_s("store: file://relative/dir\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "not absolute") != NULL);
	CHECK_EQ_INT(load_s("store: file:///abs/dir\n"), 0);
	CHECK_EQ_INT(load_s("store: s3://\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("store: s3://ab\n"), KEEP_ERR_CONFIG);	   /* bucket too short */
	CHECK_EQ_INT(load_s("store: s3://Upper-Case\n"), KEEP_ERR_CONFIG); /* bucket syntax */
	CHECK_EQ_INT(load_s("store: s3://bucket/a/../b\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "bad S3 prefix") != NULL);
	CHECK_EQ_INT(load_s("store: s3://bucket/a//\n"), 0); /* trailing slashes dropped */
	CHECK_EQ_INT(load_s("store: https://s3.example.com/b\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "unsupported store URL") != NULL);
	CHECK_EQ_INT(load_s("state_dir: var/lib/keep\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "not an absolute path") != NULL);
	/* the same for values set after loading (flags) */
	keep_config_defaults(&c);
	snprintf(c.state_dir, sizeof(c.state_dir), "rel");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	CHECK(strstr(err, "state_dir 'rel' is not an absolute path") != NULL);
	keep_config_defaults(&c);
	snprintf(c.store, sizeof(c.store), "file://x");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), KEEP_ERR_CONFIG);
	keep_config_defaults(&c);
	snprintf(c.store, sizeof(c.store), "s3://good-bucket/p");
	CHECK_EQ_INT(keep_config_check(&c, err, sizeof(err)), 0);
}

TEST(non_mapping_root_and_bad_yaml)
{
	CHECK_EQ_INT(load_s("- a\n- b\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("just a string\n"), KEEP_ERR_CONFIG);
	CHECK_EQ_INT(load_s("node_id: [\n"), KEEP_ERR_CONFIG);
	CHECK(strstr(last_err, "/tmp/keep-test-config-") == last_err);
	CHECK_EQ_INT(load_s("node_id: n1\n---\nnode_id: n2\n"), KEEP_ERR_CONFIG);
}

TEST(unchanged_on_error)
{
	struct keep_config c;
	char path[64];
	char err[256];

	keep_config_defaults(&c);
	tmpfile_with(path, "node_id: n9\nlease:\n  ttl_ms: 12000\n  bogus: 1\n");
	CHECK_EQ_INT(keep_config_load(&c, path, err, sizeof(err)), KEEP_ERR_CONFIG);
	unlink(path);
	CHECK_EQ_STR(c.node_id, "");
	CHECK_EQ_INT(c.timing.ttl_ms, 10000);
	CHECK_EQ_STR(c.path, "");
}

TEST(missing_file_and_env)
{
	struct keep_config c;
	char path[64];
	char err[256];

	keep_config_defaults(&c);
	CHECK_EQ_INT(keep_config_load(&c, "/nonexistent/keep.yaml", err, sizeof(err)), KEEP_ERR_IO);
	tmpfile_with(path, "node_id: envnode\n");
	setenv("KEEP_CONFIG", path, 1);
	CHECK_EQ_INT(keep_config_load(&c, NULL, err, sizeof(err)), 0);
	CHECK_EQ_STR(c.node_id, "envnode");
	CHECK_EQ_STR(c.path, path);
	unlink(path);
	setenv("KEEP_CONFIG", "/nonexistent/keep.yaml", 1);
	CHECK_EQ_INT(keep_config_load(&c, NULL, err, sizeof(err)), KEEP_ERR_IO);
	unsetenv("KEEP_CONFIG");
}

TEST(node_dir)
{
	struct keep_config c;
	char out[64];

	keep_config_defaults(&c);
	CHECK_EQ_INT(keep_config_node_dir(&c, out, sizeof(out)), KEEP_ERR_CONFIG);
	snprintf(c.node_id, sizeof(c.node_id), "n1");
	CHECK_EQ_INT(keep_config_node_dir(&c, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "/var/lib/keep/n1");
	snprintf(c.state_dir, sizeof(c.state_dir), "/srv/keep/");
	CHECK_EQ_INT(keep_config_node_dir(&c, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "/srv/keep/n1");
	snprintf(c.state_dir, sizeof(c.state_dir), "/");
	CHECK_EQ_INT(keep_config_node_dir(&c, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "/n1");
	snprintf(c.state_dir, sizeof(c.state_dir), "/a/very/long/state/directory/name/here/x");
	CHECK_EQ_INT(keep_config_node_dir(&c, out, 20), KEEP_ERR_TOOBIG);
}

int main(void)
{
	RUN(defaults);
	RUN(good_file_loads);
	RUN(apps_list);
	RUN(empty_and_comment_only);
	RUN(unknown_key);
	RUN(duplicate_key);
	RUN(bad_integers);
	RUN(bad_booleans);
	RUN(timing_rules);
	RUN(clock_step_rules);
	RUN(strings);
	RUN(store_url_and_state_dir);
	RUN(non_mapping_root_and_bad_yaml);
	RUN(unchanged_on_error);
	RUN(missing_file_and_env);
	RUN(node_dir);
	return unit_done();
}
