// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of dnsrr.c: rewriting upstream answers for the client and
 * snooping the addresses they hand out. Answers are built here with the
 * module's own writer, names uncompressed unless a test says otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"

struct msg {
	uint8_t buf[4096];
	struct dns_writer w;
};

static void msg_begin(struct msg *m, uint16_t flags, uint16_t an, uint16_t ns,
		      uint16_t ar, const char *qname, uint16_t qtype);
static void msg_rr(struct msg *m, const char *owner, uint16_t type,
		   uint32_t ttl, const void *rdata, uint16_t rdlen);
static void msg_name_rr(struct msg *m, const char *owner, uint16_t type,
			const char *target);
static void msg_a(struct msg *m, const char *owner, const char *addr);
static void query(struct dns_query *q, const char *name, uint16_t qtype,
		  bool edns);
static bool drop_10_8(struct dns_rr *rr, void *arg);
static size_t snoop(const struct msg *m, const char *qname,
		    struct dns_addr *out, size_t cap, int want);
static void check_addr(const struct dns_addr *a, const char *text);
static int count_hint(const struct netaddr *a, void *arg);

static void test_rewrite_restores_id_and_case(void **state);
static void test_rewrite_edns_opt(void **state);
static void test_rewrite_truncates_over_max(void **state);
static void test_rewrite_keep_fixes_counts(void **state);
static void test_rewrite_compresses_names(void **state);
static void test_rewrite_rejects(void **state);
static void test_snoop_cname_chain_in_order(void **state);
static void test_snoop_cname_chain_out_of_order(void **state);
static void test_snoop_cname_loop_stops(void **state);
static void test_snoop_ignores_other_owners_and_sections(void **state);
static void test_snoop_https_hints(void **state);
static void test_snoop_rejects_malformed(void **state);
static void test_svcb_hints_malformed(void **state);
static void test_svcb_without_ech(void **state);
static void test_svcb_without_malformed(void **state);
static void test_rewrite_replaced_rdata(void **state);
static void test_snoop_skips_mandatory_ech_when_stripping(void **state);

static void msg_begin(struct msg *m, uint16_t flags, uint16_t an, uint16_t ns,
		      uint16_t ar, const char *qname, uint16_t qtype)
{
	uint8_t name[DNS_MAX_NAME];
	size_t len;

	dns_writer_init(&m->w, m->buf, sizeof(m->buf));
	dns_write_u16(&m->w, 0x7777);
	dns_write_u16(&m->w, flags);
	dns_write_u16(&m->w, 1);
	dns_write_u16(&m->w, an);
	dns_write_u16(&m->w, ns);
	dns_write_u16(&m->w, ar);
	assert_int_equal(dns_name_from_text(qname, name, &len), 0);
	dns_write_name(&m->w, name, len, false);
	dns_write_u16(&m->w, qtype);
	dns_write_u16(&m->w, 1);
}

static void msg_rr(struct msg *m, const char *owner, uint16_t type,
		   uint32_t ttl, const void *rdata, uint16_t rdlen)
{
	uint8_t name[DNS_MAX_NAME];
	size_t len;

	assert_int_equal(dns_name_from_text(owner, name, &len), 0);
	dns_write_name(&m->w, name, len, false);
	dns_write_u16(&m->w, type);
	dns_write_u16(&m->w, type == DNS_TYPE_OPT ? 4096 : 1);
	dns_write_u32(&m->w, ttl);
	dns_write_u16(&m->w, rdlen);
	dns_write_bytes(&m->w, rdata, rdlen);
	assert_int_equal(m->w.err, 0);
}

static void msg_name_rr(struct msg *m, const char *owner, uint16_t type,
			const char *target)
{
	uint8_t name[DNS_MAX_NAME];
	size_t len;

	assert_int_equal(dns_name_from_text(target, name, &len), 0);
	msg_rr(m, owner, type, 300, name, (uint16_t)len);
}

static void msg_a(struct msg *m, const char *owner, const char *addr)
{
	uint8_t b[16];

	if (inet_pton(AF_INET, addr, b) == 1) {
		msg_rr(m, owner, DNS_TYPE_A, 300, b, 4);
	} else {
		assert_int_equal(inet_pton(AF_INET6, addr, b), 1);
		msg_rr(m, owner, DNS_TYPE_AAAA, 300, b, 16);
	}
}

