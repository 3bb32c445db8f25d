// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of dnsmsg.c: the reader, names, query parsing and the
 * messages built locally (replies, BADVERS, header errors, upstream
 * queries).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dns/dnsmsg.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define HDR(id, flags, qd, an, ns, ar)                                         \
	(uint8_t)((id) >> 8), (uint8_t)(id), (uint8_t)((flags) >> 8),          \
	    (uint8_t)(flags), 0, qd, 0, an, 0, ns, 0, ar
#define WWW_EXAMPLE_COM                                                        \
	3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o',   \
	    'm', 0
#define OPT_RR(udp, ver, flags, rdlen)                                         \
	0, 0, 41, (uint8_t)((udp) >> 8), (uint8_t)(udp), 0, ver,               \
	    (uint8_t)((flags) >> 8), (uint8_t)(flags), 0, rdlen

static void test_reader_stops_at_end(void **state);
static void test_read_name_plain_and_compressed(void **state);
static void test_read_name_rejects(void **state);
static void test_name_text_roundtrip(void **state);
static void test_name_from_text_rejects(void **state);
static void test_parse_query_table(void **state);
static void test_parse_query_fields(void **state);
static void test_reply_nxdomain_ede_bytes(void **state);
static void test_reply_without_edns_has_no_opt(void **state);
static void test_reply_ede_text_fits_udp_size(void **state);
static void test_badvers_bytes(void **state);
static void test_header_error_copies_id_opcode(void **state);
static void test_upstream_query_carries_nothing_of_client(void **state);
static void test_type_names(void **state);

static void test_reader_stops_at_end(void **state)
{
	const uint8_t buf[] = {1, 2, 3};
	struct dns_reader r;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	const uint8_t *p;

	(void)state;
	dns_reader_init(&r, buf, sizeof(buf));
	assert_int_equal(dns_read_u32(&r, &u32), -EBADMSG);
	assert_int_equal(r.pos, 0);
	assert_int_equal(dns_read_u16(&r, &u16), 0);
	assert_int_equal(u16, 0x0102);
	assert_int_equal(dns_read_u16(&r, &u16), -EBADMSG);
	assert_int_equal(dns_read_bytes(&r, &p, SIZE_MAX), -EBADMSG);
	assert_int_equal(dns_read_u8(&r, &u8), 0);
	assert_int_equal(u8, 3);
	assert_int_equal(dns_read_u8(&r, &u8), -EBADMSG);
	assert_int_equal(dns_skip(&r, 0), 0);
	assert_int_equal(dns_skip(&r, 1), -EBADMSG);
}

static void test_read_name_plain_and_compressed(void **state)
{
	/* offset 0: www.example.com; 17: mail + pointer to 4 */
	const uint8_t buf[] = {
	    WWW_EXAMPLE_COM, 4, 'm', 'a', 'i', 'l', 0xc0, 4, 0xc0, 17};
	const uint8_t want[] = {4,   'm', 'a', 'i', 'l', 7,   'e', 'x', 'a',
				'm', 'p', 'l', 'e', 3,	 'c', 'o', 'm', 0};
	struct dns_reader r;
	uint8_t name[DNS_MAX_NAME];
	size_t len;

	(void)state;
	dns_reader_init(&r, buf, sizeof(buf));
	assert_int_equal(dns_read_name(&r, name, &len), 0);
	assert_int_equal(len, 17);
	assert_int_equal(r.pos, 17);
	assert_int_equal(dns_read_name(&r, name, &len), 0);
	assert_int_equal(r.pos, 24);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(name, want, sizeof(want));
	/* a pointer to a pointer */
	assert_int_equal(dns_read_name(&r, name, &len), 0);
	assert_int_equal(r.pos, 26);
	assert_memory_equal(name, want, sizeof(want));
}

