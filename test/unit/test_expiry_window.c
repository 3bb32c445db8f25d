// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the DNS process's never-shorten map (expiry_new_window):
 * its skip decisions side by side with the full map's (expiry_new, what
 * the DNS process kept before), the adds in flight it carries, forget
 * and clear, and its bound under a flood of unique addresses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sets/expiry.h"

#include "fixtures.h"

#define FRESH 1 /* SETS_FRESH_SECONDS */

/* Both maps, driven by the same calls. */
struct pair {
	struct expiry_map *full, *win;
};

/* An add queued and not yet acked: what was sent for whom. */
struct sent {
	uint32_t n;
	uint64_t exp, at;
};

static void pair_open(struct pair *p, size_t win_max);
static void pair_close(struct pair *p);
static bool add(struct pair *p, uint32_t n, uint64_t want, uint64_t now,
		uint64_t *send_full, uint64_t *send_win);
static void ack(struct pair *p, uint32_t n, uint64_t exp, uint64_t now);
static void fresh_ack_long_enough_skips(void **state);
static void older_ack_is_sent_again(void **state);
static void longer_add_in_flight_is_carried(void **state);
static void forget_and_clear_are_the_same(void **state);
static void same_decisions_as_the_full_map(void **state);
static void never_skips_what_the_full_map_sends(void **state);
static void full_window_sends_instead_of_skipping(void **state);
static void flood_stays_within_the_bound(void **state);

static void pair_open(struct pair *p, size_t win_max)
{
	p->full = expiry_new(1 << 20);
	p->win = expiry_new_window(win_max, FRESH);
	assert_non_null(p->full);
	assert_non_null(p->win);
}

static void pair_close(struct pair *p)
{
	expiry_free(p->full);
	expiry_free(p->win);
}

/* sets_add's step for one address on both maps: true when the window
 * map skips it. A send is noted in flight, as put_add does. */
static bool add(struct pair *p, uint32_t n, uint64_t want, uint64_t now,
		uint64_t *send_full, uint64_t *send_win)
{
	struct netaddr a = fixture_v4(n);
	bool skip_full, skip_win;

	skip_full = expiry_covers(p->full, &a, want, now, FRESH, send_full);
	skip_win = expiry_covers(p->win, &a, want, now, FRESH, send_win);
	if (!skip_full)
		(void)expiry_note_inflight(p->full, &a, *send_full, now);
	if (!skip_win)
		(void)expiry_note_inflight(p->win, &a, *send_win, now);
	if (skip_full)
		*send_full = 0;
	if (skip_win)
		*send_win = 0;
	return skip_win;
}

static void ack(struct pair *p, uint32_t n, uint64_t exp, uint64_t now)
{
	struct netaddr a = fixture_v4(n);

	(void)expiry_note_acked(p->full, &a, exp, now);
	(void)expiry_note_acked(p->win, &a, exp, now);
}

/* acked less than FRESH ago and long enough: skipped by both */
static void fresh_ack_long_enough_skips(void **state)
{
	struct pair p;
	uint64_t f, w;

	(void)state;
	pair_open(&p, 64);
	assert_false(add(&p, 1, 160, 100, &f, &w));
	assert_int_equal(f, 160);
	assert_int_equal(w, 160);
	ack(&p, 1, 160, 100);
	assert_true(add(&p, 1, 150, 100, &f, &w));
	assert_int_equal(f, 0); /* the full map skipped it too */
	assert_true(add(&p, 1, 160, 100, &f, &w));
	/* longer than the entry: sent by both */
	assert_false(add(&p, 1, 170, 100, &f, &w));
	assert_int_equal(f, 170);
	assert_int_equal(w, 170);
	pair_close(&p);
}

/* acked FRESH or more ago: sent by both; the window map no longer knows
 * the acked expiry (the parent's map raises the add to it) */
static void older_ack_is_sent_again(void **state)
{
	struct pair p;
	uint64_t f, w;

	(void)state;
	pair_open(&p, 64);
	assert_false(add(&p, 1, 400, 100, &f, &w));
	ack(&p, 1, 400, 100);
	assert_false(add(&p, 1, 150, 101, &f, &w));
	assert_int_equal(f, 400);
	assert_int_equal(w, 150);
	/* a later want than the old ack: the same send */
	assert_false(add(&p, 1, 500, 102, &f, &w));
	assert_int_equal(f, 500);
	assert_int_equal(w, 500);
	ack(&p, 1, 500, 102);
	assert_true(add(&p, 1, 450, 102, &f, &w));
	assert_int_equal(f, 0);
	/* the window map's entry is gone a second after its ack */
	assert_int_equal(expiry_count(p.win), 1);
	assert_false(add(&p, 2, 200, 103, &f, &w));
	assert_false(add(&p, 1, 450, 103, &f, &w));
	assert_int_equal(f, 500);
	assert_int_equal(w, 450);
	pair_close(&p);
}

