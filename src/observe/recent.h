/* SPDX-License-Identifier: GPL-2.0-or-later */
/* recent: a bounded memory of the addresses dnsfence handed out, with the
 * name each was answered for and when its set entry expires, so that a
 * blocked flow can be explained ("answered for api.example.com at
 * 12:01:02, entry expired at 12:06:02"). */
#ifndef DNSFENCE_RECENT_H
#define DNSFENCE_RECENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"
#include "base/netaddr.h"

/* Bounded by entries, not by time: the daemon keeps RECENT_DEFAULT_MAX
 * addresses, the least recently answered forgotten first: 56 bytes per
 * entry on x86-64, 4 of address bucket and 8 of name bucket, and each
 * distinct name once (its length + 17 bytes, before allocator rounding),
 * shared by all its addresses: under 0.5 MiB for 4096 addresses of 4096
 * names (it was 1.2 MiB with a 256-byte name in every entry). */
#define RECENT_DEFAULT_MAX 4096
#define RECENT_NAME_MAX	   256 /* longer names are cut, ending in "..." */

struct recent;

struct recent_info {
	char name[RECENT_NAME_MAX]; /* the name last answered with it */
	uint64_t answered_ms;	    /* monotonic ms of that answer */
	uint64_t expires_ms;	    /* monotonic ms the set entry ends */
};

/* A memory of at most max (1 .. 2^24) addresses whose set timeouts are
 * clamp(TTL, ttl_min, ttl_max) as the sets module computes them. */
struct recent *recent_new(size_t max, uint32_t ttl_min, uint32_t ttl_max);
/* A reload's new clamp, for the answers noted from now on. */
void recent_set_ttl(struct recent *r, uint32_t ttl_min, uint32_t ttl_max);
void recent_free(struct recent *r);
/* Remember that name (dotted text) was answered with a at now_ms, with
 * TTL ttl. A later answer's expiry never shortens an earlier one's
 * (invariant 4); the name becomes the latest one. */
void recent_put(struct recent *r, const char *name, const struct netaddr *a,
		uint32_t ttl, uint64_t now_ms);
/* true and *out filled when a is remembered. */
bool recent_get(const struct recent *r, const struct netaddr *a,
		struct recent_info *out);
size_t recent_count(const struct recent *r);

/* The daemon's one instance (NULL: nothing is remembered), and the hook
 * the resolver calls where addresses go to the sets: the asked name in
 * wire form and the addresses with their TTLs. */
void recent_set_global(struct recent *r);
struct recent *recent_global(void);
void recent_note(const uint8_t *qname, size_t qname_len,
		 const struct dns_addr *addrs, size_t n);

#endif
