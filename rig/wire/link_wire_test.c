// SPDX-License-Identifier: GPL-2.0
/*
 * The link's wire format (kmod/lchan_link_wire.c, Documentation/link.md)
 * on the host: the module's own encode and decode, built against the
 * shims beside this file.  Known bytes for each type, round trips, every
 * rule of the document broken once (decode must refuse it, encode must
 * refuse to send it), the hello's negotiation, the status table, and
 * random bytes: decode never reads past its length, and whatever it
 * accepts encodes back to the same bytes.  TAP on stdout.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <linux/errno.h>
#include <linux/string.h>

#include "lchan_link_wire.h"

static int n, failed;

static void __attribute__((format(printf, 2, 3)))
check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failed += !ok;
}

static struct lchan_link_msg good_setup(void)
{
	struct lchan_link_msg m = {
		.type = LCHAN_LINK_SETUP_REQ,
		.req_id = 0x0102030405060708ULL,
		.setup = {
			.qpn = 0x123456, .psn = 0xabcdef,
			.src_port = 40000, .dst_port = 7000,
			.mtu = 3, .rd_atomic = 16, .rd_resp = 4,
			.retry = 6, .rnr_retry = 7, .data_len = 3,
			.lid = 0x0042, .sq_entries = 128, .rq_entries = 256,
			.gid = { 0xfe, 0x80, [15] = 0x01 },
			.data = { 'a', 'b', 'c' },
		},
	};
	return m;
}

static struct lchan_link_msg good_reply(void)
{
	struct lchan_link_msg m = {
		.type = LCHAN_LINK_SETUP_REP,
		.req_id = 9,
		.reply = {
			.status = LCHAN_LINK_ST_OK, .qpn = 0x11, .psn = 0x22,
			.mtu = 5, .rd_atomic = 1, .rd_resp = 2, .lid = 7,
			.gid = { [0] = 0x20, [15] = 0x02 },
		},
	};
	return m;
}

/* Decode of @len bytes copied to a buffer that ends right after them. */
static int decode_exact(const void *bytes, size_t len,
			struct lchan_link_msg *out)
{
	unsigned char *p = malloc(len ? len : 1);
	int ret;

	memcpy(p, bytes, len);
	ret = lchan_link_wire_decode(p, len, 1, out);
	free(p);
	return ret;
}

static void test_known_bytes(void)
{
	static const unsigned char hdr[24] = {
		0x6c, 0x63, 0x6c, 0x6b, 1, LCHAN_LINK_SETUP_REQ, 0, 128,
		0, 0, 0, 0, 0, 0, 0, 0,
		1, 2, 3, 4, 5, 6, 7, 8,
	};
	static const unsigned char body[32] = {
		0x00, 0x12, 0x34, 0x56, 0x00, 0xab, 0xcd, 0xef,
		0x9c, 0x40, 0x1b, 0x58, 3, 16, 4, 6,
		7, 0, 3, 0, 0, 0, 0, 128,
		0, 0, 1, 0, 0x00, 0x42, 0, 0,
	};
	struct lchan_link_msg m = good_setup();
	unsigned char buf[256];
	int len;

	memset(buf, 0xee, sizeof(buf));
	len = lchan_link_wire_encode(&m, 1, buf, sizeof(buf));
	check(len == 128, "SETUP_REQ encodes to 128 bytes (%d)", len);
	check(!memcmp(buf, hdr, sizeof(hdr)),
	      "SETUP_REQ header bytes as Documentation/link.md gives them");
	check(!memcmp(buf + 24, body, sizeof(body)),
	      "SETUP_REQ body bytes up to the GID as documented");
	check(buf[56] == 0xfe && buf[57] == 0x80 && buf[71] == 0x01 &&
	      !memcmp(buf + 72, "abc", 3) && buf[75] == 0 && buf[127] == 0,
	      "SETUP_REQ GID at 32 and data at 48 of the body");
	check(buf[128] == 0xee, "encode writes nothing past the message");

	m = good_reply();
	len = lchan_link_wire_encode(&m, 1, buf, sizeof(buf));
	check(len == 64 && buf[5] == LCHAN_LINK_SETUP_REP && buf[7] == 64 &&
	      buf[24 + 3] == 0 && buf[24 + 7] == 0x11 && buf[24 + 11] == 0x22 &&
	      buf[24 + 12] == 5 && buf[24 + 17] == 7 && buf[24 + 20] == 0x20,
	      "SETUP_REP encodes to 64 bytes, fields as documented");

	m = (struct lchan_link_msg){ .type = LCHAN_LINK_ECHO_REQ, .req_id = 1 };
	check(lchan_link_wire_encode(&m, 1, buf, sizeof(buf)) == 24 &&
	      buf[7] == 24 && buf[23] == 1,
	      "ECHO_REQ is a bare 24-byte header");
}