static void query(struct dns_query *q, const char *name, uint16_t qtype,
		  bool edns)
{
	memset(q, 0, sizeof(*q));
	q->id = 0x1234;
	q->flags = DNS_FLAG_RD;
	assert_int_equal(dns_name_from_text(name, q->name, &q->name_len), 0);
	memcpy(q->lname, q->name, q->name_len);
	dns_name_lower(q->lname, q->name_len);
	q->qtype = qtype;
	q->qclass = 1;
	q->edns = edns;
	q->edns_udp = edns ? 4096 : 0;
	q->edns_do = edns;
}

static bool drop_10_8(struct dns_rr *rr, void *arg)
{
	(void)arg;
	return !(rr->type == DNS_TYPE_A && rr->rdata[0] == 10);
}

static size_t snoop(const struct msg *m, const char *qname,
		    struct dns_addr *out, size_t cap, int want)
{
	uint8_t name[DNS_MAX_NAME];
	size_t len, n = 99;

	assert_int_equal(dns_name_from_text(qname, name, &len), 0);
	assert_int_equal(
	    dnsmsg_snoop(m->buf, m->w.pos, name, len, 0, out, cap, &n), want);
	return n;
}

static void check_addr(const struct dns_addr *a, const char *text)
{
	char buf[64];

	assert_non_null(
	    inet_ntop(a->addr.family, a->addr.bytes, buf, sizeof(buf)));
	assert_string_equal(buf, text);
}

static void test_rewrite_restores_id_and_case(void **state)
{
	struct msg m;
	struct dns_query q;
	uint8_t out[512];
	ssize_t n;

	(void)state;
	query(&q, "WwW.ExAmple.com", DNS_TYPE_A, false);
	msg_begin(&m, 0x8580, 1, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_a(&m, "www.example.com", "198.18.0.1");
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL, NULL, out,
				  sizeof(out));
	assert_true(n > 0);
	assert_int_equal(out[0], 0x12);
	assert_int_equal(out[1], 0x34);
	/* QR AA RD RA from upstream/client, rcode 0 */
	assert_int_equal(out[2], 0x85);
	assert_int_equal(out[3], 0x80);
	assert_memory_equal(out + 12, q.name, q.name_len);
	/* The owner is a pointer to the question. */
	assert_int_equal(out[12 + q.name_len + 4], 0xc0);
	assert_int_equal(out[12 + q.name_len + 5], 12);
}

static void test_rewrite_edns_opt(void **state)
{
	struct msg m;
	struct dns_query q;
	uint8_t out[512], opt[12] = {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
	ssize_t n;

	(void)state;
	msg_begin(&m, 0x8180, 1, 0, 1, "example.com", DNS_TYPE_A);
	msg_a(&m, "example.com", "198.18.0.1");
	msg_rr(&m, ".", DNS_TYPE_OPT, 0, opt, sizeof(opt));

	query(&q, "example.com", DNS_TYPE_A, false);
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL, NULL, out,
				  sizeof(out));
	/* header + question + A; the upstream OPT is gone */
	assert_int_equal(n, 12 + 13 + 4 + 2 + 10 + 4);
	assert_int_equal(out[11], 0);

	query(&q, "example.com", DNS_TYPE_A, true);
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL, NULL, out,
				  sizeof(out));
	assert_int_equal(n, 12 + 13 + 4 + 2 + 10 + 4 + 11);
	assert_int_equal(out[11], 1);
	/* our OPT: 1232, DO, no options */
	assert_memory_equal(out + n - 11, "\0\0\x29\x04\xd0\0\0\x80\0\0\0", 11);
}

