// SPDX-License-Identifier: GPL-2.0-or-later
/* split: fork and mutual watch of the two processes (see split.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/log.h"
#include "daemon/split.h"

#define SYS "split"

struct split {
	struct event_base *base;
	struct event *chld;
	pid_t pid;
	bool ended;
	int status;
};

static void on_chld(evutil_socket_t sig, short what, void *arg);
static bool reap(struct split *s, int flags);
static void say_how(const struct split *s);

int split_fork(struct event_base *base, split_fn fn, void *arg,
	       struct split **out)
{
	struct split *s = calloc(1, sizeof(*s));
	pid_t parent = getpid();

	if (s == NULL)
		return -ENOMEM;
	s->base = base;
	/* before the fork: a child that dies at once is still seen */
	s->chld = evsignal_new(base, SIGCHLD, on_chld, s);
	if (s->chld == NULL || evsignal_add(s->chld, NULL) != 0) {
		if (s->chld != NULL)
			event_free(s->chld);
		free(s);
		return -ENOMEM;
	}
	s->pid = fork();
	if (s->pid < 0) {
		int rc = -errno;

		event_free(s->chld);
		free(s);
		return rc;
	}
	if (s->pid == 0) {
		/* the death signal is the forking thread's: fork from the
		 * loop's thread, never from a worker that may exit first */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 ||
		    getppid() != parent)
			_exit(1);
		/* libevent's handler would wake the parent's loop */
		signal(SIGCHLD, SIG_DFL);
		_exit(fn(arg));
	}
	*out = s;
	return 0;
}

pid_t split_pid(const struct split *s)
{
	return s->pid;
}

bool split_ended(const struct split *s, int *status)
{
	if (s->ended && status != NULL)
		*status = s->status;
	return s->ended;
}

int split_stop(struct split *s, int wait_ms)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	if (!s->ended && kill(s->pid, SIGTERM) == 0) {
		for (int t = 0; t < wait_ms && !reap(s, WNOHANG); t += 10)
			nanosleep(&tick, NULL);
	}
	if (!s->ended) {
		(void)kill(s->pid, SIGKILL);
		(void)reap(s, 0);
	}
	return s->status;
}

bool split_wait(struct split *s, int wait_ms)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	for (int t = 0; !s->ended && t < wait_ms; t += 10) {
		if (reap(s, WNOHANG)) {
			say_how(s);
			break;
		}
		nanosleep(&tick, NULL);
	}
	return s->ended;
}

void split_free(struct split *s)
{
	if (s == NULL)
		return;
	if (!s->ended) {
		(void)kill(s->pid, SIGKILL);
		(void)reap(s, 0);
	}
	event_free(s->chld);
	free(s);
}

static void on_chld(evutil_socket_t sig, short what, void *arg)
{
	struct split *s = arg;

	(void)sig;
	(void)what;
	if (s->ended || !reap(s, WNOHANG))
		return; /* another child (a prober, iptables) */
	say_how(s);
	event_base_loopbreak(s->base);
}

/* Only the DNS process is reaped here: the daemon's other children are
 * reaped by their owners. true once it has ended. */
static bool reap(struct split *s, int flags)
{
	int status = 0;
	pid_t r;

	do
		r = waitpid(s->pid, &status, flags);
	while (r < 0 && errno == EINTR);
	if (r != s->pid)
		return false;
	s->ended = true;
	s->status = status;
	return true;
}

static void say_how(const struct split *s)
{
	int st = s->status;

	if (WIFSIGNALED(st))
		log_err(SYS,
			"the DNS process (pid %d) was killed by signal %d "
			"(%s)%s: stopping; the fence stays in place",
			(int)s->pid, WTERMSIG(st), strsignal(WTERMSIG(st)),
			WTERMSIG(st) == SIGSYS
			    ? ", a system call outside its seccomp filter"
			    : "");
	else
		log_err(SYS,
			"the DNS process (pid %d) exited with status %d: "
			"stopping; the fence stays in place",
			(int)s->pid, WEXITSTATUS(st));
}
