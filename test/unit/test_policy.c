// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the policy module: pattern syntax, label-aligned matching
 * on wire names, presets, and a 100,000-entry list (correctness only).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/policy.h"

struct match_case {
	const char *name;
	bool want;
};

static struct policy *policy_of(const char *const *patterns);
static void check_table(const struct policy *p, const struct match_case *t,
			size_t n);
static size_t to_wire(const char *name, uint8_t *out);
static void test_exact_matches_only_that_name(void **state);
static void test_wildcard_matches_below_not_itself(void **state);
static void test_match_is_label_aligned(void **state);
static void test_case_and_trailing_dot_ignored(void **state);
static void test_dotted_label_is_one_label(void **state);
static void test_root_and_bad_wire_match_nothing(void **state);
static void test_invalid_text_never_matches(void **state);
static void test_invalid_patterns_give_reason(void **state);
static void test_valid_patterns_accepted(void **state);
static void test_duplicates_counted_once(void **state);
static void test_presets_exist_and_are_valid(void **state);
static void test_unknown_preset_is_enoent(void **state);
static void test_preset_hosts_match_after_add(void **state);
static void test_large_list_matches_correctly(void **state);
static void test_entry_names_what_matched(void **state);
static void test_admitting_wildcard_only_below_registrable(void **state);

static struct policy *policy_of(const char *const *patterns)
{
	struct policy *p = policy_new();

	assert_non_null(p);
	for (; *patterns; patterns++) {
		const char *why = NULL;
		int ret = policy_add(p, *patterns, &why);
		if (ret != 0)
			fail_msg("policy_add(%s): %d %s", *patterns, ret, why);
	}
	return p;
}

static void check_table(const struct policy *p, const struct match_case *t,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool got = policy_match_text(p, t[i].name);
		if (got != t[i].want)
			fail_msg("%s: got %d, want %d", t[i].name, got,
				 t[i].want);
	}
}

#define CHECK(p, t) check_table(p, t, sizeof(t) / sizeof(t[0]))

/* "a.b" to uncompressed wire format in out (room for 256 bytes). */
static size_t to_wire(const char *name, uint8_t *out)
{
	size_t o = 0;

	while (*name != '\0') {
		size_t n = strcspn(name, ".");

		out[o++] = (uint8_t)n;
		memcpy(out + o, name, n);
		o += n;
		name += n;
		if (*name == '.')
			name++;
	}
	out[o++] = 0;
	return o;
}

static void test_exact_matches_only_that_name(void **state)
{
	static const char *const pats[] = {"example.com", "localhost", NULL};
	static const struct match_case t[] = {
	    {"example.com", true},	{"example.com.", true},
	    {"www.example.com", false}, {"com", false},
	    {"example.org", false},	{"example.com.evil", false},
	    {"localhost", true},	{"a.localhost", false},
	};
	struct policy *p = policy_of(pats);

	(void)state;
	CHECK(p, t);
	assert_int_equal(policy_size(p), 2);
	policy_free(p);
}

static void test_wildcard_matches_below_not_itself(void **state)
{
	static const char *const pats[] = {"*.allowed.test", NULL};
	static const struct match_case t[] = {
	    {"allowed.test", false},
	    {"a.allowed.test", true},
	    {"a.b.allowed.test", true},
	    {"a.b.c.d.e.f.g.allowed.test", true},
	    {"test", false},
	    {"a.test", false},
	};
	struct policy *p = policy_of(pats);

	(void)state;
	CHECK(p, t);
	policy_free(p);
}

static void test_match_is_label_aligned(void **state)
{
	static const char *const pats[] = {"*.allowed.test", "exact.test",
					   NULL};
	static const struct match_case t[] = {
	    {"allowed.test.evil.test", false},
	    {"evilallowed.test", false},
	    {"x.evilallowed.test", false},
	    {"allowed.test.evil", false},
	    {"xexact.test", false},
	    {"exact.testx", false},
	    {"exact.test.evil", false},
	    {"a.allowed.testx", false},
	    /* The same patterns do match on a label boundary. */
	    {"x.allowed.test", true},
	    {"evil.x.allowed.test", true},
	    {"exact.test", true},
	};
	struct policy *p = policy_of(pats);

	(void)state;
	CHECK(p, t);
	policy_free(p);
}

