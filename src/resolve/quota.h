/* SPDX-License-Identifier: GPL-2.0-or-later */
/* quota: the cap on upstream questions in flight, each client's share of
 * it, and each fenced interface's bound by its real containers
 * (invariant 10). */
#ifndef DNSFENCE_QUOTA_H
#define DNSFENCE_QUOTA_H

#include <stdint.h>
#include <sys/socket.h>

struct quota;

/* Who asks: the client's address (not its port), the interface the query
 * arrived on (0: not known) and how many real containers sit behind that
 * interface (0: the interface is not bounded, e.g. loopback). */
struct quota_client {
	const struct sockaddr *peer;
	unsigned ifindex;
	uint32_t ports;
};

/* At most max questions in flight; one client (interface, address) at
 * most per_client of them (1 <= per_client <= max); an interface with
 * ports real containers at most ports * per_client. NULL on bad limits or
 * ENOMEM. */
struct quota *quota_new(uint32_t max, uint32_t per_client);
void quota_free(struct quota *q);
/* Count one question for c. 0 and *slot set (give it back with
 * quota_give), -EBUSY at the global cap, -EDQUOT at the client's share,
 * -ENOSPC at its interface's bound. */
int quota_take(struct quota *q, const struct quota_client *c, uint32_t *slot);
void quota_give(struct quota *q, uint32_t slot);
uint32_t quota_used(const struct quota *q);
/* The most questions the interface of c may hold (max when unbounded). */
uint32_t quota_iface_bound(const struct quota *q, const struct quota_client *c);

#endif
