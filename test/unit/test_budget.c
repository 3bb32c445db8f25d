// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the wildcard budget: a client's burst, then the refill
 * rate; each wildcard entry and each client apart; the entry's own bucket
 * caps many client addresses together; one log line per window.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "resolve/budget.h"

static const uint8_t wild_a[] = "\1w\7allowed\4test";
static const uint8_t wild_b[] = "\1v\7allowed\4test";

static struct sockaddr_in client(uint32_t host)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};

	sin.sin_addr.s_addr = htonl(0x7f000000u | host);
	return sin;
}

static size_t takes(struct budget *b, const struct budget_params *bp,
		    const uint8_t *wild, uint32_t host, size_t n, uint64_t now)
{
	struct sockaddr_in sin = client(host);
	struct budget_refusal why;
	size_t granted = 0;

	for (size_t i = 0; i < n; i++)
		granted += budget_take(b, bp, wild, sizeof(wild_a),
				       (struct sockaddr *)&sin, now, &why);
	return granted;
}

static void test_burst_then_refill(void **state)
{
	const struct budget_params bp = {.burst = 10, .per_minute = 60};
	struct budget *b = budget_new(64);

	(void)state;
	assert_int_equal(takes(b, &bp, wild_a, 1, 20, 1000), 10);
	/* one token a second */
	assert_int_equal(takes(b, &bp, wild_a, 1, 5, 1999), 0);
	assert_int_equal(takes(b, &bp, wild_a, 1, 5, 2000), 1);
	assert_int_equal(takes(b, &bp, wild_a, 1, 5, 5000), 3);
	/* another wildcard and another client have their own buckets */
	assert_int_equal(takes(b, &bp, wild_b, 1, 20, 5000), 10);
	assert_int_equal(takes(b, &bp, wild_a, 2, 20, 5000), 10);
	/* a long quiet refills only up to the burst */
	assert_int_equal(takes(b, &bp, wild_a, 1, 50, 3600000), 10);
	budget_free(b);
}

static void test_entry_caps_many_clients(void **state)
{
	const struct budget_params bp = {.burst = 10, .per_minute = 60};
	struct budget *b = budget_new(4096);
	size_t total = 0;

	(void)state;
	for (uint32_t host = 1; host <= 100; host++)
		total += takes(b, &bp, wild_a, host, 10, 1000);
	assert_int_equal(total, 10 * BUDGET_ENTRY_FACTOR);
	budget_free(b);
}

/* The forward scope: a flood from many addresses behind one interface
 * spends that interface's entry bucket only; a client behind another
 * interface keeps its whole burst, and interface 0 is budget_take. */
static void test_interfaces_split_the_entry(void **state)
{
	const struct budget_params bp = {.burst = 10, .per_minute = 60};
	struct budget *b = budget_new(4096);
	struct budget_refusal why;
	struct sockaddr_in sin;
	size_t total = 0, other = 0;

	(void)state;
	for (uint32_t host = 1; host <= 100; host++) {
		sin = client(host);
		for (int i = 0; i < 10; i++)
			total += budget_take_on(b, &bp, wild_a, sizeof(wild_a),
						(struct sockaddr *)&sin, 7,
						1000, &why);
	}
	assert_int_equal(total, 10 * BUDGET_ENTRY_FACTOR);
	assert_true(why.by_entry);
	sin = client(200);
	for (int i = 0; i < 20; i++)
		other += budget_take_on(b, &bp, wild_a, sizeof(wild_a),
					(struct sockaddr *)&sin, 8, 1000, &why);
	assert_int_equal(other, 10);
	/* the same address behind interface 7 is still refused */
	assert_false(budget_take_on(b, &bp, wild_a, sizeof(wild_a),
				    (struct sockaddr *)&sin, 7, 1000, &why));
	/* no interface: one bucket, untouched by the interfaces' */
	assert_int_equal(takes(b, &bp, wild_a, 1, 10, 1000), 10);
	budget_free(b);
}

static void test_one_line_per_window(void **state)
{
	const struct budget_params bp = {.burst = 1, .per_minute = 1};
	struct budget *b = budget_new(64);
	struct sockaddr_in sin = client(1);
	struct budget_refusal why;

	(void)state;
	assert_true(budget_take(b, &bp, wild_a, sizeof(wild_a),
				(struct sockaddr *)&sin, 1000, &why));
	assert_false(budget_take(b, &bp, wild_a, sizeof(wild_a),
				 (struct sockaddr *)&sin, 1001, &why));
	assert_true(why.log_now);
	assert_false(why.by_entry);
	for (int i = 0; i < 5; i++) {
		assert_false(budget_take(b, &bp, wild_a, sizeof(wild_a),
					 (struct sockaddr *)&sin, 1002, &why));
		assert_false(why.log_now);
	}
	assert_false(budget_take(b, &bp, wild_a, sizeof(wild_a),
				 (struct sockaddr *)&sin,
				 1000 + BUDGET_WINDOW_MS - 1, &why));
	assert_false(why.log_now);
	/* a token came back a minute after the first; the next refusal,
	 * a window after the first line, gets a line again */
	assert_true(budget_take(b, &bp, wild_a, sizeof(wild_a),
				(struct sockaddr *)&sin,
				1000 + BUDGET_WINDOW_MS, &why));
	assert_false(budget_take(b, &bp, wild_a, sizeof(wild_a),
				 (struct sockaddr *)&sin,
				 1001 + BUDGET_WINDOW_MS, &why));
	assert_true(why.log_now);
	assert_int_equal(why.before, 6);
	budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_burst_then_refill),
	    cmocka_unit_test(test_entry_caps_many_clients),
	    cmocka_unit_test(test_interfaces_split_the_entry),
	    cmocka_unit_test(test_one_line_per_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
