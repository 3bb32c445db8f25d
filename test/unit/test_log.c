// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the log rate limit: the token bucket (a burst, then a
 * steady rate), and log_limited() writing a "N similar messages
 * suppressed" line before the next line of its class; log_limited_take,
 * its two-step form, on the same bucket and count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixtures.h"

#include "base/log.h"

static void bucket_gives_a_burst_then_the_rate(void **state)
{
	struct log_bucket b = {0};
	int n = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		n += log_bucket_take(&b, 1000);
	assert_int_equal(n, LOG_BURST);
	assert_int_equal(b.suppressed, 100 - LOG_BURST);
	/* One second later: LOG_RATE more. */
	n = 0;
	for (int i = 0; i < 100; i++)
		n += log_bucket_take(&b, 2000);
	assert_int_equal(n, LOG_RATE);
	/* Ten seconds of one try every 10 ms: about LOG_RATE a second. */
	n = 0;
	for (uint64_t t = 2000; t < 12000; t += 10)
		n += log_bucket_take(&b, t);
	assert_in_range(n, 10 * LOG_RATE - 1, 10 * LOG_RATE + 1);
	/* Idle long enough: the burst again, not more. */
	n = 0;
	for (int i = 0; i < 100; i++)
		n += log_bucket_take(&b, 100000);
	assert_int_equal(n, LOG_BURST);
}

static void bucket_survives_time_going_backwards(void **state)
{
	struct log_bucket b = {0};
	int n = 0;

	(void)state;
	for (int i = 0; i < 30; i++)
		n += log_bucket_take(&b, 5000);
	for (int i = 0; i < 30; i++)
		n += log_bucket_take(&b, 4000);
	assert_int_equal(n, LOG_BURST);
}

/* Count the lines of stderr written while fn runs; the last one that
 * says "suppressed" goes to last. */
static int stderr_lines(void (*fn)(void *), char *last, size_t cap)
{
	static char text[16384];
	int lines = 0;

	fixture_stderr(fn, NULL, text, sizeof(text));
	last[0] = '\0';
	for (char *line = strtok(text, "\n"); line != NULL;
	     line = strtok(NULL, "\n")) {
		lines++;
		if (strstr(line, "suppressed") != NULL)
			snprintf(last, cap, "%s", line);
	}
	return lines;
}

static void flood_of_denied(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		log_limited(LOG_CLASS_DENIED, LOGL_INFO, "policy",
			    "denied d%d.evil.test", i);
	sleep(1);
	log_limited(LOG_CLASS_DENIED, LOGL_INFO, "policy", "denied last");
	/* Another class has its own bucket. */
	log_limited(LOG_CLASS_UPSTREAM, LOGL_WARN, "upstream", "no answer");
	/* Below the level: not written, not counted. */
	log_limited(LOG_CLASS_SETS, LOGL_DEBUG, "sets", "quiet");
}

static void limited_writes_a_suppressed_line(void **state)
{
	char sup[2048];
	int lines;

	(void)state;
	log_setup(LOGL_INFO, LOG_FORMAT_TEXT, false);
	lines = stderr_lines(flood_of_denied, sup, sizeof(sup));
	/* burst + suppressed line + "denied last" + upstream line */
	assert_int_equal(lines, LOG_BURST + 3);
	assert_non_null(strstr(sup, "980 similar messages suppressed"));
	assert_int_equal(log_suppressed_total(), 980);
}

/* log_limited_take: the same bucket and count as log_limited. */
static int taken;
static void flood_taken(void *arg)
{
	(void)arg;
	taken = 0;
	for (int i = 0; i < 100; i++)
		taken +=
		    log_limited_take(LOG_CLASS_CLIENT, LOGL_WARN, "server");
	/* a line of the class through log_limited: suppressed too */
	log_limited(LOG_CLASS_CLIENT, LOGL_WARN, "server", "one more");
	/* below the level: not written, not counted */
	assert_false(log_limited_take(LOG_CLASS_CLIENT, LOGL_DEBUG, "server"));
	usleep(2 * 1000000 / LOG_RATE);
	/* the next token writes the count first */
	assert_true(log_limited_take(LOG_CLASS_CLIENT, LOGL_WARN, "server"));
	log_warn("server", "the line after the flood");
}

static void take_shares_the_bucket_and_the_count(void **state)
{
	uint64_t before = log_suppressed_total();
	char sup[2048];
	int lines;

	(void)state;
	log_setup(LOGL_INFO, LOG_FORMAT_TEXT, false);
	lines = stderr_lines(flood_taken, sup, sizeof(sup));
	assert_int_equal(taken, LOG_BURST);
	/* the suppressed line and the line after the flood; the taken
	 * tokens wrote nothing themselves */
	assert_int_equal(lines, 2);
	assert_non_null(strstr(sup, "81 similar messages suppressed"));
	assert_int_equal(log_suppressed_total() - before, 100 - LOG_BURST + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bucket_gives_a_burst_then_the_rate),
	    cmocka_unit_test(bucket_survives_time_going_backwards),
	    cmocka_unit_test(limited_writes_a_suppressed_line),
	    cmocka_unit_test(take_shares_the_bucket_and_the_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
