/* Unit tests: AWS credentials (lib/store/awscreds.c): profile files,
 * credential_process command lines, times, the JSON of credential_process
 * and of the instance metadata, the refresh rule, and the chain's order
 * with the environment and files of a temporary HOME. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/base/err.h"
#include "../../lib/store/awscreds.h"
#include "../../lib/store/s3_internal.h"
#include "unit.h"

static char tmpdir[256];

static const char *path_of(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
	FILE *f = fopen(path_of(name), "w");

	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path_of(name), mode);
}

/* Parse text (copied) for profile; the profile struct points into *buf
 * (the caller frees it). */
static int prof(const char *text, bool config, const char *profile, struct keep_aws_profile *p,
		char **buf)
{
	char err[160];
	size_t n = strlen(text);

	*buf = malloc(n + 1);
	memcpy(*buf, text, n);
	return keep_aws_profile_parse(*buf, n, config, profile, p, err, sizeof(err));
}

TEST(profile_credentials_file)
{
	static const char text[] = "# the AWS CLI's credentials file\n"
				   "[default]\n"
				   "aws_access_key_id = AKIDDEFAULT\n"
				   "aws_secret_access_key=secretdefault \n"
				   "\n"
				   "[p]\n"
				   "; comment\n"
				   "AWS_Access_Key_ID = AKIDP\r\n"
				   "aws_secret_access_key = secret=p\n"
				   "aws_session_token = tokp\n"
				   "region = eu-west-1\n"
				   "s3 =\n"
				   "  addressing_style = path\n"
				   "other = x\n"
				   "[profile q]\n"
				   "aws_access_key_id = AKIDQ\n";
	struct keep_aws_profile p;
	char *b;

	CHECK_EQ_INT(prof(text, false, "p", &p, &b), 0);
	CHECK(p.found);
	CHECK_EQ_STR(p.access_key, "AKIDP");
	CHECK_EQ_STR(p.secret_key, "secret=p");
	CHECK_EQ_STR(p.session_token, "tokp");
	CHECK_EQ_STR(p.region, "eu-west-1");
	CHECK(p.credential_process == NULL);
	free(b);
	CHECK_EQ_INT(prof(text, false, "default", &p, &b), 0);
	CHECK_EQ_STR(p.access_key, "AKIDDEFAULT");
	CHECK_EQ_STR(p.secret_key, "secretdefault");
	CHECK(p.session_token == NULL);
	free(b);
	/* in a credentials file, [profile q] is the profile "profile q" */
	CHECK_EQ_INT(prof(text, false, "q", &p, &b), 0);
	CHECK(!p.found);
	free(b);
	CHECK_EQ_INT(prof(text, false, "profile q", &p, &b), 0);
	CHECK(p.found);
	free(b);
}

TEST(profile_config_file)
{
	static const char text[] = "[default]\n"
				   "region = us-west-2\n"
				   "[profile p]\n"
				   "credential_process = /opt/bin/creds --user \"a b\"\n"
				   "region = eu-central-1\n"
				   "[p]\n"
				   "aws_access_key_id = NOTAPROFILE\n"
				   "[sso-session s]\n"
				   "sso_start_url = https://x\n"
				   "[profile r]\n"
				   "role_arn = arn:aws:iam::1:role/r\n"
				   "source_profile = default\n";
	struct keep_aws_profile p;
	char *b;

	CHECK_EQ_INT(prof(text, true, "p", &p, &b), 0);
	CHECK(p.found);
	CHECK_EQ_STR(p.credential_process, "/opt/bin/creds --user \"a b\"");
	CHECK_EQ_STR(p.region, "eu-central-1");
	CHECK(p.access_key == NULL); /* [p] is no profile in a config file */
	free(b);
	CHECK_EQ_INT(prof(text, true, "default", &p, &b), 0);
	CHECK_EQ_STR(p.region, "us-west-2");
	free(b);
	CHECK_EQ_INT(prof(text, true, "r", &p, &b), 0);
	CHECK_EQ_STR(p.role_arn, "arn:aws:iam::1:role/r");
	free(b);
	CHECK_EQ_INT(prof(text, true, "s", &p, &b), 0);
	CHECK(!p.found);
	free(b);
	/* [profile default] is the default profile too */
	CHECK_EQ_INT(prof("[profile default]\nregion = x\n", true, "default", &p, &b), 0);
	CHECK_EQ_STR(p.region, "x");
	free(b);
}

