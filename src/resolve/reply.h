/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reply: the copy of an upstream answer one client gets, built into the
 * caller's buffer, with no address that is not in the sets. */
#ifndef DNSFENCE_REPLY_H
#define DNSFENCE_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"

/* What the client's copy of an answer may carry. */
struct reply_view {
	const uint8_t *answer; /* the upstream's answer */
	size_t len;
	const struct dns_addr *addrs; /* the addresses put into the sets */
	size_t n_addrs;
	uint32_t age;	  /* seconds to take off every TTL */
	uint32_t ttl_max; /* no TTL above this */
	bool strip_ech;	  /* HTTPS/SVCB without "ech" (the name check) */
	bool cached;	  /* from the answer cache (a stale one too) */
	/* AF_INET or AF_INET6: only addresses of this family are handed
	 * out (forward scope, "bind": "client": the family the client
	 * asked over, the only one the client sets know it by); 0: any */
	int family;
};

/* The largest reply the client takes: 65535 over TCP, its EDNS size
 * (512..DNS_EDNS_UDPSIZE) or 512 over UDP. */
size_t reply_client_max(const struct dns_query *q, bool tcp);
/* v's answer rewritten for q into out (see dnsmsg_rewrite_answer): TTLs
 * aged and capped, A/AAAA and HTTPS/SVCB hints kept only when in
 * v->addrs and of v->family, HTTPS/SVCB without "ech" when v->strip_ech.
 * Returns the length, -EBADMSG or -ENOSPC. */
ssize_t reply_render(const struct reply_view *v, const struct dns_query *q,
		     bool tcp, uint8_t *out, size_t cap);
/* Copy at most cap of addrs to out with TTLs reduced by age and capped
 * at ttl_cap; returns the count. */
size_t reply_aged_addrs(const struct dns_addr *addrs, size_t n, uint32_t age,
			uint32_t ttl_cap, struct dns_addr *out, size_t cap);

#endif
