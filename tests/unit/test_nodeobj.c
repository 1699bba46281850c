/* Unit tests: the node lease object codec (lib/codec/nodeobj.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/buf.h"
#include "../../lib/base/err.h"
#include "../../lib/codec/nodeobj.h"
#include "../../lib/core/timing.h"
#include "unit.h"

#define INST "0123456789abcdef0123456789abcdef"
#define BASE "wasmkeep-node 3\nlive " INST "\nwritten_at_ms 1700000000000\nnode n1\nseq 7\n"

static int dec(const char *s, struct keep_node_obj *o)
{
	char err[256];

	return keep_node_obj_decode(s, strlen(s), o, err, sizeof(err));
}

static int dec_s(const char *s)
{
	struct keep_node_obj o;

	return dec(s, &o);
}

static void base_obj(struct keep_node_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->format = 3;
	o->state = KEEP_NODE_LIVE;
	snprintf(o->instance, sizeof(o->instance), "%s", INST);
	o->written_at_ms = 1700000000000LL;
	snprintf(o->node, sizeof(o->node), "n1");
	o->seq = 7;
}

TEST(decode_minimal)
{
	struct keep_node_obj o;

	CHECK_EQ_INT(dec(BASE, &o), 0);
	CHECK_EQ_INT(o.format, 3);
	CHECK_EQ_INT(o.state, KEEP_NODE_LIVE);
	CHECK_EQ_STR(o.instance, INST);
	CHECK_EQ_INT(o.written_at_ms, 1700000000000LL);
	CHECK_EQ_STR(o.node, "n1");
	CHECK_EQ_INT(o.seq, 7);
	CHECK_EQ_STR(o.host, "");
	CHECK_EQ_INT(o.pid, 0);
	CHECK_EQ_STR(o.software, "");
	CHECK_EQ_STR(o.fenced_by, "");
	CHECK_EQ_INT(o.fenced_at_ms, 0);
	CHECK_EQ_STR(keep_node_state_name(KEEP_NODE_RELEASED), "released");
	CHECK_EQ_STR(keep_node_state_name(KEEP_NODE_FENCED), "fenced");
	CHECK_EQ_STR(keep_node_state_name(KEEP_NODE_LIVE), "live");
}

TEST(round_trip_all_states)
{
	struct keep_node_obj a, b;
	struct keep_buf buf;
	int st;

	for (st = KEEP_NODE_LIVE; st <= KEEP_NODE_FENCED; st++) {
		base_obj(&a);
		a.state = (enum keep_node_state)st;
		snprintf(a.host, sizeof(a.host), "host-1.example");
		a.pid = 4242;
		snprintf(a.software, sizeof(a.software), "keep/0.1");
		if (st == KEEP_NODE_FENCED) {
			snprintf(a.fenced_by, sizeof(a.fenced_by), "n2");
			a.fenced_at_ms = 1700000000999LL;
		}
		keep_buf_init(&buf, KEEP_NODEOBJ_MAX);
		CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), 0);
		CHECK_EQ_INT(keep_node_obj_decode(buf.data, buf.len, &b, NULL, 0), 0);
		CHECK(memcmp(&a, &b, sizeof(a)) == 0);
		keep_buf_release(&buf);
	}
}

/* A host name as the codec takes it: every byte outside printable ASCII
 * becomes '_', so the object it writes always decodes. */
TEST(host_outside_printable_ascii)
{
	struct keep_node_obj a, b;
	struct keep_buf buf;
	char longhost[400];

	base_obj(&a);
	keep_node_obj_set_host(&a, "web 1\t\x7f\xc3\xa9.example");
	CHECK_EQ_STR(a.host, "web_1____.example");
	keep_buf_init(&buf, KEEP_NODEOBJ_MAX);
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), 0);
	CHECK_EQ_INT(keep_node_obj_decode(buf.data, buf.len, &b, NULL, 0), 0);
	CHECK_EQ_STR(b.host, "web_1____.example");
	keep_buf_release(&buf);
	memset(longhost, 'h', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	keep_node_obj_set_host(&a, longhost);
	CHECK_EQ_INT((int)strlen(a.host), (int)sizeof(a.host) - 1);
	keep_node_obj_set_host(&a, NULL);
	CHECK_EQ_STR(a.host, "");
}

