// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the answer cache: hits, expiry, replacement, LRU eviction
 * by count and by bytes, and references that outlive eviction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "resolve/cache.h"

static const uint8_t answer[] = {0x12, 0x34, 0x81, 0x80, 0, 1,
				 0,    1,    0,	   0,	 0, 0};

static int put(struct cache *c, const char *key, uint32_t ttl, uint64_t now)
{
	struct dns_addr a = {.addr = {.family = 2, .bytes = {198, 18, 1, 10}},
			     .ttl = ttl};

	return cache_put(c, (const uint8_t *)key, strlen(key), answer,
			 sizeof(answer), &a, 1, ttl, now);
}

static const struct cache_entry *get(struct cache *c, const char *key,
				     uint64_t now)
{
	return cache_get(c, (const uint8_t *)key, strlen(key), now);
}

static void hit_returns_copies_until_ttl_ends(void **state)
{
	struct cache *c = cache_new(10, 1 << 20);
	const struct cache_entry *e;

	(void)state;
	assert_int_equal(put(c, "www", 60, 1000), 0);
	e = get(c, "www", 1000 + 59999);
	assert_non_null(e);
	assert_memory_equal(e->answer, answer, sizeof(answer));
	assert_int_equal(e->len, sizeof(answer));
	assert_int_equal(e->n_addrs, 1);
	assert_int_equal(e->addrs[0].addr.bytes[3], 10);
	assert_int_equal(e->stored_ms, 1000);
	assert_int_equal(e->ttl, 60);
	cache_release(c, e);
	/* At stored + ttl the entry is gone, and dropped. */
	assert_null(get(c, "www", 1000 + 60000));
	assert_int_equal(cache_count(c), 0);
	assert_null(get(c, "other", 1000));
	cache_free(c);
}

static void put_replaces_the_older_answer(void **state)
{
	struct cache *c = cache_new(10, 1 << 20);
	const struct cache_entry *e;

	(void)state;
	assert_int_equal(put(c, "www", 60, 0), 0);
	assert_int_equal(put(c, "www", 5, 1000), 0);
	assert_int_equal(cache_count(c), 1);
	e = get(c, "www", 1000);
	assert_non_null(e);
	assert_int_equal(e->ttl, 5);
	cache_release(c, e);
	cache_free(c);
}

static void least_recently_used_goes_first(void **state)
{
	struct cache *c = cache_new(2, 1 << 20);
	const struct cache_entry *e;

	(void)state;
	assert_int_equal(put(c, "a", 60, 0), 0);
	assert_int_equal(put(c, "b", 60, 0), 0);
	e = get(c, "a", 1); /* a is now the most recent */
	cache_release(c, e);
	assert_int_equal(put(c, "c", 60, 2), 0);
	assert_int_equal(cache_count(c), 2);
	assert_null(get(c, "b", 3));
	e = get(c, "a", 3);
	assert_non_null(e);
	cache_release(c, e);
	e = get(c, "c", 3);
	assert_non_null(e);
	cache_release(c, e);
	cache_free(c);
}

static void byte_limit_evicts_least_recent(void **state)
{
	/* 1000-byte answers and 2,500 bytes of room: two fit, three do not
	 * (each entry also carries its bookkeeping). */
	struct cache *c = cache_new(100, 2500);
	uint8_t big[1000] = {0};
	const char *keys[] = {"a", "b", "c"};

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(cache_put(c, (const uint8_t *)keys[i], 1, big,
					   sizeof(big), NULL, 0, 60, 0),
				 0);
	assert_int_equal(cache_count(c), 2);
	assert_null(get(c, "a", 0));
	assert_int_equal(put(c, "z", 0, 0), -EINVAL);
	cache_free(c);
}

static void oversize_answer_is_refused(void **state)
{
	struct cache *c = cache_new(100, 2500);
	uint8_t big[4096] = {0};

	(void)state;
	assert_int_equal(cache_put(c, (const uint8_t *)"d", 1, big, sizeof(big),
				   NULL, 0, 60, 0),
			 -E2BIG);
	assert_int_equal(cache_count(c), 0);
	cache_free(c);
}

