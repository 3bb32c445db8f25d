// SPDX-License-Identifier: GPL-2.0-or-later
/* sets: the kernel ipsets dnsfence fills (invariants 2 and 4).
 *
 * Setup (setsadm_create/check/destroy) lives in setsadm.c. The hot path
 * here does not use libipset: sets_add() turns each
 * address into one IPSET_CMD_ADD netlink request with NLM_F_ACK on a
 * non-blocking NETLINK_NETFILTER socket driven by libevent.
 *
 * A sets_add() call is a batch. Its addresses are looked up in the
 * expiry map (expiry.c: the acks of the last SETS_FRESH_SECONDS and the
 * adds in flight) and the ones whose kernel entry was confirmed within
 * it and already outlives the new timeout are skipped; the rest are
 * queued with the longest of their own timeout, the floor
 * (sets_set_floor: what any answer asked for the entry) and what the map
 * holds, never shorter (invariant 4), and a flush
 * event made active for the end of this loop iteration writes every
 * queued request of every batch into one buffer and one sendto(). Each
 * request gets the next sequence number; a batch's requests get
 * consecutive ones, so an ack's seq finds its batch and item. Acks are
 * read with recvmmsg() when the socket is readable; a batch whose last
 * ack arrived calls its done with 0 or its first error, and only an
 * acked add raises the map. The kernel runs a request in sendto(), so
 * every ack is queued on our socket by then: requests in flight are
 * capped by the receive buffer, or acks would be dropped. If they are
 * dropped anyway (ENOBUFS on recv) every batch in flight fails closed,
 * and nothing more is sent until the socket has been read dry (EAGAIN):
 * while it stays congested the kernel keeps dropping acks. Every batch
 * has a deadline (SETS_DEADLINE_MS): one whose acks have not all come by
 * then fails (-ETIMEDOUT) and gives its in-flight count back, so a lost
 * ack can neither hold a client forever nor leak the send window.
 * sendto() EAGAIN waits for EV_WRITE, ENOBUFS for a short timer; nothing
 * here blocks or sleeps. What a kernel error code means, and the log of
 * failed adds (once per set and cause), are in setserr.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <libipset/ipset.h>
#include <libipset/linux_ip_set.h>
#include <libipset/linux_ip_set_hash.h>

#include "base/ipc.h"
#include "sets/expiry.h"
#include "base/log.h"
#include "base/monotime.h"
#include "sets/sets.h"
#include "sets/setserr.h"
#include "base/stats.h"

#define SYS	       "sets"
#define SEND_LIMIT     (64 * 1024) /* bytes of requests per sendto */
#define RECV_VLEN      64	   /* acks per recvmmsg */
#define RECV_ROUNDS    32	   /* recvmmsg calls per wake-up */
#define RECV_MSGSIZE   512	   /* NETLINK_CAP_ACK: errors are small */
#define RCVBUF_WANT    (8 << 20)
#define ACK_TRUESIZE   1024 /* receive buffer an ack costs, rounded up */
#define INFLIGHT_FLOOR 32
#define INFLIGHT_CAP   8192
/* The only frame the parent sends on the set channel is an IPC_ADD_DONE
 * (IPC_HDR_SIZE + 4 bytes); room for a little more, so that a longer one
 * is read by its true length and refused. */
#define REMOTE_FRAME_CAP 32

struct item {
	struct netaddr addr;
	bool del; /* IPSET_CMD_DEL (eviction), else an add */
	/* a client set entry: (client, proto:port, addr); port 0 in the
	 * DNS process, whose IPC_PAIR the parent expands per port */
	bool client;
	uint8_t proto;
	uint16_t port;
	struct netaddr peer;
	uint32_t timeout; /* what the request carries */
	uint64_t expires; /* monotonic seconds: now + timeout */
};

struct batch {
	TAILQ_ENTRY(batch) link;
	bool shorten; /* sets_shorten's adds (IPC_SHORTEN when remote) */
	sets_done_fn done;
	void *arg;
	uint64_t deadline; /* monotonic ms */
	uint32_t seq0;	   /* seq of items[0], once sent > 0 */
	size_t n, sent, acked;
	int status;
	struct item items[];
};
TAILQ_HEAD(batch_list, batch);

struct sets {
	struct event_base *base;
	struct mnl_socket *nl;
	int fd;
	uint32_t portid;
	uint32_t seq;
	uint32_t seq_floor; /* acks before this seq are stale */
	char name[2][IPSET_MAXNAMELEN];
	char client_name[2][IPSET_MAXNAMELEN]; /* "": no client sets */
	struct sets_port ports[SETS_CLIENT_PORTS_MAX];
	size_t n_ports;
	uint32_t ttl_min, ttl_max;
	struct expiry_map *map;
	struct batch_list queue; /* batches with requests, arrival order */
	struct batch_list ready; /* batches with nothing to send */
	struct batch *send_next; /* first batch with unsent requests */
	size_t inflight;	 /* requests sent, not acked */
	size_t inflight_max;
	bool draining; /* acks were lost: read until EAGAIN, send nothing */
	struct event *flush_ev, *read_ev, *write_ev, *retry_ev, *deadline_ev;
	uint8_t *sendbuf;
	uint8_t (*recvbuf)[RECV_MSGSIZE];
	struct mmsghdr recv_msgs[RECV_VLEN];
	struct iovec recv_iov[RECV_VLEN];
	struct setserr_log fails[2]; /* add failures per family */
	bool remote; /* fd is the channel to the privileged parent */
	struct ipc_inbox *inbox; /* remote: the parent's answers */
	bool parent_gone;
	void (*forgot)(void *arg); /* sets_on_forget */
	void *forgot_arg;
	sets_floor_fn floor; /* sets_set_floor */
	void *floor_arg;
};

static void on_deadline(evutil_socket_t fd, short what, void *arg);
static void arm_deadline(struct sets *s);
static struct batch *batch_new(size_t n, sets_done_fn done, void *arg);
static void fail_batch(struct sets *s, struct batch *b, int code);
static bool covered(struct sets *s, const struct dns_addr *d, uint64_t now,
		    uint64_t *exp);
