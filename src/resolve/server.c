// SPDX-License-Identifier: GPL-2.0-or-later
/* server: the UDP and TCP listeners.
 *
 * UDP: each wake-up reads at most UDP_BURST datagrams with one recvmmsg
 * (work per wake-up is capped, as in memcached) and hands each to the
 * resolver; the replies it gives at once (denied names, cache hits) are
 * gathered and go out with one sendmmsg at its end. Later ones (an
 * upstream answer, a kernel ack) are gathered too, and an event made
 * active by the first sends them with one sendmmsg at the end of the
 * loop iteration: since the split, every upstream answer's replies come
 * from one read of the parent's acks, which used to cost one sendmsg
 * each. The gathered replies belong to one listener at a time (a reply
 * on another flushes them first). A reply that cannot be sent at once
 * is dropped (the client retries, counted as shed) rather than queued.
 * Every listener asks for IP_PKTINFO / IPV6_RECVPKTINFO: the interface a
 * query arrived on bounds its share of the in-flight cap (quota.c); and
 * for SO_TIMESTAMPNS: a query's latency is counted from the kernel's
 * receive, so the time it waited in the socket's buffer is seen (the
 * stage histograms of stats.h), and one that waited past SHED_RECEIVE_NS
 * is dropped unread (shed, counted). When its buffer is full the kernel
 * drops the newest datagram, and SO_RXQ_OVFL tells how many (shed too). A
 * listener on a wildcard address (0.0.0.0, ::) also answers each query from the
 * address it was sent to: a reply from whatever address routing picks is
 * dropped by the client as coming from the wrong server. A TCP connection
 * carries no such option: its interface is the one whose own network holds the
 * peer's address (the source check of forward scope lets no other address in on
 * that interface), from the host's addresses read at most once a second,
 * not per connection.
 *
 * TCP (RFC 7766): 2-byte length framing, several queries per connection,
 * answers in completion order. Limits keep a hostile client from holding
 * resources: a message size cap, a per-connection cap on queries in
 * flight (reading pauses at the cap), an idle timeout, a deadline for a
 * partly received message (slow senders are cut off), and a cap on
 * connections. At the cap a new connection evicts the least recently
 * active idle one, so held-open connections cannot lock out new clients;
 * if none is idle the new one is closed. UDP is never starved by TCP. */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "dns/dnsmsg.h"
#include "base/log.h"
#include "base/monotime.h"
#include "resolve/resolver.h"
#include "resolve/server.h"
#include "base/stats.h"

#define UDP_BURST	 64
#define UDP_QUERY_MAX	 4096 /* a longer datagram is no query we answer */
#define UDP_REPLY_SLOT	 1280 /* UDP replies are at most DNS_EDNS_UDPSIZE */
#define TCP_MAX_CONNS	 512
#define TCP_MAX_PENDING	 32
#define TCP_MAX_MSG	 4096 /* a query; answers may be larger */
#define TCP_MAX_OUTPUT	 (256 * 1024)
#define TCP_IDLE_SECONDS 10
#define TCP_MSG_SECONDS	 5
#define LISTEN_BACKLOG	 256
#define UDP_CTL_SPACE                                                          \
	(CMSG_SPACE(sizeof(struct in6_pktinfo)) +                              \
	 CMSG_SPACE(sizeof(struct timespec)) + CMSG_SPACE(sizeof(uint32_t)))
#define NETS_MAX	 256  /* the host's addresses kept for TCP peers */
#define NETS_TTL_MS	 1000 /* read again when older */
#define LOOPBACK_IFINDEX 1    /* lo, in every network namespace */
/* A datagram that waited longer in the listener's buffer is dropped
 * unread: its client has given up on it (1 s is the shortest timeout a
 * stub resolver takes, `options timeout:1`; dnsperf's is 2 s), and
 * answering it would only delay the queries behind it. A tighter bound
 * (CoDel's rule, 5 ms for 100 ms) shed queries that had only waited for
 * the CPU on two starved cores, and a client that keeps a fixed number in
 * flight then waits for its timeout on each: the full-speed benchmark
 * lost queries and its rates fell (docs/performance.md). */
#define SHED_RECEIVE_NS 1000000000ull

struct server;

