// SPDX-License-Identifier: GPL-2.0-or-later
/* cache: a bounded, TTL-aware answer cache.
 *
 * Entries live in a chained hash table (power-of-two buckets, twice the
 * entry limit, FNV-1a over the key with a per-process random seed) and on
 * an LRU list; a hit moves an entry to the front, a put evicts from the
 * back until both limits hold. Each entry is one allocation: the struct,
 * its key, the answer and the addresses.
 *
 * A hit hands out a reference: the resolver still has to wait for the
 * kernel to refresh the set entries before it answers (invariant 2), and
 * the entry may be evicted in the meantime. An evicted entry that is still
 * referenced is unlinked at once and freed on its last release.
 *
 * With cache_set_stale(), an expired entry stays (until the LRU evicts it
 * or the stale window ends) for cache_get_stale(): the resolver serves it
 * when the upstream fails (RFC 8767). cache_get never returns it. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "resolve/cache.h"
#include "base/hash.h"

struct centry {
	struct cache_entry pub; /* first: cache_entry pointers are centry */
	struct centry *hnext;
	TAILQ_ENTRY(centry) lru;
	uint32_t hash;
	unsigned refs; /* the table's, while linked, and each holder's */
	size_t size;
	size_t keylen;
	uint8_t *key;
};

TAILQ_HEAD(centry_list, centry);

struct cache {
	struct centry **buckets;
	size_t mask;
	struct centry_list lru; /* most recently used first */
	size_t count, max_entries;
	size_t bytes, max_bytes;
	uint32_t seed;
	uint64_t stale_ms; /* an expired entry is kept this long */
};

static struct centry **find_slot(struct cache *c, const uint8_t *key,
				 size_t len, uint32_t h);
static void unlink_entry(struct cache *c, struct centry *e);
static void put_ref(struct centry *e);
static struct centry *lookup(struct cache *c, const uint8_t *key, size_t keylen,
			     uint64_t now_ms);

struct cache *cache_new(size_t max_entries, size_t max_bytes)
{
	struct cache *c;
	size_t n = 16;

	if (max_entries == 0 || max_entries > (1u << 24) || max_bytes == 0)
		return NULL;
	while (n < 2 * max_entries)
		n <<= 1;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->buckets = calloc(n, sizeof(*c->buckets));
	if (c->buckets == NULL) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	c->max_entries = max_entries;
	c->max_bytes = max_bytes;
	TAILQ_INIT(&c->lru);
	(void)hash_seed(&c->seed, sizeof(c->seed)); /* weak is still usable */
	return c;
}

void cache_free(struct cache *c)
{
	struct centry *e;

	if (c == NULL)
		return;
	while ((e = TAILQ_FIRST(&c->lru)) != NULL)
		unlink_entry(c, e);
	free(c->buckets);
	free(c);
}

size_t cache_drop_if(struct cache *c, cache_keep_fn keep, void *arg)
{
	struct centry *e, *next;
	size_t n = 0;

	for (e = TAILQ_FIRST(&c->lru); e != NULL; e = next) {
		next = TAILQ_NEXT(e, lru);
		if (keep(arg, e->key, e->keylen, &e->pub))
			continue;
		unlink_entry(c, e);
		n++;
	}
	return n;
}

size_t cache_count(const struct cache *c)
{
	return c->count;
}

/* The link that points at key's entry, or the empty link at the chain's
 * end. */
static struct centry **find_slot(struct cache *c, const uint8_t *key,
				 size_t len, uint32_t h)
{
	struct centry **pp = &c->buckets[h & c->mask];

	for (; *pp != NULL; pp = &(*pp)->hnext) {
		if ((*pp)->hash == h && (*pp)->keylen == len &&
		    memcmp((*pp)->key, key, len) == 0)
			break;
	}
	return pp;
}

static void put_ref(struct centry *e)
{
	if (--e->refs == 0)
		free(e);
}

/* Take e out of the table and the LRU list, dropping the table's own
 * reference. */
