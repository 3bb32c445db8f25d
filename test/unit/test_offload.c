// SPDX-License-Identifier: GPL-2.0-or-later
/* offload: the work runs in another thread while the loop goes on (a
 * timer in the loop is what the work waits for), every signal blocked
 * there; done runs in the loop's thread, after the work, once; one job
 * at a time; free waits for a running job and calls no done. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "daemon/offload.h"

struct job {
	struct event_base *base;
	struct offload *o;
	pthread_t loop_thread, work_thread;
	int pipe[2];
	bool got_byte, sigterm_blocked, busy_in_done;
	int works, dones, works_at_done;
};

/* Waits (at most 5 s) for the byte the loop's timer writes. */
static void work(void *arg)
{
	struct job *j = arg;
	struct pollfd p = {.fd = j->pipe[0], .events = POLLIN};
	sigset_t set;
	char c;

	j->work_thread = pthread_self();
	pthread_sigmask(SIG_SETMASK, NULL, &set);
	j->sigterm_blocked = sigismember(&set, SIGTERM) == 1;
	j->got_byte = poll(&p, 1, 5000) == 1 && read(j->pipe[0], &c, 1) == 1;
	j->works++;
}

static void done(void *arg)
{
	struct job *j = arg;

	j->dones++;
	j->works_at_done = j->works;
	j->busy_in_done = offload_busy(j->o);
	assert_true(pthread_equal(pthread_self(), j->loop_thread));
	event_base_loopbreak(j->base);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct job *j = arg;

	(void)fd;
	(void)what;
	assert_int_equal(write(j->pipe[1], "x", 1), 1);
}

static void job_open(struct job *j)
{
	*j = (struct job){0};
	j->base = event_base_new();
	assert_non_null(j->base);
	j->o = offload_new(j->base);
	assert_non_null(j->o);
	assert_int_equal(pipe(j->pipe), 0);
	j->loop_thread = pthread_self();
}

static void job_close(struct job *j)
{
	offload_free(j->o);
	close(j->pipe[0]);
	close(j->pipe[1]);
	event_base_free(j->base);
}

static void runs_beside_the_loop(void **state)
{
	struct timeval tv = {.tv_usec = 10000};
	struct event *t;
	struct job j;

	(void)state;
	job_open(&j);
	t = evtimer_new(j.base, on_timer, &j);
	assert_non_null(t);
	assert_int_equal(evtimer_add(t, &tv), 0);
	assert_int_equal(offload_run(j.o, work, done, &j), 0);
	assert_true(offload_busy(j.o));
	assert_int_equal(offload_run(j.o, work, done, &j), -EBUSY);
	assert_int_equal(event_base_dispatch(j.base), 0);
	assert_true(j.got_byte); /* the loop's timer ran during the work */
	assert_false(pthread_equal(j.work_thread, j.loop_thread));
	assert_true(j.sigterm_blocked);
	assert_int_equal(j.dones, 1);
	assert_int_equal(j.works_at_done, 1);
	assert_false(j.busy_in_done);
	assert_false(offload_busy(j.o));
	/* and again, on the same offload */
	assert_int_equal(evtimer_add(t, &tv), 0);
	assert_int_equal(offload_run(j.o, work, done, &j), 0);
	assert_int_equal(event_base_dispatch(j.base), 0);
	assert_int_equal(j.works, 2);
	assert_int_equal(j.dones, 2);
	event_free(t);
	job_close(&j);
}

static void free_waits_for_the_work(void **state)
{
	struct job j;

	(void)state;
	job_open(&j);
	assert_int_equal(offload_run(j.o, work, done, &j), 0);
	assert_int_equal(write(j.pipe[1], "x", 1), 1);
	offload_free(j.o);
	j.o = NULL;
	assert_int_equal(j.works, 1);
	assert_true(j.got_byte);
	assert_int_equal(j.dones, 0);
	job_close(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(runs_beside_the_loop),
	    cmocka_unit_test(free_waits_for_the_work),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
