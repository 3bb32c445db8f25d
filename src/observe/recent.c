// SPDX-License-Identifier: GPL-2.0-or-later
/* recent: the address -> name memory behind blocked-flow attribution.
 *
 * One allocation at start: max entries, a hash index (chains of entry
 * indices, buckets a power of two >= max) and an LRU list threaded through
 * the entries by index; the names beside them, each stored once with a
 * count of the entries that hold it (seeded hashes: both come from
 * upstream answers). A put of a known address moves it to the front; a
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

/* A name as recent keeps it: once, however many addresses were answered
 * for it (an A and an AAAA answer share one), freed with its last. */
struct rname {
	struct rname *next;
	uint32_t refs;
	uint32_t hash;
	char text[]; /* cut to RECENT_NAME_MAX - 1 bytes, as copy_name does */
};

struct recent_entry {
	struct netaddr addr;
	uint32_t hnext, prev, next;
	struct rname *name; /* the name last answered with it */
	uint64_t answered_ms, expires_ms;
};

struct recent {
	size_t max, used, nbuckets;
	uint32_t ttl_min, ttl_max;
	uint32_t head, tail; /* most and least recently answered */
	uint32_t *buckets;
	struct recent_entry *e;
	struct rname **names; /* nbuckets chains */
	uint64_t seed;
};

static uint32_t addr_hash(const struct recent *r, const struct netaddr *a);
static uint32_t find(const struct recent *r, const struct netaddr *a);
static void lru_unlink(struct recent *r, uint32_t i);
static void lru_push(struct recent *r, uint32_t i);
static void index_remove(struct recent *r, uint32_t i);
static uint32_t take_entry(struct recent *r);
static void copy_name(char *dst, const char *src);
static struct rname *name_get(struct recent *r, const char *name);
static void name_put(struct recent *r, struct rname *n);
static void put_named(struct recent *r, struct rname *n,
		      const struct netaddr *a, uint32_t ttl, uint64_t now_ms);

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
	r->names = calloc(r->nbuckets, sizeof(*r->names));
	if (r->buckets == NULL || r->e == NULL || r->names == NULL) {
		recent_free(r);
		return NULL;
	}
	memset(r->buckets, 0xff, r->nbuckets * sizeof(*r->buckets));
	(void)hash_seed(&r->seed, sizeof(r->seed));
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
	for (size_t i = 0; r->names != NULL && i < r->nbuckets; i++) {
		while (r->names[i] != NULL) {
			struct rname *n = r->names[i];

			r->names[i] = n->next;
			free(n);
		}
	}
	free(r->names);
	free(r->buckets);
	free(r->e);
	free(r);
}

/* Seeded (the addresses come from upstream answers), two mixes rather
 * than a byte loop: this runs for every address answered. */
static uint32_t addr_hash(const struct recent *r, const struct netaddr *a)
{
	uint64_t w0 = 0, w1 = 0;

	if (a->family == AF_INET) {
		memcpy(&w0, a->bytes, 4);
	} else {
		memcpy(&w0, a->bytes, 8);
		memcpy(&w1, a->bytes + 8, 8);
	}
	return (uint32_t)hash_mix64(hash_mix64(r->seed ^ a->family ^ w0) ^ w1);
}

static uint32_t find(const struct recent *r, const struct netaddr *a)
{
	uint32_t i = r->buckets[addr_hash(r, a) & (r->nbuckets - 1)];

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
	    &r->buckets[addr_hash(r, &r->e[i].addr) & (r->nbuckets - 1)];

	while (*pp != i)
		pp = &r->e[*pp].hnext;
	*pp = r->e[i].hnext;
}

/* A free entry, or the least recently answered one, unlinked and
 * without its name. */
static uint32_t take_entry(struct recent *r)
{
	uint32_t i;

	if (r->used < r->max)
		return (uint32_t)r->used++;
	i = r->tail;
	lru_unlink(r, i);
	index_remove(r, i);
	name_put(r, r->e[i].name);
	r->e[i].name = NULL;
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

/* The stored name (cut as copy_name cuts it) with one more reference,
 * created if new; NULL on ENOMEM. */
static struct rname *name_get(struct recent *r, const char *name)
{
	char cut[RECENT_NAME_MAX];
	size_t len;
	uint32_t h;
	struct rname *n;

	copy_name(cut, name);
	len = strlen(cut);
	h = hash_fnv1a(cut, len, (uint32_t)r->seed);
	for (n = r->names[h & (r->nbuckets - 1)]; n != NULL; n = n->next) {
		if (n->hash == h && strcmp(n->text, cut) == 0) {
			n->refs++;
			return n;
		}
	}
	n = malloc(sizeof(*n) + len + 1);
	if (n == NULL)
		return NULL;
	n->refs = 1;
	n->hash = h;
	memcpy(n->text, cut, len + 1);
	n->next = r->names[h & (r->nbuckets - 1)];
	r->names[h & (r->nbuckets - 1)] = n;
	return n;
}

static void name_put(struct recent *r, struct rname *n)
{
	struct rname **pp;

	if (n == NULL || --n->refs > 0)
		return;
	pp = &r->names[n->hash & (r->nbuckets - 1)];
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	free(n);
}

void recent_put(struct recent *r, const char *name, const struct netaddr *a,
		uint32_t ttl, uint64_t now_ms)
{
	struct rname *n = name_get(r, name);

	if (n == NULL)
		return;
	put_named(r, n, a, ttl, now_ms);
	name_put(r, n);
}

/* recent_put of a name already held (the entry takes its own
 * reference). */
static void put_named(struct recent *r, struct rname *n,
		      const struct netaddr *a, uint32_t ttl, uint64_t now_ms)
{
	uint64_t expires =
	    now_ms + (uint64_t)sets_timeout(ttl, r->ttl_min, r->ttl_max) * 1000;
	uint32_t i, b;

	if (a->family != AF_INET && a->family != AF_INET6)
		return;
	i = find(r, a);
	if (i != NIL) {
		lru_unlink(r, i);
		if (r->e[i].expires_ms > expires && r->e[i].expires_ms > now_ms)
			expires = r->e[i].expires_ms;
	} else {
		i = take_entry(r);
		memset(&r->e[i].addr, 0, sizeof(r->e[i].addr));
		r->e[i].addr.family = a->family;
		memcpy(r->e[i].addr.bytes, a->bytes,
		       a->family == AF_INET ? 4 : 16);
		b = addr_hash(r, a) & (uint32_t)(r->nbuckets - 1);
		r->e[i].hnext = r->buckets[b];
		r->buckets[b] = i;
	}
	n->refs++;
	name_put(r, r->e[i].name);
	r->e[i].name = n;
	r->e[i].answered_ms = now_ms;
	r->e[i].expires_ms = expires;
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
	memcpy(out->name, r->e[i].name->text, strlen(r->e[i].name->text) + 1);
	out->answered_ms = r->e[i].answered_ms;
	out->expires_ms = r->e[i].expires_ms;
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
	struct rname *stored;
	uint64_t now;

	if (global == NULL || n == 0)
		return;
	dns_name_to_text(qname, qname_len, name, sizeof(name));
	now = monotime_ms();
	stored = name_get(global, name);
	if (stored == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		put_named(global, stored, &addrs[i].addr, addrs[i].ttl, now);
	name_put(global, stored);
}
