/* Unit tests: the stdout line format (lib/platform/line.c). */
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/buf.h"
#include "../../lib/base/err.h"
#include "../../lib/base/parse.h"
#include "../../lib/platform/line.h"
#include "unit.h"

static int parse(const char *s, struct keep_line *l)
{
	char err[128];

	return keep_line_parse(s, strlen(s), l, err, sizeof(err));
}

/* Encode one str field and return the line text (static buffer). */
static const char *enc(const char *v)
{
	static char out[256];
	struct keep_buf b;

	keep_buf_init(&b, 4096);
	if (keep_line_start(&b, "t") || keep_line_str(&b, "k", v))
		snprintf(out, sizeof(out), "ERROR");
	else
		snprintf(out, sizeof(out), "%s", keep_buf_str(&b));
	keep_buf_release(&b);
	return out;
}

TEST(encode_bare_and_quoted)
{
	CHECK_EQ_STR(enc("abc"), "t k=abc");
	CHECK_EQ_STR(enc("a/b:c-1.2"), "t k=a/b:c-1.2");
	CHECK_EQ_STR(enc(NULL), "t k=-");
	CHECK_EQ_STR(enc(""), "t k=\"\"");
	CHECK_EQ_STR(enc("a b"), "t k=\"a b\"");
	CHECK_EQ_STR(enc("a=b"), "t k=\"a=b\"");
	CHECK_EQ_STR(enc("q\"x"), "t k=\"q\\\"x\"");
	CHECK_EQ_STR(enc("b\\s"), "t k=\"b\\\\s\"");
	CHECK_EQ_STR(enc("l\nm\tn"), "t k=\"l\\nm\\tn\"");
	CHECK_EQ_STR(enc("\x01\x7f\xc3"), "t k=\"\\x01\\x7f\\xc3\"");
}

TEST(encode_int_and_bad_names)
{
	struct keep_buf b;

	keep_buf_init(&b, 4096);
	CHECK_EQ_INT(keep_line_start(&b, "lease"), 0);
	CHECK_EQ_INT(keep_line_int(&b, "written_at_ms", 1700000000123LL), 0);
	CHECK_EQ_INT(keep_line_int(&b, "n", -5), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "lease written_at_ms=1700000000123 n=-5");
	CHECK_EQ_INT(keep_line_str(&b, "Bad", "x"), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_line_str(&b, "", "x"), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_line_str(&b, "a b", "x"), KEEP_ERR_INVAL);
	CHECK_EQ_STR(keep_buf_str(&b), "lease written_at_ms=1700000000123 n=-5");
	CHECK_EQ_INT(keep_line_start(&b, "Type"), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_line_start(&b, ""), KEEP_ERR_INVAL);
	keep_buf_release(&b);
}

TEST(encode_over_max_leaves_buffer)
{
	struct keep_buf b;

	keep_buf_init(&b, 16);
	CHECK_EQ_INT(keep_line_start(&b, "t"), 0);
	CHECK_EQ_INT(keep_line_str(&b, "k", "0123456789abcdef"), KEEP_ERR_TOOBIG);
	CHECK_EQ_STR(keep_buf_str(&b), "t");
	keep_buf_release(&b);
}

TEST(value_any_bytes_and_escaped)
{
	struct keep_buf b;
	char out[16];

	keep_buf_init(&b, 64);
	CHECK_EQ_INT(keep_line_value(&b, "nodes/bad\x01id", 12), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "\"nodes/bad\\x01id\"");
	keep_buf_reset(&b);
	CHECK_EQ_INT(keep_line_value(&b, "a\0b", 3), 0); /* a NUL is escaped, not an end */
	CHECK_EQ_STR(keep_buf_str(&b), "\"a\\x00b\"");
	keep_buf_reset(&b);
	CHECK_EQ_INT(keep_line_value(&b, "plain/key", 9), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "plain/key");
	keep_buf_reset(&b);
	CHECK_EQ_INT(keep_line_value(&b, "", 0), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "\"\"");
	keep_buf_release(&b);
	/* over the buffer: refused, the buffer as it was */
	keep_buf_init(&b, 8);
	CHECK_EQ_INT(keep_buf_adds(&b, "ab"), 0);
	CHECK_EQ_INT(keep_line_value(&b, "x\ny\nz", 5), KEEP_ERR_TOOBIG);
	CHECK_EQ_STR(keep_buf_str(&b), "ab");
	keep_buf_release(&b);

	CHECK_EQ_STR(keep_line_escaped("t/c/x\x01", out, sizeof(out)), "t/c/x\\x01");
	CHECK_EQ_STR(keep_line_escaped("a\nb", out, sizeof(out)), "a\\nb");
	CHECK_EQ_STR(keep_line_escaped("../x", out, sizeof(out)), "../x");
	CHECK_EQ_STR(keep_line_escaped("", out, sizeof(out)), "");
	CHECK_EQ_STR(keep_line_escaped("0123456789abcdefXYZ", out, sizeof(out)), "0123456789ab...");
}

