// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of suggest's collapsing: exact names by default, `*.parent`
 * for SUGGEST_SIBLINGS siblings under one registrable domain, never a
 * public suffix or a wildcard over one (co.uk, github.io), deeper names
 * covered by a chosen wildcard, --min-count, sorted unique output, and
 * an empty input or result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/suggest.h"

static void expect(const struct suggest_name *in, size_t n, uint64_t min,
		   const char *const *want, size_t n_want);
static void exact_names_by_default(void **state);
static void three_siblings_collapse(void **state);
static void public_suffix_children_stay_exact(void **state);
static void public_suffix_itself_is_left_out(void **state);
static void wildcard_covers_deeper_names_and_narrower_wildcards(void **state);
static void min_count_filters_before_collapsing(void **state);
static void duplicates_are_merged(void **state);
static void nothing_left_is_an_empty_list(void **state);

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void expect(const struct suggest_name *in, size_t n, uint64_t min,
		   const char *const *want, size_t n_want)
{
	char **out = NULL;
	size_t n_out = 0;

	assert_int_equal(suggest_collapse(in, n, min, &out, &n_out), 0);
	for (size_t i = 0; i < n_out && i < n_want; i++)
		assert_string_equal(out[i], want[i]);
	assert_int_equal(n_out, n_want);
	suggest_free_list(out, n_out);
}

static void exact_names_by_default(void **state)
{
	static const struct suggest_name in[] = {
	    {"www.example.com", 1}, {"api.example.com", 1}, {"pypi.org", 3}};
	static const char *const want[] = {"api.example.com", "pypi.org",
					   "www.example.com"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void three_siblings_collapse(void **state)
{
	static const struct suggest_name in[] = {{"a.cdn.example.com", 1},
						 {"b.cdn.example.com", 1},
						 {"c.cdn.example.com", 1},
						 {"example.com", 1},
						 {"x.other.org", 1}};
	static const char *const want[] = {"*.cdn.example.com", "example.com",
					   "x.other.org"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void public_suffix_children_stay_exact(void **state)
{
	static const struct suggest_name in[] = {
	    {"alice.github.io", 1}, {"bob.github.io", 1},
	    {"carol.github.io", 1}, {"a.co.uk", 1},
	    {"b.co.uk", 1},	    {"c.co.uk", 1},
	    {"www.shop.co.uk", 1},  {"api.shop.co.uk", 1},
	    {"cdn.shop.co.uk", 1}};
	static const char *const want[] = {
	    "*.shop.co.uk",  "a.co.uk", "alice.github.io", "b.co.uk",
	    "bob.github.io", "c.co.uk", "carol.github.io"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void public_suffix_itself_is_left_out(void **state)
{
	static const struct suggest_name in[] = {
	    {"co.uk", 5}, {"github.io", 5}, {"com", 5}, {"ok.example", 1}};
	static const char *const want[] = {"ok.example"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void wildcard_covers_deeper_names_and_narrower_wildcards(void **state)
{
	static const struct suggest_name in[] = {
	    {"a.example.com", 1},   {"b.example.com", 1},
	    {"c.example.com", 1},   {"x.deep.example.com", 1},
	    {"p.q.example.com", 1}, {"r.q.example.com", 1},
	    {"s.q.example.com", 1}, {"example.com", 1}};
	static const char *const want[] = {"*.example.com", "example.com"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void min_count_filters_before_collapsing(void **state)
{
	static const struct suggest_name in[] = {
	    {"a.example.com", 5}, {"b.example.com", 1}, {"c.example.com", 5}};
	static const char *const want[] = {"a.example.com", "c.example.com"};

	(void)state;
	expect(in, N(in), 2, want, N(want));
}

static void nothing_left_is_an_empty_list(void **state)
{
	static const struct suggest_name in[] = {{"a.example.com", 1}};

	(void)state;
	expect(in, N(in), 5, NULL, 0);
	expect(NULL, 0, 1, NULL, 0);
}

static void duplicates_are_merged(void **state)
{
	static const struct suggest_name in[] = {
	    {"a.example.com", 1}, {"a.example.com", 1}, {"a.example.com", 1}};
	static const char *const want[] = {"a.example.com"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

/* The probe's and readiness names, localhost, Tor and mDNS are never
 * proposed; the names of test networks are. */
static void special_use_names_never_proposed(void **state)
{
	(void)state;
	assert_true(suggest_never_proposed("probe.dnsfence.invalid"));
	assert_true(suggest_never_proposed("ready.dnsfence.invalid"));
	assert_true(suggest_never_proposed("localhost"));
	assert_true(suggest_never_proposed("x.LOCALHOST"));
	assert_true(suggest_never_proposed("abc.onion"));
	assert_true(suggest_never_proposed("printer.local"));
	assert_false(suggest_never_proposed("www.allowed.test"));
	assert_false(suggest_never_proposed("invalid.example.com"));
	assert_false(suggest_never_proposed("example.com"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(exact_names_by_default),
	    cmocka_unit_test(three_siblings_collapse),
	    cmocka_unit_test(public_suffix_children_stay_exact),
	    cmocka_unit_test(public_suffix_itself_is_left_out),
	    cmocka_unit_test(
		wildcard_covers_deeper_names_and_narrower_wildcards),
	    cmocka_unit_test(min_count_filters_before_collapsing),
	    cmocka_unit_test(duplicates_are_merged),
	    cmocka_unit_test(nothing_left_is_an_empty_list),
	    cmocka_unit_test(special_use_names_never_proposed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
