/* SPDX-License-Identifier: GPL-2.0-or-later */
/* server: the UDP and TCP listeners, one object per query, the reply
 * path. */
#ifndef DNSFENCE_SERVER_H
#define DNSFENCE_SERVER_H

#include "dnsfence/config.h"

struct event_base;
struct server;
struct policy;
struct upstream;
struct sets;

/* Binds every listen address (UDP and TCP). sets may be NULL: then no
 * address is put into the kernel (tests of the resolver alone).
 * NULL with err set when a socket cannot be bound. */
struct server *server_new(struct event_base *base, const struct config *cfg,
			  const struct policy *pol, struct upstream *up,
			  struct sets *sets, char *err, size_t errlen);
void server_free(struct server *s);

#endif