static int fam_index(const struct netaddr *a);
static void batch_finish(struct sets *s, struct batch *b);
static void item_result(struct sets *s, struct batch *b, size_t i, int code);
static void on_ack(struct sets *s, uint32_t seq, int code);
static void fail_inflight(struct sets *s, int code);
static void flush(struct sets *s);
static size_t fill(struct sets *s, struct mnl_nlmsg_batch *nb);
static void commit(struct sets *s, size_t count);
static void recv_headers(struct sets *s);
static void read_acks(struct sets *s);
static void parse_acks(struct sets *s, const uint8_t *buf, size_t len);
static void flush_cb(evutil_socket_t fd, short what, void *arg);
static void read_cb(evutil_socket_t fd, short what, void *arg);
static int socket_setup(struct sets *s, char *err, size_t errlen);
static int build_msg(void *buf, size_t cap, int cmd, const char *setname,
		     const struct netaddr *a, uint32_t timeout, uint32_t seq);
static struct nlmsghdr *put_head(void *buf, size_t cap, int cmd,
				 const char *setname, const struct netaddr *a,
				 uint32_t seq);
static void put_ip(struct nlmsghdr *nlh, uint16_t type,
		   const struct netaddr *a);
static void enqueue(struct sets *s, struct batch *b);
static int batch_for(const struct netaddr *addrs, size_t n, sets_done_fn done,
		     void *arg, struct batch **out);
static void put_add(struct sets *s, struct item *it, const struct netaddr *a,
		    uint64_t exp, uint64_t now);
static size_t put_client(struct sets *s, struct item *it,
			 const struct netaddr *peer, const struct netaddr *a,
			 uint32_t timeout);
static uint64_t want_expiry(struct sets *s, const struct dns_addr *d,
			    uint64_t now);
static size_t frame_items(const struct batch *b, size_t from);
static struct sets *sets_new(struct event_base *base,
			     const struct sets_params *p,
			     struct expiry_map *map, char *err, size_t errlen);
static int sets_events(struct sets *s);
static void flush_remote(struct sets *s);
static void read_remote(struct sets *s);
struct remote_plan;
static void plan_remote(struct sets *s, struct remote_plan *p);
static void take_remote_done(struct sets *s, const struct ipc_msg *m);
static void parent_gone(struct sets *s, const char *why);
static int remote_code(int32_t status);

uint32_t sets_timeout(uint32_t ttl, uint32_t min, uint32_t max)
{
	uint32_t t = ttl;

	if (t < min)
		t = min;
	if (t > max)
		t = max;
	if (t == 0)
		t = 1; /* 0 would mean "never expires" to the kernel */
	if (t > SETS_KERNEL_MAX_TIMEOUT)
		t = SETS_KERNEL_MAX_TIMEOUT;
	return t;
}

bool sets_name_valid(const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++) {
		char c = name[i];

		if (i >= IPSET_MAXNAMELEN - 1)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	/* A leading '-' would read as an option to libipset's parser. */
	return i > 0 && name[0] != '-';
}

int sets_build_add(void *buf, size_t cap, const char *setname,
		   const struct netaddr *a, uint32_t timeout, uint32_t seq)
{
	return build_msg(buf, cap, IPSET_CMD_ADD, setname, a, timeout, seq);
}

int sets_build_del(void *buf, size_t cap, const char *setname,
		   const struct netaddr *a, uint32_t seq)
{
	return build_msg(buf, cap, IPSET_CMD_DEL, setname, a, 0, seq);
}

int sets_build_client_add(void *buf, size_t cap, const char *setname,
			  const struct netaddr *client, uint8_t proto,
			  uint16_t port, const struct netaddr *a,
			  uint32_t timeout, uint32_t seq)
{
	struct nlmsghdr *nlh;
	struct nlattr *data;

	if (client->family != a->family ||
	    (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return -EINVAL;
	if ((nlh = put_head(buf, cap, IPSET_CMD_ADD, setname, a, seq)) == NULL)
		return cap < SETS_ADD_MSG_MAX ? -ENOSPC : -EINVAL;
	data = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	put_ip(nlh, IPSET_ATTR_IP, client);
	mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER,
			 htons(port));
	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTO, proto);
	put_ip(nlh, IPSET_ATTR_IP2, a);
	mnl_attr_put_u32(nlh, IPSET_ATTR_TIMEOUT | NLA_F_NET_BYTEORDER,
			 htonl(timeout));
	mnl_attr_nest_end(nlh, data);
	return (int)nlh->nlmsg_len;
}

/* The request's header for an entry of a's family in setname: NULL when
 * the name or family is bad, or cap < SETS_ADD_MSG_MAX. */
static struct nlmsghdr *put_head(void *buf, size_t cap, int cmd,
				 const char *setname, const struct netaddr *a,
				 uint32_t seq)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	if (!sets_name_valid(setname) ||
	    (a->family != AF_INET && a->family != AF_INET6) ||
	    cap < SETS_ADD_MSG_MAX)
		return NULL;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_IPSET << 8) | cmd;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = a->family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(0);
	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, IPSET_PROTOCOL);
	mnl_attr_put_strz(nlh, IPSET_ATTR_SETNAME, setname);
	return nlh;
}

/* a as the nested address attribute type (IPSET_ATTR_IP, _IP2). */
static void put_ip(struct nlmsghdr *nlh, uint16_t type, const struct netaddr *a)
{
	bool v4 = a->family == AF_INET;
	struct nlattr *ip = mnl_attr_nest_start(nlh, type);

	mnl_attr_put(nlh,
		     (v4 ? IPSET_ATTR_IPADDR_IPV4 : IPSET_ATTR_IPADDR_IPV6) |
			 NLA_F_NET_BYTEORDER,
		     v4 ? 4 : 16, a->bytes);
	mnl_attr_nest_end(nlh, ip);
}

