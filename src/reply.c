// SPDX-License-Identifier: GPL-2.0-or-later
/* reply: the client's copy of an upstream answer (invariant 2).
 *
 * The client gets no address that is not in the sets: address records
 * and HTTPS/SVCB hints survive only when snooping put them there (on the
 * CNAME chain, admissible); internal ones, other owners' and the
 * additional section's are left out, and an HTTPS/SVCB record with such
 * a hint goes whole. No TTL exceeds the cap: a client must not cache an
 * address longer than its set entry can live. Everything is written to
 * the caller's buffer; nothing here keeps state between calls. */
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "dnsfence/reply.h"
#include "dnsfence/stats.h"

static bool keep_rr(struct dns_rr *rr, void *arg);
static int hint_handed_out(const struct netaddr *a, void *arg);
static bool handed_out(const struct reply_view *v, const struct netaddr *a);

size_t reply_client_max(const struct dns_query *q, bool tcp)
{
	size_t max;

	if (tcp)
		return DNS_MAX_UDP;
	if (!q->edns)
		return 512;
	max = q->edns_udp < 512 ? 512 : q->edns_udp;
	return max > DNS_EDNS_UDPSIZE ? DNS_EDNS_UDPSIZE : max;
}

ssize_t reply_render(const struct reply_view *v, const struct dns_query *q,
		     bool tcp, uint8_t *out, size_t cap)
{
	ssize_t n;

	n = dnsmsg_rewrite_answer(v->answer, v->len, q,
				  reply_client_max(q, tcp), keep_rr,
				  (void *)(uintptr_t)v, out, cap);
	if (n < 0) {
		stats_inc(STAT_BAD_ANSWER);
		return n;
	}
	stats_inc(STAT_ANSWERS);
	if ((out[2] & (DNS_FLAG_TC >> 8)) != 0)
		stats_inc(STAT_TRUNCATED);
	return n;
}

size_t reply_aged_addrs(const struct dns_addr *addrs, size_t n, uint32_t age,
			uint32_t ttl_cap, struct dns_addr *out, size_t cap)
{
	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n; i++) {
		out[i] = addrs[i];
		out[i].ttl = out[i].ttl > age ? out[i].ttl - age : 0;
		if (out[i].ttl > ttl_cap)
			out[i].ttl = ttl_cap;
	}
	return n;
}

static bool handed_out(const struct reply_view *v, const struct netaddr *a)
{
	for (size_t i = 0; i < v->n_addrs; i++) {
		if (netaddr_equal(&v->addrs[i].addr, a))
			return true;
	}
	return false;
}

static int hint_handed_out(const struct netaddr *a, void *arg)
{
	return handed_out(arg, a) ? 0 : 1;
}

static bool keep_rr(struct dns_rr *rr, void *arg)
{
	const struct reply_view *v = arg;
	struct netaddr a;

	if (rr->ttl > 0x7fffffffu) /* RFC 2181 section 8 */
		rr->ttl = 0;
	rr->ttl = rr->ttl > v->age ? rr->ttl - v->age : 0;
	if (rr->ttl > v->ttl_max)
		rr->ttl = v->ttl_max;
	switch (rr->type) {
	case DNS_TYPE_A:
		if (rr->rdlen != 4)
			return false;
		a.family = AF_INET;
		memcpy(a.bytes, rr->rdata, 4);
		return handed_out(v, &a);
	case DNS_TYPE_AAAA:
		if (rr->rdlen != 16)
			return false;
		a.family = AF_INET6;
		memcpy(a.bytes, rr->rdata, 16);
		return handed_out(v, &a);
	case DNS_TYPE_SVCB:
	case DNS_TYPE_HTTPS:
		return dnsmsg_svcb_hints(rr->rdata, rr->rdlen, hint_handed_out,
					 (void *)(uintptr_t)v) == 0;
	default:
		return true;
	}
}
