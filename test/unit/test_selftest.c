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
static void net_capabilities_are_told(void **state);

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

/* security.capability values as setcap writes them (little-endian
 * magic, then permitted and inheritable per 32 capabilities). */
static void net_capabilities_are_told(void **state)
{
	/* revision 2 with the effective flag, permitted = bit 12 */
	static const unsigned char admin[20] = {0x01, 0, 0, 0x02, 0x00, 0x10};
	/* revision 2, permitted = bit 13 */
	static const unsigned char raw[20] = {0x00, 0, 0, 0x02, 0x00, 0x20};
	/* revision 3 (with a root uid), cap_net_admin */
	static const unsigned char v3[24] = {0x01, 0, 0, 0x03, 0x00, 0x10};
	/* revision 1, cap_net_bind_service (bit 10) only */
	static const unsigned char bind[12] = {0x00, 0, 0, 0x01, 0x00, 0x04};
	/* inheritable cap_net_admin only: granted by no exec by itself */
	static const unsigned char inh[20] = {0x00, 0, 0, 0x02, 0,
					      0,    0, 0, 0x00, 0x10};
	/* an unknown revision, and a value too short for its revision */
	static const unsigned char bad[20] = {0x00, 0, 0, 0x07, 0x00, 0x10};

	(void)state;
	assert_true(selftest_cap_grants_net(admin, sizeof(admin)));
	assert_true(selftest_cap_grants_net(raw, sizeof(raw)));
	assert_true(selftest_cap_grants_net(v3, sizeof(v3)));
	assert_false(selftest_cap_grants_net(bind, sizeof(bind)));
	assert_false(selftest_cap_grants_net(inh, sizeof(inh)));
	assert_false(selftest_cap_grants_net(bad, sizeof(bad)));
	assert_false(selftest_cap_grants_net(admin, 12));
	assert_false(selftest_cap_grants_net(admin, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_verdict_and_its_text),
	    cmocka_unit_test(other_lines_are_refused),
	    cmocka_unit_test(net_capabilities_are_told),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
