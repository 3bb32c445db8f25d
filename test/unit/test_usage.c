// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the usage counts: each question is counted on the entry
 * the policy matched it with, also when the entry changes from one
 * question to the next (the entry of the last question is remembered),
 * and the answer's addresses on the entry of its question; the names
 * asked keep their last addresses, their entry, survive a restart and
 * stop at USAGE_NAMES_MAX. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <event2/event.h>

#include "config/policy.h"
#include "base/netaddr.h"
#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"
#include "observe/usage.h"

static struct usage_entry *ask(struct usage *u, const struct policy *p,
			       const char *name);
static double count(const cJSON *st, const char *entry, const char *key);
static struct usage *usage_here(struct event_base **base, char *dir);
static void done(struct usage *u, struct event_base *base, char *dir);
static void questions_land_on_their_entries(void **state);
static void answers_count_on_the_question_entry(void **state);
static void names_keep_addresses_and_survive_a_restart(void **state);
static void answer(struct usage *u, struct usage_entry *e, const char *name,
		   size_t n);
static const cJSON *name_of(const cJSON *file, const char *name);

/* One question for name (lower case), as the resolver makes it. */
static struct usage_entry *ask(struct usage *u, const struct policy *p,
			       const char *name)
{
	uint8_t wire[DNS_MAX_NAME];
	size_t len = sizeof(wire);
	struct policy_hit hit;

	assert_int_equal(dns_name_from_text(name, wire, &len), 0);
	return usage_question(
	    u, wire, len, policy_match_hit(p, wire, len, &hit) ? &hit : NULL);
}

static double count(const cJSON *st, const char *entry, const char *key)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(st, entry);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static struct usage *usage_here(struct event_base **base, char *dir)
{
	struct usage *u;

	*base = event_base_new();
	assert_non_null(*base);
	assert_non_null(mkdtemp(dir));
	u = usage_new(*base, open(dir, O_RDONLY | O_DIRECTORY), dir, getuid());
	assert_non_null(u);
	return u;
}

static void done(struct usage *u, struct event_base *base, char *dir)
{
	char path[128];

	usage_free(u);
	snprintf(path, sizeof(path), "%s/%s", dir, USAGE_FILE);
	unlink(path);
	rmdir(dir);
	event_base_free(base);
}

static void questions_land_on_their_entries(void **state)
{
	char dir[] = "/tmp/test_usage.XXXXXX";
	struct event_base *base;
	struct usage *u = usage_here(&base, dir);
	struct policy *p = policy_new();
	const char *why = NULL;
	cJSON *st;

	(void)state;
	assert_int_equal(policy_add(p, "*.a.test", &why), 0);
	assert_int_equal(policy_add(p, "x.a.test", &why), 0);
	assert_int_equal(policy_add(p, "*.b.test", &why), 0);
	/* The same entry twice, then others, then back: each counted where
	 * it belongs, whatever came before. */
	assert_non_null(ask(u, p, "one.a.test"));
	assert_non_null(ask(u, p, "two.a.test"));
	assert_non_null(ask(u, p, "x.a.test"));
	assert_non_null(ask(u, p, "one.b.test"));
	assert_non_null(ask(u, p, "deep.one.a.test"));
	assert_non_null(ask(u, p, "x.a.test"));
	assert_null(ask(u, p, "other.test"));
	assert_non_null(ask(u, p, "b.b.test"));
	st = usage_status(u);
	assert_int_equal(count(st, "*.a.test", "questions"), 3);
	assert_int_equal(count(st, "x.a.test", "questions"), 2);
	assert_int_equal(count(st, "*.b.test", "questions"), 2);
	assert_null(cJSON_GetObjectItemCaseSensitive(st, "other.test"));
	cJSON_Delete(st);
	policy_free(p);
	done(u, base, dir);
}

