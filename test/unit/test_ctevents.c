// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of ctevents_parse: conntrack NEW messages built as the
 * kernel sends them give their original destination, protocol and port;
 * other message types are skipped; a bad length stops the walk.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "observe/ctevents.h"

static void v4_and_v6_flows(void **state);
static void other_messages_skipped(void **state);
static void bad_length_is_an_error(void **state);

struct sink {
	struct ct_flow f[4];
	int n;
};

static void on_flow(void *arg, const struct ct_flow *f)
{
	struct sink *s = arg;

	if (s->n < 4)
		s->f[s->n] = *f;
	s->n++;
}

static size_t put_attr(uint8_t *b, uint16_t type, const void *v, size_t len)
{
	uint16_t l = (uint16_t)(4 + len);

	memcpy(b, &l, 2);
	memcpy(b + 2, &type, 2);
	memcpy(b + 4, v, len);
	memset(b + 4 + len, 0, (4 - l % 4) % 4);
	return (size_t)(l + 3) & ~(size_t)3;
}

/* A message of type (NFNL_SUBSYS_CTNETLINK << 8 | t) with one original
 * tuple to dst (family fam), proto, port. */
static size_t build(uint8_t *out, uint16_t t, int fam, const char *dst,
		    uint8_t proto, uint16_t port)
{
	uint8_t ip[64], pr[64], tup[160], addr[16];
	size_t ni = 0, np = 0, nt = 0, n;
	uint16_t be = htons(port), type = (uint16_t)(1 << 8 | t);
	uint32_t len;

	assert_int_equal(inet_pton(fam, dst, addr), 1);
	ni += put_attr(ip + ni, fam == AF_INET ? 2 : 4, addr,
		       fam == AF_INET ? 4 : 16);
	np += put_attr(pr + np, 1, &proto, 1);
	np += put_attr(pr + np, 3, &be, 2);
	nt += put_attr(tup + nt, 0x8001, ip, ni);
	nt += put_attr(tup + nt, 0x8002, pr, np);
	n = 16 + 4;
	n += put_attr(out + n, 0x8001, tup, nt);
	len = (uint32_t)n;
	memset(out, 0, 20);
	memcpy(out, &len, 4);
	memcpy(out + 4, &type, 2);
	out[16] = (uint8_t)fam;
	return n;
}

static void v4_and_v6_flows(void **state)
{
	uint8_t buf[512];
	size_t n = build(buf, 0, AF_INET, "198.18.1.10", IPPROTO_TCP, 443);
	struct sink s = {0};
	char a[NETADDR_STRLEN];

	(void)state;
	n += build(buf + n, 0, AF_INET6, "2001:db8:1::10", IPPROTO_UDP, 53);
	assert_int_equal(ctevents_parse(buf, n, on_flow, &s), 2);
	assert_int_equal(s.n, 2);
	netaddr_format(&s.f[0].dst, a, sizeof(a));
	assert_string_equal(a, "198.18.1.10");
	assert_int_equal(s.f[0].proto, IPPROTO_TCP);
	assert_int_equal(s.f[0].dport, 443);
	netaddr_format(&s.f[1].dst, a, sizeof(a));
	assert_string_equal(a, "2001:db8:1::10");
	assert_int_equal(s.f[1].proto, IPPROTO_UDP);
	assert_int_equal(s.f[1].dport, 53);
}

static void other_messages_skipped(void **state)
{
	uint8_t buf[512];
	size_t n = build(buf, 2, AF_INET, "198.18.1.10", IPPROTO_TCP, 443);
	struct sink s = {0};

	(void)state;
	assert_int_equal(ctevents_parse(buf, n, on_flow, &s), 0);
	assert_int_equal(s.n, 0);
}

static void bad_length_is_an_error(void **state)
{
	uint8_t buf[512];
	size_t n = build(buf, 0, AF_INET, "198.18.1.10", IPPROTO_TCP, 443);
	struct sink s = {0};
	uint16_t big = 400;

	(void)state;
	memcpy(buf + 20, &big, 2); /* the tuple claims more than there is */
	assert_int_equal(ctevents_parse(buf, n, on_flow, &s), -EBADMSG);
	assert_int_equal(s.n, 0);
	assert_int_equal(ctevents_parse(buf, 10, on_flow, &s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(v4_and_v6_flows),
	    cmocka_unit_test(other_messages_skipped),
	    cmocka_unit_test(bad_length_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
