/* Unit tests for the pure pieces of the S3 backend (lib/store/s3.c):
 * percent-encoding, canonical query strings, ETag unquoting, the
 * ListObjectsV2 and error XML parsers, the classification table, the
 * credentials file (mode refusal), and URL/option checks at open. No
 * network: nothing here sends a request. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/base/err.h"
#include "../../lib/store/s3_internal.h"
#include "../../lib/store/store.h"
#include "unit.h"

static char tmpdir[256];

static const char *enc(const char *in, bool keep_slash)
{
	static char out[512];
	struct keep_buf b;

	keep_buf_init(&b, sizeof(out) - 1);
	if (keep_s3_pct_encode(&b, in, keep_slash) != 0) {
		keep_buf_release(&b);
		return "(error)";
	}
	memcpy(out, keep_buf_str(&b), b.len + 1);
	keep_buf_release(&b);
	return out;
}

TEST(pct_encode_unreserved_kept)
{
	CHECK_EQ_STR(enc("AZaz09-._~", false), "AZaz09-._~");
	CHECK_EQ_STR(enc("", false), "");
}

TEST(pct_encode_reserved)
{
	CHECK_EQ_STR(enc("a=b:c+d e", true), "a%3Db%3Ac%2Bd%20e");
	CHECK_EQ_STR(enc("a/b/c", true), "a/b/c");
	CHECK_EQ_STR(enc("a/b/c", false), "a%2Fb%2Fc");
	CHECK_EQ_STR(enc("%*?#&@!$'()[],;", false),
		     "%25%2A%3F%23%26%40%21%24%27%28%29%5B%5D%2C%3B");
	/* UTF-8 bytes are encoded one by one, upper-case hex */
	CHECK_EQ_STR(enc("\xc3\xa9", false), "%C3%A9");
}

TEST(pct_encode_bounded)
{
	struct keep_buf b;

	keep_buf_init(&b, 5);
	CHECK_EQ_INT(keep_s3_pct_encode(&b, "a b", false), 0); /* "a%20b" = 5 bytes */
	CHECK_EQ_STR(keep_buf_str(&b), "a%20b");
	CHECK_EQ_INT(keep_s3_pct_encode(&b, "c", false), KEEP_ERR_TOOBIG);
	keep_buf_release(&b);
}

TEST(query_sorted_and_encoded)
{
	struct keep_buf q;
	struct keep_s3_param p[3] = {
	    {"prefix", "t-1/nodes/"},
	    {"list-type", "2"},
	    {"continuation-token", "t-1/nodes/a=b c"},
	};

	keep_buf_init(&q, 4096);
	CHECK_EQ_INT(keep_s3_query(&q, p, 3), 0);
	CHECK_EQ_STR(keep_buf_str(&q), "continuation-token=t-1%2Fnodes%2Fa%3Db%20c&list-type=2&"
				       "prefix=t-1%2Fnodes%2F");
	keep_buf_release(&q);
}

TEST(query_sorts_by_encoded_name_then_value)
{
	struct keep_buf q;
	struct keep_s3_param p[4] = {
	    {"b", "2"},
	    {"a", "z"},
	    {"a", "y"},
	    {"A", ""},
	};

	keep_buf_init(&q, 4096);
	CHECK_EQ_INT(keep_s3_query(&q, p, 4), 0);
	CHECK_EQ_STR(keep_buf_str(&q), "A=&a=y&a=z&b=2");
	CHECK_EQ_INT(keep_s3_query(&q, p, 0), 0);
	CHECK_EQ_STR(keep_buf_str(&q), "");
	keep_buf_release(&q);
}

TEST(etag_unquoted)
{
	char v[KEEP_VERSION_MAX];
	const char *e1 = "\"9b2cf535f27731c974343645a3985328\"";

	CHECK_EQ_INT(keep_s3_version_from_etag(e1, strlen(e1), v, sizeof(v)), 0);
	CHECK_EQ_STR(v, "9b2cf535f27731c974343645a3985328");
	CHECK_EQ_INT(keep_s3_version_from_etag("abc", 3, v, sizeof(v)), 0);
	CHECK_EQ_STR(v, "abc");
	CHECK_EQ_INT(keep_s3_version_from_etag(" W/\"x-1\" \r\n", 11, v, sizeof(v)), 0);
	CHECK_EQ_STR(v, "x-1");
	CHECK_EQ_INT(keep_s3_version_from_etag("\"\"", 2, v, sizeof(v)), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_s3_version_from_etag("\"abcdef\"", 8, v, 4), KEEP_ERR_TOOBIG);
	CHECK_EQ_STR(v, "");
}

