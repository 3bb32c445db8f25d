// SPDX-License-Identifier: GPL-2.0-or-later
/* The DNS process's sandbox (daemon/sandbox.c), in a forked child as
 * root: after sandbox_enter it holds no capability (CapEff, CapPrm,
 * CapInh, CapAmb and CapBnd all 0), NoNewPrivs 1, Seccomp 2; a libevent
 * loop with a socket read, a timer and a thread still runs in it (the
 * positive control), and an execve or a ptrace kills it with SIGSYS. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "daemon/sandbox.h"

#define NOBODY 65534

enum act { ACT_STATUS, ACT_LOOP, ACT_EXEC, ACT_PTRACE };

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	char c;

	(void)what;
	if (read(fd, &c, 1) == 1)
		event_base_loopbreak(arg);
}

static void *thread_main(void *arg)
{
	return arg;
}

/* What the child does inside the sandbox; its exit status says how it
 * went (0 fine), a kill by signal is the filter's. */
static int act(enum act what, int out)
{
	struct event_base *base;
	struct event *ev;
	pthread_t t;
	static int token;
	void *ret = NULL;
	int sv[2];
	char line[256];
	FILE *f;

	switch (what) {
	case ACT_STATUS:
		f = fopen("/proc/self/status", "re");
		if (f == NULL)
			return 10;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "Cap", 3) == 0 ||
			    strncmp(line, "NoNewPrivs", 10) == 0 ||
			    strncmp(line, "Seccomp:", 8) == 0 ||
			    strncmp(line, "Uid:", 4) == 0)
				(void)!write(out, line, strlen(line));
		}
		fclose(f);
		return 0;
	case ACT_LOOP:
		base = event_base_new();
		if (base == NULL ||
		    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
			return 11;
		ev = event_new(base, sv[0], EV_READ, on_read, base);
		if (ev == NULL || event_add(ev, NULL) != 0 ||
		    write(sv[1], "x", 1) != 1)
			return 12;
		if (event_base_dispatch(base) < 0)
			return 13;
		if (pthread_create(&t, NULL, thread_main, &token) != 0 ||
		    pthread_join(t, &ret) != 0 || ret != &token)
			return 14;
		event_free(ev);
		event_base_free(base);
		return 0;
	case ACT_EXEC:
		execl("/bin/true", "true", (char *)NULL);
		return 15;
	case ACT_PTRACE:
		(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		return 16;
	}
	return 17;
}

/* Fork, enter the sandbox, act; the wait status, and what the child
 * wrote into buf. */
static int in_sandbox(enum act what, char *buf, size_t cap)
{
	int p[2], status = 0;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256];

		close(p[0]);
		if (sandbox_enter(NOBODY, NOBODY, err, sizeof(err)) != 0) {
			(void)!write(p[1], err, strlen(err));
			_exit(9);
		}
		_exit(act(what, p[1]));
	}
	close(p[1]);
	while (len + 1 < cap && (n = read(p[0], buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_holds_nothing(void **state)
{
	static const char *const want[] = {"CapInh:\t0000000000000000",
					   "CapPrm:\t0000000000000000",
					   "CapEff:\t0000000000000000",
					   "CapBnd:\t0000000000000000",
					   "CapAmb:\t0000000000000000",
					   "NoNewPrivs:\t1",
					   "Seccomp:\t2",
					   "Uid:\t65534\t65534\t65534\t65534"};
	char buf[4096];
	int status;

	(void)state;
	status = in_sandbox(ACT_STATUS, buf, sizeof(buf));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the child did not report (status %#x): %s", status,
			 buf);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (strstr(buf, want[i]) == NULL)
			fail_msg("no '%s' in:\n%s", want[i], buf);
	}
}

static void test_loop_runs(void **state)
{
	char buf[512];
	int status;

	(void)state;
	status = in_sandbox(ACT_LOOP, buf, sizeof(buf));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the loop did not run in the sandbox (status %#x): %s",
			 status, buf);
}

static void test_outside_the_filter_kills(void **state)
{
	char buf[512];
	int status;

	(void)state;
	status = in_sandbox(ACT_EXEC, buf, sizeof(buf));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		fail_msg("execve: status %#x, not killed by SIGSYS: %s", status,
			 buf);
	status = in_sandbox(ACT_PTRACE, buf, sizeof(buf));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		fail_msg("ptrace: status %#x, not killed by SIGSYS: %s", status,
			 buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_holds_nothing),
	    cmocka_unit_test(test_loop_runs),
	    cmocka_unit_test(test_outside_the_filter_kills),
	};

	if (geteuid() != 0) {
		fprintf(stderr,
			"test_sandbox: needs root (setuid to nobody)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
