// SPDX-License-Identifier: GPL-2.0-or-later
/* reply: the client's copy of an upstream answer (invariant 2).
 *
 * The client gets no address that is not in the sets: address records
 * and HTTPS/SVCB hints survive only when snooping put them there (on the
 * CNAME chain, admissible); internal ones, other owners' and the
 * additional section's are left out, and an HTTPS/SVCB record with such
 * a hint goes whole. No TTL exceeds the cap: a client must not cache an
 * address longer than its set entry can live. When an address of the
 * answer section was left out, a client that speaks EDNS is told so with
 * an Extended DNS Error 17 (Filtered): an empty NOERROR is otherwise a
 * puzzle. With a family (forward scope, "bind": "client") the other
 * family's addresses are left out too, and the Extended DNS Error says
 * how to get them. While the name check is on (strip_ech), HTTPS/SVCB records
 * lose their "ech" param: a client that has no ECH config sends its
 * server name in clear, which the check reads, instead of an outer name
 * of the provider's choosing. Everything is written to the caller's
 * buffer; nothing here keeps state between calls. */
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "resolve/reply.h"
#include "base/stats.h"

/* keep_rr's view of one rendering. */
struct keep_ctx {
	const struct reply_view *v;
	bool dropped;		   /* an answer-section address was left out */
	bool other_family;	   /* ... one of the family v->family is not */
	uint8_t rdata[UINT16_MAX]; /* an HTTPS/SVCB record without "ech" */
};

static bool keep_rr(struct dns_rr *rr, void *arg);
static bool other_family(const struct reply_view *v, const struct dns_rr *rr);
static bool keep_addr(const struct keep_ctx *k, const struct dns_rr *rr);
static bool keep_svcb(struct keep_ctx *k, struct dns_rr *rr);
static size_t add_ede(uint8_t *out, size_t n, size_t room, uint16_t code,
		      const char *text);
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
	/* Not "= {.v = v}": that clears the 64 KiB scratch rdata for every
	 * reply (7.5 % of the cached workload), which only an HTTPS or SVCB
	 * record without "ech" writes before it reads. */
	struct keep_ctx k;
	size_t max = reply_client_max(q, tcp);
	ssize_t n;

	k.v = v;
	k.dropped = false;
	k.other_family = false;
	n = dnsmsg_rewrite_answer(v->answer, v->len, q, max, keep_rr, &k, out,
				  cap);
	if (n < 0) {
		stats_inc(STAT_BAD_ANSWER);
		return n;
	}
	if ((k.dropped || k.other_family) && q->edns)
		n = (ssize_t)add_ede(
		    out, (size_t)n, max < cap ? max : cap, DNS_EDE_FILTERED,
		    k.dropped ? "dnsfence left out addresses it did not put "
				"in its sets (internal ranges)"
		    : v->family == AF_INET
			? "dnsfence answers a client asking over IPv4 only "
			  "IPv4 addresses: ask over IPv6 for IPv6 ones"
			: "dnsfence answers a client asking over IPv6 only "
			  "IPv6 addresses: ask over IPv4 for IPv4 ones");
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
	if (v->family != 0 && a->family != v->family)
		return false;
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

/* Our reply ends with our OPT record (rdlength 0 so far): append one
 * Extended DNS Error option to it when room allows. Returns the length. */
static size_t add_ede(uint8_t *out, size_t n, size_t room, uint16_t code,
		      const char *text)
{
	size_t tlen = strlen(text), olen = 4 + 2 + tlen;

	if (n < DNS_HEADER_LEN + 11 || out[n - 11] != 0 || out[n - 10] != 0 ||
	    out[n - 9] != DNS_TYPE_OPT || out[n - 2] != 0 || out[n - 1] != 0 ||
	    n + olen > room)
		return n;
	out[n - 2] = (uint8_t)((olen) >> 8);
	out[n - 1] = (uint8_t)olen;
	out[n++] = 0;
	out[n++] = 15; /* EDE option code, RFC 8914 */
	out[n++] = (uint8_t)((2 + tlen) >> 8);
	out[n++] = (uint8_t)(2 + tlen);
	out[n++] = (uint8_t)(code >> 8);
	out[n++] = (uint8_t)code;
	memcpy(out + n, text, tlen);
	return n + tlen;
}

static bool keep_addr(const struct keep_ctx *k, const struct dns_rr *rr)
{
	struct netaddr a;

	if (rr->type == DNS_TYPE_A && rr->rdlen == 4) {
		a.family = AF_INET;
		memcpy(a.bytes, rr->rdata, 4);
	} else if (rr->type == DNS_TYPE_AAAA && rr->rdlen == 16) {
		a.family = AF_INET6;
		memcpy(a.bytes, rr->rdata, 16);
	} else {
		return false;
	}
	return handed_out(k->v, &a);
}

/* rr (its hints handed out) without its "ech" param; a record whose
 * "mandatory" lists ech, or unreadable, is left out whole. */
static bool keep_svcb(struct keep_ctx *k, struct dns_rr *rr)
{
	size_t n;

	if (dnsmsg_svcb_without(rr->rdata, rr->rdlen, SVCB_KEY_ECH, k->rdata,
				&n) != 0)
		return false;
	if (n != rr->rdlen) {
		stats_inc(STAT_ECH_STRIPPED);
		rr->rdata = k->rdata;
		rr->rdlen = (uint16_t)n;
	}
	return true;
}

/* Is rr an address record of the family v leaves out? */
static bool other_family(const struct reply_view *v, const struct dns_rr *rr)
{
	return v->family != 0 &&
	       ((rr->type == DNS_TYPE_A && v->family != AF_INET) ||
		(rr->type == DNS_TYPE_AAAA && v->family != AF_INET6));
}

static bool keep_rr(struct dns_rr *rr, void *arg)
{
	struct keep_ctx *k = arg;
	const struct reply_view *v = k->v;
	bool keep;

	if (rr->ttl > 0x7fffffffu) /* RFC 2181 section 8 */
		rr->ttl = 0;
	rr->ttl = rr->ttl > v->age ? rr->ttl - v->age : 0;
	if (rr->ttl > v->ttl_max)
		rr->ttl = v->ttl_max;
	switch (rr->type) {
	case DNS_TYPE_A:
	case DNS_TYPE_AAAA:
		keep = keep_addr(k, rr);
		break;
	case DNS_TYPE_SVCB:
	case DNS_TYPE_HTTPS:
		keep = dnsmsg_svcb_hints(rr->rdata, rr->rdlen, hint_handed_out,
					 (void *)(uintptr_t)v) == 0;
		if (keep && v->strip_ech)
			return keep_svcb(k, rr);
		break;
	default:
		return true;
	}
	if (!keep && rr->section == 1 && other_family(v, rr))
		k->other_family = true;
	else if (!keep && rr->section == 1)
		k->dropped = true;
	return keep;
}