static const char page1[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>keep-test</Name><Prefix>p/n/</Prefix><MaxKeys>1000</MaxKeys>"
    "<IsTruncated>true</IsTruncated>"
    "<Contents><Key>p/n/a</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
    "<ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag><Size>1</Size>"
    "<StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key>p/n/b=c:d+e f&amp;g</Key><ETag>\"92eb5ffee6ae2fec3ad71c777531578f\"</ETag>"
    "</Contents>"
    "<KeyCount>2</KeyCount><ContinuationToken>x</ContinuationToken>"
    "<NextContinuationToken>p/n/b=c:d+e f&amp;g</NextContinuationToken>"
    "</ListBucketResult>";

static const char page2[] = "<ListBucketResult><IsTruncated>false</IsTruncated>"
			    "<Contents><Key>p/n/z</Key><ETag>&quot;zz&quot;</ETag></Contents>"
			    "</ListBucketResult>";

/* parse one page with room for a token and a StartAfter key */
static int parse(const char *xml, size_t len, const char *strip, struct keep_list *l, bool *trunc,
		 char *token, size_t tokenlen, char *after)
{
	return keep_s3_parse_list(xml, len, strip, l, trunc, token, tokenlen, after, 256);
}

TEST(list_parse_pages)
{
	struct keep_list l;
	char token[256], after[256];
	bool trunc = false;

	keep_list_init(&l);
	CHECK_EQ_INT(parse(page1, sizeof(page1) - 1, "p/", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK(trunc);
	CHECK_EQ_STR(token, "p/n/b=c:d+e f&g");
	CHECK_EQ_STR(after, "");
	CHECK_EQ_INT(l.n, 2);
	if (l.n == 2) {
		CHECK_EQ_STR(l.v[0].key, "n/a");
		CHECK_EQ_STR(l.v[0].version, "0cc175b9c0f1b6a831c399e269772661");
		CHECK_EQ_STR(l.v[1].key, "n/b=c:d+e f&g"); /* not URL-encoded: as sent */
		CHECK_EQ_STR(l.v[1].version, "92eb5ffee6ae2fec3ad71c777531578f");
	}
	CHECK_EQ_INT(parse(page2, sizeof(page2) - 1, "p/", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK(!trunc);
	CHECK_EQ_STR(token, "");
	CHECK_EQ_INT(l.n, 3);
	if (l.n == 3) {
		CHECK_EQ_STR(l.v[2].key, "n/z");
		CHECK_EQ_STR(l.v[2].version, "zz");
	}
	CHECK_EQ_INT(l.nskipped, 0);
	keep_list_release(&l);
}

TEST(list_parse_no_prefix_and_empty)
{
	static const char empty[] = "<ListBucketResult><IsTruncated>false</IsTruncated>"
				    "<KeyCount>0</KeyCount></ListBucketResult>";
	struct keep_list l;
	char token[64], after[256];
	bool trunc = true;

	keep_list_init(&l);
	CHECK_EQ_INT(parse(empty, sizeof(empty) - 1, "", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK(!trunc);
	CHECK_EQ_INT(l.n, 0);
	CHECK_EQ_INT(parse(page2, sizeof(page2) - 1, "", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK_EQ_INT(l.n, 1);
	if (l.n == 1)
		CHECK_EQ_STR(l.v[0].key, "p/n/z");
	keep_list_release(&l);
}

TEST(list_parse_refuses_bad_input)
{
	static const char err_doc[] = "<Error><Code>NoSuchBucket</Code></Error>";
	static const char trunc_no_token[] = "<ListBucketResult><IsTruncated>true</IsTruncated>"
					     "</ListBucketResult>";
	static const char no_key[] = "<ListBucketResult><Contents><ETag>\"1\"</ETag>"
				     "</Contents></ListBucketResult>";
	static const char broken[] = "<ListBucketResult><Contents><Key>p/x</Key>";
	struct keep_list l;
	char token[8], after[256];
	bool trunc;

	keep_list_init(&l);
	CHECK_EQ_INT(
	    parse(err_doc, sizeof(err_doc) - 1, "", &l, &trunc, token, sizeof(token), after),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(parse(trunc_no_token, sizeof(trunc_no_token) - 1, "", &l, &trunc, token,
			   sizeof(token), after),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    parse(no_key, sizeof(no_key) - 1, "p/", &l, &trunc, token, sizeof(token), after),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(
	    parse(broken, sizeof(broken) - 1, "p/", &l, &trunc, token, sizeof(token), after),
	    KEEP_ERR_PARSE);
	CHECK_EQ_INT(parse("", 0, "", &l, &trunc, token, sizeof(token), after), KEEP_ERR_PARSE);
	/* a token longer than the caller's room is refused, not truncated (a
	 * page not URL-encoded offers no exact StartAfter either) */
	CHECK_EQ_INT(parse(page1, sizeof(page1) - 1, "p/", &l, &trunc, token, sizeof(token), after),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(l.n, 2); /* what was parsed before the error stays */
	keep_list_release(&l);
}

TEST(list_parse_skips_foreign_entries)
{
	/* one page of what other tools put beside keep: none fails the page */
	static const char page[] =
	    "<ListBucketResult><IsTruncated>false</IsTruncated>"
	    "<Contents><Key>q/x</Key><ETag>\"1\"</ETag><Size>1</Size></Contents>"
	    "<Contents><Key>p/no-etag</Key><Size>1</Size></Contents>"
	    "<Contents><Key>p/bad&#x01;id</Key><ETag>\"2\"</ETag><Size>1</Size></Contents>"
	    "<Contents><Key>p/a//b</Key><ETag>\"3\"</ETag><Size>1</Size></Contents>"
	    "<Contents><Key>p/dir/</Key><ETag>\"4\"</ETag><Size>0</Size></Contents>"
	    "<Contents><Key>p/full-dir/</Key><ETag>\"5\"</ETag><Size>3</Size></Contents>"
	    "<Contents><Key>p/ok</Key><ETag>\"6\"</ETag><Size>1</Size></Contents>"
	    "<Contents><Key>p/bad-etag</Key><ETag>\"\"</ETag><Size>1</Size></Contents>"
	    "</ListBucketResult>";
	struct keep_list l;
	char token[64], after[256];
	bool trunc = true;

	keep_list_init(&l);
	CHECK_EQ_INT(parse(page, sizeof(page) - 1, "p/", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK(!trunc);
	CHECK_EQ_INT(l.n, 1);
	if (l.n == 1)
		CHECK_EQ_STR(l.v[0].key, "ok");
	/* the folder marker p/dir/ is ignored, not counted */
	CHECK_EQ_INT(l.nskipped, 6);
	CHECK_EQ_STR(l.skipped[0].key, "q/x");
	CHECK_EQ_STR(l.skipped[0].why, "not under the store's prefix");
	CHECK_EQ_STR(l.skipped[1].key, "no-etag");
	CHECK_EQ_STR(l.skipped[1].why, "no readable ETag");
	/* not URL-encoded: the reference expat refuses became text */
	CHECK_EQ_STR(l.skipped[2].key, "\"bad\\\\x01id\"");
	CHECK_EQ_STR(l.skipped[2].why, "not a key keep can use");
	CHECK_EQ_STR(l.skipped[3].key, "a//b");
	keep_list_release(&l);
}

TEST(list_parse_url_encoded)
{
	/* RGW 16.2 with encoding-type=url: keys encoded ('/' too), a control
	 * byte as %01; NextContinuationToken is the raw last key, so it carries
	 * &#x01; (XML 1.0 forbids it): the next page goes by StartAfter */
	static const char page[] =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult "
	    "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><EncodingType>url</EncodingType>"
	    "<Name>b</Name><Prefix>p/n/</Prefix><MaxKeys>4</MaxKeys><IsTruncated>true</IsTruncated>"
	    "<Contents><Key>p%2Fn%2Fa+b%2Bc%25d~%C3%A9</Key><ETag>&quot;1&quot;</ETag><Size>2</"
	    "Size>"
	    "</Contents>"
	    "<Contents><Key>p%2Fn%2F</Key><ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag>"
	    "<Size>0</Size></Contents>"
	    "<Contents><Key>p%2Fn%2Fbad%zz</Key><ETag>&quot;4&quot;</ETag><Size>2</Size>"
	    "</Contents>"
	    "<Contents><Key>p%2Fn%2Fnul%00x</Key><ETag>&quot;3&quot;</ETag><Size>2</Size>"
	    "</Contents>"
	    "<Contents><Key>p%2Fn%2Fbad%01id</Key><ETag>&quot;2&quot;</ETag><Size>2</Size>"
	    "</Contents>"
	    "<NextContinuationToken>p/n/bad&#x01;id</NextContinuationToken><KeyCount>4</KeyCount>"
	    "</ListBucketResult>";
	static const char last[] = "<ListBucketResult><EncodingType>url</EncodingType>"
				   "<IsTruncated>true</IsTruncated>"
				   "<Contents><Key>p%2Fn%2Fz%01</Key><ETag>\"9\"</ETag></Contents>"
				   "<NextContinuationToken>p/n/z&#1;</NextContinuationToken>"
				   "</ListBucketResult>";
	struct keep_list l;
	char token[64], after[256];
	bool trunc = false;

	keep_list_init(&l);
	CHECK_EQ_INT(parse(page, sizeof(page) - 1, "p/", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK(trunc);
	CHECK_EQ_STR(token, "");
	CHECK_EQ_STR(after, "p/n/bad\x01id");
	CHECK_EQ_INT(l.n, 1);
	if (l.n == 1) {
		CHECK_EQ_STR(l.v[0].key, "n/a b+c%d~\xc3\xa9");
		CHECK_EQ_STR(l.v[0].version, "1");
	}
	CHECK_EQ_INT(l.nskipped, 3);
	CHECK_EQ_STR(l.skipped[0].key, "p%2Fn%2Fbad%zz");
	CHECK_EQ_STR(l.skipped[0].why, "bad URL encoding");
	CHECK_EQ_STR(l.skipped[1].key, "\"n/nul\\x00x\"");
	CHECK_EQ_STR(l.skipped[2].key, "\"n/bad\\x01id\"");
	CHECK_EQ_STR(l.skipped[2].why, "not a key keep can use");
	/* the last key cannot be sent back (a NUL): nothing names the next page */
	keep_list_release(&l);
	{
		static const char nul_last[] =
		    "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>true"
		    "</IsTruncated><Contents><Key>p%2Fx%00</Key><ETag>\"9\"</ETag></Contents>"
		    "<NextContinuationToken>p/x&#0;</NextContinuationToken></ListBucketResult>";
		CHECK_EQ_INT(parse(nul_last, sizeof(nul_last) - 1, "p/", &l, &trunc, token,
				   sizeof(token), after),
			     KEEP_ERR_PARSE);
	}
	keep_list_release(&l);

	/* the StartAfter key is the last one, decoded exactly */
	keep_list_init(&l);
	CHECK_EQ_INT(parse(last, sizeof(last) - 1, "p/", &l, &trunc, token, sizeof(token), after),
		     0);
	CHECK(trunc);
	CHECK_EQ_STR(token, "");
	CHECK_EQ_STR(after, "p/n/z\x01");
	CHECK_EQ_INT(l.n, 0);
	CHECK_EQ_INT(l.nskipped, 1);
	keep_list_release(&l);
}

TEST(xml_sanitize)
{
	static const char in[] = "<a>x&#x01;y&#1;z&#9;&#xa;&amp;&#x1F;&#xfffe;&#xD800;&#1114112;"
				 "&#;&#x;&#12a;</a>";
	char *out;
	size_t outlen, *at, nat;

	CHECK_EQ_INT(keep_s3_xml_sanitize("<a>&#x41;&#9;</a>", 17, &out, &outlen, &at, &nat), 0);
	CHECK(out == NULL);
	CHECK_EQ_INT(nat, 0);
	CHECK_EQ_INT(keep_s3_xml_sanitize(in, sizeof(in) - 1, &out, &outlen, &at, &nat), 0);
	CHECK(out != NULL);
	if (out) {
		CHECK_EQ_INT(outlen,
			     strlen("<a>x\\x01y\\x01z&#9;&#xa;&amp;\\x1f\\ufffe\\ud800\\u????"
				    "&#;&#x;&#12a;</a>"));
		out[outlen] = '\0'; /* the copy has room: it is never longer */
		CHECK_EQ_STR(out, "<a>x\\x01y\\x01z&#9;&#xa;&amp;\\x1f\\ufffe\\ud800\\u????"
				  "&#;&#x;&#12a;</a>");
		CHECK_EQ_INT(nat, 6);
		if (nat == 6) {
			CHECK_EQ_INT(at[0], 4);
			CHECK_EQ_INT(at[1], 9);
		}
	}
	free(out);
	free(at);
}

TEST(url_decode)
{
	struct keep_buf b;

	keep_buf_init(&b, 64);
	CHECK_EQ_INT(keep_s3_url_decode("a%2Fb+c%2b%25", 13, &b), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "a/b c+%");
	CHECK_EQ_INT(keep_s3_url_decode("%00x", 4, &b), 0);
	CHECK_EQ_INT(b.len, 2);
	CHECK_EQ_INT(keep_s3_url_decode("", 0, &b), 0);
	CHECK_EQ_STR(keep_buf_str(&b), "");
	CHECK_EQ_INT(keep_s3_url_decode("a%2", 3, &b), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_s3_url_decode("a%", 2, &b), KEEP_ERR_PARSE);
	CHECK_EQ_INT(keep_s3_url_decode("%g0", 3, &b), KEEP_ERR_PARSE);
	keep_buf_release(&b);
}

TEST(error_code_parse)
{
	static const char rgw412[] =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PreconditionFailed</Code>"
	    "<BucketName>keep-test</BucketName><RequestId>tx0</RequestId>"
	    "<HostId>abc</HostId></Error>";
	static const char aws403[] =
	    "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature "
	    "we calculated does not match</Message><StringToSign>x</StringToSign></Error>";
	char code[64];

	CHECK(keep_s3_error_code(rgw412, sizeof(rgw412) - 1, code, sizeof(code)));
	CHECK_EQ_STR(code, "PreconditionFailed");
	CHECK(keep_s3_error_code(aws403, sizeof(aws403) - 1, code, sizeof(code)));
	CHECK_EQ_STR(code, "SignatureDoesNotMatch");
	CHECK(!keep_s3_error_code("not xml", 7, code, sizeof(code)));
	CHECK_EQ_STR(code, "");
	CHECK(!keep_s3_error_code(page2, sizeof(page2) - 1, code, sizeof(code)));
	CHECK(!keep_s3_error_code(rgw412, sizeof(rgw412) - 1, code, 5)); /* does not fit */
	CHECK(!keep_s3_error_code("", 0, code, sizeof(code)));
}

TEST(classify_table)
{
	const enum keep_cond N = KEEP_COND_NONE, INM = KEEP_COND_IF_NONE_MATCH,
			     IM = KEEP_COND_IF_MATCH;

	/* done */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 200, NULL), KEEP_STORE_OK);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 200, ""), KEEP_STORE_OK);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_DEL, N, 204, ""), KEEP_STORE_OK);
	/* conditions failed */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, INM, 412, "PreconditionFailed"),
		     KEEP_STORE_CONFLICT);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 412, "PreconditionFailed"),
		     KEEP_STORE_CONFLICT);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 409, "ConditionalRequestConflict"),
		     KEEP_STORE_CONFLICT);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_DEL, IM, 412, ""), KEEP_STORE_CONFLICT);
	/* AWS answers If-Match on an absent key with 404: the condition failed */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 404, "NoSuchKey"), KEEP_STORE_CONFLICT);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 404, NULL), KEEP_STORE_CONFLICT);
	/* ... but not when the bucket is gone */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 404, "NoSuchBucket"), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, INM, 404, ""), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 404, ""), KEEP_STORE_REFUSED);
	/* not found */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 404, "NoSuchKey"), KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_HEAD, N, 404, NULL), KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_DEL, N, 404, "NoSuchKey"), KEEP_STORE_NOT_FOUND);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 404, "NoSuchBucket"), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_LIST, N, 404, "NoSuchBucket"), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_LIST, N, 404, ""), KEEP_STORE_REFUSED);
	/* definite errors */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 400, "InvalidArgument"), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 403, "SignatureDoesNotMatch"),
		     KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 403, "AccessDenied"), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 301, "PermanentRedirect"),
		     KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 411, ""), KEEP_STORE_REFUSED);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 412, ""), KEEP_STORE_REFUSED);
	/* may or may not have landed */
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, IM, 500, "UnknownError"), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, INM, 503, "SlowDown"), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_DEL, N, 502, ""), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 0, NULL), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_GET, N, 0, NULL), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 100, NULL), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 408, "RequestTimeout"), KEEP_STORE_AMBIGUOUS);
	CHECK_EQ_INT(keep_s3_classify(KEEP_S3_PUT, N, 429, ""), KEEP_STORE_AMBIGUOUS);
}

