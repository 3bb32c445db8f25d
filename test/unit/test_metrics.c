// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of metrics.c's pure parts: the kernel's line of the name
 * check's queue, and the exposition of its verdicts and queue. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "base/stats.h"
#include "observe/metrics.h"

/* Two queues bound, as nfnetlink_queue prints them (Linux 6.1). */
static const char proc[] =
    "    0  12345     0 2 65531     0     0        0  1\n"
    " 4453 2210000     7 2 65535    42     3     1234  1\n";

static void queue_line_of_our_number(void **state)
{
	struct metrics_queue q = {0};

	(void)state;
	assert_int_equal(metrics_queue_parse(proc, 4453, &q), 0);
	assert_int_equal(q.depth, 7);
	assert_int_equal(q.full_dropped, 42);
	assert_int_equal(q.send_dropped, 3);
	assert_int_equal(metrics_queue_parse(proc, 4454, &q), -ENOENT);
	assert_int_equal(metrics_queue_parse("", 4453, &q), -ENOENT);
	assert_int_equal(metrics_queue_parse("4453 x\n", 4453, &q), -EINVAL);
}

static char *render(const struct metrics_queue *q)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *text;

	assert_non_null(b);
	assert_int_equal(metrics_render(b, 1, 2, q), 0);
	n = evbuffer_get_length(b);
	text = malloc(n + 1);
	assert_non_null(text);
	evbuffer_remove(b, text, n);
	text[n] = '\0';
	evbuffer_free(b);
	return text;
}

static void verdicts_by_reason_and_queue_rendered(void **state)
{
	struct metrics_queue q = {
	    .depth = 5, .full_dropped = 9, .send_dropped = 1};
	char *t;

	(void)state;
	stats_reset();
	stats_add(STAT_FLOW_CHECKED, 4);
	stats_inc(STAT_FLOW_ACCEPTED);
	stats_add(STAT_FLOW_NOT_ALLOWED, 2);
	stats_inc(STAT_FLOW_BUSY);
	t = render(&q);
	assert_non_null(
	    strstr(t, "\ndnsfence_name_check_flows_checked_total 4\n"));
	assert_non_null(strstr(
	    t, "\ndnsfence_name_check_flows_total{result=\"accepted\"} 1\n"));
	assert_non_null(strstr(t, "\ndnsfence_name_check_flows_total{result="
				  "\"refused\",reason=\"not_allowed\"} 2\n"));
	assert_non_null(strstr(t, "\ndnsfence_name_check_flows_total{result="
				  "\"refused\",reason=\"busy\"} 1\n"));
	assert_non_null(strstr(t, "\ndnsfence_name_check_queue_depth 5\n"));
	assert_non_null(strstr(t, "\ndnsfence_name_check_queue_dropped_total{"
				  "reason=\"full\"} 9\n"));
	assert_non_null(strstr(t, "\ndnsfence_name_check_queue_dropped_total{"
				  "reason=\"unsent\"} 1\n"));
	assert_null(strstr(t, "dnsfence_flow_"));
	free(t);
	t = render(NULL);
	assert_non_null(
	    strstr(t, "# TYPE dnsfence_name_check_queue_depth gauge"));
	assert_null(strstr(t, "\ndnsfence_name_check_queue_depth "));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(queue_line_of_our_number),
	    cmocka_unit_test(verdicts_by_reason_and_queue_rendered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
