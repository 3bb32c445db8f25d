// SPDX-License-Identifier: GPL-2.0-or-later
/* prov: which names put each address in the sets (see prov.h).
 *
 * Two chained hash tables with a per-process random seed (the keys come
 * from upstream answers): names, each stored once with a count of the
 * links that point at it, and addresses, each with a small array of
 * links (name, expiry). Links are what is bounded: one per (address,
 * name) pair, whatever the sharing. Tables double when they hold more
 * entries than buckets, so memory follows the live entries.
 *
 * Eviction is one pass over the names (each judged once by the new
 * policy, so a 100k-name allowlist costs 100k policy lookups, not one per
 * link) and one pass over the addresses. The names are the queried
 * names, not the allowlist patterns, so "still allowed" is exact for
 * wildcards too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "base/hash.h"
#include "resolve/prov.h"

#define PROV_MAX_LINKS (1u << 26)
/* (address, name) links per set entry (both sets), and at least: a small
 * set must fail as full in the kernel, not here first. */
#define PROV_LINKS_PER_ENTRY 2
#define PROV_LINKS_MIN	     65536
#define MIN_BUCKETS	     1024
#define NAME_MAX_WIRE	     255

struct pname {
	struct pname *next;
	uint32_t hash;
	uint32_t refs; /* links pointing here */
	bool gone;     /* judged no longer allowed by prov_evict */
	uint8_t len;
	uint8_t wire[];
};

struct plink {
	struct pname *name;
	uint32_t expires; /* monotonic seconds */
};

/* Most addresses have one name: that link lives in the node (cap <= 1),
 * more go to an array of their own, so the common case is one
 * allocation of 56 bytes. */
struct paddr {
	struct paddr *next;
	uint32_t hash;
	uint32_t n, cap;
	struct netaddr addr;
	union {
		struct plink one; /* cap <= 1 */
		struct plink *many;
	} u;
};

struct htab {
	void **b; /* chains; the first member of an entry is its next */
	size_t mask;
	size_t count;
};

struct prov {
	struct htab names, addrs;
	size_t links, max;
	uint64_t seed;
	uint64_t swept_at; /* monotonic seconds of the last full sweep */
};

static uint64_t mix64(uint64_t x);
static uint32_t name_hash(const struct prov *p, const uint8_t *w, size_t len);
static uint32_t addr_hash(const struct prov *p, const struct netaddr *a);
static int htab_init(struct htab *t);
static int htab_grow(struct htab *t, uint32_t (*hash_of)(const void *));
static uint32_t pname_hash_of(const void *e);
static uint32_t paddr_hash_of(const void *e);
static struct pname *name_get(struct prov *p, const uint8_t *w, size_t len);
static void name_put(struct prov *p, struct pname *n);
static struct paddr *addr_get(struct prov *p, const struct netaddr *a);
static void addr_drop(struct prov *p, struct paddr *a);
static size_t addr_prune(struct prov *p, struct paddr *a, uint64_t now,
			 bool drop_gone);
static int link_add(struct prov *p, struct paddr *a, struct pname *n,
		    uint32_t expires);
static void sweep(struct prov *p, uint64_t now, bool drop_gone);
static struct plink *links(struct paddr *a);
static const struct paddr *addr_find(const struct prov *p,
				     const struct netaddr *a);
static size_t walk_links(const struct paddr *e, prov_walk_fn fn, void *arg,
			 uint64_t now);
static bool judge_addr(struct paddr *a, const struct prov_shorten *sh,
		       uint64_t now, prov_evict_fn evict, void *earg);
static size_t name_len(const uint8_t *w, size_t len);

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint32_t name_hash(const struct prov *p, const uint8_t *w, size_t len)
{
	return (uint32_t)mix64(
	    hash_fnv1a64(p->seed ^ HASH_FNV64_BASIS, w, len));
}

static uint32_t addr_hash(const struct prov *p, const struct netaddr *a)
{
	uint64_t w0, w1;

	memcpy(&w0, a->bytes, 8);
	memcpy(&w1, a->bytes + 8, 8);
	if (a->family == AF_INET)
		w1 = 0;
	return (uint32_t)mix64(mix64(p->seed ^ a->family ^ w0) ^ w1);
}

/* The stored hash is the seeded one, so growing needs no seed. */
static uint32_t pname_hash_of(const void *e)
{
	return ((const struct pname *)e)->hash;
}

static uint32_t paddr_hash_of(const void *e)
{
	return ((const struct paddr *)e)->hash;
}

