// SPDX-License-Identifier: GPL-2.0-or-later
/* failmem: the upstream questions that failed a moment ago (RFC 9520).
 *
 * A failure is an entry of a cache of its own, apart from the answers:
 * one byte per key, living failure_ttl seconds (the LRU and TTL logic of
 * cache.c). Kept apart from the answer cache, a flood of failing names
 * evicts only other failures, never a good answer, and the stale answer
 * the resolver serves after a failure (RFC 8767) stays where it was. */
#include <stdlib.h>

#include "resolve/cache.h"
#include "dns/dnsmsg.h"
#include "resolve/failmem.h"

#define FAIL_ENTRIES 4096
#define FAIL_BYTES   (1u << 20)

struct failmem {
	struct cache *c;
};

struct failmem *failmem_new(void)
{
	struct failmem *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->c = cache_new(FAIL_ENTRIES, FAIL_BYTES);
	if (f->c == NULL) {
		free(f);
		return NULL;
	}
	return f;
}

void failmem_free(struct failmem *f)
{
	if (f == NULL)
		return;
	cache_free(f->c);
	free(f);
}

void failmem_note(struct failmem *f, const uint8_t *key, size_t keylen,
		  uint32_t ttl, uint64_t now_ms)
{
	static const uint8_t mark = DNS_RCODE_SERVFAIL;

	if (ttl == 0)
		return;
	(void)cache_put(f->c, key, keylen, &mark, 1, NULL, 0, ttl, now_ms);
}

bool failmem_recent(struct failmem *f, const uint8_t *key, size_t keylen,
		    uint64_t now_ms)
{
	const struct cache_entry *e = cache_get(f->c, key, keylen, now_ms);

	cache_release(f->c, e);
	return e != NULL;
}
