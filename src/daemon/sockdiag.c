// SPDX-License-Identifier: GPL-2.0-or-later
/* sockdiag: one SOCK_DIAG_BY_FAMILY request for one socket, by its four
 * ports and addresses (inet_diag's exact lookup, no dump), asking for
 * INET_DIAG_INFO; the answer's struct tcp_info is read only as far as the
 * kernel filled it. The request is answered within the sendto, so the
 * blocking receive that follows does not wait (bounded at 100 ms all the
 * same; a late answer is skipped by its sequence number). The kernel's
 * answer is trusted as the kernel's, and still bounds-checked (libmnl's
 * parser). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <arpa/inet.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "daemon/sockdiag.h"

struct sockdiag {
	struct mnl_socket *nl;
	uint32_t portid, seq;
};

struct answer {
	bool answered, found;
	uint64_t acked;
};

struct sockdiag *sockdiag_open(char *err, size_t errlen)
{
	struct sockdiag *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (d->nl == NULL ||
	    mnl_socket_bind(d->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "socket diagnostics netlink socket: %s",
			 strerror(errno));
		sockdiag_close(d);
		return NULL;
	}
	d->portid = mnl_socket_get_portid(d->nl);
	/* The kernel answers within the request; never wait on it long. */
	if (setsockopt(mnl_socket_get_fd(d->nl), SOL_SOCKET, SO_RCVTIMEO,
		       &(struct timeval){.tv_usec = 100000},
		       sizeof(struct timeval)) != 0) {
		snprintf(err, errlen, "socket diagnostics netlink socket: %s",
			 strerror(errno));
		sockdiag_close(d);
		return NULL;
	}
	return d;
}

void sockdiag_close(struct sockdiag *d)
{
	if (d == NULL)
		return;
	if (d->nl != NULL)
		mnl_socket_close(d->nl);
	free(d);
}

static int on_attr(const struct nlattr *a, void *arg)
{
	struct answer *ans = arg;
	size_t need = offsetof(struct tcp_info, tcpi_bytes_acked) +
		      sizeof(((struct tcp_info *)0)->tcpi_bytes_acked);
	struct tcp_info ti;

	if (mnl_attr_get_type(a) != INET_DIAG_INFO ||
	    mnl_attr_get_payload_len(a) < need)
		return MNL_CB_OK;
	memset(&ti, 0, sizeof(ti));
	memcpy(&ti, mnl_attr_get_payload(a),
	       mnl_attr_get_payload_len(a) < sizeof(ti)
		   ? mnl_attr_get_payload_len(a)
		   : sizeof(ti));
	ans->found = true;
	ans->acked = ti.tcpi_bytes_acked;
	return MNL_CB_OK;
}

static int on_msg(const struct nlmsghdr *nlh, void *arg)
{
	struct answer *ans = arg;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return MNL_CB_OK;
	ans->answered = true;
	return mnl_attr_parse(nlh, sizeof(struct inet_diag_msg), on_attr, arg);
}

int sockdiag_acked(struct sockdiag *d, const struct flowtab_key *key,
		   uint64_t *acked)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *r;
	struct answer ans = {.answered = false};
	size_t alen = key->src.family == AF_INET ? 4 : 16;
	ssize_t n;
	int rc;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++d->seq;
	r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
	r->sdiag_family = (uint8_t)key->src.family;
	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_ext = 1u << (INET_DIAG_INFO - 1);
	r->idiag_states = ~0u;
	r->id.idiag_sport = htons(key->sport);
	r->id.idiag_dport = htons(key->dport);
	memcpy(r->id.idiag_src, key->src.bytes, alen);
	memcpy(r->id.idiag_dst, key->dst.bytes, alen);
	r->id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	r->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(d->nl, buf, sizeof(buf));
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		rc =
		    mnl_cb_run(buf, (size_t)n, d->seq, d->portid, on_msg, &ans);
		/* an earlier request's late answer: skip it */
	} while ((rc > 0 && !ans.answered) || (rc < 0 && errno == ESRCH));
	if (rc < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (!ans.found)
		return -ENOENT;
	*acked = ans.acked;
	return 0;
}
