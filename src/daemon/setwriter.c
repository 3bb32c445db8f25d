// SPDX-License-Identifier: GPL-2.0-or-later
/* setwriter: reading the DNS process's requests (see setwriter.h).
 *
 * One read event; each wake-up takes what is waiting, in recvmmsg calls
 * of up to IPC_INBOX_FRAMES frames, at most SETWRITER_ROUNDS of them. A
 * frame is read with MSG_TRUNC, so its true size is known even when it is
 * longer than the buffer: an oversized one is refused, never cut to a
 * valid prefix. Each accepted request becomes one sets_add,
 * sets_del or sets_shorten whose done queues the IPC_ADD_DONE; the
 * answers queued in one loop iteration go out in one sendmmsg (an event
 * made active by the first), so a burst of requests costs the DNS process
 * one wake-up and one read. Requests live in one list so that
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
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "base/log.h"
#include "base/monotime.h"
#include "daemon/setwriter.h"
#include "resolve/admit.h"
#include "sets/sets.h"

#define SYS		 "setwriter"
#define SETWRITER_ROUNDS 4 /* recvmmsg calls per wake-up */
#define DONE_SIZE	 (IPC_HDR_SIZE + 4)

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
	bool rcvbuf_warned; /* give_socket's one warning */
	struct ipc_msg msg;
	struct ipc_inbox *inbox;
	/* answers waiting for the end of the loop iteration */
	struct event *answer_ev;
	size_t n_answers;
	uint8_t answers[IPC_INBOX_FRAMES][DONE_SIZE];
};

static void on_read(evutil_socket_t fd, short what, void *arg);
static int take_frame(struct setwriter *w, size_t i);
static int take(struct setwriter *w, const uint8_t *frame, size_t len);
static int submit(struct setwriter *w, struct request *r);
static int submit_shorten(struct setwriter *w, struct request *r);
static void on_done(void *arg, int status);
static int reply(struct setwriter *w, uint32_t id, int status);
static int send_answers(struct setwriter *w);
static void on_answers(evutil_socket_t fd, short what, void *arg);
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
	    msg->type != IPC_SHORTEN && msg->type != IPC_SOCKET &&
	    (msg->type != IPC_PAIR || !config_client_sets(cfg))) {
		snprintf(why, whylen,
			 "malformed frame: type %d is not a "
			 "request",
			 (int)msg->type);
		return -EINVAL;
	}
	/* A del only narrows the fence, and an address a reload evicts may
	 * be one the new config no longer admits: not judged. A shorten is
	 * judged per address against the entry (setwriter_shorten_ok). */
	for (size_t i = 0;
	     (msg->type == IPC_ADD || msg->type == IPC_PAIR) && i < msg->count;
	     i++) {
		const struct netaddr *a = msg->type == IPC_ADD
					      ? &msg->addrs[i].addr
					      : &msg->pairs[i].addr;
		enum admit_verdict v = admit_check(cfg, a);

		if (v != ADMIT_OK) {
			netaddr_format(a, astr, sizeof(astr));
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
	w->inbox = ipc_inbox_new(IPC_FRAME_MAX + 1);
	w->answer_ev = event_new(base, -1, 0, on_answers, w);
	w->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_read, w);
	if (w->inbox == NULL || w->answer_ev == NULL || w->ev == NULL ||
	    event_add(w->ev, NULL) != 0)
		goto fail;
	return w;
fail:
	if (w != NULL && w->ev != NULL)
		event_free(w->ev);
	if (w != NULL && w->answer_ev != NULL)
		event_free(w->answer_ev);
	if (w != NULL)
		ipc_inbox_free(w->inbox);
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
	event_free(w->answer_ev);
	ipc_inbox_free(w->inbox);
	close(w->fd);
	free(w);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct setwriter *w = arg;

	(void)what;
	for (int round = 0; round < SETWRITER_ROUNDS && !w->failed; round++) {
		int got = ipc_inbox_recv(w->inbox, fd, MSG_DONTWAIT);

		if (got == -EAGAIN || got == -EWOULDBLOCK)
			return;
		if (got < 0) {
			stop(w, "reading the DNS process's channel: %s",
			     strerror(-got));
			return;
		}
		for (int i = 0; i < got; i++)
			if (take_frame(w, (size_t)i) != 0)
				return;
		if (got < IPC_INBOX_FRAMES)
			return;
	}
}

