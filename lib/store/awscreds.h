/* keep — AWS credentials for the S3 store: the AWS CLI's conventions
 * (docs/s3.md "Credentials").
 *
 * The chain, first source that has credentials wins (the AWS CLI's
 * documented order, without the sources keep does not implement):
 *
 *   0. s3.credentials_file (keep's own key, an explicit choice): its
 *      [default] section; refused when group or other may read or write it
 *   1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 *      AWS_SESSION_TOKEN
 *   2. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 *      ~/.aws/credentials), section [PROFILE]: static keys
 *   3. credential_process of PROFILE (credentials file, else config file):
 *      a command run without a shell, printing JSON "Version": 1
 *   4. the shared config file (AWS_CONFIG_FILE, else ~/.aws/config), section
 *      [profile PROFILE] ([default] for default): static keys
 *   5. EC2 instance metadata, IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *      skipped when AWS_EC2_METADATA_DISABLED=true)
 *
 * PROFILE is $AWS_PROFILE, else "default"; a profile named by AWS_PROFILE
 * that neither file has is an error. The region of PROFILE (config file)
 * is offered to the caller, which uses it after s3.region, AWS_REGION and
 * AWS_DEFAULT_REGION. Temporary credentials (with an expiry) are fetched
 * again before they expire (keep_aws_refresh_at_ms).
 *
 * A source is shared by every store handle of the process that resolved
 * to the same dynamic source (credential_process, IMDS): one fetch serves
 * them all, and keep_awscreds_get may be called from several threads at
 * once (a mutex per source; the refresh runs under it).
 *
 * Errors of keep_awscreds_open: KEEP_ERR_INVAL or KEEP_ERR_PERM when the
 * configuration is wrong (no credentials anywhere, a missing or partial
 * profile, a malformed file or command output, a file mode refused: exit
 * 100, do not retry); KEEP_ERR_STORE when a source failed in a way that
 * may pass (the command exited non-zero or timed out, the metadata service
 * answered 5xx: exit 111); KEEP_ERR_NOMEM. err then holds one line naming
 * the source and the file or command — never a secret, never the output
 * of the command. */
#ifndef KEEP_STORE_AWSCREDS_H
#define KEEP_STORE_AWSCREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keep_s3_creds; /* s3_internal.h: access_key, secret_key, token (owned) */

#define KEEP_AWS_FILE_MAX 65536		  /* bytes: a shared config or credentials file */
#define KEEP_AWS_LINE_MAX 4096		  /* bytes: one line of such a file */
#define KEEP_AWS_JSON_MAX 65536		  /* bytes: command output or metadata reply */
#define KEEP_AWS_JSON_MEMBERS 64	  /* members of that JSON object */
#define KEEP_AWS_JSON_KEY_MAX 64	  /* bytes of a member name */
#define KEEP_AWS_SECRET_MAX 16384	  /* bytes of a key id, secret or token */
#define KEEP_AWS_PROCESS_TIMEOUT_MS 30000 /* credential_process: killed after this */
#define KEEP_AWS_PROCESS_ARGS 64	  /* words of a credential_process command */
#define KEEP_AWS_REFRESH_BEFORE_MS 300000 /* refresh at most this long before expiry */
#define KEEP_AWS_RETRY_MIN_MS 1000	  /* a failed refresh is retried after this, */
#define KEEP_AWS_RETRY_MAX_MS 30000	  /* doubling up to this */

/* ---- the pure parts (unit-tested, fuzzed: fuzz/fuzz_awscreds.c) ------------- */

/* What a profile section holds, as far as keep reads it. Strings point
 * into the caller's buffer given to keep_aws_profile_parse (NUL-terminated
 * in place); NULL when the key is absent. */
struct keep_aws_profile {
	bool found; /* the section exists */
	char *access_key, *secret_key, *session_token;
	char *credential_process;
	char *region;
	/* present: sources keep does not implement (it refuses the profile
	 * rather than fall through to another identity) */
	char *role_arn, *web_identity_token_file, *sso;
};

/* Parse a shared config (config_file true: sections [profile NAME] and
 * [default]) or credentials file ([NAME]) held in data (len bytes; data is
 * modified in place and must have room for len + 1 bytes, data[len] is set
 * to NUL), and fill *out with the keys of profile. Keys are
 * case-insensitive; values are trimmed; '#' or ';' starts a comment line;
 * an indented line after a key is a continuation (a nested setting such as
 * "s3 =\n  addressing_style = path") and is skipped. Refused
 * (KEEP_ERR_PARSE, err says the line): a line that is neither a section, a
 * comment, a key = value nor a continuation; an unclosed section; the
 * profile's section twice, or one of its keys twice; a NUL byte; a line
 * over KEEP_AWS_LINE_MAX bytes (KEEP_ERR_TOOBIG). err never holds a value. */
int keep_aws_profile_parse(char *data, size_t len, bool config_file, const char *profile,
			   struct keep_aws_profile *out, char *err, size_t errlen);

