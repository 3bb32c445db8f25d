/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dnsrr: what dnsfence does with an upstream answer: the rewritten
 * answer each client gets, the addresses it hands out (snoop), and how
 * long it may be cached. Built on dnsmsg's reader and writer. */
#ifndef DNSFENCE_DNSRR_H
#define DNSFENCE_DNSRR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dns/dnsmsg.h"
#include "base/netaddr.h"

/* Return false to leave the record out of the client's answer. */
/* It may also lower rr->ttl: the copy the client gets carries that TTL;
 * and, for a type whose rdata is copied as is (not NS, CNAME, PTR, MX,
 * SRV, SOA), point rr->rdata and rr->rdlen at rdata of its own, read
 * before keep is called again. */
typedef bool (*dns_rr_keep_fn)(struct dns_rr *rr, void *arg);

/* The answer one client gets from an upstream answer: ID and question
 * name (with the client's case) from q, RD/CD from the client, rcode and
 * records from upstream, records for which keep() is false left out,
 * counts fixed, names re-compressed. OPT: the upstream's is dropped; when
 * the client sent EDNS, a fresh OPT (our size, DO as the client) is added.
 * When the result exceeds max (the client's UDP size; 65535 for TCP),
 * the reply is header + question (+ OPT) with TC set. keep may be NULL.
 * Returns the length, -EBADMSG for a malformed answer, -ENOSPC. */
ssize_t dnsmsg_rewrite_answer(const uint8_t *ans, size_t len,
			      const struct dns_query *q, size_t max,
			      dns_rr_keep_fn keep, void *arg, uint8_t *out,
			      size_t cap);

/* An address an answer hands out, with the TTL of its record, and which
 * record: rec 0 an A/AAAA record, k > 0 a hint of the k-th HTTPS/SVCB
 * record the snoop read (the client's copy keeps such a record whole or
 * not at all, so its hints enter the sets together or not at all). */
struct dns_addr {
	struct netaddr addr;
	uint16_t rec;
	uint32_t ttl;
};

#define DNS_MAX_CNAME_CHAIN 16

/* The addresses a client may connect to after this answer to qname: A
 * and AAAA records of the answer section whose owner is qname or on its
 * CNAME chain (at most DNS_MAX_CNAME_CHAIN links, loops stop), plus
 * ipv4hint/ipv6hint of HTTPS/SVCB records on that chain. Authority and
 * additional sections are ignored. Writes at most cap to out, *n the
 * count found (may exceed cap: then -E2BIG). -EBADMSG if malformed. */
/* flags: DNS_SNOOP_STRIP_ECH when the client's copy loses "ech" (the name
 * check): a record whose "mandatory" lists ech is then left out of it, so
 * its hints are not snooped either. */
#define DNS_SNOOP_STRIP_ECH 1u
int dnsmsg_snoop(const uint8_t *ans, size_t len, const uint8_t *qname,
		 size_t qname_len, unsigned int flags, struct dns_addr *out,
		 size_t cap, size_t *n);
/* How long an upstream answer may be served from a cache: the smallest
 * TTL of its answer and authority records. -ENOENT when it must not be
 * cached (TC set, an rcode other than NOERROR/NXDOMAIN, no records, a TTL
 * of 0), -EBADMSG when malformed. */
int dnsmsg_cache_ttl(const uint8_t *ans, size_t len, uint32_t *ttl);
/* Call fn for every ipv4hint/ipv6hint address in SVCB/HTTPS rdata
 * (uncompressed target name expected, as RFC 9460 requires). Stops and
 * returns fn's non-zero value; -EBADMSG if the rdata is malformed. */
int dnsmsg_svcb_hints(const uint8_t *rdata, size_t rdlen,
		      int (*fn)(const struct netaddr *a, void *arg), void *arg);

/* SvcParamKeys (RFC 9460 section 14.3.2) the daemon reads or removes. */
#define SVCB_KEY_MANDATORY 0
#define SVCB_KEY_ECH	   5

/* SVCB/HTTPS rdata without the SvcParam key (the name check removes
 * "ech" so a client sends a readable server name, not an encrypted one),
 * into out (room for rdlen bytes: the result is never longer), its
 * length in *outlen (rdlen when key was absent); out and outlen may be
 * NULL to check the rdata only. -EPERM when the
 * "mandatory" param lists key (the record means nothing without it: the
 * caller leaves it out whole); -EBADMSG if the rdata is malformed. */
int dnsmsg_svcb_without(const uint8_t *rdata, size_t rdlen, uint16_t key,
			uint8_t *out, size_t *outlen);

#endif
