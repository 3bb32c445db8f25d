/* SPDX-License-Identifier: GPL-2.0-or-later */
/* replyfn: the callback a reply goes back to the client through, shared
 * by the resolver and local.c's client handle, so local.c needs nothing
 * of resolver.h (the prefix is historical). */
#ifndef DNSFENCE_REPLYFN_H
#define DNSFENCE_REPLYFN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct rquery;

/* Send msg to the client at peer, from local when it is not NULL (the
 * address a query to a wildcard listener was sent to). q is the pending
 * query that completes (NULL when the reply is immediate); the resolver
 * frees q after this returns. msg is only valid during the call. */
typedef void (*resolver_reply_fn)(void *ctx, struct rquery *q,
				  const struct sockaddr *peer,
				  socklen_t peerlen,
				  const struct sockaddr *local,
				  const uint8_t *msg, size_t len);

#endif
