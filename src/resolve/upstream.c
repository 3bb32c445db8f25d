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
 * ID, source address and question.
 *
 * Every socket c-ares opens carries the socket mark given to
 * upstream_set_mark (SO_MARK, set from c-ares' configure callback, which
 * runs before connect(), so even a TCP SYN is marked). The firewall accepts
 * traffic to an upstream only with that mark (invariant 5); a socket we
 * could not mark is closed at once and its query fails, loudly. A process
 * without CAP_NET_ADMIN (the DNS process of the split) cannot mark: it
 * gives upstream_use_socket_channel its pool on the channel to the
 * privileged parent, and c-ares' asocket then takes each socket from
 * there, already marked by the parent (IPC_SOCKET, base/ipc.h;
 * resolve/sockpool.h: a spare when one is ready, else a bounded wait); a
 * socket the parent cannot give in time fails its query the same way.
 *
 * The ID search is bounded: a few random draws, then one scan of the
 * bitmap from a random start; the resolver's cap on questions in flight
 * keeps the bitmap far from full.
 *
 * No completion callback runs inside upstream_send(): c-ares completes a
 * query from inside ares_send() when every server fails at once (no
 * route, the fence rejecting our packets), and the caller is then still
 * setting up. Such completions are queued, with a copy of the answer, and
 * delivered by an event made active for this loop iteration. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ares.h>
#include <event2/event.h>
#include <event2/util.h>
#include <netinet/in.h>

#include "base/ipc.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/stats.h"
#include "resolve/sockpool.h"
#include "resolve/upstream.h"

#define UPSTREAM_RCVBUF	  (4 << 20)
#define UPSTREAM_ID_DRAWS 16

struct watch {
	struct watch *next;
	struct upstream *u;
	ares_socket_t fd;
	struct event *ev;
};

struct send_ctx {
	struct send_ctx *next; /* on the deferred list */
	struct upstream *u;
	upstream_cb cb;
	void *arg;
	uint16_t id;
	uint64_t sent_us; /* monotonic, for the latency histogram */
	int status;	  /* deferred: what to report */
	uint8_t *answer;  /* deferred: owned copy */
	size_t len;
};

struct upstream {
	struct event_base *base;
	ares_channel channel;
	struct event *timer;
	struct event *rearm; /* once per loop iteration, not per event */
	bool rearm_queued;
	bool in_send;	       /* inside ares_send(): defer completions */
	struct event *deliver; /* runs the deferred completions */
	struct send_ctx *deferred, **deferred_tail;
	struct watch *watches;
	uint8_t ids_in_use[65536 / 8];
	uint16_t rand_pool[256];
	size_t rand_left;
	uint32_t mark;
	struct sockpool *pool; /* the parent's sockets, or NULL */
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
static int init_channel(struct upstream *u, size_t n, uint32_t timeout_ms);
static int set_servers(struct upstream *u,
		       const struct config_endpoint *servers, size_t n);
static int status_to_errno(int status);
static int mark_socket(ares_socket_t fd, int type, void *data);
static ares_socket_t ask_socket(int family, int type, int protocol, void *data);
static int sock_close(ares_socket_t fd, void *data);
static int sock_connect(ares_socket_t fd, const struct sockaddr *sa,
			ares_socklen_t len, void *data);
static ares_ssize_t sock_recvfrom(ares_socket_t fd, void *buf, size_t len,
				  int flags, struct sockaddr *from,
				  ares_socklen_t *fromlen, void *data);
static ares_ssize_t sock_sendv(ares_socket_t fd, const struct iovec *iov, int n,
			       void *data);
static void complete(struct send_ctx *ctx, int status, const uint8_t *abuf,
		     size_t alen);
static void defer(struct send_ctx *ctx, int status, const uint8_t *abuf,
		  size_t alen);
static void on_deliver(evutil_socket_t fd, short what, void *arg);
static void deliver_all(struct upstream *u, bool cancel);
static bool id_free(const struct upstream *u, uint16_t id);
static uint16_t random_u16(struct upstream *u);

struct upstream *upstream_new(struct event_base *base,
			      const struct config_endpoint *servers, size_t n,
			      uint32_t timeout_ms, char *err, size_t errlen)
{
	struct upstream *u = NULL;
	int rc;

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
	u->deliver = event_new(base, -1, 0, on_deliver, u);
	u->deferred_tail = &u->deferred;
	if (u->timer == NULL || u->rearm == NULL || u->deliver == NULL)
		goto nomem;

	rc = init_channel(u, n, timeout_ms);
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

/* u's c-ares channel for n servers, answering within timeout_ms in all.
 * An ARES_* status. */
static int init_channel(struct upstream *u, size_t n, uint32_t timeout_ms)
{
	struct ares_options opts;
	uint32_t per_try;
	int optmask;

	/* Two rounds over every server, the second with doubled timeouts
	 * (c-ares doubles per round): 3 * n * per_try stays within the
	 * configured bound, so the client gets SERVFAIL in time. */
	per_try = timeout_ms / (3u * (uint32_t)n);
	if (per_try < 100)
		per_try = 100;
	memset(&opts, 0, sizeof(opts));
	/* NOCHECKRESP: a SERVFAIL or REFUSED answer comes to us as it is,
	 * so the log can name the rcode (c-ares 1.18 reports REFUSED as
	 * "Connection refused"). The price: c-ares no longer tries the next
	 * upstream on those rcodes (it still does on timeouts and errors). */
	opts.flags =
	    ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_NOCHECKRESP;
	opts.timeout = (int)per_try;
	opts.tries = 2;
	opts.sock_state_cb = sock_state_cb;
	opts.sock_state_cb_data = u;
	/* Bursts of answers must not overflow the default socket buffer:
	 * a dropped answer costs the client a whole retry timeout. */
	opts.socket_receive_buffer_size = UPSTREAM_RCVBUF;
	optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
		  ARES_OPT_SOCK_STATE_CB | ARES_OPT_SOCK_RCVBUF;
	return ares_init_options(&u->channel, &opts, optmask);
}

/* c-ares closes the socket and fails the query when this returns < 0. */
static int mark_socket(ares_socket_t fd, int type, void *data)
{
	const struct upstream *u = data;

	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &u->mark, sizeof(u->mark)) == 0)
		return 0;
	log_err("upstream",
		"cannot set socket mark %#x on a %s socket to the upstreams: "
		"%s; the fence would reject its queries, failing them",
		(unsigned)u->mark, type == SOCK_STREAM ? "TCP" : "UDP",
		strerror(errno));
	return -1;
}