static const char *write_file(const char *name, const char *text, mode_t mode)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

static const char creds_text[] = "# test\n"
				 "[other]\n"
				 "aws_access_key_id = WRONG\n"
				 "[default]\n"
				 "aws_access_key_id = AKIDEXAMPLE\n"
				 "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \n"
				 "; comment\n"
				 "aws_session_token = tok=en\n"
				 "[another]\n"
				 "aws_secret_access_key = WRONG\n";

TEST(creds_file_read)
{
	struct keep_s3_creds c;
	char err[256] = "";
	const char *path = write_file("creds", creds_text, 0600);

	CHECK(path != NULL);
	CHECK_EQ_INT(keep_s3_creds_read(path, &c, err, sizeof(err)), 0);
	CHECK_EQ_STR(c.access_key, "AKIDEXAMPLE");
	CHECK_EQ_STR(c.secret_key, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
	CHECK_EQ_STR(c.token, "tok=en");
	keep_s3_creds_release(&c);
	CHECK(c.access_key == NULL && c.secret_key == NULL && c.token == NULL);

	path =
	    write_file("creds-nosection", "aws_access_key_id=A\naws_secret_access_key=S\n", 0400);
	CHECK_EQ_INT(keep_s3_creds_read(path, &c, err, sizeof(err)), 0);
	CHECK_EQ_STR(c.secret_key, "S");
	CHECK(c.token == NULL);
	keep_s3_creds_release(&c);
}

TEST(creds_file_mode_refused)
{
	struct keep_s3_creds c;
	char err[256] = "";
	const char *path;
	mode_t modes[] = {0644, 0640, 0604, 0620, 0660};
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		path = write_file("creds-open", creds_text, modes[i]);
		err[0] = '\0';
		CHECK_EQ_INT(keep_s3_creds_read(path, &c, err, sizeof(err)), KEEP_ERR_PERM);
		CHECK(strstr(err, "creds-open") != NULL);
		CHECK(strstr(err, "group or others") != NULL);
		/* the message never carries a value from the file */
		CHECK(strstr(err, "wJalrXUtnFEMI") == NULL);
		CHECK(c.secret_key == NULL);
	}
}

