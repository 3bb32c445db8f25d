// SPDX-License-Identifier: GPL-2.0-or-later
/* watch: the config file's directory under inotify (see watch.h).
 *
 * The directory, not the file: editors replace a file by renaming a new
 * one over it, and a ConfigMap volume changes by creating a new
 * "..TIMESTAMP" directory and renaming a "..data_tmp" symlink over
 * "..data", which the config file's own symlink goes through. Events for
 * the file's name and for names starting with ".." start a short timer;
 * when it fires, one reload runs. A reload of an unchanged file does
 * nothing (reload.c compares the configs), so a false alarm is cheap. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/log.h"
#include "daemon/reload.h"
#include "daemon/watch.h"

#define SYS "watch"
#define EV_MASK                                                                \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB |    \
	 IN_MOVED_FROM)

struct watch {
	struct reload *rl;
	int fd;
	char base[NAME_MAX + 1];
	struct event *read_ev, *settle_ev;
};

static void on_inotify(evutil_socket_t fd, short what, void *arg);
static void on_settled(evutil_socket_t fd, short what, void *arg);
static bool relevant(const struct watch *w, const struct inotify_event *ev);

struct watch *watch_new(struct event_base *base, const char *path,
			struct reload *rl)
{
	struct watch *w = calloc(1, sizeof(*w));
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (w == NULL)
		return NULL;
	w->rl = rl;
	w->fd = -1;
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(w->base, sizeof(w->base), "%s",
		 slash != NULL ? slash + 1 : path);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0 || inotify_add_watch(w->fd, dir, EV_MASK) < 0) {
		log_warn(SYS,
			 "cannot watch %s: %s; reload with SIGHUP or "
			 "'dnsfence reload'",
			 dir, strerror(errno));
		goto fail;
	}
	w->read_ev =
	    event_new(base, w->fd, EV_READ | EV_PERSIST, on_inotify, w);
	w->settle_ev = evtimer_new(base, on_settled, w);
	if (w->read_ev == NULL || w->settle_ev == NULL ||
	    event_add(w->read_ev, NULL) != 0)
		goto fail;
	log_info(SYS, "reloading when %s changes (watching %s)", w->base, dir);
	return w;
fail:
	watch_free(w);
	return NULL;
}

void watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	if (w->read_ev != NULL)
		event_free(w->read_ev);
	if (w->settle_ev != NULL)
		event_free(w->settle_ev);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

static bool relevant(const struct watch *w, const struct inotify_event *ev)
{
	if (ev->len == 0)
		return false;
	return strcmp(ev->name, w->base) == 0 ||
	       strncmp(ev->name, "..", 2) == 0;
}

/* Drain what is queued (bounded by the buffer per wake-up), then
 * (re)start the settle timer if anything concerned us. */
static void on_inotify(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	struct timeval tv = {0, WATCH_SETTLE_MS * 1000};
	bool hit = false;
	ssize_t n;

	(void)what;
	n = read(fd, buf, sizeof(buf));
	for (ssize_t off = 0; n > 0 && off < n;) {
		const struct inotify_event *ev = (const void *)(buf + off);

		if (relevant(w, ev))
			hit = true;
		off += (ssize_t)(sizeof(*ev) + ev->len);
	}
	if (hit)
		evtimer_add(w->settle_ev, &tv);
}

static void on_settled(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;

	(void)fd;
	(void)what;
	reload_request(w->rl, "watch", NULL, NULL);
}
