// SPDX-License-Identifier: GPL-2.0-or-later
/* quota: how many upstream questions are in flight, in total and per
 * client address.
 *
 * Clients are counted in QUOTA_SLOTS slots by a hash of their address
 * (the port is left out: a client opens a socket per query). Two clients
 * that share a slot share its limit; that can only refuse earlier, never
 * let one client past its share. With per_client below max, one client
 * flooding unique names cannot take the whole cap from the others. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "resolve/quota.h"

#define QUOTA_SLOTS 1024 /* power of two */

struct quota {
	uint32_t max, per_client, used;
	uint32_t slots[QUOTA_SLOTS];
};

static uint32_t slot_of(const struct sockaddr *peer);

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

static uint32_t slot_of(const struct sockaddr *peer)
{
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
	return hash_fnv1a(p, n, 0) & (QUOTA_SLOTS - 1);
}

int quota_take(struct quota *q, const struct sockaddr *peer, uint32_t *slot)
{
	uint32_t s = slot_of(peer);

	if (q->used >= q->max)
		return -EBUSY;
	if (q->slots[s] >= q->per_client)
		return -EDQUOT;
	q->used++;
	q->slots[s]++;
	*slot = s;
	return 0;
}

void quota_give(struct quota *q, uint32_t slot)
{
	if (slot >= QUOTA_SLOTS || q->slots[slot] == 0 || q->used == 0)
		return;
	q->slots[slot]--;
	q->used--;
}

uint32_t quota_used(const struct quota *q)
{
	return q->used;
}
