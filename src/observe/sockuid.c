// SPDX-License-Identifier: GPL-2.0-or-later
/* sockuid: the uid behind a loopback client's socket, so that a log line
 * can say which process's user asked. The kernel knows it: an inet_diag
 * dump over NETLINK_SOCK_DIAG of the namespace's UDP (or TCP) sockets,
 * the one whose own end is the client's port, no /proc scan. A dump and
 * not an exact lookup: the socket's remote end is not always the
 * listener's address (a DNAT redirect of port 53, a TCP client whose
 * local address the listener did not note), and an exact lookup needs
 * it. The netlink socket is opened on first use and kept; the kernel
 * fills the dump inside each recv, so nothing waits (MSG_DONTWAIT), and
 * at most SOCKUID_READS_MAX reads are taken (the socket is closed on a
 * dump left unread). Callers ask only for lines they write (rate-limited),
 * and a direct-mapped table of SOCKUID_SLOTS answers, each kept
 * SOCKUID_KEEP_MS, spares repeats. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "base/monotime.h"
#include "observe/sockuid.h"

struct slot {
	uint64_t at_ms; /* 0: empty */
	int family;
	bool tcp;
	uint16_t port; /* the client's, network order */
	uint8_t addr[16];
	uint32_t uid;
	int rc; /* 0 or the lookup's -errno */
};

static int nl_fd = -1;
static struct slot slots[SOCKUID_SLOTS];

static int ask(int family, bool tcp, const uint8_t *caddr, uint16_t cport,
	       uint32_t *uid);
static bool loopback(const struct sockaddr *sa, const uint8_t **addr,
		     uint16_t *port);

static bool loopback(const struct sockaddr *sa, const uint8_t **addr,
		     uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		*addr = (const uint8_t *)&s->sin_addr;
		*port = s->sin_port;
		return (*addr)[0] == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;

		*addr = s->sin6_addr.s6_addr;
		*port = s->sin6_port;
		return IN6_IS_ADDR_LOOPBACK(&s->sin6_addr);
	}
	return false;
}

int sockuid_lookup(const struct sockaddr *peer, const struct sockaddr *local,
		   bool tcp, uint32_t *uid)
{
	const uint8_t *caddr;
	uint16_t cport;
	size_t alen = peer->sa_family == AF_INET ? 4 : 16;
	uint64_t now = monotime_ms();
	struct slot *s;

	if (!loopback(peer, &caddr, &cport))
		return -EAFNOSUPPORT;
	(void)local;
	s = &slots[(ntohs(cport) * 31u + (tcp ? 7u : 0u)) % SOCKUID_SLOTS];
	if (s->at_ms != 0 && now - s->at_ms < SOCKUID_KEEP_MS &&
	    s->family == peer->sa_family && s->tcp == tcp && s->port == cport &&
	    memcmp(s->addr, caddr, alen) == 0) {
		*uid = s->uid;
		return s->rc;
	}
	s->rc = ask(peer->sa_family, tcp, caddr, cport, &s->uid);
	s->at_ms = now;
	s->family = peer->sa_family;
	s->tcp = tcp;
	s->port = cport;
	memcpy(s->addr, caddr, alen);
	*uid = s->uid;
	return s->rc;
}

static int ask(int family, bool tcp, const uint8_t *caddr, uint16_t cport,
	       uint32_t *uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr nlh;
		char buf[16384];
	} ans;
	static const uint8_t zero[16];
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	size_t alen = family == AF_INET ? 4 : 16;
	int rc = -ENOENT;

	if (nl_fd < 0) {
		nl_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			       NETLINK_SOCK_DIAG);
		if (nl_fd < 0)
			return -errno;
	}
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = (uint8_t)family;
	req.r.sdiag_protocol = tcp ? IPPROTO_TCP : IPPROTO_UDP;
	/* every state but LISTEN (1 << TCP_LISTEN): a client's socket */
	req.r.idiag_states = ~(1u << 10);
	if (sendto(nl_fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (int reads = 0; reads < SOCKUID_READS_MAX; reads++) {
		ssize_t n = recv(nl_fd, ans.buf, sizeof(ans.buf), MSG_DONTWAIT);

		if (n <= 0)
			goto reset;
		for (struct nlmsghdr *h = &ans.nlh; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE)
				return rc;
			if (h->nlmsg_type == NLMSG_ERROR)
				goto reset;
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
				continue;
			/* the socket's own end: the client's port, its
			 * address or the wildcard */
			if (rc != 0 && m->id.idiag_sport == cport &&
			    (memcmp(m->id.idiag_src, caddr, alen) == 0 ||
			     memcmp(m->id.idiag_src, zero, alen) == 0)) {
				*uid = m->idiag_uid;
				rc = 0;
			}
		}
	}
reset:
	/* a dump left unread, or an error: start afresh next time */
	sockuid_close();
	return rc;
}

void sockuid_close(void)
{
	if (nl_fd >= 0)
		close(nl_fd);
	nl_fd = -1;
}