static void test_round_trips(void)
{
	static const unsigned char types[] = {
		LCHAN_LINK_ECHO_REQ, LCHAN_LINK_ECHO_REP, LCHAN_LINK_SETUP_REQ,
		LCHAN_LINK_SETUP_REP, LCHAN_LINK_SETUP_CANCEL,
	};
	struct lchan_link_msg in, out;
	unsigned char buf[256];
	unsigned int i;
	int len, ret;

	for (i = 0; i < sizeof(types); i++) {
		if (types[i] == LCHAN_LINK_SETUP_REQ)
			in = good_setup();
		else if (types[i] == LCHAN_LINK_SETUP_REP)
			in = good_reply();
		else
			in = (struct lchan_link_msg){ .type = types[i],
						      .req_id = ~0ULL };
		len = lchan_link_wire_encode(&in, 1, buf, sizeof(buf));
		ret = len > 0 ? decode_exact(buf, len, &out) : len;
		check(len == (int)lchan_link_wire_size(1, types[i]) && !ret &&
		      out.type == in.type && out.req_id == in.req_id &&
		      (types[i] != LCHAN_LINK_SETUP_REQ ||
		       !memcmp(&out.setup, &in.setup, sizeof(in.setup))) &&
		      (types[i] != LCHAN_LINK_SETUP_REP ||
		       !memcmp(&out.reply, &in.reply, sizeof(in.reply))),
		      "type %u: encode then decode gives it back (%d, %d)",
		      types[i], len, ret);
	}
}

/* Big-endian @val in @width bytes at @p. */
static void put_be(unsigned char *p, unsigned int width, unsigned long long val)
{
	while (width--) {
		p[width] = val;
		val >>= 8;
	}
}

/*
 * A valid message of @type with the @width bytes at @off set to @val:
 * decode refuses it with @want.
 */
static void refuse(unsigned char type, unsigned int off, unsigned int width,
		   unsigned long long val, int want, const char *what)
{
	struct lchan_link_msg m, out;
	unsigned char buf[256];
	int len, ret;

	m = type == LCHAN_LINK_SETUP_REQ ? good_setup() : good_reply();
	len = lchan_link_wire_encode(&m, 1, buf, sizeof(buf));
	put_be(buf + off, width, val);
	ret = decode_exact(buf, len, &out);
	check(ret == want, "%s with %s is refused (%d, want %d)",
	      type == LCHAN_LINK_SETUP_REQ ? "SETUP_REQ" : "SETUP_REP", what,
	      ret, want);
}

static void refuse_byte(unsigned int off, unsigned char val, int want,
			const char *what)
{
	refuse(LCHAN_LINK_SETUP_REQ, off, 1, val, want, what);
}

