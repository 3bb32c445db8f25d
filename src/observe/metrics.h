/* SPDX-License-Identifier: GPL-2.0-or-later */
/* metrics: the optional Prometheus endpoint (`metrics` config key),
 * libevent's evhttp serving the text exposition format at /metrics. */
#ifndef DNSFENCE_METRICS_H
#define DNSFENCE_METRICS_H

#include <stddef.h>

#include "config/config.h"

struct event_base;
struct evbuffer;
struct metrics;

/* Bounds against whoever can reach the endpoint (docs/metrics.md). */
#define METRICS_MAX_CONNS    8	  /* open connections; accept pauses */
#define METRICS_CONN_SECONDS 5	  /* a connection's whole life */
#define METRICS_MAX_HEADERS  4096 /* bytes of request line and headers */
#define METRICS_SETS_CACHE_MS                                                  \
	1000 /* kernel set sizes asked at most this often */

/* Listen on cfg->metrics (bind before the privilege drop). NULL with err
 * set when the address cannot be bound. */
struct metrics *metrics_open(struct event_base *base, const struct config *cfg,
			     char *err, size_t errlen);
void metrics_close(struct metrics *m);

/* The whole exposition text into buf (pure but for the counters it
 * reads); set4/set6 the entries of each set, or -1 when unknown. */
int metrics_render(struct evbuffer *buf, long long set4, long long set6);
/* The allow entries' usage, rendered as counts (no names); NULL: none. */
struct usage;
void metrics_set_usage(struct metrics *m, const struct usage *u);

#endif
