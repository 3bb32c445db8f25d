// SPDX-License-Identifier: GPL-2.0-or-later
/* quota: how many upstream questions are in flight, in total, per client
 * and per fenced interface.
 *
 * A client is an address on the interface its query arrived on (the port
 * is left out: a client opens a socket per query). Clients are counted in
 * QUOTA_SLOTS slots by a hash of both. Two clients that share a slot
 * share its limit; that can only refuse earlier, never let one client
 * past its share. With per_client below max, one client flooding unique
 * names cannot take the whole cap from the others.
 *
 * An address is not a container, though: a container that is root in its
 * own namespace sends from any address of its network (the source check
 * passes them, they are of the interface's networks), and every new
 * address was a new share. So the questions of one interface together are
 * bounded too, by a share per real container behind it (the caller counts
 * them: a bridge's ports); a container forging a hundred addresses takes
 * no more than its network's real containers could, and the rest of the
 * cap stays for the other interfaces. Interfaces with ports 0 (loopback,
 * not known) are not bounded beyond the per-client share. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "resolve/quota.h"

#define QUOTA_SLOTS  1024 /* power of two, below 1 << IFACE_SHIFT */
#define QUOTA_IFACES 256  /* interfaces holding questions at once */
#define IFACE_SHIFT  16	  /* slot: client slot | (iface index + 1) << 16 */

struct quota_iface {
	unsigned ifindex;
	uint32_t used; /* 0: the entry is free */
};

struct quota {
	uint32_t max, per_client, used;
	uint32_t slots[QUOTA_SLOTS];
	struct quota_iface ifaces[QUOTA_IFACES];
};

static uint32_t slot_of(const struct quota_client *c);
static int iface_find(struct quota *q, unsigned ifindex);

struct quota *quota_new(uint32_t max, uint32_t per_client)
{
	struct quota *q;

	if (max == 0 || per_client == 0 || per_client > max)
		return NULL;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->max = max;
	q->per_client = per_client;
	return q;
}

void quota_free(struct quota *q)
{
	free(q);
}

static uint32_t slot_of(const struct quota_client *c)
{
	const struct sockaddr *peer = c->peer;
	const uint8_t *p = NULL;
	size_t n = 0;

	if (peer->sa_family == AF_INET) {
		p = (const uint8_t *)&((const struct sockaddr_in *)peer)
			->sin_addr;
		n = 4;
	} else if (peer->sa_family == AF_INET6) {
		p = (const uint8_t *)&((const struct sockaddr_in6 *)peer)
			->sin6_addr;
		n = 16;
	}
	return hash_fnv1a(p, n, c->ifindex) & (QUOTA_SLOTS - 1);
}

uint32_t quota_iface_bound(const struct quota *q, const struct quota_client *c)
{
	uint64_t bound = (uint64_t)c->ports * q->per_client;

	return c->ports == 0 || bound > q->max ? q->max : (uint32_t)bound;
}

/* The entry of ifindex, else a free one (its used 0), else -1. */
static int iface_find(struct quota *q, unsigned ifindex)
{
	int free_at = -1;

	for (int i = 0; i < QUOTA_IFACES; i++) {
		if (q->ifaces[i].used > 0 && q->ifaces[i].ifindex == ifindex)
			return i;
		if (q->ifaces[i].used == 0 && free_at < 0)
			free_at = i;
	}
	return free_at;
}

int quota_take(struct quota *q, const struct quota_client *c, uint32_t *slot)
{
	uint32_t s = slot_of(c);
	int i = -1;

	if (q->used >= q->max)
		return -EBUSY;
	if (q->slots[s] >= q->per_client)
		return -EDQUOT;
	if (c->ports > 0) {
		i = iface_find(q, c->ifindex);
		if (i < 0 || q->ifaces[i].used >= quota_iface_bound(q, c))
			return -ENOSPC;
		q->ifaces[i].ifindex = c->ifindex;
		q->ifaces[i].used++;
	}
	q->used++;
	q->slots[s]++;
	*slot = s | (uint32_t)(i + 1) << IFACE_SHIFT;
	return 0;
}

void quota_give(struct quota *q, uint32_t slot)
{
	uint32_t s = slot & ((1u << IFACE_SHIFT) - 1);
	uint32_t i = slot >> IFACE_SHIFT;

	if (s >= QUOTA_SLOTS || i > QUOTA_IFACES || q->slots[s] == 0 ||
	    q->used == 0 || (i > 0 && q->ifaces[i - 1].used == 0))
		return;
	q->slots[s]--;
	q->used--;
	if (i > 0)
		q->ifaces[i - 1].used--;
}

uint32_t quota_used(const struct quota *q)
{
	return q->used;
}