static void test_case_and_trailing_dot_ignored(void **state)
{
	static const char *const pats[] = {"Example.COM.", "*.WiLd.Test", NULL};
	static const struct match_case t[] = {
	    {"example.com", true},    {"EXAMPLE.COM.", true},
	    {"eXaMpLe.CoM", true},    {"A.wild.test", true},
	    {"x.Y.WILD.TEST.", true}, {"wild.test", false},
	};
	static const uint8_t upper[] = "\x03WWW\x04WILD\x04TEST";
	struct policy *p = policy_of(pats);

	(void)state;
	CHECK(p, t);
	assert_true(policy_match(p, upper, sizeof(upper)));
	policy_free(p);
}

static void test_dotted_label_is_one_label(void **state)
{
	static const char *const pats[] = {"*.allowed.test", "a.b.test", NULL};
	/* One label "x.allowed", then "test": not below allowed.test. */
	static const uint8_t dotted[] = "\x09x.allowed\x04test";
	/* One label "a.b" then "test": not the name a.b.test. */
	static const uint8_t ab[] = "\x03"
				    "a.b\x04test";
	/* "allowed.test" as a single label under "x". */
	static const uint8_t one[] = "\x01x\x0c"
				     "allowed.test";
	static const uint8_t good[] = "\x01x\x07"
				      "allowed\x04test";
	struct policy *p = policy_of(pats);

	(void)state;
	assert_false(policy_match(p, dotted, sizeof(dotted)));
	assert_false(policy_match(p, ab, sizeof(ab)));
	assert_false(policy_match(p, one, sizeof(one)));
	assert_true(policy_match(p, good, sizeof(good)));
	/* The text form with a backslash escape is not a valid name. */
	assert_false(policy_match_text(p, "x\\.allowed.test"));
	policy_free(p);
}

static void test_root_and_bad_wire_match_nothing(void **state)
{
	static const char *const pats[] = {"*.test", "test", NULL};
	static const uint8_t root[] = {0};
	static const uint8_t ok[] = "\x01"
				    "a\x04test";
	static const uint8_t ptr[] = {1, 'a', 0xc0, 12};
	static const uint8_t unterminated[] = {1, 'a', 4, 't', 'e', 's', 't'};
	static const uint8_t overrun[] = {9, 'a', 0};
	uint8_t trailing[sizeof(ok) + 3];
	uint8_t longname[300];
	size_t n = 0;
	struct policy *p = policy_of(pats);

	(void)state;
	assert_false(policy_match(p, root, sizeof(root)));
	assert_false(policy_match(p, root, 0));
	assert_false(policy_match(p, NULL, 0));
	assert_false(policy_match_text(p, "."));
	assert_false(policy_match_text(p, ""));
	assert_true(policy_match(p, ok, sizeof(ok)));
	assert_false(policy_match(p, ok, sizeof(ok) - 1));
	assert_false(policy_match(p, ptr, sizeof(ptr)));
	assert_false(policy_match(p, unterminated, sizeof(unterminated)));
	assert_false(policy_match(p, overrun, sizeof(overrun)));
	/* Bytes after the root label are not part of the name. */
	memcpy(trailing, ok, sizeof(ok));
	memset(trailing + sizeof(ok), 0xff, 3);
	assert_true(policy_match(p, trailing, sizeof(trailing)));
	/* A wire name longer than 255 bytes is refused. */
	while (n + 6 < sizeof(longname) - 6) {
		longname[n++] = 1;
		longname[n++] = 'a';
	}
	memcpy(longname + n, "\x04test", 6);
	assert_false(policy_match(p, longname, n + 6));
	policy_free(p);
}