static int htab_init(struct htab *t)
{
	t->b = calloc(MIN_BUCKETS, sizeof(*t->b));
	t->mask = MIN_BUCKETS - 1;
	t->count = 0;
	return t->b != NULL ? 0 : -ENOMEM;
}

static int htab_grow(struct htab *t, uint32_t (*hash_of)(const void *))
{
	size_t n = (t->mask + 1) * 2;
	void **b = calloc(n, sizeof(*b));

	if (b == NULL)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++) {
		void *e = t->b[i];

		while (e != NULL) {
			void *next = *(void **)e;
			size_t k = hash_of(e) & (n - 1);

			*(void **)e = b[k];
			b[k] = e;
			e = next;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = n - 1;
	return 0;
}

size_t prov_max_for(uint32_t maxelem)
{
	uint64_t links = (uint64_t)maxelem * 2 * PROV_LINKS_PER_ENTRY;

	if (links < PROV_LINKS_MIN)
		links = PROV_LINKS_MIN;
	return links < PROV_MAX_LINKS ? (size_t)links : PROV_MAX_LINKS;
}

struct prov *prov_new(size_t max)
{
	struct prov *p;

	if (max == 0 || max > PROV_MAX_LINKS)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->max = max;
	if (htab_init(&p->names) != 0 || htab_init(&p->addrs) != 0) {
		prov_free(p);
		return NULL;
	}
	(void)hash_seed(&p->seed, sizeof(p->seed));
	return p;
}

void prov_free(struct prov *p)
{
	if (p == NULL)
		return;
	if (p->addrs.b != NULL && p->names.b != NULL)
		prov_clear(p);
	free(p->names.b);
	free(p->addrs.b);
	free(p);
}

void prov_clear(struct prov *p)
{
	for (size_t i = 0; i <= p->addrs.mask; i++) {
		while (p->addrs.b[i] != NULL)
			addr_drop(p, p->addrs.b[i]);
	}
}

static struct plink *links(struct paddr *a)
{
	return a->cap <= 1 ? &a->u.one : a->u.many;
}

/* The length of the wire name up to its root label, or 0. */
static size_t name_len(const uint8_t *w, size_t len)
{
	size_t off = 0;

	while (off < len && off < NAME_MAX_WIRE) {
		if (w[off] == 0)
			return off + 1;
		if (w[off] > 63)
			return 0;
		off += (size_t)w[off] + 1;
	}
	return 0;
}

/* The stored name (its reference count not raised), created if new. */
static struct pname *name_get(struct prov *p, const uint8_t *w, size_t len)
{
	uint32_t h = name_hash(p, w, len);
	struct pname *n = p->names.b[h & p->names.mask];

	for (; n != NULL; n = n->next) {
		if (n->hash == h && n->len == len &&
		    memcmp(n->wire, w, len) == 0)
			return n;
	}
	if (p->names.count >= p->names.mask + 1 &&
	    htab_grow(&p->names, pname_hash_of) != 0)
		return NULL;
	n = calloc(1, sizeof(*n) + len);
	if (n == NULL)
		return NULL;
	n->hash = h;
	n->len = (uint8_t)len;
	memcpy(n->wire, w, len);
	n->next = p->names.b[h & p->names.mask];
	p->names.b[h & p->names.mask] = n;
	p->names.count++;
	return n;
}

bool prov_answered(const struct prov *p, const uint8_t *name, size_t len,
		   const struct netaddr *a, uint64_t now)
{
	uint32_t h = addr_hash(p, a);
	size_t alen = a->family == AF_INET ? 4 : 16;
	const struct paddr *e = p->addrs.b[h & p->addrs.mask];

	for (; e != NULL; e = e->next) {
		if (e->hash == h && e->addr.family == a->family &&
		    memcmp(e->addr.bytes, a->bytes, alen) == 0)
			break;
	}
	const struct plink *l = e == NULL     ? NULL
				: e->cap <= 1 ? &e->u.one
					      : e->u.many;

	for (size_t i = 0; e != NULL && i < e->n; i++) {
		const struct pname *n = l[i].name;

		if (!n->gone && l[i].expires > now && n->len == len &&
		    memcmp(n->wire, name, len) == 0)
			return true;
	}
	return false;
}

/* One link fewer points at n: free it with the last. */
static void name_put(struct prov *p, struct pname *n)
{
	struct pname **pp;

	if (--n->refs > 0)
		return;
	pp = (struct pname **)&p->names.b[n->hash & p->names.mask];
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	p->names.count--;
	free(n);
}

static struct paddr *addr_get(struct prov *p, const struct netaddr *a)
{
	uint32_t h = addr_hash(p, a);
	size_t alen = a->family == AF_INET ? 4 : 16;
	struct paddr *e = p->addrs.b[h & p->addrs.mask];

	for (; e != NULL; e = e->next) {
		if (e->hash == h && e->addr.family == a->family &&
		    memcmp(e->addr.bytes, a->bytes, alen) == 0)
			return e;
	}
	if (p->addrs.count >= p->addrs.mask + 1 &&
	    htab_grow(&p->addrs, paddr_hash_of) != 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->hash = h;
	e->addr.family = a->family;
	memcpy(e->addr.bytes, a->bytes, alen);
	e->next = p->addrs.b[h & p->addrs.mask];
	p->addrs.b[h & p->addrs.mask] = e;
	p->addrs.count++;
	return e;
}

static void addr_drop(struct prov *p, struct paddr *a)
{
	struct paddr **pp =
	    (struct paddr **)&p->addrs.b[a->hash & p->addrs.mask];

	for (uint32_t i = 0; i < a->n; i++)
		name_put(p, links(a)[i].name);
	p->links -= a->n;
	while (*pp != a)
		pp = &(*pp)->next;
	*pp = a->next;
	p->addrs.count--;
	if (a->cap > 1)
		free(a->u.many);
	free(a);
}

/* Drop a's expired links (and, with drop_gone, those of names judged
 * gone); returns the links left. */
static size_t addr_prune(struct prov *p, struct paddr *a, uint64_t now,
			 bool drop_gone)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < a->n; i++) {
		struct plink *l = &links(a)[i];

		if (l->expires > now && !(drop_gone && l->name->gone)) {
			links(a)[k++] = *l;
			continue;
		}
		name_put(p, l->name);
		p->links--;
	}
	a->n = k;
	return k;
}

