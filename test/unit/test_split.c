// SPDX-License-Identifier: GPL-2.0-or-later
/* The fork and mutual watch of the two processes (daemon/split.c): the
 * parent's loop stops when the child ends, and knows how (an exit
 * status; SIGSYS when the child, in its sandbox, made a call outside the
 * seccomp filter); a clean stop ends a running child; and the child dies
 * with its parent (PR_SET_PDEATHSIG), seen here as the subreaper that
 * inherits and reaps it. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "daemon/sandbox.h"
#include "daemon/split.h"

static int exit_seven(void *arg)
{
	(void)arg;
	return 7;
}

static int forbidden_call(void *arg)
{
	char err[256];

	(void)arg;
	if (sandbox_enter(65534, 65534, err, sizeof(err)) != 0)
		return 9;
	(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	return 10;
}

static int wait_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* wait_forever, once it has said (on the pipe arg points at) that it
 * runs: its death signal is set by then. */
static int ready_then_wait(void *arg)
{
	(void)!write(*(int *)arg, "r", 1);
	return wait_forever(NULL);
}

static void on_too_long(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(bool *)arg = true;
}

/* The loop runs until the child ends (10 s at most: a loop the child's
 * end does not stop fails the test instead of hanging it); its wait
 * status. */
static int run_until_ended(split_fn fn)
{
	struct event_base *base = event_base_new();
	struct timeval tv = {.tv_sec = 10};
	struct split *s = NULL;
	bool too_long = false;
	struct event *timer = evtimer_new(base, on_too_long, &too_long);
	int status = -1;

	assert_int_equal(evtimer_add(timer, &tv), 0);
	assert_int_equal(split_fork(base, fn, NULL, &s), 0);
	assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
	for (int i = 0; i < 50 && !too_long && event_base_got_break(base) == 0;
	     i++)
		assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
	if (!event_base_got_break(base))
		fail_msg("the loop went on after the child ended");
	event_free(timer);
	assert_true(split_ended(s, &status));
	split_free(s);
	event_base_free(base);
	return status;
}

static void test_loop_stops_when_the_child_ends(void **state)
{
	int st;

	(void)state;
	st = run_until_ended(exit_seven);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
	st = run_until_ended(forbidden_call);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
}

static void test_stop_ends_a_running_child(void **state)
{
	struct event_base *base = event_base_new();
	struct split *s = NULL;
	int st;

	(void)state;
	assert_int_equal(split_fork(base, wait_forever, NULL, &s), 0);
	assert_false(split_ended(s, NULL));
	st = split_stop(s, 2000);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_true(split_ended(s, NULL));
	split_free(s);
	event_base_free(base);
}

static void test_child_dies_with_its_parent(void **state)
{
	int p[2], ready[2], st = 0;
	pid_t mid, child = 0;
	char c;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(ready), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		struct event_base *base = event_base_new();
		struct split *s = NULL;

		if (split_fork(base, ready_then_wait, &ready[1], &s) != 0)
			_exit(2);
		child = split_pid(s);
		(void)!write(p[1], &child, sizeof(child));
		for (;;)
			pause();
	}
	assert_int_equal(read(p[0], &child, sizeof(child)), sizeof(child));
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(kill(mid, SIGKILL), 0);
	assert_int_equal(waitpid(mid, NULL, 0), mid);
	/* reparented to us, the subreaper, and killed by its death signal
	 * (given 5 s; then killed here, so a broken death signal fails the
	 * test instead of hanging it) */
	for (int i = 0; i < 500 && waitpid(child, &st, WNOHANG) == 0; i++)
		usleep(10000);
	if (kill(child, 0) == 0) {
		(void)kill(child, SIGTERM);
		(void)waitpid(child, &st, 0);
		fail_msg("the child outlived its parent");
	}
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	close(p[0]);
	close(p[1]);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loop_stops_when_the_child_ends),
	    cmocka_unit_test(test_stop_ends_a_running_child),
	    cmocka_unit_test(test_child_dies_with_its_parent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
