/* SPDX-License-Identifier: GPL-2.0-or-later */
/* observe: the daemon's answers to "why was this blocked?": the recent
 * address memory, NFLOG attribution, the learned allowlist's state file
 * and the metrics endpoint, opened together while privileges allow. */
#ifndef DNSFENCE_OBSERVE_H
#define DNSFENCE_OBSERVE_H

#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"

struct event_base;
struct attrib;
struct observe;

/* Before the privilege drop. Attribution and the state file are best
 * effort (a warning says what is missing); the metrics endpoint, when
 * configured, is not: NULL (logged) when it cannot listen. */
struct observe *observe_open(struct event_base *base, const struct config *cfg,
			     uid_t uid, gid_t gid);
/* The blocked-flow attribution (NULL in mode off or without memory), for
 * the name check's lines. */
struct attrib *observe_attrib(const struct observe *o);
/* A reload's config (it must outlive o, or be replaced again): the
 * attribution's mode and ports, the recent memory's clamp, the state
 * file's mode. The metrics endpoint and the sets cannot change live. */
void observe_set_config(struct observe *o, const struct config *cfg);
/* The name check reads NFQUEUE num (before the privilege drop: the
 * kernel's count is root's to open): the metrics and observe_queue show
 * its depth and drops from then on. */
struct metrics_queue;
void observe_set_queue(struct observe *o, uint16_t num);
/* That queue now (metrics_queue_read): 0, or -errno when unknown. */
int observe_queue(const struct observe *o, struct metrics_queue *q);
/* Writes the state file one last time. */
void observe_close(struct observe *o);
/* The learned names (NULL: nothing is learned), for the control socket. */
const struct learn *observe_learn(const struct observe *o);
/* The allow entries' usage table (state_dir/usage.json), or NULL. */
struct usage;
struct usage *observe_usage(const struct observe *o);
/* attrib_quiet on the attribution, when there is one (o may be NULL). */
void observe_quiet(struct observe *o, uid_t uid, uint64_t until_ms);

#endif