/* An add carries the timeout; a del has none. */
static int build_msg(void *buf, size_t cap, int cmd, const char *setname,
		     const struct netaddr *a, uint32_t timeout, uint32_t seq)
{
	struct nlmsghdr *nlh;
	struct nlattr *data;

	if ((nlh = put_head(buf, cap, cmd, setname, a, seq)) == NULL)
		return sets_name_valid(setname) &&
			       (a->family == AF_INET || a->family == AF_INET6)
			   ? -ENOSPC
			   : -EINVAL;
	data = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	put_ip(nlh, IPSET_ATTR_IP, a);
	if (cmd == IPSET_CMD_ADD)
		mnl_attr_put_u32(nlh, IPSET_ATTR_TIMEOUT | NLA_F_NET_BYTEORDER,
				 htonl(timeout));
	mnl_attr_nest_end(nlh, data);
	return (int)nlh->nlmsg_len;
}

static int fam_index(const struct netaddr *a)
{
	return a->family == AF_INET ? 0 : 1;
}

/* ---- event loop side ---- */

struct sets *sets_open(struct event_base *base, const struct sets_params *p,
		       char *err, size_t errlen)
{
	struct sets *s = sets_new(
	    base, p, expiry_new_window(SETS_WINDOW_MAP_MAX, SETS_FRESH_SECONDS),
	    err, errlen);

	if (s == NULL)
		return NULL;
	if (socket_setup(s, err, errlen) < 0)
		goto fail;
	if (sets_events(s) != 0) {
		snprintf(err, errlen, "sets: out of memory");
		goto fail;
	}
	return s;
fail:
	sets_close(s);
	return NULL;
}

struct sets *sets_open_remote(struct event_base *base,
			      const struct sets_params *p, int chan, char *err,
			      size_t errlen)
{
	struct sets *s = sets_new(
	    base, p, expiry_new_window(SETS_WINDOW_MAP_MAX, SETS_FRESH_SECONDS),
	    err, errlen);

	if (s == NULL) {
		close(chan);
		return NULL;
	}
	s->remote = true;
	s->fd = chan;
	s->inbox = ipc_inbox_new(REMOTE_FRAME_CAP);
	if (s->inbox == NULL) {
		snprintf(err, errlen, "sets: out of memory");
		sets_close(s);
		return NULL;
	}
	/* The parent holds up to SETWRITER_INFLIGHT_MAX frames; one frame
	 * has at least one request. */
	s->inflight_max = INFLIGHT_CAP;
	if (sets_events(s) != 0) {
		snprintf(err, errlen, "sets: out of memory");
		sets_close(s);
		return NULL;
	}
	return s;
}

/* The state both transports share, map taken over (NULL: no memory); no
 * socket yet (fd -1). */
static struct sets *sets_new(struct event_base *base,
			     const struct sets_params *p,
			     struct expiry_map *map, char *err, size_t errlen)
{
	struct sets *s = NULL;

	if (!sets_name_valid(p->set4) || !sets_name_valid(p->set6)) {
		snprintf(err, errlen, "sets: invalid set name \"%s\"",
			 sets_name_valid(p->set4) ? p->set6 : p->set4);
		expiry_free(map);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		expiry_free(map);
		goto nomem;
	}
	s->base = base;
	s->fd = -1;
	s->seq = monotime_s() & 0xffffffu; /* not 0, unlike the kernel's own */
	s->seq_floor = s->seq;
	snprintf(s->name[0], sizeof(s->name[0]), "%s", p->set4);
	snprintf(s->name[1], sizeof(s->name[1]), "%s", p->set6);
	if (p->client4 != NULL && p->client6 != NULL) {
		if (!sets_name_valid(p->client4) ||
		    !sets_name_valid(p->client6) ||
		    p->n_ports > SETS_CLIENT_PORTS_MAX) {
			snprintf(err, errlen,
				 "sets: invalid client set \"%s\" or %zu "
				 "ports",
				 p->client4, p->n_ports);
			sets_close(s);
			return NULL;
		}
		snprintf(s->client_name[0], sizeof(s->client_name[0]), "%s",
			 p->client4);
		snprintf(s->client_name[1], sizeof(s->client_name[1]), "%s",
			 p->client6);
		for (size_t i = 0; i < p->n_ports; i++)
			s->ports[i] = p->ports[i];
		s->n_ports = p->n_ports;
	}
	s->ttl_min = p->ttl_min;
	s->ttl_max = p->ttl_max;
	TAILQ_INIT(&s->queue);
	TAILQ_INIT(&s->ready);
	s->map = map;
	s->sendbuf = malloc(SEND_LIMIT + SETS_ADD_MSG_MAX);
	s->recvbuf = calloc(RECV_VLEN, sizeof(*s->recvbuf));
	if (s->map == NULL || s->sendbuf == NULL || s->recvbuf == NULL)
		goto nomem;
	recv_headers(s);
	return s;
nomem:
	snprintf(err, errlen, "sets: out of memory");
	sets_close(s);
	return NULL;
}

/* The events on s->fd: 0 or -ENOMEM. */
static int sets_events(struct sets *s)
{
	s->flush_ev = event_new(s->base, -1, 0, flush_cb, s);
	s->write_ev = event_new(s->base, s->fd, EV_WRITE, flush_cb, s);
	s->retry_ev = event_new(s->base, -1, 0, flush_cb, s);
	s->read_ev =
	    event_new(s->base, s->fd, EV_READ | EV_PERSIST, read_cb, s);
	s->deadline_ev = evtimer_new(s->base, on_deadline, s);
	if (s->flush_ev == NULL || s->write_ev == NULL || s->retry_ev == NULL ||
	    s->read_ev == NULL || s->deadline_ev == NULL ||
	    event_add(s->read_ev, NULL) < 0)
		return -ENOMEM;
	return 0;
}

