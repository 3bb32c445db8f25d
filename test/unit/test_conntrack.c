// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the conntrack dump reader: an entry whose original
 * destination is a replaced upstream matches (IPv4, IPv6 with its zone)
 * and hands back its original tuple; another destination, the reply
 * tuple's address, a truncated message and another message type do not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "fence/conntrack.h"

struct msg {
	uint8_t b[512];
	size_t n;
};

static size_t put_attr(struct msg *m, uint16_t type, const void *v, size_t len)
{
	uint16_t l = (uint16_t)(4 + len);
	size_t at = m->n;

	memcpy(m->b + m->n, &l, 2);
	memcpy(m->b + m->n + 2, &type, 2);
	if (len)
		memcpy(m->b + m->n + 4, v, len);
	m->n += (l + 3u) & ~3u;
	return at;
}

static void nest_end(struct msg *m, size_t at)
{
	uint16_t l = (uint16_t)(m->n - at);

	memcpy(m->b + at, &l, 2);
}

/* One CT_NEW message: ORIG src->dst, REPLY dst->src, optional zone. */
static void entry(struct msg *m, uint8_t family, const uint8_t *src,
		  const uint8_t *dst, size_t alen, int zone)
{
	uint16_t type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW;
	uint16_t ip_src = alen == 4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC;
	uint16_t ip_dst = alen == 4 ? CTA_IP_V4_DST : CTA_IP_V6_DST;
	uint8_t nfg[4] = {family, 0, 0, 0};
	uint32_t len;

	memset(m, 0, sizeof(*m));
	m->n = 16;
	memcpy(m->b + 4, &type, 2);
	memcpy(m->b + m->n, nfg, 4);
	m->n += 4;
	for (int dir = 0; dir < 2; dir++) {
		size_t t = put_attr(
		    m, (dir ? CTA_TUPLE_REPLY : CTA_TUPLE_ORIG) | NLA_F_NESTED,
		    NULL, 0);
		size_t ip = put_attr(m, CTA_TUPLE_IP | NLA_F_NESTED, NULL, 0);

		put_attr(m, ip_src, dir ? dst : src, alen);
		put_attr(m, ip_dst, dir ? src : dst, alen);
		nest_end(m, ip);
		nest_end(m, t);
	}
	if (zone >= 0) {
		uint8_t z[2] = {(uint8_t)(zone >> 8), (uint8_t)zone};

		put_attr(m, CTA_ZONE, z, 2);
	}
	len = (uint32_t)m->n;
	memcpy(m->b, &len, 4);
}

static const uint8_t ns4[4] = {198, 18, 0, 2}, up4[4] = {198, 18, 0, 1},
		     other4[4] = {198, 18, 1, 10};
static const uint8_t ns6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2},
		     up6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};

static void test_ipv4_entry_to_upstream_matches(void **state)
{
	struct netaddr want = {.family = AF_INET};
	const void *tuple;
	size_t len;
	uint16_t zone;
	bool has_zone;
	struct msg m;

	(void)state;
	memcpy(want.bytes, up4, 4);
	entry(&m, AF_INET, ns4, up4, 4, -1);
	assert_true(conntrack_entry_matches(m.b, m.n, &want, 1, &tuple, &len,
					    &zone, &has_zone));
	assert_ptr_equal(tuple, m.b + 20);
	assert_int_equal(len, 4 + 4 + 8 + 8); /* tuple, ip, src, dst */
	assert_false(has_zone);
}

static void test_ipv6_entry_keeps_its_zone(void **state)
{
	struct netaddr want = {.family = AF_INET6};
	const void *tuple;
	size_t len;
	uint16_t zone;
	bool has_zone;
	struct msg m;

	(void)state;
	memcpy(want.bytes, up6, 16);
	entry(&m, AF_INET6, ns6, up6, 16, 7);
	assert_true(conntrack_entry_matches(m.b, m.n, &want, 1, &tuple, &len,
					    &zone, &has_zone));
	assert_true(has_zone);
	assert_int_equal(zone, 7);
}

static void test_other_entries_do_not_match(void **state)
{
	struct netaddr want = {.family = AF_INET};
	const void *tuple;
	size_t len;
	uint16_t zone, type;
	bool has_zone;
	struct msg m;

	(void)state;
	memcpy(want.bytes, up4, 4);
	entry(&m, AF_INET, ns4, other4, 4, -1);
	assert_false(conntrack_entry_matches(m.b, m.n, &want, 1, &tuple, &len,
					     &zone, &has_zone));
	/* the upstream as the ORIGINAL source (it opened the flow) */
	entry(&m, AF_INET, up4, ns4, 4, -1);
	assert_false(conntrack_entry_matches(m.b, m.n, &want, 1, &tuple, &len,
					     &zone, &has_zone));
	entry(&m, AF_INET, ns4, up4, 4, -1);
	assert_false(conntrack_entry_matches(m.b, m.n - 1, &want, 1, &tuple,
					     &len, &zone, &has_zone));
	assert_false(conntrack_entry_matches(m.b, 30, &want, 1, &tuple, &len,
					     &zone, &has_zone));
	type = NLMSG_ERROR;
	memcpy(m.b + 4, &type, 2);
	assert_false(conntrack_entry_matches(m.b, m.n, &want, 1, &tuple, &len,
					     &zone, &has_zone));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ipv4_entry_to_upstream_matches),
	    cmocka_unit_test(test_ipv6_entry_keeps_its_zone),
	    cmocka_unit_test(test_other_entries_do_not_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