static void test_rewrite_truncates_over_max(void **state)
{
	struct msg m;
	struct dns_query q;
	uint8_t out[4096];
	char addr[32];
	ssize_t n;

	(void)state;
	query(&q, "example.com", DNS_TYPE_A, true);
	msg_begin(&m, 0x8180, 40, 0, 0, "example.com", DNS_TYPE_A);
	for (int i = 0; i < 40; i++) {
		snprintf(addr, sizeof(addr), "198.18.0.%d", i);
		msg_a(&m, "example.com", addr);
	}
	/* 40 * 16 bytes: fits 4096, not 512 */
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 4096, NULL, NULL, out,
				  sizeof(out));
	assert_int_equal(n, 12 + 17 + 40 * 16 + 11);
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL, NULL, out,
				  sizeof(out));
	assert_int_equal(n, 12 + 17 + 11);
	assert_true(out[2] & 0x02); /* TC */
	assert_int_equal(out[7], 0);
	assert_int_equal(out[11], 1);
	/* A too small buffer is not a truncation. */
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 4096, NULL,
					       NULL, out, 100),
			 -ENOSPC);
	assert_int_equal(
	    dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 20, NULL, NULL, out, 20),
	    -ENOSPC);
}

static void test_rewrite_keep_fixes_counts(void **state)
{
	struct msg m;
	struct dns_query q;
	uint8_t out[512], owner[DNS_MAX_NAME];
	struct dns_reader r;
	struct dns_rr rr;
	struct dns_addr addrs[4];
	ssize_t n;

	(void)state;
	query(&q, "example.com", DNS_TYPE_A, false);
	msg_begin(&m, 0x8180, 3, 0, 1, "example.com", DNS_TYPE_A);
	msg_a(&m, "example.com", "10.0.0.1");
	msg_a(&m, "example.com", "198.18.0.1");
	msg_a(&m, "example.com", "10.0.0.2");
	msg_a(&m, "ns.example.com", "10.0.0.3");
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, drop_10_8, NULL, out,
				  sizeof(out));
	assert_true(n > 0);
	assert_int_equal(out[7], 1);
	assert_int_equal(out[11], 0);
	dns_reader_init(&r, out, (size_t)n);
	assert_int_equal(dns_skip(&r, 12 + 13 + 4), 0);
	assert_int_equal(dns_read_rr(&r, 1, &rr, owner), 0);
	assert_int_equal(rr.rdata[0], 198);
	assert_int_equal(r.pos, r.len);
	/* and the result snoops */
	m.w.pos = (size_t)n;
	memcpy(m.buf, out, (size_t)n);
	assert_int_equal(snoop(&m, "example.com", addrs, 4, 0), 1);
	check_addr(&addrs[0], "198.18.0.1");
}

static void test_rewrite_compresses_names(void **state)
{
	struct msg m;
	struct dns_query q;
	uint8_t out[1024], mx[64], name[DNS_MAX_NAME], srv[64];
	size_t len;
	ssize_t n;
	struct dns_reader r;
	struct dns_rr rr;

	(void)state;
	query(&q, "www.example.com", DNS_TYPE_A, false);
	msg_begin(&m, 0x8180, 3, 2, 2, "www.example.com", DNS_TYPE_A);
	msg_name_rr(&m, "www.example.com", DNS_TYPE_CNAME, "web.example.com");
	msg_a(&m, "web.example.com", "198.18.0.1");
	msg_a(&m, "web.example.com", "198.18.0.2");
	msg_name_rr(&m, "example.com", DNS_TYPE_NS, "ns1.example.com");
	assert_int_equal(dns_name_from_text("mail.example.com", name, &len), 0);
	mx[0] = 0;
	mx[1] = 10;
	memcpy(mx + 2, name, len);
	msg_rr(&m, "example.com", DNS_TYPE_MX, 300, mx, (uint16_t)(len + 2));
	memset(srv, 0, 6);
	memcpy(srv + 6, name, len);
	msg_rr(&m, "_x._tcp.example.com", DNS_TYPE_SRV, 300, srv,
	       (uint16_t)(len + 6));
	msg_a(&m, "ns1.example.com", "198.18.0.53");
	n = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 1024, NULL, NULL, out,
				  sizeof(out));
	assert_true(n > 0);
	assert_true((size_t)n < m.w.pos);
	/* Every record reads back with its names whole. */
	dns_reader_init(&r, out, (size_t)n);
	assert_int_equal(dns_skip(&r, 12), 0);
	assert_int_equal(dns_read_name(&r, name, &len), 0);
	assert_int_equal(dns_skip(&r, 4), 0);
	for (int i = 0; i < 7; i++) {
		struct dns_reader rd;

		assert_int_equal(dns_read_rr(&r, 1, &rr, name), 0);
		if (rr.type == DNS_TYPE_CNAME) {
			rd = r;
			rd.pos = (size_t)(rr.rdata - out);
			assert_int_equal(dns_read_name(&rd, name, &len), 0);
			assert_int_equal(len, 17);
		}
		if (rr.type == DNS_TYPE_SRV) /* target uncompressed */
			assert_int_equal(rr.rdlen, 6 + 18);
	}
	assert_int_equal(r.pos, r.len);
}

