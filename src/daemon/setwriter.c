// SPDX-License-Identifier: GPL-2.0-or-later
/* setwriter: reading the DNS process's requests (see setwriter.h).
 *
 * One read event; each wake-up takes at most SETWRITER_BURST frames. A
 * frame is read with MSG_TRUNC, so its true size is known even when it is
 * longer than the buffer: an oversized one is refused, never cut to a
 * valid prefix. Each accepted request becomes one sets_add,
 * sets_del or sets_shorten whose done sends the IPC_ADD_DONE; requests live in
 * one list so that setwriter_free releases what the kernel never answered.
 * Nothing here retries: a send that fails (the peer does not read, or is gone)
 * stops the loop like a bad frame does. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/log.h"
#include "base/monotime.h"
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
static int submit(struct setwriter *w, struct request *r);
static int submit_shorten(struct setwriter *w, struct request *r);
static void on_done(void *arg, int status);
static int reply(struct setwriter *w, uint32_t id, int status);
static int give_socket(struct setwriter *w);
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
	if (msg->type != IPC_ADD && msg->type != IPC_DEL &&
	    msg->type != IPC_SHORTEN && msg->type != IPC_SOCKET) {
		snprintf(why, whylen,
			 "malformed frame: type %d is not a "
			 "request",
			 (int)msg->type);
		return -EINVAL;
	}
	/* A del only narrows the fence, and an address a reload evicts may
	 * be one the new config no longer admits: not judged. A shorten is
	 * judged per address against the entry (setwriter_shorten_ok). */
	for (size_t i = 0; msg->type == IPC_ADD && i < msg->count; i++) {
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

bool setwriter_shorten_ok(const struct config *cfg, const struct ipc_addr *a,
			  uint64_t now, uint64_t current, uint64_t *expires)
{
	if (current > now) {
		*expires = now + a->ttl;
		return a->ttl < current - now;
	}
	*expires = now + sets_timeout(a->ttl, cfg->ttl_min, cfg->ttl_max);
	return admit_check(cfg, &a->addr) == ADMIT_OK;
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
		int passed = -1;
		/* MSG_TRUNC: n is the frame's own size, even when longer */
		ssize_t n =
		    ipc_recv(fd, w->buf, sizeof(w->buf), MSG_DONTWAIT, &passed);

		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return;
		if (passed >= 0) {
			close(passed);
			stop(w, "the DNS process sent a descriptor");
			return;
		}
		if (n < 0) {
			stop(w, "reading the DNS process's channel: %s",
			     strerror((int)-n));
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
	struct request *r;
	char why[256];
	int rc;

	if (setwriter_judge(w->cfg, w->buf, len, &w->msg, why, sizeof(why))) {
		stop(w, "refusing the DNS process's %s", why);
		return -1;
	}
	if (w->msg.type == IPC_SOCKET)
		return give_socket(w);
	if (w->sets == NULL) {
		stop(w, "a set request (type %d) on the socket channel",
		     (int)w->msg.type);
		return -1;
	}
	if (w->n_reqs >= SETWRITER_INFLIGHT_MAX) {
		stop(w, "the DNS process has more than %d requests in flight",
		     SETWRITER_INFLIGHT_MAX);
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return reply(w, w->msg.id, -ENOMEM);
	r->w = w;
	r->id = w->msg.id;
	rc = submit(w, r);
	if (rc == 1) { /* a shorten with nothing left to do */
		free(r);
		return reply(w, w->msg.id, 0);
	}
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

/* The judged w->msg to the kernel, on_done(r) when it answers: 0, 1 (a
 * shorten that changes no entry: no done), or sets_*'s -errno. */
static int submit(struct setwriter *w, struct request *r)
{
	struct dns_addr adds[IPC_ADD_MAX];
	struct netaddr dels[IPC_ADD_MAX];
	const struct ipc_msg *m = &w->msg;

	if (m->type == IPC_SHORTEN)
		return submit_shorten(w, r);
	for (size_t i = 0; i < m->count; i++) {
		adds[i].addr = dels[i] = m->addrs[i].addr;
		adds[i].ttl = m->addrs[i].ttl;
	}
	if (m->type == IPC_DEL)
		return sets_del(w->sets, dels, m->count, on_done, r);
	return sets_add(w->sets, adds, m->count, on_done, r);
}

/* Only the addresses setwriter_shorten_ok lets through: a shorten never
 * lengthens an entry, and on an address the parent knows no entry of it
 * is an add (admitted, its timeout clamped). */
static int submit_shorten(struct setwriter *w, struct request *r)
{
	struct netaddr addrs[IPC_ADD_MAX];
	uint64_t exp[IPC_ADD_MAX], now = monotime_s();
	const struct ipc_msg *m = &w->msg;
	size_t n = 0;

	for (size_t i = 0; i < m->count; i++) {
		const struct netaddr *a = &m->addrs[i].addr;

		if (setwriter_shorten_ok(w->cfg, &m->addrs[i], now,
					 sets_expires(w->sets, a), &exp[n]))
			addrs[n++] = *a;
	}
	if (n == 0)
		return 1;
	return sets_shorten(w->sets, addrs, exp, n, on_done, r);
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
	int len =
	    ipc_encode_done(frame, sizeof(frame), IPC_ADD_DONE, id, status);
	int rc = len < 0 ? len : ipc_send(w->fd, frame, (size_t)len, -1);

	if (rc == 0)
		return 0;
	stop(w, "cannot answer the DNS process: %s", strerror(-rc));
	return -1;
}

/* An upstream socket, marked here (SO_MARK needs CAP_NET_ADMIN, which
 * only the parent holds), handed over and closed on this side; a socket
 * that cannot be made or marked is the request's -errno, so the DNS
 * process fails that query loudly rather than sending unmarked. 0, or -1
 * (stopped). */
static int give_socket(struct setwriter *w)
{
	uint8_t frame[IPC_HDR_SIZE + 4];
	uint32_t mark = w->cfg->mark;
	int fd = socket(w->msg.family, w->msg.socktype | SOCK_CLOEXEC, 0);
	int status = 0, len, rc;

	if (fd < 0)
		status = -errno;
	else if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) != 0)
		status = -errno;
	if (status != 0 && fd >= 0) {
		close(fd);
		fd = -1;
	}
	if (status != 0)
		log_warn(SYS, "cannot make a marked upstream socket: %s",
			 strerror(-status));
	len = ipc_encode_done(frame, sizeof(frame), IPC_SOCKET_DONE, w->msg.id,
			      status);
	rc = len < 0 ? len : ipc_send(w->fd, frame, (size_t)len, fd);
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		return 0;
	stop(w, "cannot hand the DNS process its socket: %s", strerror(-rc));
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
