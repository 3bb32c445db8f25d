// SPDX-License-Identifier: GPL-2.0-or-later
/* prov: which names put each address in the sets (see prov.h).
 *
 * Two chained hash tables with a per-process random seed (the keys come
 * from upstream answers): names, each stored once with a count of the
 * links that point at it, in a pool of their own (struct npool: 8-byte
 * steps, compacted when its free chunks outgrow the live names), and
 * addresses, 32-byte entries in one dense
 * array (a free list takes dropped ones again) chained by entry number,
 * each holding its one link (name, expiry) itself or pointing at an
 * array of links. Links are what is bounded: one per (address, name)
 * pair, whatever the sharing. Bucket arrays double when they hold more
 * entries than buckets and the entry array doubles when full (realloc:
 * a large one is remapped, not copied, and pages never reached are not
 * resident), so memory follows the live entries; prov_clear gives the
 * entry array and the names' blocks back.
 *
 * Eviction is one pass over the names (each judged once by the new
 * policy, so a 100k-name allowlist costs 100k policy lookups, not one per
 * link) and one pass over the addresses. The names are the queried
 * names, not the allowlist patterns, so "still allowed" is exact for
 * wildcards too. */
#include <errno.h>
#include <stddef.h>
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
#define NIL		     UINT32_MAX

/* No stored hash: 14 bytes before the name, in the names' pool. */
struct pname {
	struct pname *next; /* in its chain, or in the pool's free list */
	uint32_t refs;	    /* links pointing here */
	bool gone;	    /* judged no longer allowed by prov_evict */
	uint8_t len;	    /* 0: moved by names_compact, next is the copy */
	uint8_t wire[];
};

#define NAME_STEP 8 /* a name's chunk is a multiple of this */
#define NAME_CLASSES                                                           \
	((offsetof(struct pname, wire) + NAME_MAX_WIRE) / NAME_STEP + 1)
#define BLOCK_MIN	  4096u
#define BLOCK_MAX	  65536u
#define COMPACT_SPARE	  65536u /* free chunks' bytes before a compaction */
#define COMPACT_PER_ENTRY 8u	 /* and at least this many per address */

/* A block the names are cut from; the chunks follow it. */
struct pblock {
	struct pblock *next;
	size_t cap, used; /* bytes after the header */
};
_Static_assert(sizeof(struct pblock) % NAME_STEP == 0,
	       "a block's chunks keep the alignment a ref's flags need");

/* The names' memory: chunks cut in NAME_STEP steps from blocks, a free
 * list of each size. malloc gave a 38-byte name (a 24-byte wire name)
 * a 48-byte chunk, and up to 64 once its free chunks were split; here it
 * takes 40. Free chunks serve only their own size, so when they hold
 * more than the live names do, names_compact copies the live ones into
 * one new block and gives the old blocks back. */
struct npool {
	struct pblock *blocks; /* the newest first: chunks are cut from it */
	struct pname *free[NAME_CLASSES];
	size_t live, spare; /* bytes of live names' and free chunks */
	size_t next_block;  /* the size of the next block */
};

struct plink {
	struct pname *name;
	uint32_t expires; /* monotonic seconds */
};

/* The links of an address that has more than one. */
struct plinks {
	uint32_t n, cap;
	struct plink l[];
};

/* ref's low bits (malloc aligns to 8 at least): the entry is in use, its
 * address is IPv6, ref points at a struct plinks (else at the one link's
 * name, NULL while it has none). 0: a free entry. */
#define PREF_USED  1u
#define PREF_V6	   2u
#define PREF_MANY  4u
#define PREF_FLAGS 7u

/* One address in 32 bytes, in a dense array indexed by a chained hash of
 * entry numbers: most addresses have one name, whose link lives in the
 * entry (ref and expires), so the common case allocates nothing. */
struct pent {
	uint8_t bytes[16]; /* 4 used for IPv4 */
	uintptr_t ref;
	uint32_t next;	  /* in its chain, or in the free list */
	uint32_t expires; /* the one link's, without PREF_MANY */
};
_Static_assert(sizeof(struct pent) == 32, "an address entry is 32 bytes");

struct htab {
	void **b; /* chains; the first member of an entry is its next */
	size_t mask;
	size_t count;
};

/* The addresses: e[0 .. used) taken (free ones chained from free), cap
 * allocated; b[mask + 1] chain heads. */
