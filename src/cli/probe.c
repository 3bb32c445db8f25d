// SPDX-License-Identifier: GPL-2.0-or-later
/* probe: "does the daemon answer?" from the outside, as a client would
 * ask it. A readiness check that only looked for a bound socket would pass
 * before the fence is verified; this one passes only when a DNS reply
 * comes back, which serve.c makes possible only after setup's
 * verification, the privilege drop and the guard's start. The reply is
 * parsed with the same bounds-checked reader as everything else from the
 * network; datagrams with another ID or question are ignored (they are not
 * ours), and the deadline is absolute, so a flood of them cannot keep the
 * probe waiting longer than timeout_ms. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dns/dnsmsg.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "cli/probe.h"

#define PROBE_CLASS_IN 1

static void probe_target(const struct config *cfg, struct sockaddr_storage *ss,
			 socklen_t *len);
static size_t build_query(uint16_t id, const uint8_t *qname, size_t qlen,
			  uint8_t *buf, size_t cap);
static int match_reply(const uint8_t *buf, size_t len, uint16_t id,
		       const uint8_t *qname, size_t qlen, int *rcode);
static uint16_t query_id(void);
static int send_query(const struct sockaddr_storage *ss, socklen_t sslen,
		      const uint8_t *query, size_t len, const char *where,
		      char *err, size_t errlen);
static int await_reply(int fd, uint16_t id, const uint8_t *qname, size_t qlen,
		       int timeout_ms, const char *where, int *rcode, char *err,
		       size_t errlen);

/* The first listener; 0.0.0.0 / :: are reached on loopback. */
static void probe_target(const struct config *cfg, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	*ss = cfg->listen[0].sa;
	*len = cfg->listen[0].len;
	if (ss->ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (sin->sin_addr.s_addr == htonl(INADDR_ANY))
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (ss->ss_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (memcmp(&sin6->sin6_addr, &any6, sizeof(any6)) == 0)
			sin6->sin6_addr = in6addr_loopback;
	}
}

static size_t build_query(uint16_t id, const uint8_t *qname, size_t qlen,
			  uint8_t *buf, size_t cap)
{
	struct dns_writer w;

	dns_writer_init(&w, buf, cap);
	dns_write_u16(&w, id);
	dns_write_u16(&w, DNS_FLAG_RD);
	dns_write_u16(&w, 1); /* QDCOUNT */
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 0);
	dns_write_u16(&w, 0);
	dns_write_bytes(&w, qname, qlen);
	dns_write_u16(&w, DNS_TYPE_A);
	dns_write_u16(&w, PROBE_CLASS_IN);
	return w.err != 0 ? 0 : w.pos;
}

/* 0 (ours, rcode set), -ESRCH (well-formed but not ours), -EBADMSG. */
static int match_reply(const uint8_t *buf, size_t len, uint16_t id,
		       const uint8_t *qname, size_t qlen, int *rcode)
{
	struct dns_reader r;
	uint8_t name[DNS_MAX_NAME];
	size_t nlen = sizeof(name);
	uint16_t rid, flags, qd, type, class;

	dns_reader_init(&r, buf, len);
	if (dns_read_u16(&r, &rid) != 0 || dns_read_u16(&r, &flags) != 0 ||
	    dns_read_u16(&r, &qd) != 0 || dns_skip(&r, 6) != 0)
		return -EBADMSG;
	if (rid != id || !(flags & DNS_FLAG_QR))
		return -ESRCH;
	if (qd != 1 || dns_read_name(&r, name, &nlen) != 0 ||
	    dns_read_u16(&r, &type) != 0 || dns_read_u16(&r, &class) != 0)
		return -EBADMSG;
	if (!dns_name_equal(name, nlen, qname, qlen) || type != DNS_TYPE_A ||
	    class != PROBE_CLASS_IN)
		return -ESRCH;
	*rcode = DNS_RCODE(flags);
	return 0;
}

/* A query ID nobody else can guess easily (the probe's only defence
 * against a forged reply); the clock and pid when getrandom fails. */
static uint16_t query_id(void)
{
	uint16_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id = (uint16_t)((int64_t)monotime_ms() ^ getpid());
	return id;
}

/* A connected UDP socket to ss with the query sent: the fd, or -errno
 * with err set. connect: replies from elsewhere are filtered by the
 * kernel, and an ICMP port unreachable becomes ECONNREFUSED at once. */
static int send_query(const struct sockaddr_storage *ss, socklen_t sslen,
		      const uint8_t *query, size_t len, const char *where,
		      char *err, size_t errlen)
{
	int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc;

	if (fd < 0 || len == 0) {
		rc = fd < 0 ? -errno : -EINVAL;
		goto fail;
	}
	if (connect(fd, (const struct sockaddr *)ss, sslen) < 0 ||
	    send(fd, query, len, 0) < 0) {
		rc = -errno;
		goto fail;
	}
	return fd;
fail:
	snprintf(err, errlen, "%s: %s", where, strerror(-rc));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Read datagrams on fd until ours (id and question) comes back or
 * timeout_ms have passed: 0 with *rcode, -ETIMEDOUT, -EBADMSG (only
 * malformed replies), or -errno from recv; err set but for 0. */
static int await_reply(int fd, uint16_t id, const uint8_t *qname, size_t qlen,
		       int timeout_ms, const char *where, int *rcode, char *err,
		       size_t errlen)
{
	int64_t deadline = (int64_t)monotime_ms() + timeout_ms;
	uint8_t reply[4096];
	int bad = 0;

	for (;;) {
		int64_t left = deadline - (int64_t)monotime_ms();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;
		int m;

		if (left <= 0)
			break;
		m = poll(&pfd, 1, (int)left);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			break;
		n = recv(fd, reply, sizeof(reply), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			int e = errno;

			snprintf(err, errlen, "%s: %s%s", where, strerror(e),
				 e == ECONNREFUSED
				     ? " (nothing listens there: is dnsfence "
				       "serving?)"
				     : "");
			return -e;
		}
		m = match_reply(reply, (size_t)n, id, qname, qlen, rcode);
		if (m == 0)
			return 0;
		bad += m == -EBADMSG;
	}
	snprintf(err, errlen, "%s: %s within %d ms", where,
		 bad > 0 ? "only malformed replies" : "no reply", timeout_ms);
	return bad > 0 ? -EBADMSG : -ETIMEDOUT;
}

int probe_run(const struct config *cfg, const char *name, int timeout_ms,
	      int *rcode, char *err, size_t errlen)
{
	uint8_t qname[DNS_MAX_NAME], query[DNS_MAX_NAME + 32];
	char where[NETADDR_ENDPOINT_STRLEN];
	struct sockaddr_storage ss;
	socklen_t sslen;
	size_t qlen = sizeof(qname), len;
	uint16_t id;
	int fd, rc;

	if (cfg->n_listen == 0) {
		snprintf(err, errlen, "no listen address in the config");
		return -EINVAL;
	}
	probe_target(cfg, &ss, &sslen);
	netaddr_format_endpoint((struct sockaddr *)&ss, where, sizeof(where));
	if (dns_name_from_text(name, qname, &qlen) != 0) {
		snprintf(err, errlen, "\"%s\" is not a valid name", name);
		return -EINVAL;
	}
	id = query_id();
	len = build_query(id, qname, qlen, query, sizeof(query));
	fd = send_query(&ss, sslen, query, len, where, err, errlen);
	if (fd < 0)
		return fd;
	rc = await_reply(fd, id, qname, qlen, timeout_ms, where, rcode, err,
			 errlen);
	close(fd);
	return rc;
}