void upstream_set_mark(struct upstream *u, uint32_t mark)
{
	u->mark = mark;
	ares_set_socket_configure_callback(u->channel, mark_socket, u);
}

static const struct ares_socket_functions from_parent = {
    .asocket = ask_socket,
    .aclose = sock_close,
    .aconnect = sock_connect,
    .arecvfrom = sock_recvfrom,
    .asendv = sock_sendv,
};

void upstream_use_socket_channel(struct upstream *u, struct sockpool *pool)
{
	u->pool = pool;
	ares_set_socket_configure_callback(u->channel, NULL, NULL);
	ares_set_socket_functions(u->channel, &from_parent, u);
}

/* c-ares' flags (SOCK_NONBLOCK, SOCK_CLOEXEC) are applied here; the
 * parent makes the plain socket, close-on-exec, and marks it. */
static ares_socket_t ask_socket(int family, int type, int protocol, void *data)
{
	struct upstream *u = data;
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	int fd;

	if (protocol != 0) {
		errno = EPROTONOSUPPORT;
		return ARES_SOCKET_BAD;
	}
	fd =
	    u->pool != NULL ? sockpool_take(u->pool, family, base) : -ECANCELED;
	if (fd < 0) {
		/* a wait that ran out is logged by the pool */
		if (fd != -ETIMEDOUT)
			log_limited(LOG_CLASS_UPSTREAM, LOGL_ERR, "upstream",
				    "the privileged parent gave no %s socket "
				    "to the upstreams: %s; its query fails",
				    base == SOCK_STREAM ? "TCP" : "UDP",
				    strerror(-fd));
		errno = -fd;
		return ARES_SOCKET_BAD;
	}
	/* always: c-ares 1.18 configures no user-managed socket, and one
	 * blocking TCP read would stop the whole loop */
	if (evutil_make_socket_nonblocking(fd) != 0) {
		close(fd);
		return ARES_SOCKET_BAD;
	}
	return fd;
}

static int sock_close(ares_socket_t fd, void *data)
{
	(void)data;
	return close(fd);
}

static int sock_connect(ares_socket_t fd, const struct sockaddr *sa,
			ares_socklen_t len, void *data)
{
	(void)data;
	return connect(fd, sa, len);
}

static ares_ssize_t sock_recvfrom(ares_socket_t fd, void *buf, size_t len,
				  int flags, struct sockaddr *from,
				  ares_socklen_t *fromlen, void *data)
{
	(void)data;
	return recvfrom(fd, buf, len, flags, from, fromlen);
}

static ares_ssize_t sock_sendv(ares_socket_t fd, const struct iovec *iov, int n,
			       void *data)
{
	(void)data;
	return writev(fd, iov, n);
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
	deliver_all(u, true);
	for (w = u->watches; w != NULL; w = next) {
		next = w->next;
		event_free(w->ev);
		free(w);
	}
	if (u->timer != NULL)
		event_free(u->timer);
	if (u->rearm != NULL)
		event_free(u->rearm);
	if (u->deliver != NULL)
		event_free(u->deliver);
	free(u);
	ares_library_cleanup();
}

bool upstream_idle(const struct upstream *u)
{
	return u->inflight == 0;
}

static bool id_free(const struct upstream *u, uint16_t id)
{
	return !(u->ids_in_use[id >> 3] & (1u << (id & 7)));
}

