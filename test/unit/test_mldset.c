// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the MLD set's pure parts: the solicited-node group of an
 * address (ff02::1:ff and its low 24 bits, whatever its prefix: a global,
 * a link-local, a tentative one alike) and the set's name, cut so that it
 * is a valid set name for the longest sets.ipv6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "base/netaddr.h"
#include "config/config.h"
#include "fence/mldset.h"
#include "sets/sets.h"

static void group_of(const char *addr, const char *want)
{
	struct netaddr a, g;
	char text[NETADDR_STRLEN];

	assert_int_equal(netaddr_parse(addr, &a), 0);
	memset(&g, 0xaa, sizeof(g));
	mldset_group(&a, &g);
	netaddr_format(&g, text, sizeof(text));
	assert_string_equal(text, want);
}

static void test_group(void **state)
{
	(void)state;
	group_of("2001:db8::99", "ff02::1:ff00:99");
	group_of("fe80::5c4c:5ff:fe44:a236", "ff02::1:ff44:a236");
	group_of("2001:db8::1:2345:6789", "ff02::1:ff45:6789");
	group_of("::1", "ff02::1:ff00:1");
	/* only the low 24 bits count: two addresses, one group */
	group_of("2001:db8:1::65:7866", "ff02::1:ff65:7866");
	group_of("fe80::ab65:7866", "ff02::1:ff65:7866");
}

static void test_name(void **state)
{
	struct config c;
	char name[MLDSET_NAME_MAX], set6[32] = "dnsfence6";

	(void)state;
	memset(&c, 0, sizeof(c));
	c.set6 = set6;
	mldset_name(&c, name, sizeof(name));
	assert_string_equal(name, "dnsfence6-mld");
	memset(set6, 'x', 31); /* the longest valid set name */
	set6[31] = '\0';
	mldset_name(&c, name, sizeof(name));
	assert_int_equal(strlen(name), 31);
	assert_true(sets_name_valid(name));
	assert_string_equal(name + 27, "-mld");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_group),
	    cmocka_unit_test(test_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
