// SPDX-License-Identifier: GPL-2.0-or-later
/* nflog: reading the fence's NFLOG group.
 *
 * Setup (nflog_open, while privileges allow): one NETLINK_NETFILTER
 * socket, bound to NFLOG_GROUP with NFULNL_CFG_CMD_BIND, then configured
 * to copy NFLOG_COPY_RANGE bytes of each packet and to send each one at
 * once (a queue threshold of one: the kernel's default batches up to a
 * second, and a flow blocked just before the daemon stops would never be
 * attributed; the rules' -m limit bounds the rate). There is no flag to ask
 * for the sender: the kernel adds NFULA_UID and NFULA_GID (the fsuid and
 * fsgid of the socket's file, in our user namespace) to every packet that
 * has a full local socket, and leaves them out otherwise (e.g. a reset
 * the kernel sends itself). A forwarded packet (the forward scope) has
 * no socket but NFULA_IFINDEX_INDEV, and NFULA_IFINDEX_PHYSINDEV (the
 * bridge port) when br_netfilter handed it to iptables; both are read,
 * big-endian like the uid. Each step is acked and checked, so a group
 * already held by another listener (ulogd, tcpdump -i nflog:0) is an
 * error here, not silence later.
 *
 * Reading: the kernel's messages are untrusted bytes like any other, so
 * nflog_parse walks them with dns_reader (netlink headers are host order,
 * read as bytes and copied; the IP header is network order). A flood is
 * bounded three times: by the -m limit in each rule, by the socket's
 * receive buffer (the kernel drops and we see ENOBUFS, counted as
 * nflog_lost), and by NFLOG_READS_PER_WAKE datagrams per wake-up. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>

#include "dns/dnsmsg.h"
#include "flow/flowpkt.h"
#include "base/log.h"
#include "base/pagemem.h"
#include "observe/nflog.h"
#include "base/stats.h"

#define SYS		     "nflog"
#define NFLOG_READS_PER_WAKE 64
#define NFLOG_RCVBUF	     (256 * 1024)
#define NLMSG_HDRLEN_	     16
#define NFGEN_HDRLEN	     4

struct nflog {
	struct mnl_socket *nl;
	struct event *ev;
	nflog_pkt_fn fn;
	void *arg;
	uint8_t buf[65536];
};

static int on_packet_attr(void *arg, uint16_t type, const uint8_t *val,
			  size_t len);
static int on_packet(void *arg, uint8_t family, const uint8_t *attrs,
		     size_t len);
static int parse_attr(uint16_t type, const uint8_t *val, size_t len, int family,
		      struct nflog_pkt *pkt);
static int parse_ports(struct dns_reader *r, struct nflog_pkt *pkt);
static int parse_icmp(struct dns_reader *r, struct nflog_pkt *pkt);
static int config(struct nflog *n, uint8_t cmd, bool with_mode, char *err,
		  size_t errlen);
static void on_read(evutil_socket_t fd, short what, void *arg);
static void drain(struct nflog *n);

int nflog_each_msg(const uint8_t *buf, size_t len, uint16_t type,
		   nflog_msg_fn fn, void *arg)
{
	struct dns_reader r;
	int count = 0;

	dns_reader_init(&r, buf, len);
	while (r.len - r.pos >= NLMSG_HDRLEN_) {
		size_t start = r.pos, body;
		uint32_t mlen, seq, pid;
		uint16_t mtype, flags;
		struct dns_reader m;
		uint8_t family;
		int rc;

		if (dns_read_copy(&r, &mlen, sizeof(mlen)) ||
		    dns_read_copy(&r, &mtype, sizeof(mtype)) ||
		    dns_read_copy(&r, &flags, sizeof(flags)) ||
		    dns_read_copy(&r, &seq, sizeof(seq)) ||
		    dns_read_copy(&r, &pid, sizeof(pid)))
			return -EBADMSG;
		if (mlen < NLMSG_HDRLEN_ || mlen > r.len - start)
			return -EBADMSG;
		body = mlen - NLMSG_HDRLEN_;
		dns_reader_init(&m, buf + r.pos, body);
		/* The next message starts at the 4-aligned end (or the end). */
		r.pos = start + NLMSG_ALIGN(mlen) < r.len
			    ? start + NLMSG_ALIGN(mlen)
			    : r.len;
		if (mtype != type)
			continue;
		if (dns_read_u8(&m, &family) || dns_skip(&m, NFGEN_HDRLEN - 1))
			return -EBADMSG;
		rc = fn(arg, family, m.buf + m.pos, m.len - m.pos);
		if (rc < 0)
			return -EBADMSG;
		count += rc == 0;
	}
	return count;
}