struct udp_listener {
	struct server *s;
	int fd;
	bool reply_local; /* wildcard address: reply from the one asked */
	uint32_t drops;	  /* the kernel's count of datagrams it dropped */
	struct event *ev;
};

struct tcp_conn {
	TAILQ_ENTRY(tcp_conn) link; /* least recently active first */
	struct server *s;
	struct bufferevent *bev;
	struct event *msg_timer;
	struct event *resume; /* read what is buffered once below the cap */
	struct sockaddr_storage peer;
	socklen_t peerlen;
	unsigned ifindex; /* the peer's interface; 0: not known */
	struct rquery *pending[TCP_MAX_PENDING];
	size_t n_pending;
	bool unread; /* its answers went unread: reading stopped for good */
};

/* One recvmmsg's worth of datagrams in, and the replies going out. */
struct udp_burst {
	struct mmsghdr in[UDP_BURST];
	struct iovec in_iov[UDP_BURST];
	struct sockaddr_storage in_peer[UDP_BURST];
	struct sockaddr_storage in_local[UDP_BURST];
	uint8_t in_ctl[UDP_BURST][UDP_CTL_SPACE];
	uint8_t in_buf[UDP_BURST][UDP_QUERY_MAX];
	struct mmsghdr out[UDP_BURST];
	struct iovec out_iov[UDP_BURST];
	struct sockaddr_storage out_peer[UDP_BURST];
	uint8_t out_ctl[UDP_BURST][UDP_CTL_SPACE];
	uint8_t out_buf[UDP_BURST][UDP_REPLY_SLOT];
	unsigned n_out;
	struct udp_listener *owner;  /* whose replies out holds */
	struct udp_listener *active; /* inside on_udp: flushed at its end */
	struct event *late_ev;	     /* flushes replies gathered outside */
};

/* One of the host's addresses: its network, and the interface holding
 * it. */
struct local_net {
	int family;
	uint8_t addr[16], mask[16];
	unsigned bits, ifindex;
};

struct server {
	struct event_base *base;
	struct resolver *res;
	struct udp_listener *udp;
	size_t n_udp;
	struct evconnlistener **tcp;
	size_t n_tcp;
	TAILQ_HEAD(, tcp_conn) conns;
	size_t n_conns;
	struct udp_burst *burst;
	bool freebind; /* forward scope: the bridge may come later */
	struct local_net nets[NETS_MAX]; /* for a TCP peer's interface */
	size_t n_nets;
	uint64_t nets_ms; /* when nets was read; 0: never */
};

static int bind_socket(const struct config_endpoint *ep, int type,
		       bool freebind, int *out);
static int add_udp(struct server *s, const struct config_endpoint *ep);
static int add_tcp(struct server *s, const struct config_endpoint *ep);
static void on_udp(evutil_socket_t fd, short what, void *arg);
static void burst_reset(struct udp_burst *b, int n);
static void udp_reply(void *ctx, struct rquery *q, const struct sockaddr *peer,
		      socklen_t peerlen, const struct sockaddr *local,
		      const uint8_t *msg, size_t len);
static void udp_flush(struct udp_listener *l);
static void on_late(evutil_socket_t fd, short what, void *arg);
static bool is_wildcard(const struct config_endpoint *ep);
static const struct sockaddr *arrived_at(struct msghdr *m,
					 struct sockaddr_storage *local,
					 unsigned *ifindex, int64_t wall,
					 uint64_t *recv_ns, uint32_t *drops);
static unsigned iface_of_peer(struct server *s, const struct sockaddr *peer);
static void refresh_nets(struct server *s);
static size_t put_pktinfo(const struct sockaddr *local, uint8_t *ctl);
static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg);
static bool make_room(struct server *s);
static void on_tcp_read(struct bufferevent *bev, void *arg);
static void on_tcp_event(struct bufferevent *bev, short what, void *arg);
static void on_msg_timeout(evutil_socket_t fd, short what, void *arg);
static void on_resume(evutil_socket_t fd, short what, void *arg);
static void tcp_reply(void *ctx, struct rquery *q, const struct sockaddr *peer,
		      socklen_t peerlen, const struct sockaddr *local,
		      const uint8_t *msg, size_t len);
static void tcp_close(struct tcp_conn *c);
static void tcp_touch(struct tcp_conn *c);

