/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mldset: the solicited-node groups of the namespace's own IPv6
 * addresses, the only groups rule 4 lets an MLD report announce (see
 * mldset.c). */
#ifndef DNSFENCE_MLDSET_H
#define DNSFENCE_MLDSET_H

#include <stddef.h>

#include "base/netaddr.h"
#include "config/config.h"

/* At most this many groups (addresses beyond it: their reports stay in). */
#define MLDSET_MAX 1024
/* The set's name: sets.ipv6 (cut to 27 bytes) and "-mld". */
#define MLDSET_NAME_MAX 32
void mldset_name(const struct config *cfg, char *buf, size_t cap);
/* The solicited-node group of a (AF_INET6): ff02::1:ff and its low 24
 * bits (RFC 4291 2.7.1). Pure. */
void mldset_group(const struct netaddr *a, struct netaddr *group);
/* Create the set if it is missing, then make its members exactly the
 * groups of the IPv6 addresses on this namespace's interfaces (and its
 * anycast addresses), as the kernel lists them now. Blocking (netlink
 * dump, libipset): setup, and the parent once a second. Returns the
 * number of groups added and removed, or -errno with err set. */
int mldset_sync(const struct config *cfg, char *err, size_t errlen);
/* Destroy the set (teardown, after the rules that name it are gone). */
int mldset_destroy(const struct config *cfg, char *err, size_t errlen);

#endif