int nflog_each_attr(const uint8_t *buf, size_t len, nflog_attr_fn fn, void *arg)
{
	struct dns_reader r;

	dns_reader_init(&r, buf, len);
	while (r.len - r.pos >= 4) {
		size_t start = r.pos, alen;
		uint16_t nla_len, nla_type;
		const uint8_t *val;

		if (dns_read_copy(&r, &nla_len, sizeof(nla_len)) ||
		    dns_read_copy(&r, &nla_type, sizeof(nla_type)))
			return -EBADMSG;
		if (nla_len < 4 || nla_len > r.len - start)
			return -EBADMSG;
		alen = (size_t)nla_len - 4;
		if (dns_read_bytes(&r, &val, alen) != 0)
			return -EBADMSG;
		if (fn(arg, nla_type & NLA_TYPE_MASK, val, alen) != 0)
			return -EBADMSG;
		r.pos = start + NLA_ALIGN(nla_len) < r.len
			    ? start + NLA_ALIGN(nla_len)
			    : r.len;
	}
	return 0;
}

struct packet_ctx {
	struct nflog_pkt pkt;
	int family;
	nflog_pkt_fn fn;
	void *arg;
};

static int on_packet_attr(void *arg, uint16_t type, const uint8_t *val,
			  size_t len)
{
	struct packet_ctx *c = arg;

	return parse_attr(type, val, len, c->family, &c->pkt);
}

static int on_packet(void *arg, uint8_t family, const uint8_t *attrs,
		     size_t len)
{
	struct packet_ctx *c = arg;

	memset(&c->pkt, 0, sizeof(c->pkt));
	c->family = family;
	if (nflog_each_attr(attrs, len, on_packet_attr, c) != 0)
		return -EBADMSG;
	c->fn(c->arg, &c->pkt);
	return 0;
}

int nflog_parse(const uint8_t *buf, size_t len, nflog_pkt_fn fn, void *arg)
{
	struct packet_ctx c = {.fn = fn, .arg = arg};

	return nflog_each_msg(buf, len,
			      (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET,
			      on_packet, &c);
}

static int parse_attr(uint16_t type, const uint8_t *val, size_t len, int family,
		      struct nflog_pkt *pkt)
{
	struct dns_reader r;
	uint32_t v;
	size_t n;

	dns_reader_init(&r, val, len);
	switch (type) {
	case NFULA_PREFIX:
		n = strnlen((const char *)val, len);
		if (n >= sizeof(pkt->prefix))
			n = sizeof(pkt->prefix) - 1;
		memcpy(pkt->prefix, val, n);
		pkt->prefix[n] = '\0';
		return 0;
	case NFULA_UID:
	case NFULA_GID:
		if (dns_read_u32(&r, &v) != 0)
			return -EBADMSG;
		if (type == NFULA_UID) {
			pkt->uid = v;
			pkt->has_uid = true;
		} else {
			pkt->gid = v;
			pkt->has_gid = true;
		}
		return 0;
	case NFULA_IFINDEX_INDEV:
	case NFULA_IFINDEX_PHYSINDEV:
		if (dns_read_u32(&r, &v) != 0)
			return -EBADMSG;
		if (type == NFULA_IFINDEX_INDEV) {
			pkt->indev = v;
			pkt->has_indev = true;
		} else {
			pkt->physindev = v;
			pkt->has_physindev = true;
		}
		return 0;
	case NFULA_PAYLOAD:
		/* A payload we cannot read is reported without addresses. */
		(void)nflog_parse_ip(val, len, family, pkt);
		return 0;
	default:
		return 0;
	}
}

int nflog_parse_ip(const uint8_t *p, size_t len, int family,
		   struct nflog_pkt *out)
{
	struct dns_reader r;
	const uint8_t *a;
	uint8_t vihl, proto;

	dns_reader_init(&r, p, len);
	if (dns_read_u8(&r, &vihl) != 0)
		return -EBADMSG;
	if (family == AF_INET && (vihl >> 4) == 4 && (vihl & 15) >= 5) {
		if (dns_skip(&r, 8) || dns_read_u8(&r, &proto) ||
		    dns_skip(&r, 2) || dns_read_bytes(&r, &a, 8))
			return -EBADMSG;
		out->src.family = out->dst.family = AF_INET;
		memcpy(out->src.bytes, a, 4);
		memcpy(out->dst.bytes, a + 4, 4);
		r.pos = (size_t)(vihl & 15) * 4;
		if (r.pos > r.len)
			r.pos = r.len;
	} else if (family == AF_INET6 && (vihl >> 4) == 6) {
		if (dns_skip(&r, 5) || dns_read_u8(&r, &proto) ||
		    dns_skip(&r, 1) || dns_read_bytes(&r, &a, 32))
			return -EBADMSG;
		out->src.family = out->dst.family = AF_INET6;
		memcpy(out->src.bytes, a, 16);
		memcpy(out->dst.bytes, a + 16, 16);
		/* Past its option headers (an MLD report's hop-by-hop
		 * router alert): one cut short leaves no upper-layer
		 * header to read ports or an ICMP type from. */
		if (flowpkt_ip6_options(&r, &proto) != 0)
			r.pos = r.len;
	} else {
		return -EBADMSG;
	}
	/* A later payload attribute replaces an earlier one whole: no ports
	 * of the old packet may stay with the new protocol. */
	out->has_addrs = true;
	out->proto = proto;
	out->has_ports = false;
	out->sport = out->dport = 0;
	out->has_icmp = false;
	out->icmp_type = out->icmp_code = 0;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP)
		(void)parse_ports(&r, out);
	else if (proto == (family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6))
		(void)parse_icmp(&r, out);
	return 0;
}

