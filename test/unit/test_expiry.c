// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the never-shorten map: longer then shorter, expiry, the
 * bound, clear, and the table against a brute-force model.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sets/expiry.h"

#include "fixtures.h"

static struct netaddr v6(uint32_t n);
static uint64_t acked(struct expiry_map *m, uint32_t n, uint64_t now);
static void longer_then_shorter_keeps_longer(void **state);
static void inflight_and_acked_are_separate(void **state);
static void expired_entries_are_forgotten(void **state);
static void families_do_not_collide(void **state);
static void full_map_refuses_new_until_something_expires(void **state);
static void clear_forgets_everything(void **state);
static void bad_sizes_are_refused(void **state);
static void matches_model_under_churn(void **state);
static void inflight_matches_model_under_churn(void **state);
static void longer_inflight_outlives_shorter_ack(void **state);

/* 2001:db8::n */
static struct netaddr v6(uint32_t n)
{
	struct netaddr a = {.family = AF_INET6,
			    .bytes = {0x20, 0x01, 0x0d, 0xb8}};

	a.bytes[12] = (uint8_t)(n >> 24);
	a.bytes[13] = (uint8_t)(n >> 16);
	a.bytes[14] = (uint8_t)(n >> 8);
	a.bytes[15] = (uint8_t)n;
	return a;
}

static uint64_t acked(struct expiry_map *m, uint32_t n, uint64_t now)
{
	struct netaddr a = fixture_v4(n);
	uint64_t v;

	expiry_get(m, &a, now, &v, NULL, NULL);
	return v;
}

static void longer_then_shorter_keeps_longer(void **state)
{
	struct expiry_map *m = expiry_new(16);
	struct netaddr a = fixture_v4(1);

	(void)state;
	assert_int_equal(expiry_note_acked(m, &a, 1000 + 3600, 1000), 0);
	assert_int_equal(expiry_note_acked(m, &a, 1010 + 60, 1010), 0);
	assert_int_equal(acked(m, 1, 1010), 4600);
	assert_int_equal(expiry_note_acked(m, &a, 1020 + 7200, 1020), 0);
	assert_int_equal(acked(m, 1, 1020), 8220);
	expiry_free(m);
}

static void inflight_and_acked_are_separate(void **state)
{
	struct expiry_map *m = expiry_new(16);
	struct netaddr a = fixture_v4(2);
	uint64_t ack, fl;

	(void)state;
	assert_int_equal(expiry_note_inflight(m, &a, 500, 100), 0);
	expiry_get(m, &a, 100, &ack, &fl, NULL);
	assert_int_equal(ack, 0); /* not in the kernel until acked */
	assert_int_equal(fl, 500);
	assert_int_equal(expiry_note_acked(m, &a, 500, 101), 0);
	expiry_get(m, &a, 101, &ack, &fl, NULL);
	assert_int_equal(ack, 500);
	expiry_free(m);
}

static void expired_entries_are_forgotten(void **state)
{
	struct expiry_map *m = expiry_new(16);
	struct netaddr a = fixture_v4(3);

	(void)state;
	assert_int_equal(expiry_note_acked(m, &a, 160, 100), 0);
	assert_int_equal(acked(m, 3, 159), 160);
	assert_int_equal(acked(m, 3, 160), 0);
	assert_int_equal(expiry_count(m), 0);
	/* After expiry a shorter entry is accepted again. */
	assert_int_equal(expiry_note_acked(m, &a, 170, 161), 0);
	assert_int_equal(acked(m, 3, 161), 170);
	assert_int_equal(expiry_note_acked(m, &a, 161, 161), -EINVAL);
	expiry_free(m);
}

static void families_do_not_collide(void **state)
{
	struct expiry_map *m = expiry_new(16);
	struct netaddr a = {.family = AF_INET, .bytes = {198, 18, 0, 1}};
	struct netaddr b = {.family = AF_INET6, .bytes = {198, 18, 0, 1}};
	struct netaddr junk = a;
	uint64_t v;

	(void)state;
	junk.bytes[9] = 0xff; /* bytes past an IPv4 address are ignored */
	assert_int_equal(expiry_note_acked(m, &a, 200, 100), 0);
	expiry_get(m, &b, 100, &v, NULL, NULL);
	assert_int_equal(v, 0);
	expiry_get(m, &junk, 100, &v, NULL, NULL);
	assert_int_equal(v, 200);
	expiry_free(m);
}