/* Frame i of the inbox: 0, or -1 (stopped). */
static int take_frame(struct setwriter *w, size_t i)
{
	const uint8_t *frame;
	int passed = -1;
	/* MSG_TRUNC: n is the frame's own size, even when longer */
	ssize_t n = ipc_inbox_frame(w->inbox, i, &frame, &passed);

	if (passed >= 0) {
		close(passed);
		stop(w, "the DNS process sent a descriptor");
		return -1;
	}
	if (n < 0) {
		stop(w, "reading the DNS process's channel: %s",
		     strerror((int)-n));
		return -1;
	}
	if (n == 0) {
		stop(w, "the DNS process closed its channel (it "
			"exited or was killed)");
		return -1;
	}
	if ((size_t)n > IPC_FRAME_MAX) {
		stop(w,
		     "refusing the DNS process's malformed frame (%zd "
		     "bytes): oversized frame",
		     n);
		return -1;
	}
	return take(w, frame, (size_t)n);
}

/* One frame: judged, then handed to the kernel. 0, or -1 (stopped). */
static int take(struct setwriter *w, const uint8_t *frame, size_t len)
{
	struct request *r;
	char why[256];
	int rc;

	if (setwriter_judge(w->cfg, frame, len, &w->msg, why, sizeof(why))) {
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
	if (m->type == IPC_PAIR)
		return sets_add_clients(w->sets, m->pairs, m->count, on_done,
					r);
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

/* Queue the answer to request id; it goes out with the others of this
 * loop iteration (send_answers). 0, or -1 when the queue was full and
 * could not be sent (stopped). */
static int reply(struct setwriter *w, uint32_t id, int status)
{
	if (w->n_answers == IPC_INBOX_FRAMES && send_answers(w) != 0)
		return -1;
	if (ipc_encode_done(w->answers[w->n_answers], DONE_SIZE, IPC_ADD_DONE,
			    id, status) != DONE_SIZE) {
		stop(w, "cannot answer the DNS process: %s", strerror(EINVAL));
		return -1;
	}
	if (w->n_answers++ == 0)
		event_active(w->answer_ev, EV_TIMEOUT, 0);
	return 0;
}

/* The queued answers in one sendmmsg: 0, or -1 when not all of them
 * could be sent (stopped: the parent must be able to queue an answer to
 * every request it holds). */
static int send_answers(struct setwriter *w)
{
	uint8_t *frames[IPC_INBOX_FRAMES];
	size_t lens[IPC_INBOX_FRAMES];
	size_t n = w->n_answers;
	int sent;

	if (n == 0 || w->failed)
		return w->failed ? -1 : 0;
	for (size_t i = 0; i < n; i++) {
		frames[i] = w->answers[i];
		lens[i] = DONE_SIZE;
	}
	sent = ipc_send_many(w->fd, frames, lens, n);
	w->n_answers = 0;
	if (sent == (int)n)
		return 0;
	stop(w, "cannot answer the DNS process: %s",
	     strerror(sent < 0 ? -sent : EAGAIN));
	return -1;
}

static void on_answers(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)send_answers(arg);
}

/* An upstream socket's options, set here for the DNS process: SO_MARK
 * (it needs CAP_NET_ADMIN, which only the parent holds, as does
 * SO_RCVBUFFORCE past net.core.rmem_max) and those c-ares 1.18 would set
 * itself but does not on a socket it did not make: IPC_SOCKET_RCVBUF on a
 * UDP one, TCP_NODELAY on a TCP one (c-ares pipelines its TCP questions
 * to a server on one connection, and Nagle would hold each one sent
 * while an earlier one is unacknowledged). 0, or the -errno of a mark or
 * TCP_NODELAY that failed; a buffer the kernel caps at net.core.rmem_max
 * still serves, and the first one is logged. */
static int set_options(struct setwriter *w, int fd)
{
	uint32_t mark = w->cfg->mark;
	int rcvbuf = IPC_SOCKET_RCVBUF, one = 1, why;

	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) != 0)
		return -errno;
	if (w->msg.socktype == SOCK_STREAM) {
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			       sizeof(one)) != 0)
			return -errno;
		return 0;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) == 0)
		return 0;
	why = errno;
	/* as the listeners do: up to net.core.rmem_max at least */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (!w->rcvbuf_warned) {
		w->rcvbuf_warned = true;
		log_warn(SYS,
			 "cannot give the upstream sockets a %d KiB receive "
			 "buffer: %s; answers beyond net.core.rmem_max are "
			 "dropped and asked again",
			 rcvbuf >> 10, strerror(why));
	}
	return 0;
}

/* An upstream socket, made and configured here (set_options), handed
 * over and closed on this side; a socket that cannot be made or
 * configured is the request's -errno, so the DNS process fails that
 * query loudly rather than sending unmarked. 0, or -1 (stopped). */
static int give_socket(struct setwriter *w)
{
	uint8_t frame[IPC_HDR_SIZE + 4];
	int fd = socket(w->msg.family, w->msg.socktype | SOCK_CLOEXEC, 0);
	int status = fd < 0 ? -errno : set_options(w, fd);
	int len, rc;

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