TEST(round_trip)
{
	static const char *vals[] = {"x",    "",	 "a b", "\"", "\\",
				     "\n\t", "\x01\xff", "=",	"-",  "a=\"b\" c"};
	struct keep_buf b;
	struct keep_line l;
	size_t i;
	char key[8];

	keep_buf_init(&b, 4096);
	CHECK_EQ_INT(keep_line_start(&b, "rec_1-x"), 0);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		CHECK_EQ_INT(keep_line_str(&b, key, vals[i]), 0);
	}
	CHECK_EQ_INT(keep_line_parse(b.data, b.len, &l, NULL, 0), 0);
	CHECK_EQ_STR(l.type, "rec_1-x");
	CHECK_EQ_INT(l.n, sizeof(vals) / sizeof(vals[0]));
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		CHECK_EQ_STR(keep_line_get(&l, key), vals[i]);
	}
	CHECK(keep_line_get(&l, "nope") == NULL);
	keep_line_release(&l);
	keep_buf_release(&b);
}

TEST(parse_good)
{
	struct keep_line l;

	CHECK_EQ_INT(parse("status", &l), 0);
	CHECK_EQ_STR(l.type, "status");
	CHECK_EQ_INT(l.n, 0);
	keep_line_release(&l);
	CHECK_EQ_INT(parse("stale node=n1 instance=- seq=3", &l), 0);
	CHECK_EQ_STR(keep_line_get(&l, "node"), "n1");
	CHECK_EQ_STR(keep_line_get(&l, "instance"), "-");
	CHECK_EQ_STR(keep_line_get(&l, "seq"), "3");
	keep_line_release(&l);
	CHECK_EQ_INT(parse("t k=\"\\x41\\x4a\"", &l), 0);
	CHECK_EQ_STR(keep_line_get(&l, "k"), "AJ");
	keep_line_release(&l);
}

