// SPDX-License-Identifier: GPL-2.0-or-later
/* expiry: the never-shorten map (see expiry.h for the contract).
 *
 * Two open-addressing tables with linear probing, one for IPv4 keys (16
 * bytes a slot: the address and three 32-bit times) and one for IPv6 keys
 * (28 bytes), so an IPv4 address does not pay for 16 bytes of key. Each
 * table is a power of two, at most 80% full, doubling from 64 slots as
 * entries arrive: memory follows the live entries, not the bound (100k
 * addresses, half of each family, take under 3 MiB). Times are monotonic
 * seconds, which fit 32 bits for 136 years of uptime; a slot whose
 * expiries are both 0 is empty (a stored entry always has one in the
 * future).
 *
 * Deletion shifts the following cluster back instead of leaving
 * tombstones, so a table never degrades. The hash is seeded from
 * getrandom(): the keys come from upstream answers, and an unseeded hash
 * would let an attacker build long probe chains. Expired entries are
 * dropped when a lookup meets them, and by a full sweep when the map is
 * full; min_exp (a lower bound of every stored expiry) keeps the sweep
 * from running again before anything can have expired, so a full map of
 * live entries costs O(1) per refusal. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sets/expiry.h"
#include "base/hash.h"

#define EXPIRY_MAX_ENTRIES (1u << 26)
#define MIN_SLOTS	   64
#define LOAD_NUM	   4 /* grow past LOAD_NUM/LOAD_DEN full */
#define LOAD_DEN	   5

/* Follows the key in every slot; slots are multiples of 4 bytes. */
struct times {
	uint32_t acked;
	uint32_t inflight;
	uint32_t acked_at; /* when the last ack arrived */
};

struct table {
	uint8_t *slots;
	size_t mask; /* slots - 1 */
	size_t count;
	size_t key_len; /* 4 or 16 */
	size_t slot_size;
};

struct expiry_map {
	struct table t[2]; /* IPv4, IPv6 */
	size_t max;	   /* bound on stored entries, both tables */
	uint64_t min_exp;
	uint64_t seed;
};

static struct table *table_of(struct expiry_map *m, const struct netaddr *a);
static uint8_t *slot_at(const struct table *t, size_t i);
static struct times *times_of(const struct table *t, uint8_t *slot);
static size_t key_hash(const struct expiry_map *m, const struct table *t,
		       const uint8_t *key);
static bool slot_empty(const struct table *t, uint8_t *slot);
static bool slot_live(const struct table *t, uint8_t *slot, uint64_t now);
static void slot_delete(struct expiry_map *m, struct table *t, size_t i);
static uint8_t *find(struct expiry_map *m, struct table *t, const uint8_t *key,
		     uint64_t now);
static void sweep(struct expiry_map *m, uint64_t now);
static int table_init(struct table *t, size_t key_len);
static int grow(struct expiry_map *m, struct table *t);
static uint32_t secs(uint64_t t);
static int note(struct expiry_map *m, const struct netaddr *a, uint64_t expires,
		uint64_t now, bool acked);

static uint32_t secs(uint64_t t)
{
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static struct table *table_of(struct expiry_map *m, const struct netaddr *a)
{
	if (a->family == AF_INET)
		return &m->t[0];
	if (a->family == AF_INET6)
		return &m->t[1];
	return NULL;
}

static uint8_t *slot_at(const struct table *t, size_t i)
{
	return t->slots + i * t->slot_size;
}

static struct times *times_of(const struct table *t, uint8_t *slot)
{
	return (struct times *)(void *)(slot + t->key_len);
}

static size_t key_hash(const struct expiry_map *m, const struct table *t,
		       const uint8_t *key)
{
	uint64_t w0 = 0, w1 = 0, h;

	memcpy(&w0, key, t->key_len < 8 ? t->key_len : 8);
	if (t->key_len > 8)
		memcpy(&w1, key + 8, t->key_len - 8);
	h = hash_mix64(m->seed ^ t->key_len);
	h = hash_mix64(h ^ w0);
	h = hash_mix64(h ^ w1);
	return (size_t)h & t->mask;
}

static bool slot_empty(const struct table *t, uint8_t *slot)
{
	const struct times *tm = times_of(t, slot);

	return tm->acked == 0 && tm->inflight == 0;
}

static bool slot_live(const struct table *t, uint8_t *slot, uint64_t now)
{
	const struct times *tm = times_of(t, slot);

	return tm->acked > now || tm->inflight > now;
}

/* Backward-shift deletion: move every later member of the cluster whose
 * home slot does not lie cyclically in (i, j] into the hole. */
static void slot_delete(struct expiry_map *m, struct table *t, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & t->mask;
		if (slot_empty(t, slot_at(t, j)))
			break;
		home = key_hash(m, t, slot_at(t, j));
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		memcpy(slot_at(t, i), slot_at(t, j), t->slot_size);
		i = j;
	}
	memset(slot_at(t, i), 0, t->slot_size);
	t->count--;
}

/* The live slot of key, or NULL; an expired slot met on the way is
 * dropped. */
static uint8_t *find(struct expiry_map *m, struct table *t, const uint8_t *key,
		     uint64_t now)
{
	size_t i = key_hash(m, t, key);

	while (!slot_empty(t, slot_at(t, i))) {
		uint8_t *s = slot_at(t, i);

		if (memcmp(s, key, t->key_len) == 0) {
			if (slot_live(t, s, now))
				return s;
			slot_delete(m, t, i);
			return NULL;
		}
		i = (i + 1) & t->mask;
	}
	return NULL;
}