static void reference_outlives_eviction(void **state)
{
	struct cache *c = cache_new(1, 1 << 20);
	const struct cache_entry *e;

	(void)state;
	assert_int_equal(put(c, "a", 60, 0), 0);
	e = get(c, "a", 0);
	assert_non_null(e);
	assert_int_equal(put(c, "b", 60, 0), 0); /* evicts a */
	assert_null(get(c, "a", 0));
	/* Still readable by its holder (ASan would flag a use after free). */
	assert_memory_equal(e->answer, answer, sizeof(answer));
	cache_release(c, e);
	cache_free(c);
}

static void many_keys_all_found(void **state)
{
	struct cache *c = cache_new(5000, 1 << 24);
	char key[32];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "name-%d", i);
		assert_int_equal(put(c, key, 60, 0), 0);
	}
	for (int i = 0; i < 5000; i++) {
		const struct cache_entry *e;

		snprintf(key, sizeof(key), "name-%d", i);
		e = get(c, key, 1);
		assert_non_null(e);
		cache_release(c, e);
	}
	cache_free(c);
}

/* serve-stale: an expired entry is kept for the stale window, for
 * cache_get_stale only; after the window it is gone. */
static void stale_entries_only_for_get_stale(void **state)
{
	struct cache *c = cache_new(10, 1 << 20);
	const struct cache_entry *e;

	(void)state;
	cache_set_stale(c, 60);
	assert_int_equal(put(c, "k", 5, 1000), 0);
	assert_null(get(c, "k", 6000));
	e = cache_get_stale(c, (const uint8_t *)"k", 1, 6000);
	assert_non_null(e);
	assert_int_equal(e->ttl, 5);
	cache_release(c, e);
	assert_int_equal(cache_count(c), 1);
	e = cache_get_stale(c, (const uint8_t *)"k", 1, 1000 + 65000);
	assert_null(e);
	assert_int_equal(cache_count(c), 0);
	cache_free(c);
}

static void without_stale_window_expired_is_dropped(void **state)
{
	struct cache *c = cache_new(10, 1 << 20);

	(void)state;
	assert_int_equal(put(c, "k", 5, 1000), 0);
	assert_null(get(c, "k", 6000));
	assert_null(cache_get_stale(c, (const uint8_t *)"k", 1, 6000));
	assert_int_equal(cache_count(c), 0);
	cache_free(c);
}

/* keep() sees each entry's key and its addresses: a reload drops an
 * answer for the address it carries, not only for its name. */
static bool keep_unless_10(void *arg, const uint8_t *key, size_t keylen,
			   const struct cache_entry *e)
{
	size_t *seen = arg;

	(void)key;
	(*seen) += keylen;
	for (size_t i = 0; i < e->n_addrs; i++) {
		if (e->addrs[i].addr.bytes[0] == 10)
			return false;
	}
	return true;
}

static void drop_if_sees_the_addresses(void **state)
{
	struct cache *c = cache_new(10, 1 << 20);
	struct dns_addr priv = {.addr = {.family = 2, .bytes = {10, 1, 2, 3}},
				.ttl = 60};
	const struct cache_entry *e;
	size_t seen = 0;

	(void)state;
	assert_int_equal(put(c, "www", 60, 1000), 0);
	assert_int_equal(cache_put(c, (const uint8_t *)"private", 7, answer,
				   sizeof(answer), &priv, 1, 60, 1000),
			 0);
	assert_int_equal(cache_drop_if(c, keep_unless_10, &seen), 1);
	assert_int_equal(seen, 3 + 7);
	assert_null(get(c, "private", 1001));
	e = get(c, "www", 1001);
	assert_non_null(e);
	cache_release(c, e);
	assert_int_equal(cache_count(c), 1);
	cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hit_returns_copies_until_ttl_ends),
	    cmocka_unit_test(drop_if_sees_the_addresses),
	    cmocka_unit_test(put_replaces_the_older_answer),
	    cmocka_unit_test(least_recently_used_goes_first),
	    cmocka_unit_test(byte_limit_evicts_least_recent),
	    cmocka_unit_test(oversize_answer_is_refused),
	    cmocka_unit_test(reference_outlives_eviction),
	    cmocka_unit_test(many_keys_all_found),
	    cmocka_unit_test(stale_entries_only_for_get_stale),
	    cmocka_unit_test(without_stale_window_expired_is_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