TEST(encode_exact_text)
{
	struct keep_node_obj a;
	struct keep_buf buf;

	base_obj(&a);
	keep_buf_init(&buf, KEEP_NODEOBJ_MAX);
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), 0);
	CHECK_EQ_STR(keep_buf_str(&buf), BASE);
	keep_buf_reset(&buf);
	/* operator fence of an absent object */
	a.state = KEEP_NODE_FENCED;
	snprintf(a.instance, sizeof(a.instance), "-");
	a.seq = 0;
	snprintf(a.fenced_by, sizeof(a.fenced_by), "operator");
	a.fenced_at_ms = 1700000000000LL;
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), 0);
	CHECK_EQ_STR(keep_buf_str(&buf), "wasmkeep-node 3\nfenced -\nwritten_at_ms 1700000000000\n"
					 "node n1\nseq 0\nfenced_by operator\n"
					 "fenced_at_ms 1700000000000\n");
	keep_buf_release(&buf);
}

TEST(encode_refuses)
{
	struct keep_node_obj a;
	struct keep_buf buf;

	keep_buf_init(&buf, KEEP_NODEOBJ_MAX);
	base_obj(&a);
	snprintf(a.instance, sizeof(a.instance), "-");
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL); /* "-" with live */
	base_obj(&a);
	a.instance[0] = 'A';
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL); /* uppercase */
	base_obj(&a);
	a.written_at_ms = 0;
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL);
	base_obj(&a);
	a.seq = -1;
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL);
	base_obj(&a);
	snprintf(a.node, sizeof(a.node), ".x");
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL);
	base_obj(&a);
	snprintf(a.fenced_by, sizeof(a.fenced_by), "n2");
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL); /* fenced_by w/o fenced */
	base_obj(&a);
	a.fenced_at_ms = 5;
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL);
	base_obj(&a);
	snprintf(a.host, sizeof(a.host), "a b");
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL);
	base_obj(&a);
	a.state = (enum keep_node_state)9;
	CHECK_EQ_INT(keep_node_obj_encode(&a, &buf), KEEP_ERR_INVAL);
	CHECK_EQ_INT(buf.len, 0);
	keep_buf_release(&buf);
}

TEST(header_not_ours)
{
	CHECK_EQ_INT(dec_s(""), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("wasmkeep-node 4\nlive " INST "\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("wasmkeep-lease 1\nnode n1\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3 \nlive " INST "\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("wasmkeep-node  3\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("WASMKEEP-NODE 3\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("{\"json\": true}\n"), KEEP_ERR_NOTOURS);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\r\nlive " INST "\r\n"), KEEP_ERR_NOTOURS);
}

TEST(missing_lines)
{
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\nnode n1\n"),
		     KEEP_ERR_PARSE);
	/* mandatory lines out of order */
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nnode n1\nwritten_at_ms 5\nseq 1\n"),
		     KEEP_ERR_PARSE);
}