struct server *server_new(struct event_base *base, const struct config *cfg,
			  struct resolver *res, char *err, size_t errlen)
{
	char where[NETADDR_ENDPOINT_STRLEN];
	struct server *s;
	int rc;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto nomem;
	s->base = base;
	s->res = res;
	s->freebind = cfg->scope == CONFIG_SCOPE_FORWARD;
	TAILQ_INIT(&s->conns);
	s->udp = calloc(cfg->n_listen, sizeof(*s->udp));
	s->tcp = calloc(cfg->n_listen, sizeof(*s->tcp));
	s->burst = calloc(1, sizeof(*s->burst));
	if (s->udp == NULL || s->tcp == NULL || s->burst == NULL)
		goto nomem;
	burst_reset(s->burst, UDP_BURST);
	s->burst->late_ev = event_new(base, -1, 0, on_late, s->burst);
	if (s->burst->late_ev == NULL)
		goto nomem;

	for (size_t i = 0; i < cfg->n_listen; i++) {
		const struct config_endpoint *ep = &cfg->listen[i];

		netaddr_format_endpoint((const struct sockaddr *)&ep->sa, where,
					sizeof(where));
		rc = add_udp(s, ep);
		if (rc == 0)
			rc = add_tcp(s, ep);
		if (rc == -EADDRNOTAVAIL && ep->sa.ss_family == AF_INET6) {
			/* Containers often run with IPv6 disabled; then
			 * [::1] cannot be bound and there is nothing to
			 * serve on it (ip6tables still drops). */
			log_warn("server",
				 "cannot listen on %s: %s (IPv6 disabled?); "
				 "skipping it",
				 where, strerror(-rc));
			continue;
		}
		if (rc != 0) {
			snprintf(err, errlen,
				 "listen[%zu]: cannot listen on %s: %s", i,
				 where, strerror(-rc));
			goto fail;
		}
		log_info("server", "listening on %s (udp, tcp)", where);
	}
	if (s->n_udp == 0) {
		snprintf(err, errlen, "listen: no address could be bound");
		goto fail;
	}
	return s;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	server_free(s);
	return NULL;
}

void server_free(struct server *s)
{
	if (s == NULL)
		return;
	while (!TAILQ_EMPTY(&s->conns))
		tcp_close(TAILQ_FIRST(&s->conns));
	/* UDP queries still pending point at the listeners. */
	resolver_shutdown(s->res);
	if (s->burst != NULL && s->burst->owner != NULL)
		udp_flush(s->burst->owner);
	if (s->burst != NULL && s->burst->late_ev != NULL)
		event_free(s->burst->late_ev);
	for (size_t i = 0; i < s->n_udp; i++) {
		event_free(s->udp[i].ev);
		close(s->udp[i].fd);
	}
	for (size_t i = 0; i < s->n_tcp; i++)
		evconnlistener_free(s->tcp[i]);
	free(s->udp);
	free(s->tcp);
	free(s->burst);
	free(s);
}

/* freebind: bind an address no interface holds yet. In forward scope the
 * gateway address appears when Docker creates the bridge, which happens
 * after dnsfence is up (fence first); the socket then receives on it. */
static int bind_socket(const struct config_endpoint *ep, int type,
		       bool freebind, int *out)
{
	int one = 1, fd, rc = 0;

	fd = socket(ep->sa.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ep->sa.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0)
		goto fail;
	if (type == SOCK_STREAM &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		goto fail;
	if (freebind && ep->sa.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one)) != 0)
		goto fail;
	if (freebind && ep->sa.ss_family == AF_INET &&
	    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) != 0)
		goto fail;
	if (type == SOCK_DGRAM) {
		int rcvbuf = 4 << 20;

		/* Best effort: a larger buffer absorbs bursts, and the loop's
		 * pause while a reload compiles a large allowlist (~0.1 s
		 * for 100k entries). Above net.core.rmem_max only with
		 * CAP_NET_ADMIN, which the daemon holds here. A buffer of
		 * 2,048 queries (1.6 MiB) cut the median at twice the
		 * capacity from 131 to 30 ms but lost queries at 20,000 a
		 * second, whose waits reach 100 ms now and then on two
		 * shared cores (docs/performance.md). */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
			       sizeof(rcvbuf)) != 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
					 sizeof(rcvbuf));
	}
	if (bind(fd, (const struct sockaddr *)&ep->sa, ep->len) != 0)
		goto fail;
	if (type == SOCK_STREAM && listen(fd, LISTEN_BACKLOG) != 0)
		goto fail;
	*out = fd;
	return 0;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