static int link_add(struct prov *p, struct paddr *a, struct pname *n,
		    uint32_t expires)
{
	if (a->n == a->cap && a->cap == 0) {
		a->cap = 1;
	} else if (a->n == a->cap) {
		uint32_t cap = a->cap * 2;
		struct plink *l =
		    a->cap == 1 ? malloc(cap * sizeof(*l))
				: reallocarray(a->u.many, cap, sizeof(*l));

		if (l == NULL)
			return -ENOMEM;
		if (a->cap == 1)
			l[0] = a->u.one;
		a->u.many = l;
		a->cap = cap;
	}
	links(a)[a->n].name = n;
	links(a)[a->n].expires = expires;
	a->n++;
	n->refs++;
	p->links++;
	return 0;
}

int prov_note(struct prov *p, const uint8_t *name, size_t len,
	      const struct netaddr *a, uint64_t expires, uint64_t now)
{
	uint32_t exp = expires > UINT32_MAX ? UINT32_MAX : (uint32_t)expires;
	struct pname *n;
	struct paddr *e;
	int rc;

	if ((a->family != AF_INET && a->family != AF_INET6) || expires <= now ||
	    len == 0 || name_len(name, len) != len)
		return -EINVAL;
	if (p->links >= p->max && now > p->swept_at) {
		p->swept_at = now;
		sweep(p, now, false);
	}
	e = addr_get(p, a);
	if (e == NULL)
		return -ENOMEM;
	(void)addr_prune(p, e, now, false);
	for (uint32_t i = 0; i < e->n; i++) {
		struct plink *l = &links(e)[i];

		if (l->name->len == len &&
		    memcmp(l->name->wire, name, len) == 0) {
			if (exp > l->expires)
				l->expires = exp;
			return 0;
		}
	}
	rc = -ENOSPC;
	if (p->links >= p->max)
		goto fail;
	rc = -ENOMEM;
	n = name_get(p, name, len);
	if (n == NULL)
		goto fail;
	if ((rc = link_add(p, e, n, exp)) != 0) {
		if (n->refs == 0) {
			n->refs = 1;
			name_put(p, n);
		}
		goto fail;
	}
	return 0;
fail:
	if (e->n == 0)
		addr_drop(p, e);
	return rc;
}

