/* SPDX-License-Identifier: GPL-2.0-or-later */
/* metrics: the optional Prometheus endpoint (`metrics` config key),
 * libevent's evhttp serving the text exposition format at /metrics. */
#ifndef DNSFENCE_METRICS_H
#define DNSFENCE_METRICS_H

#include <stddef.h>
#include <stdint.h>

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

/* The name check's queue as the kernel counts it (METRICS_QUEUE_PROC,
 * one line per bound queue): packets awaiting a verdict, dropped because
 * the queue was full, dropped because they could not be sent to the
 * reader. */
#define METRICS_QUEUE_PROC "/proc/net/netfilter/nfnetlink_queue"
struct metrics_queue {
	uint32_t depth, full_dropped, send_dropped;
};
/* Queue num's line of that file's text into out: 0, -ENOENT (no such
 * queue bound), -EINVAL (a line that is not the kernel's format). */
int metrics_queue_parse(const char *text, uint16_t num,
			struct metrics_queue *out);
/* The same, read now through fd, METRICS_QUEUE_PROC opened before the
 * privilege drop (root only, 0440); -errno when unreadable. */
int metrics_queue_read(int fd, uint16_t num, struct metrics_queue *out);

/* The whole exposition text into buf (pure but for the counters it
 * reads); set4/set6 the entries of each set, or -1 when unknown; q the
 * name check's queue, NULL when not bound. */
int metrics_render(struct evbuffer *buf, long long set4, long long set6,
		   const struct metrics_queue *q);
/* The allow entries' usage, rendered as counts (no names); NULL: none. */
struct usage;
void metrics_set_usage(struct metrics *m, const struct usage *u);
/* The blocked flows per interface (forward scope), from a (NULL: none). */
struct attrib;
void metrics_set_attrib(struct metrics *m, const struct attrib *a);
/* The name check reads queue num: its depth and drops are rendered,
 * read through fd (see metrics_queue_read; it stays the caller's). */
void metrics_set_queue(struct metrics *m, int fd, uint16_t num);

#endif
