// SPDX-License-Identifier: GPL-2.0-or-later
/* expiry: the expiry map of the sets (see expiry.h for the contract).
 *
 * Per family two open-addressing tables with linear probing: the entries
 * (the address, the acked expiry and when the ack came: 12 bytes a slot
 * for IPv4, 24 for IPv6) and the adds in flight that reach beyond the
 * acked expiry (the address and that expiry: 8 and 20 bytes). An add in
 * flight that ends no later than the acked entry changes nothing a
 * caller can see (the acked expiry only grows while it lives), so it is
 * not kept: the second table holds only the adds not yet acked, a few
 * thousand at most under load, and most entries pay 8 bytes of times, not
 * 12. Every address of the second table has an entry in the first, and
 * an entry lives while either of its expiries lies in the future.
 *
 * The entry table of a family is SEGS tables, the hash's low bits
 * choosing one, so that a growth holds an old and a new copy of one
 * sixteenth of it, not of all of it. A table has any number of slots (an
 * index is the hash's top bits scaled to the size, not masked), at most
 * 80 % full, and grows by a quarter from 8 slots: it stays 64-80 % full.
 * A table of a page or more is mapped on its own and fills its last
 * page, so the one a growth replaces goes back to the kernel at once
 * (from the heap, the tables left behind by growing stayed resident).
 * 262,144 addresses took 45 bytes each resident and 59 at the peak of a
 * doubling; now 27 and 27 (bench_expiry). Times are
 * monotonic seconds, which fit 32 bits for 136 years of uptime. An entry
 * slot whose acked expiry and ack time are both 0 is empty (a stored
 * entry without a live ack keeps NEVER as its ack time); a flight slot
 * whose expiry is 0 is empty.
 *
 * Deletion shifts the following cluster back instead of leaving
 * tombstones, so a table never degrades. The hash is seeded from
 * getrandom(): the keys come from upstream answers, and an unseeded hash
 * would let an attacker build long probe chains. Expired entries are
 * dropped when a lookup meets them, and by a full sweep when the map is
 * full; min_exp (a lower bound of every stored expiry) keeps the sweep
 * from running again before anything can have expired, so a full map of
 * live entries costs O(1) per refusal.
 *
 * With a window (expiry_new_window) an ack's claim ends window seconds
 * after it came, or at its expiry if that is sooner: every lookup, the
 * sweep and min_exp take that end instead of the expiry, so the map holds
 * only the recent acks and the adds in flight. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "sets/expiry.h"
#include "base/hash.h"

#define EXPIRY_MAX_ENTRIES (1u << 26)
#define MIN_SLOTS	   8
#define SEGS		   16 /* an entry table is this many, by hash */
#define LOAD_NUM	   4  /* grow past LOAD_NUM/LOAD_DEN full */
#define LOAD_DEN	   5
#define GROW_DIV	   4	      /* grow by size / GROW_DIV */
#define NEVER		   UINT32_MAX /* ack time of an entry not acked */
#define NO_SLOT		   SIZE_MAX
#define PAGE		   4096u
#define MAP_MIN		   PAGE /* a table this large is mapped */

/* The times after the key of an entry slot. */
struct acked {
	uint32_t expires;
	uint32_t at; /* when the last ack arrived; NEVER: none live */
};

struct table {
	uint8_t *slots;
	size_t size; /* slots */
	size_t count;
	size_t key_len; /* 4 or 16 */
	size_t val_len; /* sizeof(struct acked), or 4 for a flight */
	size_t slot_size;
	uint64_t seed; /* the map's, mixed with the key length */
	size_t *total; /* the family's count of entries, or NULL */
};

struct expiry_map {
	struct table t[2][SEGS]; /* entries: IPv4, IPv6 */
	struct table flight[2];	 /* adds in flight beyond the acked expiry */
	size_t n[2];		 /* entries per family */
	size_t max;		 /* bound on entries, both families */
	uint64_t min_exp;
	uint64_t seed;
	uint32_t window; /* an ack's claim lasts this long; 0: its expiry */
};

static int fam_of(const struct netaddr *a);
static uint8_t *slot_at(const struct table *t, size_t i);
static uint64_t key_hash(const struct table *t, const uint8_t *key);
static size_t home_of(const struct expiry_map *m, const struct table *t,
		      const uint8_t *key);
static struct table *seg_of(struct expiry_map *m, int fam, const uint8_t *key);
static bool slot_empty(const struct table *t, const uint8_t *slot);
static bool key_is(const struct table *t, const uint8_t *slot,
		   const uint8_t *key);