struct atab {
	struct pent *e;
	uint32_t *b;
	size_t mask, used, cap, count;
	uint32_t free;
};

struct prov {
	struct htab names;
	struct npool pool;
	struct atab addrs;
	size_t links, max;
	uint64_t seed;
	uint64_t swept_at; /* monotonic seconds of the last full sweep */
};

static uint32_t name_hash(const struct prov *p, const uint8_t *w, size_t len);
static uint32_t addr_hash(const struct prov *p, const struct netaddr *a);
static int htab_init(struct htab *t);
static int names_grow(struct prov *p);
static int atab_init(struct atab *t);
static int atab_rehash(struct prov *p, size_t buckets);
static struct netaddr ent_addr(const struct pent *e);
static bool ent_is(const struct pent *e, const struct netaddr *a);
static uint32_t nlinks(const struct pent *e);
static struct pname *lname(const struct pent *e, uint32_t i);
static uint32_t *lexp(struct pent *e, uint32_t i);
static struct pname *name_get(struct prov *p, const uint8_t *w, size_t len);
static void name_put(struct prov *p, struct pname *n);
static struct pent *addr_get(struct prov *p, const struct netaddr *a);
static void addr_drop(struct prov *p, struct pent *a);
static size_t addr_prune(struct prov *p, struct pent *a, uint64_t now,
			 bool drop_gone);
static int link_add(struct prov *p, struct pent *a, struct pname *n,
		    uint32_t expires);
static void sweep(struct prov *p, uint64_t now, bool drop_gone);
static const struct pent *addr_find(const struct prov *p,
				    const struct netaddr *a);
static size_t walk_links(const struct pent *e, prov_walk_fn fn, void *arg,
			 uint64_t now);
static bool judge_addr(struct pent *a, const struct prov_shorten *sh,
		       uint64_t now, prov_evict_fn evict, void *earg);
static size_t name_len(const uint8_t *w, size_t len);
static size_t chunk_size(size_t len);
static struct pblock *block_new(size_t cap);
static struct pname *pool_cut(struct npool *o, size_t size);
static struct pname *pool_take(struct prov *p, size_t len);
static void pool_give(struct prov *p, struct pname *n);
static void pool_drop(struct npool *o);
static bool compact_due(const struct prov *p);
static void names_compact(struct prov *p);
static struct pname *name_moved(struct prov *p, struct pname *o);

static uint32_t name_hash(const struct prov *p, const uint8_t *w, size_t len)
{
	return (uint32_t)hash_mix64(
	    hash_fnv1a64(p->seed ^ HASH_FNV64_BASIS, w, len));
}

static uint32_t addr_hash(const struct prov *p, const struct netaddr *a)
{
	uint64_t w0, w1;

	memcpy(&w0, a->bytes, 8);
	memcpy(&w1, a->bytes + 8, 8);
	if (a->family == AF_INET) {
		w0 = 0;
		memcpy(&w0, a->bytes, 4);
		w1 = 0;
	}
	return (uint32_t)hash_mix64(hash_mix64(p->seed ^ a->family ^ w0) ^ w1);
}

static int htab_init(struct htab *t)
{
	t->b = calloc(MIN_BUCKETS, sizeof(*t->b));
	t->mask = MIN_BUCKETS - 1;
	t->count = 0;
	return t->b != NULL ? 0 : -ENOMEM;
}