static int socket_setup(struct sets *s, char *err, size_t errlen)
{
	int one = 1, rcvbuf = RCVBUF_WANT;
	socklen_t len = sizeof(rcvbuf);

	s->nl =
	    mnl_socket_open2(NETLINK_NETFILTER, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (s->nl == NULL ||
	    mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "sets: netlink socket: %s",
			 strerror(errno));
		return -errno;
	}
	s->fd = mnl_socket_get_fd(s->nl);
	s->portid = mnl_socket_get_portid(s->nl);
	/* Errors then carry only the request's header: the seq is enough. */
	(void)mnl_socket_setsockopt(s->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) < 0)
		(void)setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				 sizeof(rcvbuf));
	if (getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len) < 0)
		rcvbuf = 0;
	s->inflight_max = (size_t)rcvbuf / ACK_TRUESIZE;
	if (s->inflight_max < INFLIGHT_FLOOR)
		s->inflight_max = INFLIGHT_FLOOR;
	if (s->inflight_max > INFLIGHT_CAP)
		s->inflight_max = INFLIGHT_CAP;
	log_debug(SYS, "netlink portid %u, rcvbuf %d, %zu requests in flight",
		  s->portid, rcvbuf, s->inflight_max);
	return 0;
}

void sets_close(struct sets *s)
{
	struct batch *b;

	if (s == NULL)
		return;
	while ((b = TAILQ_FIRST(&s->queue)) != NULL) {
		TAILQ_REMOVE(&s->queue, b, link);
		free(b);
	}
	while ((b = TAILQ_FIRST(&s->ready)) != NULL) {
		TAILQ_REMOVE(&s->ready, b, link);
		free(b);
	}
	if (s->flush_ev != NULL)
		event_free(s->flush_ev);
	if (s->write_ev != NULL)
		event_free(s->write_ev);
	if (s->retry_ev != NULL)
		event_free(s->retry_ev);
	if (s->read_ev != NULL)
		event_free(s->read_ev);
	if (s->deadline_ev != NULL)
		event_free(s->deadline_ev);
	if (s->nl != NULL)
		mnl_socket_close(s->nl);
	if (s->remote && s->fd >= 0)
		close(s->fd);
	expiry_free(s->map);
	ipc_inbox_free(s->inbox);
	free(s->sendbuf);
	free(s->recvbuf);
	free(s);
}

void sets_set_ttl(struct sets *s, uint32_t ttl_min, uint32_t ttl_max)
{
	s->ttl_min = ttl_min;
	s->ttl_max = ttl_max;
}

void sets_entries(const struct sets *s, size_t *v4, size_t *v6)
{
	*v4 = expiry_count_family(s->map, AF_INET);
	*v6 = expiry_count_family(s->map, AF_INET6);
}

void sets_forget(struct sets *s)
{
	if (s == NULL)
		return;
	expiry_clear(s->map);
	log_info(SYS, "forgot every set entry's expiry (sets recreated)");
	if (s->forgot != NULL)
		s->forgot(s->forgot_arg);
}

void sets_quiet(struct sets *s)
{
	s->fails[0].quiet = true;
	s->fails[1].quiet = true;
}

void sets_on_forget(struct sets *s, void (*fn)(void *arg), void *arg)
{
	s->forgot = fn;
	s->forgot_arg = arg;
}

void sets_set_floor(struct sets *s, sets_floor_fn fn, void *arg)
{
	s->floor = fn;
	s->floor_arg = arg;
}

/* Does the kernel hold d's entry, confirmed within SETS_FRESH_SECONDS
 * and living at least as long as d's TTL asks (and the floor)? Skip only
 * that: a set flushed or recreated behind our back is refilled by the
 * next answer after that. Otherwise *exp is the expiry to send: never
 * shorter than the floor (the longest any answer asked for the entry),
 * an entry acked within the window, nor a longer add still in flight (it
 * may land after this one). */
static bool covered(struct sets *s, const struct dns_addr *d, uint64_t now,
		    uint64_t *exp)
{
	return expiry_covers(s->map, &d->addr, want_expiry(s, d, now), now,
			     SETS_FRESH_SECONDS, exp);
}

/* What d's TTL asks, or the floor if that is longer (monotonic s). */
static uint64_t want_expiry(struct sets *s, const struct dns_addr *d,
			    uint64_t now)
{
	uint64_t want = now + sets_timeout(d->ttl, s->ttl_min, s->ttl_max);

	if (s->floor != NULL) {
		uint64_t floor = s->floor(s->floor_arg, &d->addr, now);

		if (floor > want)
			want = floor;
	}
	return want;
}

bool sets_has_clients(const struct sets *s)
{
	return s->client_name[0][0] != '\0';
}

uint64_t sets_expires(struct sets *s, const struct netaddr *a)
{
	uint64_t acked, inflight;

	expiry_get(s->map, a, monotime_s(), &acked, &inflight, NULL);
	return acked > inflight ? acked : inflight;
}

bool sets_covered(struct sets *s, const struct dns_addr *addrs, size_t n)
{
	uint64_t now = monotime_s(), exp;

	for (size_t i = 0; i < n; i++) {
		if (!covered(s, &addrs[i], now, &exp))
			return false;
	}
	stats_add(STAT_ADDR_SKIPPED, n);
	return true;
}

/* A batch of room for n items, its deadline running from now: adds and
 * deletes alike fail with ETIMEDOUT when their acks have not all come by
 * then. NULL when n is too large or memory is short. */
static struct batch *batch_new(size_t n, sets_done_fn done, void *arg)
{
	struct batch *b;

	if (n > (SIZE_MAX - sizeof(*b)) / sizeof(b->items[0]))
		return NULL;
	b = calloc(1, sizeof(*b) + n * sizeof(b->items[0]));
	if (b == NULL)
		return NULL;
	b->done = done;
	b->arg = arg;
	b->deadline = monotime_ms() + SETS_DEADLINE_MS;
	return b;
}

int sets_add(struct sets *s, const struct dns_addr *addrs, size_t n,
	     sets_done_fn done, void *arg)
{
	return sets_add_for(s, addrs, n, NULL, 0, done, arg);
}

