// SPDX-License-Identifier: GPL-2.0-or-later
/* offload: a function in a thread, its completion in the loop (see
 * offload.h).
 *
 * The thread says it is done through an eventfd the loop watches; the
 * loop joins it there, so done runs between two callbacks, where the
 * loop's own state may change, and no lock is needed: until then the
 * loop leaves alone what work reads, by the caller's contract. One job
 * at a time keeps that contract checkable at the caller (offload_busy).
 * A thread that cannot be made costs the loop the same work inline; the
 * job still completes through the eventfd, so callers have one path. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon/offload.h"

struct offload {
	int fd; /* eventfd: the work is done */
	struct event *ev;
	pthread_t thread;
	bool threaded; /* thread is to be joined */
	bool busy;
	offload_fn work, done;
	void *arg;
};

static void *thread_main(void *arg);
static void signal_done(struct offload *o);
static void on_done(evutil_socket_t fd, short what, void *arg);

struct offload *offload_new(struct event_base *base)
{
	struct offload *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return NULL;
	o->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (o->fd >= 0)
		o->ev =
		    event_new(base, o->fd, EV_READ | EV_PERSIST, on_done, o);
	if (o->ev == NULL || event_add(o->ev, NULL) != 0) {
		offload_free(o);
		return NULL;
	}
	return o;
}

int offload_run(struct offload *o, offload_fn work, offload_fn done, void *arg)
{
	sigset_t all, old;

	if (o->busy)
		return -EBUSY;
	o->busy = true;
	o->work = work;
	o->done = done;
	o->arg = arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	o->threaded = pthread_create(&o->thread, NULL, thread_main, o) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!o->threaded) {
		work(arg);
		signal_done(o);
	}
	return 0;
}

bool offload_busy(const struct offload *o)
{
	return o->busy;
}

void offload_free(struct offload *o)
{
	if (o == NULL)
		return;
	if (o->threaded)
		pthread_join(o->thread, NULL);
	if (o->ev != NULL)
		event_free(o->ev);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
}

static void *thread_main(void *arg)
{
	struct offload *o = arg;

	o->work(o->arg);
	signal_done(o);
	return NULL;
}

/* The counter cannot overflow: the loop reads it after each job. */
static void signal_done(struct offload *o)
{
	uint64_t one = 1;

	while (write(o->fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static void on_done(evutil_socket_t fd, short what, void *arg)
{
	struct offload *o = arg;
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) < 0 || !o->busy)
		return;
	if (o->threaded)
		pthread_join(o->thread, NULL);
	o->threaded = false;
	o->busy = false;
	o->done(o->arg);
}