static int add_udp(struct server *s, const struct config_endpoint *ep)
{
	struct udp_listener *l = &s->udp[s->n_udp];
	int one = 1, rc;

	rc = bind_socket(ep, SOCK_DGRAM, s->freebind, &l->fd);
	if (rc != 0)
		return rc;
	l->s = s;
	if (ep->sa.ss_family == AF_INET)
		rc = setsockopt(l->fd, IPPROTO_IP, IP_PKTINFO, &one,
				sizeof(one));
	else
		rc = setsockopt(l->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
				sizeof(one));
	if (rc == 0)
		rc = setsockopt(l->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one,
				sizeof(one));
	if (rc == 0)
		rc = setsockopt(l->fd, SOL_SOCKET, SO_RXQ_OVFL, &one,
				sizeof(one));
	if (rc != 0) {
		rc = -errno;
		close(l->fd);
		return rc;
	}
	l->reply_local = is_wildcard(ep);
	l->ev = event_new(s->base, l->fd, EV_READ | EV_PERSIST, on_udp, l);
	if (l->ev == NULL || event_add(l->ev, NULL) != 0) {
		if (l->ev != NULL)
			event_free(l->ev);
		close(l->fd);
		return -ENOMEM;
	}
	s->n_udp++;
	return 0;
}

static int add_tcp(struct server *s, const struct config_endpoint *ep)
{
	struct evconnlistener *l;
	int fd, rc;

	rc = bind_socket(ep, SOCK_STREAM, s->freebind, &fd);
	if (rc != 0)
		return rc;
	/* backlog 0: the socket is already listening. */
	l = evconnlistener_new(s->base, on_accept, s, LEV_OPT_CLOSE_ON_FREE, 0,
			       fd);
	if (l == NULL) {
		close(fd);
		return -ENOMEM;
	}
	s->tcp[s->n_tcp++] = l;
	return 0;
}

static void on_udp(evutil_socket_t fd, short what, void *arg)
{
	struct udp_listener *l = arg;
	struct udp_burst *b = l->s->burst;
	uint64_t read_ns;
	int64_t wall;
	int n;

	(void)what;
	n = recvmmsg(fd, b->in, UDP_BURST, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_limited(LOG_CLASS_CLIENT, LOGL_DEBUG, "server",
				    "udp recvmmsg: %s", strerror(errno));
		return;
	}
	read_ns = monotime_ns();
	wall = monotime_realtime_offset_ns();
	b->active = l;
	for (int i = 0; i < n; i++) {
		const struct sockaddr *local;
		unsigned ifindex;
		uint64_t recv_ns = read_ns;
		uint32_t drops = l->drops;

		if (b->in[i].msg_hdr.msg_flags & MSG_TRUNC) {
			stats_inc(STAT_MALFORMED);
			continue;
		}
		local = arrived_at(&b->in[i].msg_hdr, &b->in_local[i], &ifindex,
				   wall, &recv_ns, &drops);
		/* what the count grew by since the last is shed */
		stats_add(STAT_SHED_RECEIVE, drops - l->drops);
		l->drops = drops;
		stats_hist_ns(STATS_H_RECV_QUEUE, read_ns - recv_ns);
		if (read_ns - recv_ns > SHED_RECEIVE_NS) {
			stats_inc(STAT_SHED_RECEIVE);
			continue;
		}
		(void)resolver_handle(l->s->res, b->in_buf[i], b->in[i].msg_len,
				      (struct sockaddr *)&b->in_peer[i],
				      b->in[i].msg_hdr.msg_namelen,
				      l->reply_local ? local : NULL, ifindex,
				      recv_ns, read_ns, false, udp_reply, l);
	}
	b->active = NULL;
	burst_reset(b, n);
	if (b->owner != NULL)
		udp_flush(b->owner);
}

/* The headers of the first n datagrams read into b ready for the next
 * read: the kernel wrote their address and control lengths (all of them
 * at server_new). */
