// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of ifports, the real containers behind an interface: what
 * is not bounded (loopback, no interface known) and what counts as one
 * container because it cannot be read. Bridges and their ports are the
 * e2e test's (test_forward_spoofed_flood_keeps_sibling_share.sh): making
 * one here would change the host's namespace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "resolve/ifports.h"

static void loopback_and_unknown_are_not_bounded(void **state)
{
	struct ifports *p = ifports_new();

	(void)state;
	assert_non_null(p);
	assert_int_equal(ifports_count(p, 0), 0);
	assert_string_equal(ifports_name(p, 0), "?");
	assert_int_equal(ifports_count(p, 1), 0);
	assert_string_equal(ifports_name(p, 1), "lo");
	ifports_free(p);
}

static void an_interface_that_cannot_be_read_is_one_container(void **state)
{
	struct ifports *p = ifports_new();
	const unsigned gone = 0x7ffffff0u;

	(void)state;
	assert_int_equal(ifports_count(p, gone), 1);
	assert_string_equal(ifports_name(p, gone), "?");
	/* Cached, and still the same answer. */
	assert_int_equal(ifports_count(p, gone), 1);
	ifports_free(p);
}

static void many_interfaces_share_the_table(void **state)
{
	struct ifports *p = ifports_new();

	(void)state;
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(ifports_count(p, 0x7fff0000u + i), 1);
	assert_int_equal(ifports_count(p, 1), 0);
	assert_string_equal(ifports_name(p, 1), "lo");
	ifports_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(loopback_and_unknown_are_not_bounded),
	    cmocka_unit_test(an_interface_that_cannot_be_read_is_one_container),
	    cmocka_unit_test(many_interfaces_share_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