/* Double the names' buckets, hashing every name again. */
static int names_grow(struct prov *p)
{
	struct htab *t = &p->names;
	size_t n = (t->mask + 1) * 2;
	void **b = calloc(n, sizeof(*b));

	if (b == NULL)
		return -ENOMEM;
	for (size_t i = 0; i <= t->mask; i++) {
		struct pname *e = t->b[i];

		while (e != NULL) {
			struct pname *next = e->next;
			size_t k = name_hash(p, e->wire, e->len) & (n - 1);

			e->next = b[k];
			b[k] = e;
			e = next;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = n - 1;
	return 0;
}

static int atab_init(struct atab *t)
{
	*t = (struct atab){.free = NIL};
	t->b = malloc(MIN_BUCKETS * sizeof(*t->b));
	if (t->b == NULL)
		return -ENOMEM;
	memset(t->b, 0xff, MIN_BUCKETS * sizeof(*t->b));
	t->mask = MIN_BUCKETS - 1;
	return 0;
}

/* Chain every entry again into buckets heads (a power of two). */
static int atab_rehash(struct prov *p, size_t buckets)
{
	struct atab *t = &p->addrs;
	uint32_t *b = malloc(buckets * sizeof(*b));

	if (b == NULL)
		return -ENOMEM;
	memset(b, 0xff, buckets * sizeof(*b));
	for (size_t i = 0; i < t->used; i++) {
		struct pent *e = &t->e[i];
		struct netaddr a;
		size_t k;

		if (e->ref == 0)
			continue;
		a = ent_addr(e);
		k = addr_hash(p, &a) & (buckets - 1);
		e->next = b[k];
		b[k] = (uint32_t)i;
	}
	free(t->b);
	t->b = b;
	t->mask = buckets - 1;
	return 0;
}

static struct netaddr ent_addr(const struct pent *e)
{
	struct netaddr a = {.family = e->ref & PREF_V6 ? AF_INET6 : AF_INET};

	memcpy(a.bytes, e->bytes, a.family == AF_INET ? 4 : 16);
	return a;
}

static bool ent_is(const struct pent *e, const struct netaddr *a)
{
	bool v6 = a->family == AF_INET6;

	return e->ref != 0 && ((e->ref & PREF_V6) != 0) == v6 &&
	       memcmp(e->bytes, a->bytes, v6 ? 16 : 4) == 0;
}

static uint32_t nlinks(const struct pent *e)
{
	if (e->ref & PREF_MANY)
		return ((const struct plinks *)(e->ref &
						~(uintptr_t)PREF_FLAGS))
		    ->n;
	return (e->ref & ~(uintptr_t)PREF_FLAGS) != 0 ? 1 : 0;
}

static struct pname *lname(const struct pent *e, uint32_t i)
{
	if (e->ref & PREF_MANY)
		return ((const struct plinks *)(e->ref &
						~(uintptr_t)PREF_FLAGS))
		    ->l[i]
		    .name;
	return (struct pname *)(e->ref & ~(uintptr_t)PREF_FLAGS);
}

static uint32_t *lexp(struct pent *e, uint32_t i)
{
	if (e->ref & PREF_MANY)
		return &((struct plinks *)(e->ref & ~(uintptr_t)PREF_FLAGS))
			    ->l[i]
			    .expires;
	return &e->expires;
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
	if (htab_init(&p->names) != 0 || atab_init(&p->addrs) != 0) {
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
	pool_drop(&p->pool);
	free(p->names.b);
	free(p->addrs.b);
	free(p->addrs.e);
	free(p);
}

/* Every address dropped, and the entry array given back: the sets are
 * empty, so the next peak need not sit on this one's pages. */
void prov_clear(struct prov *p)
{
	for (size_t i = 0; i < p->addrs.used; i++) {
		if (p->addrs.e[i].ref != 0)
			addr_drop(p, &p->addrs.e[i]);
	}
	free(p->addrs.e);
	p->addrs.e = NULL;
	p->addrs.used = p->addrs.cap = 0;
	p->addrs.free = NIL;
	memset(p->addrs.b, 0xff, (p->addrs.mask + 1) * sizeof(*p->addrs.b));
	pool_drop(&p->pool); /* every name went with its last link */
}

static size_t chunk_size(size_t len)
{
	size_t n = offsetof(struct pname, wire) + len;

	return (n + NAME_STEP - 1) / NAME_STEP * NAME_STEP;
}

static struct pblock *block_new(size_t cap)
{
	struct pblock *b = malloc(sizeof(*b) + cap);

	if (b != NULL)
		*b = (struct pblock){.cap = cap};
	return b;
}

/* size bytes from o's newest block, NULL when it has not that many. */
static struct pname *pool_cut(struct npool *o, size_t size)
{
	struct pblock *b = o->blocks;
	struct pname *n;

	if (b == NULL || b->cap - b->used < size)
		return NULL;
	n = (struct pname *)(void *)((uint8_t *)(b + 1) + b->used);
	b->used += size;
	return n;
}

/* A chunk for a name of len wire bytes, its header cleared. */
static struct pname *pool_take(struct prov *p, size_t len)
{
	struct npool *o = &p->pool;
	size_t size = chunk_size(len);
	struct pname *n = o->free[size / NAME_STEP];

	if (n != NULL) {
		o->free[size / NAME_STEP] = n->next;
		o->spare -= size;
	} else if ((n = pool_cut(o, size)) == NULL) {
		struct pblock *b;

		if (o->next_block < BLOCK_MIN)
			o->next_block = BLOCK_MIN;
		b = block_new(o->next_block);
		if (b == NULL)
			return NULL;
		if (o->next_block < BLOCK_MAX)
			o->next_block *= 2;
		b->next = o->blocks;
		o->blocks = b;
		n = pool_cut(o, size);
	}
	o->live += size;
	memset(n, 0, offsetof(struct pname, wire));
	return n;
}

static void pool_give(struct prov *p, struct pname *n)
{
	struct npool *o = &p->pool;
	size_t size = chunk_size(n->len);

	n->next = o->free[size / NAME_STEP];
	o->free[size / NAME_STEP] = n;
	o->live -= size;
	o->spare += size;
}

/* Every block given back: no name lives in them. */
static void pool_drop(struct npool *o)
{
	while (o->blocks != NULL) {
		struct pblock *b = o->blocks;

		o->blocks = b->next;
		free(b);
	}
	*o = (struct npool){0};
}

/* o's copy in the new pool (made, and chained in the names' table, at
 * its first link): o keeps len 0 and the copy in next. */
static struct pname *name_moved(struct prov *p, struct pname *o)
{
	size_t size = chunk_size(o->len), k;
	struct pname *n;

	if (o->len == 0)
		return o->next;
	n = pool_cut(&p->pool, size);
	memcpy(n, o, size);
	k = name_hash(p, n->wire, n->len) & p->names.mask;
	n->next = p->names.b[k];
	p->names.b[k] = n;
	o->len = 0;
	o->next = n;
	return n;
}

/* When the free chunks hold more than the live names, at least
 * COMPACT_SPARE, and at least COMPACT_PER_ENTRY bytes for each address
 * entry the compaction walks: its cost, one pass over the entries, is
 * paid for by that many bytes given back (a few names that hold many
 * addresses do not make it run at every few frees). */
static bool compact_due(const struct prov *p)
{
	const struct npool *o = &p->pool;

	return o->spare > o->live && o->spare >= COMPACT_SPARE &&
	       o->spare / COMPACT_PER_ENTRY >= p->addrs.used;
}

/* The live names copied into one block of their size, every link and
 * chain pointed at the copies, the old blocks given back. Nothing
 * changes when that block cannot be had. */
static void names_compact(struct prov *p)
{
	struct npool old = p->pool;
	struct pblock *b = block_new(old.live);

	if (b == NULL)
		return;
	p->pool = (struct npool){.blocks = b, .live = old.live};
	memset(p->names.b, 0, (p->names.mask + 1) * sizeof(*p->names.b));
	for (size_t i = 0; i < p->addrs.used; i++) {
		struct pent *e = &p->addrs.e[i];
		uint32_t n = nlinks(e);

		if (e->ref == 0 || n == 0)
			continue;
		if (!(e->ref & PREF_MANY)) {
			struct pname *c = name_moved(p, lname(e, 0));

			e->ref = (uintptr_t)c | (e->ref & PREF_FLAGS);
			continue;
		}
		for (uint32_t k = 0; k < n; k++) {
			struct plinks *L =
			    (struct plinks *)(e->ref & ~(uintptr_t)PREF_FLAGS);

			L->l[k].name = name_moved(p, L->l[k].name);
		}
	}
	pool_drop(&old);
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
		if (n->len == len && memcmp(n->wire, w, len) == 0)
			return n;
	}
	if (p->names.count >= p->names.mask + 1) {
		if (names_grow(p) != 0)
			return NULL;
	}
	n = pool_take(p, len);
	if (n == NULL)
		return NULL;
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
	struct pent *e = (struct pent *)addr_find(p, a);

	for (uint32_t i = 0; e != NULL && i < nlinks(e); i++) {
		const struct pname *n = lname(e, i);

		if (!n->gone && *lexp(e, i) > now && n->len == len &&
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
	pp = (struct pname **)&p->names
		 .b[name_hash(p, n->wire, n->len) & p->names.mask];
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	p->names.count--;
	pool_give(p, n);
}

static const struct pent *addr_find(const struct prov *p,
				    const struct netaddr *a)
{
	const struct atab *t = &p->addrs;
	uint32_t i = t->b[addr_hash(p, a) & t->mask];

	while (i != NIL && !ent_is(&t->e[i], a))
		i = t->e[i].next;
	return i != NIL ? &t->e[i] : NULL;
}

/* a's entry, created (with no link) if new. */
static struct pent *addr_get(struct prov *p, const struct netaddr *a)
{
	struct atab *t = &p->addrs;
	struct pent *e = (struct pent *)addr_find(p, a);
	uint32_t i;
	size_t k;

	if (e != NULL)
		return e;
	if (t->count >= t->mask + 1 && atab_rehash(p, (t->mask + 1) * 2) != 0)
		return NULL;
	if (t->free == NIL && t->used == t->cap) {
		size_t cap = t->cap != 0 ? t->cap * 2 : MIN_BUCKETS;
		struct pent *ne = reallocarray(t->e, cap, sizeof(*ne));

		if (ne == NULL)
			return NULL;
		t->e = ne;
		t->cap = cap;
	}
	if (t->free != NIL) {
		i = t->free;
		t->free = t->e[i].next;
	} else {
		i = (uint32_t)t->used++;
	}
	e = &t->e[i];
	memset(e, 0, sizeof(*e));
	memcpy(e->bytes, a->bytes, a->family == AF_INET ? 4 : 16);
	e->ref = PREF_USED | (a->family == AF_INET6 ? PREF_V6 : 0);
	k = addr_hash(p, a) & t->mask;
	e->next = t->b[k];
	t->b[k] = i;
	t->count++;
	return e;
}

static void addr_drop(struct prov *p, struct pent *a)
{
	struct atab *t = &p->addrs;
	struct netaddr addr = ent_addr(a);
	uint32_t i = (uint32_t)(a - t->e);
	uint32_t *pp = &t->b[addr_hash(p, &addr) & t->mask];
	uint32_t n = nlinks(a);

	for (uint32_t k = 0; k < n; k++)
		name_put(p, lname(a, k));
	p->links -= n;
	while (*pp != i)
		pp = &t->e[*pp].next;
	*pp = a->next;
	t->count--;
	if (a->ref & PREF_MANY)
		free((void *)(a->ref & ~(uintptr_t)PREF_FLAGS));
	a->ref = 0;
	a->next = t->free;
	t->free = i;
}

/* Drop a's expired links (and, with drop_gone, those of names judged
 * gone); returns the links left. */
static size_t addr_prune(struct prov *p, struct pent *a, uint64_t now,
			 bool drop_gone)
{
	uint32_t n = nlinks(a), k = 0;
	struct plinks *L;

	if (!(a->ref & PREF_MANY)) {
		struct pname *nm = lname(a, 0);

		if (n == 0 || (a->expires > now && !(drop_gone && nm->gone)))
			return n;
		name_put(p, nm);
		p->links--;
		a->ref &= PREF_FLAGS;
		return 0;
	}
	L = (struct plinks *)(a->ref & ~(uintptr_t)PREF_FLAGS);
	for (uint32_t i = 0; i < n; i++) {
		struct plink *l = &L->l[i];

		if (l->expires > now && !(drop_gone && l->name->gone)) {
			L->l[k++] = *l;
			continue;
		}
		name_put(p, l->name);
		p->links--;
	}
	L->n = k;
	return k;
}

static int link_add(struct prov *p, struct pent *a, struct pname *n,
		    uint32_t expires)
{
	uint32_t have = nlinks(a);
	struct plinks *L;

	if (have == 0 && !(a->ref & PREF_MANY)) {
		a->ref |= (uintptr_t)n;
		a->expires = expires;
	} else {
		if (!(a->ref & PREF_MANY)) {
			L = malloc(sizeof(*L) + 2 * sizeof(L->l[0]));
			if (L == NULL)
				return -ENOMEM;
			L->n = 1;
			L->cap = 2;
			L->l[0] = (struct plink){lname(a, 0), a->expires};
			a->ref = (uintptr_t)L | (a->ref & PREF_V6) | PREF_USED |
				 PREF_MANY;
		}
		L = (struct plinks *)(a->ref & ~(uintptr_t)PREF_FLAGS);
		if (L->n == L->cap) {
			uint32_t cap = L->cap * 2;
			struct plinks *nl =
			    realloc(L, sizeof(*L) + cap * sizeof(L->l[0]));

			if (nl == NULL)
				return -ENOMEM;
			nl->cap = cap;
			L = nl;
			a->ref = (uintptr_t)L | (a->ref & PREF_FLAGS);
		}
		L->l[L->n++] = (struct plink){n, expires};
	}
	n->refs++;
	p->links++;
	return 0;
}

int prov_note(struct prov *p, const uint8_t *name, size_t len,
	      const struct netaddr *a, uint64_t expires, uint64_t now)
{
	uint32_t exp = expires > UINT32_MAX ? UINT32_MAX : (uint32_t)expires;
	struct pname *n;
	struct pent *e;
	int rc;

	if ((a->family != AF_INET && a->family != AF_INET6) || expires <= now ||
	    len == 0 || name_len(name, len) != len)
		return -EINVAL;
	if (p->links >= p->max && now > p->swept_at) {
		p->swept_at = now;
		sweep(p, now, false);
	}
	if (compact_due(p))
		names_compact(p);
	e = addr_get(p, a);
	if (e == NULL)
		return -ENOMEM;
	(void)addr_prune(p, e, now, false);
	for (uint32_t i = 0; i < nlinks(e); i++) {
		const struct pname *l = lname(e, i);

		if (l->len == len && memcmp(l->wire, name, len) == 0) {
			if (exp > *lexp(e, i))
				*lexp(e, i) = exp;
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
	if (nlinks(e) == 0)
		addr_drop(p, e);
	return rc;
}

static void sweep(struct prov *p, uint64_t now, bool drop_gone)
{
	for (size_t i = 0; i < p->addrs.used; i++) {
		struct pent *a = &p->addrs.e[i];

		if (a->ref != 0 && addr_prune(p, a, now, drop_gone) == 0)
			addr_drop(p, a);
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
	for (size_t i = 0; i < p->addrs.used; i++) {
		struct pent *a = &p->addrs.e[i];

		if (a->ref != 0 && judge_addr(a, sh, now, evict, earg))
			evicted++;
	}
	sweep(p, now, true);
	if (compact_due(p))
		names_compact(p);
	return evicted;
}

/* fn for each link of e live at now; returns how many. */
static size_t walk_links(const struct pent *e, prov_walk_fn fn, void *arg,
			 uint64_t now)
{
	struct netaddr a = ent_addr(e);
	size_t n = 0;

	for (uint32_t i = 0; i < nlinks(e); i++) {
		uint32_t exp = *lexp((struct pent *)e, i);
		const struct pname *nm = lname(e, i);

		if (exp <= now)
			continue;
		n++;
		if (fn != NULL)
			fn(arg, nm->wire, nm->len, &a, exp - now);
	}
	return n;
}

size_t prov_links_of(const struct prov *p, const struct netaddr *a,
		     prov_walk_fn fn, void *arg, uint64_t now)
{
	const struct pent *e = addr_find(p, a);

	return e != NULL ? walk_links(e, fn, arg, now) : 0;
}

/* Evict a when only names no longer allowed hold it; else, with
 * sh->fn, when its longest live link is a removed name's or beyond
 * sh->cap, cut the kept links to the cap and say how long it should
 * live now. True when a was evicted. */
static bool judge_addr(struct pent *a, const struct prov_shorten *sh,
		       uint64_t now, prov_evict_fn evict, void *earg)
{
	uint64_t had = 0, keep = 0, cap = sh->cap ? sh->cap : UINT32_MAX;
	uint32_t n = nlinks(a);
	struct netaddr addr = ent_addr(a);

	for (uint32_t k = 0; k < n; k++) {
		uint32_t exp = *lexp(a, k);

		if (exp <= now)
			continue;
		if (exp > had)
			had = exp;
		if (!lname(a, k)->gone && exp > keep)
			keep = exp;
	}
	if (keep == 0) {
		for (uint32_t k = 0; k < n; k++) {
			if (lname(a, k)->gone) {
				evict(earg, &addr);
				return true;
			}
		}
		return false;
	}
	if (sh->fn == NULL || (keep >= had && keep <= cap))
		return false;
	for (uint32_t k = 0; k < n; k++) {
		if (*lexp(a, k) > cap)
			*lexp(a, k) = (uint32_t)cap;
	}
	sh->fn(sh->arg, &addr, keep < cap ? keep : cap);
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
	for (size_t i = 0; i < p->addrs.used; i++) {
		if (p->addrs.e[i].ref != 0)
			(void)walk_links(&p->addrs.e[i], fn, arg, now);
	}
}
