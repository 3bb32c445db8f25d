/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sets: the kernel ipsets. Creation and inspection through libipset (at
 * setup, may block); the hot-path adds over libmnl netlink, batched,
 * acked, never blocking the event loop. */
#ifndef DNSFENCE_SETS_H
#define DNSFENCE_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dnsfence/dnsmsg.h"

struct event_base;
struct sets;

#define SETS_KERNEL_MAX_TIMEOUT 2147483u

/* clamp(ttl, min, max), then at least 1 and at most the kernel maximum. */
uint32_t sets_timeout(uint32_t ttl, uint32_t min, uint32_t max);

/* Create both sets (hash:ip, inet / inet6, with timeout, maxelem), or
 * accept existing ones of exactly that type and family with timeout
 * support. A set of the wrong kind is -EEXIST with err naming it. */
int sets_create(const char *set4, const char *set6, uint32_t maxelem,
		char *err, size_t errlen);
/* Do both sets exist with the right type, family and timeout support?
 * 0, or -ENOENT / -EEXIST with err naming the set and the difference. */
int sets_check(const char *set4, const char *set6, char *err, size_t errlen);
int sets_destroy(const char *set4, const char *set6, char *err,
		 size_t errlen);

struct sets_params {
	const char *set4, *set6;
	uint32_t ttl_min, ttl_max;
	size_t map_max; /* bound of the never-shorten map */
};

/* Opens the netlink socket (needs CAP_NET_ADMIN for the adds). */
struct sets *sets_open(struct event_base *base, const struct sets_params *p,
		       char *err, size_t errlen);
void sets_close(struct sets *s);

/* status 0: every address is in its set; -ENOENT set missing, -ENOSPC set
 * full, -EIO other failure (logged once per cause). */
typedef void (*sets_done_fn)(void *arg, int status);

/* Put addrs (copied) into the sets with timeouts from their TTLs, skipping
 * those whose entry already outlives the new timeout. done is called once,
 * always later from the event loop, never from inside sets_add. Adds
 * queued in one loop iteration go out in one send. 0 or -ENOMEM. */
int sets_add(struct sets *s, const struct dns_addr *addrs, size_t n,
	     sets_done_fn done, void *arg);

#endif
