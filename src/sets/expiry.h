/* SPDX-License-Identifier: GPL-2.0-or-later */
/* expiry: the sets module's memory of its entries' expiries. For each
 * address it remembers when its kernel set entry expires (acked adds) and
 * the latest expiry of adds still in flight, in monotonic seconds. Both
 * processes keep it as a window (expiry_new_window): what the skip and
 * the adds in flight read. Invariant 4 (never shorten) rests on the
 * sets' floor instead (sets_set_floor: prov's record of every answer),
 * which a map of the last second's acks cannot hold.
 *
 * Bounded: at most `max` live entries. Expired entries are forgotten
 * (lazily on lookup, and by a sweep when the map is full). When the map is
 * full of live entries, a new address is NOT remembered (-ENOSPC) and
 * nothing is evicted: the caller still sends that add to the kernel, only
 * without the never-shorten guarantee for it. Every live acked entry
 * mirrors a live kernel entry, so with max >= the set's maxelem the map
 * can only be full when the set is full, and then the add fails anyway. */
#ifndef DNSFENCE_EXPIRY_H
#define DNSFENCE_EXPIRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

struct expiry_map;

/* A map for at most max entries (1 .. 2^26); NULL on bad max or ENOMEM. */
struct expiry_map *expiry_new(size_t max);
/* The same, but an ack claims its expiry only for window seconds after it
 * came (then the entry reads as unknown unless an add is in flight, and
 * the sweep drops it): the DNS process's map, which needs no more than
 * what the skip (SETS_FRESH_SECONDS) and the adds in flight read, and so
 * holds the acks of the last window seconds, not every live entry. Its
 * max is then a bound of its own, below the sets' size: when it is full,
 * -ENOSPC as above and the add is sent. window 0: expiry_new. */
struct expiry_map *expiry_new_window(size_t max, unsigned window);
void expiry_free(struct expiry_map *m);

/* acked: expiry of the entry the kernel has confirmed, inflight: the
 * latest expiry of an add sent but not acked yet when it lies beyond
 * acked (one that ends no later changes nothing: acked only grows while
 * it lives), acked_at: when the last ack came; 0 when unknown or already
 * past at now. Any pointer may be NULL. */
void expiry_get(struct expiry_map *m, const struct netaddr *a, uint64_t now,
		uint64_t *acked, uint64_t *inflight, uint64_t *acked_at);
/* Would an add of a until want (monotonic seconds) change nothing: the
 * kernel confirmed a's entry less than fresh seconds ago and it lives
 * until want or later? Then true: skip it. Otherwise false and *send is
 * the expiry to send: the latest of want, the acked expiry and an add in
 * flight (one that may land after this one), never shorter. */
bool expiry_covers(struct expiry_map *m, const struct netaddr *a, uint64_t want,
		   uint64_t now, unsigned fresh, uint64_t *send);
/* Raise the in-flight (or acked) expiry of a to at least expires; a
 * smaller value never lowers it. 0, -EINVAL (unknown family or expires
 * not after now), -ENOSPC (full of live entries: not remembered). */
int expiry_note_inflight(struct expiry_map *m, const struct netaddr *a,
			 uint64_t expires, uint64_t now);
int expiry_note_acked(struct expiry_map *m, const struct netaddr *a,
		      uint64_t expires, uint64_t now);
/* Forget a (it was taken out of the set). */
void expiry_forget(struct expiry_map *m, const struct netaddr *a);
/* Forget everything (the set was recreated and is empty). */
void expiry_clear(struct expiry_map *m);
/* Entries stored, expired ones not yet swept included. */
size_t expiry_count(const struct expiry_map *m);
/* The same for one family (AF_INET or AF_INET6). */
size_t expiry_count_family(const struct expiry_map *m, int family);

#endif