static void test_read_name_rejects(void **state)
{
	static const struct {
		const char *why;
		uint8_t buf[16];
		size_t len, start;
	} cases[] = {
	    {"pointer to itself", {0xc0, 0}, 2, 0},
	    {"forward pointer", {0xc0, 2, 0}, 3, 0},
	    {"loop of two", {1, 'a', 0xc0, 4, 0xc0, 0}, 6, 4},
	    {"pointer into own labels", {1, 'a', 0xc0, 0}, 4, 0},
	    {"truncated pointer", {1, 'a', 0xc0}, 3, 0},
	    {"truncated label", {3, 'a', 'b'}, 3, 0},
	    {"no root label", {1, 'a'}, 2, 0},
	    {"label type 0x40", {0x41, 'a', 0}, 3, 0},
	    {"label type 0x80", {0x81, 'a', 0}, 3, 0},
	    {"empty", {0}, 0, 0},
	};
	uint8_t big[300], name[DNS_MAX_NAME];
	struct dns_reader r;
	size_t len, i;

	(void)state;
	for (i = 0; i < ARRAY_LEN(cases); i++) {
		dns_reader_init(&r, cases[i].buf, cases[i].len);
		r.pos = cases[i].start;
		if (dns_read_name(&r, name, &len) != -EBADMSG)
			fail_msg("accepted: %s", cases[i].why);
		assert_int_equal(r.pos, cases[i].start);
	}
	/* 64-byte label */
	memset(big, 'a', sizeof(big));
	big[0] = 64;
	big[65] = 0;
	dns_reader_init(&r, big, 66);
	assert_int_equal(dns_read_name(&r, name, &len), -EBADMSG);
	big[0] = 63;
	big[64] = 0;
	dns_reader_init(&r, big, 65);
	assert_int_equal(dns_read_name(&r, name, &len), 0);
	assert_int_equal(len, 65);
	/* 4 x 63-byte labels = 256 bytes with the root: too long */
	for (i = 0; i < 4; i++)
		big[i * 64] = 63;
	big[256] = 0;
	dns_reader_init(&r, big, 257);
	assert_int_equal(dns_read_name(&r, name, &len), -EBADMSG);
	/* 3 x 63 + 61 + root = 255: the longest legal name */
	big[192] = 61;
	big[254] = 0;
	dns_reader_init(&r, big, 255);
	assert_int_equal(dns_read_name(&r, name, &len), 0);
	assert_int_equal(len, 255);
	/* Too long only through a pointer. */
	big[255] = 1;
	big[256] = 'x';
	big[257] = 0xc0;
	big[258] = 0;
	dns_reader_init(&r, big, 259);
	r.pos = 255;
	assert_int_equal(dns_read_name(&r, name, &len), -EBADMSG);
}