static void test_invalid_text_never_matches(void **state)
{
	static const char *const pats[] = {"*.test", NULL};
	static const struct match_case t[] = {
	    {"a..test", false}, {"a b.test", false}, {"*.test", false},
	    {".test", false},	{"a.test..", false}, {"ok.test", true},
	};
	struct policy *p = policy_of(pats);

	(void)state;
	CHECK(p, t);
	assert_false(policy_match_text(p, NULL));
	policy_free(p);
}

static void test_invalid_patterns_give_reason(void **state)
{
	static char label64[80], name254[300], star_long[300];
	static const struct {
		const char *pattern, *why;
	} t[] = {
	    {"", "empty name"},
	    {".", "empty name"},
	    {"a..b", "empty label"},
	    {".a", "empty label"},
	    {"a.b..", "empty label"},
	    {label64, "label longer than 63 bytes"},
	    {name254, "name longer than 253 bytes"},
	    {star_long, "name longer than 253 bytes"},
	    {"a b.com", "character ' ' not allowed"},
	    {"exa$mple.com", "character '$' not allowed"},
	    {"a/b", "character '/' not allowed"},
	    {"caf\xc3\xa9.com", "character '\\xc3' not allowed"},
	    {"a\tb", "character '\\x09' not allowed"},
	    {"www.*.com", "'*' only allowed as the whole first label"},
	    {"*a.com", "'*' only allowed as the whole first label"},
	    {"a*.com", "'*' only allowed as the whole first label"},
	    {"*.*.com", "'*' only allowed as the whole first label"},
	    {"com.*", "'*' only allowed as the whole first label"},
	    {"*", "'*' needs a name after it"},
	    {"*.", "'*' needs a name after it"},
	    {"*..", "empty label"},
	};

	(void)state;
	memset(label64, 'a', 64);
	strcpy(label64 + 64, ".com");
	/* 254 characters: "a." 127 times, the last dot made a 'b'. */
	for (size_t i = 0; i < 127; i++)
		memcpy(name254 + 2 * i, "a.", 2);
	name254[253] = 'b';
	name254[254] = 0;
	memcpy(star_long, "*.", 2);
	memcpy(star_long + 2, name254 + 2, 253);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char reason[POLICY_WHY_MAX] = "";
		const char *why = NULL;
		struct policy *p = policy_new();

		if (policy_pattern_valid(t[i].pattern, reason, sizeof(reason)))
			fail_msg("pattern %zu (%.20s) accepted", i,
				 t[i].pattern);
		if (strcmp(reason, t[i].why) != 0)
			fail_msg("pattern %zu: reason \"%s\", want \"%s\"", i,
				 reason, t[i].why);
		assert_int_equal(policy_add(p, t[i].pattern, &why), -EINVAL);
		assert_string_equal(why, t[i].why);
		assert_int_equal(policy_size(p), 0);
		policy_free(p);
	}
	assert_false(policy_pattern_valid(NULL, NULL, 0));
	assert_false(policy_pattern_valid("a..b", NULL, 0));
}

static void test_valid_patterns_accepted(void **state)
{
	static char label63[80], name253[300], dot254[300], star253[300];
	const char *const ok[] = {
	    "com",     "example.com",  "example.com.", "*.example.com",
	    "*.com",   "_dmarc.x.org", "a-b.c_d.e",    "xn--bcher-kva.example",
	    "1.2.3.4", "-weird-.test", "A.B.C",	       label63,
	    name253,   dot254,	       star253,
	};
	struct policy *p = policy_new();

	(void)state;
	memset(label63, 'a', 63);
	strcpy(label63 + 63, ".com");
	for (size_t i = 0; i < 126; i++)
		memcpy(name253 + 2 * i, "a.", 2);
	name253[252] = 'b';
	name253[253] = 0;
	memcpy(dot254, name253, 253);
	strcpy(dot254 + 253, ".");
	memcpy(star253, "*.", 2);
	memcpy(star253 + 2, name253 + 2, 251);
	star253[253] = 0;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char reason[POLICY_WHY_MAX] = "unset";
		const char *why = "unset";

		if (!policy_pattern_valid(ok[i], reason, sizeof(reason)))
			fail_msg("pattern %.20s rejected: %s", ok[i], reason);
		assert_int_equal(policy_add(p, ok[i], &why), 0);
	}
	assert_true(policy_match_text(p, name253));
	assert_true(policy_match_text(p, dot254));
	assert_true(policy_match_text(p, "x.com"));
	policy_free(p);
}

