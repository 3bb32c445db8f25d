// SPDX-License-Identifier: GPL-2.0-or-later
/* ctevents: conntrack's NEW events for the allow entries' usage.
 *
 * A connection the fence accepts is confirmed by conntrack, and ctnetlink
 * announces it on the NFNLGRP_CONNTRACK_NEW group of this network
 * namespace (net.netfilter.nf_conntrack_events 1, or 2: while someone
 * listens). A rejected one is never confirmed, so every event is a flow
 * that got out; observe.c gives its destination to the recent memory to
 * find the name, and the name's allow entry counts a flow.
 *
 * The bytes come from the kernel, but they are parsed like anything from
 * the network: nflog.c's walk over the one bounds-checked reader of
 * dnsmsg, nested attributes each within their parent, every length checked
 * before use (fuzzed: test/fuzz/fuzz_ctevents.c). A burst beyond the socket
 * buffer is dropped by the kernel (ENOBUFS): flows go uncounted, nothing else.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include "observe/ctevents.h"
#include "observe/nflog.h"

#define READS_PER_WAKE 64
#define RCVBUF	       (256 * 1024)

struct ctevents {
	struct mnl_socket *nl;
	struct event *ev;
	ct_flow_fn fn;
	void *arg;
	uint8_t buf[16384];
};

struct walk_ctx {
	int depth;
	struct ct_flow *f;
};

static int on_attr(void *arg, uint16_t type, const uint8_t *val, size_t len);
static int on_msg(void *arg, uint8_t family, const uint8_t *attrs, size_t len);
static void on_read(evutil_socket_t fd, short what, void *arg);

/* depth 0: the message (CTA_TUPLE_ORIG); 1: the tuple (CTA_TUPLE_IP,
 * CTA_TUPLE_PROTO); 2: an address or the protocol and port. Which
 * nest a depth-2 attribute is in is told by its type and size alone:
 * CTA_IP_V4_DST (2) is 4 bytes, CTA_PROTO_DST_PORT (3) is 2. */
static int on_attr(void *arg, uint16_t type, const uint8_t *val, size_t len)
{
	struct walk_ctx *w = arg;
	struct walk_ctx in = {w->depth + 1, w->f};
	struct ct_flow *f = w->f;

	if (w->depth == 0)
		return type == CTA_TUPLE_ORIG
			   ? nflog_each_attr(val, len, on_attr, &in)
			   : 0;
	if (w->depth == 1)
		return type == CTA_TUPLE_IP || type == CTA_TUPLE_PROTO
			   ? nflog_each_attr(val, len, on_attr, &in)
			   : 0;
	if (type == CTA_IP_V4_DST && len == 4) {
		f->dst.family = AF_INET;
		memcpy(f->dst.bytes, val, 4);
	} else if (type == CTA_IP_V6_DST && len == 16) {
		f->dst.family = AF_INET6;
		memcpy(f->dst.bytes, val, 16);
	} else if (type == CTA_PROTO_NUM && len == 1) {
		f->proto = val[0];
	} else if (type == CTA_PROTO_DST_PORT && len == 2) {
		f->dport = (uint16_t)(val[0] << 8 | val[1]);
	}
	return 0;
}

struct parse_ctx {
	ct_flow_fn fn;
	void *arg;
};

/* One NEW message: its flow, or skipped (1) without a destination. */
static int on_msg(void *arg, uint8_t family, const uint8_t *attrs, size_t len)
{
	struct parse_ctx *c = arg;
	struct ct_flow f;
	struct walk_ctx w = {0, &f};

	(void)family;
	memset(&f, 0, sizeof(f));
	if (nflog_each_attr(attrs, len, on_attr, &w) != 0)
		return -EBADMSG;
	if (f.dst.family == 0)
		return 1;
	c->fn(c->arg, &f);
	return 0;
}

int ctevents_parse(const uint8_t *buf, size_t len, ct_flow_fn fn, void *arg)
{
	struct parse_ctx c = {fn, arg};

	return nflog_each_msg(buf, len,
			      (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW,
			      on_msg, &c);
}

struct ctevents *ctevents_open(struct event_base *base, ct_flow_fn fn,
			       void *arg, char *err, size_t errlen)
{
	struct ctevents *c = calloc(1, sizeof(*c));
	int rcvbuf = RCVBUF;

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->fn = fn;
	c->arg = arg;
	c->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (c->nl == NULL ||
	    mnl_socket_bind(c->nl, 1u << (NFNLGRP_CONNTRACK_NEW - 1),
			    MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "conntrack events: %s", strerror(errno));
		goto fail;
	}
	(void)setsockopt(mnl_socket_get_fd(c->nl), SOL_SOCKET, SO_RCVBUF,
			 &rcvbuf, sizeof(rcvbuf));
	if (evutil_make_socket_nonblocking(mnl_socket_get_fd(c->nl)) != 0)
		goto fail;
	c->ev = event_new(base, mnl_socket_get_fd(c->nl), EV_READ | EV_PERSIST,
			  on_read, c);
	if (c->ev == NULL || event_add(c->ev, NULL) != 0) {
		snprintf(err, errlen, "cannot watch the conntrack socket");
		goto fail;
	}
	return c;
fail:
	ctevents_close(c);
	return NULL;
}

void ctevents_close(struct ctevents *c)
{
	if (c == NULL)
		return;
	if (c->ev != NULL)
		event_free(c->ev);
	if (c->nl != NULL)
		mnl_socket_close(c->nl);
	free(c);
}

/* At most READS_PER_WAKE datagrams a wake-up; the event is level
 * triggered, the rest wait. Lost events (ENOBUFS) only cost counts. */
static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct ctevents *c = arg;

	(void)what;
	for (int i = 0; i < READS_PER_WAKE; i++) {
		ssize_t got = recv(fd, c->buf, sizeof(c->buf), MSG_DONTWAIT);

		if (got < 0 && errno == ENOBUFS)
			continue;
		if (got <= 0)
			return;
		(void)ctevents_parse(c->buf, (size_t)got, c->fn, c->arg);
	}
}