static uint16_t random_u16(struct upstream *u)
{
	if (u->rand_left == 0) {
		if (getrandom(u->rand_pool, sizeof(u->rand_pool), 0) !=
		    (ssize_t)sizeof(u->rand_pool)) {
			/* getrandom on Linux >= 3.17 does not fail for this
			 * size once the pool is seeded. */
			log_err("upstream", "getrandom failed: %s",
				strerror(errno));
			abort();
		}
		u->rand_left = sizeof(u->rand_pool) / sizeof(u->rand_pool[0]);
	}
	return u->rand_pool[--u->rand_left];
}

int upstream_new_id(struct upstream *u, uint16_t *id)
{
	uint16_t start;

	for (int i = 0; i < UPSTREAM_ID_DRAWS; i++) {
		*id = random_u16(u);
		if (id_free(u, *id))
			return 0;
	}
	/* Nearly full: one pass over the bitmap, from a random start. */
	start = random_u16(u);
	for (uint32_t k = 0; k < 65536; k++) {
		*id = (uint16_t)(start + k);
		if (id_free(u, *id))
			return 0;
	}
	return -EAGAIN;
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
	memset(ctx, 0, sizeof(*ctx));
	ctx->u = u;
	ctx->cb = cb;
	ctx->arg = arg;
	ctx->id = (uint16_t)(query[0] << 8 | query[1]);
	if (!id_free(u, ctx->id)) {
		free(ctx);
		return -EEXIST;
	}
	ctx->sent_us = monotime_ns() / 1000;
	stats_upstream_inflight(1);
	u->ids_in_use[ctx->id >> 3] |= (uint8_t)(1u << (ctx->id & 7));
	u->inflight++;
	u->in_send = true;
	ares_send(u->channel, query, (int)len, on_answer, ctx);
	u->in_send = false;
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
	case ARES_ESERVFAIL:
		return -EREMOTEIO;
	case ARES_EREFUSED:
		return -EACCES;
	case ARES_ENOTIMP:
		return -EOPNOTSUPP;
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
	int st = 0;

	(void)timeouts;
	ctx->u->ids_in_use[ctx->id >> 3] &= (uint8_t) ~(1u << (ctx->id & 7));
	stats_upstream_inflight(-1);
	if (status != ARES_EDESTRUCTION && status != ARES_ECANCELLED) {
		uint64_t us = monotime_ns() / 1000 - ctx->sent_us;

		stats_upstream_latency(us);
		stats_hist_ns(STATS_H_UPSTREAM, us * 1000);
	}
	if (status != ARES_SUCCESS || abuf == NULL || alen < 12) {
		st = status == ARES_SUCCESS ? -EIO : status_to_errno(status);
		abuf = NULL;
		alen = 0;
	}
	if (ctx->u->in_send)
		defer(ctx, st, abuf, (size_t)alen);
	else
		complete(ctx, st, abuf, (size_t)alen);
}

static void complete(struct send_ctx *ctx, int status, const uint8_t *abuf,
		     size_t alen)
{
	ctx->u->inflight--;
	ctx->cb(ctx->arg, status, abuf, alen);
	free(ctx->answer);
	free(ctx);
}

/* Completed inside ares_send(): keep a copy of the answer (c-ares frees
 * its buffer on return) and deliver from the loop. */
static void defer(struct send_ctx *ctx, int status, const uint8_t *abuf,
		  size_t alen)
{
	struct upstream *u = ctx->u;

	ctx->status = status;
	if (abuf != NULL) {
		ctx->answer = malloc(alen);
		if (ctx->answer != NULL) {
			memcpy(ctx->answer, abuf, alen);
			ctx->len = alen;
		} else {
			ctx->status = -ENOMEM;
		}
	}
	ctx->next = NULL;
	*u->deferred_tail = ctx;
	u->deferred_tail = &ctx->next;
	event_active(u->deliver, EV_TIMEOUT, 0);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	deliver_all(arg, false);
}

/* Each deferred completion once; at upstream_free as -ECANCELED. A
 * callback that sends again queues behind the list taken here. */
static void deliver_all(struct upstream *u, bool cancel)
{
	struct send_ctx *ctx = u->deferred, *next;

	u->deferred = NULL;
	u->deferred_tail = &u->deferred;
	if (cancel) /* upstream_free: no socket asked for from here */
		u->pool = NULL;
	for (; ctx != NULL; ctx = next) {
		next = ctx->next;
		if (cancel)
			complete(ctx, -ECANCELED, NULL, 0);
		else
			complete(ctx, ctx->status,
				 ctx->status == 0 ? ctx->answer : NULL,
				 ctx->status == 0 ? ctx->len : 0);
	}
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

const char *upstream_strerror(int status)
{
	switch (status) {
	case -ETIMEDOUT:
		return "timed out";
	case -ECONNREFUSED:
		return "unreachable (no route, port closed or packets "
		       "rejected)";
	case -EREMOTEIO:
		return "upstream answered SERVFAIL";
	case -EACCES:
		return "upstream answered REFUSED";
	case -EOPNOTSUPP:
		return "upstream answered NOTIMP";
	case -EBADMSG:
		return "malformed answer";
	case -E2BIG:
		return "oversized answer";
	default:
		return strerror(-status);
	}
}