TEST(creds_file_errors)
{
	struct keep_s3_creds c;
	char err[256] = "", path[512];
	const char *p;

	snprintf(path, sizeof(path), "%s/absent", tmpdir);
	CHECK_EQ_INT(keep_s3_creds_read(path, &c, err, sizeof(err)), KEEP_ERR_IO);
	p = write_file("creds-nosecret", "[default]\naws_access_key_id = A\n", 0600);
	CHECK_EQ_INT(keep_s3_creds_read(p, &c, err, sizeof(err)), KEEP_ERR_PARSE);
	p = write_file("creds-other", "[prod]\naws_access_key_id = A\naws_secret_access_key = S\n",
		       0600);
	CHECK_EQ_INT(keep_s3_creds_read(p, &c, err, sizeof(err)), KEEP_ERR_PARSE);
	CHECK(strstr(err, "S\n") == NULL);
	/* the shared files' parser (awscreds.c): a line that is not
	 * "name = value" is refused by its number, never quoted */
	p = write_file(
	    "creds-noeq",
	    "[default]\naws_access_key_id = A\nwJalr garbage\naws_secret_access_key = S\n", 0600);
	CHECK_EQ_INT(keep_s3_creds_read(p, &c, err, sizeof(err)), KEEP_ERR_PARSE);
	CHECK(strstr(err, "line 3") != NULL);
	CHECK(strstr(err, "wJalr") == NULL);
	/* names are case-insensitive, as the AWS CLI reads them */
	p = write_file("creds-case",
		       "[default]\nAWS_ACCESS_KEY_ID = A\naws_secret_access_key = S\n", 0600);
	CHECK_EQ_INT(keep_s3_creds_read(p, &c, err, sizeof(err)), 0);
	CHECK_EQ_STR(c.access_key, "A");
	keep_s3_creds_release(&c);
}

