/* SPDX-License-Identifier: GPL-2.0-or-later */
/* quota: the cap on upstream questions in flight, and each client's
 * share of it (invariant 10). */
#ifndef DNSFENCE_QUOTA_H
#define DNSFENCE_QUOTA_H

#include <stdint.h>
#include <sys/socket.h>

struct quota;

/* At most max questions in flight; one client address at most
 * per_client of them (1 <= per_client <= max). NULL on bad limits or
 * ENOMEM. */
struct quota *quota_new(uint32_t max, uint32_t per_client);
void quota_free(struct quota *q);
/* Count one question for the client at peer (its address, not its
 * port). 0 and *slot set (give it back with quota_give), -EBUSY at the
 * global cap, -EDQUOT at the client's share. */
int quota_take(struct quota *q, const struct sockaddr *peer, uint32_t *slot);
void quota_give(struct quota *q, uint32_t slot);
uint32_t quota_used(const struct quota *q);

#endif