static void test_duplicates_counted_once(void **state)
{
	static const char *const pats[] = {"a.test",   "A.TEST.",  "a.test",
					   "*.a.test", "*.A.test", NULL};
	struct policy *p = policy_of(pats);

	(void)state;
	assert_int_equal(policy_size(p), 2);
	policy_free(p);
	assert_int_equal(policy_size(NULL), 0);
	policy_free(NULL);
}

static void test_presets_exist_and_are_valid(void **state)
{
	static const char *const required[] = {
	    "npm",	"pypi",	  "crates",	"go",	  "maven",
	    "rubygems", "nuget",  "github",	"debian", "ubuntu",
	    "alpine",	"docker", "kubernetes",
	};
	const char *const *names = policy_preset_names();
	size_t n = 0;

	(void)state;
	assert_non_null(names);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!policy_preset_exists(required[i]))
			fail_msg("preset %s missing", required[i]);
	}
	for (; names[n]; n++) {
		const char *const *hosts = policy_preset_hosts(names[n]);
		size_t h = 0;

		assert_true(policy_preset_exists(names[n]));
		assert_non_null(hosts);
		for (; hosts[h]; h++) {
			char why[POLICY_WHY_MAX];

			if (!policy_pattern_valid(hosts[h], why, sizeof(why)))
				fail_msg("preset %s: %s: %s", names[n],
					 hosts[h], why);
		}
		if (h == 0)
			fail_msg("preset %s is empty", names[n]);
	}
	assert_true(n >= sizeof(required) / sizeof(required[0]));
}

static void test_unknown_preset_is_enoent(void **state)
{
	struct policy *p = policy_new();

	(void)state;
	assert_false(policy_preset_exists("npmx"));
	assert_false(policy_preset_exists(""));
	assert_false(policy_preset_exists("NPM"));
	assert_false(policy_preset_exists(NULL));
	assert_null(policy_preset_hosts("nope"));
	assert_int_equal(policy_add_preset(p, "nope"), -ENOENT);
	assert_int_equal(policy_add_preset(p, NULL), -ENOENT);
	assert_int_equal(policy_size(p), 0);
	policy_free(p);
}

/* policy_entry: the exact entry wins over a wildcard; the longest
 * wildcard parent wins over a shorter one; the text is lower case. */
static void test_entry_names_what_matched(void **state)
{
	static const char *const pats[] = {"www.example.com", "*.example.com",
					   "*.a.example.com", NULL};
	static const struct {
		const char *name, *entry;
	} t[] = {
	    {"www.example.com", "www.example.com"},
	    {"WWW.Example.COM", "www.example.com"},
	    {"x.example.com", "*.example.com"},
	    {"b.a.example.com", "*.a.example.com"},
	    {"c.b.a.example.com", "*.a.example.com"},
	    {"a.example.com", "*.example.com"},
	    {"example.com", NULL},
	    {"other.test", NULL},
	};
	struct policy *p = policy_of(pats);
	uint8_t wire[256];
	char out[300];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t len = to_wire(t[i].name, wire);
		bool got = policy_entry(p, wire, len, out, sizeof(out));

		if (t[i].entry == NULL) {
			if (got)
				fail_msg("%s: matched %s", t[i].name, out);
			continue;
		}
		if (!got)
			fail_msg("%s: no entry", t[i].name);
		assert_string_equal(out, t[i].entry);
		assert_true(policy_match(p, wire, len));
	}
	policy_free(p);
}