static void burst_reset(struct udp_burst *b, int n)
{
	for (int i = 0; i < n; i++) {
		b->in_iov[i].iov_base = b->in_buf[i];
		b->in_iov[i].iov_len = UDP_QUERY_MAX;
		b->in[i].msg_hdr = (struct msghdr){
		    .msg_name = &b->in_peer[i],
		    .msg_namelen = sizeof(b->in_peer[i]),
		    .msg_iov = &b->in_iov[i],
		    .msg_iovlen = 1,
		    .msg_control = b->in_ctl[i],
		    .msg_controllen = UDP_CTL_SPACE,
		};
	}
}

/* A reply joins the gathered ones (sent at the end of on_udp, or of the
 * loop iteration); one too large for a slot goes out alone. */
static void udp_reply(void *ctx, struct rquery *q, const struct sockaddr *peer,
		      socklen_t peerlen, const struct sockaddr *local,
		      const uint8_t *msg, size_t len)
{
	struct udp_listener *l = ctx;
	struct udp_burst *b = l->s->burst;
	uint8_t ctl[UDP_CTL_SPACE];
	struct iovec iov = {(void *)(uintptr_t)msg, len};
	struct msghdr mh = {.msg_name = (void *)(uintptr_t)peer,
			    .msg_namelen = peerlen,
			    .msg_iov = &iov,
			    .msg_iovlen = 1};

	(void)q;
	if (len <= UDP_REPLY_SLOT && peerlen <= sizeof(b->out_peer[0])) {
		unsigned i;

		if (b->n_out > 0 && (b->owner != l || b->n_out == UDP_BURST))
			udp_flush(b->owner);
		if (b->n_out == 0 && b->active != l)
			event_active(b->late_ev, EV_TIMEOUT, 0);
		b->owner = l;
		i = b->n_out++;

		memcpy(b->out_buf[i], msg, len);
		memcpy(&b->out_peer[i], peer, peerlen);
		b->out_iov[i] = (struct iovec){b->out_buf[i], len};
		b->out[i].msg_hdr = (struct msghdr){
		    .msg_name = &b->out_peer[i],
		    .msg_namelen = peerlen,
		    .msg_iov = &b->out_iov[i],
		    .msg_iovlen = 1,
		};
		if (local != NULL) {
			b->out[i].msg_hdr.msg_control = b->out_ctl[i];
			b->out[i].msg_hdr.msg_controllen =
			    put_pktinfo(local, b->out_ctl[i]);
		}
		return;
	}
	if (local != NULL) {
		mh.msg_control = ctl;
		mh.msg_controllen = put_pktinfo(local, ctl);
	}
	if (sendmsg(l->fd, &mh, MSG_DONTWAIT) < 0)
		log_limited(LOG_CLASS_CLIENT, LOGL_DEBUG, "server",
			    "udp sendto: %s", strerror(errno));
}

static bool is_wildcard(const struct config_endpoint *ep)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&ep->sa;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ep->sa;

	if (ep->sa.ss_family == AF_INET)
		return sin->sin_addr.s_addr == htonl(INADDR_ANY);
	return ep->sa.ss_family == AF_INET6 &&
	       IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
}

/* The address a datagram was sent to, from its IP_PKTINFO or
 * IPV6_PKTINFO (into *local), or NULL when the kernel gave none; the
 * interface it arrived on into *ifindex (0: none given). Its
 * SO_TIMESTAMPNS, a wall-clock time, less wall (monotime's offset) into
 * *recv_ns when it is no later than *recv_ns (the read). The kernel's
 * count of datagrams the socket dropped (SO_RXQ_OVFL: its buffer full),
 * given with each datagram queued after one was, into *drops. */