static void test_name_text_roundtrip(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {".", "."},
	    {"www.Example.COM", "www.Example.COM"},
	    {"www.example.com.", "www.example.com"},
	    {"_443._tcp.a-b.test", "_443._tcp.a-b.test"},
	    {"a\\.b.test", "a\\046b.test"},
	    {"\\000\\255.x", "\\000\\255.x"},
	    {"sp\\ ace.x", "sp\\032ace.x"},
	    {"*.example.com", "\\042.example.com"},
	};
	uint8_t wire[DNS_MAX_NAME];
	char text[DNS_NAME_STRLEN];
	size_t len;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		assert_int_equal(dns_name_from_text(cases[i].in, wire, &len),
				 0);
		dns_name_to_text(wire, len, text, sizeof(text));
		assert_string_equal(text, cases[i].out);
	}
	assert_int_equal(dns_name_from_text("a.b", wire, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(wire, "\1a\1b", 5);
	/* A small buffer truncates, NUL-terminated. */
	dns_name_to_text(wire, len, text, 2);
	assert_string_equal(text, "a");
	dns_name_lower((uint8_t *)memcpy(wire, "\3WwW\0", 5), 5);
	assert_memory_equal(wire, "\3www", 5);
}

static void test_name_from_text_rejects(void **state)
{
	char longname[300];
	uint8_t wire[DNS_MAX_NAME];
	size_t len;

	(void)state;
	assert_int_equal(dns_name_from_text("", wire, &len), -EINVAL);
	assert_int_equal(dns_name_from_text("a..b", wire, &len), -EINVAL);
	assert_int_equal(dns_name_from_text(".a", wire, &len), -EINVAL);
	assert_int_equal(dns_name_from_text("a.b..", wire, &len), -EINVAL);
	assert_int_equal(dns_name_from_text("a\\256", wire, &len), -EINVAL);
	assert_int_equal(dns_name_from_text("a\\25", wire, &len), -EINVAL);
	assert_int_equal(dns_name_from_text("a\\", wire, &len), -EINVAL);
	memset(longname, 'a', 64);
	longname[64] = '\0';
	assert_int_equal(dns_name_from_text(longname, wire, &len), -EINVAL);
	longname[63] = '\0';
	assert_int_equal(dns_name_from_text(longname, wire, &len), 0);
	/* 4 labels of 63 = 257 wire bytes; 3 of 63 + one of 61 = 255 */
	for (int i = 0; i < 4; i++) {
		memset(longname + i * 64, 'b', 63);
		longname[i * 64 + 63] = '.';
	}
	longname[255] = '\0';
	assert_int_equal(dns_name_from_text(longname, wire, &len), -EINVAL);
	longname[253] = '\0';
	assert_int_equal(dns_name_from_text(longname, wire, &len), 0);
	assert_int_equal(len, 255);
}

static void test_parse_query_table(void **state)
{
	static const struct {
		const char *why;
		uint8_t buf[64];
		size_t len;
		enum dns_parse want;
	} cases[] = {
	    {"short", {HDR(1, 0, 1, 0, 0, 0)}, 11, DNS_PARSE_DROP},
	    {"QR set",
	     {HDR(1, 0x8000, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1},
	     33,
	     DNS_PARSE_DROP},
	    {"opcode 2", {HDR(1, 0x1000, 1, 0, 0, 0)}, 12, DNS_PARSE_NOTIMP},
	    {"plain A",
	     {HDR(1, 0x100, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1},
	     33,
	     DNS_PARSE_OK},
	    {"no question", {HDR(1, 0, 0, 0, 0, 0)}, 12, DNS_PARSE_FORMERR},
	    {"two questions",
	     {HDR(1, 0, 2, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1, 0xc0, 12, 0,
	      1, 0, 1},
	     39,
	     DNS_PARSE_FORMERR},
	    {"answer in query",
	     {HDR(1, 0, 1, 1, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1},
	     33,
	     DNS_PARSE_FORMERR},
	    {"authority in query",
	     {HDR(1, 0, 1, 0, 1, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1},
	     33,
	     DNS_PARSE_FORMERR},
	    {"truncated question",
	     {HDR(1, 0, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0},
	     32,
	     DNS_PARSE_FORMERR},
	    {"truncated name",
	     {HDR(1, 0, 1, 0, 0, 0), 3, 'w', 'w'},
	     15,
	     DNS_PARSE_FORMERR},
	    {"pointer loop in question",
	     {HDR(1, 0, 1, 0, 0, 0), 0xc0, 12, 0, 1, 0, 1},
	     18,
	     DNS_PARSE_FORMERR},
	    {"additional count past the end",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1},
	     33,
	     DNS_PARSE_FORMERR},
	    {"trailing garbage",
	     {HDR(1, 0, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1, 0xff},
	     34,
	     DNS_PARSE_FORMERR},
	    {"EDNS",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	      OPT_RR(4096, 0, 0x8000, 0)},
	     44,
	     DNS_PARSE_OK},
	    {"two OPT",
	     {HDR(1, 0, 1, 0, 0, 2), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	      OPT_RR(4096, 0, 0, 0), OPT_RR(4096, 0, 0, 0)},
	     55,
	     DNS_PARSE_FORMERR},
	    {"OPT with a non-root owner",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1, 0xc0, 12, 0,
	      41, 16, 0, 0, 0, 0, 0, 0, 0},
	     45,
	     DNS_PARSE_FORMERR},
	    {"OPT option past its rdata",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	      OPT_RR(4096, 0, 0, 4), 0, 10, 0, 8},
	     48,
	     DNS_PARSE_FORMERR},
	    {"client cookie (8 bytes)",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	      OPT_RR(4096, 0, 0, 12), 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8},
	     56,
	     DNS_PARSE_OK},
	    {"client and server cookie (16 bytes)",
	     {HDR(1, 0, 1, 0, 0, 1),
	      WWW_EXAMPLE_COM,
	      0,
	      1,
	      0,
	      1,
	      OPT_RR(4096, 0, 0, 20),
	      0,
	      10,
	      0,
	      16,
	      1,
	      2,
	      3,
	      4,
	      5,
	      6,
	      7,
	      8,
	      1,
	      2,
	      3,
	      4,
	      5,
	      6,
	      7,
	      8},
	     64,
	     DNS_PARSE_OK},
	    {"cookie of 5 bytes (RFC 7873: FORMERR)",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	      OPT_RR(4096, 0, 0, 9), 0, 10, 0, 5, 1, 2, 3, 4, 5},
	     53,
	     DNS_PARSE_FORMERR},
	    {"cookie of 12 bytes (server cookie too short)",
	     {HDR(1, 0, 1, 0, 0, 1),
	      WWW_EXAMPLE_COM,
	      0,
	      1,
	      0,
	      1,
	      OPT_RR(4096, 0, 0, 16),
	      0,
	      10,
	      0,
	      12,
	      1,
	      2,
	      3,
	      4,
	      5,
	      6,
	      7,
	      8,
	      1,
	      2,
	      3,
	      4},
	     60,
	     DNS_PARSE_FORMERR},
	    {"EDNS version 1",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	      OPT_RR(4096, 1, 0, 0)},
	     44,
	     DNS_PARSE_BADVERS},
	    {"other additional record skipped",
	     {HDR(1, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1, 0, 0, 16, 0,
	      1, 0, 0, 0, 0, 0, 2, 1, 'x'},
	     46,
	     DNS_PARSE_OK},
	};
	struct dns_query q;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		enum dns_parse got =
		    dnsmsg_parse_query(cases[i].buf, cases[i].len, &q);

		if (got != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].why, got,
				 cases[i].want);
		if (cases[i].len >= 12)
			assert_int_equal(q.id, 1);
		if (got == DNS_PARSE_FORMERR)
			assert_int_equal(q.name_len, 0);
	}
}