static void test_header_rules(void)
{
	struct lchan_link_msg m = good_setup(), out;
	unsigned char buf[256];
	int ret;

	refuse_byte(0, 0x6d, -EBADMSG, "another magic");
	refuse_byte(4, 2, -EPROTONOSUPPORT, "another version");
	refuse_byte(4, 0, -EPROTONOSUPPORT, "version 0");
	refuse_byte(5, 0, -EOPNOTSUPP, "type 0");
	refuse_byte(5, LCHAN_LINK_TYPE_END, -EOPNOTSUPP, "the first unknown type");
	refuse_byte(5, 255, -EOPNOTSUPP, "type 255");
	refuse_byte(5, LCHAN_LINK_SETUP_REP, -EBADMSG,
		    "a type of another size");
	refuse(LCHAN_LINK_SETUP_REQ, 6, 2, 0, -EBADMSG, "length 0");
	refuse_byte(7, 127, -EBADMSG, "a length one short");
	refuse_byte(7, 129, -EBADMSG, "a length one long");
	refuse_byte(11, 1, -EBADMSG, "a header flag");
	refuse_byte(15, 1, -EBADMSG, "a reserved header byte");

	lchan_link_wire_encode(&m, 1, buf, sizeof(buf));
	memset(buf + 16, 0, 8);
	check(decode_exact(buf, 128, &out) == -EBADMSG,
	      "request id 0 is refused");
	lchan_link_wire_encode(&m, 1, buf, sizeof(buf));
	ret = decode_exact(buf, 127, &out);
	check(ret == -EBADMSG, "127 bytes received of 128 are refused (%d)",
	      ret);
	ret = lchan_link_wire_decode(buf, 129, 1, &out);
	check(ret == -EBADMSG, "129 bytes received for 128 are refused (%d)",
	      ret);
	ret = decode_exact(buf, 23, &out);
	check(ret == -EBADMSG, "less than a header is refused (%d)", ret);
	ret = decode_exact(buf, 0, &out);
	check(ret == -EBADMSG, "nothing is refused (%d)", ret);
	ret = lchan_link_wire_decode(buf, 128, 2, &out);
	check(ret == -EPROTONOSUPPORT,
	      "a link at a version this module does not speak decodes nothing (%d)",
	      ret);
}

static void test_body_rules(void)
{
	const unsigned char q = LCHAN_LINK_SETUP_REQ, r = LCHAN_LINK_SETUP_REP;
	const unsigned int b = 24;
	const int bad = -EBADMSG;

	refuse(q, b + 0, 4, 0, bad, "QPN 0");
	refuse(q, b + 0, 4, 1, bad, "QPN 1");
	refuse(q, b + 0, 4, 0x1000000, bad, "a QPN above 24 bits");
	refuse(q, b + 4, 4, 0x1000000, bad, "a PSN above 24 bits");
	refuse(q, b + 10, 2, 0, bad, "dst_port 0");
	refuse(q, b + 12, 1, 0, bad, "MTU 0");
	refuse(q, b + 12, 1, 6, bad, "MTU 6");
	refuse(q, b + 13, 1, 17, bad, "rd_atomic 17");
	refuse(q, b + 14, 1, 17, bad, "rd_resp 17");
	refuse(q, b + 15, 1, 8, bad, "retry 8");
	refuse(q, b + 16, 1, 8, bad, "rnr_retry 8");
	refuse(q, b + 17, 1, 1, bad, "a body flag");
	refuse(q, b + 18, 1, 57, bad, "57 bytes of connection data");
	refuse(q, b + 19, 1, 1, bad, "resv0 set");
	refuse(q, b + 20, 4, 0, bad, "sq_entries 0");
	refuse(q, b + 20, 4, 65537, bad, "sq_entries 65537");
	refuse(q, b + 24, 4, 0, bad, "rq_entries 0");
	refuse(q, b + 24, 4, 0xffffffff, bad, "rq_entries 2^32 - 1");
	refuse(q, b + 30, 2, 1, bad, "resv1 set");
	refuse(q, b + 48 + 3, 1, 'd', bad, "a byte of data past data_len");
	refuse(q, b + 48 + 55, 1, 1, bad, "the last data byte set past data_len");

	refuse(r, b + 0, 4, LCHAN_LINK_ST_END, bad, "an unknown status");
	refuse(r, b + 0, 4, 0x80000000, bad, "status 2^31");
	refuse(r, b + 4, 4, 1, bad, "QPN 1");
	refuse(r, b + 8, 4, 0x1000000, bad, "a PSN above 24 bits");
	refuse(r, b + 12, 1, 0, bad, "MTU 0 on OK");
	refuse(r, b + 13, 1, 17, bad, "rd_atomic 17");
	refuse(r, b + 14, 1, 17, bad, "rd_resp 17");
	refuse(r, b + 15, 1, 1, bad, "resv0 set");
	refuse(r, b + 18, 2, 1, bad, "resv1 set");
	refuse(r, b + 36, 4, 1, bad, "resv2 set");
	/* A refusal with what only an acceptance carries. */
	refuse(r, b + 0, 4, LCHAN_LINK_ST_NO_LISTENER, bad,
	       "a refusal's status and a QPN");
}

