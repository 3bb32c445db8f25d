// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_answer: an upstream answer as the server handles it. The first
 * byte picks one of a few fixed client queries and the client's size
 * limit; the rest is the answer. Snoop it, rewrite it with a keep() that
 * drops internal addresses (invariant 3), then check the rewrite: it
 * must parse again through the reader, carry the client's ID and question,
 * hold exactly one OPT iff the client sent EDNS, fit the limit, and hand
 * out no internal address. The keep() also takes "ech" out of HTTPS/SVCB
 * records (as the name check's reply does): no record of the rewrite may
 * carry it. Any violation abort()s.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"
#include "base/netaddr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hint_internal(const struct netaddr *a, void *arg);
static bool keep_external(struct dns_rr *rr, void *arg);
static bool strip_ech(struct dns_rr *rr);
static void check_no_ech(const struct dns_rr *rr);
static void setup_query(unsigned int sel, struct dns_query *q);
static void check_rewrite(const uint8_t *msg, size_t len,
			  const struct dns_query *q, size_t max);

/* Query with ID 0xbeef, RD, question name in mixed case. */
static const uint8_t q_www_a_edns[] = {
    0xbe, 0xef, 0x01, 0x00, 0,	  1,   0,   0,	  0,   0,   0,
    1,	  3,	'W',  'w',  'W',  7,   'e', 'X',  'a', 'm', 'p',
    'l',  'e',	3,    'c',  'o',  'm', 0,   0,	  1,   0,   1,
    0,	  0,	41,   0x04, 0xd0, 0,   0,   0x80, 0,   0,   0};
static const uint8_t q_aaaa[] = {
    0xbe, 0xef, 0x01, 0x10, 0,	 1, 0,	 0,   0,   0, 0, 0,  7, 'e', 'x',
    'a',  'm',	'p',  'l',  'e', 3, 'c', 'o', 'm', 0, 0, 28, 0, 1};
static const uint8_t q_https_edns[] = {
    0xbe, 0xef, 0x01, 0x00, 0,	 1,   0,   0,	0,   0, 0,   1,	  3,   's', 'v',
    'c',  7,	'e',  'x',  'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,   0,
    65,	  0,	1,    0,    0,	 41,  2,   0,	0,   0, 0,   0,	  0,   0};
static const uint8_t q_mx[] = {
    0xbe, 0xef, 0x01, 0x00, 0,	 1, 0,	 0,   0,   0, 0, 0,  7, 'e', 'x',
    'a',  'm',	'p',  'l',  'e', 3, 'c', 'o', 'm', 0, 0, 15, 0, 1};

static int hint_internal(const struct netaddr *a, void *arg)
{
	(void)arg;
	return netaddr_is_internal(a) ? 1 : 0;
}

/* Drop A/AAAA records with an internal address and HTTPS/SVCB records with
 * an internal (or unreadable) hint, as the server's keep() would. */
static bool keep_external(struct dns_rr *rr, void *arg)
{
	struct netaddr a = {0};

	(void)arg;
	if (rr->rclass == 1 && rr->type == DNS_TYPE_A && rr->rdlen == 4) {
		a.family = AF_INET;
		memcpy(a.bytes, rr->rdata, 4);
		return !netaddr_is_internal(&a);
	}
	if (rr->rclass == 1 && rr->type == DNS_TYPE_AAAA && rr->rdlen == 16) {
		a.family = AF_INET6;
		memcpy(a.bytes, rr->rdata, 16);
		return !netaddr_is_internal(&a);
	}
	if (rr->type == DNS_TYPE_HTTPS || rr->type == DNS_TYPE_SVCB)
		return dnsmsg_svcb_hints(rr->rdata, rr->rdlen, hint_internal,
					 NULL) == 0 &&
		       strip_ech(rr);
	return true;
}

/* rr without "ech", in a buffer of our own; false when it must go. */
static bool strip_ech(struct dns_rr *rr)
{
	static uint8_t buf[UINT16_MAX];
	size_t n;

	if (dnsmsg_svcb_without(rr->rdata, rr->rdlen, SVCB_KEY_ECH, buf, &n) !=
	    0)
		return false;
	if (n > rr->rdlen)
		abort();
	rr->rdata = buf;
	rr->rdlen = (uint16_t)n;
	return true;
}

/* An HTTPS/SVCB record of the rewrite: readable, and no "ech" left. */
static void check_no_ech(const struct dns_rr *rr)
{
	static uint8_t buf[UINT16_MAX];
	size_t n;

	if (dnsmsg_svcb_without(rr->rdata, rr->rdlen, SVCB_KEY_ECH, buf, &n) !=
		0 ||
	    n != rr->rdlen)
		abort();
}

static void setup_query(unsigned int sel, struct dns_query *q)
{
	static const struct {
		const uint8_t *buf;
		size_t len;
	} qs[] = {
	    {q_www_a_edns, sizeof(q_www_a_edns)},
	    {q_aaaa, sizeof(q_aaaa)},
	    {q_https_edns, sizeof(q_https_edns)},
	    {q_mx, sizeof(q_mx)},
	};

	if (dnsmsg_parse_query(qs[sel % 4].buf, qs[sel % 4].len, q) !=
	    DNS_PARSE_OK)
		abort();
}

static void check_rewrite(const uint8_t *msg, size_t len,
			  const struct dns_query *q, size_t max)
{
	struct dns_reader r;
	uint16_t id, flags, qd, c[3], qtype, qclass;
	uint8_t name[DNS_MAX_NAME];
	size_t nlen, opts = 0;
	struct dns_addr addrs[64];
	size_t naddr;
	int ret;

	if (len > max)
		abort();
	dns_reader_init(&r, msg, len);
	if (dns_read_u16(&r, &id) < 0 || dns_read_u16(&r, &flags) < 0 ||
	    dns_read_u16(&r, &qd) < 0 || dns_read_u16(&r, &c[0]) < 0 ||
	    dns_read_u16(&r, &c[1]) < 0 || dns_read_u16(&r, &c[2]) < 0)
		abort();
	if (id != q->id || !(flags & DNS_FLAG_QR) || qd != 1)
		abort();
	if (dns_read_name(&r, name, &nlen) < 0 || nlen != q->name_len ||
	    memcmp(name, q->name, nlen) != 0 || dns_read_u16(&r, &qtype) < 0 ||
	    dns_read_u16(&r, &qclass) < 0 || qtype != q->qtype ||
	    qclass != q->qclass)
		abort();
	for (int s = 0; s < 3; s++) {
		for (uint16_t i = 0; i < c[s]; i++) {
			struct dns_rr rr;
			uint8_t owner[DNS_MAX_NAME];

			if (dns_read_rr(&r, s + 1, &rr, owner) < 0)
				abort();
			if (rr.type == DNS_TYPE_OPT)
				opts++;
			if (rr.type == DNS_TYPE_HTTPS ||
			    rr.type == DNS_TYPE_SVCB)
				check_no_ech(&rr);
			if (!keep_external(&rr, NULL) &&
			    rr.type != DNS_TYPE_OPT)
				abort();
		}
	}
	if (r.pos != r.len || opts != (q->edns ? 1 : 0))
		abort();
	/* Whatever the client can be handed must be external. */
	ret = dnsmsg_snoop(msg, len, q->lname, q->name_len, DNS_SNOOP_STRIP_ECH,
			   addrs, 64, &naddr);
	if (ret == 0 || ret == -E2BIG) {
		for (size_t i = 0; i < naddr && i < 64; i++)
			if (netaddr_is_internal(&addrs[i].addr))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	struct dns_addr addrs[16];
	size_t n, max;
	static uint8_t out[DNS_MAX_UDP];
	ssize_t len;

	if (size < 1)
		return 0;
	setup_query(data[0] & 3, &q);
	max = (data[0] & 4) ? DNS_MAX_UDP : (q.edns ? q.edns_udp : 512);
	data++;
	size--;

	if (dnsmsg_snoop(data, size, q.lname, q.name_len, DNS_SNOOP_STRIP_ECH,
			 addrs, 16, &n) == -EBADMSG &&
	    n != 0)
		abort();
	len = dnsmsg_rewrite_answer(data, size, &q, max, keep_external, NULL,
				    out, sizeof(out));
	if (len >= 0)
		check_rewrite(out, (size_t)len, &q, max);
	else if (len != -EBADMSG)
		abort();
	return 0;
}
