/* SPDX-License-Identifier: GPL-2.0-or-later */
/* upstream: one c-ares channel driven by libevent, sending raw queries
 * to the configured upstreams. */
#ifndef DNSFENCE_UPSTREAM_H
#define DNSFENCE_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dnsfence/config.h"

struct event_base;
struct upstream;

/* status 0: answer/len hold the upstream's reply (c-ares checked the
 * source and the question). Otherwise -ETIMEDOUT, -ECONNREFUSED, -EIO;
 * answer is NULL. Called exactly once per upstream_send that returned 0,
 * from the event loop (also at upstream_free, with -ECANCELED). */
typedef void (*upstream_cb)(void *arg, int status, const uint8_t *answer,
			    size_t len);

struct upstream *upstream_new(struct event_base *base,
			      const struct config_endpoint *servers, size_t n,
			      uint32_t timeout_ms, char *err, size_t errlen);
int upstream_send(struct upstream *u, const uint8_t *query, size_t len,
		  upstream_cb cb, void *arg);
/* A query ID not in use by any query in flight. */
uint16_t upstream_new_id(struct upstream *u);
void upstream_free(struct upstream *u);
/* No callback is still to come (a replaced channel may be freed without
 * cancelling anything). */
bool upstream_idle(const struct upstream *u);

#endif