static void full_map_refuses_new_until_something_expires(void **state)
{
	struct expiry_map *m = expiry_new(4);
	struct netaddr a;
	uint32_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		a = fixture_v4(i);
		assert_int_equal(
		    expiry_note_acked(m, &a, 100 + 10 * (i + 1), 100), 0);
	}
	a = fixture_v4(9);
	assert_int_equal(expiry_note_acked(m, &a, 500, 100), -ENOSPC);
	/* Existing entries are still raised when full. */
	a = fixture_v4(0);
	assert_int_equal(expiry_note_acked(m, &a, 400, 100), 0);
	/* At 125, fixture_v4(1) (120) has expired: the sweep makes room. */
	a = fixture_v4(9);
	assert_int_equal(expiry_note_acked(m, &a, 500, 125), 0);
	assert_int_equal(acked(m, 9, 125), 500);
	assert_int_equal(acked(m, 0, 125), 400);
	assert_int_equal(acked(m, 1, 125), 0);
	assert_true(expiry_count(m) <= 4);
	expiry_free(m);
}

static void clear_forgets_everything(void **state)
{
	struct expiry_map *m = expiry_new(8);
	struct netaddr a = fixture_v4(5);

	(void)state;
	assert_int_equal(expiry_note_acked(m, &a, 900, 100), 0);
	expiry_clear(m);
	assert_int_equal(expiry_count(m), 0);
	assert_int_equal(acked(m, 5, 100), 0);
	expiry_free(m);
}

static void bad_sizes_are_refused(void **state)
{
	(void)state;
	assert_null(expiry_new(0));
	assert_null(expiry_new((size_t)1 << 40));
}

/* Random inserts with expiries and time moving on, checked against a plain
 * array: exercises probing and backward-shift deletion. */
static void matches_model_under_churn(void **state)
{
	enum { KEYS = 3000, MAX = 2048, STEPS = 200000 };
	static uint64_t model[KEYS];
	struct expiry_map *m = expiry_new(MAX);
	uint64_t now = 1000, live;
	uint32_t rnd = 12345;
	int step, k;

	(void)state;
	memset(model, 0, sizeof(model));
	for (step = 0; step < STEPS; step++) {
		struct netaddr a;
		uint64_t exp, got;
		int r;

		rnd = rnd * 1103515245u + 12345u;
		k = (int)((rnd >> 8) % KEYS);
		a = fixture_v4((uint32_t)k);
		if (step % 50 == 0)
			now++;
		exp = now + 1 + (rnd >> 20) % 40;
		r = expiry_note_acked(m, &a, exp, now);
		if (r == 0) {
			if (model[k] <= now || exp > model[k])
				model[k] = exp;
		} else {
			assert_int_equal(r, -ENOSPC);
			assert_true(model[k] <= now);
		}
		got = acked(m, (uint32_t)k, now);
		assert_int_equal(got, model[k] > now ? model[k] : 0);
	}
	live = 0;
	for (k = 0; k < KEYS; k++) {
		assert_int_equal(acked(m, (uint32_t)k, now),
				 model[k] > now ? model[k] : 0);
		live += model[k] > now;
	}
	assert_true(live <= MAX);
	expiry_free(m);
}

/* An add in flight that reaches beyond the ack that comes first (a
 * shorter add sent before it) still counts after that ack, until its own
 * ack; one that ends sooner than the ack is not reported. */
static void longer_inflight_outlives_shorter_ack(void **state)
{
	struct expiry_map *m = expiry_new(16);
	struct netaddr a = v6(7);
	uint64_t ack, fl, at;

	(void)state;
	assert_int_equal(expiry_note_inflight(m, &a, 200, 100), 0);
	assert_int_equal(expiry_note_inflight(m, &a, 900, 100), 0);
	assert_int_equal(expiry_note_acked(m, &a, 200, 101), 0);
	expiry_get(m, &a, 101, &ack, &fl, &at);
	assert_int_equal(ack, 200);
	assert_int_equal(fl, 900);
	assert_int_equal(at, 101);
	/* Past the first ack's expiry the entry lives on the add in flight. */
	expiry_get(m, &a, 300, &ack, &fl, &at);
	assert_int_equal(ack, 0);
	assert_int_equal(fl, 900);
	assert_int_equal(expiry_count(m), 1);
	assert_int_equal(expiry_note_acked(m, &a, 900, 301), 0);
	expiry_get(m, &a, 301, &ack, &fl, &at);
	assert_int_equal(ack, 900);
	assert_int_equal(fl, 0);
	assert_int_equal(at, 301);
	/* A shorter add in flight changes nothing a caller sees. */
	assert_int_equal(expiry_note_inflight(m, &a, 400, 302), 0);
	expiry_get(m, &a, 302, &ack, &fl, NULL);
	assert_int_equal(ack, 900);
	assert_int_equal(fl, 0);
	expiry_forget(m, &a);
	expiry_get(m, &a, 302, &ack, &fl, NULL);
	assert_int_equal(ack + fl, 0);
	assert_int_equal(expiry_count(m), 0);
	expiry_free(m);
}

