// SPDX-License-Identifier: GPL-2.0-or-later
/* upstream: one c-ares channel, driven by libevent.
 *
 * c-ares owns the sockets to the upstreams; it tells us through the
 * socket-state callback which fds to watch, and we keep one libevent event
 * per fd (a small list: one UDP socket per server, plus TCP when an answer
 * was truncated). A single timer is re-armed from ares_timeout() after
 * every pass, so retries and timeouts happen without a blocking call.
 *
 * c-ares 1.18's ares_send() keeps the ID of the buffer it is given, so the
 * caller builds each upstream query with an ID from upstream_new_id(): a
 * random ID not used by any query in flight. The client's own ID never
 * travels upstream (invariant 5). c-ares matches a reply to its query by
 * ID, source address and question. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <ares.h>
#include <event2/event.h>
#include <netinet/in.h>

#include "dnsfence/log.h"
#include "dnsfence/upstream.h"

#define UPSTREAM_RCVBUF (4 << 20)

struct watch {
	struct watch *next;
	struct upstream *u;
	ares_socket_t fd;
	struct event *ev;
};

struct send_ctx {
	struct upstream *u;
	upstream_cb cb;
	void *arg;
	uint16_t id;
};

struct upstream {
	struct event_base *base;
	ares_channel channel;
	struct event *timer;
	struct event *rearm; /* once per loop iteration, not per event */
	bool rearm_queued;
	struct watch *watches;
	uint8_t ids_in_use[65536 / 8];
	uint16_t rand_pool[256];
	size_t rand_left;
	size_t inflight; /* upstream_send calls whose callback is to come */
};

static void sock_state_cb(void *data, ares_socket_t fd, int readable,
			  int writable);
static void on_fd(evutil_socket_t fd, short what, void *arg);
static void on_timer(evutil_socket_t fd, short what, void *arg);
static void rearm_timer(struct upstream *u);
static void queue_rearm(struct upstream *u);
static void on_rearm(evutil_socket_t fd, short what, void *arg);
static void on_answer(void *arg, int status, int timeouts, unsigned char *abuf,
		      int alen);
static int set_servers(struct upstream *u,
		       const struct config_endpoint *servers, size_t n);
static int status_to_errno(int status);

struct upstream *upstream_new(struct event_base *base,
			      const struct config_endpoint *servers, size_t n,
			      uint32_t timeout_ms, char *err, size_t errlen)
{
	struct ares_options opts;
	struct upstream *u = NULL;
	int optmask, rc;
	uint32_t per_try;

	if (n == 0) {
		snprintf(err, errlen, "no upstream servers");
		return NULL;
	}
	rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc != ARES_SUCCESS) {
		snprintf(err, errlen, "c-ares: %s", ares_strerror(rc));
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (u == NULL)
		goto nomem;
	u->base = base;
	u->timer = evtimer_new(base, on_timer, u);
	u->rearm = event_new(base, -1, 0, on_rearm, u);
	if (u->timer == NULL || u->rearm == NULL)
		goto nomem;

	/* Two rounds over every server, the second with doubled timeouts
	 * (c-ares doubles per round): 3 * n * per_try stays within the
	 * configured bound, so the client gets SERVFAIL in time. */
	per_try = timeout_ms / (3u * (uint32_t)n);
	if (per_try < 100)
		per_try = 100;
	memset(&opts, 0, sizeof(opts));
	opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	opts.timeout = (int)per_try;
	opts.tries = 2;
	opts.sock_state_cb = sock_state_cb;
	opts.sock_state_cb_data = u;
	/* Bursts of answers must not overflow the default socket buffer:
	 * a dropped answer costs the client a whole retry timeout. */
	opts.socket_receive_buffer_size = UPSTREAM_RCVBUF;
	optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
		  ARES_OPT_SOCK_STATE_CB | ARES_OPT_SOCK_RCVBUF;
	rc = ares_init_options(&u->channel, &opts, optmask);
	if (rc != ARES_SUCCESS) {
		snprintf(err, errlen, "c-ares init: %s", ares_strerror(rc));
		goto fail;
	}
	rc = set_servers(u, servers, n);
	if (rc != 0) {
		snprintf(err, errlen, "c-ares servers: %s", strerror(-rc));
		goto fail;
	}
	return u;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	upstream_free(u);
	return NULL;
}

static int set_servers(struct upstream *u,
		       const struct config_endpoint *servers, size_t n)
{
	struct ares_addr_port_node *nodes;
	int rc = 0;

	nodes = calloc(n, sizeof(*nodes));
	if (nodes == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&servers[i].sa;

		nodes[i].next = i + 1 < n ? &nodes[i + 1] : NULL;
		nodes[i].family = sa->sa_family;
		if (sa->sa_family == AF_INET) {
			const struct sockaddr_in *sin =
			    (const struct sockaddr_in *)sa;
			nodes[i].addr.addr4 = sin->sin_addr;
			nodes[i].udp_port = ntohs(sin->sin_port);
		} else {
			const struct sockaddr_in6 *sin6 =
			    (const struct sockaddr_in6 *)sa;
			memcpy(&nodes[i].addr.addr6, &sin6->sin6_addr, 16);
			nodes[i].udp_port = ntohs(sin6->sin6_port);
		}
		nodes[i].tcp_port = nodes[i].udp_port;
	}
	if (ares_set_servers_ports(u->channel, nodes) != ARES_SUCCESS)
		rc = -EINVAL;
	free(nodes);
	return rc;
}