static const struct sockaddr *arrived_at(struct msghdr *m,
					 struct sockaddr_storage *local,
					 unsigned *ifindex, int64_t wall,
					 uint64_t *recv_ns, uint32_t *drops)
{
	const struct sockaddr *at = NULL;
	struct cmsghdr *cm;

	memset(local, 0, sizeof(*local));
	*ifindex = 0;
	for (cm = CMSG_FIRSTHDR(m); cm != NULL; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SO_RXQ_OVFL)
			memcpy(drops, CMSG_DATA(cm), sizeof(*drops));
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			uint64_t ns;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			ns = (uint64_t)ts.tv_sec * 1000000000u +
			     (uint64_t)ts.tv_nsec - (uint64_t)wall;
			if (ns <= *recv_ns)
				*recv_ns = ns;
		}
		if (cm->cmsg_level == IPPROTO_IP &&
		    cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			struct sockaddr_in *sin = (struct sockaddr_in *)local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			sin->sin_family = AF_INET;
			sin->sin_addr = pi.ipi_addr;
			*ifindex = (unsigned)pi.ipi_ifindex;
			at = (struct sockaddr *)local;
		}
		if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			struct sockaddr_in6 *sin6 =
			    (struct sockaddr_in6 *)local;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = pi.ipi6_addr;
			sin6->sin6_scope_id = pi.ipi6_ifindex;
			*ifindex = pi.ipi6_ifindex;
			at = (struct sockaddr *)local;
		}
	}
	return at;
}

/* The control message that sends a reply from local; its length. */
static size_t put_pktinfo(const struct sockaddr *local, uint8_t *ctl)
{
	struct msghdr m = {.msg_control = ctl, .msg_controllen = UDP_CTL_SPACE};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	memset(ctl, 0, UDP_CTL_SPACE);
	if (local->sa_family == AF_INET) {
		struct in_pktinfo pi = {0};

		pi.ipi_spec_dst = ((const struct sockaddr_in *)local)->sin_addr;
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		return CMSG_SPACE(sizeof(pi));
	} else {
		const struct sockaddr_in6 *sin6 =
		    (const struct sockaddr_in6 *)local;
		struct in6_pktinfo pi = {0};

		pi.ipi6_addr = sin6->sin6_addr;
		pi.ipi6_ifindex = sin6->sin6_scope_id;
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		return CMSG_SPACE(sizeof(pi));
	}
}

static void udp_flush(struct udp_listener *l)
{
	struct udp_burst *b = l->s->burst;
	unsigned sent = 0;

	while (sent < b->n_out) {
		int n = sendmmsg(l->fd, b->out + sent, b->n_out - sent,
				 MSG_DONTWAIT);

		if (n <= 0) {
			/* The socket buffer is full: the rest is dropped,
			 * and those clients retry. */
			log_limited(LOG_CLASS_CLIENT, LOGL_DEBUG, "server",
				    "udp sendmmsg: %s",
				    n < 0 ? strerror(errno) : "nothing sent");
			stats_add(STAT_SHED_REPLY, b->n_out - sent);
			break;
		}
		sent += (unsigned)n;
	}
	b->n_out = 0;
	b->owner = NULL;
}

static void on_late(evutil_socket_t fd, short what, void *arg)
{
	struct udp_burst *b = arg;

	(void)fd;
	(void)what;
	if (b->owner != NULL)
		udp_flush(b->owner);
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct server *s = arg;
	struct timeval idle = {TCP_IDLE_SECONDS, 0};
	struct tcp_conn *c;

	(void)lis;
	if (!make_room(s)) {
		stats_inc(STAT_TCP_REFUSED);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->s = s;
	memcpy(&c->peer, sa, (size_t)salen);
	c->peerlen = (socklen_t)salen;
	c->ifindex = iface_of_peer(s, sa);
	c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->msg_timer = evtimer_new(s->base, on_msg_timeout, c);
	c->resume = event_new(s->base, -1, 0, on_resume, c);
	if (c->bev == NULL || c->msg_timer == NULL || c->resume == NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			close(fd);
		if (c->msg_timer != NULL)
			event_free(c->msg_timer);
		if (c->resume != NULL)
			event_free(c->resume);
		free(c);
		return;
	}
	bufferevent_setcb(c->bev, on_tcp_read, NULL, on_tcp_event, c);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&s->conns, c, link);
	s->n_conns++;
}

/* The interface whose own network holds peer, the longest prefix, from
 * the host's addresses as read at most once a second (refresh_nets); a
 * loopback peer is lo's, an IPv6 link-local peer's is its scope. 0 when
 * none holds it. */