TEST(unknown_duplicate_order)
{
	CHECK_EQ_INT(dec_s(BASE "color blue\n"), KEEP_ERR_PARSE);     /* unknown field */
	CHECK_EQ_INT(dec_s(BASE "host a\nhost b\n"), KEEP_ERR_PARSE); /* duplicate */
	CHECK_EQ_INT(dec_s(BASE "seq 8\n"), KEEP_ERR_PARSE);	      /* duplicate mandatory */
	CHECK_EQ_INT(dec_s(BASE "pid 1\nhost a\n"), KEEP_ERR_PARSE);  /* out of order */
	CHECK_EQ_INT(dec_s(BASE "\n"), KEEP_ERR_PARSE);		      /* empty line */
	CHECK_EQ_INT(dec_s(BASE "host\n"), KEEP_ERR_PARSE);	      /* no value */
	CHECK_EQ_INT(dec_s(BASE "host \n"), KEEP_ERR_PARSE);	      /* empty value */
	CHECK_EQ_INT(dec_s(BASE "host a b\n"), KEEP_ERR_PARSE);	      /* space in value */
	CHECK_EQ_INT(dec_s(BASE "pid 0\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s(BASE "pid -1\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s(BASE "software a\tb\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s(BASE "host a\npid 1\nsoftware s\n"), 0);
}

TEST(bad_state)
{
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nalive " INST "\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nLive " INST "\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive  " INST "\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
}

TEST(bad_instance)
{
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive 0123456789abcdef0123456789abcde\n"
			   "written_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE); /* 31 */
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive 0123456789abcdef0123456789abcdef0\n"
			   "written_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE); /* 33 */
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive 0123456789ABCDEF0123456789abcdef\n"
			   "written_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE); /* uppercase */
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive 0123456789abcdeg0123456789abcdef\n"
			   "written_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE); /* non-hex */
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST " x\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE); /* trailing word */
}

TEST(dash_instance)
{
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive -\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nreleased -\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nfenced -\nwritten_at_ms 5\nnode n1\nseq 0\n"
			   "fenced_by operator\nfenced_at_ms 6\n"),
		     0);
}

TEST(fenced_fields_need_fenced)
{
	CHECK_EQ_INT(dec_s(BASE "fenced_by n2\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s(BASE "fenced_at_ms 9\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nfenced " INST "\nwritten_at_ms 5\nnode n1\nseq 1\n"
			   "fenced_by .bad\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nfenced " INST "\nwritten_at_ms 5\nnode n1\nseq 1\n"
			   "fenced_at_ms 0\n"),
		     KEEP_ERR_PARSE);
}

TEST(bad_written_at)
{
	static const char *bad[] = {"-5",
				    "0",
				    "05",
				    "+5",
				    "",
				    "5x",
				    "5.0",
				    "0x10",
				    "9223372036854775808",
				    "9223372036854775807",
				    "99999999999999999999"};
	char s[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(s, sizeof(s),
			 "wasmkeep-node 3\nlive " INST "\nwritten_at_ms %s\nnode n1\nseq 1\n",
			 bad[i]);
		CHECK_EQ_INT(dec_s(s), KEEP_ERR_PARSE);
	}
}

/* Every time is bounded at decode: above KEEP_WALL_MAX_MS (year 9999) it is
 * malformed, so no deadline computed from it can overflow (issue 18 item 4;
 * docs/formats.md "Time bounds"). */
TEST(times_beyond_year_9999)
{
	static const char *beyond[] = {"9223372036854775807", "9223372036854775800",
				       "253402300800000", "99999999999999999999",
				       "1000000000000000"};
	struct keep_node_obj o;
	struct keep_buf b;
	char s[512], err[256];
	size_t i;

	for (i = 0; i < sizeof(beyond) / sizeof(beyond[0]); i++) {
		snprintf(s, sizeof(s),
			 "wasmkeep-node 3\nlive " INST "\nwritten_at_ms %s\nnode n1\nseq 1\n",
			 beyond[i]);
		CHECK_EQ_INT(keep_node_obj_decode(s, strlen(s), &o, err, sizeof(err)),
			     KEEP_ERR_PARSE);
		CHECK(strstr(err, "written_at_ms beyond year 9999") != NULL);
		snprintf(s, sizeof(s),
			 "wasmkeep-node 3\nfenced " INST "\nwritten_at_ms 5\nnode n1\nseq 1\n"
			 "fenced_by n2\nfenced_at_ms %s\n",
			 beyond[i]);
		CHECK_EQ_INT(keep_node_obj_decode(s, strlen(s), &o, err, sizeof(err)),
			     KEEP_ERR_PARSE);
		CHECK(strstr(err, "fenced_at_ms beyond year 9999") != NULL);
		snprintf(s, sizeof(s), "wasmkeep-node 1\nnode n1\nwritten_at_ms %s\n", beyond[i]);
		CHECK_EQ_INT(keep_node_obj_decode(s, strlen(s), &o, err, sizeof(err)),
			     KEEP_ERR_PARSE);
		snprintf(s, sizeof(s), "wasmkeep-node 2\nwritten_at_ms %s\nnode n1\n", beyond[i]);
		CHECK_EQ_INT(dec_s(s), KEEP_ERR_PARSE);
	}
	/* the bound itself, and far past, decode */
	CHECK_EQ_INT(dec("wasmkeep-node 3\nlive " INST
			 "\nwritten_at_ms 253402300799999\nnode n1\nseq 1\n",
			 &o),
		     0);
	CHECK_EQ_INT(o.written_at_ms, KEEP_WALL_MAX_MS);
	CHECK_EQ_INT(dec("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 1\nnode n1\nseq 1\n", &o),
		     0);
	CHECK_EQ_INT(o.written_at_ms, 1);
	/* and encode refuses what decode would */
	keep_buf_init(&b, KEEP_NODEOBJ_MAX);
	base_obj(&o);
	o.written_at_ms = KEEP_WALL_MAX_MS + 1;
	CHECK_EQ_INT(keep_node_obj_encode(&o, &b), KEEP_ERR_INVAL);
	base_obj(&o);
	o.state = KEEP_NODE_FENCED;
	o.fenced_at_ms = INT64_MAX;
	CHECK_EQ_INT(keep_node_obj_encode(&o, &b), KEEP_ERR_INVAL);
	o.fenced_at_ms = KEEP_WALL_MAX_MS;
	CHECK_EQ_INT(keep_node_obj_encode(&o, &b), 0);
	keep_buf_release(&b);
}

TEST(bad_seq_and_node)
{
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\nnode n1\nseq -1\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\nnode n1\nseq 01\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\nnode n1\nseq 0\n"), 0);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\nnode n/1\nseq 0\n"),
		     KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\nwritten_at_ms 5\nnode \nseq 0\n"),
		     KEEP_ERR_PARSE);
}