void upstream_free(struct upstream *u)
{
	struct watch *w, *next;

	if (u == NULL)
		return;
	/* Pending callbacks run now with ARES_EDESTRUCTION. */
	if (u->channel != NULL)
		ares_destroy(u->channel);
	for (w = u->watches; w != NULL; w = next) {
		next = w->next;
		event_free(w->ev);
		free(w);
	}
	if (u->timer != NULL)
		event_free(u->timer);
	if (u->rearm != NULL)
		event_free(u->rearm);
	free(u);
	ares_library_cleanup();
}

bool upstream_idle(const struct upstream *u)
{
	return u->inflight == 0;
}

uint16_t upstream_new_id(struct upstream *u)
{
	for (;;) {
		uint16_t id;

		if (u->rand_left == 0) {
			if (getrandom(u->rand_pool, sizeof(u->rand_pool), 0) !=
			    (ssize_t)sizeof(u->rand_pool)) {
				/* getrandom on Linux >= 3.17 does not fail
				 * for this size once the pool is seeded. */
				log_err("upstream", "getrandom failed: %s",
					strerror(errno));
				abort();
			}
			u->rand_left =
			    sizeof(u->rand_pool) / sizeof(u->rand_pool[0]);
		}
		id = u->rand_pool[--u->rand_left];
		if (!(u->ids_in_use[id >> 3] & (1u << (id & 7))))
			return id;
	}
}

int upstream_send(struct upstream *u, const uint8_t *query, size_t len,
		  upstream_cb cb, void *arg)
{
	struct send_ctx *ctx;

	if (len < 12 || len > 65535)
		return -EINVAL;
	ctx = malloc(sizeof(*ctx));
	if (ctx == NULL)
		return -ENOMEM;
	ctx->u = u;
	ctx->cb = cb;
	ctx->arg = arg;
	ctx->id = (uint16_t)(query[0] << 8 | query[1]);
	u->ids_in_use[ctx->id >> 3] |= (uint8_t)(1u << (ctx->id & 7));
	u->inflight++;
	ares_send(u->channel, query, (int)len, on_answer, ctx);
	queue_rearm(u);
	return 0;
}

static int status_to_errno(int status)
{
	switch (status) {
	case ARES_ETIMEOUT:
		return -ETIMEDOUT;
	case ARES_ECONNREFUSED:
		return -ECONNREFUSED;
	case ARES_EDESTRUCTION:
	case ARES_ECANCELLED:
		return -ECANCELED;
	case ARES_ENOMEM:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

static void on_answer(void *arg, int status, int timeouts, unsigned char *abuf,
		      int alen)
{
	struct send_ctx *ctx = arg;

	(void)timeouts;
	ctx->u->inflight--;
	ctx->u->ids_in_use[ctx->id >> 3] &= (uint8_t) ~(1u << (ctx->id & 7));
	if (status == ARES_SUCCESS && abuf != NULL && alen >= 12)
		ctx->cb(ctx->arg, 0, abuf, (size_t)alen);
	else
		ctx->cb(ctx->arg,
			status == ARES_SUCCESS ? -EIO : status_to_errno(status),
			NULL, 0);
	free(ctx);
}

static void sock_state_cb(void *data, ares_socket_t fd, int readable,
			  int writable)
{
	struct upstream *u = data;
	struct watch **pw, *w;
	short what =
	    (short)((readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));

	for (pw = &u->watches; *pw != NULL; pw = &(*pw)->next) {
		if ((*pw)->fd == fd)
			break;
	}
	w = *pw;
	if (w != NULL) {
		event_free(w->ev);
		w->ev = NULL;
		if (what == 0) {
			*pw = w->next;
			free(w);
			return;
		}
	} else {
		if (what == 0)
			return;
		w = calloc(1, sizeof(*w));
		if (w == NULL) {
			log_err("upstream", "out of memory watching fd %d",
				(int)fd);
			return;
		}
		w->u = u;
		w->fd = fd;
		w->next = u->watches;
		u->watches = w;
	}
	w->ev = event_new(u->base, fd, (short)(what | EV_PERSIST), on_fd, w);
	if (w->ev == NULL || event_add(w->ev, NULL) != 0)
		log_err("upstream", "cannot watch fd %d", (int)fd);
}

static void on_fd(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;
	struct upstream *u = w->u;

	/* w may be freed inside ares_process_fd (socket closed). */
	ares_process_fd(u->channel, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
			(what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	queue_rearm(u);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct upstream *u = arg;

	(void)fd;
	(void)what;
	ares_process_fd(u->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	rearm_timer(u);
}

/* ares_timeout() walks every query in flight: ask it once per loop
 * iteration, after all the sends and reads of that iteration. */
static void queue_rearm(struct upstream *u)
{
	if (u->rearm_queued)
		return;
	u->rearm_queued = true;
	event_active(u->rearm, EV_TIMEOUT, 0);
}

static void on_rearm(evutil_socket_t fd, short what, void *arg)
{
	struct upstream *u = arg;

	(void)fd;
	(void)what;
	u->rearm_queued = false;
	rearm_timer(u);
}

static void rearm_timer(struct upstream *u)
{
	struct timeval tv, *next;

	next = ares_timeout(u->channel, NULL, &tv);
	if (next == NULL) {
		evtimer_del(u->timer);
		return;
	}
	evtimer_add(u->timer, next);
}
