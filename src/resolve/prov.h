/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prov: the provenance of the set entries, for reload's eviction
 * (invariant 9). For each address the daemon put into the sets it
 * remembers which queried names' answers put it there, and until when
 * (monotonic seconds, the timeout each answer asked for). When the
 * policy changes, an address goes only if every name that put it there
 * is no longer allowed: an address that a still-allowed name also
 * answered stays.
 *
 * Bounded: at most `max` (address, name) links. Expired links are
 * dropped on the way (when their address is noted again, at eviction,
 * and by a sweep when the bound is reached, at most once a second). A
 * full map of live links refuses a new one (-ENOSPC): the caller must
 * then not hand the address out (fail closed), or eviction could miss
 * it. Memory: an address with one name costs a 16-byte entry (IPv4) or
 * a 28-byte one (IPv6) and 2-4 bytes of hash bucket, nothing allocated
 * of its own; one with more names 8 bytes per link more (and an 8-byte
 * directory slot); a name costs 13 bytes plus its first label's wire
 * length, rounded to 4 (20 for n12345.uniq.bench.test.), and 2-4 of
 * bucket, shared by all its addresses; the rest of a name of two labels
 * or more, its zone, is kept once for all the names under it (13 bytes
 * plus its wire length, and a bucket). 100k live addresses, names shared
 * by two (an A and an AAAA answer) under one zone: about 3.8 MiB
 * resident (bench_prov). */
#ifndef DNSFENCE_PROV_H
#define DNSFENCE_PROV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

struct prov;

/* The bound for sets of maxelem entries each: two links per entry of
 * both sets, at least 65536, at most 2^26. */
size_t prov_max_for(uint32_t maxelem);
/* A map for at most max links (1 .. 2^26); NULL on a bad max or ENOMEM. */
struct prov *prov_new(size_t max);
void prov_free(struct prov *p);

/* The answer for name (uncompressed wire format, lower case, len bytes
 * up to and including the root label) put a in the sets until expires
 * (monotonic seconds, after now). A later note for the same pair only
 * lengthens it. 0, -EINVAL (bad name, family or expires), -ENOSPC (the
 * bound is reached with live links: not noted), -ENOMEM. */
int prov_note(struct prov *p, const uint8_t *name, size_t len,
	      const struct netaddr *a, uint64_t expires, uint64_t now);

/* Did the answer for name (wire format, as noted) put a in the sets, with
 * a link still live at now? The name check asks this of a flow's server
 * name and destination. Never changes the map. */
bool prov_answered(const struct prov *p, const uint8_t *name, size_t len,
		   const struct netaddr *a, uint64_t now);

/* Is this name (wire format, as noted) still allowed? */
typedef bool (*prov_allowed_fn)(void *arg, const uint8_t *name, size_t len);
/* Called once per address to take out of the sets. */
typedef netaddr_fn prov_evict_fn;

/* Judge every name once with allowed(). Every address that some
 * no-longer-allowed name put in the sets and that no still-allowed name
 * holds with a live link is passed to evict(); the links of the names no
 * longer allowed are forgotten, and so are the names. Returns the number
 * of addresses passed to evict(). */
size_t prov_evict(struct prov *p, prov_allowed_fn allowed, void *aarg,
		  prov_evict_fn evict, void *earg, uint64_t now);

/* The entries to cut short: an address that kept names still hold gets
 * the longest expiry among their live links (not a removed name's), and
 * no expiry beyond cap (monotonic seconds; 0: none), the kept links
 * themselves cut to cap; fn is told each address whose entry must now
 * end sooner than it may, with when. */
typedef void (*prov_shorten_fn)(void *arg, const struct netaddr *a,
				uint64_t expires);
/* Does the new config refuse a whatever name answered it (an internal
 * range allow_cidrs no longer covers, a new upstream's address:
 * admit_check)? Then a is passed to evict() and its links are forgotten,
 * still-allowed names' too. */
typedef bool (*prov_refused_fn)(void *arg, const struct netaddr *a);
struct prov_shorten {
	prov_shorten_fn fn; /* NULL: cut nothing */
	void *arg;
	uint64_t cap;
	prov_refused_fn refused; /* NULL: no address refused as such */
};
/* prov_evict, and the cuts sh asks for, in the same pass. */
size_t prov_evict_shorten(struct prov *p, prov_allowed_fn allowed, void *aarg,
			  prov_evict_fn evict, void *earg,
			  const struct prov_shorten *sh, uint64_t now);
/* Called once per live link: the name (wire format), the address it put
 * in the sets, and the seconds left of the timeout its answer asked for. */
typedef void (*prov_walk_fn)(void *arg, const uint8_t *name, size_t len,
			     const struct netaddr *a, uint64_t left_s);
/* Every live link, in no order; changes nothing (for `dnsfence entries`).
 * O(addresses + links). */
void prov_walk(const struct prov *p, prov_walk_fn fn, void *arg, uint64_t now);
/* Call fn for every link of a that is live at now (fn may be NULL), as
 * prov_walk does; returns how many there are. */
size_t prov_links_of(const struct prov *p, const struct netaddr *a,
		     prov_walk_fn fn, void *arg, uint64_t now);

/* The latest expiry among a's links live at now (monotonic seconds), 0
 * when it has none: the longest any answer asked for a's entry, which an
 * add for a must not cut (invariant 4: the sets' floor, sets_set_floor).
 * O(a's links). */
uint64_t prov_expires(const struct prov *p, const struct netaddr *a,
		      uint64_t now);

/* Forget everything (the sets were recreated and are empty). */
void prov_clear(struct prov *p);

size_t prov_addresses(const struct prov *p);
size_t prov_names(const struct prov *p);
size_t prov_links(const struct prov *p);

#endif
