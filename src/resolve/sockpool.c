// SPDX-License-Identifier: GPL-2.0-or-later
/* sockpool: the socket channel read by event, replies matched by id (see
 * sockpool.h). One slot per family and type holds the request in flight
 * of that kind, if any; a reply whose id is in no slot, or a frame that
 * is no IPC_SOCKET_DONE, breaks the pool (the parent is broken), as a
 * closed channel does: every take then fails at once. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/ipc.h"
#include "base/log.h"
#include "base/monotime.h"
#include "resolve/sockpool.h"

#define SYS "upstream"

struct slot {
	bool out;      /* a request of this kind is in flight */
	bool given_up; /* its waiter stopped waiting */
	uint32_t id;
};

struct sockpool {
	int chan;
	uint32_t wait_ms;
	struct event *ev;
	uint32_t last_id;
	int broken;		 /* 0, or what every take fails with */
	struct slot slots[2][2]; /* [AF_INET6?][SOCK_STREAM?] */
	int spare[2];		 /* a UDP socket of each family, or -1 */
	uint32_t want;		 /* the id a take waits for, or 0 */
	bool got;
	int got_rc; /* the wanted reply: its descriptor or -errno */
};

static void on_read(evutil_socket_t fd, short what, void *arg);
static void read_all(struct sockpool *p);
static void take_reply(struct sockpool *p, const uint8_t *buf, ssize_t n,
		       int fd);
static void keep_late(struct sockpool *p, size_t fi, size_t ti, int rc);
static void set_broken(struct sockpool *p, int rc, const char *why);
static int ask(struct sockpool *p, size_t fi, size_t ti);
static int wait_for(struct sockpool *p, uint32_t id);
static void refill(struct sockpool *p, size_t fi);

static size_t fam_index(int family)
{
	return family == AF_INET6;
}

static int fam_of(size_t fi)
{
	return fi ? AF_INET6 : AF_INET;
}

static int type_of(size_t ti)
{
	return ti ? SOCK_STREAM : SOCK_DGRAM;
}

struct sockpool *sockpool_new(struct event_base *base, int chan,
			      uint32_t wait_ms)
{
	struct sockpool *p = calloc(1, sizeof(*p));
	int fl;

	if (p == NULL)
		return NULL;
	p->chan = chan;
	p->wait_ms = wait_ms;
	p->spare[0] = p->spare[1] = -1;
	fl = fcntl(chan, F_GETFL);
	if (fl < 0 || fcntl(chan, F_SETFL, fl | O_NONBLOCK) != 0)
		goto fail;
	p->ev = event_new(base, chan, EV_READ | EV_PERSIST, on_read, p);
	if (p->ev == NULL || event_add(p->ev, NULL) != 0)
		goto fail;
	return p;
fail:
	sockpool_free(p);
	return NULL;
}

void sockpool_free(struct sockpool *p)
{
	if (p == NULL)
		return;
	if (p->ev != NULL)
		event_free(p->ev);
	for (size_t fi = 0; fi < 2; fi++)
		if (p->spare[fi] >= 0)
			close(p->spare[fi]);
	free(p);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	read_all(arg);
}

/* Every frame waiting on the channel (at most one per slot can be, and a
 * broken pool reads no more). */
static void read_all(struct sockpool *p)
{
	uint8_t buf[IPC_FRAME_MAX + 1];

	while (p->broken == 0) {
		int fd = -1;
		ssize_t n =
		    ipc_recv(p->chan, buf, sizeof(buf), MSG_DONTWAIT, &fd);

		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return;
		take_reply(p, buf, n, fd);
	}
}

/* One frame of n bytes (or ipc_recv's error) with its descriptor fd. */
static void take_reply(struct sockpool *p, const uint8_t *buf, ssize_t n,
		       int fd)
{
	struct ipc_msg m;
	const char *why = "";
	int rc;

	if (n == 0 || n == -ECONNRESET) {
		set_broken(p, -EPIPE, "the channel closed");
		return;
	}
	if (n < 0) {
		set_broken(p, n == -EBADMSG ? -EPROTO : (int)n,
			   n == -EBADMSG ? "a frame with more than one "
					   "descriptor"
					 : strerror((int)-n));
		return;
	}
	/* only the header and status of an IPC_SOCKET_DONE are read */
	if ((size_t)n > IPC_FRAME_MAX || (size_t)n < IPC_HDR_SIZE + 4 ||
	    ipc_decode(buf, (size_t)n, &m, &why) != 0 ||
	    m.type != IPC_SOCKET_DONE) {
		if (fd >= 0)
			close(fd);
		set_broken(p, -EPROTO, "a frame that is no socket reply");
		return;
	}
	for (size_t fi = 0; fi < 2; fi++) {
		for (size_t ti = 0; ti < 2; ti++) {
			struct slot *s = &p->slots[fi][ti];

			if (!s->out || s->id != m.id)
				continue;
			s->out = false;
			if (m.status != 0 && fd >= 0)
				close(fd);
			if (m.status != 0)
				rc = m.status < 0 ? m.status : -EPROTO;
			else
				rc = fd;
			if (rc == -1) {
				set_broken(p, -EPROTO,
					   "a socket reply without its socket");
				return;
			}
			if (p->want != 0 && m.id == p->want) {
				p->got = true;
				p->got_rc = rc;
			} else {
				keep_late(p, fi, ti, rc);
			}
			return;
		}
	}
	if (fd >= 0)
		close(fd);
	set_broken(p, -EPROTO, "a socket reply to no request in flight");
}

