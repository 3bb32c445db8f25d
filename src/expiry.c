// SPDX-License-Identifier: GPL-2.0-or-later
/* expiry: the never-shorten map (see expiry.h for the contract).
 *
 * Open addressing with linear probing over a power-of-two table at most
 * 80% full, doubling from 64 slots as entries arrive, so memory follows
 * the live entries (32 bytes a slot) rather than the bound. Deletion shifts the
 * following cluster back instead of leaving tombstones, so the table never
 * degrades. The hash is seeded from getrandom(): the keys come from
 * upstream answers, and an unseeded hash would let an attacker build long
 * probe chains. Expired entries are dropped when a lookup meets them, and
 * by a full sweep when the map is full; min_exp (a lower bound of every
 * stored expiry) keeps the sweep from running again before anything can
 * have expired, so a full map of live entries costs O(1) per refusal. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "dnsfence/expiry.h"

#define EXPIRY_MAX_ENTRIES (1u << 26)
#define MIN_SLOTS	   64
/* Grow past 80% load: linear probing stays short, and 100k addresses
 * fit in 4 MiB. */
#define LOAD_NUM 4
#define LOAD_DEN 5

/* 32 bytes. Times are monotonic seconds, which fit 32 bits for 136 years
 * of uptime. An empty slot has family 0. */
struct slot {
	uint8_t addr[16];
	uint8_t family;
	uint8_t pad[3];
	uint32_t acked;
	uint32_t inflight;
	uint32_t acked_at; /* when the last ack arrived */
};

struct expiry_map {
	struct slot *slots;
	size_t mask;  /* table size - 1 */
	size_t max;   /* bound on stored entries */
	size_t count; /* stored entries */
	uint64_t min_exp;
	uint64_t seed;
};

static uint64_t mix64(uint64_t x);
static size_t addr_len(const struct netaddr *a);
static bool key_make(const struct netaddr *a, struct slot *key);
static size_t key_hash(const struct expiry_map *m, const struct slot *k);
static bool key_equal(const struct slot *a, const struct slot *b);
static bool slot_empty(const struct slot *s);
static bool slot_live(const struct slot *s, uint64_t now);
static void slot_delete(struct expiry_map *m, size_t i);
static struct slot *find(struct expiry_map *m, const struct slot *k,
			 uint64_t now);
static void sweep(struct expiry_map *m, uint64_t now);
static int grow(struct expiry_map *m);
static uint32_t secs(uint64_t t);
static int note(struct expiry_map *m, const struct netaddr *a, uint64_t expires,
		uint64_t now, bool acked);

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static size_t addr_len(const struct netaddr *a)
{
	if (a->family == AF_INET)
		return 4;
	if (a->family == AF_INET6)
		return 16;
	return 0;
}

/* A canonical key: a slot with only the address set, unused bytes of an
 * IPv4 address zeroed. */
static bool key_make(const struct netaddr *a, struct slot *key)
{
	size_t len = addr_len(a);

	if (len == 0)
		return false;
	memset(key, 0, sizeof(*key));
	key->family = (uint8_t)a->family;
	memcpy(key->addr, a->bytes, len);
	return true;
}

static size_t key_hash(const struct expiry_map *m, const struct slot *k)
{
	uint64_t w0, w1, h;

	memcpy(&w0, k->addr, 8);
	memcpy(&w1, k->addr + 8, 8);
	h = mix64(m->seed ^ k->family);
	h = mix64(h ^ w0);
	h = mix64(h ^ w1);
	return (size_t)h & m->mask;
}

