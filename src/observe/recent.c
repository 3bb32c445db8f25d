// SPDX-License-Identifier: GPL-2.0-or-later
/* recent: the address -> name memory behind blocked-flow attribution.
 *
 * One allocation at start: max entries, a hash index (chains of entry
 * indices, buckets a power of two >= max) and an LRU list threaded through
 * the entries by index. A put of a known address moves it to the front; a
 * put of a new one takes a free entry, or the least recently answered one
 * when all are used. No time-based expiry: an address whose set entry
 * expired long ago is exactly what attribution wants to explain, and the
 * bound is what keeps the memory finite. Expiry follows the sets' rules
 * (sets_timeout, never shortened), computed here rather than asked of the
 * kernel, so it is what the kernel was told, not what it still holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hash.h"
#include "base/monotime.h"
#include "observe/recent.h"
#include "sets/sets.h"

#define NIL UINT32_MAX

struct recent_entry {
	struct netaddr addr;
	uint32_t hnext, prev, next;
	struct recent_info info;
};

struct recent {
	size_t max, used, nbuckets;
	uint32_t ttl_min, ttl_max;
	uint32_t head, tail; /* most and least recently answered */
	uint32_t *buckets;
	struct recent_entry *e;
};

static uint32_t addr_hash(const struct netaddr *a);
static uint32_t find(const struct recent *r, const struct netaddr *a);
static void lru_unlink(struct recent *r, uint32_t i);
static void lru_push(struct recent *r, uint32_t i);
static void index_remove(struct recent *r, uint32_t i);
static uint32_t take_entry(struct recent *r);
static void copy_name(char *dst, const char *src);

static struct recent *global;

struct recent *recent_new(size_t max, uint32_t ttl_min, uint32_t ttl_max)
{
	struct recent *r;

	if (max == 0 || max > (1u << 24))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->max = max;
	r->ttl_min = ttl_min;
	r->ttl_max = ttl_max;
	r->head = r->tail = NIL;
	for (r->nbuckets = 1; r->nbuckets < max;)
		r->nbuckets <<= 1;
	r->buckets = malloc(r->nbuckets * sizeof(*r->buckets));
	r->e = calloc(max, sizeof(*r->e));
	if (r->buckets == NULL || r->e == NULL) {
		recent_free(r);
		return NULL;
	}
	memset(r->buckets, 0xff, r->nbuckets * sizeof(*r->buckets));
	return r;
}

void recent_set_ttl(struct recent *r, uint32_t ttl_min, uint32_t ttl_max)
{
	r->ttl_min = ttl_min;
	r->ttl_max = ttl_max;
}

void recent_free(struct recent *r)
{
	if (r == NULL)
		return;
	if (global == r)
		global = NULL;
	free(r->buckets);
	free(r->e);
	free(r);
}

static uint32_t addr_hash(const struct netaddr *a)
{
	size_t n = a->family == AF_INET ? 4 : 16;
	return hash_fnv1a(a->bytes, n, a->family);
}

static uint32_t find(const struct recent *r, const struct netaddr *a)
{
	uint32_t i = r->buckets[addr_hash(a) & (r->nbuckets - 1)];

	while (i != NIL && !netaddr_equal(&r->e[i].addr, a))
		i = r->e[i].hnext;
	return i;
}

static void lru_unlink(struct recent *r, uint32_t i)
{
	struct recent_entry *x = &r->e[i];

	if (x->prev != NIL)
		r->e[x->prev].next = x->next;
	else
		r->head = x->next;
	if (x->next != NIL)
		r->e[x->next].prev = x->prev;
	else
		r->tail = x->prev;
	x->prev = x->next = NIL;
}

static void lru_push(struct recent *r, uint32_t i)
{
	r->e[i].prev = NIL;
	r->e[i].next = r->head;
	if (r->head != NIL)
		r->e[r->head].prev = i;
	r->head = i;
	if (r->tail == NIL)
		r->tail = i;
}

static void index_remove(struct recent *r, uint32_t i)
{
	uint32_t *pp =
	    &r->buckets[addr_hash(&r->e[i].addr) & (r->nbuckets - 1)];

	while (*pp != i)
		pp = &r->e[*pp].hnext;
	*pp = r->e[i].hnext;
}

/* A free entry, or the least recently answered one, unlinked. */
static uint32_t take_entry(struct recent *r)
{
	uint32_t i;

	if (r->used < r->max)
		return (uint32_t)r->used++;
	i = r->tail;
	lru_unlink(r, i);
	index_remove(r, i);
	return i;
}

static void copy_name(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n < RECENT_NAME_MAX) {
		memcpy(dst, src, n + 1);
		return;
	}
	memcpy(dst, src, RECENT_NAME_MAX - 4);
	memcpy(dst + RECENT_NAME_MAX - 4, "...", 4);
}

void recent_put(struct recent *r, const char *name, const struct netaddr *a,
		uint32_t ttl, uint64_t now_ms)
{
	uint64_t expires =
	    now_ms + (uint64_t)sets_timeout(ttl, r->ttl_min, r->ttl_max) * 1000;
	uint32_t i, b;

	if (a->family != AF_INET && a->family != AF_INET6)
		return;
	i = find(r, a);
	if (i != NIL) {
		lru_unlink(r, i);
		if (r->e[i].info.expires_ms > expires &&
		    r->e[i].info.expires_ms > now_ms)
			expires = r->e[i].info.expires_ms;
	} else {
		i = take_entry(r);
		memset(&r->e[i].addr, 0, sizeof(r->e[i].addr));
		r->e[i].addr.family = a->family;
		memcpy(r->e[i].addr.bytes, a->bytes,
		       a->family == AF_INET ? 4 : 16);
		b = addr_hash(a) & (uint32_t)(r->nbuckets - 1);
		r->e[i].hnext = r->buckets[b];
		r->buckets[b] = i;
	}
	copy_name(r->e[i].info.name, name);
	r->e[i].info.answered_ms = now_ms;
	r->e[i].info.expires_ms = expires;
	lru_push(r, i);
}

bool recent_get(const struct recent *r, const struct netaddr *a,
		struct recent_info *out)
{
	uint32_t i;

	if (r == NULL || (a->family != AF_INET && a->family != AF_INET6))
		return false;
	i = find(r, a);
	if (i == NIL)
		return false;
	*out = r->e[i].info;
	return true;
}

size_t recent_count(const struct recent *r)
{
	return r != NULL ? r->used : 0;
}

void recent_set_global(struct recent *r)
{
	global = r;
}

struct recent *recent_global(void)
{
	return global;
}

void recent_note(const uint8_t *qname, size_t qname_len,
		 const struct dns_addr *addrs, size_t n)
{
	char name[DNS_NAME_STRLEN];
	uint64_t now;

	if (global == NULL || n == 0)
		return;
	dns_name_to_text(qname, qname_len, name, sizeof(name));
	now = monotime_ms();
	for (size_t i = 0; i < n; i++)
		recent_put(global, name, &addrs[i].addr, addrs[i].ttl, now);
}
