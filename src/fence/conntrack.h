/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conntrack: deleting this network namespace's conntrack entries towards
 * addresses that stop being upstreams (ctnetlink over libmnl), so that no
 * flow the daemon opened to a replaced upstream outlives the rules that
 * demanded the daemon's mark on it (invariant 5). */
#ifndef DNSFENCE_CONNTRACK_H
#define DNSFENCE_CONNTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

/* Delete every entry whose ORIGINAL destination is one of the n addresses
 * (any protocol, port, state, zone). Blocking: one dump of the table, then
 * one delete per entry found. 0 with *deleted set, or -errno with err
 * saying what failed (the entries may then still be there). Needs
 * CAP_NET_ADMIN in the namespace. */
int conntrack_forget(const struct netaddr *addrs, size_t n, size_t *deleted,
		     char *err, size_t errlen);

/* The parse behind conntrack_forget, on one message of a dump: does the
 * entry's original destination equal one of addrs? When it does, *tuple
 * and *tuple_len point at the CTA_TUPLE_ORIG attribute (header included)
 * inside buf, and *zone is the entry's zone (0 when none). False for a
 * message that is malformed or not a conntrack entry. */
bool conntrack_entry_matches(const void *buf, size_t len,
			     const struct netaddr *addrs, size_t n,
			     const void **tuple, size_t *tuple_len,
			     uint16_t *zone, bool *has_zone);

#endif