static void sweep(struct prov *p, uint64_t now, bool drop_gone)
{
	for (size_t i = 0; i <= p->addrs.mask; i++) {
		struct paddr *a = p->addrs.b[i], *next;

		for (; a != NULL; a = next) {
			next = a->next;
			if (addr_prune(p, a, now, drop_gone) == 0)
				addr_drop(p, a);
		}
	}
}

size_t prov_evict(struct prov *p, prov_allowed_fn allowed, void *aarg,
		  prov_evict_fn evict, void *earg, uint64_t now)
{
	const struct prov_shorten none = {0};

	return prov_evict_shorten(p, allowed, aarg, evict, earg, &none, now);
}

size_t prov_evict_shorten(struct prov *p, prov_allowed_fn allowed, void *aarg,
			  prov_evict_fn evict, void *earg,
			  const struct prov_shorten *sh, uint64_t now)
{
	size_t evicted = 0;

	for (size_t i = 0; i <= p->names.mask; i++) {
		for (struct pname *n = p->names.b[i]; n != NULL; n = n->next)
			n->gone = !allowed(aarg, n->wire, n->len);
	}
	for (size_t i = 0; i <= p->addrs.mask; i++) {
		for (struct paddr *a = p->addrs.b[i]; a != NULL; a = a->next) {
			if (judge_addr(a, sh, now, evict, earg))
				evicted++;
		}
	}
	sweep(p, now, true);
	return evicted;
}

static const struct paddr *addr_find(const struct prov *p,
				     const struct netaddr *a)
{
	uint32_t h = addr_hash(p, a);
	size_t alen = a->family == AF_INET ? 4 : 16;
	const struct paddr *e = p->addrs.b[h & p->addrs.mask];

	for (; e != NULL; e = e->next) {
		if (e->hash == h && e->addr.family == a->family &&
		    memcmp(e->addr.bytes, a->bytes, alen) == 0)
			return e;
	}
	return NULL;
}

/* fn for each link of e live at now; returns how many. */
static size_t walk_links(const struct paddr *e, prov_walk_fn fn, void *arg,
			 uint64_t now)
{
	const struct plink *l = links((struct paddr *)e);
	size_t n = 0;

	for (uint32_t i = 0; i < e->n; i++) {
		if (l[i].expires <= now)
			continue;
		n++;
		if (fn != NULL)
			fn(arg, l[i].name->wire, l[i].name->len, &e->addr,
			   l[i].expires - now);
	}
	return n;
}

size_t prov_links_of(const struct prov *p, const struct netaddr *a,
		     prov_walk_fn fn, void *arg, uint64_t now)
{
	const struct paddr *e = addr_find(p, a);

	return e != NULL ? walk_links(e, fn, arg, now) : 0;
}

/* Evict a when only names no longer allowed hold it; else, with
 * sh->fn, when its longest live link is a removed name's or beyond
 * sh->cap, cut the kept links to the cap and say how long it should
 * live now. True when a was evicted. */
static bool judge_addr(struct paddr *a, const struct prov_shorten *sh,
		       uint64_t now, prov_evict_fn evict, void *earg)
{
	uint64_t had = 0, keep = 0, cap = sh->cap ? sh->cap : UINT32_MAX;

	for (uint32_t k = 0; k < a->n; k++) {
		const struct plink *l = &links(a)[k];

		if (l->expires <= now)
			continue;
		if (l->expires > had)
			had = l->expires;
		if (!l->name->gone && l->expires > keep)
			keep = l->expires;
	}
	if (keep == 0) {
		for (uint32_t k = 0; k < a->n; k++) {
			if (links(a)[k].name->gone) {
				evict(earg, &a->addr);
				return true;
			}
		}
		return false;
	}
	if (sh->fn == NULL || (keep >= had && keep <= cap))
		return false;
	for (uint32_t k = 0; k < a->n; k++) {
		if (links(a)[k].expires > cap)
			links(a)[k].expires = (uint32_t)cap;
	}
	sh->fn(sh->arg, &a->addr, keep < cap ? keep : cap);
	return false;
}

size_t prov_addresses(const struct prov *p)
{
	return p->addrs.count;
}

size_t prov_names(const struct prov *p)
{
	return p->names.count;
}

size_t prov_links(const struct prov *p)
{
	return p->links;
}

void prov_walk(const struct prov *p, prov_walk_fn fn, void *arg, uint64_t now)
{
	for (size_t b = 0; b <= p->addrs.mask; b++) {
		for (const struct paddr *a = p->addrs.b[b]; a != NULL;
		     a = a->next)
			(void)walk_links(a, fn, arg, now);
	}
}