static void unlink_entry(struct cache *c, struct centry *e)
{
	struct centry **pp = find_slot(c, e->key, e->keylen, e->hash);

	if (*pp == e)
		*pp = e->hnext;
	TAILQ_REMOVE(&c->lru, e, lru);
	c->count--;
	c->bytes -= e->size;
	put_ref(e);
}

int cache_put(struct cache *c, const uint8_t *key, size_t keylen,
	      const uint8_t *answer, size_t len, const struct dns_addr *addrs,
	      size_t n_addrs, uint32_t ttl, uint64_t now_ms)
{
	struct centry *e, **pp;
	size_t size, addr_bytes;
	uint8_t *p;
	uint32_t h;

	if (ttl == 0 || keylen == 0)
		return -EINVAL;
	if (n_addrs > SIZE_MAX / sizeof(*addrs))
		return -E2BIG;
	addr_bytes = n_addrs * sizeof(*addrs);
	size = sizeof(*e) + addr_bytes;
	if (len > SIZE_MAX - size || keylen > SIZE_MAX - size - len)
		return -E2BIG;
	size += len + keylen;
	if (size > c->max_bytes)
		return -E2BIG;

	h = hash_fnv1a(key, keylen, c->seed);
	pp = find_slot(c, key, keylen, h);
	if (*pp != NULL)
		unlink_entry(c, *pp);
	while (!TAILQ_EMPTY(&c->lru) && (c->count + 1 > c->max_entries ||
					 c->bytes + size > c->max_bytes))
		unlink_entry(c, TAILQ_LAST(&c->lru, centry_list));

	/* The struct is first, so the addresses that follow it are aligned. */
	e = malloc(size);
	if (e == NULL)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	p = (uint8_t *)(e + 1);
	if (addr_bytes > 0)
		memcpy(p, addrs, addr_bytes);
	e->pub.addrs = (const struct dns_addr *)p;
	e->pub.n_addrs = n_addrs;
	p += addr_bytes;
	memcpy(p, answer, len);
	e->pub.answer = p;
	e->pub.len = len;
	p += len;
	memcpy(p, key, keylen);
	e->key = p;
	e->keylen = keylen;
	e->pub.stored_ms = now_ms;
	e->pub.ttl = ttl;
	e->hash = h;
	e->size = size;
	e->refs = 1;

	pp = find_slot(c, key, keylen, h);
	*pp = e;
	TAILQ_INSERT_HEAD(&c->lru, e, lru);
	c->count++;
	c->bytes += size;
	return 0;
}

void cache_set_stale(struct cache *c, uint32_t seconds)
{
	c->stale_ms = (uint64_t)seconds * 1000;
}

/* key's entry, or NULL; one past its stale window is dropped. */
static struct centry *lookup(struct cache *c, const uint8_t *key, size_t keylen,
			     uint64_t now_ms)
{
	uint32_t h = hash_fnv1a(key, keylen, c->seed);
	struct centry *e = *find_slot(c, key, keylen, h);

	if (e == NULL)
		return NULL;
	if (now_ms >=
	    e->pub.stored_ms + (uint64_t)e->pub.ttl * 1000 + c->stale_ms) {
		unlink_entry(c, e);
		return NULL;
	}
	return e;
}

const struct cache_entry *cache_get(struct cache *c, const uint8_t *key,
				    size_t keylen, uint64_t now_ms)
{
	struct centry *e = lookup(c, key, keylen, now_ms);

	if (e == NULL ||
	    now_ms >= e->pub.stored_ms + (uint64_t)e->pub.ttl * 1000)
		return NULL;
	TAILQ_REMOVE(&c->lru, e, lru);
	TAILQ_INSERT_HEAD(&c->lru, e, lru);
	e->refs++;
	return &e->pub;
}

const struct cache_entry *cache_get_stale(struct cache *c, const uint8_t *key,
					  size_t keylen, uint64_t now_ms)
{
	struct centry *e = lookup(c, key, keylen, now_ms);

	if (e == NULL)
		return NULL;
	e->refs++;
	return &e->pub;
}

void cache_release(struct cache *c, const struct cache_entry *pub)
{
	(void)c;
	if (pub != NULL)
		put_ref((struct centry *)(uintptr_t)pub);
}