TEST(profile_refused)
{
	struct keep_aws_profile p;
	char *b, big[KEEP_AWS_LINE_MAX + 40], err[160];

	CHECK_EQ_INT(prof("[p]\nnot a setting\n", false, "p", &p, &b), KEEP_ERR_PARSE);
	free(b);
	/* refused wherever it is: the file as a whole does not parse */
	CHECK_EQ_INT(prof("[x]\njunk\n[p]\n", false, "p", &p, &b), KEEP_ERR_PARSE);
	free(b);
	CHECK_EQ_INT(prof("[p\na = b\n", false, "p", &p, &b), KEEP_ERR_PARSE);
	free(b);
	CHECK_EQ_INT(prof("[p] x\n", false, "p", &p, &b), KEEP_ERR_PARSE);
	free(b);
	CHECK_EQ_INT(prof("[p]\n= v\n", false, "p", &p, &b), KEEP_ERR_PARSE);
	free(b);
	CHECK_EQ_INT(prof("[p]\na=1\n[p]\nb=2\n", false, "p", &p, &b), KEEP_ERR_PARSE);
	free(b);
	CHECK_EQ_INT(prof("[p]\naws_access_key_id=1\naws_access_key_id=2\n", false, "p", &p, &b),
		     KEEP_ERR_PARSE);
	free(b);
	/* another profile's duplicates are not ours to judge */
	CHECK_EQ_INT(prof("[x]\na=1\na=2\n[p]\nregion=r\n", false, "p", &p, &b), 0);
	free(b);
	/* a NUL byte, an over-long line */
	b = malloc(16);
	memcpy(b, "[p]\na=\0b\n", 9);
	CHECK_EQ_INT(keep_aws_profile_parse(b, 9, false, "p", &p, err, sizeof(err)),
		     KEEP_ERR_PARSE);
	free(b);
	memset(big, 'x', sizeof(big));
	memcpy(big, "[p]\na = ", 8);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ_INT(prof(big, false, "p", &p, &b), KEEP_ERR_TOOBIG);
	free(b);
	/* the error names the line, never a value */
	b = strdup("[p]\naws_secret_access_key = s3cr3t\nsecret s3cr3t\n");
	CHECK_EQ_INT(keep_aws_profile_parse(b, strlen(b), false, "p", &p, err, sizeof(err)),
		     KEEP_ERR_PARSE);
	CHECK(strstr(err, "line 3") != NULL);
	CHECK(strstr(err, "s3cr3t") == NULL);
	free(b);
}

static int split(const char *cmd, char **argv, char *buf)
{
	int argc = -1;
	int rc = keep_aws_split_command(cmd, buf, argv, 8, &argc);

	return rc ? rc : argc;
}

TEST(split_command_like_the_aws_cli)
{
	char *argv[8], buf[256];

	CHECK_EQ_INT(split("/opt/bin/creds --user helen", argv, buf), 3);
	CHECK_EQ_STR(argv[0], "/opt/bin/creds");
	CHECK_EQ_STR(argv[2], "helen");
	CHECK(argv[3] == NULL);
	CHECK_EQ_INT(split("  \"/path with/space.sh\"  noquote \"a b\"\t'c  d'", argv, buf), 4);
	CHECK_EQ_STR(argv[0], "/path with/space.sh");
	CHECK_EQ_STR(argv[2], "a b");
	CHECK_EQ_STR(argv[3], "c  d");
	/* no expansion of any kind */
	CHECK_EQ_INT(split("x `id` $(id) ; | >y", argv, buf), 6);
	CHECK_EQ_STR(argv[1], "`id`");
	CHECK_EQ_STR(argv[5], ">y");
	CHECK_EQ_INT(split("echo $HOME ~ *", argv, buf), 4);
	CHECK_EQ_STR(argv[1], "$HOME");
	CHECK_EQ_STR(argv[2], "~");
	CHECK_EQ_STR(argv[3], "*");
	/* escapes: outside quotes any byte, in "..." only \" \\ \$ \` */
	CHECK_EQ_INT(split("a\\ b \"x\\\"y\\z\" 'q\\r'", argv, buf), 3);
	CHECK_EQ_STR(argv[0], "a b");
	CHECK_EQ_STR(argv[1], "x\"y\\z");
	CHECK_EQ_STR(argv[2], "q\\r");
	CHECK_EQ_INT(split("a\"b c\"d", argv, buf), 1);
	CHECK_EQ_STR(argv[0], "ab cd");
	CHECK_EQ_INT(split("\"\"", argv, buf), 1); /* an empty word */
	CHECK_EQ_STR(argv[0], "");
	CHECK_EQ_INT(split("a 'b", argv, buf), KEEP_ERR_PARSE);
	CHECK_EQ_INT(split("a \"b", argv, buf), KEEP_ERR_PARSE);
	CHECK_EQ_INT(split("a\\", argv, buf), KEEP_ERR_PARSE);
	CHECK_EQ_INT(split("   ", argv, buf), KEEP_ERR_PARSE);
	CHECK_EQ_INT(split("1 2 3 4 5 6 7 8", argv, buf), KEEP_ERR_TOOBIG);
	CHECK_EQ_INT(split("1 2 3 4 5 6 7", argv, buf), 7);
}