static void test_refused_reply_shape(void)
{
	struct lchan_link_msg m = {
		.type = LCHAN_LINK_SETUP_REP, .req_id = 3,
		.reply = { .status = LCHAN_LINK_ST_BACKLOG_FULL },
	}, out;
	unsigned char buf[64];
	int len;

	len = lchan_link_wire_encode(&m, 1, buf, sizeof(buf));
	check(len == 64 && !decode_exact(buf, 64, &out) &&
	      out.reply.status == LCHAN_LINK_ST_BACKLOG_FULL,
	      "a refusal with all else 0 goes through");
	buf[24 + 20] = 1;
	check(decode_exact(buf, 64, &out) == -EBADMSG,
	      "a refusal with a GID is refused");
}

static void test_encode_refuses(void)
{
	struct lchan_link_msg m;
	unsigned char buf[256];

	m = good_setup();
	m.setup.qpn = 1;
	check(lchan_link_wire_encode(&m, 1, buf, sizeof(buf)) == -EINVAL,
	      "encode refuses a SETUP_REQ a peer would refuse");
	m = good_setup();
	m.setup.data[m.setup.data_len] = 1;
	check(lchan_link_wire_encode(&m, 1, buf, sizeof(buf)) == -EINVAL,
	      "encode refuses data past data_len");
	m = good_reply();
	m.reply.status = LCHAN_LINK_ST_BUSY;
	check(lchan_link_wire_encode(&m, 1, buf, sizeof(buf)) == -EINVAL,
	      "encode refuses a refusal that carries a QPN");
	m = good_setup();
	m.req_id = 0;
	check(lchan_link_wire_encode(&m, 1, buf, sizeof(buf)) == -EINVAL,
	      "encode refuses request id 0");
	m = good_setup();
	m.type = LCHAN_LINK_TYPE_END;
	check(lchan_link_wire_encode(&m, 1, buf, sizeof(buf)) == -EINVAL,
	      "encode refuses an unknown type");
	m = good_setup();
	check(lchan_link_wire_encode(&m, 2, buf, sizeof(buf)) == -EINVAL,
	      "encode refuses a version it does not speak");
	check(lchan_link_wire_encode(&m, 1, buf, 127) == -ENOSPC,
	      "encode refuses a buffer one byte short");
}

static void test_hello(void)
{
	struct lchan_link_wire_hello h;
	unsigned char pad[56] = { 0 };
	int ret;

	lchan_link_wire_hello(&h, 1, 1);
	memcpy(pad, &h, sizeof(h));
	check(pad[0] == 0x6c && pad[3] == 0x6b && pad[4] == 1 && pad[5] == 1,
	      "the hello's bytes as documented");
	check(lchan_link_wire_hello_pick(pad, sizeof(pad)) == 1,
	      "a connect's hello padded to 56 bytes picks version 1");
	check(lchan_link_wire_hello_pick(pad, 15) == -EBADMSG,
	      "a hello of 15 bytes is none");
	check(lchan_link_wire_hello_pick(NULL, 0) == -EBADMSG,
	      "no private data is no hello");
	lchan_link_wire_hello(&h, 1, 9);
	check(lchan_link_wire_hello_pick(&h, sizeof(h)) == 1,
	      "a newer peer's range 1..9 picks 1");
	lchan_link_wire_hello(&h, 2, 9);
	ret = lchan_link_wire_hello_pick(&h, sizeof(h));
	check(ret == -EPROTONOSUPPORT, "a range 2..9 has no common version (%d)",
	      ret);
	lchan_link_wire_hello(&h, 0, 1);
	check(lchan_link_wire_hello_pick(&h, sizeof(h)) == -EBADMSG,
	      "a range from 0 is refused");
	lchan_link_wire_hello(&h, 2, 1);
	check(lchan_link_wire_hello_pick(&h, sizeof(h)) == -EBADMSG,
	      "a range with min above max is refused");
	lchan_link_wire_hello(&h, 1, 1);
	h.magic ^= 1;
	check(lchan_link_wire_hello_pick(&h, sizeof(h)) == -EBADMSG,
	      "a hello with another magic is refused");
	lchan_link_wire_hello(&h, 1, 1);
	h.flags = 0xffffffff;
	check(lchan_link_wire_hello_pick(&h, sizeof(h)) == 1,
	      "a connect's flags are a later version's: ignored at 1");

	lchan_link_wire_hello(&h, 1, 1);
	check(lchan_link_wire_hello_chosen(&h, sizeof(h)) == 1,
	      "an accept's hello choosing 1 is taken");
	lchan_link_wire_hello(&h, 1, 2);
	check(lchan_link_wire_hello_chosen(&h, sizeof(h)) == -EBADMSG,
	      "an accept's hello must choose one version");
	lchan_link_wire_hello(&h, 2, 2);
	check(lchan_link_wire_hello_chosen(&h, sizeof(h)) == -EPROTONOSUPPORT,
	      "an accept choosing a version this module lacks is refused");
}

