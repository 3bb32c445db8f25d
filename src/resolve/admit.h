/* SPDX-License-Identifier: GPL-2.0-or-later */
/* admit: the resolver's decisions on an upstream answer that depend only
 * on the running config, policy and provenance map.
 *
 * Contract: the caller passes the config and policy it runs now (after a
 * reload, the new ones); nothing here keeps state between calls. Every
 * address a client is handed or the sets receive has passed
 * admit_addrs() (invariants 3 and 5), and, when provenance is kept, been
 * noted by admit_note_prov() before it goes to the sets. */
#ifndef DNSFENCE_ADMIT_H
#define DNSFENCE_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "dns/dnsrr.h"

struct policy;
struct prov;

/* Would the running policy send this name (wire form, lower case)
 * upstream? In audit mode every name is. */
bool admit_allowed(const struct config *cfg, const struct policy *pol,
		   const uint8_t *name, size_t len);
/* May a enter a set (invariants 3 and 5)? The one judgement both the
 * resolver (admit_addrs) and the privileged set writer, which judges
 * every address the DNS process asks it to add again, make. */
enum admit_verdict {
	ADMIT_OK = 0,
	ADMIT_INTERNAL, /* an internal range, not covered by allow_cidrs */
	ADMIT_UPSTREAM, /* one of the upstreams' addresses (or a form of it) */
};
enum admit_verdict admit_check(const struct config *cfg,
			       const struct netaddr *a);
/* "internal", "an upstream's" (for a log line). */
const char *admit_verdict_name(enum admit_verdict v);
/* The admissible addresses of addrs into keep (room for n; keep may be
 * addrs itself), in order:
 * internal ones (netaddr_admissible, allow_cidrs excepted) and the
 * upstreams' own are left out, counted and logged with qname, and so are
 * the other hints of an HTTPS/SVCB record that had one (the client's
 * copy drops that record whole). Returns how many were kept. */
size_t admit_addrs(const struct config *cfg, const uint8_t *qname,
		   size_t qname_len, const struct dns_addr *addrs, size_t n,
		   struct dns_addr *keep);
/* Note name as the origin of each address until its set entry expires.
 * 0 when noted or prov is NULL; -ENOSPC or -ENOMEM when the map refuses,
 * and then the answer must not go out (SERVFAIL). */
int admit_note_prov(struct prov *prov, const struct config *cfg,
		    const uint8_t *name, size_t len,
		    const struct dns_addr *addrs, size_t n);

#endif
