/* SPDX-License-Identifier: GPL-2.0-or-later */
/* upstream: one c-ares channel driven by libevent, sending raw queries
 * to the configured upstreams. */
#ifndef DNSFENCE_UPSTREAM_H
#define DNSFENCE_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

struct event_base;
struct sockpool;
struct upstream;

/* status 0: answer/len hold the upstream's reply (c-ares checked the
 * source and the question). Otherwise -ETIMEDOUT, -ECONNREFUSED (no
 * route, port closed, packets rejected), -EREMOTEIO / -EACCES /
 * -EOPNOTSUPP (every upstream answered SERVFAIL / REFUSED / NOTIMP),
 * -ENOMEM, -EIO; answer is NULL. Called exactly once per upstream_send that
 * returned 0, from the event loop, never from inside upstream_send (also at
 * upstream_free, with -ECANCELED). */
typedef void (*upstream_cb)(void *arg, int status, const uint8_t *answer,
			    size_t len);

struct upstream *upstream_new(struct event_base *base,
			      const struct config_endpoint *servers, size_t n,
			      uint32_t timeout_ms, char *err, size_t errlen);
/* Send query (its ID from upstream_new_id). 0, or -EINVAL, -ENOMEM,
 * -EEXIST (the ID is in use); cb is then never called. */
int upstream_send(struct upstream *u, const uint8_t *query, size_t len,
		  upstream_cb cb, void *arg);
/* Mark every socket opened from now on with SO_MARK = mark (needs
 * CAP_NET_ADMIN); a socket that cannot be marked is closed and its query
 * fails with an error logged. */
void upstream_set_mark(struct upstream *u, uint32_t mark);
/* Take every socket opened from now on from the privileged parent through
 * pool (its socket channel, not owned; see resolve/sockpool.h): the
 * parent marks them, so this process needs no capability. Replaces
 * upstream_set_mark's marking. */
void upstream_use_socket_channel(struct upstream *u, struct sockpool *pool);
/* A query ID not in use by any query in flight, in bounded time: 0, or
 * -EAGAIN when all 65,536 are taken. */
int upstream_new_id(struct upstream *u, uint16_t *id);
void upstream_free(struct upstream *u);
/* What a status given to upstream_cb (or a snoop error) means, for log
 * lines: "timed out", "upstream answered SERVFAIL", ... */
const char *upstream_strerror(int status);
/* No callback is still to come (a replaced channel may be freed without
 * cancelling anything). */
bool upstream_idle(const struct upstream *u);

#endif