TEST(newline_cr_nul_size)
{
	struct keep_node_obj o;
	char s[] = BASE;
	char *big;

	CHECK_EQ_INT(keep_node_obj_decode(s, strlen(s) - 1, &o, NULL, 0), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 3\nlive " INST "\r\nwritten_at_ms 5\nnode n1\nseq 1\n"),
		     KEEP_ERR_PARSE);
	s[strlen("wasmkeep-node 3\nlive ") + 3] = '\0';
	CHECK_EQ_INT(keep_node_obj_decode(s, sizeof(s) - 1, &o, NULL, 0), KEEP_ERR_PARSE);

	big = malloc(KEEP_NODEOBJ_MAX + 1);
	memset(big, 'x', KEEP_NODEOBJ_MAX + 1);
	memcpy(big, BASE, strlen(BASE));
	CHECK_EQ_INT(keep_node_obj_decode(big, KEEP_NODEOBJ_MAX + 1, &o, NULL, 0), KEEP_ERR_TOOBIG);
	free(big);
}

TEST(old_formats)
{
	struct keep_node_obj o;

	CHECK_EQ_INT(
	    dec("wasmkeep-node 1\nnode n7\nwritten_at_ms 1600000000000\nanything goes\n", &o), 0);
	CHECK_EQ_INT(o.format, 1);
	CHECK_EQ_STR(o.node, "n7");
	CHECK_EQ_INT(o.written_at_ms, 1600000000000LL);
	CHECK_EQ_INT(o.state, KEEP_NODE_LIVE);
	CHECK_EQ_INT(o.seq, -1);
	CHECK_EQ_STR(o.instance, "-");
	CHECK_EQ_INT(dec("wasmkeep-node 2\nx y\nwritten_at_ms 5\nnode n8\nz\n", &o), 0);
	CHECK_EQ_INT(o.format, 2);
	CHECK_EQ_STR(o.node, "n8");
	CHECK_EQ_INT(dec_s("wasmkeep-node 2\nnode n8\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 2\nwritten_at_ms 5\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 2\nnode n8\nwritten_at_ms 0\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 2\nnode n8\nnode n9\nwritten_at_ms 5\n"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 1\nnode n8\nwritten_at_ms 5"), KEEP_ERR_PARSE);
	CHECK_EQ_INT(dec_s("wasmkeep-node 1\nnode n8\r\nwritten_at_ms 5\n"), KEEP_ERR_PARSE);
}

TEST(node_ids)
{
	char id[KEEP_NODE_ID_MAX + 2];

	CHECK(keep_node_id_valid("n1"));
	CHECK(keep_node_id_valid("Node_1.a-b"));
	CHECK(keep_node_id_valid("operator"));
	CHECK(!keep_node_id_valid(""));
	CHECK(!keep_node_id_valid(".hidden"));
	CHECK(!keep_node_id_valid("a/b"));
	CHECK(!keep_node_id_valid("a b"));
	CHECK(!keep_node_id_valid("é"));
	memset(id, 'a', sizeof(id));
	id[KEEP_NODE_ID_MAX] = '\0';
	CHECK(keep_node_id_valid(id));
	id[KEEP_NODE_ID_MAX] = 'a';
	id[KEEP_NODE_ID_MAX + 1] = '\0';
	CHECK(!keep_node_id_valid(id));
}

int main(void)
{
	RUN(decode_minimal);
	RUN(round_trip_all_states);
	RUN(encode_exact_text);
	RUN(encode_refuses);
	RUN(header_not_ours);
	RUN(missing_lines);
	RUN(unknown_duplicate_order);
	RUN(bad_state);
	RUN(bad_instance);
	RUN(dash_instance);
	RUN(fenced_fields_need_fenced);
	RUN(bad_written_at);
	RUN(times_beyond_year_9999);
	RUN(bad_seq_and_node);
	RUN(newline_cr_nul_size);
	RUN(old_formats);
	RUN(host_outside_printable_ascii);
	RUN(node_ids);
	return unit_done();
}