int sets_add_for(struct sets *s, const struct dns_addr *addrs, size_t n,
		 const struct netaddr *clients, size_t n_clients,
		 sets_done_fn done, void *arg)
{
	struct batch *b;
	uint64_t now = monotime_s();
	size_t i, k = 0, m = 0, per = s->remote ? 1 : s->n_ports;

	if (!sets_has_clients(s))
		n_clients = 0;
	for (i = 0; i < n; i++) {
		if (addrs[i].addr.family != AF_INET &&
		    addrs[i].addr.family != AF_INET6)
			return -EINVAL;
		for (size_t c = 0; c < n_clients; c++)
			m +=
			    clients[c].family == addrs[i].addr.family ? per : 0;
	}
	b = batch_new(n + m, done, arg);
	if (b == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct netaddr *a = &addrs[i].addr;
		uint64_t want = want_expiry(s, &addrs[i], now), exp;

		/* covered(), with want kept for the client entries */
		if (expiry_covers(s->map, a, want, now, SETS_FRESH_SECONDS,
				  &exp)) {
			stats_inc(STAT_ADDR_SKIPPED);
			exp = want;
		} else {
			put_add(s, &b->items[k++], a, exp, now);
		}
		for (size_t c = 0; c < n_clients; c++)
			if (clients[c].family == a->family)
				k += put_client(s, &b->items[k], &clients[c], a,
						(uint32_t)(exp - now));
	}
	b->n = k;
	enqueue(s, b);
	return 0;
}

int sets_add_clients(struct sets *s, const struct ipc_pair *pairs, size_t n,
		     sets_done_fn done, void *arg)
{
	size_t per = s->remote ? 1 : s->n_ports, k = 0;
	struct batch *b;

	if (!sets_has_clients(s))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (pairs[i].client.family != pairs[i].addr.family ||
		    (pairs[i].addr.family != AF_INET &&
		     pairs[i].addr.family != AF_INET6))
			return -EINVAL;
	b = batch_new(n * per, done, arg);
	if (b == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		k += put_client(
		    s, &b->items[k], &pairs[i].client, &pairs[i].addr,
		    sets_timeout(pairs[i].ttl, s->ttl_min, s->ttl_max));
	b->n = k;
	enqueue(s, b);
	return 0;
}

/* The client entries of (peer, a) into it[]: one per port over netlink,
 * one (port 0, the parent's to expand) over the channel. How many. */
static size_t put_client(struct sets *s, struct item *it,
			 const struct netaddr *peer, const struct netaddr *a,
			 uint32_t timeout)
{
	size_t per = s->remote ? 1 : s->n_ports;

	for (size_t p = 0; p < per; p++) {
		it[p].addr = *a;
		it[p].peer = *peer;
		it[p].client = true;
		it[p].timeout = timeout;
		it[p].proto = s->remote ? 0 : s->ports[p].proto;
		it[p].port = s->remote ? 0 : s->ports[p].port;
	}
	return per;
}

/* An add of a until exp (after now), remembered as in flight. */
static void put_add(struct sets *s, struct item *it, const struct netaddr *a,
		    uint64_t exp, uint64_t now)
{
	(void)expiry_note_inflight(s->map, a, exp, now);
	it->addr = *a;
	it->timeout = (uint32_t)(exp - now);
	it->expires = exp;
}

static void enqueue(struct sets *s, struct batch *b)
{
	if (b->n == 0) {
		TAILQ_INSERT_TAIL(&s->ready, b, link);
	} else {
		TAILQ_INSERT_TAIL(&s->queue, b, link);
		if (s->send_next == NULL)
			s->send_next = b;
		if (!evtimer_pending(s->deadline_ev, NULL))
			arm_deadline(s);
	}
	event_active(s->flush_ev, EV_TIMEOUT, 0);
}

/* A batch for n requests about addrs, each AF_INET or AF_INET6: 0 and
 * *out, -EINVAL (nothing made) or -ENOMEM. */
static int batch_for(const struct netaddr *addrs, size_t n, sets_done_fn done,
		     void *arg, struct batch **out)
{
	for (size_t i = 0; i < n; i++)
		if (addrs[i].family != AF_INET && addrs[i].family != AF_INET6)
			return -EINVAL;
	*out = batch_new(n, done, arg);
	return *out != NULL ? 0 : -ENOMEM;
}

/* The expiry map forgets each address now, so that an add queued
 * after this del is sent, and again at the del's ack, which comes after
 * the ack of any add sent before it (acks follow the sequence). */
int sets_del(struct sets *s, const struct netaddr *addrs, size_t n,
	     sets_done_fn done, void *arg)
{
	struct batch *b;
	int rc = batch_for(addrs, n, done, arg, &b);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		b->items[i].addr = addrs[i];
		b->items[i].del = true;
		expiry_forget(s->map, &addrs[i]);
	}
	b->n = n;
	enqueue(s, b);
	return 0;
}

/* The one add that may shorten an entry: the expiry map forgets
 * each address first, so the add carries exactly the new expiry, and the
 * kernel's re-add (no NLM_F_EXCL) sets the entry's timeout to it. */
int sets_shorten(struct sets *s, const struct netaddr *addrs,
		 const uint64_t *expires, size_t n, sets_done_fn done,
		 void *arg)
{
	uint64_t now = monotime_s();
	struct batch *b;
	int rc = batch_for(addrs, n, done, arg, &b);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		uint64_t exp = expires[i];

		if (exp <= now)
			exp = now + 1;
		if (exp - now > SETS_KERNEL_MAX_TIMEOUT)
			exp = now + SETS_KERNEL_MAX_TIMEOUT;
		expiry_forget(s->map, &addrs[i]);
		put_add(s, &b->items[i], &addrs[i], exp, now);
	}
	b->n = n;
	b->shorten = true;
	enqueue(s, b);
	return 0;
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sets *s = arg;
	struct batch_list done;
	struct batch *b;

	(void)fd;
	(void)what;
	/* Batches that skipped everything: done, from the loop. Those that
	 * their done callbacks add wait for the next run. */
	TAILQ_INIT(&done);
	TAILQ_CONCAT(&done, &s->ready, link);
	while ((b = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, b, link);
		b->done(b->arg, 0);
		free(b);
	}
	flush(s);
}

/* Serialize queued requests from send_next on into nb, up to SEND_LIMIT
 * bytes and the in-flight cap, without touching the batches (commit does
 * that once the send went out). Returns the number of requests. */
