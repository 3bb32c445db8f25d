// SPDX-License-Identifier: GPL-2.0-or-later
/* nfq: the NFQUEUE socket of the name check.
 *
 * Setup (nfq_open, before the privilege drop): one NETLINK_NETFILTER
 * socket, NFQNL_CFG_CMD_BIND on the queue, then the copy mode (whole
 * packets), the queue's length in the kernel, NFQA_CFG_F_UID_GID so
 * a refused flow names its sender, and NFQA_CFG_F_CONNTRACK so each
 * packet names its conntrack entry (CTA_ID in NFQA_CT: a verdict belongs
 * to one connection, not to a four-tuple; a kernel that refuses the flag
 * is configured without it: flowcheck.c then tells a new connection
 * on a decided flow's four-tuple only by its sequence number);
 * NFQA_CFG_F_FAIL_OPEN is never set. Each step is acked and checked.
 *
 * Reading: libmnl's attribute parser bounds every attribute by its
 * message, and the packet itself goes to flowpkt.c's bounds-checked
 * reader. A full socket buffer makes the kernel drop the packet (counted
 * as flow_queue_lost when we see ENOBUFS): with no bypass, a dropped
 * packet is retransmitted by its sender, never let through. At most
 * NFQ_READS_PER_WAKE datagrams per wake-up, so the DNS listeners get
 * their turn however busy the queue is. Verdicts carry no ack. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <arpa/inet.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "base/ipc.h"
#include "base/log.h"
#include "base/pagemem.h"
#include "base/stats.h"
#include "daemon/nfq.h"

#define SYS		   "namecheck"
#define NFQ_READS_PER_WAKE 64
#define NFQ_RCVBUF	   (4 * 1024 * 1024)
#define NFQ_COPY	   0xffff

struct nfq {
	struct mnl_socket *nl;
	struct event *ev;
	uint16_t num;
	uint32_t seq;
	nfq_pkt_fn fn;
	void *arg;
	int chan;   /* nfq_use_channel, or -1 */
	bool no_ct; /* the kernel gives no conntrack ids */
	/* Netlink headers are read in place: 4-byte aligned whatever the
	 * fields before it (a bool there put it at an odd address). */
	_Alignas(struct nlmsghdr) uint8_t buf[NFQ_COPY + 4096];
};

static struct nlmsghdr *put_header(struct nfq *q, char *buf, uint16_t type,
				   uint16_t flags);
static int configure(struct nfq *q, uint32_t maxlen, char *err, size_t errlen);
static int send_acked(struct nfq *q, struct nlmsghdr *nlh);
static int parse_attr(const struct nlattr *attr, void *data);
static int parse_ct_attr(const struct nlattr *attr, void *data);
static int set_flags(struct nfq *q, char *buf, uint32_t flags);
static int on_msg(const struct nlmsghdr *nlh, size_t n, void *data);
static void on_read(evutil_socket_t fd, short what, void *arg);

static struct nlmsghdr *put_header(struct nfq *q, char *buf, uint16_t type,
				   uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++q->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(q->num);
	return nlh;
}

static int send_acked(struct nfq *q, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t got;

	if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	got = mnl_socket_recvfrom(q->nl, buf, sizeof(buf));
	if (got < 0 || mnl_cb_run(buf, (size_t)got, seq,
				  mnl_socket_get_portid(q->nl), NULL, NULL) < 0)
		return -errno;
	return 0;
}

static int configure(struct nfq *q, uint32_t maxlen, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND};
	struct nfqnl_msg_config_params params = {
	    .copy_range = htonl(NFQ_COPY), .copy_mode = NFQNL_COPY_PACKET};
	const char *step = "cannot bind";
	int rc;

	nlh = put_header(q, buf, NFQNL_MSG_CONFIG, NLM_F_ACK);
	mnl_attr_put(nlh, NFQA_CFG_CMD, sizeof(cmd), &cmd);
	rc = send_acked(q, nlh);
	if (rc == 0) {
		step = "cannot configure";
		nlh = put_header(q, buf, NFQNL_MSG_CONFIG, NLM_F_ACK);
		mnl_attr_put(nlh, NFQA_CFG_PARAMS, sizeof(params), &params);
		mnl_attr_put_u32(nlh, NFQA_CFG_QUEUE_MAXLEN, htonl(maxlen));
		rc = send_acked(q, nlh);
	}
	if (rc == 0) {
		rc = set_flags(q, buf,
			       NFQA_CFG_F_UID_GID | NFQA_CFG_F_CONNTRACK);
		if (rc != 0 && set_flags(q, buf, NFQA_CFG_F_UID_GID) == 0) {
			/* EOPNOTSUPP: no conntrack glue for the queue, a
			 * kernel without the option or without the
			 * nf_conntrack_netlink module loaded. A fact of
			 * the machine: the parent says it in the start's
			 * environment line (IPC_NFQ). */
			q->no_ct = true;
			log_debug(SYS,
				  "NFQUEUE %u: the kernel gives no conntrack "
				  "ids (%s%s): a new connection on a decided "
				  "flow's four-tuple waits until its verdict "
				  "is forgotten",
				  (unsigned)q->num, strerror(-rc),
				  rc == -EOPNOTSUPP
				      ? "; it needs CONFIG_NETFILTER_NETLINK_"
					"GLUE_CT and the nf_conntrack_netlink "
					"module loaded"
				      : "");
			rc = 0;
		}
	}
	if (rc != 0)
		snprintf(
		    err, errlen, "NFQUEUE %u: %s: %s", (unsigned)q->num, step,
		    rc == -EBUSY ? "another program holds it" : strerror(-rc));
	return rc;
}

