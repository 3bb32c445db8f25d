// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of netaddr: parsing tables, formatting, and every range of
 * invariant 3 probed at its first and last address and at the neighbours
 * just outside. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/netaddr.h"

static struct netaddr addr(const char *s);
static struct netcidr cidr(const char *s);

static struct netaddr addr(const char *s)
{
	struct netaddr a;

	if (netaddr_parse(s, &a) != 0)
		fail_msg("netaddr_parse(\"%s\") failed", s);
	return a;
}

static struct netcidr cidr(const char *s)
{
	struct netcidr c;
	const char *why = NULL;

	if (netaddr_parse_cidr(s, &c, &why) != 0)
		fail_msg("netaddr_parse_cidr(\"%s\"): %s", s, why);
	return c;
}

static void test_parse_accepts_plain_addresses(void **state)
{
	static const char *const ok[] = {
	    "0.0.0.0",
	    "1.2.3.4",
	    "255.255.255.255",
	    "::",
	    "::1",
	    "2001:db8::1",
	    "::ffff:1.2.3.4",
	    "fe80::1",
	    "2001:0db8:0000:0000:0000:0000:0000:0001",
	};
	struct netaddr a;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(netaddr_parse(ok[i], &a), 0);
	assert_int_equal(netaddr_parse("1.2.3.4", &a), 0);
	assert_int_equal(a.family, AF_INET);
	assert_memory_equal(a.bytes, "\x01\x02\x03\x04", 4);
	assert_int_equal(netaddr_parse("::1", &a), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(a.bytes[15], 1);
}

static void test_parse_rejects_junk_shorthand_and_scope(void **state)
{
	static const char *const bad[] = {
	    "",
	    "1.2.3",
	    "1.2.3.4.5",
	    "256.1.1.1",
	    "01.2.3.4",
	    "1.2.3.4 ",
	    " 1.2.3.4",
	    "0x1.2.3.4",
	    "10",
	    "fe80::1%eth0",
	    "fe80::1%1",
	    "[::1]",
	    "1.2.3.4/32",
	    "1.2.3.4:53",
	    ":::",
	    "2001:db8::g",
	    "example.com",
	    "1::2::3",
	    "-1.2.3.4",
	    "1.2.3.4\n",
	};
	struct netaddr a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (netaddr_parse(bad[i], &a) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
}

static void test_cidr_parses_prefix_and_host_route(void **state)
{
	struct netcidr c;
	const char *why = NULL;
	char buf[64];

	(void)state;
	c = cidr("198.18.0.0/15");
	assert_int_equal(c.prefix, 15);
	netaddr_format_cidr(&c, buf, sizeof(buf));
	assert_string_equal(buf, "198.18.0.0/15");
	c = cidr("1.2.3.4");
	assert_int_equal(c.prefix, 32);
	c = cidr("2001:db8::1");
	assert_int_equal(c.prefix, 128);
	c = cidr("2001:DB8::/32");
	netaddr_format_cidr(&c, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::/32");
	c = cidr("0.0.0.0/0");
	assert_int_equal(c.prefix, 0);
	c = cidr("::/0");
	assert_int_equal(c.prefix, 0);

	assert_int_equal(netaddr_parse_cidr("10.0.0.1/8", &c, &why), -EINVAL);
	assert_non_null(strstr(why, "host bits set"));
	assert_int_equal(netaddr_parse_cidr("2001:db8::1/32", &c, &why),
			 -EINVAL);
	assert_non_null(strstr(why, "host bits set"));
	assert_int_equal(netaddr_parse_cidr("198.19.0.0/15", &c, &why),
			 -EINVAL);
}

static void test_cidr_rejects_bad_prefixes(void **state)
{
	static const char *const bad[] = {
	    "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1",
	    "10.0.0.0/08", "::/129",	"10.0.0.0/8/8",
	    "10.0.0.0/ 8", "/8",	"10.0.0.0/+8",
	    "junk/8",	   "",		"10.0.0.0/1000",
	};
	struct netcidr c;
	const char *why = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (netaddr_parse_cidr(bad[i], &c, &why) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_non_null(why);
	}
}

static void test_endpoint_parse_table(void **state)
{
	static const struct {
		const char *in;
		bool port_required;
		int rc;
		const char *formatted;
	} cases[] = {
	    {"1.2.3.4:53", true, 0, "1.2.3.4:53"},
	    {"[2001:db8::1]:53", true, 0, "[2001:db8::1]:53"},
	    {"[::1]:5353", true, 0, "[::1]:5353"},
	    {"1.2.3.4:65535", true, 0, "1.2.3.4:65535"},
	    {"1.2.3.4", false, 0, "1.2.3.4:53"},
	    {"2001:db8::1", false, 0, "[2001:db8::1]:53"},
	    {"[2001:db8::1]", false, 0, "[2001:db8::1]:53"},
	    {"1.2.3.4:5300", false, 0, "1.2.3.4:5300"},
	    {"1.2.3.4", true, -EINVAL, NULL},
	    {"2001:db8::1", true, -EINVAL, NULL},
	    {"[2001:db8::1]", true, -EINVAL, NULL},
	    {"1.2.3.4:0", false, -EINVAL, NULL},
	    {"1.2.3.4:65536", false, -EINVAL, NULL},
	    {"1.2.3.4:99999", false, -EINVAL, NULL},
	    {"1.2.3.4:", false, -EINVAL, NULL},
	    {"1.2.3.4:+53", false, -EINVAL, NULL},
	    {"1.2.3.4:-1", false, -EINVAL, NULL},
	    {"1.2.3.4:53x", false, -EINVAL, NULL},
	    {"1.2.3.4: 53", false, -EINVAL, NULL},
	    {"[1.2.3.4]:53", false, -EINVAL, NULL},
	    {"[2001:db8::1:53", false, -EINVAL, NULL},
	    {"[2001:db8::1]53", false, -EINVAL, NULL},
	    {"[2001:db8::1]:", false, -EINVAL, NULL},
	    {"[fe80::1%eth0]:53", false, -EINVAL, NULL},
	    {"fe80::1%eth0", false, -EINVAL, NULL},
	    {"example.com:53", false, -EINVAL, NULL},
	    {"", false, -EINVAL, NULL},
	    {":53", false, -EINVAL, NULL},
	    {"junk", false, -EINVAL, NULL},
	};
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why;
	char buf[NETADDR_ENDPOINT_STRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		int rc = netaddr_parse_endpoint(
		    cases[i].in, cases[i].port_required, 53, &ss, &len, &why);
		if (rc != cases[i].rc)
			fail_msg("\"%s\": rc %d, want %d", cases[i].in, rc,
				 cases[i].rc);
		if (rc != 0) {
			assert_non_null(why);
			continue;
		}
		assert_int_equal(len, ss.ss_family == AF_INET
					  ? sizeof(struct sockaddr_in)
					  : sizeof(struct sockaddr_in6));
		netaddr_format_endpoint((struct sockaddr *)&ss, buf,
					sizeof(buf));
		assert_string_equal(buf, cases[i].formatted);
	}
}

static void test_endpoint_reasons_name_the_problem(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = NULL;

	(void)state;
	netaddr_parse_endpoint("[fe80::1%eth0]:53", false, 53, &ss, &len, &why);
	assert_non_null(strstr(why, "scope"));
	netaddr_parse_endpoint("1.2.3.4:0", false, 53, &ss, &len, &why);
	assert_non_null(strstr(why, "1..65535"));
	netaddr_parse_endpoint("1.2.3.4", true, 53, &ss, &len, &why);
	assert_non_null(strstr(why, "port is required"));
}

static void test_format_and_equal(void **state)
{
	struct netaddr a = addr("2001:0DB8:0:0::1"), b = addr("2001:db8::1");
	struct netaddr c = addr("1.2.3.4"), d = addr("::ffff:1.2.3.4");
	char buf[NETADDR_STRLEN];

	(void)state;
	assert_true(netaddr_equal(&a, &b));
	assert_false(netaddr_equal(&c, &d)); /* families differ */
	netaddr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::1");
	netaddr_format(&c, buf, sizeof(buf));
	assert_string_equal(buf, "1.2.3.4");
}

static void test_from_sockaddr(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why;
	struct netaddr a, want = addr("2001:db8::5");

	(void)state;
	assert_int_equal(netaddr_parse_endpoint("[2001:db8::5]:53", true, 0,
						&ss, &len, &why),
			 0);
	assert_true(netaddr_from_sockaddr((struct sockaddr *)&ss, &a));
	assert_true(netaddr_equal(&a, &want));
	ss.ss_family = AF_UNIX;
	assert_false(netaddr_from_sockaddr((struct sockaddr *)&ss, &a));
}

static void test_cidr_contains_edges(void **state)
{
	struct netcidr c4 = cidr("198.18.0.0/15"), c6 = cidr("2001:db8::/32");
	struct netcidr all = cidr("0.0.0.0/0");
	struct netaddr a;

	(void)state;
	a = addr("198.18.0.0");
	assert_true(netaddr_cidr_contains(&c4, &a));
	a = addr("198.19.255.255");
	assert_true(netaddr_cidr_contains(&c4, &a));
	a = addr("198.17.255.255");
	assert_false(netaddr_cidr_contains(&c4, &a));
	a = addr("198.20.0.0");
	assert_false(netaddr_cidr_contains(&c4, &a));
	a = addr("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_true(netaddr_cidr_contains(&c6, &a));
	a = addr("2001:db9::");
	assert_false(netaddr_cidr_contains(&c6, &a));
	a = addr("::ffff:198.18.0.1"); /* families differ */
	assert_false(netaddr_cidr_contains(&c4, &a));
	a = addr("255.255.255.255");
	assert_true(netaddr_cidr_contains(&all, &a));
	a = addr("::");
	assert_false(netaddr_cidr_contains(&all, &a));
}

/* Each internal range: first, last, and the neighbours outside (NULL where
 * the range touches the end of the address space). */
static const struct {
	const char *first, *last, *before, *after;
} internal_ranges[] = {
    {"0.0.0.0", "0.255.255.255", NULL, "1.0.0.0"},
    {"10.0.0.0", "10.255.255.255", "9.255.255.255", "11.0.0.0"},
    {"100.64.0.0", "100.127.255.255", "100.63.255.255", "100.128.0.0"},
    {"127.0.0.0", "127.255.255.255", "126.255.255.255", "128.0.0.0"},
    {"169.254.0.0", "169.254.255.255", "169.253.255.255", "169.255.0.0"},
    {"172.16.0.0", "172.31.255.255", "172.15.255.255", "172.32.0.0"},
    {"192.168.0.0", "192.168.255.255", "192.167.255.255", "192.169.0.0"},
    {"224.0.0.0", "239.255.255.255", "223.255.255.255", NULL},
    {"240.0.0.0", "255.255.255.255", NULL, NULL},
    /* ::/96 by the IPv4 inside: :: and ::1 fall in 0.0.0.0/8 */
    {"::", "::0.255.255.255", NULL, "::1.0.0.0"},
    {"::1", "::1", NULL, NULL},
    {"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
     "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe00::"},
    {"fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
     "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fec0::"},
    {"ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
     "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
};

static void test_internal_ranges_at_their_edges(void **state)
{
	struct netaddr a;

	(void)state;
	for (size_t i = 0;
	     i < sizeof(internal_ranges) / sizeof(internal_ranges[0]); i++) {
		a = addr(internal_ranges[i].first);
		if (!netaddr_is_internal(&a))
			fail_msg("%s not internal", internal_ranges[i].first);
		a = addr(internal_ranges[i].last);
		if (!netaddr_is_internal(&a))
			fail_msg("%s not internal", internal_ranges[i].last);
		if (internal_ranges[i].before != NULL) {
			a = addr(internal_ranges[i].before);
			if (netaddr_is_internal(&a))
				fail_msg("%s internal",
					 internal_ranges[i].before);
		}
		if (internal_ranges[i].after != NULL) {
			a = addr(internal_ranges[i].after);
			if (netaddr_is_internal(&a))
				fail_msg("%s internal",
					 internal_ranges[i].after);
		}
	}
}

static void test_mapped_ipv6_judged_by_ipv4_inside(void **state)
{
	static const char *const internal[] = {
	    "::ffff:127.0.0.1",	      "::ffff:10.1.2.3",
	    "::ffff:0.0.0.0",	      "::ffff:169.254.169.254",
	    "::ffff:255.255.255.255", "::ffff:7f00:1",
	};
	static const char *const ordinary[] = {
	    "::ffff:1.1.1.1", "::ffff:192.0.2.1", "::ffff:198.18.0.1",
	    "::fffe:7f00:1",  "::1:ffff:7f00:1",
	};
	struct netaddr a;

	(void)state;
	for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++) {
		a = addr(internal[i]);
		if (!netaddr_is_internal(&a))
			fail_msg("%s not internal", internal[i]);
	}
	for (size_t i = 0; i < sizeof(ordinary) / sizeof(ordinary[0]); i++) {
		a = addr(ordinary[i]);
		if (netaddr_is_internal(&a))
			fail_msg("%s internal", ordinary[i]);
	}
}

/* NAT64 (64:ff9b::/96, and 64:ff9b:1::/48 in each RFC 6052 layout), 6to4
 * and IPv4-compatible forms by the IPv4 inside; public ones stay ordinary. */
static void test_embedded_ipv4_judged_by_ipv4_inside(void **state)
{
	static const char *const internal[] = {
	    "64:ff9b::a9fe:a9fe", /* NAT64 of 169.254.169.254 */
	    "64:ff9b::7f00:1",	  /* 127.0.0.1 */
	    "64:ff9b::a01:203",	  /* 10.1.2.3 */
	    "2002:a9fe:a9fe::1",  /* 6to4 */
	    "2002:c0a8:101:1::1", /* 192.168.1.1 */
	    "::a9fe:a9fe",	  /* IPv4-compatible */
	    "::169.254.169.254",  /* the same */
	    "::10.0.0.1",
	    "64:ff9b:1::a9fe:a9fe",	  /* local-use NAT64, /96 layout */
	    "64:ff9b:1:a9fe:a9:fe00::",	  /* /48 layout */
	    "64:ff9b:1:ffa9:fe:a9fe::",	  /* /56 layout */
	    "64:ff9b:1:0:a9:fea9:fe00:0", /* /64 layout */
	    "64:ff9b:1:1:ff00:1:2:3",	  /* fits no layout (u octet) */
	};
	static const char *const ordinary[] = {
	    "64:ff9b::c612:10a", /* NAT64 of 198.18.1.10: DNS64 works */
	    "64:ff9b::101:101",	      "64:ff9b:1::c612:10a",
	    "64:ff9b:1:c612:1:a00::", /* /48 layout of 198.18.1.10 */
	    "2002:c612:10a::1",	      "::198.18.1.10",
	    "64:ff9a::a9fe:a9fe", /* outside the NAT64 prefix */
	    "2003:a9fe:a9fe::1",
	};
	struct netcidr allow[] = {cidr("169.254.0.0/16")};
	struct netaddr a, v4[NETADDR_EMBED_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++) {
		a = addr(internal[i]);
		if (!netaddr_is_internal(&a))
			fail_msg("%s not internal", internal[i]);
	}
	for (size_t i = 0; i < sizeof(ordinary) / sizeof(ordinary[0]); i++) {
		a = addr(ordinary[i]);
		if (netaddr_is_internal(&a))
			fail_msg("%s internal", ordinary[i]);
	}
	a = addr("64:ff9b::a9fe:a9fe");
	assert_int_equal(netaddr_embedded_v4(&a, v4, NETADDR_EMBED_MAX), 1);
	assert_memory_equal(v4[0].bytes, "\xa9\xfe\xa9\xfe", 4);
	/* allow_cidrs covering the IPv4 inside admits the IPv6 form. */
	assert_true(netaddr_admissible(&a, allow, 1));
	a = addr("2002:a00:1::1");
	assert_false(netaddr_admissible(&a, allow, 1));
}

static void test_documentation_ranges_are_ordinary(void **state)
{
	static const char *const ordinary[] = {
	    "192.0.2.0",
	    "192.0.2.255",
	    "198.18.0.0",
	    "198.19.255.255",
	    "2001:db8::",
	    "2001:db8::1",
	    "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
	    "1.1.1.1",
	    "8.8.8.8",
	    "2606:4700::1111",
	    "203.0.113.7",
	};
	struct netaddr a;

	(void)state;
	for (size_t i = 0; i < sizeof(ordinary) / sizeof(ordinary[0]); i++) {
		a = addr(ordinary[i]);
		if (netaddr_is_internal(&a))
			fail_msg("%s internal", ordinary[i]);
	}
}

static void test_admissible_with_allow_cidrs(void **state)
{
	struct netcidr allow[] = {cidr("10.1.0.0/16"), cidr("fd00::/64"),
				  cidr("127.0.0.53")};
	struct netaddr a;

	(void)state;
	a = addr("1.1.1.1");
	assert_true(netaddr_admissible(&a, NULL, 0));
	a = addr("10.1.2.3");
	assert_false(netaddr_admissible(&a, NULL, 0));
	assert_true(netaddr_admissible(&a, allow, 3));
	a = addr("10.2.0.1");
	assert_false(netaddr_admissible(&a, allow, 3));
	a = addr("fd00::1");
	assert_true(netaddr_admissible(&a, allow, 3));
	a = addr("fd00:0:0:1::1");
	assert_false(netaddr_admissible(&a, allow, 3));
	a = addr("127.0.0.53");
	assert_true(netaddr_admissible(&a, allow, 3));
	a = addr("127.0.0.1");
	assert_false(netaddr_admissible(&a, allow, 3));
	/* A mapped address is admitted by the IPv4 CIDR covering it. */
	a = addr("::ffff:10.1.9.9");
	assert_true(netaddr_admissible(&a, allow, 3));
	a = addr("::ffff:127.0.0.1");
	assert_false(netaddr_admissible(&a, allow, 3));
}

static struct config_endpoint endpoint(const char *s)
{
	struct config_endpoint e;
	const char *why = "";

	memset(&e, 0, sizeof(e));
	assert_int_equal(
	    netaddr_parse_endpoint(s, true, 0, &e.sa, &e.len, &why), 0);
	return e;
}

/* One equality for endpoints, by field: what the socket address does not
 * mean (sin_zero, sin6_flowinfo, bytes past len) never makes two
 * endpoints differ; address, port, family and scope do. */
static void test_endpoint_equal_by_field(void **state)
{
	struct config_endpoint a = endpoint("198.18.0.1:53"), b = a;
	struct config_endpoint c = endpoint("[2001:db8::1]:53"), d = c;

	(void)state;
	memset(((struct sockaddr_in *)&b.sa)->sin_zero, 0xa5, 8);
	b.len = sizeof(struct sockaddr_storage);
	assert_true(netaddr_endpoint_equal(&a, &b));
	((struct sockaddr_in6 *)&d.sa)->sin6_flowinfo = htonl(7);
	assert_true(netaddr_endpoint_equal(&c, &d));
	assert_true(netaddr_endpoint_equal(&c, &c));

	b = endpoint("198.18.0.1:54");
	assert_false(netaddr_endpoint_equal(&a, &b));
	b = endpoint("198.18.0.2:53");
	assert_false(netaddr_endpoint_equal(&a, &b));
	assert_false(netaddr_endpoint_equal(&a, &c));
	d = endpoint("[::ffff:198.18.0.1]:53");
	assert_false(netaddr_endpoint_equal(&a, &d));
	d = c;
	((struct sockaddr_in6 *)&d.sa)->sin6_scope_id = 2;
	assert_false(netaddr_endpoint_equal(&c, &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_accepts_plain_addresses),
	    cmocka_unit_test(test_parse_rejects_junk_shorthand_and_scope),
	    cmocka_unit_test(test_cidr_parses_prefix_and_host_route),
	    cmocka_unit_test(test_cidr_rejects_bad_prefixes),
	    cmocka_unit_test(test_endpoint_parse_table),
	    cmocka_unit_test(test_endpoint_reasons_name_the_problem),
	    cmocka_unit_test(test_format_and_equal),
	    cmocka_unit_test(test_from_sockaddr),
	    cmocka_unit_test(test_cidr_contains_edges),
	    cmocka_unit_test(test_internal_ranges_at_their_edges),
	    cmocka_unit_test(test_mapped_ipv6_judged_by_ipv4_inside),
	    cmocka_unit_test(test_embedded_ipv4_judged_by_ipv4_inside),
	    cmocka_unit_test(test_documentation_ranges_are_ordinary),
	    cmocka_unit_test(test_admissible_with_allow_cidrs),
	    cmocka_unit_test(test_endpoint_equal_by_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