static size_t fill(struct sets *s, struct mnl_nlmsg_batch *nb)
{
	struct batch *b = s->send_next;
	size_t i = b->sent, count = 0;
	uint32_t seq = s->seq;

	while (b != NULL && s->inflight + count < s->inflight_max &&
	       mnl_nlmsg_batch_size(nb) + SETS_ADD_MSG_MAX <= SEND_LIMIT) {
		const struct item *it = &b->items[i];
		int fam = fam_index(&it->addr);
		int len =
		    it->client
			? sets_build_client_add(
			      mnl_nlmsg_batch_current(nb), SETS_ADD_MSG_MAX,
			      s->client_name[fam], &it->peer, it->proto,
			      it->port, &it->addr, it->timeout, seq++)
			: build_msg(
			      mnl_nlmsg_batch_current(nb), SETS_ADD_MSG_MAX,
			      it->del ? IPSET_CMD_DEL : IPSET_CMD_ADD,
			      s->name[fam], &it->addr, it->timeout, seq++);

		if (len < 0) /* names and families were checked */
			break;
		mnl_nlmsg_batch_next(nb);
		count++;
		if (++i == b->n) {
			b = TAILQ_NEXT(b, link);
			i = 0;
		}
	}
	return count;
}

/* count requests from send_next on went out: give them their seqs. */
static void commit(struct sets *s, size_t count)
{
	while (count > 0) {
		struct batch *b = s->send_next;
		size_t k = b->n - b->sent;

		if (k > count)
			k = count;
		if (b->sent == 0)
			b->seq0 = s->seq;
		b->sent += k;
		s->seq += (uint32_t)k;
		s->inflight += k;
		count -= k;
		if (b->sent == b->n)
			s->send_next = TAILQ_NEXT(b, link);
	}
}

static void flush(struct sets *s)
{
	struct mnl_nlmsg_batch *nb = NULL;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

	if (s->remote) {
		flush_remote(s);
		return;
	}
	while (!s->draining && s->send_next != NULL &&
	       s->inflight < s->inflight_max) {
		uint32_t first = s->seq;
		size_t count;
		ssize_t r;

		nb = mnl_nlmsg_batch_start(s->sendbuf, SEND_LIMIT);
		if (nb == NULL)
			break;
		count = fill(s, nb);
		if (count == 0)
			goto out;
		r = sendto(s->fd, mnl_nlmsg_batch_head(nb),
			   mnl_nlmsg_batch_size(nb), 0,
			   (struct sockaddr *)&kernel, sizeof(kernel));
		if (r < 0 && errno == EAGAIN) {
			event_add(s->write_ev, NULL);
			goto out;
		}
		if (r < 0 && (errno == ENOBUFS || errno == ENOMEM)) {
			struct timeval tv = {0, 10000};

			event_add(s->retry_ev, &tv);
			goto out;
		}
		commit(s, count);
		if (r < 0) {
			int code = errno;
			size_t i;

			log_limited(LOG_CLASS_SETS, LOGL_ERR, SYS,
				    "netlink sendto: %s", strerror(code));
			for (i = 0; i < count; i++)
				on_ack(s, first + (uint32_t)i, code);
		}
		mnl_nlmsg_batch_stop(nb);
		nb = NULL;
	}
out:
	if (nb != NULL)
		mnl_nlmsg_batch_stop(nb);
}

static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	read_acks(arg);
}

void sets_read(struct sets *s)
{
	read_acks(s);
}

size_t sets_inflight(const struct sets *s)
{
	return s->inflight;
}

uint64_t sets_behind_ms(const struct sets *s)
{
	const struct batch *b = TAILQ_FIRST(&s->queue);
	uint64_t made, now;

	if (b == NULL)
		return 0;
	made = b->deadline - SETS_DEADLINE_MS;
	now = monotime_ms();
	return now > made ? now - made : 0;
}

/* The first batch's deadline, or nothing when the queue is empty (the
 * queue is in arrival order, so deadlines only grow along it). */
static void arm_deadline(struct sets *s)
{
	struct batch *b = TAILQ_FIRST(&s->queue);
	uint64_t now = monotime_ms(), wait;
	struct timeval tv;

	if (b == NULL) {
		evtimer_del(s->deadline_ev);
		return;
	}
	wait = b->deadline > now ? b->deadline - now : 0;
	tv.tv_sec = (time_t)(wait / 1000);
	tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
	evtimer_add(s->deadline_ev, &tv);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct sets *s = arg;
	uint64_t now = monotime_ms();
	struct batch *b;

	(void)fd;
	(void)what;
	while ((b = TAILQ_FIRST(&s->queue)) != NULL && b->deadline <= now)
		fail_batch(s, b, ETIMEDOUT);
	arm_deadline(s);
	if (s->send_next != NULL)
		event_active(s->flush_ev, EV_TIMEOUT, 0);
}

/* b fails with code: its unacked requests no longer count in flight (a
 * late ack finds no batch and is ignored), its unsent ones are dropped. */
static void fail_batch(struct sets *s, struct batch *b, int code)
{
	int fam = fam_index(&b->items[b->acked < b->n ? b->acked : 0].addr);

	s->inflight -= b->sent - b->acked;
	setserr_note(&s->fails[fam], s->name[fam],
		     &b->items[b->acked < b->n ? b->acked : 0].addr, code);
	if (b->status == 0)
		b->status =
		    code == ETIMEDOUT ? -ETIMEDOUT : setserr_status(code);
	b->n = b->acked = b->sent;
	batch_finish(s, b);
}

/* The headers of s->recvbuf's slots, made once: recvmmsg writes back
 * only each one's length and flags (no name, no control data). */
static void recv_headers(struct sets *s)
{
	for (size_t i = 0; i < RECV_VLEN; i++) {
		s->recv_iov[i].iov_base = s->recvbuf[i];
		s->recv_iov[i].iov_len = RECV_MSGSIZE;
		s->recv_msgs[i].msg_hdr.msg_iov = &s->recv_iov[i];
		s->recv_msgs[i].msg_hdr.msg_iovlen = 1;
	}
}

