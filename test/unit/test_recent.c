// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the recent address -> name memory: the latest name wins,
 * expiry never shortens, TTLs are clamped like the sets', the bound holds
 * with the least recently answered forgotten first, families stay apart,
 * long names are cut, and the table agrees with a brute-force model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "observe/recent.h"

#include "fixtures.h"

static void latest_name_wins_expiry_never_shortens(void **state);
static void ttl_is_clamped_like_the_sets(void **state);
static void bound_forgets_least_recently_answered(void **state);
static void families_do_not_collide(void **state);
static void long_names_are_cut(void **state);
static void bad_sizes_are_refused(void **state);
static void matches_model_under_churn(void **state);
static void names_are_shared_and_freed(void **state);

static void latest_name_wins_expiry_never_shortens(void **state)
{
	struct recent *r = recent_new(8, 1, 86400);
	struct netaddr a = fixture_v4(1);
	struct recent_info i;

	(void)state;
	assert_false(recent_get(r, &a, &i));
	recent_put(r, "long.example", &a, 3600, 1000);
	recent_put(r, "short.example", &a, 60, 2000);
	assert_true(recent_get(r, &a, &i));
	assert_string_equal(i.name, "short.example");
	assert_int_equal(i.answered_ms, 2000);
	assert_int_equal(i.expires_ms, 1000 + 3600 * 1000);
	/* Once the long entry is over, a new answer sets its own expiry. */
	recent_put(r, "again.example", &a, 60, 4000000);
	assert_true(recent_get(r, &a, &i));
	assert_int_equal(i.expires_ms, 4000000 + 60 * 1000);
	recent_free(r);
}

static void ttl_is_clamped_like_the_sets(void **state)
{
	struct recent *r = recent_new(8, 30, 600);
	struct netaddr a = fixture_v4(2), b = fixture_v4(3), c = fixture_v4(4);
	struct recent_info i;

	(void)state;
	recent_put(r, "a", &a, 5, 0);
	recent_put(r, "b", &b, 99999, 0);
	assert_true(recent_get(r, &a, &i));
	assert_int_equal(i.expires_ms, 30 * 1000);
	assert_true(recent_get(r, &b, &i));
	assert_int_equal(i.expires_ms, 600 * 1000);
	/* a reload's clamp judges the answers noted after it */
	recent_set_ttl(r, 1, 60);
	recent_put(r, "c", &c, 99999, 0);
	assert_true(recent_get(r, &c, &i));
	assert_int_equal(i.expires_ms, 60 * 1000);
	assert_true(recent_get(r, &b, &i));
	assert_int_equal(i.expires_ms, 600 * 1000);
	recent_free(r);
}

static void bound_forgets_least_recently_answered(void **state)
{
	struct recent *r = recent_new(3, 1, 100);
	struct netaddr a = fixture_v4(1), b = fixture_v4(2), c = fixture_v4(3),
		       d = fixture_v4(4);
	struct recent_info i;

	(void)state;
	recent_put(r, "a", &a, 10, 1);
	recent_put(r, "b", &b, 10, 2);
	recent_put(r, "c", &c, 10, 3);
	recent_put(r, "a2", &a, 10, 4); /* a is now the most recent */
	recent_put(r, "d", &d, 10, 5);	/* evicts b */
	assert_int_equal(recent_count(r), 3);
	assert_false(recent_get(r, &b, &i));
	assert_true(recent_get(r, &a, &i));
	assert_string_equal(i.name, "a2");
	assert_true(recent_get(r, &c, &i));
	assert_true(recent_get(r, &d, &i));
	recent_free(r);
}

static void families_do_not_collide(void **state)
{
	struct recent *r = recent_new(4, 1, 100);
	struct netaddr a4 = fixture_v4(7), a6 = {.family = AF_INET6};
	struct recent_info i;

	(void)state;
	memcpy(a6.bytes, a4.bytes, 4); /* same leading bytes */
	recent_put(r, "four", &a4, 10, 0);
	assert_false(recent_get(r, &a6, &i));
	recent_put(r, "six", &a6, 10, 0);
	assert_true(recent_get(r, &a4, &i));
	assert_string_equal(i.name, "four");
	assert_true(recent_get(r, &a6, &i));
	assert_string_equal(i.name, "six");
	recent_free(r);
}