/* The EDE text's suggestion: a wildcard only when the parent is a
 * registrable domain or below one. */
static void test_admitting_wildcard_only_below_registrable(void **state)
{
	char buf[600];

	(void)state;
	policy_admitting("", "api.example.com", buf, sizeof(buf));
	assert_string_equal(buf,
			    "add \"api.example.com\" or \"*.example.com\"");
	policy_admitting("", "a.b.example.co.uk", buf, sizeof(buf));
	assert_string_equal(
	    buf, "add \"a.b.example.co.uk\" or \"*.b.example.co.uk\"");
	policy_admitting("", "shop.co.uk", buf, sizeof(buf));
	assert_string_equal(buf, "add \"shop.co.uk\"");
	policy_admitting("", "user.github.io", buf, sizeof(buf));
	assert_string_equal(buf, "add \"user.github.io\"");
	policy_admitting("", "localhost", buf, sizeof(buf));
	assert_string_equal(buf, "add \"localhost\"");
	assert_null(policy_wildcard_parent("example.com"));
}

/* The answer is remembered for the last parent only: names below one
 * parent in a row, then another, then the first again, each get their
 * own parent's answer. */
static void test_wildcard_parent_memo_follows_parent(void **state)
{
	static const struct {
		const char *name, *parent;
	} t[] = {
	    {"a.example.com", "example.com"},
	    {"b.example.com", "example.com"},
	    {"x.co.uk", NULL},
	    {"y.co.uk", NULL},
	    {"a.user.github.io", "user.github.io"},
	    {"user.github.io", NULL},
	    {"b.user.github.io", "user.github.io"},
	    {"example.com", NULL},
	    {"c.example.com", "example.com"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *got = policy_wildcard_parent(t[i].name);

		if (t[i].parent == NULL)
			assert_null(got);
		else
			assert_string_equal(got, t[i].parent);
	}
}

static void test_preset_hosts_match_after_add(void **state)
{
	const char *const *names = policy_preset_names();
	size_t checked = 0;

	(void)state;
	for (; *names; names++, checked++) {
		struct policy *p = policy_new();
		const char *const *hosts = policy_preset_hosts(*names);

		assert_int_equal(policy_add_preset(p, *names), 0);
		for (; *hosts; hosts++) {
			char buf[300];
			const char *h = *hosts;

			if (h[0] == '*') {
				snprintf(buf, sizeof(buf), "x%s", h + 1);
				h = buf;
			}
			if (!policy_match_text(p, h))
				fail_msg("preset %s: %s not matched", *names,
					 h);
		}
		assert_false(policy_match_text(p, "evil.example"));
		policy_free(p);
	}
	assert_true(checked > 0);
	/* Spot checks of what a client needs. */
	{
		struct policy *p = policy_new();
		assert_int_equal(policy_add_preset(p, "npm"), 0);
		assert_int_equal(policy_add_preset(p, "kubernetes"), 0);
		assert_true(policy_match_text(p, "registry.npmjs.org"));
		assert_false(policy_match_text(p, "npmjs.org.evil.test"));
		assert_true(policy_match_text(
		    p, "kubernetes.default.svc.cluster.local"));
		assert_false(policy_match_text(p, "svc.cluster.local"));
		policy_free(p);
	}
}

#define LARGE_N 100000

static void test_large_list_matches_correctly(void **state)
{
	struct policy *p = policy_new();
	char buf[128];

	(void)state;
	assert_non_null(p);
	for (unsigned i = 0; i < LARGE_N; i++) {
		const char *why = NULL;
		if (i % 2)
			snprintf(buf, sizeof(buf), "*.w%u.example%u.test", i,
				 i % 97);
		else
			snprintf(buf, sizeof(buf), "host%u.example%u.test", i,
				 i % 97);
		assert_int_equal(policy_add(p, buf, &why), 0);
	}
	assert_int_equal(policy_size(p), LARGE_N);
	for (unsigned i = 0; i < LARGE_N; i += 37) {
		if (i % 2) {
			snprintf(buf, sizeof(buf), "a.b.W%u.example%u.test", i,
				 i % 97);
			assert_true(policy_match_text(p, buf));
			snprintf(buf, sizeof(buf), "w%u.example%u.test", i,
				 i % 97);
			assert_false(policy_match_text(p, buf));
			/* Right name, wrong parent. */
			snprintf(buf, sizeof(buf), "a.w%u.example%u.test", i,
				 (i + 1) % 97);
			assert_false(policy_match_text(p, buf));
		} else {
			snprintf(buf, sizeof(buf), "HOST%u.example%u.test.", i,
				 i % 97);
			assert_true(policy_match_text(p, buf));
			snprintf(buf, sizeof(buf), "x.host%u.example%u.test", i,
				 i % 97);
			assert_false(policy_match_text(p, buf));
			snprintf(buf, sizeof(buf), "host%u.example%u.test",
				 i + LARGE_N, i % 97);
			assert_false(policy_match_text(p, buf));
		}
	}
	assert_false(policy_match_text(p, "example1.test"));
	assert_false(policy_match_text(p, "test"));
	policy_free(p);
}

/* policy_entry_matches agrees with the compiled match: an exact entry
 * that name only, a wildcard every name below its parent, label-aligned. */
static void test_entry_matches_like_the_policy(void **state)
{
	(void)state;
	assert_true(
	    policy_entry_matches("www.example.com", "WWW.Example.com."));
	assert_false(
	    policy_entry_matches("www.example.com", "a.www.example.com"));
	assert_true(policy_entry_matches("*.example.com", "a.b.example.com"));
	assert_false(policy_entry_matches("*.example.com", "example.com"));
	assert_false(policy_entry_matches("*.example.com", "badexample.com"));
	assert_false(policy_entry_matches("*.example.com", ".example.com"));
}

/* The public-suffix test behind the refusal of "*.com" in allow. */
static void test_wildcard_on_public_suffix(void **state)
{
	(void)state;
	if (policy_psl() == NULL)
		skip();
	assert_true(policy_wildcard_on_public_suffix("*.com"));
	assert_true(policy_wildcard_on_public_suffix("*.co.uk"));
	assert_true(policy_wildcard_on_public_suffix("*.github.io"));
	assert_false(policy_wildcard_on_public_suffix("*.example.com"));
	assert_false(policy_wildcard_on_public_suffix("com"));
	assert_false(policy_wildcard_on_public_suffix("*.test"));
	assert_false(policy_wildcard_on_public_suffix("*.internal"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact_matches_only_that_name),
	    cmocka_unit_test(test_wildcard_matches_below_not_itself),
	    cmocka_unit_test(test_match_is_label_aligned),
	    cmocka_unit_test(test_case_and_trailing_dot_ignored),
	    cmocka_unit_test(test_dotted_label_is_one_label),
	    cmocka_unit_test(test_root_and_bad_wire_match_nothing),
	    cmocka_unit_test(test_invalid_text_never_matches),
	    cmocka_unit_test(test_invalid_patterns_give_reason),
	    cmocka_unit_test(test_valid_patterns_accepted),
	    cmocka_unit_test(test_duplicates_counted_once),
	    cmocka_unit_test(test_presets_exist_and_are_valid),
	    cmocka_unit_test(test_unknown_preset_is_enoent),
	    cmocka_unit_test(test_preset_hosts_match_after_add),
	    cmocka_unit_test(test_large_list_matches_correctly),
	    cmocka_unit_test(test_entry_names_what_matched),
	    cmocka_unit_test(test_admitting_wildcard_only_below_registrable),
	    cmocka_unit_test(test_wildcard_parent_memo_follows_parent),
	    cmocka_unit_test(test_entry_matches_like_the_policy),
	    cmocka_unit_test(test_wildcard_on_public_suffix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