static void test_status(void)
{
	check(lchan_link_wire_errno(LCHAN_LINK_ST_OK) == 0 &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_NO_LISTENER) == -ECONNREFUSED &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_BACKLOG_FULL) == -ECONNREFUSED &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_NO_RESOURCES) == -ENOBUFS &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_BAD_REQUEST) == -EPROTO &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_BUSY) == -EBUSY &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_UNSUPPORTED) == -EOPNOTSUPP &&
	      lchan_link_wire_errno(LCHAN_LINK_ST_END) == -EPROTO,
	      "each status maps to the errno the document gives");
	check(lchan_link_wire_is_request(LCHAN_LINK_ECHO_REQ) &&
	      lchan_link_wire_is_request(LCHAN_LINK_SETUP_REQ) &&
	      !lchan_link_wire_is_request(LCHAN_LINK_SETUP_CANCEL) &&
	      !lchan_link_wire_is_request(LCHAN_LINK_SETUP_REP) &&
	      lchan_link_wire_reply_to(LCHAN_LINK_ECHO_REQ) == LCHAN_LINK_ECHO_REP &&
	      lchan_link_wire_reply_to(LCHAN_LINK_SETUP_REQ) == LCHAN_LINK_SETUP_REP &&
	      !lchan_link_wire_reply_to(LCHAN_LINK_SETUP_CANCEL),
	      "requests and their replies");
}

/* A small deterministic generator: the same bytes on every run. */
static unsigned long long rnd_state = 0x2545f4914f6cdd1dULL;

static unsigned int rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (unsigned int)rnd_state;
}

static void test_random(void)
{
	unsigned int i, j, accepted = 0, mismatched = 0, runs = 200000;
	struct lchan_link_msg base[2] = { good_setup(), good_reply() }, out;
	unsigned char buf[256], again[256];

	for (i = 0; i < runs; i++) {
		size_t len;
		int ret;

		/* Half noise, half a valid message with a few bytes changed. */
		if (i & 1) {
			len = rnd() % 257;
			for (j = 0; j < len; j++)
				buf[j] = rnd();
		} else {
			len = lchan_link_wire_encode(&base[i / 2 % 2], 1, buf,
						     sizeof(buf));
			for (j = rnd() % 3; j; j--)
				buf[rnd() % len] = rnd();
		}
		ret = decode_exact(buf, len, &out);
		if (ret)
			continue;
		accepted++;
		if (lchan_link_wire_encode(&out, 1, again, sizeof(again)) !=
		    (int)len || memcmp(again, buf, len))
			mismatched++;
	}
	check(accepted > 0 && !mismatched,
	      "%u random messages: %u accepted, each encodes back to its bytes (%u do not)",
	      runs, accepted, mismatched);
}

int main(void)
{
	test_known_bytes();
	test_round_trips();
	test_header_rules();
	test_body_rules();
	test_refused_reply_shape();
	test_encode_refuses();
	test_hello();
	test_status();
	test_random();
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
