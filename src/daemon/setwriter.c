// SPDX-License-Identifier: GPL-2.0-or-later
/* setwriter: reading the DNS process's add requests (see setwriter.h).
 *
 * One read event; each wake-up takes at most SETWRITER_BURST frames. A
 * frame is read with MSG_TRUNC, so its true size is known even when it is
 * longer than the buffer: an oversized one is refused, never cut to a
 * valid prefix. Each accepted request becomes one sets_add
 * whose done sends the IPC_ADD_DONE; requests live in one list so that
 * setwriter_free releases what the kernel never answered. Nothing here
 * retries: a send that fails (the peer does not read, or is gone) stops
 * the loop like a bad frame does. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/log.h"
#include "daemon/setwriter.h"
#include "resolve/admit.h"
#include "sets/sets.h"

#define SYS		"setwriter"
#define SETWRITER_BURST 64

struct request {
	struct setwriter *w;
	uint32_t id;
	struct request *prev, *next;
};

struct setwriter {
	struct event_base *base;
	int fd;
	struct event *ev;
	const struct config *cfg;
	struct sets *sets;
	struct request *reqs;
	size_t n_reqs;
	bool failed;
	struct ipc_msg msg;
	uint8_t buf[IPC_FRAME_MAX + 1];
};

static void on_read(evutil_socket_t fd, short what, void *arg);
static int take(struct setwriter *w, size_t len);
static void on_done(void *arg, int status);
static int reply(struct setwriter *w, uint32_t id, int status);
static void stop(struct setwriter *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int setwriter_judge(const struct config *cfg, const uint8_t *buf, size_t len,
		    struct ipc_msg *msg, char *why, size_t whylen)
{
	const char *what = "";
	char astr[NETADDR_STRLEN];

	if (ipc_decode(buf, len, msg, &what) != 0) {
		snprintf(why, whylen, "malformed frame (%zu bytes): %s", len,
			 what);
		return -EINVAL;
	}
	if (msg->type != IPC_ADD) {
		snprintf(why, whylen,
			 "malformed frame: type %d is not a "
			 "request",
			 (int)msg->type);
		return -EINVAL;
	}
	for (size_t i = 0; i < msg->count; i++) {
		enum admit_verdict v = admit_check(cfg, &msg->addrs[i].addr);

		if (v != ADMIT_OK) {
			netaddr_format(&msg->addrs[i].addr, astr, sizeof(astr));
			snprintf(
			    why, whylen, "request %u asks to add %s address %s",
			    (unsigned)msg->id, admit_verdict_name(v), astr);
			return -EPERM;
		}
	}
	return 0;
}

struct setwriter *setwriter_new(struct event_base *base, int fd,
				const struct config *cfg, struct sets *sets)
{
	struct setwriter *w = calloc(1, sizeof(*w));

	if (w == NULL)
		goto fail;
	w->base = base;
	w->fd = fd;
	w->cfg = cfg;
	w->sets = sets;
	w->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_read, w);
	if (w->ev == NULL || event_add(w->ev, NULL) != 0)
		goto fail;
	return w;
fail:
	if (w != NULL && w->ev != NULL)
		event_free(w->ev);
	free(w);
	close(fd);
	return NULL;
}

void setwriter_set_config(struct setwriter *w, const struct config *cfg)
{
	w->cfg = cfg;
}

bool setwriter_failed(const struct setwriter *w)
{
	return w != NULL && w->failed;
}

void setwriter_free(struct setwriter *w)
{
	struct request *r, *next;

	if (w == NULL)
		return;
	for (r = w->reqs; r != NULL; r = next) {
		next = r->next;
		free(r);
	}
	event_free(w->ev);
	close(w->fd);
	free(w);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct setwriter *w = arg;

	(void)what;
	for (int i = 0; i < SETWRITER_BURST && !w->failed; i++) {
		/* MSG_TRUNC: n is the frame's own size, even when longer */
		ssize_t n =
		    recv(fd, w->buf, sizeof(w->buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			stop(w, "reading the DNS process's channel: %s",
			     strerror(errno));
			return;
		}
		if (n == 0) {
			stop(w, "the DNS process closed its channel (it "
				"exited or was killed)");
			return;
		}
		if ((size_t)n > IPC_FRAME_MAX) {
			stop(w,
			     "refusing the DNS process's malformed frame (%zd "
			     "bytes): oversized frame",
			     n);
			return;
		}
		if (take(w, (size_t)n) != 0)
			return;
	}
}

/* One frame: judged, then handed to the kernel. 0, or -1 (stopped). */
static int take(struct setwriter *w, size_t len)
{
	struct dns_addr addrs[IPC_ADD_MAX];
	struct request *r;
	char why[256];
	int rc;

	if (setwriter_judge(w->cfg, w->buf, len, &w->msg, why, sizeof(why))) {
		stop(w, "refusing the DNS process's %s", why);
		return -1;
	}
	if (w->n_reqs >= SETWRITER_INFLIGHT_MAX) {
		stop(w, "the DNS process has more than %d adds in flight",
		     SETWRITER_INFLIGHT_MAX);
		return -1;
	}
	for (size_t i = 0; i < w->msg.count; i++) {
		addrs[i].addr = w->msg.addrs[i].addr;
		addrs[i].ttl = w->msg.addrs[i].ttl;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return reply(w, w->msg.id, -ENOMEM);
	r->w = w;
	r->id = w->msg.id;
	rc = sets_add(w->sets, addrs, w->msg.count, on_done, r);
	if (rc != 0) {
		free(r);
		return reply(w, w->msg.id, rc);
	}
	r->next = w->reqs;
	if (w->reqs != NULL)
		w->reqs->prev = r;
	w->reqs = r;
	w->n_reqs++;
	return 0;
}

static void on_done(void *arg, int status)
{
	struct request *r = arg;
	struct setwriter *w = r->w;

	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		w->reqs = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	w->n_reqs--;
	if (!w->failed)
		(void)reply(w, r->id, status);
	free(r);
}

/* 0, or -1 when the frame could not be sent (stopped). */
static int reply(struct setwriter *w, uint32_t id, int status)
{
	uint8_t frame[IPC_HDR_SIZE + 4];
	int len = ipc_encode_done(frame, sizeof(frame), id, status);

	if (len > 0 &&
	    send(w->fd, frame, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) == len)
		return 0;
	stop(w, "cannot answer the DNS process: %s", strerror(errno));
	return -1;
}

static void stop(struct setwriter *w, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_err(SYS, "%s: stopping (exit 3); the fence stays in place", text);
	w->failed = true;
	event_del(w->ev);
	event_base_loopexit(w->base, NULL);
}
