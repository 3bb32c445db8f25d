// SPDX-License-Identifier: GPL-2.0-or-later
/* prov: which names put each address in the sets (see prov.h).
 *
 * Two chained hash tables with a per-process random seed (the keys come
 * from upstream answers): names, each stored once with a count of the
 * links that point at it, and addresses, in two dense arrays of entries,
 * one per family (16 bytes an IPv4 entry, 28 an IPv6 one: an IPv4
 * address does not pay for an IPv6 one's 16 bytes), each chained by
 * entry number and with a free list that takes dropped entries again.
 * A name of two labels or more keeps only its first label and refers to
 * its zone, the rest of it, kept once in a third table for all the names
 * under it: the names a wildcard lets through share one copy
 * (n12345.uniq.bench.test. takes 20 bytes, not 36). Names and zones each
 * live in a pool of their own (struct npool: one array cut in 4-byte
 * steps, compacted when the free chunks outgrow the live ones). Every
 * reference is a 32-bit index (a name or a zone by its place in its
 * pool, the links of an address that has several by their slot in a
 * directory), not a pointer. An entry holds its one link (name, expiry)
 * itself or refers to an array of links. Links are what is bounded: one
 * per (address, name) pair, whatever the sharing. Bucket arrays double
 * when they hold PROV_LOAD entries a head, in place (each chain split
 * between its bucket and the one a half further on), and the entry
 * arrays and the pools double when full; every one of them from 64 KiB
 * on is mapped and grows by mremap (not copied, pages never reached not
 * resident, the old and the new array never both resident), so memory
 * follows the live entries; prov_clear gives the entry arrays and the
 * pools back.
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
#include <sys/mman.h>
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
/* A bucket array doubles when it holds this many entries a head: 2-4
 * bytes of heads an entry, chains of 1-2 on average (at 1 a head, 4-8
 * bytes: 0.75 MiB of the 5 at 100,000 addresses). */
#define PROV_LOAD     2
#define MIN_ENTRIES   512
#define NAME_MAX_WIRE 255
#define NIL	      UINT32_MAX
/* An array this large is mapped, and grows by mremap: malloc would put
 * it on the heap once glibc's threshold has risen past it (a large
 * chunk freed raises it), and there realloc copies, holding both. */
#define MAP_MIN (64u << 10)

/* A name in the names' pool, or a zone in the zones' pool, referred to
 * by its offset in NAME_STEP units (0: none; a pool's first step is
 * never one): 13 bytes before the wire bytes it keeps, no stored hash.
 * A name of one label, or the root, keeps all of it and has no zone. */
struct pname {
	uint32_t next;	    /* in its chain, or in the pool's free list */
	uint32_t refs : 31; /* a name: links pointing here; a zone: names */
	uint32_t gone : 1;  /* a name judged no longer allowed by prov_evict */
	uint32_t zone;	    /* a name's zone, the rest of it (0: none) */
	uint8_t len;	    /* 0: moved by names_compact, next is the copy */
	uint8_t wire[];
};

#define NAME_STEP 4 /* a chunk is a multiple of this */
#define NAME_CLASSES                                                           \
	((offsetof(struct pname, wire) + NAME_MAX_WIRE) / NAME_STEP + 1)
_Static_assert(_Alignof(struct pname) <= NAME_STEP,
	       "a chunk's offset keeps a name's alignment");
#define POOL_MIN 4096u
/* A reference is an entry's ref shifted by PREF_SHIFT: the pool stops
 * there (-ENOMEM, so the answer fails closed). */
#define POOL_MAX_REF	  (UINT32_MAX >> 2)
#define COMPACT_SPARE	  65536u /* free chunks' bytes before a compaction */
#define COMPACT_PER_ENTRY 8u	 /* and at least this many per address */

/* The memory of the names (or the zones): chunks cut in NAME_STEP steps
 * from one array, a free list of each size. malloc gave a 34-byte name
 * (a 24-byte wire name) a 48-byte chunk, and up to 64 once its free
 * chunks were split; here its first label and a zone take 20. Free
 * chunks serve only their own size, so when they hold more than the
 * live ones do, names_compact copies the live ones into a new array of
 * their size and gives the old one back. */
struct npool {
	uint8_t *base;
	size_t cap, used; /* bytes */
	uint32_t free[NAME_CLASSES];
	size_t live, spare; /* bytes of live chunks and of free ones */
};

/* The names, or the zones: a pool and its chains. */
struct ntab {
	uint32_t *b; /* chain heads: references */
	size_t mask, count;
	struct npool pool;
};

struct plink {
	uint32_t name;	  /* a name's reference */
	uint32_t expires; /* monotonic seconds */
};

/* The links of an address that has more than one. */
struct plinks {
	uint32_t n, cap;
	struct plink l[];
};

/* The directory of the links arrays: an entry refers to its slot. */
union pslot {
	struct plinks *l;
	uint32_t next; /* a free slot: the next free one */
};

struct pdir {
	union pslot *s;
	uint32_t used, cap, free;
};

/* ref's low bits: the entry is in use, ref >> PREF_SHIFT is a slot of
 * the directory (else the one link's name, 0 while it has none). 0: a
 * free entry. */
