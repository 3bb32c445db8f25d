// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the in-flight cap: the global limit, each client
 * address's share of it (the port does not count), and slots given back.
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

#include "resolve/quota.h"

static struct sockaddr_storage v4(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
	return ss;
}

static const struct sockaddr *sa(const struct sockaddr_storage *ss)
{
	return (const struct sockaddr *)ss;
}

static void bad_limits_are_refused(void **state)
{
	(void)state;
	assert_null(quota_new(0, 0));
	assert_null(quota_new(10, 0));
	assert_null(quota_new(10, 11));
}

static void one_client_gets_its_share_and_no_more(void **state)
{
	struct quota *q = quota_new(16, 12);
	struct sockaddr_storage a = v4("198.18.0.2", 1000);
	struct sockaddr_storage b = v4("198.18.0.3", 1000);
	uint32_t slot, first = 0;

	(void)state;
	for (int i = 0; i < 12; i++) {
		/* a new source port each time: the same client */
		a = v4("198.18.0.2", (uint16_t)(1000 + i));
		assert_int_equal(quota_take(q, sa(&a), &slot), 0);
		if (i == 0)
			first = slot;
	}
	assert_int_equal(quota_take(q, sa(&a), &slot), -EDQUOT);
	assert_int_equal(quota_used(q), 12);
	/* Another client still has the rest. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(quota_take(q, sa(&b), &slot), 0);
	assert_int_equal(quota_take(q, sa(&b), &slot), -EBUSY);
	assert_int_equal(quota_used(q), 16);
	/* Given back, taken again. */
	quota_give(q, first);
	assert_int_equal(quota_used(q), 15);
	assert_int_equal(quota_take(q, sa(&a), &slot), 0);
	assert_int_equal(slot, first);
	quota_free(q);
}

static void give_back_more_than_taken_is_harmless(void **state)
{
	struct quota *q = quota_new(4, 4);
	struct sockaddr_storage a = v4("198.18.0.2", 53);
	uint32_t slot;

	(void)state;
	assert_int_equal(quota_take(q, sa(&a), &slot), 0);
	quota_give(q, slot);
	quota_give(q, slot);
	quota_give(q, 1u << 30);
	assert_int_equal(quota_used(q), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(quota_take(q, sa(&a), &slot), 0);
	assert_int_equal(quota_take(q, sa(&a), &slot), -EBUSY);
	quota_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bad_limits_are_refused),
	    cmocka_unit_test(one_client_gets_its_share_and_no_more),
	    cmocka_unit_test(give_back_more_than_taken_is_harmless),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