static void sweep(struct expiry_map *m, uint64_t now)
{
	uint64_t min_exp = UINT64_MAX;

	for (int k = 0; k < 2; k++) {
		struct table *t = &m->t[k];
		size_t i = 0;

		while (i <= t->mask) {
			uint8_t *s = slot_at(t, i);
			const struct times *tm = times_of(t, s);
			uint64_t exp;

			if (slot_empty(t, s)) {
				i++;
				continue;
			}
			if (!slot_live(t, s, now)) {
				/* Something else moves into i: look again. */
				slot_delete(m, t, i);
				continue;
			}
			exp =
			    tm->acked > tm->inflight ? tm->acked : tm->inflight;
			if (exp < min_exp)
				min_exp = exp;
			i++;
		}
	}
	m->min_exp = min_exp;
}

static int table_init(struct table *t, size_t key_len)
{
	t->key_len = key_len;
	t->slot_size = key_len + sizeof(struct times);
	t->mask = MIN_SLOTS - 1;
	t->count = 0;
	t->slots = calloc(MIN_SLOTS, t->slot_size);
	return t->slots != NULL ? 0 : -ENOMEM;
}

/* Double t, re-inserting every entry. */
static int grow(struct expiry_map *m, struct table *t)
{
	size_t old_size = t->mask + 1;
	uint8_t *old = t->slots, *slots;

	/* calloc checks the multiplication for overflow. */
	slots = calloc(old_size * 2, t->slot_size);
	if (slots == NULL)
		return -ENOMEM;
	t->slots = slots;
	t->mask = old_size * 2 - 1;
	for (size_t i = 0; i < old_size; i++) {
		uint8_t *s = old + i * t->slot_size;
		size_t j;

		if (slot_empty(t, s))
			continue;
		j = key_hash(m, t, s);
		while (!slot_empty(t, slot_at(t, j)))
			j = (j + 1) & t->mask;
		memcpy(slot_at(t, j), s, t->slot_size);
	}
	free(old);
	return 0;
}

struct expiry_map *expiry_new(size_t max)
{
	struct expiry_map *m;

	if (max == 0 || max > EXPIRY_MAX_ENTRIES)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	if (table_init(&m->t[0], 4) != 0 || table_init(&m->t[1], 16) != 0) {
		expiry_free(m);
		return NULL;
	}
	m->max = max;
	m->min_exp = UINT64_MAX;
	(void)hash_seed(&m->seed, sizeof(m->seed)); /* weak is still usable */
	return m;
}

void expiry_free(struct expiry_map *m)
{
	if (m == NULL)
		return;
	free(m->t[0].slots);
	free(m->t[1].slots);
	free(m);
}

void expiry_get(struct expiry_map *m, const struct netaddr *a, uint64_t now,
		uint64_t *acked, uint64_t *inflight, uint64_t *acked_at)
{
	struct table *t = table_of(m, a);
	const struct times *tm = NULL;
	uint8_t *s = NULL;

	if (t != NULL)
		s = find(m, t, a->bytes, now);
	if (s != NULL)
		tm = times_of(t, s);
	if (acked != NULL)
		*acked = tm != NULL && tm->acked > now ? tm->acked : 0;
	if (inflight != NULL)
		*inflight = tm != NULL && tm->inflight > now ? tm->inflight : 0;
	if (acked_at != NULL)
		*acked_at = tm != NULL && tm->acked > now ? tm->acked_at : 0;
}

static int note(struct expiry_map *m, const struct netaddr *a, uint64_t expires,
		uint64_t now, bool acked)
{
	struct table *t = table_of(m, a);
	struct times *tm;
	uint8_t *s;
	size_t i;

	if (t == NULL || expires <= now)
		return -EINVAL;
	s = find(m, t, a->bytes, now);
	if (s == NULL) {
		if (expiry_count(m) >= m->max && now >= m->min_exp)
			sweep(m, now);
		if (expiry_count(m) >= m->max)
			return -ENOSPC;
		if ((t->count + 1) * LOAD_DEN > (t->mask + 1) * LOAD_NUM &&
		    grow(m, t) != 0)
			return -ENOMEM;
		i = key_hash(m, t, a->bytes);
		while (!slot_empty(t, slot_at(t, i)))
			i = (i + 1) & t->mask;
		s = slot_at(t, i);
		memcpy(s, a->bytes, t->key_len);
		t->count++;
		if (expires < m->min_exp)
			m->min_exp = expires;
	}
	tm = times_of(t, s);
	/* A stale half (already past) must not count as a claim. */
	if (tm->acked <= now)
		tm->acked = 0;
	if (tm->inflight <= now)
		tm->inflight = 0;
	if (acked && expires > tm->acked)
		tm->acked = secs(expires);
	if (acked)
		tm->acked_at = secs(now);
	if (!acked && expires > tm->inflight)
		tm->inflight = secs(expires);
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
	struct table *t = table_of(m, a);
	size_t i;

	if (t == NULL)
		return;
	for (i = key_hash(m, t, a->bytes); !slot_empty(t, slot_at(t, i));
	     i = (i + 1) & t->mask) {
		if (memcmp(slot_at(t, i), a->bytes, t->key_len) == 0) {
			slot_delete(m, t, i);
			return;
		}
	}
}

void expiry_clear(struct expiry_map *m)
{
	for (int k = 0; k < 2; k++) {
		struct table *t = &m->t[k];

		memset(t->slots, 0, (t->mask + 1) * t->slot_size);
		t->count = 0;
	}
	m->min_exp = UINT64_MAX;
}

size_t expiry_count_family(const struct expiry_map *m, int family)
{
	return m->t[family == AF_INET ? 0 : 1].count;
}

size_t expiry_count(const struct expiry_map *m)
{
	return m->t[0].count + m->t[1].count;
}