static void test_parse_query_fields(void **state)
{
	const uint8_t buf[] = {HDR(0xabcd, 0x0110, 1, 0, 0, 1),
			       3,
			       'W',
			       'w',
			       'W',
			       4,
			       'T',
			       'e',
			       's',
			       't',
			       0,
			       0,
			       28,
			       0,
			       1,
			       OPT_RR(100, 0, 0x8000, 0)};
	struct dns_query q;

	(void)state;
	assert_int_equal(dnsmsg_parse_query(buf, sizeof(buf), &q),
			 DNS_PARSE_OK);
	assert_int_equal(q.id, 0xabcd);
	assert_int_equal(q.flags, 0x0110);
	assert_int_equal(q.name_len, 10);
	assert_memory_equal(q.name, "\3WwW\4Test", 10);
	assert_memory_equal(q.lname, "\3www\4test", 10);
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	assert_int_equal(q.qclass, 1);
	assert_true(q.edns);
	assert_true(q.edns_do);
	assert_int_equal(q.edns_udp, 512); /* below 512 counts as 512 */
	assert_int_equal(q.edns_version, 0);
}

static void test_reply_nxdomain_ede_bytes(void **state)
{
	const char *text =
	    "not in allow; add \"www.evil.test\" or \"*.evil.test\"";
	const uint8_t query[] = {
	    HDR(0x1234, 0x0110, 1, 0, 0, 1), 3, 'w', 'w', 'w', 4, 'E', 'v', 'i',
	    'l', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1,
	    /* OPT 4096, DO, with a cookie the reply must not echo */
	    OPT_RR(4096, 0, 0x8000, 12), 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
	const uint8_t head[] = {HDR(0x1234, 0x8193, 1, 0, 0, 1),
				3,
				'w',
				'w',
				'w',
				4,
				'E',
				'v',
				'i',
				'l',
				4,
				't',
				'e',
				's',
				't',
				0,
				0,
				1,
				0,
				1,
				0,
				0,
				41,
				0x04,
				0xd0,
				0,
				0,
				0x80,
				0};
	uint8_t want[256], out[512];
	size_t tlen = strlen(text), wlen = 0;
	struct dns_query q;
	struct dns_reader r;
	struct dns_rr rr;
	uint8_t name[DNS_MAX_NAME];
	uint16_t u16;
	ssize_t n;

	(void)state;
	memcpy(want, head, sizeof(head));
	wlen = sizeof(head);
	want[wlen++] = 0;
	want[wlen++] = (uint8_t)(tlen + 6);
	want[wlen++] = 0;
	want[wlen++] = 15;
	want[wlen++] = 0;
	want[wlen++] = (uint8_t)(tlen + 2);
	want[wlen++] = 0;
	want[wlen++] = DNS_EDE_BLOCKED;
	memcpy(want + wlen, text, tlen);
	wlen += tlen;

	assert_int_equal(dnsmsg_parse_query(query, sizeof(query), &q),
			 DNS_PARSE_OK);
	n = dnsmsg_build_reply(&q, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, text,
			       out, sizeof(out));
	assert_int_equal(n, wlen);
	assert_memory_equal(out, want, wlen);

	/* And it reads back: header, question, one OPT with the EDE. */
	dns_reader_init(&r, out, (size_t)n);
	assert_int_equal(dns_skip(&r, DNS_HEADER_LEN), 0);
	assert_int_equal(dns_read_name(&r, name, &q.name_len), 0);
	assert_int_equal(dns_skip(&r, 4), 0);
	assert_int_equal(dns_read_rr(&r, 3, &rr, name), 0);
	assert_int_equal(rr.type, DNS_TYPE_OPT);
	assert_int_equal(rr.rclass, DNS_EDNS_UDPSIZE);
	assert_int_equal(r.pos, r.len);
	dns_reader_init(&r, rr.rdata, rr.rdlen);
	assert_int_equal(dns_read_u16(&r, &u16), 0);
	assert_int_equal(u16, 15);
	assert_int_equal(dns_read_u16(&r, &u16), 0);
	assert_int_equal(u16, tlen + 2);
	assert_int_equal(dns_read_u16(&r, &u16), 0);
	assert_int_equal(u16, DNS_EDE_BLOCKED);
	assert_int_equal(r.len - r.pos, tlen);

	assert_int_equal(dnsmsg_build_reply(&q, DNS_RCODE_NXDOMAIN,
					    DNS_EDE_BLOCKED, text, out, 40),
			 -ENOSPC);
}

static void test_reply_without_edns_has_no_opt(void **state)
{
	const uint8_t query[] = {
	    HDR(7, 0x0100, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1};
	const uint8_t want[] = {
	    HDR(7, 0x8185, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1};
	struct dns_query q;
	uint8_t out[512];

	(void)state;
	assert_int_equal(dnsmsg_parse_query(query, sizeof(query), &q),
			 DNS_PARSE_OK);
	assert_int_equal(dnsmsg_build_reply(&q, DNS_RCODE_REFUSED,
					    DNS_EDE_PROHIBITED, "no", out,
					    sizeof(out)),
			 sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	/* FORMERR: no question to echo */
	q.name_len = 0;
	assert_int_equal(dnsmsg_build_reply(&q, DNS_RCODE_FORMERR, DNS_EDE_NONE,
					    NULL, out, sizeof(out)),
			 12);
	assert_int_equal(out[3], 0x81);
	assert_int_equal(out[5], 0);
}

static void test_reply_ede_text_fits_udp_size(void **state)
{
	const uint8_t query[] = {
	    HDR(7, 0, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	    OPT_RR(512, 0, 0, 0)};
	char text[2000];
	struct dns_query q;
	uint8_t out[4096];

	(void)state;
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(dnsmsg_parse_query(query, sizeof(query), &q),
			 DNS_PARSE_OK);
	assert_int_equal(dnsmsg_build_reply(&q, DNS_RCODE_NXDOMAIN,
					    DNS_EDE_BLOCKED, text, out,
					    sizeof(out)),
			 512);
}

static void test_badvers_bytes(void **state)
{
	const uint8_t query[] = {
	    HDR(9, 0x0100, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 1, 0, 1,
	    OPT_RR(1232, 1, 0x8000, 0)};
	const uint8_t want[] = {HDR(9, 0x8180, 1, 0, 0, 1),
				WWW_EXAMPLE_COM,
				0,
				1,
				0,
				1,
				0,
				0,
				41,
				0x04,
				0xd0,
				1,
				0,
				0x80,
				0,
				0,
				0};
	struct dns_query q;
	uint8_t out[512];

	(void)state;
	assert_int_equal(dnsmsg_parse_query(query, sizeof(query), &q),
			 DNS_PARSE_BADVERS);
	assert_int_equal(dnsmsg_build_badvers(&q, out, sizeof(out)),
			 sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
}

static void test_header_error_copies_id_opcode(void **state)
{
	const uint8_t query[] = {HDR(0x4242, 0x2900, 1, 0, 0, 0), 0xff};
	const uint8_t want[] = {HDR(0x4242, 0xa904, 0, 0, 0, 0)};
	uint8_t out[64];

	(void)state;
	assert_int_equal(dnsmsg_build_header_error(query, sizeof(query),
						   DNS_RCODE_NOTIMP, out,
						   sizeof(out)),
			 12);
	assert_memory_equal(out, want, 12);
	assert_int_equal(dnsmsg_build_header_error(query, 3, DNS_RCODE_NOTIMP,
						   out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(dnsmsg_build_header_error(query, sizeof(query),
						   DNS_RCODE_NOTIMP, out, 11),
			 -ENOSPC);
}

static void test_upstream_query_carries_nothing_of_client(void **state)
{
	/* Client: ID 0x1111, RD+CD+AD, mixed case, EDNS 4096 DO with a
	 * cookie and padding. */
	const uint8_t query[] = {HDR(0x1111, 0x0130, 1, 0, 0, 1),
				 3,
				 'W',
				 'W',
				 'w',
				 7,
				 'E',
				 'x',
				 'a',
				 'm',
				 'p',
				 'l',
				 'e',
				 3,
				 'c',
				 'o',
				 'm',
				 0,
				 0,
				 65,
				 0,
				 1,
				 OPT_RR(4096, 0, 0x8000, 16),
				 0,
				 10,
				 0,
				 8,
				 1,
				 2,
				 3,
				 4,
				 5,
				 6,
				 7,
				 8,
				 0,
				 12,
				 0,
				 0};
	const uint8_t want[] = {
	    HDR(0x9999, 0x0110, 1, 0, 0, 1), WWW_EXAMPLE_COM, 0, 65, 0, 1,
	    OPT_RR(1232, 0, 0x8000, 0)};
	const uint8_t plain[] = {
	    HDR(0x1111, 0, 1, 0, 0, 0), WWW_EXAMPLE_COM, 0, 1, 0, 1};
	struct dns_query q;
	uint8_t out[512];

	(void)state;
	assert_int_equal(dnsmsg_parse_query(query, sizeof(query), &q),
			 DNS_PARSE_OK);
	assert_int_equal(
	    dnsmsg_build_upstream_query(&q, 0x9999, out, sizeof(out)),
	    sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(dnsmsg_build_upstream_query(&q, 0x9999, out, 20),
			 -ENOSPC);
	/* No RD from the client: still RD upstream; no EDNS: our OPT, no DO */
	assert_int_equal(dnsmsg_parse_query(plain, sizeof(plain), &q),
			 DNS_PARSE_OK);
	assert_int_equal(dnsmsg_build_upstream_query(&q, 5, out, sizeof(out)),
			 44);
	assert_int_equal(out[2], 0x01);
	assert_int_equal(out[3], 0x00);
	assert_int_equal(out[11], 1);
	assert_int_equal(out[33 + 7], 0);
}

static void test_type_names(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(dns_type_name(DNS_TYPE_HTTPS, buf, sizeof(buf)),
			    "HTTPS");
	assert_string_equal(dns_type_name(999, buf, sizeof(buf)), "TYPE999");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reader_stops_at_end),
	    cmocka_unit_test(test_read_name_plain_and_compressed),
	    cmocka_unit_test(test_read_name_rejects),
	    cmocka_unit_test(test_name_text_roundtrip),
	    cmocka_unit_test(test_name_from_text_rejects),
	    cmocka_unit_test(test_parse_query_table),
	    cmocka_unit_test(test_parse_query_fields),
	    cmocka_unit_test(test_reply_nxdomain_ede_bytes),
	    cmocka_unit_test(test_reply_without_edns_has_no_opt),
	    cmocka_unit_test(test_reply_ede_text_fits_udp_size),
	    cmocka_unit_test(test_badvers_bytes),
	    cmocka_unit_test(test_header_error_copies_id_opcode),
	    cmocka_unit_test(test_upstream_query_carries_nothing_of_client),
	    cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