static void test_rewrite_rejects(void **state)
{
	struct msg m;
	struct dns_query q;
	uint8_t out[512], bad[3] = {5, 'a', 'b'};

	(void)state;
	query(&q, "example.com", DNS_TYPE_A, false);
	/* QR clear */
	msg_begin(&m, 0x0180, 0, 0, 0, "example.com", DNS_TYPE_A);
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL,
					       NULL, out, sizeof(out)),
			 -EBADMSG);
	/* other question */
	msg_begin(&m, 0x8180, 0, 0, 0, "example.net", DNS_TYPE_A);
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL,
					       NULL, out, sizeof(out)),
			 -EBADMSG);
	msg_begin(&m, 0x8180, 0, 0, 0, "example.com", DNS_TYPE_AAAA);
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL,
					       NULL, out, sizeof(out)),
			 -EBADMSG);
	/* case differs: fine */
	msg_begin(&m, 0x8180, 0, 0, 0, "EXAMPLE.com", DNS_TYPE_A);
	assert_true(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL, NULL,
					  out, sizeof(out)) > 0);
	/* count past the end */
	msg_begin(&m, 0x8180, 2, 0, 0, "example.com", DNS_TYPE_A);
	msg_a(&m, "example.com", "198.18.0.1");
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL,
					       NULL, out, sizeof(out)),
			 -EBADMSG);
	/* CNAME rdata that is not a name */
	msg_begin(&m, 0x8180, 1, 0, 0, "example.com", DNS_TYPE_A);
	msg_rr(&m, "example.com", DNS_TYPE_CNAME, 1, bad, sizeof(bad));
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL,
					       NULL, out, sizeof(out)),
			 -EBADMSG);
	/* A with 5 bytes */
	msg_begin(&m, 0x8180, 1, 0, 0, "example.com", DNS_TYPE_A);
	msg_rr(&m, "example.com", DNS_TYPE_A, 1, "\1\2\3\4\5", 5);
	assert_int_equal(dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, NULL,
					       NULL, out, sizeof(out)),
			 -EBADMSG);
}