static void answers_count_on_the_question_entry(void **state)
{
	char dir[] = "/tmp/test_usage.XXXXXX";
	struct event_base *base;
	struct usage *u = usage_here(&base, dir);
	struct policy *p = policy_new();
	struct usage_entry *a, *b;
	const char *why = NULL;
	cJSON *st;

	(void)state;
	assert_int_equal(policy_add(p, "*.a.test", &why), 0);
	assert_int_equal(policy_add(p, "b.test", &why), 0);
	a = ask(u, p, "n1.a.test");
	b = ask(u, p, "b.test");
	/* Answers come back in any order, after other questions. */
	answer(u, a, "n1.a.test", 2);
	answer(u, b, "b.test", 1);
	answer(u, a, "n1.a.test", 3);
	answer(u, NULL, "c.test", 5);
	st = usage_status(u);
	assert_int_equal(count(st, "*.a.test", "addresses"), 5);
	assert_int_equal(count(st, "b.test", "addresses"), 1);
	cJSON_Delete(st);
	policy_free(p);
	done(u, base, dir);
}

/* An answer for name with n addresses, 198.18.9.1 up. */
static void answer(struct usage *u, struct usage_entry *e, const char *name,
		   size_t n)
{
	struct dns_addr addrs[8];
	uint8_t wire[DNS_MAX_NAME];
	size_t len = sizeof(wire);
	char text[32];

	assert_true(n <= 8);
	assert_int_equal(dns_name_from_text(name, wire, &len), 0);
	memset(addrs, 0, sizeof(addrs));
	for (size_t i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "198.18.9.%zu", i + 1);
		assert_int_equal(netaddr_parse(text, &addrs[i].addr), 0);
	}
	usage_answered(u, e, wire, len, addrs, n);
}

static const cJSON *name_of(const cJSON *file, const char *name)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(file, "names"))
	{
		if (strcmp(cJSON_GetStringValue(
			       cJSON_GetObjectItemCaseSensitive(it, "name")),
			   name) == 0)
			return it;
	}
	return NULL;
}

static void names_keep_addresses_and_survive_a_restart(void **state)
{
	char dir[] = "/tmp/test_usage.XXXXXX", name[64];
	struct event_base *base;
	struct usage *u = usage_here(&base, dir);
	struct policy *p = policy_new();
	const char *why = NULL;
	const cJSON *n, *a;
	struct usage_entry *e;
	cJSON *file;
	char *text;

	(void)state;
	assert_int_equal(policy_add(p, "*.a.test", &why), 0);
	e = ask(u, p, "N1.a.test");
	answer(u, e, "n1.a.test", 6); /* 198.18.9.1-6: the last 4 kept */
	assert_null(ask(u, p, "other.test"));
	(void)ask(u, p, "sp\\032ace.a.test"); /* a byte said as an escape */
	/* Restart: written at free, read at new. */
	usage_free(u);
	u = usage_new(base, open(dir, O_RDONLY | O_DIRECTORY), dir, getuid());
	assert_non_null(u);
	for (int i = 0; i < USAGE_NAMES_MAX - 1; i++) {
		snprintf(name, sizeof(name), "x%d.a.test", i);
		(void)ask(u, p, name);
	}
	text = usage_text(u);
	assert_non_null(text);
	file = cJSON_Parse(text);
	free(text);
	n = name_of(file, "n1.a.test");
	assert_non_null(n);
	assert_int_equal(cJSON_GetObjectItem(n, "count")->valuedouble, 1);
	assert_string_equal(
	    cJSON_GetStringValue(cJSON_GetObjectItem(n, "entry")), "*.a.test");
	assert_true(cJSON_GetObjectItem(n, "first_seen")->valuedouble > 0);
	a = cJSON_GetObjectItem(n, "addresses");
	assert_int_equal(cJSON_GetArraySize(a), USAGE_NAME_ADDRS);
	assert_string_equal(cJSON_GetArrayItem(a, 0)->valuestring,
			    "198.18.9.5");
	assert_string_equal(cJSON_GetArrayItem(a, 1)->valuestring,
			    "198.18.9.6");
	assert_null(name_of(file, "other.test"));
	assert_non_null(name_of(file, "sp\\032ace.a.test"));
	/* n1, sp ace and USAGE_NAMES_MAX - 2 others; one past the cap,
	 * counted. */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(file, "names")),
			 USAGE_NAMES_MAX);
	assert_int_equal(
	    cJSON_GetObjectItem(file, "names_dropped")->valuedouble, 1);
	cJSON_Delete(file);
	policy_free(p);
	done(u, base, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(questions_land_on_their_entries),
	    cmocka_unit_test(answers_count_on_the_question_entry),
	    cmocka_unit_test(names_keep_addresses_and_survive_a_restart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