static void read_acks(struct sets *s)
{
	struct mmsghdr *msgs = s->recv_msgs;
	int round, i, r;

	if (s->remote) {
		read_remote(s);
		return;
	}
	for (round = 0; round < RECV_ROUNDS; round++) {
		r = recvmmsg(s->fd, msgs, RECV_VLEN, MSG_DONTWAIT, NULL);
		if (r < 0 && errno == EAGAIN && s->draining) {
			s->draining = false;
			log_limited(LOG_CLASS_SETS, LOGL_INFO, SYS,
				    "netlink socket read dry: sending again");
		}
		if (r < 0) {
			if (errno == ENOBUFS) {
				s->draining = true;
				log_limited(LOG_CLASS_SETS, LOGL_ERR, SYS,
					    "netlink acks lost (receive "
					    "buffer overrun)");
				fail_inflight(s, ENOBUFS);
				continue;
			}
			if (errno != EAGAIN && errno != EINTR)
				log_limited(LOG_CLASS_SETS, LOGL_ERR, SYS,
					    "netlink recv: %s",
					    strerror(errno));
			break;
		}
		for (i = 0; i < r; i++)
			parse_acks(s, s->recvbuf[i], msgs[i].msg_len);
		if (r < RECV_VLEN)
			break;
	}
	if (!s->draining && s->send_next != NULL &&
	    s->inflight < s->inflight_max)
		event_active(s->flush_ev, EV_TIMEOUT, 0);
}

static void parse_acks(struct sets *s, const uint8_t *buf, size_t len)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	int left = (int)len;

	while (mnl_nlmsg_ok(nlh, left)) {
		const struct nlmsgerr *e;

		if (nlh->nlmsg_type == NLMSG_ERROR &&
		    mnl_nlmsg_get_payload_len(nlh) >= sizeof(*e)) {
			e = mnl_nlmsg_get_payload(nlh);
			on_ack(s, nlh->nlmsg_seq, -e->error);
		}
		nlh = mnl_nlmsg_next(nlh, &left);
	}
}

/* The ack (code 0) or error for request seq. */
static void on_ack(struct sets *s, uint32_t seq, int code)
{
	struct batch *b;

	if ((int32_t)(seq - s->seq_floor) < 0)
		return; /* already failed by fail_inflight */
	TAILQ_FOREACH(b, &s->queue, link)
	{
		if (b->sent > 0 && seq - b->seq0 < b->sent) {
			item_result(s, b, seq - b->seq0, code);
			return;
		}
		if (b == s->send_next && b->sent == 0)
			break;
	}
	log_limited(LOG_CLASS_SETS, LOGL_DEBUG, SYS,
		    "netlink ack for unknown seq %u", seq);
}

static void item_result(struct sets *s, struct batch *b, size_t i, int code)
{
	const struct item *it = &b->items[i];
	int fam = fam_index(&it->addr);
	const char *set = it->client ? s->client_name[fam] : s->name[fam];

	s->inflight--;
	/* Not in the set (expired meanwhile) is what a del wants. */
	if (it->del && code == IPSET_ERR_EXIST)
		code = 0;
	if (it->del)
		expiry_forget(s->map, &it->addr);
	if (code == 0 && it->del) {
		stats_inc(STAT_ADDR_EVICTED);
	} else if (code == 0 && it->client) {
		setserr_ok(&s->fails[fam], set);
	} else if (code == 0) {
		stats_inc(STAT_ADDR_ADDED);
		(void)expiry_note_acked(s->map, &it->addr, it->expires,
					monotime_s());
		setserr_ok(&s->fails[fam], set);
	} else {
		if (b->status == 0)
			b->status = setserr_status(code);
		/* A recreated set is empty: the map's claims are void. */
		if (code == ENOENT)
			expiry_clear(s->map);
		setserr_note(&s->fails[fam], set, &it->addr, code);
	}
	if (++b->acked == b->n)
		batch_finish(s, b);
}

static void batch_finish(struct sets *s, struct batch *b)
{
	if (s->send_next == b)
		s->send_next = TAILQ_NEXT(b, link);
	TAILQ_REMOVE(&s->queue, b, link);
	b->done(b->arg, b->status);
	free(b);
}

/* Acks were dropped: nothing tells which requests made it, so every batch
 * with requests in flight fails (fail closed), unsent rest included. */
static void fail_inflight(struct sets *s, int code)
{
	struct batch *b, *next;

	s->seq_floor = s->seq;
	for (b = TAILQ_FIRST(&s->queue); b != NULL; b = next) {
		next = TAILQ_NEXT(b, link);
		if (b->sent == 0)
			break;
		fail_batch(s, b, code);
	}
}

/* ---- the remote transport: the DNS process's frames to the parent ----
 *
 * Each batch goes out in frames of at most IPC_ADD_MAX requests (IPC_ADD,
 * IPC_DEL, or IPC_SHORTEN for sets_shorten's), a frame's id the seq of
 * its first request, so that its one IPC_ADD_DONE answers each of its
 * requests through on_ack as the kernel's acks do; the map, the
 * deadlines and the batches are the same as over netlink. The parent
 * judges and clamps again; its status is the batch's. A closed or broken
 * channel fails everything in flight and every later request: the parent
 * is gone, nothing can enter a set any more, and no client is answered
 * with an address that is not in one. */

/* The frames of one send, from send_next on: up to IPC_INBOX_FRAMES, as
 * many as fit in s->sendbuf and the in-flight cap allows. */
struct remote_plan {
	uint8_t *frame[IPC_INBOX_FRAMES];
	size_t len[IPC_INBOX_FRAMES];
	size_t k[IPC_INBOX_FRAMES]; /* requests in each */
	size_t n;
	int err; /* the encoding of frame n failed (never: checked) */
};

/* The requests of the frame that starts at b->items[from]: the run of
 * items of one kind (client entries, or not) from there, at most a
 * frame's (IPC_PAIR_MAX, IPC_ADD_MAX). plan_remote cuts the frames so,
 * and take_remote_done finds a frame's requests so. */
static size_t frame_items(const struct batch *b, size_t from)
{
	bool client = b->items[from].client;
	size_t max = client ? IPC_PAIR_MAX : IPC_ADD_MAX, k = 0;

	while (from + k < b->n && k < max &&
	       b->items[from + k].client == client)
		k++;
	return k;
}