static size_t slot_find(const struct expiry_map *m, const struct table *t,
			const uint8_t *key);
static void slot_delete(struct expiry_map *m, struct table *t, size_t i);
static uint8_t *slot_insert(struct expiry_map *m, struct table *t,
			    const uint8_t *key);
static uint8_t *slots_new(size_t n, size_t slot_size);
static void slots_free(uint8_t *slots, size_t n, size_t slot_size);
static int table_init(struct table *t, size_t key_len, size_t val_len);
static int grow(struct expiry_map *m, struct table *t);
static struct table *table_at(struct expiry_map *m, int k);
static struct acked *acked_of(const struct table *t, uint8_t *slot);
static uint32_t *flight_of(const struct table *t, uint8_t *slot);
static uint32_t flight_get(struct expiry_map *m, int fam, const uint8_t *key,
			   uint64_t now, size_t *at);
static void flight_drop(struct expiry_map *m, int fam, const uint8_t *key);
static bool entry_live(struct expiry_map *m, int fam, const struct table *t,
		       uint8_t *slot, uint64_t now, uint32_t *fl, size_t *fi,
		       uint64_t *latest);
static struct acked *find(struct expiry_map *m, int fam, const uint8_t *key,
			  uint64_t now, uint32_t *fl, size_t *fi);
static void sweep(struct expiry_map *m, uint64_t now);
static uint32_t secs(uint64_t t);
static int note(struct expiry_map *m, const struct netaddr *a, uint64_t expires,
		uint64_t now, bool acked);

static uint32_t secs(uint64_t t)
{
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static int fam_of(const struct netaddr *a)
{
	if (a->family == AF_INET)
		return 0;
	if (a->family == AF_INET6)
		return 1;
	return -1;
}

static uint8_t *slot_at(const struct table *t, size_t i)
{
	return t->slots + i * t->slot_size;
}

static struct acked *acked_of(const struct table *t, uint8_t *slot)
{
	return (struct acked *)(void *)(slot + t->key_len);
}

static uint32_t *flight_of(const struct table *t, uint8_t *slot)
{
	return (uint32_t *)(void *)(slot + t->key_len);
}

/* The key's first slot: the hash's top 32 bits scaled to the size. */
static uint64_t key_hash(const struct table *t, const uint8_t *key)
{
	uint64_t w0 = 0, w1;

	if (t->key_len == 4) {
		memcpy(&w0, key, 4);
		return hash_mix64(t->seed ^ w0);
	}
	memcpy(&w0, key, 8);
	memcpy(&w1, key + 8, 8);
	return hash_mix64(hash_mix64(t->seed ^ w0) ^ w1);
}

/* The key's first slot: the hash's top 32 bits scaled to the size (its
 * low bits chose the segment). */
static size_t home_of(const struct expiry_map *m, const struct table *t,
		      const uint8_t *key)
{
	(void)m;
	return (size_t)(((key_hash(t, key) >> 32) * (uint64_t)t->size) >> 32);
}

/* The segment of the entry table of fam that holds key. */
static struct table *seg_of(struct expiry_map *m, int fam, const uint8_t *key)
{
	return &m->t[fam][key_hash(&m->t[fam][0], key) % SEGS];
}

/* Constant sizes, so that the compiler compares in place. */
static bool slot_empty(const struct table *t, const uint8_t *slot)
{
	uint64_t v8;
	uint32_t v4;

	if (t->val_len == sizeof(v4)) {
		memcpy(&v4, slot + t->key_len, sizeof(v4));
		return v4 == 0;
	}
	memcpy(&v8, slot + t->key_len, sizeof(v8));
	return v8 == 0;
}

static bool key_is(const struct table *t, const uint8_t *slot,
		   const uint8_t *key)
{
	if (t->key_len == 4)
		return memcmp(slot, key, 4) == 0;
	return memcmp(slot, key, 16) == 0;
}

static size_t slot_find(const struct expiry_map *m, const struct table *t,
			const uint8_t *key)
{
	size_t i = home_of(m, t, key);

	while (!slot_empty(t, slot_at(t, i))) {
		if (key_is(t, slot_at(t, i), key))
			return i;
		i = i + 1 == t->size ? 0 : i + 1;
	}
	return NO_SLOT;
}

/* Backward-shift deletion: move every later member of the cluster whose
 * home slot does not lie cyclically in (i, j] into the hole. */
static void slot_delete(struct expiry_map *m, struct table *t, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = j + 1 == t->size ? 0 : j + 1;
		if (slot_empty(t, slot_at(t, j)))
			break;
		home = home_of(m, t, slot_at(t, j));
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		memcpy(slot_at(t, i), slot_at(t, j), t->slot_size);
		i = j;
	}
	memset(slot_at(t, i), 0, t->slot_size);
	t->count--;
	if (t->total != NULL)
		(*t->total)--;
}