static bool key_equal(const struct slot *a, const struct slot *b)
{
	return a->family == b->family &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static bool slot_empty(const struct slot *s)
{
	return s->family == 0;
}

static uint32_t secs(uint64_t t)
{
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static bool slot_live(const struct slot *s, uint64_t now)
{
	return s->acked > now || s->inflight > now;
}

/* Backward-shift deletion: move every later member of the cluster whose
 * home slot does not lie cyclically in (i, j] into the hole. */
static void slot_delete(struct expiry_map *m, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & m->mask;
		if (slot_empty(&m->slots[j]))
			break;
		home = key_hash(m, &m->slots[j]);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->slots[i] = m->slots[j];
		i = j;
	}
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
	m->count--;
}

/* The live slot of k, or NULL; an expired slot met on the way is dropped. */
static struct slot *find(struct expiry_map *m, const struct slot *k,
			 uint64_t now)
{
	size_t i = key_hash(m, k);

	while (!slot_empty(&m->slots[i])) {
		struct slot *s = &m->slots[i];

		if (key_equal(s, k)) {
			if (slot_live(s, now))
				return s;
			slot_delete(m, i);
			return NULL;
		}
		i = (i + 1) & m->mask;
	}
	return NULL;
}

static void sweep(struct expiry_map *m, uint64_t now)
{
	uint64_t min_exp = UINT64_MAX;
	size_t i = 0;

	while (i <= m->mask) {
		struct slot *s = &m->slots[i];
		uint64_t exp;

		if (slot_empty(s)) {
			i++;
			continue;
		}
		if (!slot_live(s, now)) {
			/* Something else moves into i: look at it again. */
			slot_delete(m, i);
			continue;
		}
		exp = s->acked > s->inflight ? s->acked : s->inflight;
		if (exp < min_exp)
			min_exp = exp;
		i++;
	}
	m->min_exp = min_exp;
}

struct expiry_map *expiry_new(size_t max)
{
	struct expiry_map *m = NULL;
	size_t size = MIN_SLOTS;

	if (max == 0 || max > EXPIRY_MAX_ENTRIES)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	/* The table starts small and doubles as entries arrive. */
	m->slots = calloc(size, sizeof(*m->slots));
	if (m->slots == NULL) {
		free(m);
		return NULL;
	}
	m->mask = size - 1;
	m->max = max;
	m->min_exp = UINT64_MAX;
	if (getrandom(&m->seed, sizeof(m->seed), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(m->seed)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		m->seed = mix64((uint64_t)ts.tv_nsec ^ (uintptr_t)m);
	}
	return m;
}

void expiry_free(struct expiry_map *m)
{
	if (m == NULL)
		return;
	free(m->slots);
	free(m);
}

void expiry_get(struct expiry_map *m, const struct netaddr *a, uint64_t now,
		uint64_t *acked, uint64_t *inflight, uint64_t *acked_at)
{
	struct slot k;
	struct slot *s = NULL;

	if (key_make(a, &k))
		s = find(m, &k, now);
	if (acked != NULL)
		*acked = s != NULL && s->acked > now ? s->acked : 0;
	if (inflight != NULL)
		*inflight = s != NULL && s->inflight > now ? s->inflight : 0;
	if (acked_at != NULL)
		*acked_at = s != NULL && s->acked > now ? s->acked_at : 0;
}

/* Double the table, re-inserting every live entry. */
static int grow(struct expiry_map *m)
{
	size_t old_size = m->mask + 1, size = old_size * 2;
	struct slot *old = m->slots, *slots;

	slots = calloc(size, sizeof(*slots));
	if (slots == NULL)
		return -ENOMEM;
	m->slots = slots;
	m->mask = size - 1;
	for (size_t i = 0; i < old_size; i++) {
		size_t j;

		if (slot_empty(&old[i]))
			continue;
		j = key_hash(m, &old[i]);
		while (!slot_empty(&m->slots[j]))
			j = (j + 1) & m->mask;
		m->slots[j] = old[i];
	}
	free(old);
	return 0;
}

static int note(struct expiry_map *m, const struct netaddr *a, uint64_t expires,
		uint64_t now, bool acked)
{
	struct slot k;
	struct slot *s;
	size_t i;

	if (!key_make(a, &k) || expires <= now)
		return -EINVAL;
	s = find(m, &k, now);
	if (s == NULL) {
		if (m->count >= m->max && now >= m->min_exp)
			sweep(m, now);
		if (m->count >= m->max)
			return -ENOSPC;
		if ((m->count + 1) * LOAD_DEN > (m->mask + 1) * LOAD_NUM &&
		    grow(m) != 0)
			return -ENOMEM;
		i = key_hash(m, &k);
		while (!slot_empty(&m->slots[i]))
			i = (i + 1) & m->mask;
		s = &m->slots[i];
		*s = k;
		m->count++;
		if (expires < m->min_exp)
			m->min_exp = expires;
	}
	/* A stale half (already past) must not count as a claim. */
	if (s->acked <= now)
		s->acked = 0;
	if (s->inflight <= now)
		s->inflight = 0;
	if (acked && expires > s->acked)
		s->acked = secs(expires);
	if (acked)
		s->acked_at = secs(now);
	if (!acked && expires > s->inflight)
		s->inflight = secs(expires);
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

void expiry_clear(struct expiry_map *m)
{
	memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
	m->min_exp = UINT64_MAX;
}

size_t expiry_count(const struct expiry_map *m)
{
	return m->count;
}
