// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of selftest_parse: the prober's lines as the CLI and the
 * readiness gate read them; anything else is no verdict.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/selftest.h"

static void each_verdict_and_its_text(void **state);
static void other_lines_are_refused(void **state);

static void each_verdict_and_its_text(void **state)
{
	enum selftest_verdict v;
	const char *text = NULL;

	(void)state;
	assert_int_equal(selftest_parse("held DNS over UDP to x", &v, &text),
			 0);
	assert_int_equal(v, SELFTEST_HELD);
	assert_string_equal(text, "DNS over UDP to x");
	assert_int_equal(selftest_parse("open ICMP echo to y", &v, &text), 0);
	assert_int_equal(v, SELFTEST_OPEN);
	assert_string_equal(text, "ICMP echo to y");
	assert_int_equal(selftest_parse("unproven no control", &v, &text), 0);
	assert_int_equal(v, SELFTEST_UNPROVEN);
	assert_string_equal(selftest_verdict_name(SELFTEST_OPEN), "open");
}

static void other_lines_are_refused(void **state)
{
	static const char *const bad[] = {"",	    "held",    "opened x",
					  "OPEN x", " held x", "passed all"};
	enum selftest_verdict v;
	const char *text;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(selftest_parse(bad[i], &v, &text), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_verdict_and_its_text),
	    cmocka_unit_test(other_lines_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