TEST(open_checks_url_and_options)
{
	struct keep_store_opts o = {0};
	struct keep_store *s = NULL;
	char err[256];
	const char *path;

	setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	o.endpoint = "http://127.0.0.1:1";
	CHECK_EQ_INT(keep_store_s3_open("keep-test/p/q", &o, &s, err, sizeof(err)), 0);
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ_STR(s->ops->name, "s3");
		keep_store_free(s);
	}
	CHECK_EQ_INT(keep_store_s3_open("", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_store_s3_open("Bad_Bucket!", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	CHECK_EQ_INT(keep_store_s3_open("keep-test/a/../b", &o, &s, err, sizeof(err)),
		     KEEP_ERR_INVAL);
	o.addressing = "sideways";
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	o.addressing = "virtual";
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), 0);
	keep_store_free(s);
	o.addressing = NULL;
	o.endpoint = "ftp://127.0.0.1/";
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	o.endpoint = "http://127.0.0.1:1/some/path";
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	o.endpoint = "http://127.0.0.1:1";
	o.region = "bad region";
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	o.region = NULL;
	/* a group-readable credentials file refuses the whole store */
	path = write_file("creds-store", creds_text, 0644);
	o.credentials_file = path;
	err[0] = '\0';
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), KEEP_ERR_PERM);
	CHECK(s == NULL);
	CHECK(strstr(err, "wJalrXUtnFEMI") == NULL);
	o.credentials_file = NULL;
	/* half the static keys: a configuration error (lib/store/awscreds.h) */
	unsetenv("AWS_ACCESS_KEY_ID");
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), KEEP_ERR_INVAL);
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

