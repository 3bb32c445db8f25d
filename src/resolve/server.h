/* SPDX-License-Identifier: GPL-2.0-or-later */
/* server: the UDP and TCP listeners, one object per query, the reply
 * path. */
#ifndef DNSFENCE_SERVER_H
#define DNSFENCE_SERVER_H

#include "config/config.h"

struct event_base;
struct server;
struct resolver;

/* Binds every listen address (UDP and TCP) and hands each message to res.
 * NULL with err set when no listener could be bound. */
struct server *server_new(struct event_base *base, const struct config *cfg,
			  struct resolver *res, char *err, size_t errlen);
/* Closes the listeners and connections; queries still pending in res are
 * dropped without a reply (resolver_shutdown). */
void server_free(struct server *s);

#endif