static void test_snoop_cname_chain_in_order(void **state)
{
	struct msg m;
	struct dns_addr a[4];

	(void)state;
	msg_begin(&m, 0x8180, 4, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_name_rr(&m, "www.example.com", DNS_TYPE_CNAME, "a.cdn.test");
	msg_name_rr(&m, "A.cdn.test", DNS_TYPE_CNAME, "b.cdn.test");
	msg_a(&m, "b.cdn.test", "198.18.1.1");
	msg_a(&m, "b.cdn.test", "2001:db8::1");
	assert_int_equal(snoop(&m, "www.example.com", a, 4, 0), 2);
	check_addr(&a[0], "198.18.1.1");
	check_addr(&a[1], "2001:db8::1");
	assert_int_equal(a[0].ttl, 300);
	/* too small an array: the count, and -E2BIG */
	assert_int_equal(snoop(&m, "www.example.com", a, 1, -E2BIG), 2);
}

static void test_snoop_cname_chain_out_of_order(void **state)
{
	struct msg m;
	struct dns_addr a[4];

	(void)state;
	msg_begin(&m, 0x8180, 4, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_a(&m, "c.cdn.test", "198.18.1.3");
	msg_name_rr(&m, "b.cdn.test", DNS_TYPE_CNAME, "c.cdn.test");
	msg_name_rr(&m, "a.cdn.test", DNS_TYPE_CNAME, "b.cdn.test");
	msg_name_rr(&m, "www.example.com", DNS_TYPE_CNAME, "a.cdn.test");
	assert_int_equal(snoop(&m, "www.example.com", a, 4, 0), 1);
	check_addr(&a[0], "198.18.1.3");
}

static void test_snoop_cname_loop_stops(void **state)
{
	struct msg m;
	struct dns_addr a[4];
	char from[32], to[32];

	(void)state;
	msg_begin(&m, 0x8180, 3, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_name_rr(&m, "www.example.com", DNS_TYPE_CNAME, "a.test");
	msg_name_rr(&m, "a.test", DNS_TYPE_CNAME, "www.example.com");
	msg_a(&m, "a.test", "198.18.1.1");
	assert_int_equal(snoop(&m, "www.example.com", a, 4, 0), 1);

	/* A chain of 20 links: only the first 16 are followed. */
	msg_begin(&m, 0x8180, 21, 0, 0, "n0.test", DNS_TYPE_A);
	for (int i = 0; i < 20; i++) {
		snprintf(from, sizeof(from), "n%d.test", i);
		snprintf(to, sizeof(to), "n%d.test", i + 1);
		msg_name_rr(&m, from, DNS_TYPE_CNAME, to);
	}
	msg_a(&m, "n20.test", "198.18.1.1");
	assert_int_equal(snoop(&m, "n0.test", a, 4, 0), 0);
}

static void test_snoop_ignores_other_owners_and_sections(void **state)
{
	struct msg m;
	struct dns_addr a[4];

	(void)state;
	msg_begin(&m, 0x8180, 2, 1, 1, "www.example.com", DNS_TYPE_A);
	msg_a(&m, "evil.test", "198.18.9.9");
	msg_a(&m, "www.example.com", "198.18.1.1");
	msg_a(&m, "www.example.com", "198.18.9.8");
	msg_a(&m, "www.example.com", "198.18.9.7");
	assert_int_equal(snoop(&m, "www.example.com", a, 4, 0), 1);
	check_addr(&a[0], "198.18.1.1");
}

static void test_snoop_https_hints(void **state)
{
	struct msg m;
	struct dns_addr a[8];
	const uint8_t https[] = {0, 1, 0, /* priority 1, target "." */
				 0, 1, 0, 3,  2,    'h',  '2', /* alpn */
				 0, 4, 0, 8,  198,  18,	  2,	1,    198, 18,
				 2, 2, /* ipv4hint */
				 0, 6, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0,   0,
				 0, 0, 0, 0,  0,    0,	  0,	0,    0,   2};
	const uint8_t alias[] = {0, 0, 3, 'c', 'd', 'n', 0, 0,
				 4, 0, 4, 198, 18,  3,	 3};

	(void)state;
	msg_begin(&m, 0x8180, 3, 0, 0, "svc.example.com", DNS_TYPE_HTTPS);
	msg_name_rr(&m, "svc.example.com", DNS_TYPE_CNAME, "x.test");
	msg_rr(&m, "x.test", DNS_TYPE_HTTPS, 60, https, sizeof(https));
	msg_rr(&m, "x.test", DNS_TYPE_SVCB, 60, alias, sizeof(alias));
	assert_int_equal(snoop(&m, "svc.example.com", a, 8, 0), 3);
	check_addr(&a[0], "198.18.2.1");
	check_addr(&a[1], "198.18.2.2");
	check_addr(&a[2], "2001:db8::2");
	assert_int_equal(a[2].ttl, 60);
	/* every hint names its record: the first HTTPS/SVCB read is 1 */
	assert_int_equal(a[0].rec, 1);
	assert_int_equal(a[2].rec, 1);

	msg_begin(&m, 0x8180, 3, 0, 0, "x.test", DNS_TYPE_HTTPS);
	msg_a(&m, "x.test", "198.18.1.1");
	msg_rr(&m, "x.test", DNS_TYPE_HTTPS, 60, https, sizeof(https));
	msg_rr(&m, "x.test", DNS_TYPE_HTTPS, 60, https, sizeof(https));
	assert_int_equal(snoop(&m, "x.test", a, 8, 0), 7);
	assert_int_equal(a[0].rec, 0);
	assert_int_equal(a[1].rec, 1);
	assert_int_equal(a[4].rec, 2);
}

static void test_snoop_rejects_malformed(void **state)
{
	struct msg m;
	struct dns_addr a[4];
	const uint8_t https[] = {0, 1, 0, 0, 4, 0, 3, 1, 2, 3};

	(void)state;
	msg_begin(&m, 0x8180, 2, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_a(&m, "www.example.com", "198.18.1.1");
	msg_rr(&m, "www.example.com", DNS_TYPE_A, 1, "\1\2\3", 3);
	assert_int_equal(snoop(&m, "www.example.com", a, 4, -EBADMSG), 0);

	msg_begin(&m, 0x8180, 1, 0, 0, "www.example.com", DNS_TYPE_AAAA);
	msg_rr(&m, "www.example.com", DNS_TYPE_AAAA, 1, "\1\2\3\4", 4);
	assert_int_equal(snoop(&m, "www.example.com", a, 4, -EBADMSG), 0);

	msg_begin(&m, 0x8180, 2, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_a(&m, "www.example.com", "198.18.1.1");
	msg_rr(&m, "www.example.com", DNS_TYPE_HTTPS, 1, https, sizeof(https));
	assert_int_equal(snoop(&m, "www.example.com", a, 4, -EBADMSG), 0);

	msg_begin(&m, 0x8180, 2, 0, 0, "www.example.com", DNS_TYPE_A);
	msg_a(&m, "www.example.com", "198.18.1.1");
	assert_int_equal(snoop(&m, "www.example.com", a, 4, -EBADMSG), 0);
}

static int count_hint(const struct netaddr *a, void *arg)
{
	(void)a;
	++*(int *)arg;
	return 0;
}

static void test_svcb_hints_malformed(void **state)
{
	static const struct {
		const char *why;
		uint8_t rdata[32];
		size_t len;
		int want;
	} cases[] = {
	    {"empty", {0}, 0, -EBADMSG},
	    {"no target", {0, 1}, 2, -EBADMSG},
	    {"compressed target", {0, 1, 0xc0, 0}, 4, -EBADMSG},
	    {"no params", {0, 1, 0}, 3, 0},
	    {"ipv4hint of 5 bytes",
	     {0, 1, 0, 0, 4, 0, 5, 1, 2, 3, 4, 5},
	     12,
	     -EBADMSG},
	    {"ipv4hint empty", {0, 1, 0, 0, 4, 0, 0}, 7, -EBADMSG},
	    {"ipv6hint of 4 bytes",
	     {0, 1, 0, 0, 6, 0, 4, 1, 2, 3, 4},
	     11,
	     -EBADMSG},
	    {"param past the end",
	     {0, 1, 0, 0, 4, 0, 8, 1, 2, 3, 4},
	     11,
	     -EBADMSG},
	    {"keys out of order",
	     {0, 1, 0, 0, 4, 0, 4, 1, 2, 3, 4, 0, 1, 0, 0},
	     15,
	     -EBADMSG},
	    {"two ipv4hints",
	     {0, 1, 0, 0, 4, 0, 4, 1, 2, 3, 4, 0, 4, 0, 4, 1, 2, 3, 4},
	     19,
	     -EBADMSG},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int count = 0;
		int got = dnsmsg_svcb_hints(cases[i].rdata, cases[i].len,
					    count_hint, &count);

		if (got != cases[i].want)
			fail_msg("%s: got %d", cases[i].why, got);
	}
}

/* HTTPS 1 . alpn=h2 ech=<3 bytes> ipv4hint=198.18.1.10 */
static const uint8_t https_ech[] = {
    0, 1, 0,			       /* priority, target "." */
    0, 1, 0, 3,	 2,    'h',  '2',      /* alpn */
    0, 4, 0, 4,	 198,  18,   1,	   10, /* ipv4hint */
    0, 5, 0, 3,	 0xaa, 0xbb, 0xcc,     /* ech */
    0, 6, 0, 16, 0x20, 1,    0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t https_no_ech[] = {
    0, 1, 0,  0,    1, 0,    3,	   2, 'h', '2', 0, 4, 0, 4, 198, 18, 1, 10, 0,
    6, 0, 16, 0x20, 1, 0x0d, 0xb8, 0, 0,   0,	0, 0, 0, 0, 0,	 0,  0, 0,  1};

static void test_svcb_without_ech(void **state)
{
	/* ech listed in mandatory: the record means nothing without it */
	static const uint8_t mandatory_ech[] = {0, 1, 0, 0, 0, 0, 2,
						0, 5, 0, 5, 0, 1, 0xaa};
	static const uint8_t mandatory_alpn[] = {0,   1,   0, 0, 0, 0, 2,
						 0,   1,   0, 1, 0, 3, 2,
						 'h', '2', 0, 5, 0, 1, 0xaa};
	uint8_t out[64];
	size_t n = 0;

	(void)state;
	assert_int_equal(dnsmsg_svcb_without(https_ech, sizeof(https_ech),
					     SVCB_KEY_ECH, out, &n),
			 0);
	assert_int_equal(n, sizeof(https_no_ech));
	assert_memory_equal(out, https_no_ech, n);
	/* Nothing to take out: the same bytes. */
	assert_int_equal(dnsmsg_svcb_without(https_no_ech, sizeof(https_no_ech),
					     SVCB_KEY_ECH, out, &n),
			 0);
	assert_int_equal(n, sizeof(https_no_ech));
	assert_memory_equal(out, https_no_ech, n);
	assert_int_equal(dnsmsg_svcb_without(mandatory_ech,
					     sizeof(mandatory_ech),
					     SVCB_KEY_ECH, out, &n),
			 -EPERM);
	assert_int_equal(dnsmsg_svcb_without(mandatory_alpn,
					     sizeof(mandatory_alpn),
					     SVCB_KEY_ECH, out, &n),
			 0);
	assert_int_equal(n, sizeof(mandatory_alpn) - 5);
	/* AliasMode (priority 0) with only ech: the target alone is left. */
	{
		static const uint8_t alias[] = {0, 0, 1, 'a', 0, 0, 5, 0, 0};

		assert_int_equal(dnsmsg_svcb_without(alias, sizeof(alias),
						     SVCB_KEY_ECH, out, &n),
				 0);
		assert_int_equal(n, 5);
	}
}

static void test_svcb_without_malformed(void **state)
{
	static const struct {
		const char *why;
		uint8_t rdata[24];
		size_t len;
	} cases[] = {
	    {"empty", {0}, 0},
	    {"no target", {0, 1}, 2},
	    {"compressed target", {0, 1, 0xc0, 0}, 4},
	    {"ech past the end", {0, 1, 0, 0, 5, 0, 9, 1, 2}, 9},
	    {"half a key", {0, 1, 0, 0}, 4},
	    {"keys out of order", {0, 1, 0, 0, 5, 0, 0, 0, 1, 0, 0}, 11},
	    {"mandatory of odd length", {0, 1, 0, 0, 0, 0, 1, 5}, 8},
	};
	uint8_t out[24];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = dnsmsg_svcb_without(cases[i].rdata, cases[i].len,
					      SVCB_KEY_ECH, out, &n);

		if (got != -EBADMSG)
			fail_msg("%s: got %d", cases[i].why, got);
	}
}

/* With DNS_SNOOP_STRIP_ECH, a record whose mandatory lists ech (which
 * the client's copy leaves out) brings no hint into the sets. */
static void test_snoop_skips_mandatory_ech_when_stripping(void **state)
{
	static const uint8_t must[] = {0, 1, 0,	  0,  0, 0,  2, 0, 5, 0, 4,
				       0, 4, 198, 18, 1, 12, 0, 5, 0, 1, 0xaa};
	struct dns_addr a[4];
	uint8_t name[DNS_MAX_NAME];
	size_t len, n = 99;
	struct msg m;

	(void)state;
	msg_begin(&m, 0x8180, 2, 0, 0, "www.example.com", DNS_TYPE_HTTPS);
	msg_rr(&m, "www.example.com", DNS_TYPE_HTTPS, 300, must, sizeof(must));
	msg_rr(&m, "www.example.com", DNS_TYPE_HTTPS, 300, https_ech,
	       sizeof(https_ech));
	assert_int_equal(snoop(&m, "www.example.com", a, 4, 0), 3);
	check_addr(&a[0], "198.18.1.12");
	assert_int_equal(dns_name_from_text("www.example.com", name, &len), 0);
	assert_int_equal(dnsmsg_snoop(m.buf, m.w.pos, name, len,
				      DNS_SNOOP_STRIP_ECH, a, 4, &n),
			 0);
	assert_int_equal(n, 2);
	check_addr(&a[0], "198.18.1.10");
	check_addr(&a[1], "2001:db8::1");
}

/* keep() hands the rewrite rdata of its own: RDLENGTH follows it. */
static bool swap_https(struct dns_rr *rr, void *arg)
{
	size_t *n = arg;
	static uint8_t buf[64];

	if (rr->type == DNS_TYPE_HTTPS &&
	    dnsmsg_svcb_without(rr->rdata, rr->rdlen, SVCB_KEY_ECH, buf, n) ==
		0) {
		rr->rdata = buf;
		rr->rdlen = (uint16_t)*n;
	}
	return true;
}

static void test_rewrite_replaced_rdata(void **state)
{
	struct msg m;
	struct dns_query q;
	struct dns_reader r;
	struct dns_header h;
	struct dns_rr rr;
	uint8_t out[512], owner[DNS_MAX_NAME], name[DNS_MAX_NAME];
	size_t n = 0, nlen;
	ssize_t len;

	(void)state;
	query(&q, "www.example.com", DNS_TYPE_HTTPS, true);
	msg_begin(&m, 0x8180, 2, 0, 0, "www.example.com", DNS_TYPE_HTTPS);
	msg_rr(&m, "www.example.com", DNS_TYPE_HTTPS, 300, https_ech,
	       sizeof(https_ech));
	msg_a(&m, "www.example.com", "198.18.1.10");
	len = dnsmsg_rewrite_answer(m.buf, m.w.pos, &q, 512, swap_https, &n,
				    out, sizeof(out));
	assert_true(len > 0);
	dns_reader_init(&r, out, (size_t)len);
	assert_int_equal(dns_read_header(&r, &h), 0);
	assert_int_equal(h.an, 2);
	assert_int_equal(dns_read_name(&r, name, &nlen), 0);
	assert_int_equal(dns_skip(&r, 4), 0);
	assert_int_equal(dns_read_rr(&r, 1, &rr, owner), 0);
	assert_int_equal(rr.type, DNS_TYPE_HTTPS);
	assert_int_equal(rr.rdlen, sizeof(https_no_ech));
	assert_memory_equal(rr.rdata, https_no_ech, sizeof(https_no_ech));
	/* The record after it still parses: the length was right. */
	assert_int_equal(dns_read_rr(&r, 1, &rr, owner), 0);
	assert_int_equal(rr.type, DNS_TYPE_A);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rewrite_restores_id_and_case),
	    cmocka_unit_test(test_rewrite_edns_opt),
	    cmocka_unit_test(test_rewrite_truncates_over_max),
	    cmocka_unit_test(test_rewrite_keep_fixes_counts),
	    cmocka_unit_test(test_rewrite_compresses_names),
	    cmocka_unit_test(test_rewrite_rejects),
	    cmocka_unit_test(test_snoop_cname_chain_in_order),
	    cmocka_unit_test(test_snoop_cname_chain_out_of_order),
	    cmocka_unit_test(test_snoop_cname_loop_stops),
	    cmocka_unit_test(test_snoop_ignores_other_owners_and_sections),
	    cmocka_unit_test(test_snoop_https_hints),
	    cmocka_unit_test(test_snoop_rejects_malformed),
	    cmocka_unit_test(test_svcb_hints_malformed),
	    cmocka_unit_test(test_svcb_without_ech),
	    cmocka_unit_test(test_svcb_without_malformed),
	    cmocka_unit_test(test_rewrite_replaced_rdata),
	    cmocka_unit_test(test_snoop_skips_mandatory_ech_when_stripping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