static void long_names_are_cut(void **state)
{
	struct recent *r = recent_new(2, 1, 100);
	struct netaddr a = fixture_v4(9);
	struct recent_info i;
	char name[600];

	(void)state;
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	recent_put(r, name, &a, 10, 0);
	assert_true(recent_get(r, &a, &i));
	assert_int_equal(strlen(i.name), RECENT_NAME_MAX - 1);
	assert_string_equal(i.name + RECENT_NAME_MAX - 4, "...");
	recent_free(r);
}

static void bad_sizes_are_refused(void **state)
{
	(void)state;
	assert_null(recent_new(0, 1, 100));
	assert_null(recent_new((1u << 24) + 1, 1, 100));
}

/* Random puts over a small address space against a model that keeps
 * every address with its last put time: the table holds exactly the MAX
 * most recently put addresses, each with its latest name. */
static void matches_model_under_churn(void **state)
{
	enum { MAX = 50, SPACE = 200, ROUNDS = 20000 };
	struct recent *r = recent_new(MAX, 1, 100);
	uint64_t last[SPACE] = {0};
	char want[32], *names = calloc(SPACE, 32);
	struct recent_info i;

	(void)state;
	srand(7);
	for (uint64_t t = 1; t <= ROUNDS; t++) {
		uint32_t n = (uint32_t)rand() % SPACE;
		struct netaddr a = fixture_v4(n);

		snprintf(names + n * 32, 32, "n%u-%llu", n,
			 (unsigned long long)t);
		recent_put(r, names + n * 32, &a, 10, t);
		last[n] = t;
	}
	for (uint32_t n = 0; n < SPACE; n++) {
		struct netaddr a = fixture_v4(n);
		size_t newer = 0;

		for (uint32_t m = 0; m < SPACE; m++)
			newer += last[m] > last[n];
		snprintf(want, sizeof(want), "%s", names + n * 32);
		if (last[n] != 0 && newer < MAX) {
			assert_true(recent_get(r, &a, &i));
			assert_string_equal(i.name, want);
		} else {
			assert_false(recent_get(r, &a, &i));
		}
	}
	free(names);
	recent_free(r);
}

/* One stored name for the addresses answered for it: an address
 * forgotten or answered for another name lets go of it, and the others
 * keep it (under the sanitizers, a count gone wrong is a use after free
 * or a leak). */
static void names_are_shared_and_freed(void **state)
{
	struct recent *r = recent_new(2, 1, 100);
	struct netaddr a = fixture_v4(1), b = fixture_v4(2), c = fixture_v4(3);
	struct recent_info i;

	(void)state;
	recent_put(r, "shared.example", &a, 10, 1);
	recent_put(r, "shared.example", &b, 10, 2);
	recent_put(r, "other.example", &c, 10, 3); /* forgets a */
	assert_false(recent_get(r, &a, &i));
	assert_true(recent_get(r, &b, &i));
	assert_string_equal(i.name, "shared.example");
	recent_put(r, "third.example", &b, 10, 4);
	assert_true(recent_get(r, &b, &i));
	assert_string_equal(i.name, "third.example");
	recent_put(r, "shared.example", &a, 10, 5); /* forgets c */
	assert_true(recent_get(r, &a, &i));
	assert_string_equal(i.name, "shared.example");
	assert_false(recent_get(r, &c, &i));
	recent_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(latest_name_wins_expiry_never_shortens),
	    cmocka_unit_test(ttl_is_clamped_like_the_sets),
	    cmocka_unit_test(bound_forgets_least_recently_answered),
	    cmocka_unit_test(families_do_not_collide),
	    cmocka_unit_test(long_names_are_cut),
	    cmocka_unit_test(bad_sizes_are_refused),
	    cmocka_unit_test(matches_model_under_churn),
	    cmocka_unit_test(names_are_shared_and_freed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
