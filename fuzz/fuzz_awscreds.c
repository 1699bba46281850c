/* keep — libFuzzer harness: the parsers of AWS credential sources
 * (lib/store/awscreds.h). The first byte picks the parser, the rest is its
 * input:
 *
 *   0  keep_aws_parse_creds_json, credential_process output
 *   1  keep_aws_parse_creds_json, instance metadata document
 *   2  keep_aws_profile_parse, a credentials file, profile "p"
 *   3  keep_aws_profile_parse, a config file, profile "p"
 *   4  keep_aws_split_command
 *   5  keep_aws_parse_time
 *
 * Properties beyond no crash, leak or overread: accepted credentials have
 * a non-empty key id and secret of printable ASCII without space (so they
 * can go into a header), a token likewise when present; a refusal has a
 * reason, and the reason never repeats a "SecretAccessKey" value of 6 or
 * more bytes found in the input; profile values lie
 * inside the buffer and are NUL-terminated; split words lie inside the
 * word buffer, argv ends with NULL, and the words hold no more bytes than
 * the command; a parsed time is not before the epoch. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/base/err.h"
#include "../lib/store/awscreds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_secret(const char *s)
{
	size_t i;

	if (!s || !*s)
		abort();
	for (i = 0; s[i]; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			abort();
}

static void check_in(const char *v, const char *buf, size_t len)
{
	if (v && (v < buf || v > buf + len || v + strlen(v) > buf + len))
		abort();
}

/* The value of "SecretAccessKey":"..." when it is plain (no escapes), to
 * check that no reason repeats it. Only a string value counts: for
 * `"SecretAccessKey": 1, "essKey": 1` the next quoted word is another
 * member's name, which a fixed reason (`no "AccessKeyId"`) may well
 * contain (found by this harness beside a CPU hog, 2026-12-03; kept in
 * fuzz/corpus/fuzz_awscreds/secret-not-a-string). */
static void secret_of(const char *s, size_t n, char *out, size_t outlen)
{
	const char *p = memmem(s, n, "\"SecretAccessKey\"", 17), *q, *e, *end = s + n;

	out[0] = '\0';
	if (!p)
		return;
	q = p + 17;
	while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
		q++;
	if (q >= end || *q++ != ':')
		return;
	while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
		q++;
	if (q >= end || *q != '"')
		return;
	e = memchr(q + 1, '"', n - (size_t)(q + 1 - s));
	if (!e || (size_t)(e - q - 1) >= outlen || memchr(q + 1, '\\', (size_t)(e - q - 1)))
		return;
	memcpy(out, q + 1, (size_t)(e - q - 1));
	out[e - q - 1] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;
	char err[256], secret[128];
	char *buf;

	if (size < 1)
		return 0;
	buf = malloc(n + 1);
	if (!buf)
		return 0;
	memcpy(buf, in, n);
	buf[n] = '\0';
	switch (data[0] % 6) {
	case 0:
	case 1: {
		struct keep_aws_json_creds c;
		int rc = keep_aws_parse_creds_json(buf, n, data[0] % 6 == 1, &c, err, sizeof(err));

		if (rc == 0) {
			check_secret(c.access_key);
			check_secret(c.secret_key);
			if (c.token)
				check_secret(c.token);
			if (c.expires_at_ms < 0)
				abort();
			keep_aws_json_creds_release(&c);
		} else {
			if (!err[0] || memchr(err, '\0', sizeof(err)) == NULL)
				abort();
			secret_of(buf, n, secret, sizeof(secret));
			if (strlen(secret) >= 6 && strstr(err, secret))
				abort();
		}
		break;
	}
	case 2:
	case 3: {
		struct keep_aws_profile p;
		int rc =
		    keep_aws_profile_parse(buf, n, data[0] % 6 == 3, "p", &p, err, sizeof(err));

		if (rc == 0) {
			check_in(p.access_key, buf, n);
			check_in(p.secret_key, buf, n);
			check_in(p.session_token, buf, n);
			check_in(p.credential_process, buf, n);
			check_in(p.region, buf, n);
			check_in(p.role_arn, buf, n);
			check_in(p.web_identity_token_file, buf, n);
			check_in(p.sso, buf, n);
			if (!p.found && (p.access_key || p.region || p.credential_process))
				abort();
		} else if (!err[0]) {
			abort();
		}
		break;
	}
	case 4: {
		char *argv[KEEP_AWS_PROCESS_ARGS], *words;
		int argc = -1, i, rc;
		size_t total = 0;

		if (memchr(buf, '\0', n))
			break; /* a C string: the config line never holds a NUL */
		words = malloc(n + 1);
		if (!words)
			break;
		rc = keep_aws_split_command(buf, words, argv, KEEP_AWS_PROCESS_ARGS, &argc);
		if (rc == 0) {
			if (argc < 1 || argc >= KEEP_AWS_PROCESS_ARGS || argv[argc] != NULL)
				abort();
			for (i = 0; i < argc; i++) {
				check_in(argv[i], words, n);
				total += strlen(argv[i]) + 1;
			}
			if (total > n + 1)
				abort();
		}
		free(words);
		break;
	}
	default: {
		int64_t t;

		if (keep_aws_parse_time(buf, &t) == 0 && t < 0)
			abort();
		break;
	}
	}
	free(buf);
	return 0;
}
