// SPDX-License-Identifier: GPL-2.0-or-later
/* admit: what of an upstream answer the resolver may hand out and put in
 * the sets, and the policy question a reload asks again.
 *
 * These are the resolver's decisions that depend only on the running
 * config, policy and provenance map, not on a pending question: they
 * take those as arguments, so a reload's swap in resolver.c is the only
 * place they change. admit_addrs() is invariants 3 and 5 (no internal
 * address, none of the upstreams' own, leaves in an answer or enters a
 * set); admit_allowed() is the check an answer meets again when it
 * arrives after a reload, and the cache's keep test at the reload;
 * admit_note_prov() records which name brought each address, so that a
 * reload can take out what only removed names brought in. */
#include <errno.h>
#include <string.h>

#include "resolve/admit.h"
#include "dns/dnsmsg.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "config/policy.h"
#include "resolve/prov.h"
#include "sets/sets.h"
#include "base/stats.h"

#define ADMIT_RECS 8192 /* HTTPS/SVCB records judged per answer */

static bool is_upstream(const struct config *cfg, const struct netaddr *a);
static void mark_broken(uint8_t *broken, uint16_t rec);
static bool is_broken(const uint8_t *broken, uint16_t rec);

/* The upstreams' addresses never enter a set (invariant 5): a name
 * answering one would open the allowed ports on the resolver itself. */
static bool is_upstream(const struct config *cfg, const struct netaddr *a)
{
	struct netaddr u;

	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		if (netaddr_from_sockaddr(
			(const struct sockaddr *)&cfg->upstreams[i].sa, &u) &&
		    netaddr_reaches(a, &u))
			return true;
	}
	return false;
}

enum admit_verdict admit_check(const struct config *cfg,
			       const struct netaddr *a)
{
	if (is_upstream(cfg, a))
		return ADMIT_UPSTREAM;
	if (!netaddr_admissible(a, cfg->allow_cidrs, cfg->n_allow_cidrs))
		return ADMIT_INTERNAL;
	return ADMIT_OK;
}

const char *admit_verdict_name(enum admit_verdict v)
{
	return v == ADMIT_UPSTREAM   ? "an upstream's"
	       : v == ADMIT_INTERNAL ? "internal"
				     : "admissible";
}

/* The admissible addresses of addrs, into keep (invariant 3), less the
 * upstreams' own (invariant 5). */
size_t admit_addrs(const struct config *cfg, const uint8_t *qname,
		   size_t qname_len, const struct dns_addr *addrs, size_t n,
		   struct dns_addr *keep)
{
	char name[DNS_NAME_STRLEN], astr[NETADDR_STRLEN];
	uint8_t broken[ADMIT_RECS / 8] = {0};
	size_t nkeep = 0;

	for (size_t i = 0; i < n; i++) {
		enum admit_verdict v = admit_check(cfg, &addrs[i].addr);

		if (v == ADMIT_OK)
			continue;
		mark_broken(broken, addrs[i].rec);
		stats_inc(STAT_ADDR_INTERNAL);
		dns_name_to_text(qname, qname_len, name, sizeof(name));
		netaddr_format(&addrs[i].addr, astr, sizeof(astr));
		log_limited(LOG_CLASS_INTERNAL, LOGL_WARN, "snoop",
			    "%s answered %s address %s: left out of the "
			    "answer and the sets",
			    name, admit_verdict_name(v), astr);
	}
	/* The client's copy drops an HTTPS/SVCB record with such a hint
	 * whole (reply.c): its other hints stay out of the sets too. */
	for (size_t i = 0; i < n; i++) {
		if (admit_check(cfg, &addrs[i].addr) != ADMIT_OK ||
		    is_broken(broken, addrs[i].rec))
			continue;
		keep[nkeep++] = addrs[i];
	}
	return nkeep;
}

static void mark_broken(uint8_t *broken, uint16_t rec)
{
	if (rec > 0 && rec < ADMIT_RECS)
		broken[rec / 8] |= (uint8_t)(1u << (rec % 8));
}

/* A hint of a record the client will not see; records beyond what the
 * bitmap holds count as broken (no real answer has that many). */
static bool is_broken(const uint8_t *broken, uint16_t rec)
{
	if (rec == 0)
		return false;
	return rec >= ADMIT_RECS || (broken[rec / 8] & (1u << (rec % 8))) != 0;
}

/* Would the running policy send this name upstream? (Audit forwards every
 * name.) */
bool admit_allowed(const struct config *cfg, const struct policy *pol,
		   const uint8_t *name, size_t len)
{
	return config_audit_dns_open(cfg) || policy_match(pol, name, len);
}

/* Remember which name put these addresses in the sets, until the entry
 * this answer asks for expires. A full map refuses (-ENOSPC): the answer
 * must not go out, or a reload could not take the address back. */
int admit_note_prov(struct prov *prov, const struct config *cfg,
		    const uint8_t *name, size_t len,
		    const struct dns_addr *addrs, size_t n)
{
	uint64_t now = monotime_s();
	int rc;

	if (prov == NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t t =
		    sets_timeout(addrs[i].ttl, cfg->ttl_min, cfg->ttl_max);

		rc = prov_note(prov, name, len, &addrs[i].addr, now + t, now);
		if (rc == -ENOSPC || rc == -ENOMEM) {
			log_limited(LOG_CLASS_SETS, LOGL_WARN, "prov",
				    "cannot note a set entry's name: %s; "
				    "SERVFAIL",
				    strerror(-rc));
			return rc;
		}
	}
	return 0;
}