/* Adds in flight, acks, forgets and clears on both families, time moving
 * on, against a model of the three times: the acked expiry, when it was
 * acked, and the latest expiry the entry may reach (the later of the ack
 * and any add in flight), which is what the sets send next. */
static void inflight_matches_model_under_churn(void **state)
{
	enum { KEYS = 1500, MAX = 1024, STEPS = 200000 };
	static uint64_t m_ack[2 * KEYS], m_fl[2 * KEYS], m_at[2 * KEYS];
	struct expiry_map *m = expiry_new(MAX);
	uint64_t now = 1000;
	uint32_t rnd = 777;

	(void)state;
	memset(m_ack, 0, sizeof(m_ack));
	memset(m_fl, 0, sizeof(m_fl));
	memset(m_at, 0, sizeof(m_at));
	for (int step = 0; step < STEPS; step++) {
		struct netaddr a;
		uint64_t exp, ack, fl, at, want;
		int k, op, r;

		rnd = rnd * 1103515245u + 12345u;
		k = (int)((rnd >> 8) % (2 * KEYS));
		op = (int)((rnd >> 4) % 16);
		a = k < KEYS ? fixture_v4((uint32_t)k)
			     : v6((uint32_t)(k - KEYS));
		if (step % 40 == 0)
			now++;
		exp = now + 1 + (rnd >> 20) % 60;
		if (op == 0) {
			expiry_forget(m, &a);
			m_ack[k] = m_fl[k] = 0;
		} else if (op == 1 && step % 997 == 0) {
			expiry_clear(m);
			memset(m_ack, 0, sizeof(m_ack));
			memset(m_fl, 0, sizeof(m_fl));
		} else {
			bool live = m_ack[k] > now || m_fl[k] > now;

			r = op < 8 ? expiry_note_inflight(m, &a, exp, now)
				   : expiry_note_acked(m, &a, exp, now);
			if (r != 0) {
				assert_int_equal(r, -ENOSPC);
				assert_false(live);
			} else {
				if (m_ack[k] <= now)
					m_ack[k] = 0;
				if (m_fl[k] <= now)
					m_fl[k] = 0;
				if (op < 8 && exp > m_fl[k])
					m_fl[k] = exp;
				if (op >= 8 && exp > m_ack[k])
					m_ack[k] = exp;
				if (op >= 8)
					m_at[k] = now;
			}
		}
		expiry_get(m, &a, now, &ack, &fl, &at);
		assert_int_equal(ack, m_ack[k] > now ? m_ack[k] : 0);
		if (ack != 0)
			assert_int_equal(at, m_at[k]);
		want = m_ack[k] > m_fl[k] ? m_ack[k] : m_fl[k];
		assert_int_equal(ack > fl ? ack : fl, want > now ? want : 0);
	}
	assert_true(expiry_count(m) <= MAX);
	expiry_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(longer_then_shorter_keeps_longer),
	    cmocka_unit_test(inflight_and_acked_are_separate),
	    cmocka_unit_test(expired_entries_are_forgotten),
	    cmocka_unit_test(families_do_not_collide),
	    cmocka_unit_test(full_map_refuses_new_until_something_expires),
	    cmocka_unit_test(clear_forgets_everything),
	    cmocka_unit_test(bad_sizes_are_refused),
	    cmocka_unit_test(matches_model_under_churn),
	    cmocka_unit_test(inflight_matches_model_under_churn),
	    cmocka_unit_test(longer_inflight_outlives_shorter_ack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