/* an add for an address whose longer add is still in flight carries it,
 * however long that add waits for its ack */
static void longer_add_in_flight_is_carried(void **state)
{
	struct pair p;
	uint64_t f, w;

	(void)state;
	pair_open(&p, 64);
	assert_false(add(&p, 1, 400, 100, &f, &w));
	assert_false(add(&p, 1, 150, 100, &f, &w));
	assert_int_equal(f, 400);
	assert_int_equal(w, 400);
	assert_false(add(&p, 1, 150, 105, &f, &w));
	assert_int_equal(w, 400);
	/* a short ack comes: the longer add is still in flight */
	ack(&p, 1, 150, 105);
	assert_false(add(&p, 1, 300, 105, &f, &w));
	assert_int_equal(f, 400);
	assert_int_equal(w, 400);
	ack(&p, 1, 400, 106);
	assert_true(add(&p, 1, 300, 106, &f, &w));
	assert_int_equal(f, 0);
	pair_close(&p);
}

static void forget_and_clear_are_the_same(void **state)
{
	struct pair p;
	struct netaddr a = fixture_v4(1);
	uint64_t f, w;

	(void)state;
	pair_open(&p, 64);
	assert_false(add(&p, 1, 400, 100, &f, &w));
	ack(&p, 1, 400, 100);
	expiry_forget(p.full, &a);
	expiry_forget(p.win, &a);
	assert_false(add(&p, 1, 150, 100, &f, &w));
	assert_int_equal(f, 150);
	assert_int_equal(w, 150);
	ack(&p, 1, 150, 100);
	assert_true(add(&p, 1, 150, 100, &f, &w));
	expiry_clear(p.full);
	expiry_clear(p.win);
	assert_int_equal(expiry_count(p.win), 0);
	assert_false(add(&p, 1, 150, 100, &f, &w));
	assert_int_equal(f, 150);
	assert_int_equal(w, 150);
	pair_close(&p);
}

/* A random run of adds, late acks, dels and clears over 64 addresses,
 * each address asking for an expiry that never goes down (one name's
 * answers: fresh ones from upstream, cached ones aged), as the resolver
 * asks: every skip and every expiry sent is the same in both maps. */
static void same_decisions_as_the_full_map(void **state)
{
	enum { ADDRS = 64, STEPS = 200000 };
	struct pair p;
	uint64_t want[ADDRS] = {0}, ttl[ADDRS], now = 1000;
	struct sent q[4096];
	size_t head = 0, tail = 0, skips = 0, sends = 0;

	(void)state;
	srand(25);
	pair_open(&p, 4096);
	for (size_t i = 0; i < ADDRS; i++)
		ttl[i] = 1 + (uint64_t)(rand() % 30);
	for (size_t step = 0; step < STEPS; step++) {
		int op = rand() % 100;
		uint32_t n = (uint32_t)(rand() % ADDRS);
		uint64_t f, w;

		if (op < 1) {
			now++;
		} else if (op < 60) {
			/* fresh (now + ttl) or from the cache (the last) */
			if (want[n] <= now || rand() % 2 == 0)
				want[n] = now + ttl[n];
			if (add(&p, n, want[n], now, &f, &w))
				skips++;
			else
				sends++;
			assert_int_equal(f, w);
			if (w != 0 && tail - head < 4096)
				q[tail++ % 4096] = (struct sent){n, w, now};
		} else if (op < 95) {
			/* the oldest adds' acks, up to 3 s late */
			for (int k = 0; k < 4 && head < tail; k++, head++) {
				const struct sent *e = &q[head % 4096];

				if (e->at + 3 >= now && rand() % 50 != 0)
					ack(&p, e->n, e->exp, now);
				/* else a failed add: no ack */
			}
		} else if (op < 99) {
			struct netaddr a = fixture_v4(n);

			expiry_forget(p.full, &a);
			expiry_forget(p.win, &a);
		} else if (rand() % 50 == 0) {
			expiry_clear(p.full);
			expiry_clear(p.win);
		}
	}
	/* the run exercised both outcomes */
	assert_true(skips > STEPS / 10);
	assert_true(sends > STEPS / 20);
	pair_close(&p);
}