/* One frame of b's k requests from sent, seq the first's, into buf: its
 * length or -errno. */
static int encode_frame(const struct batch *b, size_t sent, size_t k,
			uint32_t seq, uint8_t *buf, size_t cap)
{
	struct ipc_addr recs[IPC_ADD_MAX];
	struct ipc_pair pairs[IPC_PAIR_MAX];
	enum ipc_type type = b->items[sent].del ? IPC_DEL
			     : b->shorten	? IPC_SHORTEN
						: IPC_ADD;

	for (size_t i = 0; i < k; i++) {
		const struct item *it = &b->items[sent + i];

		if (it->client) {
			pairs[i].client = it->peer;
			pairs[i].addr = it->addr;
			pairs[i].ttl = it->timeout;
		} else {
			recs[i].addr = it->addr;
			recs[i].ttl = it->del ? 0 : it->timeout;
		}
	}
	if (b->items[sent].client)
		return ipc_encode_pairs(buf, cap, seq, pairs, k);
	return ipc_encode_addrs(buf, cap, type, seq, recs, k);
}

static void plan_remote(struct sets *s, struct remote_plan *p)
{
	struct batch *b = s->send_next;
	size_t sent = b != NULL ? b->sent : 0, used = 0, planned = 0;
	uint32_t seq = s->seq;

	p->n = 0;
	p->err = 0;
	while (b != NULL && p->n < IPC_INBOX_FRAMES &&
	       s->inflight + planned < s->inflight_max) {
		size_t k = frame_items(b, sent);
		int len;

		if (used + IPC_FRAME_MAX > SEND_LIMIT + SETS_ADD_MSG_MAX)
			break;
		len = encode_frame(b, sent, k, seq, s->sendbuf + used,
				   SEND_LIMIT + SETS_ADD_MSG_MAX - used);
		if (len < 0) {
			p->err = len;
			p->k[p->n] = k;
			break;
		}
		p->frame[p->n] = s->sendbuf + used;
		p->len[p->n] = (size_t)len;
		p->k[p->n++] = k;
		used += (size_t)len;
		planned += k;
		seq += (uint32_t)k;
		sent += k;
		if (sent == b->n) {
			b = TAILQ_NEXT(b, link);
			sent = 0;
		}
	}
}

/* Every frame this loop iteration queued goes out in one sendmmsg; the
 * parent answers each in its own time. */
static void flush_remote(struct sets *s)
{
	struct remote_plan p;

	while (s->send_next != NULL && s->inflight < s->inflight_max) {
		uint32_t first;
		int sent = -EPIPE;

		plan_remote(s, &p);
		if (p.n > 0 && !s->parent_gone)
			sent = ipc_send_many(s->fd, p.frame, p.len, p.n);
		if (sent == -EAGAIN) {
			event_add(s->write_ev, NULL);
			return;
		}
		for (int i = 0; i < sent; i++)
			commit(s, p.k[i]);
		if (sent > 0)
			continue;
		/* the first frame failed: its requests fail, and the parent
		 * is gone for every later one */
		first = s->seq;
		commit(s, p.k[0]);
		for (size_t i = 0; i < p.k[0]; i++)
			on_ack(s, first + (uint32_t)i, EIO);
		if (!s->parent_gone)
			parent_gone(s, strerror(p.n > 0 ? -sent : -p.err));
	}
}

/* The requests of the answered frame whose id is its first request's seq:
 * from it to the end of its batch, at most IPC_ADD_MAX; none when the
 * batch already failed. */
static void take_remote_done(struct sets *s, const struct ipc_msg *m)
{
	struct batch *b;
	size_t k = 0;

	TAILQ_FOREACH(b, &s->queue, link)
	{
		if (b->sent > 0 && m->id - b->seq0 < b->sent) {
			k = frame_items(b, m->id - b->seq0);
			break;
		}
	}
	for (size_t j = 0; j < k; j++)
		on_ack(s, m->id + (uint32_t)j, remote_code(m->status));
}

static void read_remote(struct sets *s)
{
	struct ipc_msg m;
	const char *why = "";

	for (int round = 0; round < RECV_ROUNDS && !s->parent_gone; round++) {
		int got = ipc_inbox_recv(s->inbox, s->fd, MSG_DONTWAIT);

		if (got == -EAGAIN)
			break;
		if (got < 0) {
			parent_gone(s, strerror(-got));
			break;
		}
		for (int i = 0; i < got && !s->parent_gone; i++) {
			const uint8_t *frame;
			int passed = -1;
			ssize_t n = ipc_inbox_frame(s->inbox, (size_t)i, &frame,
						    &passed);

			if (passed >= 0) {
				close(passed);
				parent_gone(s,
					    "a descriptor on the set channel");
			} else if (n <= 0) {
				parent_gone(s, n == 0 ? "the channel closed"
						      : strerror((int)-n));
			} else if ((size_t)n > REMOTE_FRAME_CAP ||
				   ipc_decode(frame, (size_t)n, &m, &why) !=
				       0 ||
				   m.type != IPC_ADD_DONE) {
				parent_gone(s,
					    "a frame that is not IPC_ADD_DONE");
			} else {
				take_remote_done(s, &m);
			}
		}
		if (got < IPC_INBOX_FRAMES)
			break;
	}
	if (!s->parent_gone && s->send_next != NULL &&
	    s->inflight < s->inflight_max)
		event_active(s->flush_ev, EV_TIMEOUT, 0);
}

static void parent_gone(struct sets *s, const char *why)
{
	log_err(SYS,
		"the privileged parent's set channel failed (%s): every set "
		"change fails from now on",
		why);
	s->parent_gone = true;
	event_del(s->read_ev);
	fail_inflight(s, EIO);
	if (s->send_next != NULL)
		event_active(s->flush_ev, EV_TIMEOUT, 0);
}

/* The parent's status (sets_done_fn's) as the kernel code item_result
 * takes. */
static int remote_code(int32_t status)
{
	if (status == 0)
		return 0;
	if (status == -ENOENT)
		return ENOENT;
	if (status == -ENOSPC)
		return IPSET_ERR_HASH_FULL;
	return EIO;
}