TEST(parse_time)
{
	int64_t t;

	CHECK_EQ_INT(keep_aws_parse_time("1970-01-01T00:00:00Z", &t), 0);
	CHECK_EQ_INT(t, 0);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T15:09:54Z", &t), 0);
	CHECK_EQ_INT(t, 1495033794000LL);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T15:09:54.123Z", &t), 0);
	CHECK_EQ_INT(t, 1495033794123LL);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T15:09:54.1234567Z", &t), 0);
	CHECK_EQ_INT(t, 1495033794123LL);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T17:09:54+02:00", &t), 0);
	CHECK_EQ_INT(t, 1495033794000LL);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T10:09:54-0500", &t), 0);
	CHECK_EQ_INT(t, 1495033794000LL);
	CHECK_EQ_INT(keep_aws_parse_time("2024-02-29T00:00:00Z", &t), 0);
	CHECK_EQ_INT(t, 1709164800000LL);
	CHECK_EQ_INT(keep_aws_parse_time("2023-02-29T00:00:00Z", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17 15:09:54Z", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T15:09:54", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("2017-13-17T15:09:54Z", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T24:09:54Z", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T15:09:54.Z", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("2017-05-17T15:09:54Zjunk", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("1969-12-31T23:59:59Z", &t), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_aws_parse_time("", &t), KEEP_ERR_PARSE);
}

static int creds(const char *json, bool imds, struct keep_aws_json_creds *c)
{
	char err[160];

	return keep_aws_parse_creds_json(json, strlen(json), imds, c, err, sizeof(err));
}

TEST(json_credential_process_output)
{
	struct keep_aws_json_creds c;

	CHECK_EQ_INT(creds("{\"Version\": 1, \"AccessKeyId\": \"AKID\", \"SecretAccessKey\": "
			   "\"s/e+c=\", \"SessionToken\": \"tok\", \"Expiration\": "
			   "\"2017-05-17T15:09:54Z\"}\n",
			   false, &c),
		     0);
	CHECK_EQ_STR(c.access_key, "AKID");
	CHECK_EQ_STR(c.secret_key, "s/e+c=");
	CHECK_EQ_STR(c.token, "tok");
	CHECK_EQ_INT(c.expires_at_ms, 1495033794000LL);
	keep_aws_json_creds_release(&c);
	/* no token, no expiry (long-term keys), unknown members ignored */
	CHECK_EQ_INT(creds(" \t\r\n{\"AccountId\":\"123\",\"Version\":1,\"AccessKeyId\":\"A\","
			   "\"SecretAccessKey\":\"S\",\"x\":[]}",
			   false, &c),
		     KEEP_ERR_PARSE); /* ... but nested values are refused */
	CHECK_EQ_INT(creds(" \t\r\n{\"AccountId\":\"123\",\"Version\":1,\"AccessKeyId\":\"A\","
			   "\"SecretAccessKey\":\"S\",\"x\":null,\"y\":true,\"z\":-1.5e3} ",
			   false, &c),
		     0);
	CHECK(c.token == NULL);
	CHECK_EQ_INT(c.expires_at_ms, 0);
	keep_aws_json_creds_release(&c);
	/* escapes decode */
	CHECK_EQ_INT(creds("{\"Version\":1,\"AccessKeyId\":\"A\\u0042\\/C\",\"SecretAccessKey\":"
			   "\"\\\"\\\\\"}",
			   false, &c),
		     0);
	CHECK_EQ_STR(c.access_key, "AB/C");
	CHECK_EQ_STR(c.secret_key, "\"\\");
	keep_aws_json_creds_release(&c);
	/* refused */
	CHECK_EQ_INT(
	    creds("{\"Version\":2,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"Version\":\"1\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"Version\":1.0,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(creds("{\"Version\":1,\"AccessKeyId\":\"A\"}", false, &c), KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"Version\":1,\"AccessKeyId\":\"\",\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"Version\":1,\"AccessKeyId\":\"A B\",\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"Version\":1,\"AccessKeyId\":\"A\\n\",\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"Version\":1,\"AccessKeyId\":7,\"SecretAccessKey\":\"S\"}", false, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(creds("{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\","
			   "\"Expiration\":\"tomorrow\"}",
			   false, &c),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(creds("{\"Version\":1,\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":"
			   "\"S\"}",
			   false, &c),
		     KEEP_ERR_PARSE);
	CHECK(c.access_key == NULL);
}

TEST(json_strict_syntax)
{
	static const char *const bad[] = {
	    "",
	    "[]",
	    "{",
	    "{\"a\":1,}",
	    "{\"a\" 1}",
	    "{a:1}",
	    "{\"a\":01}",
	    "{\"a\":1.}",
	    "{\"a\":-}",
	    "{\"a\":1e}",
	    "{\"a\":tru}",
	    "{\"a\":'x'}",
	    "{\"a\":\"x\"} {}",
	    "{\"a\":\"x\ty\"}",		/* a raw control byte */
	    "{\"a\":\"\\x41\"}",	/* no \x in JSON */
	    "{\"a\":\"\\u00zz\"}",	/* bad \u */
	    "{\"a\":\"\\u0000\"}",	/* NUL */
	    "{\"a\":\"\\ud800\"}",	/* lone high surrogate */
	    "{\"a\":\"\\udc00\"}",	/* lone low surrogate */
	    "{\"a\":\"\xff\"}",		/* not UTF-8 */
	    "{\"a\":\"\xc0\xaf\"}",	/* overlong */
	    "{\"a\":\"\xed\xa0\x80\"}", /* an encoded surrogate */
	    "{\"a\":\"x}",
	    "{\"a\":{\"b\":1}}",
	};
	struct keep_aws_json_creds c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = creds(bad[i], false, &c);

		if (rc != KEEP_ERR_PARSE)
			printf("#   bad[%zu] = %s -> %d\n", i, bad[i], rc);
		CHECK_EQ_INT(rc, KEEP_ERR_PARSE);
	}
	/* a surrogate pair and raw UTF-8 decode (in a member we ignore) */
	CHECK_EQ_INT(creds("{\"n\":\"\\ud83d\\ude00 \xc3\xa9\",\"Version\":1,\"AccessKeyId\":\"A\","
			   "\"SecretAccessKey\":\"S\"}",
			   false, &c),
		     0);
	keep_aws_json_creds_release(&c);
}

TEST(json_bounds)
{
	struct keep_aws_json_creds c;
	char *big;
	size_t i, n;
	char err[160];

	/* more members than allowed */
	big = malloc(64 * 16 + 200);
	n = (size_t)snprintf(big, 64, "{\"Version\":1");
	for (i = 0; i < KEEP_AWS_JSON_MEMBERS; i++)
		n += (size_t)snprintf(big + n, 32, ",\"k%zu\":1", i);
	big[n++] = '}';
	big[n] = '\0';
	CHECK_EQ_INT(keep_aws_parse_creds_json(big, n, false, &c, err, sizeof(err)),
		     KEEP_ERR_TOOBIG);
	free(big);
	/* a member name over its bound */
	big = malloc(KEEP_AWS_JSON_KEY_MAX + 40);
	n = (size_t)snprintf(big, 8, "{\"");
	memset(big + n, 'k', KEEP_AWS_JSON_KEY_MAX + 1);
	n += KEEP_AWS_JSON_KEY_MAX + 1;
	n += (size_t)snprintf(big + n, 8, "\":1}");
	CHECK_EQ_INT(keep_aws_parse_creds_json(big, n, false, &c, err, sizeof(err)),
		     KEEP_ERR_TOOBIG);
	free(big);
	/* a secret over its bound */
	big = malloc(KEEP_AWS_SECRET_MAX + 200);
	n = (size_t)snprintf(big, 100,
			     "{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"");
	memset(big + n, 's', KEEP_AWS_SECRET_MAX + 1);
	n += KEEP_AWS_SECRET_MAX + 1;
	n += (size_t)snprintf(big + n, 8, "\"}");
	CHECK_EQ_INT(keep_aws_parse_creds_json(big, n, false, &c, err, sizeof(err)),
		     KEEP_ERR_TOOBIG);
	/* at its bound it is accepted */
	memmove(big + n - 3, big + n - 2, 3);
	n--;
	CHECK_EQ_INT(keep_aws_parse_creds_json(big, n, false, &c, err, sizeof(err)), 0);
	CHECK_EQ_INT(strlen(c.secret_key), KEEP_AWS_SECRET_MAX);
	keep_aws_json_creds_release(&c);
	free(big);
	/* the whole output over its bound */
	big = calloc(1, KEEP_AWS_JSON_MAX + 2);
	memset(big, ' ', KEEP_AWS_JSON_MAX + 1);
	CHECK_EQ_INT(
	    keep_aws_parse_creds_json(big, KEEP_AWS_JSON_MAX + 1, false, &c, err, sizeof(err)),
	    KEEP_ERR_TOOBIG);
	free(big);
	/* errors never quote the input */
	CHECK_EQ_INT(creds("{\"Version\":1,\"AccessKeyId\":\"AKIDSECRETISH\",\"SecretAccessKey\":"
			   "\"wJalr XUtn\"}",
			   false, &c),
		     KEEP_ERR_PARSE);
	keep_aws_parse_creds_json("{\"SecretAccessKey\":\"wJalrXUtn\"", 31, false, &c, err,
				  sizeof(err));
	CHECK(strstr(err, "wJalr") == NULL);
}

TEST(json_imds_document)
{
	static const char doc[] = "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : "
				  "\"2012-04-26T16:39:16Z\",\n  \"Type\" : \"AWS-HMAC\",\n"
				  "  \"AccessKeyId\" : \"ASIAEXAMPLE\",\n  \"SecretAccessKey\" : "
				  "\"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\",\n  \"Token\" : "
				  "\"token\",\n  \"Expiration\" : \"2017-05-17T15:09:54Z\"\n}";
	struct keep_aws_json_creds c;

	CHECK_EQ_INT(creds(doc, true, &c), 0);
	CHECK_EQ_STR(c.access_key, "ASIAEXAMPLE");
	CHECK_EQ_STR(c.token, "token");
	CHECK_EQ_INT(c.expires_at_ms, 1495033794000LL);
	keep_aws_json_creds_release(&c);
	/* IMDS needs Token and Expiration; Code must be Success */
	CHECK_EQ_INT(creds("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":"
			   "\"2017-05-17T15:09:54Z\"}",
			   true, &c),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    creds("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Token\":\"T\"}", true, &c),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(creds("{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"AccessKeyId\":\"A\","
			   "\"SecretAccessKey\":\"S\",\"Token\":\"T\",\"Expiration\":"
			   "\"2017-05-17T15:09:54Z\"}",
			   true, &c),
		     KEEP_ERR_PARSE);
	/* the process's Version is not asked of IMDS */
	CHECK_EQ_INT(creds("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Token\":\"T\","
			   "\"Expiration\":\"2017-05-17T15:09:54Z\"}",
			   true, &c),
		     0);
	keep_aws_json_creds_release(&c);
}

TEST(refresh_rule)
{
	int64_t t0 = 1700000000000LL;

	/* an hour: 5 min before expiry */
	CHECK_EQ_INT(keep_aws_refresh_at_ms(t0, t0 + 3600000), t0 + 3600000 - 300000);
	/* 4 s: half way */
	CHECK_EQ_INT(keep_aws_refresh_at_ms(t0, t0 + 4000), t0 + 2000);
	/* 10 min: half way is 5 min before: the same */
	CHECK_EQ_INT(keep_aws_refresh_at_ms(t0, t0 + 600000), t0 + 300000);
	CHECK_EQ_INT(keep_aws_refresh_at_ms(t0, 0), INT64_MAX);
	CHECK_EQ_INT(keep_aws_refresh_at_ms(t0, t0), t0);
	CHECK_EQ_INT(keep_aws_refresh_at_ms(t0, t0 - 5), t0);
}

/* ---- the chain ---------------------------------------------------------------- */

static void clear_env(void)
{
	static const char *const vars[] = {"AWS_ACCESS_KEY_ID",
					   "AWS_SECRET_ACCESS_KEY",
					   "AWS_SESSION_TOKEN",
					   "AWS_PROFILE",
					   "AWS_SHARED_CREDENTIALS_FILE",
					   "AWS_CONFIG_FILE",
					   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
					   "AWS_CONTAINER_CREDENTIALS_FULL_URI",
					   "AWS_WEB_IDENTITY_TOKEN_FILE",
					   "AWS_EC2_METADATA_SERVICE_ENDPOINT"};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	setenv("HOME", tmpdir, 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

/* Open the chain; *ak the access key it gave ("" on error), region, rc. */
static int chain(const char *credentials_file, char *ak, size_t n, char *region, char *err)
{
	struct keep_awscreds *c = NULL;
	struct keep_s3_creds s = {NULL, NULL, NULL};
	uint64_t serial = 0;
	int rc;

	ak[0] = '\0';
	rc = keep_awscreds_open(credentials_file, &c, region, 64, err, 256);
	if (rc)
		return rc;
	rc = keep_awscreds_get(c, 0, &s, &serial, err, 256);
	if (!rc)
		snprintf(ak, n, "%s", s.access_key);
	keep_s3_creds_release(&s);
	keep_awscreds_close(c);
	return rc;
}

TEST(chain_order)
{
	char ak[64], region[64], err[256];

	clear_env();
	mkdir(path_of(".aws"), 0700);
	write_file(".aws/credentials",
		   "[default]\naws_access_key_id = CREDDEFAULT\naws_secret_access_key = s\n"
		   "[p]\naws_access_key_id = CREDP\naws_secret_access_key = s\n",
		   0600);
	write_file(".aws/config",
		   "[default]\nregion = eu-west-3\naws_access_key_id = CONFDEFAULT\n"
		   "aws_secret_access_key = s\n"
		   "[profile p]\nregion = ap-south-1\n"
		   "[profile c]\naws_access_key_id = CONFC\naws_secret_access_key = s\n",
		   0600);
	write_file("keepcreds",
		   "[default]\naws_access_key_id = KEEPFILE\naws_secret_access_key = s\n", 0600);
	/* the environment comes first */
	setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(ak, "ENVKEY");
	CHECK_EQ_STR(region, "eu-west-3"); /* the profile's region all the same */
	/* ... after s3.credentials_file, keep's explicit choice */
	CHECK_EQ_INT(chain(path_of("keepcreds"), ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(ak, "KEEPFILE");
	/* half the keys in the environment: an error, not a fall-through */
	unsetenv("AWS_SECRET_ACCESS_KEY");
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	CHECK(strstr(err, "AWS_SECRET_ACCESS_KEY") != NULL);
	unsetenv("AWS_ACCESS_KEY_ID");
	/* then the credentials file, [default] */
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(ak, "CREDDEFAULT");
	/* AWS_PROFILE */
	setenv("AWS_PROFILE", "p", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(ak, "CREDP");
	CHECK_EQ_STR(region, "ap-south-1");
	/* a profile only the config file has: its static keys */
	setenv("AWS_PROFILE", "c", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(ak, "CONFC");
	CHECK_EQ_STR(region, "");
	/* a profile in neither file */
	setenv("AWS_PROFILE", "nope", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	CHECK(strstr(err, "'nope'") != NULL);
	/* other files named by the environment */
	write_file("creds2", "[nope]\naws_access_key_id = OTHERFILE\naws_secret_access_key = s\n",
		   0600);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path_of("creds2"), 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(ak, "OTHERFILE");
	write_file("config2", "[profile nope]\nregion = sa-east-1\n", 0644);
	setenv("AWS_CONFIG_FILE", path_of("config2"), 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	CHECK_EQ_STR(region, "sa-east-1");
	/* nothing anywhere, metadata disabled */
	clear_env();
	setenv("HOME", "/nonexistent", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	CHECK(strstr(err, "no S3 credentials") != NULL);
	/* no HOME: no default files, not an error by itself */
	unsetenv("HOME");
	setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), 0);
	clear_env();
}

TEST(chain_refusals)
{
	char ak[64], region[64], err[256];

	clear_env();
	mkdir(path_of(".aws"), 0700);
	write_file(".aws/config", "[default]\nregion = eu-west-3\n", 0644);
	/* a credentials file others may read: refused, named, no value in err */
	write_file(".aws/credentials",
		   "[default]\naws_access_key_id = AK\naws_secret_access_key = sEcReT\n", 0640);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_PERM);
	CHECK(strstr(err, ".aws/credentials") != NULL);
	CHECK(strstr(err, "sEcReT") == NULL);
	/* half a profile */
	write_file(".aws/credentials", "[default]\naws_access_key_id = AK\n", 0600);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	/* a malformed file */
	write_file(".aws/credentials", "[default]\nnonsense\n", 0600);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	CHECK(strstr(err, "line 2") != NULL);
	/* static keys in a config file others may read: refused */
	write_file(".aws/credentials", "", 0600);
	write_file(".aws/config", "[default]\naws_access_key_id = AK\naws_secret_access_key = s\n",
		   0644);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_PERM);
	/* an assume-role profile is refused, not skipped to another identity */
	write_file(".aws/config",
		   "[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = x\n"
		   "aws_access_key_id = AK\naws_secret_access_key = s\n",
		   0600);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	CHECK(strstr(err, "role_arn") != NULL);
	write_file(".aws/config", "[default]\nsso_session = s\n", 0600);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	/* sources keep does not implement, set in the environment */
	write_file(".aws/config", "", 0600);
	setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x", 1);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	CHECK(strstr(err, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != NULL);
	clear_env();
	/* a credential_process in a config file others may write: refused */
	write_file(".aws/config", "[default]\ncredential_process = /bin/true\n", 0666);
	chmod(path_of(".aws/config"), 0666);
	CHECK_EQ_INT(chain(NULL, ak, sizeof(ak), region, err), KEEP_ERR_PERM);
	/* s3.credentials_file: mode and content as before */
	write_file("keepcreds", "[default]\naws_access_key_id = K\naws_secret_access_key = s\n",
		   0644);
	CHECK_EQ_INT(chain(path_of("keepcreds"), ak, sizeof(ak), region, err), KEEP_ERR_PERM);
	CHECK_EQ_INT(chain(path_of("absent"), ak, sizeof(ak), region, err), KEEP_ERR_INVAL);
	clear_env();
}

static const char script_text[] =
    "#!/bin/sh\n"
    "# counts its runs; prints credentials expiring at $(cat exp) (epoch s)\n"
    "d=$(dirname \"$0\")\n"
    "n=$(cat \"$d/runs\" 2>/dev/null || echo 0)\n"
    "echo $((n + 1)) >\"$d/runs\"\n"
    "[ -e \"$d/fail\" ] && exit 7\n"
    "printf '{\"Version\": 1, \"AccessKeyId\": \"PROC%s\", \"SecretAccessKey\": \"s\", "
    "\"Expiration\": \"%s\"}' $((n + 1)) \"$(date -u -d @$(cat \"$d/exp\") "
    "+%Y-%m-%dT%H:%M:%SZ)\"\n";

static int runs(void)
{
	FILE *f = fopen(path_of("proc/runs"), "r");
	int n = 0;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

struct getter {
	struct keep_awscreds *c;
	int64_t now;
	int ok;
};

static void *get_many(void *arg)
{
	struct getter *g = arg;
	struct keep_s3_creds s = {NULL, NULL, NULL};
	uint64_t serial = 0;
	char err[256];
	int i;

	for (i = 0; i < 200; i++)
		if (keep_awscreds_get(g->c, g->now + i, &s, &serial, err, sizeof(err)) == 0 &&
		    strncmp(s.access_key, "PROC", 4) == 0)
			g->ok++;
	keep_s3_creds_release(&s);
	return NULL;
}

TEST(process_source_refresh_and_sharing)
{
	struct keep_awscreds *a = NULL, *b = NULL;
	struct keep_s3_creds s = {NULL, NULL, NULL};
	uint64_t serial = 0, serial2;
	char err[256], cfg[600], exp[32];
	int64_t e1;
	time_t t = time(NULL) + 3600;
	pthread_t th[8];
	struct getter g[8];
	int i;

	clear_env();
	mkdir(path_of("proc"), 0700);
	unlink(path_of("proc/runs"));
	unlink(path_of("proc/fail"));
	write_file("proc/creds.sh", script_text, 0755);
	snprintf(exp, sizeof(exp), "%lld\n", (long long)t);
	write_file("proc/exp", exp, 0600);
	snprintf(cfg, sizeof(cfg), "[profile proc]\ncredential_process = sh \"%s\"\n",
		 path_of("proc/creds.sh"));
	write_file("proc/config", cfg, 0600);
	setenv("AWS_CONFIG_FILE", path_of("proc/config"), 1);
	setenv("AWS_PROFILE", "proc", 1);
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(runs(), 1);
	CHECK(strstr(keep_awscreds_source(a), "credential_process of profile proc") != NULL);
	/* a second store of the process shares the source: no second run */
	CHECK_EQ_INT(keep_awscreds_open(NULL, &b, NULL, 0, err, sizeof(err)), 0);
	CHECK(a == b);
	CHECK_EQ_INT(runs(), 1);
	e1 = (int64_t)t * 1000;
	/* well before the refresh: the same credentials, copied once */
	CHECK_EQ_INT(keep_awscreds_get(a, e1 - 3600000, &s, &serial, err, sizeof(err)), 0);
	CHECK_EQ_STR(s.access_key, "PROC1");
	serial2 = serial;
	CHECK_EQ_INT(keep_awscreds_get(a, e1 - 3000000, &s, &serial, err, sizeof(err)), 0);
	CHECK_EQ_INT(serial, serial2);
	CHECK_EQ_INT(runs(), 1);
	/* within 5 min of expiry: run again */
	snprintf(exp, sizeof(exp), "%lld\n", (long long)t + 3600);
	write_file("proc/exp", exp, 0600);
	CHECK_EQ_INT(keep_awscreds_get(a, e1 - 200000, &s, &serial, err, sizeof(err)), 0);
	CHECK_EQ_INT(runs(), 2);
	CHECK_EQ_STR(s.access_key, "PROC2");
	CHECK(serial != serial2);
	/* the command fails: the old credentials serve while valid; retried
	 * no sooner than KEEP_AWS_RETRY_MIN_MS */
	write_file("proc/fail", "", 0600);
	e1 += 3600000;
	CHECK_EQ_INT(keep_awscreds_get(a, e1 - 100000, &s, &serial, err, sizeof(err)), 0);
	CHECK_EQ_INT(runs(), 3);
	CHECK_EQ_STR(s.access_key, "PROC2");
	CHECK_EQ_INT(keep_awscreds_get(a, e1 - 100000 + 10, &s, &serial, err, sizeof(err)), 0);
	CHECK_EQ_INT(runs(), 3);
	/* expired, and the refresh still fails: no credentials, a reason */
	CHECK_EQ_INT(keep_awscreds_get(a, e1 + 1, &s, &serial, err, sizeof(err)), KEEP_ERR_STORE);
	CHECK_EQ_INT(runs(), 4);
	CHECK(strstr(err, "expired") != NULL);
	CHECK(strstr(err, "status 7") != NULL);
	/* it works again: many threads at once, one refresh between them */
	unlink(path_of("proc/fail"));
	snprintf(exp, sizeof(exp), "%lld\n", (long long)t + 7200);
	write_file("proc/exp", exp, 0600);
	for (i = 0; i < 8; i++) {
		g[i].c = i % 2 ? a : b;
		g[i].now = e1 + KEEP_AWS_RETRY_MAX_MS + 1;
		g[i].ok = 0;
		pthread_create(&th[i], NULL, get_many, &g[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ_INT(g[i].ok, 200);
	}
	CHECK_EQ_INT(runs(), 5);
	keep_s3_creds_release(&s);
	keep_awscreds_close(a);
	keep_awscreds_close(b);
	/* the last close freed it: a new open runs the command again */
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(runs(), 6);
	keep_awscreds_close(a);
	/* a command that is not there, output that is not credentials */
	write_file("proc/config", "[profile proc]\ncredential_process = /nonexistent/x\n", 0600);
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), KEEP_ERR_INVAL);
	write_file("proc/config", "[profile proc]\ncredential_process = echo nope\n", 0600);
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), KEEP_ERR_INVAL);
	write_file("proc/config", "[profile proc]\ncredential_process = sh -c 'exit 3'\n", 0600);
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), KEEP_ERR_STORE);
	CHECK(strstr(err, "status 3") != NULL);
	/* closes its stdout, then never ends: killed at the bound all the same */
	write_file("proc/config",
		   "[profile proc]\ncredential_process = sh -c 'exec >&-; sleep 30'\n", 0600);
	setenv("KEEP_TEST_CREDENTIAL_PROCESS_TIMEOUT_MS", "300", 1);
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), KEEP_ERR_STORE);
	CHECK(strstr(err, "did not finish in 300 ms") != NULL);
	unsetenv("KEEP_TEST_CREDENTIAL_PROCESS_TIMEOUT_MS");
	/* credentials that expired already */
	snprintf(exp, sizeof(exp), "%lld\n", (long long)time(NULL) - 10);
	write_file("proc/exp", exp, 0600);
	snprintf(cfg, sizeof(cfg), "[profile proc]\ncredential_process = sh %s\n",
		 path_of("proc/creds.sh"));
	write_file("proc/config", cfg, 0600);
	CHECK_EQ_INT(keep_awscreds_open(NULL, &a, NULL, 0, err, sizeof(err)), KEEP_ERR_STORE);
	CHECK(strstr(err, "expired") != NULL);
	clear_env();
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/keep-test-awscreds-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(profile_credentials_file);
	RUN(profile_config_file);
	RUN(profile_refused);
	RUN(split_command_like_the_aws_cli);
	RUN(parse_time);
	RUN(json_credential_process_output);
	RUN(json_strict_syntax);
	RUN(json_bounds);
	RUN(json_imds_document);
	RUN(refresh_rule);
	RUN(chain_order);
	RUN(chain_refusals);
	RUN(process_source_refresh_and_sharing);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return unit_done();
}