#define PREF_USED  1u
#define PREF_MANY  2u
#define PREF_FLAGS 3u
#define PREF_SHIFT 2

/* One address: most have one name, whose link lives in the entry (ref
 * and expires), so the common case allocates nothing. Its address
 * bytes follow (4 or 16). */
struct pent {
	uint32_t ref;
	uint32_t next;	  /* in its chain, or in the free list */
	uint32_t expires; /* the one link's, without PREF_MANY */
	uint8_t bytes[];
};

/* One family's addresses: entries 0 .. used taken (free ones chained from
 * free), cap allocated, each esize bytes; b[mask + 1] chain heads. */
struct atab {
	uint8_t *e;
	uint32_t *b;
	size_t mask, used, cap, count;
	size_t esize, alen;
	uint32_t free;
	int family;
};

struct prov {
	struct ntab names, zones;
	struct atab addrs[2]; /* IPv4, IPv6 */
	struct pdir dir;
	size_t links, max;
	uint64_t seed;
	uint64_t swept_at; /* monotonic seconds of the last full sweep */
};

static void *arr_resize(void *old, size_t had, size_t want);
static uint32_t *buckets_double(uint32_t *b, size_t n, int fill);
static void arr_free(void *a, size_t bytes);
static uint32_t name_hash(const struct prov *p, const uint8_t *w, size_t len);
static uint32_t kept_hash(const struct prov *p, const struct pname *n);
static uint32_t addr_hash(const struct prov *p, const struct netaddr *a);
static int ntab_grow(struct prov *p, struct ntab *t);
static int atab_init(struct atab *t, int family);
static int atab_grow(struct prov *p, struct atab *t);
static size_t family_ix(int family);
static struct pent *ent(const struct atab *t, size_t i);
static struct netaddr ent_addr(const struct atab *t, const struct pent *e);
static bool ent_is(const struct atab *t, const struct pent *e,
		   const struct netaddr *a);
static struct pname *chunk(const struct npool *o, uint32_t r);
static struct pname *name_at(const struct prov *p, uint32_t r);
static struct pname *zone_at(const struct prov *p, uint32_t r);
static struct plinks *links_at(const struct prov *p, const struct pent *e);
static uint32_t nlinks(const struct prov *p, const struct pent *e);
static uint32_t lref(const struct prov *p, const struct pent *e, uint32_t i);
static struct pname *lname(const struct prov *p, const struct pent *e,
			   uint32_t i);
static uint32_t *lexp(const struct prov *p, struct pent *e, uint32_t i);
static size_t first_label(const uint8_t *w, size_t len);
static bool name_eq(const struct prov *p, const struct pname *n,
		    const uint8_t *w, size_t len);
static size_t name_wire(const struct prov *p, const struct pname *n,
			uint8_t out[NAME_MAX_WIRE]);
static uint32_t name_get(struct prov *p, const uint8_t *w, size_t len);
static void name_put(struct prov *p, uint32_t r);
static uint32_t zone_get(struct prov *p, const uint8_t *w, size_t len);
static void zone_put(struct prov *p, uint32_t r);
static void unchain(const struct prov *p, struct ntab *t, uint32_t r);
static struct pent *addr_get(struct prov *p, struct atab *t,
			     const struct netaddr *a);
static void addr_drop(struct prov *p, struct atab *t, struct pent *a);
static size_t addr_prune(struct prov *p, struct pent *a, uint64_t now,
			 bool drop_gone);
static int link_add(struct prov *p, struct pent *a, uint32_t n,
		    uint32_t expires);
static int dir_take(struct prov *p, struct plinks *L, uint32_t *slot);
static void dir_give(struct prov *p, uint32_t slot);
static void sweep(struct prov *p, uint64_t now, bool drop_gone);
static const struct pent *addr_find(const struct prov *p, const struct atab *t,
				    const struct netaddr *a);
static size_t walk_links(const struct prov *p, const struct atab *t,
			 const struct pent *e, prov_walk_fn fn, void *arg,
			 uint64_t now);
static bool judge_addr(const struct prov *p, const struct atab *t,
		       struct pent *a, const struct prov_shorten *sh,
		       uint64_t now, prov_evict_fn evict, void *earg);
static size_t name_len(const uint8_t *w, size_t len);
static size_t chunk_size(size_t len);
static uint32_t pool_cut(struct npool *o, size_t size);
static uint32_t pool_take(struct npool *o, size_t len);
static void pool_give(struct npool *o, uint32_t r);
static void pool_drop(struct npool *o);
static bool compact_due(const struct prov *p);
static void names_compact(struct prov *p);
static void pool_install(struct ntab *t, uint8_t *base, size_t cap);
static uint32_t chunk_moved(struct prov *p, struct ntab *t,
			    const struct npool *old, uint32_t r,
			    const struct npool *oldz);

/* old (had bytes, NULL when 0) with room for want bytes (more than
 * had), its bytes kept: malloc's below MAP_MIN, mapped from there on;
 * NULL (old kept) when that memory cannot be had. */