TEST(parse_refused)
{
	struct keep_line l;

	CHECK_EQ_INT(parse("", &l), KEEP_ERR_PARSE);		  /* empty line */
	CHECK_EQ_INT(parse(" t", &l), KEEP_ERR_PARSE);		  /* leading space */
	CHECK_EQ_INT(parse("t ", &l), KEEP_ERR_PARSE);		  /* trailing space */
	CHECK_EQ_INT(parse("t  k=v", &l), KEEP_ERR_PARSE);	  /* double space */
	CHECK_EQ_INT(parse("T k=v", &l), KEEP_ERR_PARSE);	  /* uppercase type */
	CHECK_EQ_INT(parse("t K=v", &l), KEEP_ERR_PARSE);	  /* uppercase key */
	CHECK_EQ_INT(parse("t word", &l), KEEP_ERR_PARSE);	  /* bare word */
	CHECK_EQ_INT(parse("t k=v word", &l), KEEP_ERR_PARSE);	  /* bare word after */
	CHECK_EQ_INT(parse("t =v", &l), KEEP_ERR_PARSE);	  /* empty key */
	CHECK_EQ_INT(parse("t k=", &l), KEEP_ERR_PARSE);	  /* empty bare value */
	CHECK_EQ_INT(parse("t k=a=b", &l), KEEP_ERR_PARSE);	  /* '=' in bare value */
	CHECK_EQ_INT(parse("t k=a\"b", &l), KEEP_ERR_PARSE);	  /* quote in bare value */
	CHECK_EQ_INT(parse("t k=a\\b", &l), KEEP_ERR_PARSE);	  /* backslash in bare */
	CHECK_EQ_INT(parse("t k=\"abc", &l), KEEP_ERR_PARSE);	  /* unterminated */
	CHECK_EQ_INT(parse("t k=\"a\"b", &l), KEEP_ERR_PARSE);	  /* junk after quote */
	CHECK_EQ_INT(parse("t k=\"\\q\"", &l), KEEP_ERR_PARSE);	  /* unknown escape */
	CHECK_EQ_INT(parse("t k=\"\\x4\"", &l), KEEP_ERR_PARSE);  /* short \x */
	CHECK_EQ_INT(parse("t k=\"\\xzz\"", &l), KEEP_ERR_PARSE); /* bad hex */
	CHECK_EQ_INT(parse("t k=\"\\x00\"", &l), KEEP_ERR_PARSE); /* \x00 */
	CHECK_EQ_INT(parse("t k=\"a\tb\"", &l), KEEP_ERR_PARSE);  /* raw tab */
	CHECK_EQ_INT(parse("t k=v\r", &l), KEEP_ERR_PARSE);	  /* CR */
	CHECK_EQ_INT(parse("t k=v k=w", &l), KEEP_ERR_PARSE);	  /* duplicate key */
	CHECK_EQ_INT(parse("t k=\xc3\xa9", &l), KEEP_ERR_PARSE);  /* non-ASCII bare */
	CHECK_EQ_INT(keep_line_parse("t k=a\0b", 7, &l, NULL, 0), KEEP_ERR_PARSE); /* NUL */
	CHECK_EQ_INT(l.n, 0);
}

TEST(parse_bounds)
{
	struct keep_buf b;
	struct keep_line l;
	char err[128];
	char *big;
	int i;

	keep_buf_init(&b, 8192);
	keep_buf_adds(&b, "t");
	for (i = 0; i < KEEP_LINE_FIELDS; i++)
		keep_buf_addf(&b, " k%d=v", i);
	CHECK_EQ_INT(keep_line_parse(b.data, b.len, &l, err, sizeof(err)), 0);
	CHECK_EQ_INT(l.n, KEEP_LINE_FIELDS);
	keep_line_release(&l);
	keep_buf_adds(&b, " extra=v");
	CHECK_EQ_INT(keep_line_parse(b.data, b.len, &l, err, sizeof(err)), KEEP_ERR_TOOBIG);
	keep_buf_release(&b);

	big = malloc(KEEP_LINE_MAX + 2);
	memset(big, 'a', KEEP_LINE_MAX + 1);
	memcpy(big, "t k=", 4);
	CHECK_EQ_INT(keep_line_parse(big, KEEP_LINE_MAX, &l, err, sizeof(err)), 0);
	keep_line_release(&l);
	CHECK_EQ_INT(keep_line_parse(big, KEEP_LINE_MAX + 1, &l, err, sizeof(err)),
		     KEEP_ERR_TOOBIG);
	free(big);

	/* type and key at most 63 bytes */
	CHECK_EQ_INT(
	    parse("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa k=v", &l), 0);
	keep_line_release(&l);
	CHECK_EQ_INT(
	    parse("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa k=v", &l),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    parse("t kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk=v", &l),
	    KEEP_ERR_PARSE);
}

/* keep_json_add_str of s, as a C string (static buffer). */
static const char *json(const char *s)
{
	static char out[512];
	struct keep_buf b;

	keep_buf_init(&b, 4096);
	if (keep_json_add_str(&b, s))
		snprintf(out, sizeof(out), "ERROR");
	else
		snprintf(out, sizeof(out), "%s", keep_buf_str(&b));
	keep_buf_release(&b);
	return out;
}

