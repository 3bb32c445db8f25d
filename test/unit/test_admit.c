// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of admit_addrs: internal addresses and the upstreams' own
 * are left out; an HTTPS/SVCB record with such a hint loses its other
 * hints too (the client's copy drops it whole), while A records and other
 * records' hints stay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/netaddr.h"
#include "config/config.h"
#include "resolve/admit.h"

#include "fixtures.h"

static struct dns_addr at(const char *text, uint16_t rec)
{
	struct dns_addr d = {.rec = rec, .ttl = 60};

	assert_int_equal(netaddr_parse(text, &d.addr), 0);
	return d;
}

static void test_record_with_internal_hint_goes_whole(void **state)
{
	struct config *c = fixture_config("{\"upstreams\": [\"198.18.0.1\"]}");
	const struct dns_addr in[] = {
	    at("198.18.2.41", 0),    at("198.18.2.40", 1), at("10.0.0.5", 1),
	    at("2001:db8:1::20", 1), at("198.18.2.42", 2), at("198.18.2.40", 0),
	    at("198.18.0.1", 3),     at("198.18.2.43", 3),
	};
	struct dns_addr out[8];
	size_t n;

	(void)state;
	n = admit_addrs(c, (const uint8_t *)"\1x\4test", 8, in, 8, out);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].addr.bytes[3], 41);
	assert_int_equal(out[1].addr.bytes[3], 42);
	/* the A record's copy of a dropped record's hint stays */
	assert_int_equal(out[2].addr.bytes[3], 40);
	assert_int_equal(out[2].rec, 0);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_record_with_internal_hint_goes_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