static void *arr_resize(void *old, size_t had, size_t want)
{
	void *a;

	if (want < MAP_MIN)
		return realloc(old, want);
	if (had >= MAP_MIN)
		a = mremap(old, had, want, MREMAP_MAYMOVE);
	else
		a = mmap(NULL, want, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return NULL;
	if (had < MAP_MIN && old != NULL) {
		memcpy(a, old, had);
		free(old);
	}
	return a;
}

static void arr_free(void *a, size_t bytes)
{
	if (bytes >= MAP_MIN)
		munmap(a, bytes);
	else
		free(a);
}

/* A bucket array of n heads (malloc's below MAP_MIN bytes, mapped from
 * there on, as arr_resize) grown to 2n, its first n kept and the new
 * half filled with fill bytes; NULL (b kept) without memory. A mapped
 * array grows by mremap, so the old and the new one are never both
 * resident, as they were when a new array was filled from the old. */
static uint32_t *buckets_double(uint32_t *b, size_t n, int fill)
{
	uint32_t *nb;

	if (n > SIZE_MAX / 2 / sizeof(*b))
		return NULL;
	nb = arr_resize(b, n * sizeof(*b), 2 * n * sizeof(*b));
	if (nb != NULL)
		memset(nb + n, fill, n * sizeof(*nb));
	return nb;
}

static uint32_t name_hash(const struct prov *p, const uint8_t *w, size_t len)
{
	return (uint32_t)hash_mix64(
	    hash_fnv1a64(p->seed ^ HASH_FNV64_BASIS, w, len));
}

/* name_hash of the whole wire name n stands for: its own bytes, then its
 * zone's (a zone has none). */
static uint32_t kept_hash(const struct prov *p, const struct pname *n)
{
	uint64_t h = hash_fnv1a64(p->seed ^ HASH_FNV64_BASIS, n->wire, n->len);

	if (n->zone != 0) {
		const struct pname *z = zone_at(p, n->zone);

		h = hash_fnv1a64(h, z->wire, z->len);
	}
	return (uint32_t)hash_mix64(h);
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

/* Double t's buckets in place (buckets_double): each chain splits
 * between its bucket and the one a half further on. */
static int ntab_grow(struct prov *p, struct ntab *t)
{
	size_t n = t->mask + 1;
	uint32_t *b = buckets_double(t->b, n, 0);

	if (b == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = b[i], *lo = &b[i], *hi = &b[i + n];

		while (r != 0) {
			struct pname *e = chunk(&t->pool, r);
			uint32_t next = e->next;

			if (kept_hash(p, e) & n) {
				*hi = r;
				hi = &e->next;
			} else {
				*lo = r;
				lo = &e->next;
			}
			r = next;
		}
		*lo = *hi = 0;
	}
	t->b = b;
	t->mask = 2 * n - 1;
	return 0;
}

static int atab_init(struct atab *t, int family)
{
	size_t alen = family == AF_INET6 ? 16 : 4;

	*t = (struct atab){.free = NIL,
			   .family = family,
			   .alen = alen,
			   .esize = sizeof(struct pent) + alen};
	t->b = malloc(MIN_BUCKETS * sizeof(*t->b));
	if (t->b == NULL)
		return -ENOMEM;
	memset(t->b, 0xff, MIN_BUCKETS * sizeof(*t->b));
	t->mask = MIN_BUCKETS - 1;
	return 0;
}

/* Double t's buckets in place, as ntab_grow does. */
static int atab_grow(struct prov *p, struct atab *t)
{
	size_t n = t->mask + 1;
	uint32_t *b = buckets_double(t->b, n, 0xff);

	if (b == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = b[i], *lo = &b[i], *hi = &b[i + n];

		while (k != NIL) {
			struct pent *e = ent(t, k);
			struct netaddr a = ent_addr(t, e);
			uint32_t next = e->next;

			if (addr_hash(p, &a) & n) {
				*hi = k;
				hi = &e->next;
			} else {
				*lo = k;
				lo = &e->next;
			}
			k = next;
		}
		*lo = *hi = NIL;
	}
	t->b = b;
	t->mask = 2 * n - 1;
	return 0;
}

/* The index in addrs of a family's table (checked by the caller:
 * AF_INET or AF_INET6). */
static size_t family_ix(int family)
{
	return family == AF_INET6 ? 1 : 0;
}

static struct pent *ent(const struct atab *t, size_t i)
{
	return (struct pent *)(void *)(t->e + i * t->esize);
}

static struct netaddr ent_addr(const struct atab *t, const struct pent *e)
{
	struct netaddr a = {.family = t->family};

	memcpy(a.bytes, e->bytes, t->alen);
	return a;
}

static bool ent_is(const struct atab *t, const struct pent *e,
		   const struct netaddr *a)
{
	return e->ref != 0 && memcmp(e->bytes, a->bytes, t->alen) == 0;
}

static struct pname *chunk(const struct npool *o, uint32_t r)
{
	return (struct pname *)(void *)(o->base + (size_t)r * NAME_STEP);
}

static struct pname *name_at(const struct prov *p, uint32_t r)
{
	return chunk(&p->names.pool, r);
}

static struct pname *zone_at(const struct prov *p, uint32_t r)
{
	return chunk(&p->zones.pool, r);
}

static struct plinks *links_at(const struct prov *p, const struct pent *e)
{
	return p->dir.s[e->ref >> PREF_SHIFT].l;
}

static uint32_t nlinks(const struct prov *p, const struct pent *e)
{
	if (e->ref & PREF_MANY)
		return links_at(p, e)->n;
	return (e->ref >> PREF_SHIFT) != 0 ? 1 : 0;
}

static uint32_t lref(const struct prov *p, const struct pent *e, uint32_t i)
{
	if (e->ref & PREF_MANY)
		return links_at(p, e)->l[i].name;
	return e->ref >> PREF_SHIFT;
}

static struct pname *lname(const struct prov *p, const struct pent *e,
			   uint32_t i)
{
	return name_at(p, lref(p, e, i));
}

static uint32_t *lexp(const struct prov *p, struct pent *e, uint32_t i)
{
	if (e->ref & PREF_MANY)
		return &links_at(p, e)->l[i].expires;
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
	p->dir.free = NIL;
	p->names.b = calloc(MIN_BUCKETS, sizeof(*p->names.b));
	p->names.mask = MIN_BUCKETS - 1;
	p->zones.b = calloc(MIN_BUCKETS, sizeof(*p->zones.b));
	p->zones.mask = MIN_BUCKETS - 1;
	if (p->names.b == NULL || p->zones.b == NULL ||
	    atab_init(&p->addrs[0], AF_INET) != 0 ||
	    atab_init(&p->addrs[1], AF_INET6) != 0) {
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
	if (p->addrs[0].b != NULL && p->addrs[1].b != NULL &&
	    p->names.b != NULL && p->zones.b != NULL)
		prov_clear(p);
	for (size_t k = 0; k < 2; k++) {
		struct ntab *t = k == 0 ? &p->names : &p->zones;

		pool_drop(&t->pool);
		if (t->b != NULL)
			arr_free(t->b, (t->mask + 1) * sizeof(*t->b));
	}
	for (size_t f = 0; f < 2; f++) {
		arr_free(p->addrs[f].b,
			 (p->addrs[f].mask + 1) * sizeof(*p->addrs[f].b));
		arr_free(p->addrs[f].e, p->addrs[f].cap * p->addrs[f].esize);
	}
	free(p->dir.s);
	free(p);
}

/* Every address dropped, and the entry arrays given back: the sets are
 * empty, so the next peak need not sit on this one's pages. */
void prov_clear(struct prov *p)
{
	for (size_t f = 0; f < 2; f++) {
		struct atab *t = &p->addrs[f];

		for (size_t i = 0; i < t->used; i++) {
			if (ent(t, i)->ref != 0)
				addr_drop(p, t, ent(t, i));
		}
		arr_free(t->e, t->cap * t->esize);
		t->e = NULL;
		t->used = t->cap = 0;
		t->free = NIL;
		memset(t->b, 0xff, (t->mask + 1) * sizeof(*t->b));
	}
	free(p->dir.s); /* every slot went with its address */
	p->dir = (struct pdir){.free = NIL};
	pool_drop(&p->names.pool); /* every name went with its last link */
	pool_drop(&p->zones.pool); /* and every zone with its last name */
}

static size_t chunk_size(size_t len)
{
	size_t n = offsetof(struct pname, wire) + len;

	return (n + NAME_STEP - 1) / NAME_STEP * NAME_STEP;
}

/* size bytes from o's array, 0 when it has not that many. */
static uint32_t pool_cut(struct npool *o, size_t size)
{
	size_t at = o->used;

	if (o->cap - o->used < size)
		return 0;
	o->used += size;
	return (uint32_t)(at / NAME_STEP);
}

/* A chunk of o for len wire bytes, its header cleared; 0 when none can
 * be had. The array may move: chunks are held by reference. */
static uint32_t pool_take(struct npool *o, size_t len)
{
	size_t size = chunk_size(len);
	uint32_t r = o->free[size / NAME_STEP];

	if (r != 0) {
		o->free[size / NAME_STEP] = chunk(o, r)->next;
		o->spare -= size;
	} else if ((r = pool_cut(o, size)) == 0) {
		size_t cap = o->cap != 0 ? o->cap * 2 : POOL_MIN;
		uint8_t *nb;

		if (cap / NAME_STEP > POOL_MAX_REF)
			cap = (size_t)POOL_MAX_REF * NAME_STEP;
		if (cap - o->used < size)
			return 0;
		nb = arr_resize(o->base, o->cap, cap);
		if (nb == NULL)
			return 0;
		o->base = nb;
		o->cap = cap;
		if (o->used == 0)
			o->used = NAME_STEP; /* reference 0 is none */
		r = pool_cut(o, size);
	}
	o->live += size;
	memset(chunk(o, r), 0, offsetof(struct pname, wire));
	return r;
}

static void pool_give(struct npool *o, uint32_t r)
{
	struct pname *n = chunk(o, r);
	size_t size = chunk_size(n->len);

	n->next = o->free[size / NAME_STEP];
	o->free[size / NAME_STEP] = r;
	o->live -= size;
	o->spare += size;
}

/* The array given back: no name lives in it. */
static void pool_drop(struct npool *o)
{
	arr_free(o->base, o->cap);
	*o = (struct npool){0};
}

/* The copy in t's new pool of old's chunk r (made, and chained in t, at
 * its first reference; a name's zone moves with it, from oldz): the old
 * one keeps len 0 and the copy in next. */
static uint32_t chunk_moved(struct prov *p, struct ntab *t,
			    const struct npool *old, uint32_t r,
			    const struct npool *oldz)
{
	struct pname *o = chunk(old, r);
	size_t size = chunk_size(o->len), k;
	struct pname *n;
	uint32_t c;

	if (o->len == 0)
		return o->next;
	c = pool_cut(&t->pool, size);
	n = chunk(&t->pool, c);
	memcpy(n, o, size);
	if (n->zone != 0)
		n->zone = chunk_moved(p, &p->zones, oldz, n->zone, NULL);
	k = kept_hash(p, n) & t->mask;
	n->next = t->b[k];
	t->b[k] = c;
	o->len = 0;
	o->next = c;
	return c;
}

/* When the free chunks of both pools hold more than the live ones, at
 * least COMPACT_SPARE, and at least COMPACT_PER_ENTRY bytes for each
 * address entry the compaction walks: its cost, one pass over the
 * entries, is paid for by that many bytes given back (a few names that
 * hold many addresses do not make it run at every few frees). */
static bool compact_due(const struct prov *p)
{
	size_t spare = p->names.pool.spare + p->zones.pool.spare;
	size_t live = p->names.pool.live + p->zones.pool.live;

	return spare > live && spare >= COMPACT_SPARE &&
	       spare / COMPACT_PER_ENTRY >= p->addrs[0].used + p->addrs[1].used;
}

/* e's links pointed at their names' copies in the new pool (and the
 * names at their zones' copies). */
static void ent_moved(struct prov *p, const struct npool *old,
		      const struct npool *oldz, struct pent *e)
{
	uint32_t n = nlinks(p, e);
	struct plinks *L;

	if (e->ref == 0 || n == 0)
		return;
	if (!(e->ref & PREF_MANY)) {
		uint32_t c =
		    chunk_moved(p, &p->names, old, e->ref >> PREF_SHIFT, oldz);

		e->ref = (c << PREF_SHIFT) | (e->ref & PREF_FLAGS);
		return;
	}
	L = links_at(p, e);
	for (uint32_t k = 0; k < n; k++)
		L->l[k].name =
		    chunk_moved(p, &p->names, old, L->l[k].name, oldz);
}

/* base, cap bytes, as t's new pool for the live chunks it has; t's
 * chains emptied, to be made again as the chunks move. */
static void pool_install(struct ntab *t, uint8_t *base, size_t cap)
{
	t->pool = (struct npool){
	    .base = base, .cap = cap, .used = NAME_STEP, .live = t->pool.live};
	memset(t->b, 0, (t->mask + 1) * sizeof(*t->b));
}

/* The live names and zones copied into arrays of their size, every link,
 * name and chain pointed at the copies, the old arrays given back.
 * Nothing changes when those arrays cannot be had. */
static void names_compact(struct prov *p)
{
	struct npool old = p->names.pool, oldz = p->zones.pool;
	size_t cap = old.live + NAME_STEP, zcap = oldz.live + NAME_STEP;
	uint8_t *base = arr_resize(NULL, 0, cap);
	uint8_t *zbase = arr_resize(NULL, 0, zcap);

	if (base == NULL || zbase == NULL) {
		if (base != NULL)
			arr_free(base, cap);
		if (zbase != NULL)
			arr_free(zbase, zcap);
		return;
	}
	pool_install(&p->names, base, cap);
	pool_install(&p->zones, zbase, zcap);
	for (size_t f = 0; f < 2; f++) {
		const struct atab *t = &p->addrs[f];

		for (size_t i = 0; i < t->used; i++)
			ent_moved(p, &old, &oldz, ent(t, i));
	}
	pool_drop(&old);
	pool_drop(&oldz);
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

/* The bytes of w's first label when it has two labels or more (the
 * rest is its zone), else len: it is kept whole. */
static size_t first_label(const uint8_t *w, size_t len)
{
	size_t l = (size_t)w[0] + 1;

	return w[0] != 0 && l < len && w[l] != 0 ? l : len;
}

/* Is n (a name) the wire name w? */
static bool name_eq(const struct prov *p, const struct pname *n,
		    const uint8_t *w, size_t len)
{
	const struct pname *z;

	if (n->len > len || memcmp(n->wire, w, n->len) != 0)
		return false;
	if (n->zone == 0)
		return n->len == len;
	z = zone_at(p, n->zone);
	return z->len == len - n->len &&
	       memcmp(z->wire, w + n->len, z->len) == 0;
}

/* The whole wire name n stands for, into out; returns its length. */
static size_t name_wire(const struct prov *p, const struct pname *n,
			uint8_t out[NAME_MAX_WIRE])
{
	const struct pname *z;

	memcpy(out, n->wire, n->len);
	if (n->zone == 0)
		return n->len;
	z = zone_at(p, n->zone);
	memcpy(out + n->len, z->wire, z->len);
	return (size_t)n->len + z->len;
}

/* The stored name's reference (its count not raised), created if new,
 * with its zone; 0 when out of memory. */
static uint32_t name_get(struct prov *p, const uint8_t *w, size_t len)
{
	uint32_t h = name_hash(p, w, len), r, z = 0;
	size_t l = first_label(w, len);
	struct pname *n;

	for (r = p->names.b[h & p->names.mask]; r != 0;
	     r = name_at(p, r)->next) {
		if (name_eq(p, name_at(p, r), w, len))
			return r;
	}
	if (p->names.count >= PROV_LOAD * (p->names.mask + 1) &&
	    ntab_grow(p, &p->names) != 0)
		return 0;
	if (l < len && (z = zone_get(p, w + l, len - l)) == 0)
		return 0;
	r = pool_take(&p->names.pool, l);
	if (r == 0) {
		if (z != 0)
			zone_put(p, z);
		return 0;
	}
	n = name_at(p, r);
	n->len = (uint8_t)l;
	memcpy(n->wire, w, l);
	n->zone = z;
	n->next = p->names.b[h & p->names.mask];
	p->names.b[h & p->names.mask] = r;
	p->names.count++;
	return r;
}

/* The stored zone's reference, created if new, its count raised (one
 * more name under it); 0 when out of memory. */
static uint32_t zone_get(struct prov *p, const uint8_t *w, size_t len)
{
	uint32_t h = name_hash(p, w, len), r;
	struct pname *z;

	for (r = p->zones.b[h & p->zones.mask]; r != 0;
	     r = zone_at(p, r)->next) {
		z = zone_at(p, r);
		if (z->len == len && memcmp(z->wire, w, len) == 0) {
			z->refs++;
			return r;
		}
	}
	if (p->zones.count >= PROV_LOAD * (p->zones.mask + 1) &&
	    ntab_grow(p, &p->zones) != 0)
		return 0;
	r = pool_take(&p->zones.pool, len);
	if (r == 0)
		return 0;
	z = zone_at(p, r);
	z->len = (uint8_t)len;
	z->refs = 1;
	memcpy(z->wire, w, len);
	z->next = p->zones.b[h & p->zones.mask];
	p->zones.b[h & p->zones.mask] = r;
	p->zones.count++;
	return r;
}

bool prov_answered(const struct prov *p, const uint8_t *name, size_t len,
		   const struct netaddr *a, uint64_t now)
{
	struct pent *e;

	if (a->family != AF_INET && a->family != AF_INET6)
		return false;
	e = (struct pent *)addr_find(p, &p->addrs[family_ix(a->family)], a);
	for (uint32_t i = 0; e != NULL && i < nlinks(p, e); i++) {
		const struct pname *n = lname(p, e, i);

		if (!n->gone && *lexp(p, e, i) > now &&
		    name_eq(p, n, name, len))
			return true;
	}
	return false;
}

/* r, a chunk of t, taken out of its chain and given back to t's pool. */
static void unchain(const struct prov *p, struct ntab *t, uint32_t r)
{
	struct pname *n = chunk(&t->pool, r);
	uint32_t *pp = &t->b[kept_hash(p, n) & t->mask];

	while (*pp != r)
		pp = &chunk(&t->pool, *pp)->next;
	*pp = n->next;
	t->count--;
	pool_give(&t->pool, r);
}

/* One link fewer points at name r: free it with the last (and its zone
 * with the zone's last name). */
static void name_put(struct prov *p, uint32_t r)
{
	struct pname *n = name_at(p, r);
	uint32_t z = n->zone;

	if (--n->refs > 0)
		return;
	unchain(p, &p->names, r);
	if (z != 0)
		zone_put(p, z);
}

/* One name fewer is under zone r: free it with the last. */
static void zone_put(struct prov *p, uint32_t r)
{
	if (--zone_at(p, r)->refs == 0)
		unchain(p, &p->zones, r);
}

static const struct pent *addr_find(const struct prov *p, const struct atab *t,
				    const struct netaddr *a)
{
	uint32_t i = t->b[addr_hash(p, a) & t->mask];

	while (i != NIL && !ent_is(t, ent(t, i), a))
		i = ent(t, i)->next;
	return i != NIL ? ent(t, i) : NULL;
}

/* a's entry in t, its family's table, created (with no link) if new. */
static struct pent *addr_get(struct prov *p, struct atab *t,
			     const struct netaddr *a)
{
	struct pent *e = (struct pent *)addr_find(p, t, a);
	uint32_t i;
	size_t k;

	if (e != NULL)
		return e;
	if (t->count >= PROV_LOAD * (t->mask + 1) && atab_grow(p, t) != 0)
		return NULL;
	if (t->free == NIL && t->used == t->cap) {
		size_t cap = t->cap != 0 ? t->cap * 2 : MIN_ENTRIES;
		uint8_t *ne =
		    arr_resize(t->e, t->cap * t->esize, cap * t->esize);

		if (ne == NULL)
			return NULL;
		t->e = ne;
		t->cap = cap;
	}
	if (t->free != NIL) {
		i = t->free;
		t->free = ent(t, i)->next;
	} else {
		i = (uint32_t)t->used++;
	}
	e = ent(t, i);
	memset(e, 0, t->esize);
	memcpy(e->bytes, a->bytes, t->alen);
	e->ref = PREF_USED;
	k = addr_hash(p, a) & t->mask;
	e->next = t->b[k];
	t->b[k] = i;
	t->count++;
	return e;
}

static void addr_drop(struct prov *p, struct atab *t, struct pent *a)
{
	struct netaddr addr = ent_addr(t, a);
	uint32_t i = (uint32_t)(((uint8_t *)a - t->e) / t->esize);
	uint32_t *pp = &t->b[addr_hash(p, &addr) & t->mask];
	uint32_t n = nlinks(p, a);

	for (uint32_t k = 0; k < n; k++)
		name_put(p, lref(p, a, k));
	p->links -= n;
	while (*pp != i)
		pp = &ent(t, *pp)->next;
	*pp = a->next;
	t->count--;
	if (a->ref & PREF_MANY) {
		free(links_at(p, a));
		dir_give(p, a->ref >> PREF_SHIFT);
	}
	a->ref = 0;
	a->next = t->free;
	t->free = i;
}

/* Drop a's expired links (and, with drop_gone, those of names judged
 * gone); returns the links left. */
static size_t addr_prune(struct prov *p, struct pent *a, uint64_t now,
			 bool drop_gone)
{
	uint32_t n = nlinks(p, a), k = 0;
	struct plinks *L;

	if (!(a->ref & PREF_MANY)) {
		if (n == 0 ||
		    (a->expires > now && !(drop_gone && lname(p, a, 0)->gone)))
			return n;
		name_put(p, a->ref >> PREF_SHIFT);
		p->links--;
		a->ref &= PREF_FLAGS;
		return 0;
	}
	L = links_at(p, a);
	for (uint32_t i = 0; i < n; i++) {
		struct plink *l = &L->l[i];

		if (l->expires > now &&
		    !(drop_gone && name_at(p, l->name)->gone)) {
			L->l[k++] = *l;
			continue;
		}
		name_put(p, l->name);
		p->links--;
	}
	L->n = k;
	return k;
}

/* A directory slot for L; -ENOMEM when the directory cannot grow. */
static int dir_take(struct prov *p, struct plinks *L, uint32_t *slot)
{
	struct pdir *d = &p->dir;

	if (d->free == NIL && d->used == d->cap) {
		uint32_t cap = d->cap != 0 ? d->cap * 2 : 64;
		union pslot *ns = reallocarray(d->s, cap, sizeof(*ns));

		if (ns == NULL)
			return -ENOMEM;
		d->s = ns;
		d->cap = cap;
	}
	if (d->free != NIL) {
		*slot = d->free;
		d->free = d->s[*slot].next;
	} else {
		*slot = d->used++;
	}
	d->s[*slot].l = L;
	return 0;
}

static void dir_give(struct prov *p, uint32_t slot)
{
	p->dir.s[slot].next = p->dir.free;
	p->dir.free = slot;
}

static int link_add(struct prov *p, struct pent *a, uint32_t n,
		    uint32_t expires)
{
	uint32_t have = nlinks(p, a), slot;
	struct plinks *L;

	if (have == 0 && !(a->ref & PREF_MANY)) {
		a->ref |= n << PREF_SHIFT;
		a->expires = expires;
	} else {
		if (!(a->ref & PREF_MANY)) {
			L = malloc(sizeof(*L) + 2 * sizeof(L->l[0]));
			if (L == NULL)
				return -ENOMEM;
			if (dir_take(p, L, &slot) != 0) {
				free(L);
				return -ENOMEM;
			}
			L->n = 1;
			L->cap = 2;
			L->l[0] =
			    (struct plink){a->ref >> PREF_SHIFT, a->expires};
			a->ref = (slot << PREF_SHIFT) | PREF_USED | PREF_MANY;
		}
		L = links_at(p, a);
		if (L->n == L->cap) {
			uint32_t cap = L->cap * 2;
			struct plinks *nl =
			    realloc(L, sizeof(*L) + cap * sizeof(L->l[0]));

			if (nl == NULL)
				return -ENOMEM;
			nl->cap = cap;
			L = nl;
			p->dir.s[a->ref >> PREF_SHIFT].l = L;
		}
		L->l[L->n++] = (struct plink){n, expires};
	}
	name_at(p, n)->refs++;
	p->links++;
	return 0;
}

int prov_note(struct prov *p, const uint8_t *name, size_t len,
	      const struct netaddr *a, uint64_t expires, uint64_t now)
{
	uint32_t exp = expires > UINT32_MAX ? UINT32_MAX : (uint32_t)expires;
	struct atab *t;
	struct pent *e;
	uint32_t n;
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
	t = &p->addrs[family_ix(a->family)];
	e = addr_get(p, t, a);
	if (e == NULL)
		return -ENOMEM;
	(void)addr_prune(p, e, now, false);
	for (uint32_t i = 0; i < nlinks(p, e); i++) {
		const struct pname *l = lname(p, e, i);

		if (name_eq(p, l, name, len)) {
			if (exp > *lexp(p, e, i))
				*lexp(p, e, i) = exp;
			return 0;
		}
	}
	rc = -ENOSPC;
	if (p->links >= p->max)
		goto fail;
	rc = -ENOMEM;
	n = name_get(p, name, len);
	if (n == 0)
		goto fail;
	if ((rc = link_add(p, e, n, exp)) != 0) {
		if (name_at(p, n)->refs == 0) {
			name_at(p, n)->refs = 1;
			name_put(p, n);
		}
		goto fail;
	}
	return 0;
fail:
	if (nlinks(p, e) == 0)
		addr_drop(p, t, e);
	return rc;
}

static void sweep(struct prov *p, uint64_t now, bool drop_gone)
{
	for (size_t f = 0; f < 2; f++) {
		struct atab *t = &p->addrs[f];

		for (size_t i = 0; i < t->used; i++) {
			struct pent *a = ent(t, i);

			if (a->ref != 0 &&
			    addr_prune(p, a, now, drop_gone) == 0)
				addr_drop(p, t, a);
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
		for (uint32_t r = p->names.b[i]; r != 0;
		     r = name_at(p, r)->next) {
			struct pname *n = name_at(p, r);
			uint8_t w[NAME_MAX_WIRE];

			n->gone = !allowed(aarg, w, name_wire(p, n, w));
		}
	}
	for (size_t f = 0; f < 2; f++) {
		const struct atab *t = &p->addrs[f];

		for (size_t i = 0; i < t->used; i++) {
			struct pent *a = ent(t, i);

			if (a->ref != 0 &&
			    judge_addr(p, t, a, sh, now, evict, earg))
				evicted++;
		}
	}
	sweep(p, now, true);
	if (compact_due(p))
		names_compact(p);
	return evicted;
}

/* fn for each link of e live at now; returns how many. */
static size_t walk_links(const struct prov *p, const struct atab *t,
			 const struct pent *e, prov_walk_fn fn, void *arg,
			 uint64_t now)
{
	struct netaddr a = ent_addr(t, e);
	uint8_t w[NAME_MAX_WIRE];
	size_t n = 0;

	for (uint32_t i = 0; i < nlinks(p, e); i++) {
		uint32_t exp = *lexp(p, (struct pent *)e, i);

		if (exp <= now)
			continue;
		n++;
		if (fn != NULL)
			fn(arg, w, name_wire(p, lname(p, e, i), w), &a,
			   exp - now);
	}
	return n;
}

size_t prov_links_of(const struct prov *p, const struct netaddr *a,
		     prov_walk_fn fn, void *arg, uint64_t now)
{
	const struct atab *t;
	const struct pent *e;

	if (a->family != AF_INET && a->family != AF_INET6)
		return 0;
	t = &p->addrs[family_ix(a->family)];
	e = addr_find(p, t, a);
	return e != NULL ? walk_links(p, t, e, fn, arg, now) : 0;
}

uint64_t prov_expires(const struct prov *p, const struct netaddr *a,
		      uint64_t now)
{
	const struct atab *t;
	const struct pent *e;
	uint64_t latest = 0;

	if (a->family != AF_INET && a->family != AF_INET6)
		return 0;
	t = &p->addrs[family_ix(a->family)];
	e = addr_find(p, t, a);
	for (uint32_t i = 0; e != NULL && i < nlinks(p, e); i++) {
		uint32_t exp = *lexp(p, (struct pent *)e, i);

		if (exp > now && exp > latest)
			latest = exp;
	}
	return latest;
}

/* Evict a when sh->refused refuses it or only names no longer allowed
 * hold it; else, with sh->fn, when its longest live link is a removed
 * name's or beyond sh->cap, cut the kept links to the cap and say how
 * long it should live now. True when a was evicted. */
static bool judge_addr(const struct prov *p, const struct atab *t,
		       struct pent *a, const struct prov_shorten *sh,
		       uint64_t now, prov_evict_fn evict, void *earg)
{
	uint64_t had = 0, keep = 0, cap = sh->cap ? sh->cap : UINT32_MAX;
	uint32_t n = nlinks(p, a);
	struct netaddr addr = ent_addr(t, a);

	if (n > 0 && sh->refused != NULL && sh->refused(sh->arg, &addr)) {
		for (uint32_t k = 0; k < n; k++)
			*lexp(p, a, k) = 0; /* the sweep drops the links */
		evict(earg, &addr);
		return true;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t exp = *lexp(p, a, k);

		if (exp <= now)
			continue;
		if (exp > had)
			had = exp;
		if (!lname(p, a, k)->gone && exp > keep)
			keep = exp;
	}
	if (keep == 0) {
		for (uint32_t k = 0; k < n; k++) {
			if (lname(p, a, k)->gone) {
				evict(earg, &addr);
				return true;
			}
		}
		return false;
	}
	if (sh->fn == NULL || (keep >= had && keep <= cap))
		return false;
	for (uint32_t k = 0; k < n; k++) {
		if (*lexp(p, a, k) > cap)
			*lexp(p, a, k) = (uint32_t)cap;
	}
	sh->fn(sh->arg, &addr, keep < cap ? keep : cap);
	return false;
}

size_t prov_addresses(const struct prov *p)
{
	return p->addrs[0].count + p->addrs[1].count;
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
	for (size_t f = 0; f < 2; f++) {
		const struct atab *t = &p->addrs[f];

		for (size_t i = 0; i < t->used; i++) {
			if (ent(t, i)->ref != 0)
				(void)walk_links(p, t, ent(t, i), fn, arg, now);
		}
	}
}