/* The queue's flags: flags set, every other one we know (FAIL_OPEN
 * among them) cleared. */
static int set_flags(struct nfq *q, char *buf, uint32_t flags)
{
	struct nlmsghdr *nlh = put_header(q, buf, NFQNL_MSG_CONFIG, NLM_F_ACK);

	mnl_attr_put_u32(nlh, NFQA_CFG_MASK,
			 htonl(NFQA_CFG_F_UID_GID | NFQA_CFG_F_FAIL_OPEN |
			       NFQA_CFG_F_CONNTRACK));
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	return send_acked(q, nlh);
}

struct nfq *nfq_open(struct event_base *base, uint16_t num, uint32_t maxlen,
		     nfq_pkt_fn fn, void *arg, char *err, size_t errlen)
{
	/* its own pages: buf is resident only once packets filled it */
	struct nfq *q = pagemem_new(sizeof(*q));
	int rcvbuf = NFQ_RCVBUF;

	if (q == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	q->num = num;
	q->chan = -1;
	q->fn = fn;
	q->arg = arg;
	q->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (q->nl == NULL ||
	    mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netfilter netlink socket: %s",
			 strerror(errno));
		goto fail;
	}
	if (setsockopt(mnl_socket_get_fd(q->nl), SOL_SOCKET, SO_RCVBUFFORCE,
		       &rcvbuf, sizeof(rcvbuf)) != 0)
		(void)setsockopt(mnl_socket_get_fd(q->nl), SOL_SOCKET,
				 SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (configure(q, maxlen, err, errlen) != 0)
		goto fail;
	if (evutil_make_socket_nonblocking(mnl_socket_get_fd(q->nl)) != 0)
		goto fail;
	q->ev = event_new(base, mnl_socket_get_fd(q->nl), EV_READ | EV_PERSIST,
			  on_read, q);
	if (q->ev == NULL || event_add(q->ev, NULL) != 0) {
		snprintf(err, errlen, "cannot watch the NFQUEUE socket");
		goto fail;
	}
	return q;
fail:
	nfq_close(q);
	return NULL;
}

void nfq_close(struct nfq *q)
{
	if (q == NULL)
		return;
	if (q->ev != NULL)
		event_free(q->ev);
	if (q->nl != NULL)
		mnl_socket_close(q->nl);
	pagemem_free(q, sizeof(*q));
}

int nfq_verdict(struct nfq *q, uint32_t id, uint32_t verdict, uint32_t mark)
{
	uint8_t frame[IPC_HDR_SIZE + 8];
	int len;

	if (q->chan < 0)
		return nfq_verdict_on(mnl_socket_get_fd(q->nl), q->num, id,
				      verdict, mark);
	len =
	    ipc_encode_verdict(frame, sizeof(frame), q->num, id, verdict, mark);
	return len < 0 ? len : ipc_send(q->chan, frame, (size_t)len, -1);
}

int nfq_verdict_on(int fd, uint16_t num, uint32_t id, uint32_t verdict,
		   uint32_t mark)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nfqnl_msg_verdict_hdr vh = {.verdict = htonl(verdict),
					   .id = htonl(id)};
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_VERDICT;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(num);
	mnl_attr_put(nlh, NFQA_VERDICT_HDR, sizeof(vh), &vh);
	if (mark != 0)
		mnl_attr_put_u32(nlh, NFQA_MARK, htonl(mark));
	return sendto(fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&to,
		      sizeof(to)) < 0
		   ? -errno
		   : 0;
}

int nfq_fd(const struct nfq *q)
{
	return mnl_socket_get_fd(q->nl);
}

bool nfq_conntrack_ids(const struct nfq *q)
{
	return !q->no_ct;
}

