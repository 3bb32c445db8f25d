// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the query types forwarded: the common data types go,
 * meta, reserved and private-use types never (at each edge of their
 * ranges), ANY is its own verdict, other data types only when listed;
 * names and TYPEn parse both ways.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dns/qtype.h"

static void test_common_types_forwarded(void **state)
{
	static const uint16_t common[] = {1,  2,  5,  6,  12, 15, 16, 28, 33,
					  35, 43, 44, 48, 52, 64, 65, 257};

	(void)state;
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		assert_int_equal(qtype_judge(common[i], NULL, 0),
				 QTYPE_FORWARD);
}

static void test_meta_and_private_never(void **state)
{
	static const uint16_t meta[] = {0,   41,  128, 249,   250,   251,
					252, 253, 254, 65280, 65534, 65535};
	const uint16_t extra[] = {29};

	(void)state;
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		assert_true(qtype_is_meta(meta[i]));
		assert_int_equal(qtype_judge(meta[i], extra, 1), QTYPE_META);
	}
	assert_false(qtype_is_meta(127));
	assert_false(qtype_is_meta(256));
	assert_false(qtype_is_meta(65279));
	assert_int_equal(qtype_judge(255, NULL, 0), QTYPE_ANY);
}

static void test_other_data_types_only_listed(void **state)
{
	const uint16_t extra[] = {29, 1000};

	(void)state;
	assert_int_equal(qtype_judge(29, NULL, 0), QTYPE_UNLISTED);
	assert_int_equal(qtype_judge(10, extra, 2), QTYPE_UNLISTED);
	assert_int_equal(qtype_judge(29, extra, 2), QTYPE_FORWARD);
	assert_int_equal(qtype_judge(1000, extra, 2), QTYPE_FORWARD);
}

static void test_names_parse_both_ways(void **state)
{
	char buf[QTYPE_STRLEN];
	uint16_t t = 0;

	(void)state;
	assert_int_equal(qtype_parse("loc", &t), 0);
	assert_int_equal(t, 29);
	assert_int_equal(qtype_parse("TYPE65000", &t), 0);
	assert_int_equal(t, 65000);
	assert_int_equal(qtype_parse("type1", &t), 0);
	assert_int_equal(t, 1);
	assert_int_not_equal(qtype_parse("TYPE65536", &t), 0);
	assert_int_not_equal(qtype_parse("TYPE", &t), 0);
	assert_int_not_equal(qtype_parse("TYPE01", &t), 0);
	assert_int_not_equal(qtype_parse("TYPE-1", &t), 0);
	assert_int_not_equal(qtype_parse("BOGUS", &t), 0);
	assert_string_equal(qtype_name(65, buf, sizeof(buf)), "HTTPS");
	assert_string_equal(qtype_name(65000, buf, sizeof(buf)), "TYPE65000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_common_types_forwarded),
	    cmocka_unit_test(test_meta_and_private_never),
	    cmocka_unit_test(test_other_data_types_only_listed),
	    cmocka_unit_test(test_names_parse_both_ways),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