/* A reply no take waits for (a spare, or one given up on): a UDP socket
 * becomes its family's spare if it has none; anything else is closed. */
static void keep_late(struct sockpool *p, size_t fi, size_t ti, int rc)
{
	if (rc < 0) {
		log_limited(LOG_CLASS_UPSTREAM, LOGL_WARN, SYS,
			    "the privileged parent gave no spare %s socket to "
			    "the upstreams: %s",
			    ti ? "TCP" : "UDP", strerror(-rc));
		return;
	}
	if (ti == 0 && p->spare[fi] < 0)
		p->spare[fi] = rc;
	else
		close(rc);
}

static void set_broken(struct sockpool *p, int rc, const char *why)
{
	if (p->broken != 0)
		return;
	p->broken = rc;
	event_del(p->ev);
	for (size_t fi = 0; fi < 2; fi++) {
		if (p->spare[fi] >= 0)
			close(p->spare[fi]);
		p->spare[fi] = -1;
	}
	if (rc != -EPIPE)
		log_err(SYS,
			"the socket channel to the privileged parent is "
			"broken (%s); every upstream question fails from now "
			"on",
			why);
}

/* Send the request of slot [fi][ti]: 0 or -errno. */
static int ask(struct sockpool *p, size_t fi, size_t ti)
{
	uint8_t buf[IPC_HDR_SIZE + 8];
	struct slot *s = &p->slots[fi][ti];
	int len, rc;

	if (++p->last_id == 0) /* 0 is no request */
		p->last_id = 1;
	len = ipc_encode_socket(buf, sizeof(buf), p->last_id, fam_of(fi),
				type_of(ti));
	if (len < 0)
		return len;
	rc = ipc_send(p->chan, buf, (size_t)len, -1);
	if (rc == -EPIPE || rc == -ECONNRESET) {
		set_broken(p, -EPIPE, "the channel closed");
		return -EPIPE;
	}
	if (rc != 0)
		return rc;
	s->out = true;
	s->given_up = false;
	s->id = p->last_id;
	return 0;
}

/* The spare of family fi is asked for when it is gone and none is in
 * flight; a request that cannot go out leaves the next take to wait. */
static void refill(struct sockpool *p, size_t fi)
{
	if (p->broken == 0 && p->spare[fi] < 0 && !p->slots[fi][0].out)
		(void)ask(p, fi, 0);
}

/* The reply to request id, read within the wait: its descriptor or
 * -errno, -ETIMEDOUT when it did not come. */
static int wait_for(struct sockpool *p, uint32_t id)
{
	uint64_t deadline = monotime_ns() / 1000000 + p->wait_ms;

	p->want = id;
	p->got = false;
	for (;;) {
		struct pollfd pfd = {.fd = p->chan, .events = POLLIN};
		uint64_t now;
		int rc;

		read_all(p);
		if (p->got || p->broken != 0)
			break;
		now = monotime_ns() / 1000000;
		if (now >= deadline)
			break;
		rc = poll(&pfd, 1, (int)(deadline - now));
		if (rc < 0 && errno != EINTR) {
			set_broken(p, -errno, strerror(errno));
			break;
		}
	}
	p->want = 0;
	/* a channel seen closed in the same read fails even a reply that
	 * came before (the parent is gone: nothing more is taken from it) */
	if (p->broken != 0) {
		if (p->got && p->got_rc >= 0)
			close(p->got_rc);
		return p->broken;
	}
	return p->got ? p->got_rc : -ETIMEDOUT;
}

int sockpool_take(struct sockpool *p, int family, int socktype)
{
	size_t fi = fam_index(family), ti = socktype == SOCK_STREAM;
	struct slot *s = &p->slots[fi][ti];
	int fd;

	if ((family != AF_INET && family != AF_INET6) ||
	    (socktype != SOCK_DGRAM && socktype != SOCK_STREAM))
		return -EINVAL;
	/* a take answered without a request reads first, so a closed
	 * channel or a late reply shows (one with a request reads in its
	 * wait) */
	if (p->broken == 0 &&
	    ((ti == 0 && p->spare[fi] >= 0) || (s->out && s->given_up)))
		read_all(p);
	if (p->broken != 0)
		return p->broken;
	if (ti == 0 && p->spare[fi] >= 0) {
		fd = p->spare[fi];
		p->spare[fi] = -1;
		refill(p, fi);
		return fd;
	}
	if (s->out && s->given_up)
		return -ETIMEDOUT;
	if (!s->out) {
		fd = ask(p, fi, ti);
		if (fd != 0)
			return fd;
	}
	fd = wait_for(p, s->id);
	if (fd == -ETIMEDOUT) {
		s->given_up = true;
		log_limited(LOG_CLASS_UPSTREAM, LOGL_WARN, SYS,
			    "the privileged parent did not give a %s socket "
			    "to the upstreams within %u ms (request %u); its "
			    "query fails, and so does every one needing such "
			    "a socket until the parent answers",
			    ti ? "TCP" : "UDP", (unsigned)p->wait_ms,
			    (unsigned)s->id);
	}
	if (fd >= 0 && ti == 0)
		refill(p, fi);
	return fd;
}