/* Any wants (an address in the answers of several names with other
 * TTLs): the window map never skips an add the full map sends, and what
 * it sends is never shorter than the want nor longer than the full map's
 * (the parent raises it to the entry's expiry). It sends where the full
 * map skips only after a re-add past the window: the kernel's longer
 * expiry is the parent's to know. */
static void never_skips_what_the_full_map_sends(void **state)
{
	enum { ADDRS = 32, STEPS = 200000 };
	struct pair p;
	uint64_t now = 1000;
	struct sent q[4096];
	size_t head = 0, tail = 0, more = 0;

	(void)state;
	srand(26);
	pair_open(&p, 4096);
	for (size_t step = 0; step < STEPS; step++) {
		int op = rand() % 100;
		uint32_t n = (uint32_t)(rand() % ADDRS);
		uint64_t f, w, want = now + 1 + (uint64_t)(rand() % 60);
		bool skip;

		if (op < 3) {
			now++;
		} else if (op < 60) {
			skip = add(&p, n, want, now, &f, &w);
			if (skip)
				assert_int_equal(f, 0);
			if (!skip) {
				assert_true(w >= want);
				assert_true(f == 0 || w <= f);
				more += f == 0;
				if (tail - head < 4096)
					q[tail++ % 4096] =
					    (struct sent){n, w, now};
			}
		} else if (head < tail) {
			ack(&p, q[head % 4096].n, q[head % 4096].exp, now);
			head++;
		}
	}
	/* the difference exists, and it is rare */
	assert_true(more > 0);
	assert_true(more < STEPS / 20);
	pair_close(&p);
}

/* Full of recent acks: a new address is not remembered, so its add is
 * sent every time (never skipped) until the acks age out. */
static void full_window_sends_instead_of_skipping(void **state)
{
	struct expiry_map *m = expiry_new_window(8, FRESH);
	struct netaddr a;
	uint64_t send;

	(void)state;
	assert_non_null(m);
	for (uint32_t i = 0; i < 8; i++) {
		a = fixture_v4(i);
		assert_int_equal(expiry_note_inflight(m, &a, 200, 100), 0);
		assert_int_equal(expiry_note_acked(m, &a, 200, 100), 0);
	}
	a = fixture_v4(8);
	assert_false(expiry_covers(m, &a, 200, 100, FRESH, &send));
	assert_int_equal(expiry_note_inflight(m, &a, 200, 100), -ENOSPC);
	assert_int_equal(expiry_note_acked(m, &a, 200, 100), -ENOSPC);
	assert_false(expiry_covers(m, &a, 200, 100, FRESH, &send));
	assert_int_equal(send, 200);
	assert_true(expiry_count(m) <= 8);
	/* a second on, the old acks claim nothing: the sweep makes room */
	assert_int_equal(expiry_note_inflight(m, &a, 200, 101), 0);
	assert_int_equal(expiry_note_acked(m, &a, 200, 101), 0);
	assert_true(expiry_covers(m, &a, 200, 101, FRESH, &send));
	assert_int_equal(expiry_count(m), 1);
	expiry_free(m);
}

/* 100,000 unique addresses, 1,000 a second, each acked at once: the
 * full map holds every one, the window never more than its bound. */
static void flood_stays_within_the_bound(void **state)
{
	enum { MAX = 4096 };
	struct pair p;
	uint64_t now = 1000, f, w;

	(void)state;
	pair_open(&p, MAX);
	for (uint32_t i = 0; i < 100000; i++) {
		if (i % 1000 == 0)
			now++;
		(void)add(&p, i, now + 3600, now, &f, &w);
		ack(&p, i, now + 3600, now);
		assert_true(expiry_count(p.win) <= MAX);
	}
	assert_int_equal(expiry_count(p.full), 100000);
	/* the last second's acks are still skipped */
	assert_true(add(&p, 99999, now + 3600, now, &f, &w));
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fresh_ack_long_enough_skips),
	    cmocka_unit_test(older_ack_is_sent_again),
	    cmocka_unit_test(longer_add_in_flight_is_carried),
	    cmocka_unit_test(forget_and_clear_are_the_same),
	    cmocka_unit_test(same_decisions_as_the_full_map),
	    cmocka_unit_test(never_skips_what_the_full_map_sends),
	    cmocka_unit_test(full_window_sends_instead_of_skipping),
	    cmocka_unit_test(flood_stays_within_the_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