static unsigned iface_of_peer(struct server *s, const struct sockaddr *peer)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)peer;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)peer;
	const uint8_t *a;
	unsigned best = 0, best_bits = 0;
	size_t n;

	if (peer->sa_family == AF_INET6 && sin6->sin6_scope_id != 0)
		return sin6->sin6_scope_id;
	if ((peer->sa_family == AF_INET &&
	     (ntohl(sin->sin_addr.s_addr) >> 24) == 127) ||
	    (peer->sa_family == AF_INET6 &&
	     IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr)))
		return LOOPBACK_IFINDEX;
	a = peer->sa_family == AF_INET ? (const uint8_t *)&sin->sin_addr
				       : (const uint8_t *)&sin6->sin6_addr;
	n = peer->sa_family == AF_INET ? 4 : 16;
	refresh_nets(s);
	for (size_t k = 0; k < s->n_nets; k++) {
		const struct local_net *ln = &s->nets[k];
		bool in = ln->family == peer->sa_family;

		for (size_t i = 0; in && i < n; i++)
			in =
			    (a[i] & ln->mask[i]) == (ln->addr[i] & ln->mask[i]);
		if (in && (best == 0 || ln->bits > best_bits)) {
			best = ln->ifindex;
			best_bits = ln->bits;
		}
	}
	return best;
}

/* s->nets from getifaddrs when older than NETS_TTL_MS (kept as they were
 * when it fails). */
static void refresh_nets(struct server *s)
{
	uint64_t now = monotime_ms();
	struct ifaddrs *all, *ifa;

	if (s->nets_ms != 0 && now - s->nets_ms < NETS_TTL_MS)
		return;
	s->nets_ms = now;
	if (getifaddrs(&all) != 0)
		return;
	s->n_nets = 0;
	for (ifa = all; ifa != NULL && s->n_nets < NETS_MAX;
	     ifa = ifa->ifa_next) {
		struct local_net *ln = &s->nets[s->n_nets];
		int fam = ifa->ifa_addr ? ifa->ifa_addr->sa_family : AF_UNSPEC;
		size_t n = fam == AF_INET ? 4 : 16;
		const void *addr, *mask;

		if ((fam != AF_INET && fam != AF_INET6) ||
		    ifa->ifa_netmask == NULL)
			continue;
		addr =
		    fam == AF_INET
			? (const void *)&((struct sockaddr_in *)ifa->ifa_addr)
			      ->sin_addr
			: (const void *)&((struct sockaddr_in6 *)ifa->ifa_addr)
			      ->sin6_addr;
		mask = fam == AF_INET
			   ? (const void *)&(
				 (struct sockaddr_in *)ifa->ifa_netmask)
				 ->sin_addr
			   : (const void *)&(
				 (struct sockaddr_in6 *)ifa->ifa_netmask)
				 ->sin6_addr;
		memset(ln, 0, sizeof(*ln));
		ln->family = fam;
		memcpy(ln->addr, addr, n);
		memcpy(ln->mask, mask, n);
		for (size_t i = 0; i < n; i++)
			ln->bits += (unsigned)__builtin_popcount(ln->mask[i]);
		ln->ifindex = if_nametoindex(ifa->ifa_name);
		if (ln->ifindex != 0)
			s->n_nets++;
	}
	freeifaddrs(all);
}

/* At the cap, close the least recently active connection that has no
 * query in flight. */
static bool make_room(struct server *s)
{
	struct tcp_conn *c;

	if (s->n_conns < TCP_MAX_CONNS)
		return true;
	TAILQ_FOREACH(c, &s->conns, link)
	{
		if (c->n_pending == 0) {
			stats_inc(STAT_TCP_REFUSED);
			tcp_close(c);
			return true;
		}
	}
	return false;
}

static void tcp_touch(struct tcp_conn *c)
{
	TAILQ_REMOVE(&c->s->conns, c, link);
	TAILQ_INSERT_TAIL(&c->s->conns, c, link);
}