TEST(unreachable_endpoint_is_ambiguous)
{
	/* port 1 on loopback: connection refused, nothing listening */
	struct keep_store_opts o = {.endpoint = "http://127.0.0.1:1", .timeout_ms = 2000};
	struct keep_store *s = NULL;
	struct keep_reply r;
	char err[256];

	setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), 0);
	if (s) {
		s->timeout_ms = 2000;
		CHECK_EQ_INT(s->ops->put(s, "k", "x", 1, KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
		CHECK_EQ_INT(r.status, 0);
		CHECK(strstr(r.detail, "wJalrXUtnFEMI") == NULL);
		keep_store_free(s);
	}
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

/* A loopback listener that never accepts: the kernel completes the TCP
 * handshake, the request is sent, and no answer ever comes. */
TEST(silent_server_times_out_ambiguous)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	struct keep_store_opts o = {0};
	struct keep_store *s = NULL;
	struct keep_reply r;
	struct keep_buf body;
	char err[256], endpoint[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ_INT(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ_INT(listen(fd, 8), 0);
	CHECK_EQ_INT(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	o.endpoint = endpoint;
	setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	CHECK_EQ_INT(keep_store_s3_open("keep-test/p", &o, &s, err, sizeof(err)), 0);
	if (s) {
		s->timeout_ms = 300;
		CHECK_EQ_INT(s->ops->put(s, "k", "x", 1, KEEP_COND_IF_MATCH, "\"abc\"", &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
		CHECK(strstr(r.detail, "timed out") != NULL);
		keep_buf_init(&body, KEEP_BODY_MAX);
		CHECK_EQ_INT(s->ops->get(s, "k", &body, &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
		CHECK_EQ_INT(body.len, 0);
		keep_buf_release(&body);
		keep_store_free(s);
	}
	close(fd);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

/* Read one HTTP request (headers, then Content-Length bytes) from fd.
 * Returns false on EOF or error. */
static bool read_request(int fd)
{
	char buf[8192];
	size_t len = 0, need = 0;
	char *end = NULL;

	while (!end || len < need) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		if (!end && (end = strstr(buf, "\r\n\r\n")) != NULL) {
			const char *cl = strstr(buf, "Content-Length: ");
			need = (size_t)(end + 4 - buf);
			if (cl && cl < end)
				need += strtoul(cl + 16, NULL, 10);
		}
	}
	return true;
}

static void say(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		_exit(3);
}

/* A server that takes a second request on a kept-alive connection, closes
 * without answering, then answers libcurl's silent re-send with 412: the
 * conflict may be about our own first copy, so it must not be reported as
 * a conflict. */
TEST(conflict_after_silent_resend_is_ambiguous)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	struct keep_store_opts o = {0};
	struct keep_store *s = NULL;
	struct keep_reply r;
	char err[256], endpoint[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;
	pid_t pid;

	CHECK(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ_INT(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ_INT(listen(fd, 8), 0);
	CHECK_EQ_INT(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int c1 = accept(fd, NULL, NULL), c2;
		if (c1 < 0 || !read_request(c1))
			_exit(1);
		say(c1, "HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nContent-Length: 0\r\n\r\n");
		if (!read_request(c1))
			_exit(2);
		close(c1); /* the request was taken, and no answer */
		c2 = accept(fd, NULL, NULL);
		if (c2 < 0 || !read_request(c2))
			_exit(4);
		say(c2, "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n");
		close(c2);
		_exit(0);
	}
	CHECK(pid > 0);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	o.endpoint = endpoint;
	setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	CHECK_EQ_INT(keep_store_s3_open("keep-test", &o, &s, err, sizeof(err)), 0);
	if (s && pid > 0) {
		s->timeout_ms = 5000;
		CHECK_EQ_INT(s->ops->put(s, "k", "x", 1, KEEP_COND_IF_NONE_MATCH, NULL, &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_OK);
		CHECK_EQ_STR(r.version, "e1");
		CHECK_EQ_INT(s->ops->put(s, "k", "y", 1, KEEP_COND_IF_MATCH, "e1", &r), 0);
		CHECK_EQ_INT(r.outcome, KEEP_STORE_AMBIGUOUS);
		CHECK(strstr(r.detail, "reconnect") != NULL);
		printf("# detail: %s\n", r.detail);
	}
	keep_store_free(s);
	close(fd);
	if (pid > 0) {
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_s3.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_SESSION_TOKEN");
	RUN(pct_encode_unreserved_kept);
	RUN(pct_encode_reserved);
	RUN(pct_encode_bounded);
	RUN(query_sorted_and_encoded);
	RUN(query_sorts_by_encoded_name_then_value);
	RUN(etag_unquoted);
	RUN(list_parse_pages);
	RUN(list_parse_no_prefix_and_empty);
	RUN(list_parse_refuses_bad_input);
	RUN(list_parse_skips_foreign_entries);
	RUN(list_parse_url_encoded);
	RUN(xml_sanitize);
	RUN(url_decode);
	RUN(error_code_parse);
	RUN(classify_table);
	RUN(creds_file_read);
	RUN(creds_file_mode_refused);
	RUN(creds_file_errors);
	RUN(open_checks_url_and_options);
	RUN(unreachable_endpoint_is_ambiguous);
	RUN(silent_server_times_out_ambiguous);
	RUN(conflict_after_silent_resend_is_ambiguous);
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return unit_done();
}
