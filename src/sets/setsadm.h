/* SPDX-License-Identifier: GPL-2.0-or-later */
/* setsadm: creating, checking and destroying the kernel ipsets through
 * libipset. Blocking: for setup, check, teardown and the guard's child,
 * never the event loop (the adds are sets.h). */
#ifndef DNSFENCE_SETSADM_H
#define DNSFENCE_SETSADM_H

#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

/* Create both sets (hash:ip, inet / inet6, with timeout, maxelem), or
 * accept existing ones of exactly that type and family with timeout
 * support. A set of the wrong kind is -EEXIST with err naming it. */
int setsadm_create(const char *set4, const char *set6, uint32_t maxelem,
		   char *err, size_t errlen);
/* Do both sets exist with the right type, family and timeout support?
 * 0, or -ENOENT / -EEXIST with err naming the set and the difference. */
int setsadm_check(const char *set4, const char *set6, char *err, size_t errlen);
/* The same for the client sets of the forward scope (SETS_CLIENT_TYPE:
 * entries of client, proto:port, answered address; sets.h). Destroy and
 * flush them with setsadm_destroy and setsadm_flush. */
int setsadm_create_clients(const char *c4, const char *c6, uint32_t maxelem,
			   char *err, size_t errlen);
int setsadm_check_clients(const char *c4, const char *c6, char *err,
			  size_t errlen);
int setsadm_destroy(const char *set4, const char *set6, char *err,
		    size_t errlen);
/* Remove every entry of both sets (a missing set is no error). */
int setsadm_flush(const char *set4, const char *set6, char *err, size_t errlen);
/* Call fn for every address in set name (blocking; `ipset save`). fn
 * has prov_evict_fn's shape, netaddr_fn (base/netaddr.h). 0, or -errno
 * with err set. */
int setsadm_members(const char *name, netaddr_fn fn, void *arg, char *err,
		    size_t errlen);
/* Delete these addresses from set name (missing ones are no error), in
 * one restore stream. 0, or -errno with err set. */
int setsadm_del(const char *name, const struct netaddr *addrs, size_t n,
		char *err, size_t errlen);

/* Add these addresses to set name (present ones are no error), in one
 * restore stream, without a timeout. 0, or -errno with err set. */
int setsadm_put(const char *name, const struct netaddr *addrs, size_t n,
		char *err, size_t errlen);
/* Create set name as hash:ip family inet6 without timeout (entries that
 * stay until deleted), or accept an existing one of exactly that kind;
 * another kind is -EEXIST with err naming it. */
int setsadm_create_plain(const char *name, uint32_t maxelem, char *err,
			 size_t errlen);
/* Destroy set name if it exists (a set in use by a rule cannot go). */
int setsadm_destroy_one(const char *name, char *err, size_t errlen);

/* Entries in set name now, as the kernel counts them (expired ones not
 * yet garbage-collected included). 0, -EINVAL or -EIO. Blocks briefly:
 * the metrics endpoint calls it at most once a second. */
int setsadm_count(const char *name, uint64_t *n);

#endif