/* A new slot holding key (not in t yet), its value still zero: the
 * caller makes it non-empty at once. NULL on ENOMEM. */
static uint8_t *slot_insert(struct expiry_map *m, struct table *t,
			    const uint8_t *key)
{
	uint8_t *s;
	size_t i;

	if ((t->count + 1) * LOAD_DEN > t->size * LOAD_NUM && grow(m, t) != 0)
		return NULL;
	i = home_of(m, t, key);
	while (!slot_empty(t, slot_at(t, i)))
		i = i + 1 == t->size ? 0 : i + 1;
	s = slot_at(t, i);
	memcpy(s, key, t->key_len);
	t->count++;
	if (t->total != NULL)
		(*t->total)++;
	return s;
}

/* n zeroed slots: mapped from MAP_MIN bytes on (see the top). */
static uint8_t *slots_new(size_t n, size_t slot_size)
{
	void *p;

	if (n > SIZE_MAX / slot_size)
		return NULL;
	if (n * slot_size < MAP_MIN)
		return calloc(n, slot_size);
	p = mmap(NULL, n * slot_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p != MAP_FAILED ? p : NULL;
}

static void slots_free(uint8_t *slots, size_t n, size_t slot_size)
{
	if (n * slot_size < MAP_MIN)
		free(slots);
	else
		munmap(slots, n * slot_size);
}

static int table_init(struct table *t, size_t key_len, size_t val_len)
{
	t->key_len = key_len;
	t->val_len = val_len;
	t->slot_size = key_len + val_len;
	t->size = MIN_SLOTS;
	t->count = 0;
	t->slots = slots_new(MIN_SLOTS, t->slot_size);
	return t->slots != NULL ? 0 : -ENOMEM;
}

/* A quarter more slots, every entry placed again. */
static int grow(struct expiry_map *m, struct table *t)
{
	size_t old_size = t->size, size = old_size + old_size / GROW_DIV;
	uint8_t *old = t->slots, *slots;

	/* A mapped table fills its last page. */
	if (size * t->slot_size >= MAP_MIN)
		size = (size * t->slot_size + PAGE - 1) / PAGE * PAGE /
		       t->slot_size;
	slots = slots_new(size, t->slot_size);
	if (slots == NULL)
		return -ENOMEM;
	t->slots = slots;
	t->size = size;
	for (size_t i = 0; i < old_size; i++) {
		uint8_t *s = old + i * t->slot_size;
		size_t j;

		if (slot_empty(t, s))
			continue;
		j = home_of(m, t, s);
		while (!slot_empty(t, slot_at(t, j)))
			j = j + 1 == size ? 0 : j + 1;
		memcpy(slot_at(t, j), s, t->slot_size);
	}
	slots_free(old, old_size, t->slot_size);
	return 0;
}

/* The expiry of key's add in flight beyond its ack and its slot in *at,
 * or 0 and NO_SLOT when none or past at now (a past one is dropped). */
static uint32_t flight_get(struct expiry_map *m, int fam, const uint8_t *key,
			   uint64_t now, size_t *at)
{
	struct table *f = &m->flight[fam];
	size_t i;
	uint32_t v;

	*at = NO_SLOT;
	if (f->count == 0 || (i = slot_find(m, f, key)) == NO_SLOT)
		return 0;
	v = *flight_of(f, slot_at(f, i));
	if (v > now) {
		*at = i;
		return v;
	}
	slot_delete(m, f, i);
	return 0;
}

static void flight_drop(struct expiry_map *m, int fam, const uint8_t *key)
{
	struct table *f = &m->flight[fam];
	size_t i;

	if (f->count > 0 && (i = slot_find(m, f, key)) != NO_SLOT)
		slot_delete(m, f, i);
}

/* Until when ak's ack claims anything: its expiry, or with a window
 * the earlier of that and the window's end after the ack. */
static uint64_t claim_end(const struct expiry_map *m, const struct acked *ak)
{
	uint64_t end;

	if (m->window == 0 || ak->at == NEVER)
		return m->window == 0 ? ak->expires : 0;
	end = (uint64_t)ak->at + m->window;
	return end < ak->expires ? end : ak->expires;
}

/* Does the entry at slot of t claim anything after now? *fl and *fi: its
 * add in flight (flight_get), *latest: the later of the two claims. */
static bool entry_live(struct expiry_map *m, int fam, const struct table *t,
		       uint8_t *slot, uint64_t now, uint32_t *fl, size_t *fi,
		       uint64_t *latest)
{
	uint64_t ack = claim_end(m, acked_of(t, slot));

	*fl = flight_get(m, fam, slot, now, fi);
	*latest = ack > *fl ? ack : *fl;
	return *latest > now;
}

/* The live entry of key and its add in flight in *fl and *fi
 * (flight_get), or NULL; an expired one met on the way is dropped. */
static struct acked *find(struct expiry_map *m, int fam, const uint8_t *key,
			  uint64_t now, uint32_t *fl, size_t *fi)
{
	struct table *t = seg_of(m, fam, key);
	size_t i = slot_find(m, t, key);
	uint64_t latest;

	*fl = 0;
	*fi = NO_SLOT;
	if (i == NO_SLOT)
		return NULL;
	if (entry_live(m, fam, t, slot_at(t, i), now, fl, fi, &latest))
		return acked_of(t, slot_at(t, i));
	slot_delete(m, t, i);
	return NULL;
}

static void sweep(struct expiry_map *m, uint64_t now)
{
	uint64_t min_exp = UINT64_MAX;

	for (int k = 0; k < 2 * SEGS; k++) {
		struct table *t = &m->t[k / SEGS][k % SEGS];
		size_t i = 0;

		while (i < t->size) {
			uint8_t *s = slot_at(t, i);
			uint64_t exp;
			uint32_t fl;
			size_t fi;

			if (slot_empty(t, s)) {
				i++;
				continue;
			}
			if (!entry_live(m, k / SEGS, t, s, now, &fl, &fi,
					&exp)) {
				/* Something else moves into i: look again. */
				slot_delete(m, t, i);
				continue;
			}
			if (exp < min_exp)
				min_exp = exp;
			i++;
		}
	}
	m->min_exp = min_exp;
}

struct expiry_map *expiry_new(size_t max)
{
	return expiry_new_window(max, 0);
}

struct expiry_map *expiry_new_window(size_t max, unsigned window)
{
	struct expiry_map *m;
	int rc = 0;

	if (max == 0 || max > EXPIRY_MAX_ENTRIES)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	(void)hash_seed(&m->seed, sizeof(m->seed)); /* weak is still usable */
	for (int k = 0; k < 2; k++) {
		size_t key_len = k == 0 ? 4 : 16;
		uint64_t seed = hash_mix64(m->seed ^ key_len);

		for (int g = 0; rc == 0 && g < SEGS; g++) {
			rc = table_init(&m->t[k][g], key_len,
					sizeof(struct acked));
			m->t[k][g].seed = seed;
			m->t[k][g].total = &m->n[k];
		}
		if (rc == 0)
			rc = table_init(&m->flight[k], key_len,
					sizeof(uint32_t));
		m->flight[k].seed = seed;
	}
	if (rc != 0) {
		expiry_free(m);
		return NULL;
	}
	m->max = max;
	m->min_exp = UINT64_MAX;
	m->window = window;
	return m;
}

/* Every table of m, entry segments first. */
static struct table *table_at(struct expiry_map *m, int k)
{
	return k < 2 * SEGS ? &m->t[k / SEGS][k % SEGS]
			    : &m->flight[k - 2 * SEGS];
}

void expiry_free(struct expiry_map *m)
{
	if (m == NULL)
		return;
	for (int k = 0; k < 2 * SEGS + 2; k++) {
		struct table *t = table_at(m, k);

		if (t->slots != NULL)
			slots_free(t->slots, t->size, t->slot_size);
	}
	free(m);
}

void expiry_get(struct expiry_map *m, const struct netaddr *a, uint64_t now,
		uint64_t *acked, uint64_t *inflight, uint64_t *acked_at)
{
	int fam = fam_of(a);
	uint32_t fl = 0;
	size_t fi;
	const struct acked *ak =
	    fam >= 0 ? find(m, fam, a->bytes, now, &fl, &fi) : NULL;
	bool live = ak != NULL && claim_end(m, ak) > now;

	if (acked != NULL)
		*acked = live ? ak->expires : 0;
	if (inflight != NULL)
		*inflight = fl;
	if (acked_at != NULL)
		*acked_at = live ? ak->at : 0;
}

bool expiry_covers(struct expiry_map *m, const struct netaddr *a, uint64_t want,
		   uint64_t now, unsigned fresh, uint64_t *send)
{
	uint64_t acked, inflight, acked_at;

	expiry_get(m, a, now, &acked, &inflight, &acked_at);
	*send = want;
	if (acked >= want && acked_at + fresh > now)
		return true;
	if (acked > *send)
		*send = acked;
	if (inflight > *send)
		*send = inflight;
	return false;
}

static int note(struct expiry_map *m, const struct netaddr *a, uint64_t expires,
		uint64_t now, bool acked)
{
	int fam = fam_of(a);
	struct table *f, *t;
	struct acked *ak;
	uint32_t fl;
	size_t fi;
	uint8_t *s;

	if (fam < 0 || expires <= now)
		return -EINVAL;
	f = &m->flight[fam];
	ak = find(m, fam, a->bytes, now, &fl, &fi);
	if (ak == NULL) {
		if (expiry_count(m) >= m->max && now >= m->min_exp)
			sweep(m, now);
		if (expiry_count(m) >= m->max)
			return -ENOSPC;
		t = seg_of(m, fam, a->bytes);
		if ((s = slot_insert(m, t, a->bytes)) == NULL)
			return -ENOMEM;
		ak = acked_of(t, s);
		*ak = (struct acked){0, NEVER};
		if (expires < m->min_exp)
			m->min_exp = expires;
	}
	/* A stale ack (already past, or out of its window) must not count
	 * as a claim. */
	if (claim_end(m, ak) <= now)
		*ak = (struct acked){0, NEVER};
	if (acked) {
		if (expires > ak->expires)
			ak->expires = secs(expires);
		ak->at = secs(now);
		/* the sweep's bound: this claim may end before its expiry */
		if (m->window != 0 && now + m->window < m->min_exp)
			m->min_exp = now + m->window;
		if (fi != NO_SLOT && fl <= ak->expires)
			slot_delete(m, f, fi);
		return 0;
	}
	if (expires <= ak->expires || expires <= fl)
		return 0;
	if (fi != NO_SLOT) {
		*flight_of(f, slot_at(f, fi)) = secs(expires);
		return 0;
	}
	if ((s = slot_insert(m, f, a->bytes)) == NULL) {
		/* Not remembered: drop an entry that now claims nothing. */
		if (ak->expires == 0)
			expiry_forget(m, a);
		return -ENOMEM;
	}
	*flight_of(f, s) = secs(expires);
	return 0;
}

int expiry_note_inflight(struct expiry_map *m, const struct netaddr *a,
			 uint64_t expires, uint64_t now)
{
	return note(m, a, expires, now, false);
}

int expiry_note_acked(struct expiry_map *m, const struct netaddr *a,
		      uint64_t expires, uint64_t now)
{
	return note(m, a, expires, now, true);
}

void expiry_forget(struct expiry_map *m, const struct netaddr *a)
{
	int fam = fam_of(a);
	struct table *t;
	size_t i;

	if (fam < 0)
		return;
	flight_drop(m, fam, a->bytes);
	t = seg_of(m, fam, a->bytes);
	if ((i = slot_find(m, t, a->bytes)) != NO_SLOT)
		slot_delete(m, t, i);
}

/* Every table back to its first size when that can be had (the sets are
 * empty: the next peak need not sit on this one's memory), else zeroed. */
void expiry_clear(struct expiry_map *m)
{
	for (int k = 0; k < 2 * SEGS + 2; k++) {
		struct table *t = table_at(m, k);
		uint8_t *small = slots_new(MIN_SLOTS, t->slot_size);

		if (small != NULL) {
			slots_free(t->slots, t->size, t->slot_size);
			t->slots = small;
			t->size = MIN_SLOTS;
		} else {
			memset(t->slots, 0, t->size * t->slot_size);
		}
		t->count = 0;
	}
	m->n[0] = m->n[1] = 0;
	m->min_exp = UINT64_MAX;
}

size_t expiry_count_family(const struct expiry_map *m, int family)
{
	return m->n[family == AF_INET ? 0 : 1];
}

size_t expiry_count(const struct expiry_map *m)
{
	return m->n[0] + m->n[1];
}