static int parse_icmp(struct dns_reader *r, struct nflog_pkt *pkt)
{
	uint8_t type, code;

	if (dns_read_u8(r, &type) || dns_read_u8(r, &code))
		return -EBADMSG;
	pkt->icmp_type = type;
	pkt->icmp_code = code;
	pkt->has_icmp = true;
	return 0;
}

static int parse_ports(struct dns_reader *r, struct nflog_pkt *pkt)
{
	uint16_t sport, dport;

	if (dns_read_u16(r, &sport) || dns_read_u16(r, &dport))
		return -EBADMSG;
	pkt->sport = sport;
	pkt->dport = dport;
	pkt->has_ports = true;
	return 0;
}

/* One acked NFULNL_MSG_CONFIG for the group: a command, or (with_mode)
 * the copy mode. 0 or -errno with err set. */
static int config(struct nflog *n, uint8_t cmd, bool with_mode, char *err,
		  size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	uint32_t seq = cmd + (with_mode ? 100 : 0);
	ssize_t got;
	int rc;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(NFLOG_GROUP);
	if (with_mode) {
		struct nfulnl_msg_config_mode mode = {
		    .copy_range = htonl(NFLOG_COPY_RANGE),
		    .copy_mode = NFULNL_COPY_PACKET};

		mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(mode), &mode);
		mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(1));
	} else {
		struct nfulnl_msg_config_cmd c = {.command = cmd};

		mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(c), &c);
	}
	if (mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len) < 0) {
		rc = -errno;
		goto fail;
	}
	got = mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
	if (got < 0 ||
	    mnl_cb_run(buf, (size_t)got, seq, mnl_socket_get_portid(n->nl),
		       NULL, NULL) < 0) {
		rc = -errno;
		goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "NFLOG group %d: %s%s", NFLOG_GROUP,
		 with_mode ? "cannot set copy mode: " : "cannot bind: ",
		 rc == -EBUSY ? "another listener holds it" : strerror(-rc));
	return rc;
}

struct nflog *nflog_open(struct event_base *base, nflog_pkt_fn fn, void *arg,
			 char *err, size_t errlen)
{
	/* its own pages: buf is resident only once packets filled it */
	struct nflog *n = pagemem_new(sizeof(*n));
	int rcvbuf = NFLOG_RCVBUF;

	if (n == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->fn = fn;
	n->arg = arg;
	n->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (n->nl == NULL ||
	    mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netfilter netlink socket: %s",
			 strerror(errno));
		goto fail;
	}
	(void)setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUF,
			 &rcvbuf, sizeof(rcvbuf));
	if (config(n, NFULNL_CFG_CMD_BIND, false, err, errlen) != 0 ||
	    config(n, 0, true, err, errlen) != 0)
		goto fail;
	if (evutil_make_socket_nonblocking(mnl_socket_get_fd(n->nl)) != 0)
		goto fail;
	n->ev = event_new(base, mnl_socket_get_fd(n->nl), EV_READ | EV_PERSIST,
			  on_read, n);
	if (n->ev == NULL || event_add(n->ev, NULL) != 0) {
		snprintf(err, errlen, "cannot watch the NFLOG socket");
		goto fail;
	}
	return n;
fail:
	nflog_close(n);
	return NULL;
}

void nflog_close(struct nflog *n)
{
	if (n == NULL)
		return;
	if (n->ev != NULL) { /* what the kernel already sent is attributed */
		drain(n);
		event_free(n->ev);
	}
	if (n->nl != NULL)
		mnl_socket_close(n->nl);
	pagemem_free(n, sizeof(*n));
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain(arg);
}

/* At most NFLOG_READS_PER_WAKE datagrams; the rest wait for the next
 * wake-up (the event is level-triggered). */
static void drain(struct nflog *n)
{
	for (int i = 0; i < NFLOG_READS_PER_WAKE; i++) {
		ssize_t got = recv(mnl_socket_get_fd(n->nl), n->buf,
				   sizeof(n->buf), MSG_DONTWAIT);

		if (got < 0 && errno == ENOBUFS) {
			stats_inc(STAT_NFLOG_LOST);
			continue;
		}
		if (got <= 0)
			return;
		if (nflog_parse(n->buf, (size_t)got, n->fn, n->arg) < 0)
			log_debug(SYS, "malformed NFLOG message (%zd bytes)",
				  got);
	}
}