TEST(json_escape_ascii_and_controls)
{
	CHECK_EQ_STR(json(""), "\"\"");
	CHECK_EQ_STR(json("abc/x-1.2 y=z"), "\"abc/x-1.2 y=z\"");
	CHECK_EQ_STR(json("q\"x"), "\"q\\\"x\"");
	CHECK_EQ_STR(json("b\\s"), "\"b\\\\s\"");
	CHECK_EQ_STR(json("/"), "\"/\""); /* '/' needs no escape */
	CHECK_EQ_STR(json("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
	CHECK_EQ_STR(json("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
	CHECK_EQ_STR(json("a\x1b[31m"), "\"a\\u001b[31m\"");
}

TEST(json_escape_utf8)
{
	/* valid UTF-8 is copied: 2, 3 and 4 bytes, the edges of each range */
	CHECK_EQ_STR(json("\xc3\xa9"), "\"\xc3\xa9\"");			/* U+00E9 */
	CHECK_EQ_STR(json("\xc2\x80\xdf\xbf"), "\"\xc2\x80\xdf\xbf\""); /* U+0080, U+07FF */
	CHECK_EQ_STR(json("\xe0\xa0\x80\xef\xbf\xbf"), "\"\xe0\xa0\x80\xef\xbf\xbf\"");
	CHECK_EQ_STR(json("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");		/* U+D7FF */
	CHECK_EQ_STR(json("\xf0\x90\x80\x80"), "\"\xf0\x90\x80\x80\""); /* U+10000 */
	CHECK_EQ_STR(json("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	/* not valid UTF-8: every such byte is \u00XX, the rest goes on */
	CHECK_EQ_STR(json("\xff"), "\"\\u00ff\"");
	CHECK_EQ_STR(json("\x80"), "\"\\u0080\"");			 /* lone continuation */
	CHECK_EQ_STR(json("\xc3"), "\"\\u00c3\"");			 /* truncated at the end */
	CHECK_EQ_STR(json("\xc3x"), "\"\\u00c3x\"");			 /* truncated mid-string */
	CHECK_EQ_STR(json("\xc0\xaf"), "\"\\u00c0\\u00af\"");		 /* overlong '/' */
	CHECK_EQ_STR(json("\xe0\x80\xaf"), "\"\\u00e0\\u0080\\u00af\""); /* overlong */
	CHECK_EQ_STR(json("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\""); /* U+D800 */
	CHECK_EQ_STR(json("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\""); /* > U+10FFFF */
	CHECK_EQ_STR(json("\xf5\x80\x80\x80"), "\"\\u00f5\\u0080\\u0080\\u0080\"");
	CHECK_EQ_STR(json("\xe2\x82"), "\"\\u00e2\\u0082\""); /* 3-byte cut short */
	/* a bad byte right before a good sequence keeps the good one */
	CHECK_EQ_STR(json("\xff\xc3\xa9"), "\"\\u00ff\xc3\xa9\"");
}

TEST(json_escape_bounds)
{
	struct keep_buf b;

	keep_buf_init(&b, 8);
	CHECK_EQ_INT(keep_buf_adds(&b, "ab"), 0);
	CHECK_EQ_INT(keep_json_add_str(&b, "\x01\x02"), KEEP_ERR_TOOBIG); /* 14 bytes */
	CHECK_EQ_STR(keep_buf_str(&b), "ab");
	CHECK_EQ_INT(keep_json_add_str(&b, "xyz"), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "ab\"xyz\"");
	keep_buf_release(&b);
}

/* The same calls render a text line and a JSON object with the same
 * fields: strings, numbers, absent values. */
TEST(json_line_same_fields)
{
	struct keep_buf t, j;
	enum keep_line_format f;

	keep_buf_init(&t, 4096);
	keep_buf_init(&j, 4096);
	for (f = KEEP_LINE_TEXT; f <= KEEP_LINE_JSON; f++) {
		struct keep_buf *b = f == KEEP_LINE_TEXT ? &t : &j;

		CHECK_EQ_INT(keep_line_start_fmt(b, "owner", f), 0);
		CHECK_EQ_INT(keep_line_str(b, "key", "t/c/a"), 0);
		CHECK_EQ_INT(keep_line_str(b, "node", NULL), 0);
		CHECK_EQ_INT(keep_line_int(b, "generation", 42), 0);
		CHECK_EQ_INT(keep_line_int(b, "age_ms", -5), 0);
		CHECK_EQ_INT(keep_line_str(b, "reason", "a \"b\"\n"), 0);
		CHECK_EQ_INT(keep_line_str(b, "Bad", "x"), KEEP_ERR_INVAL);
	}
	CHECK_EQ_STR(keep_buf_str(&t),
		     "owner key=t/c/a node=- generation=42 age_ms=-5 reason=\"a \\\"b\\\"\\n\"");
	/* emit adds the closing brace */
	CHECK_EQ_STR(keep_buf_str(&j),
		     "{\"type\":\"owner\",\"key\":\"t/c/a\",\"node\":null,"
		     "\"generation\":42,\"age_ms\":-5,\"reason\":\"a \\\"b\\\"\\n\"");
	/* "type" names the record in JSON: refused as a field there only */
	CHECK_EQ_INT(keep_line_str(&j, "type", "x"), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_line_int(&j, "type", 1), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_line_str(&t, "type", "x"), 0);
	/* a bad TYPE: nothing started */
	CHECK_EQ_INT(keep_line_start_fmt(&j, "Bad", KEEP_LINE_JSON), KEEP_ERR_INVAL);
	CHECK_EQ_INT(j.len, 0);
	/* keep_line_start is the text format */
	CHECK_EQ_INT(keep_line_start(&j, "x"), 0);
	CHECK_EQ_STR(keep_buf_str(&j), "x");
	keep_buf_release(&t);
	keep_buf_release(&j);
}

TEST(json_line_over_max_leaves_buffer)
{
	struct keep_buf b;

	keep_buf_init(&b, 24);
	CHECK_EQ_INT(keep_line_start_fmt(&b, "t", KEEP_LINE_JSON), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "{\"type\":\"t\"");
	CHECK_EQ_INT(keep_line_str(&b, "k", "0123456789abcdef"), KEEP_ERR_TOOBIG);
	CHECK_EQ_STR(keep_buf_str(&b), "{\"type\":\"t\"");
	CHECK_EQ_INT(keep_line_int(&b, "n", 1234567890123LL), KEEP_ERR_TOOBIG);
	CHECK_EQ_STR(keep_buf_str(&b), "{\"type\":\"t\"");
	CHECK_EQ_INT(keep_line_int(&b, "n", 7), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "{\"type\":\"t\",\"n\":7");
	keep_buf_release(&b);
}

/* keep_duration_parse (lib/base/parse.h): the --wait=DURATION syntax */
TEST(duration_parse)
{
	int64_t v = -7;

	CHECK(keep_duration_parse("1500", 86400000, &v) && v == 1500);
	CHECK(keep_duration_parse("1500ms", 86400000, &v) && v == 1500);
	CHECK(keep_duration_parse("1s", 86400000, &v) && v == 1000);
	CHECK(keep_duration_parse("2m", 86400000, &v) && v == 120000);
	CHECK(keep_duration_parse("24h", 86400000, &v) && v == 86400000);
	CHECK(keep_duration_parse("0", 86400000, &v) && v == 0);
	v = -7;
	CHECK(!keep_duration_parse("25h", 86400000, &v));
	CHECK(!keep_duration_parse("86400001", 86400000, &v));
	CHECK(!keep_duration_parse("", 86400000, &v));
	CHECK(!keep_duration_parse("s", 86400000, &v));
	CHECK(!keep_duration_parse("1x", 86400000, &v));
	CHECK(!keep_duration_parse("-1s", 86400000, &v));
	CHECK(!keep_duration_parse("01s", 86400000, &v));
	CHECK(!keep_duration_parse("1 s", 86400000, &v));
	CHECK(!keep_duration_parse("1.5s", 86400000, &v));
	CHECK(!keep_duration_parse("99999999999999999999h", 86400000, &v));
	CHECK(!keep_duration_parse(NULL, 86400000, &v));
	CHECK_EQ_INT(v, -7);
}

int main(void)
{
	RUN(encode_bare_and_quoted);
	RUN(encode_int_and_bad_names);
	RUN(encode_over_max_leaves_buffer);
	RUN(value_any_bytes_and_escaped);
	RUN(round_trip);
	RUN(parse_good);
	RUN(parse_refused);
	RUN(parse_bounds);
	RUN(json_escape_ascii_and_controls);
	RUN(json_escape_utf8);
	RUN(json_escape_bounds);
	RUN(json_line_same_fields);
	RUN(json_line_over_max_leaves_buffer);
	RUN(duration_parse);
	return unit_done();
}