uint16_t nfq_num(const struct nfq *q)
{
	return q->num;
}

void nfq_use_channel(struct nfq *q, int chan)
{
	q->chan = chan;
}

static int parse_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, NFQA_MAX) > 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static int parse_ct_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, CTA_MAX) > 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

struct parse_ctx {
	nfq_pkt_fn fn;
	void *arg;
};

static int on_msg(const struct nlmsghdr *nlh, size_t n, void *data)
{
	const struct parse_ctx *ctx = data;
	const struct nlattr *tb[NFQA_MAX + 1] = {0};
	const struct nlattr *ct[CTA_MAX + 1] = {0};
	const struct nfqnl_msg_packet_hdr *ph;
	struct nfq_pkt pkt = {0};

	/* Bounded by the message's own length: mnl_attr_parse reads up to
	 * it rounded up to 4, past the end of an unpadded last message. */
	if (n < MNL_NLMSG_HDRLEN + sizeof(struct nfgenmsg) ||
	    mnl_attr_parse_payload(
		(const char *)nlh + MNL_NLMSG_HDRLEN + sizeof(struct nfgenmsg),
		n - MNL_NLMSG_HDRLEN - sizeof(struct nfgenmsg), parse_attr,
		tb) < 0 ||
	    tb[NFQA_PACKET_HDR] == NULL ||
	    mnl_attr_get_payload_len(tb[NFQA_PACKET_HDR]) < sizeof(*ph))
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(tb[NFQA_PACKET_HDR]);
	pkt.id = ntohl(ph->packet_id);
	if (tb[NFQA_PAYLOAD] != NULL) {
		pkt.payload = mnl_attr_get_payload(tb[NFQA_PAYLOAD]);
		pkt.len = mnl_attr_get_payload_len(tb[NFQA_PAYLOAD]);
	}
	if (tb[NFQA_UID] != NULL &&
	    mnl_attr_get_payload_len(tb[NFQA_UID]) >= 4) {
		pkt.has_uid = true;
		pkt.uid = ntohl(mnl_attr_get_u32(tb[NFQA_UID]));
	}
	if (tb[NFQA_CT] != NULL &&
	    mnl_attr_parse_nested(tb[NFQA_CT], parse_ct_attr, ct) >= 0 &&
	    ct[CTA_ID] != NULL && mnl_attr_get_payload_len(ct[CTA_ID]) >= 4) {
		pkt.has_ct_id = true;
		pkt.ct_id = ntohl(mnl_attr_get_u32(ct[CTA_ID]));
	}
	ctx->fn(ctx->arg, &pkt);
	return MNL_CB_OK;
}

/* The messages walked here, not by mnl_cb_run: libmnl 1.0.4's
 * mnl_nlmsg_ok compares the length as an int, so a header claiming more
 * than INT_MAX bytes passed it and the next header was read from far
 * outside the buffer, and mnl_attr_parse reads attributes up to the
 * length rounded up to 4, past a buffer that ends unpadded (fuzz_nfq
 * found both). Each message's length is checked against what is left
 * and bounds its attributes (on_msg); packet messages go to on_msg,
 * error messages (a verdict for a packet gone) are skipped, NLMSG_DONE
 * ends the datagram as it did under mnl_cb_run. */
void nfq_parse(const uint8_t *buf, size_t len, nfq_pkt_fn fn, void *arg)
{
	struct parse_ctx ctx = {fn, arg};
	size_t off = 0;

	while (len - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh =
		    (const struct nlmsghdr *)(const void *)(buf + off);
		/* Rounded up here, not by NLMSG_ALIGN: its mask is 32 bits
		 * wide, and a length near 4 GiB rounds to 0 there. */
		size_t n = nlh->nlmsg_len, step = (n + 3) & ~(size_t)3;

		/* The kernel pads no datagram's last message: its length
		 * may end the buffer unaligned. */
		if (n < sizeof(*nlh) || n > len - off ||
		    nlh->nlmsg_type == NLMSG_DONE)
			return;
		if (nlh->nlmsg_type >= NLMSG_MIN_TYPE)
			(void)on_msg(nlh, n, &ctx);
		if (step >= len - off)
			return;
		off += step;
	}
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct nfq *q = arg;

	(void)what;
	for (int i = 0; i < NFQ_READS_PER_WAKE; i++) {
		ssize_t got = recv(fd, q->buf, sizeof(q->buf), MSG_DONTWAIT);

		if (got < 0 && errno == ENOBUFS) {
			stats_inc(STAT_FLOW_QUEUE_LOST);
			continue;
		}
		if (got <= 0)
			return;
		nfq_parse(q->buf, (size_t)got, q->fn, q->arg);
	}
}