static void on_tcp_read(struct bufferevent *bev, void *arg)
{
	struct tcp_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t lenbuf[2];
	size_t msglen;
	bool progress = false;

	tcp_touch(c);
	while (c->n_pending < TCP_MAX_PENDING && evbuffer_get_length(in) >= 2) {
		struct rquery *q;
		uint8_t *msg;
		uint64_t now;

		evbuffer_copyout(in, lenbuf, 2);
		msglen = (size_t)lenbuf[0] << 8 | lenbuf[1];
		if (msglen == 0 || msglen > TCP_MAX_MSG) {
			log_limited(LOG_CLASS_CLIENT, LOGL_DEBUG, "server",
				    "tcp message of %zu bytes: closing",
				    msglen);
			stats_inc(STAT_MALFORMED);
			tcp_close(c);
			return;
		}
		if (evbuffer_get_length(in) < 2 + msglen)
			break;
		evbuffer_drain(in, 2);
		msg = evbuffer_pullup(in, (ssize_t)msglen);
		now = monotime_ns();
		q = resolver_handle(
		    c->s->res, msg, msglen, (struct sockaddr *)&c->peer,
		    c->peerlen, NULL, c->ifindex, now, now, true, tcp_reply, c);
		evbuffer_drain(in, msglen);
		progress = true;
		if (q != NULL)
			c->pending[c->n_pending++] = q;
	}
	if (c->n_pending >= TCP_MAX_PENDING) {
		/* Complete messages may wait in the buffer: that is our
		 * doing, not a slow client, so no deadline runs. */
		bufferevent_disable(bev, EV_READ);
		evtimer_del(c->msg_timer);
		return;
	}
	/* Each message must arrive whole within TCP_MSG_SECONDS of its
	 * first byte: the clock restarts when one completes. */
	if (evbuffer_get_length(in) == 0 || progress)
		evtimer_del(c->msg_timer);
	if (evbuffer_get_length(in) > 0 &&
	    !evtimer_pending(c->msg_timer, NULL)) {
		struct timeval tv = {TCP_MSG_SECONDS, 0};

		evtimer_add(c->msg_timer, &tv);
	}
}

static void on_tcp_event(struct bufferevent *bev, short what, void *arg)
{
	struct tcp_conn *c = arg;

	if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_READING) &&
	    c->n_pending > 0 && !c->unread) {
		/* Idle only because we are still answering. */
		bufferevent_enable(bev, EV_READ);
		return;
	}
	tcp_close(c);
}

static void on_msg_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	log_limited(LOG_CLASS_CLIENT, LOGL_DEBUG, "server",
		    "tcp message not complete in %d s: closing",
		    TCP_MSG_SECONDS);
	tcp_close(arg);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_conn *c = arg;

	(void)fd;
	(void)what;
	on_tcp_read(c->bev, c);
}

static void tcp_reply(void *ctx, struct rquery *q, const struct sockaddr *peer,
		      socklen_t peerlen, const struct sockaddr *local,
		      const uint8_t *msg, size_t len)
{
	struct tcp_conn *c = ctx;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	uint8_t lenbuf[2] = {(uint8_t)(len >> 8), (uint8_t)len};

	(void)peer;
	(void)peerlen;
	(void)local;
	for (size_t i = 0; q != NULL && i < c->n_pending; i++) {
		if (c->pending[i] != q)
			continue;
		c->pending[i] = c->pending[--c->n_pending];
		if (c->n_pending + 1 == TCP_MAX_PENDING && !c->unread) {
			/* Below the cap again: read what waits in the buffer,
			 * but not from here (we are inside the resolver). */
			bufferevent_enable(c->bev, EV_READ);
			event_active(c->resume, EV_TIMEOUT, 0);
		}
		break;
	}
	if (evbuffer_get_length(out) > TCP_MAX_OUTPUT) {
		/* The client does not read its answers. Closing here would
		 * free c under the resolver's feet; stop reading instead (for
		 * good: shed, counted once) and let the write timeout close
		 * it. */
		if (!c->unread)
			stats_inc(STAT_SHED_TCP);
		c->unread = true;
		bufferevent_disable(c->bev, EV_READ);
		return;
	}
	evbuffer_add(out, lenbuf, 2);
	evbuffer_add(out, msg, len);
}

static void tcp_close(struct tcp_conn *c)
{
	for (size_t i = 0; i < c->n_pending; i++)
		resolver_cancel(c->pending[i]);
	TAILQ_REMOVE(&c->s->conns, c, link);
	c->s->n_conns--;
	event_free(c->msg_timer);
	event_free(c->resume);
	bufferevent_free(c->bev);
	free(c);
}
