/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cache: upstream answers kept for their TTL, with the addresses they
 * hand out, so a repeated question is answered without going upstream. */
#ifndef DNSFENCE_CACHE_H
#define DNSFENCE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/dnsrr.h"

struct cache;

/* What a hit gives. Read-only; valid until cache_release. */
struct cache_entry {
	const uint8_t *answer; /* the upstream's answer, as received */
	size_t len;
	const struct dns_addr *addrs; /* admissible addresses it hands out */
	size_t n_addrs;
	uint64_t stored_ms; /* monotonic time of cache_put */
	uint32_t ttl;	    /* seconds it may be served from stored_ms */
};

/* At most max_entries answers and about max_bytes of them. NULL on bad
 * limits or ENOMEM. */
struct cache *cache_new(size_t max_entries, size_t max_bytes);
/* Every entry obtained with cache_get must be released first. */
void cache_free(struct cache *c);

/* Store copies of answer and addrs under key for ttl seconds (replacing
 * an older answer for the key), evicting the least recently used entries
 * to stay within the limits. 0, -EINVAL (ttl 0, empty key), -E2BIG (one
 * answer larger than the byte limit), -ENOMEM. */
int cache_put(struct cache *c, const uint8_t *key, size_t keylen,
	      const uint8_t *answer, size_t len, const struct dns_addr *addrs,
	      size_t n_addrs, uint32_t ttl, uint64_t now_ms);
/* The live answer for key, with a reference the caller must give back
 * with cache_release (the entry may be evicted meanwhile; it stays valid
 * for the holder). NULL on a miss or an expired entry (dropped unless
 * within the stale window). */
const struct cache_entry *cache_get(struct cache *c, const uint8_t *key,
				    size_t keylen, uint64_t now_ms);
/* Keep expired entries for seconds more (0, the default: drop them). */
void cache_set_stale(struct cache *c, uint32_t seconds);
/* key's entry, live or expired within the stale window; a reference as
 * with cache_get. For serving stale answers (RFC 8767). */
const struct cache_entry *cache_get_stale(struct cache *c, const uint8_t *key,
					  size_t keylen, uint64_t now_ms);
void cache_release(struct cache *c, const struct cache_entry *e);
size_t cache_count(const struct cache *c);

/* Keep e, the entry stored under key? */
typedef bool (*cache_keep_fn)(void *arg, const uint8_t *key, size_t keylen,
			      const struct cache_entry *e);
/* Drop every entry keep() refuses (one held by a reader lives on until
 * its release). Returns how many were dropped. */
size_t cache_drop_if(struct cache *c, cache_keep_fn keep, void *arg);

#endif
