// SPDX-License-Identifier: GPL-2.0-or-later
/* budget: new-name budgets below allowed wildcards (see budget.h).
 *
 * A question under `*.example.com` that is neither cached nor in flight
 * goes to example.com's servers with a name the workload chose: about
 * 250 bytes of its choosing a question. Each such question takes one
 * token from its (entry, client address) bucket and one from the entry's
 * own bucket (BUDGET_ENTRY_FACTOR times larger and faster); a cached or
 * coalesced answer costs nothing, so a real workload (a build resolves
 * tens of names, a test suite a few hundred in a burst) never notices,
 * while a flood of unique names is refused at the refill rate.
 *
 * Both tables are open-addressed with a probe window of PROBE slots; a
 * key not found takes an empty slot of its window, else the least
 * recently used one. A bucket that gives way is forgotten, and a new one
 * starts full: a workload that cycles through client addresses gains at
 * most the burst of each, and never more than the entry's bucket holds.
 * In the forward scope (budget_take_on with the ingress interface) both
 * are kept per interface too: the containers behind one fenced interface
 * cannot spend the entry's budget of those behind another.
 * Tokens are counted in 1/60000ths (UNIT), so a refill of per_minute
 * tokens a minute adds exactly per_minute units a millisecond and a slow
 * refill loses nothing to rounding. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/budget.h"
#include "base/hash.h"
#include "base/netaddr.h"

#define PROBE	8
#define ENTRIES 1024	 /* wildcard entries with a live bucket */
#define UNIT	60000ull /* a token, in refill steps */

struct bucket {
	bool used;
	uint64_t key;	    /* the entry's suffix hash */
	struct netaddr who; /* family 0 for an entry's own bucket */
	uint64_t units;	    /* tokens x UNIT */
	uint64_t last_ms;   /* last refill */
	uint64_t used_ms;   /* last use, for eviction */
	uint64_t window_ms;
	uint64_t refused; /* since the last log line */
};

struct table {
	struct bucket *v;
	size_t cap; /* a power of two */
};

struct budget {
	struct table entries, clients;
	uint32_t seed;
};

static int table_init(struct table *t, size_t want);
static struct bucket *find(struct table *t, uint32_t seed, uint64_t key,
			   const struct netaddr *who, uint64_t now_ms);
static void refill(struct bucket *bk, uint64_t burst, uint64_t per_minute,
		   uint64_t now_ms);
static void refused(struct bucket *bk, uint64_t now_ms,
		    struct budget_refusal *why);

static int table_init(struct table *t, size_t want)
{
	size_t cap = PROBE;

	while (cap < want)
		cap *= 2;
	t->v = calloc(cap, sizeof(*t->v));
	t->cap = cap;
	return t->v ? 0 : -ENOMEM;
}

struct budget *budget_new(size_t clients)
{
	struct budget *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	(void)hash_seed(&b->seed, sizeof(b->seed));
	if (table_init(&b->entries, ENTRIES) != 0 ||
	    table_init(&b->clients, clients) != 0) {
		budget_free(b);
		return NULL;
	}
	return b;
}

void budget_free(struct budget *b)
{
	if (b == NULL)
		return;
	free(b->entries.v);
	free(b->clients.v);
	free(b);
}

/* The bucket of (key, who), made full (units = UINT64_MAX, which the
 * first refill clamps to the burst) when it is not there. */
static struct bucket *find(struct table *t, uint32_t seed, uint64_t key,
			   const struct netaddr *who, uint64_t now_ms)
{
	uint32_t h = hash_fnv1a(who, sizeof(*who),
				seed ^ (uint32_t)key ^ (uint32_t)(key >> 32));
	struct bucket *victim = NULL;

	for (size_t i = 0; i < PROBE; i++) {
		struct bucket *bk = &t->v[(h + i) & (t->cap - 1)];

		if (bk->used && bk->key == key &&
		    memcmp(&bk->who, who, sizeof(*who)) == 0)
			return bk;
		if (!bk->used) {
			if (victim == NULL || victim->used)
				victim = bk;
		} else if (victim == NULL ||
			   (victim->used && bk->used_ms < victim->used_ms)) {
			victim = bk;
		}
	}
	memset(victim, 0, sizeof(*victim));
	victim->used = true;
	victim->key = key;
	victim->who = *who;
	victim->units = UINT64_MAX;
	victim->last_ms = now_ms;
	return victim;
}

static void refill(struct bucket *bk, uint64_t burst, uint64_t per_minute,
		   uint64_t now_ms)
{
	uint64_t cap = burst * UNIT, dt = now_ms - bk->last_ms;

	if (bk->units < cap) {
		/* no more than it takes to fill up: no overflow */
		if (dt > cap / per_minute + 1)
			dt = cap / per_minute + 1;
		bk->units += dt * per_minute;
	}
	if (bk->units > cap)
		bk->units = cap;
	bk->last_ms = now_ms;
	bk->used_ms = now_ms;
}

static void refused(struct bucket *bk, uint64_t now_ms,
		    struct budget_refusal *why)
{
	why->log_now =
	    bk->window_ms == 0 || now_ms - bk->window_ms >= BUDGET_WINDOW_MS;
	why->before = bk->refused;
	if (why->log_now) {
		bk->window_ms = now_ms;
		bk->refused = 0;
	} else {
		bk->refused++;
	}
}

bool budget_take(struct budget *b, const struct budget_params *bp,
		 const uint8_t *suffix, size_t slen,
		 const struct sockaddr *peer, uint64_t now_ms,
		 struct budget_refusal *why)
{
	return budget_take_on(b, bp, suffix, slen, peer, 0, now_ms, why);
}

/* The interface is folded into the key (an odd multiplier: distinct
 * ifindexes give distinct keys), so each (entry, interface) has its own
 * entry bucket and its clients their own buckets; ifindex 0 is the key
 * itself, one bucket per entry as before. */
bool budget_take_on(struct budget *b, const struct budget_params *bp,
		    const uint8_t *suffix, size_t slen,
		    const struct sockaddr *peer, unsigned ifindex,
		    uint64_t now_ms, struct budget_refusal *why)
{
	uint64_t key = hash_fnv1a64(HASH_FNV64_BASIS, suffix, slen) ^
		       ((uint64_t)ifindex * 0x9e3779b97f4a7c15ull);
	struct netaddr none = {0}, who = {0};
	struct bucket *entry, *client;

	memset(why, 0, sizeof(*why));
	if (!netaddr_from_sockaddr(peer, &who))
		memset(&who, 0, sizeof(who)); /* one bucket for the unknown */
	entry = find(&b->entries, b->seed, key, &none, now_ms);
	client = find(&b->clients, b->seed, key, &who, now_ms);
	refill(entry, (uint64_t)bp->burst * BUDGET_ENTRY_FACTOR,
	       (uint64_t)bp->per_minute * BUDGET_ENTRY_FACTOR, now_ms);
	refill(client, bp->burst, bp->per_minute, now_ms);
	if (client->units < UNIT) {
		refused(client, now_ms, why);
		return false;
	}
	if (entry->units < UNIT) {
		why->by_entry = true;
		refused(entry, now_ms, why);
		return false;
	}
	client->units -= UNIT;
	entry->units -= UNIT;
	return true;
}