/* Split a credential_process command into words the way the AWS CLI does
 * (a POSIX shell's quoting, nothing else): blanks separate words; '...'
 * keeps everything literally; "..." keeps everything but \" \\ \$ \` \newline;
 * a backslash outside quotes keeps the next byte. No variable, tilde or
 * glob expansion, no redirection, no pipes: `$HOME` stays `$HOME`.
 * buf (at least strlen(cmd) + 1 bytes) receives the words, argv at most
 * maxargs - 1 pointers into buf and a NULL. 0, KEEP_ERR_PARSE (an
 * unclosed quote, a trailing backslash, no word at all), KEEP_ERR_TOOBIG
 * (too many words). *argc gets the word count. */
int keep_aws_split_command(const char *cmd, char *buf, char **argv, int maxargs, int *argc);

/* Parse an ISO 8601 / RFC 3339 UTC time as written by AWS:
 * YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM|+HHMM|-HHMM), into ms
 * since the epoch. 0 or KEEP_ERR_PARSE. */
int keep_aws_parse_time(const char *s, int64_t *out_ms);

/* Credentials parsed from JSON: all three owned; token may be NULL;
 * expires_at_ms 0 = never. Release with keep_aws_json_creds_release. */
struct keep_aws_json_creds {
	char *access_key, *secret_key, *token;
	int64_t expires_at_ms;
};
void keep_aws_json_creds_release(struct keep_aws_json_creds *c);

/* The output of a credential_process (len bytes): one strict JSON object
 * (RFC 8259; members at most KEEP_AWS_JSON_MEMBERS; names at most
 * KEEP_AWS_JSON_KEY_MAX bytes; no nested object or array; no duplicate
 * name; strings valid UTF-8 without \u0000) with "Version": 1 (a number),
 * "AccessKeyId" and "SecretAccessKey" (non-empty strings), optional
 * "SessionToken" and "Expiration" (keep_aws_parse_time); other members
 * ignored. imds: the instance metadata's credentials document instead:
 * "Code" (when present) must be "Success"; "AccessKeyId",
 * "SecretAccessKey", "Token" and "Expiration" required. Key ids, secrets
 * and tokens must be 1..KEEP_AWS_SECRET_MAX bytes of printable ASCII
 * without space. 0, KEEP_ERR_PARSE, KEEP_ERR_TOOBIG (over
 * KEEP_AWS_JSON_MAX or a bound above), KEEP_ERR_NOMEM; err (never a value
 * from the input) says why. */
int keep_aws_parse_creds_json(const char *json, size_t len, bool imds,
			      struct keep_aws_json_creds *out, char *err, size_t errlen);

/* When temporary credentials fetched at fetched_at_ms and expiring at
 * expires_at_ms (wall ms) are fetched again: expires_at minus the lesser
 * of KEEP_AWS_REFRESH_BEFORE_MS and half their lifetime; expires_at_ms 0
 * (never expires) -> INT64_MAX; already expired -> fetched_at_ms. */
int64_t keep_aws_refresh_at_ms(int64_t fetched_at_ms, int64_t expires_at_ms);

/* ---- the chain ------------------------------------------------------------ */

struct keep_awscreds;

/* Resolve the chain (file comment) and return its source in *out (free
 * with keep_awscreds_close), its first credentials fetched.
 *   credentials_file: s3.credentials_file, "" or NULL for none;
 *   region: receives the region of the profile in use ("" when none; up to
 *     regionlen bytes), read whether or not the credentials come from a
 *     profile (may be NULL).
 * Errors: file comment. */
int keep_awscreds_open(const char *credentials_file, struct keep_awscreds **out, char *region,
		       size_t regionlen, char *err, size_t errlen);

/* Drop a reference; the last one wipes and frees the credentials. NULL is
 * a no-op. */
void keep_awscreds_close(struct keep_awscreds *c);

/* The current credentials into *snap (replacing what it held, wiped) when
 * they changed since *serial, which is updated; first refreshed when due
 * (keep_aws_refresh_at_ms) — a failed refresh keeps the old credentials
 * while they are valid and is retried after KEEP_AWS_RETRY_MIN_MS,
 * doubling. Thread-safe. 0, or KEEP_ERR_STORE when no valid credentials
 * are left (expired, and the refresh failed: err says why), KEEP_ERR_NOMEM.
 * now_wall_ms: the wall clock (ms). */
int keep_awscreds_get(struct keep_awscreds *c, int64_t now_wall_ms, struct keep_s3_creds *snap,
		      uint64_t *serial, char *err, size_t errlen);

/* Where the credentials come from, for diagnostics (never a secret):
 * "environment", "profile p in /root/.aws/credentials", "credential_process
 * of profile p", "EC2 instance metadata (role r)", "s3.credentials_file
 * /etc/keep/credentials". Borrowed from c. */
const char *keep_awscreds_source(const struct keep_awscreds *c);

#endif
