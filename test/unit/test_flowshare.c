// SPDX-License-Identifier: GPL-2.0-or-later
/* The name check's admission per subject (flowshare): a uid holds at most
 * its share of pending flows, and another uid (or a source address
 * without uid) is untouched by it; a release gives the room back; the
 * rate's burst and refill; expiry releases what was never released; a
 * flow admitted twice counts once; the table's bound. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "flow/flowshare.h"

static struct flowtab_key key_n(uint16_t sport)
{
	struct flowtab_key k = {
	    .sport = sport, .dport = 443, .proto = IPPROTO_TCP};

	k.src.family = AF_INET;
	k.dst.family = AF_INET;
	k.src.bytes[0] = 198;
	k.dst.bytes[0] = 198;
	k.dst.bytes[3] = 10;
	return k;
}

static void test_share_per_uid(void **state)
{
	struct flowshare_limits lim = {
	    .pending_max = 4, .burst = 100, .per_s = 100};
	struct flowshare *t = flowshare_new(64, &lim);
	struct flowshare_subject a = {.has_uid = true, .uid = 1000};
	struct flowshare_subject b = {.has_uid = true, .uid = 1001};
	struct flowshare_subject anon = {.has_uid = false};
	struct flowtab_key k;

	(void)state;
	assert_non_null(t);
	anon.src.family = AF_INET;
	for (uint16_t i = 0; i < 4; i++) {
		k = key_n(i);
		assert_int_equal(flowshare_admit(t, &k, &a, 0), 0);
	}
	k = key_n(0);
	assert_int_equal(flowshare_admit(t, &k, &a, 0), 0); /* again: once */
	assert_int_equal(flowshare_pending(t, &a), 4);
	k = key_n(10);
	assert_int_equal(flowshare_admit(t, &k, &a, 0), -EBUSY);
	/* Another uid, and packets without one, keep their own share. */
	assert_int_equal(flowshare_admit(t, &k, &b, 0), 0);
	k = key_n(11);
	assert_int_equal(flowshare_admit(t, &k, &anon, 0), 0);
	assert_int_equal(flowshare_pending(t, &b), 1);
	assert_int_equal(flowshare_pending(t, &anon), 1);
	/* A release gives a's room back; releasing twice changes nothing. */
	k = key_n(2);
	flowshare_release(t, &k);
	flowshare_release(t, &k);
	assert_int_equal(flowshare_pending(t, &a), 3);
	k = key_n(12);
	assert_int_equal(flowshare_admit(t, &k, &a, 0), 0);
	assert_int_equal(flowshare_count(t), 6);
	/* Expiry releases what was never released. */
	flowshare_expire(t, 10000, 5000);
	assert_int_equal(flowshare_count(t), 0);
	assert_int_equal(flowshare_pending(t, &a), 0);
	flowshare_free(t);
}

static void test_rate_burst_and_refill(void **state)
{
	struct flowshare_limits lim = {
	    .pending_max = 1000, .burst = 3, .per_s = 10};
	struct flowshare *t = flowshare_new(64, &lim);
	struct flowshare_subject a = {.has_uid = true, .uid = 7};
	struct flowtab_key k;

	(void)state;
	assert_non_null(t);
	for (uint16_t i = 0; i < 3; i++) {
		k = key_n(i);
		assert_int_equal(flowshare_admit(t, &k, &a, 0), 0);
		flowshare_release(t, &k);
	}
	k = key_n(3);
	assert_int_equal(flowshare_admit(t, &k, &a, 50), -EAGAIN);
	assert_int_equal(flowshare_admit(t, &k, &a, 100), 0); /* 1 token */
	k = key_n(4);
	assert_int_equal(flowshare_admit(t, &k, &a, 100), -EAGAIN);
	assert_int_equal(flowshare_admit(t, &k, &a, 10000), 0);
	flowshare_free(t);
}

static void test_table_bound(void **state)
{
	struct flowshare_limits lim = {
	    .pending_max = 100, .burst = 100, .per_s = 100};
	struct flowshare *t = flowshare_new(2, &lim);
	struct flowshare_subject a = {.has_uid = true, .uid = 7};
	struct flowtab_key k;

	(void)state;
	assert_non_null(t);
	k = key_n(1);
	assert_int_equal(flowshare_admit(t, &k, &a, 0), 0);
	k = key_n(2);
	assert_int_equal(flowshare_admit(t, &k, &a, 0), 0);
	k = key_n(3);
	assert_int_equal(flowshare_admit(t, &k, &a, 0), -ENOSPC);
	assert_null(flowshare_new(0, &lim));
	flowshare_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_share_per_uid),
	    cmocka_unit_test(test_rate_burst_and_refill),
	    cmocka_unit_test(test_table_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
