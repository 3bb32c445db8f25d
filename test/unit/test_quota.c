// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the in-flight cap: the global limit, each client
 * address's share of it (the port does not count), each interface's
 * bound by its real containers (forged addresses take no more), and
 * slots given back. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* The client at ss on no known interface (not bounded). */
static const struct quota_client *sa(const struct sockaddr_storage *ss)
{
	static struct quota_client c;

	c = (struct quota_client){(const struct sockaddr *)ss, 0, 0};
	return &c;
}

/* The client at ss on interface ifindex with ports real containers. */
static const struct quota_client *on(const struct sockaddr_storage *ss,
				     unsigned ifindex, uint32_t ports)
{
	static struct quota_client c;

	c = (struct quota_client){(const struct sockaddr *)ss, ifindex, ports};
	return &c;
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

/* One container forging a hundred addresses of its network holds one
 * container's share; another interface keeps the rest of the cap. */
static void forged_addresses_share_their_interface_bound(void **state)
{
	struct quota *q = quota_new(16, 12);
	struct sockaddr_storage a, sib = v4("198.18.65.2", 53);
	uint32_t slot, first = 0;
	char addr[32];
	int taken = 0;

	(void)state;
	for (int i = 0; i < 100; i++) {
		snprintf(addr, sizeof(addr), "198.18.64.%d", 100 + i);
		a = v4(addr, 53);
		if (quota_take(q, on(&a, 5, 1), &slot) == 0) {
			if (taken++ == 0)
				first = slot;
		} else {
			assert_int_equal(quota_take(q, on(&a, 5, 1), &slot),
					 -ENOSPC);
		}
	}
	assert_int_equal(taken, 12);
	assert_int_equal(quota_iface_bound(q, on(&a, 5, 1)), 12);
	for (int i = 0; i < 4; i++)
		assert_int_equal(quota_take(q, on(&sib, 6, 1), &slot), 0);
	assert_int_equal(quota_take(q, on(&sib, 6, 1), &slot), -EBUSY);
	assert_int_equal(quota_used(q), 16);
	/* A slot given back on interface 5 is its interface's again. */
	quota_give(q, first);
	assert_int_equal(quota_take(q, on(&a, 5, 1), &slot), 0);
	assert_int_equal(quota_take(q, on(&a, 5, 1), &slot), -EBUSY);
	quota_free(q);
}

/* The bound grows with the real containers, never past the cap. */
static void bound_is_a_share_per_real_container(void **state)
{
	struct quota *q = quota_new(100, 10);
	struct sockaddr_storage a = v4("198.18.64.2", 53);
	struct sockaddr_storage b = v4("198.18.64.3", 53);
	struct sockaddr_storage c = v4("198.18.64.4", 53);
	uint32_t slot;

	(void)state;
	assert_int_equal(quota_iface_bound(q, on(&a, 5, 3)), 30);
	assert_int_equal(quota_iface_bound(q, on(&a, 5, 11)), 100);
	assert_int_equal(quota_iface_bound(q, on(&a, 5, 0)), 100);
	assert_int_equal(quota_iface_bound(q, on(&a, 5, UINT32_MAX)), 100);
	/* Two real containers: two shares, whatever the addresses. */
	for (int i = 0; i < 10; i++) {
		assert_int_equal(quota_take(q, on(&a, 5, 2), &slot), 0);
		assert_int_equal(quota_take(q, on(&b, 5, 2), &slot), 0);
	}
	assert_int_equal(quota_take(q, on(&a, 5, 2), &slot), -EDQUOT);
	assert_int_equal(quota_take(q, on(&c, 5, 2), &slot), -ENOSPC);
	/* A third container starts: its share is there. */
	assert_int_equal(quota_take(q, on(&c, 5, 3), &slot), 0);
	/* The same address on another interface is another client. */
	assert_int_equal(quota_take(q, on(&a, 7, 1), &slot), 0);
	/* Loopback (ports 0) is bounded by the client share only. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(quota_take(q, on(&c, 1, 0), &slot), 0);
	assert_int_equal(quota_used(q), 32);
	quota_free(q);
}

/* Every interface holding questions has an entry; at the table's end a
 * new interface is refused, and an emptied entry serves another. */
static void interface_table_full_refuses_then_reuses(void **state)
{
	struct quota *q = quota_new(1000, 1000);
	struct sockaddr_storage a = v4("198.18.64.2", 53);
	uint32_t slot, kept = 0;
	unsigned i;

	(void)state;
	for (i = 1; i <= 256; i++) {
		assert_int_equal(quota_take(q, on(&a, i, 1), &slot), 0);
		if (i == 7)
			kept = slot;
	}
	assert_int_equal(quota_take(q, on(&a, 999, 1), &slot), -ENOSPC);
	quota_give(q, kept);
	assert_int_equal(quota_take(q, on(&a, 999, 1), &slot), 0);
	assert_int_equal(quota_take(q, on(&a, 7, 1), &slot), -ENOSPC);
	assert_int_equal(quota_used(q), 256);
	quota_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bad_limits_are_refused),
	    cmocka_unit_test(one_client_gets_its_share_and_no_more),
	    cmocka_unit_test(give_back_more_than_taken_is_harmless),
	    cmocka_unit_test(forged_addresses_share_their_interface_bound),
	    cmocka_unit_test(bound_is_a_share_per_real_container),
	    cmocka_unit_test(interface_table_full_refuses_then_reuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
