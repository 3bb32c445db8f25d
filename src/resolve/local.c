// SPDX-License-Identifier: GPL-2.0-or-later
/* local: what the resolver answers itself.
 *
 * A denied name, a class other than IN (CH, HS, ANY: the upstream would
 * refuse them, and nothing in them is for the fence to forward), a zone
 * transfer, a query type that is not forwarded (qtype.c: meta and
 * private-use types, ANY per RFC 8482, data types neither common nor in
 * `qtypes`) and a query that does not parse are answered here, and
 * nothing about them leaves the machine (invariant 1). Denied names are logged
 * through the rate limit of log.c: a flood of them costs a bounded number
 * of lines, and the counters keep the exact count. A denied name that is
 * an allowed name plus a search-list suffix (glibc and musl try
 * "www.example.com.default.svc.cluster.local" before "www.example.com"
 * with ndots:5) is logged at debug: it is noise, not an attempt.
 *
 * Every reply is built in a buffer of the function that sends it. */
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "observe/learn.h"
#include "resolve/budget.h"
#include "resolve/local.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "dns/qtype.h"
#include "base/log.h"
#include "config/policy.h"
#include "resolve/reply.h"
#include "base/stats.h"
#include "observe/sockuid.h"

#define LOCAL_MAX    2048 /* header, question, OPT, EDE */
#define DNS_CLASS_IN 1

static bool denied(const struct config *cfg, const struct policy *pol,
		   const struct dns_query *q, const struct policy_hit *hit,
		   struct client *c, char *why, size_t whylen);
static bool beyond_caps(const struct config *cfg, const struct dns_query *q,
			const struct policy_hit *hit, char *why, size_t whylen);
static bool unforwarded_type(const struct config *cfg,
			     const struct dns_query *q, const struct client *c);
static bool own_probe(const char *name);
static unsigned budget_iface(const struct config *cfg, const struct client *c);
static void budget_all(const struct config *cfg, const struct client *c,
		       char *buf, size_t len);
static void lower_ascii(char *s);

void local_client_init(struct client *c, const struct sockaddr *peer,
		       socklen_t peerlen, const struct sockaddr *local,
		       bool tcp, resolver_reply_fn fn, void *ctx)
{
	if (peerlen > sizeof(c->peer))
		peerlen = sizeof(c->peer);
	memcpy(&c->peer, peer, peerlen);
	memset(&c->local, 0, sizeof(c->local));
	if (local != NULL && local->sa_family == AF_INET)
		memcpy(&c->local, local, sizeof(struct sockaddr_in));
	else if (local != NULL && local->sa_family == AF_INET6)
		memcpy(&c->local, local, sizeof(struct sockaddr_in6));
	c->peerlen = peerlen;
	c->ifindex = 0;
	c->tcp = tcp;
	c->audited = false;
	c->recv_ns = 0;
	c->read_ns = 0;
	c->path = STATS_H_LOCAL;
	c->fn = fn;
	c->ctx = ctx;
}

void local_send(const struct client *c, struct rquery *rq, const uint8_t *msg,
		size_t len)
{
	const struct sockaddr *local = (const struct sockaddr *)&c->local;
	uint64_t now = c->recv_ns != 0 ? monotime_ns() : 0;

	if (now > c->recv_ns)
		stats_hist_ns(c->path, now - c->recv_ns);
	c->fn(c->ctx, rq, (const struct sockaddr *)&c->peer, c->peerlen,
	      local->sa_family != 0 ? local : NULL, msg, len);
}

void local_send_answer(const struct reply_view *v, const struct dns_query *q,
		       const struct client *c, struct rquery *rq)
{
	uint8_t out[DNS_MAX_UDP + 1];
	ssize_t n = reply_render(v, q, c->tcp, out, sizeof(out));

	if (n < 0) {
		local_reply(q, c, rq, DNS_RCODE_SERVFAIL, DNS_EDE_NONE, NULL);
		return;
	}
	if (!c->audited)
		stats_inc(v->cached ? STAT_CACHE_HIT : STAT_ANSWERS);
	local_send(c, rq, out, (size_t)n);
}

void local_reply(const struct dns_query *q, const struct client *c,
		 struct rquery *rq, enum dns_rcode rcode, uint16_t ede,
		 const char *ede_text)
{
	uint8_t out[LOCAL_MAX];
	ssize_t n =
	    dnsmsg_build_reply(q, rcode, ede, ede_text, out, sizeof(out));

	if (rcode == DNS_RCODE_SERVFAIL && !c->audited)
		stats_inc(STAT_SERVFAIL);
	if (n > 0)
		local_send(c, rq, out, (size_t)n);
}

void local_parse_error(enum dns_parse pr, const uint8_t *msg, size_t len,
		       const struct dns_query *q, const struct client *c)
{
	uint8_t out[LOCAL_MAX];
	ssize_t n = -1;

	stats_inc(STAT_MALFORMED);
	if (pr == DNS_PARSE_FORMERR || pr == DNS_PARSE_NOTIMP)
		n = dnsmsg_build_header_error(msg, len,
					      pr == DNS_PARSE_NOTIMP
						  ? DNS_RCODE_NOTIMP
						  : DNS_RCODE_FORMERR,
					      out, sizeof(out));
	else if (pr == DNS_PARSE_BADVERS)
		n = dnsmsg_build_badvers(q, out, sizeof(out));
	if (n > 0)
		local_send(c, NULL, out, (size_t)n);
}

/* Zone transfers, classes other than IN and names off the allowlist are
 * answered here; true when q was. */
bool local_answer(const struct config *cfg, const struct policy *pol,
		  const struct dns_query *q, struct client *c,
		  const struct policy_hit *hit)
{
	char text[2 * DNS_NAME_STRLEN + 96];

	if (q->qtype == DNS_TYPE_AXFR || q->qtype == DNS_TYPE_IXFR) {
		stats_inc(STAT_ANSWERED_LOCAL);
		local_reply(q, c, NULL, DNS_RCODE_NOTIMP, DNS_EDE_NONE, NULL);
		return true;
	}
	if (q->qclass != DNS_CLASS_IN) {
		stats_inc(STAT_NOT_IN);
		stats_inc(STAT_ANSWERED_LOCAL);
		local_reply(q, c, NULL, DNS_RCODE_REFUSED,
			    DNS_EDE_NOT_SUPPORTED,
			    "dnsfence forwards class IN only");
		return true;
	}
	if (!denied(cfg, pol, q, hit, c, text, sizeof(text)))
		return unforwarded_type(cfg, q, c);
	local_reply(q, c, NULL,
		    cfg->deny_rcode == CONFIG_DENY_REFUSED ? DNS_RCODE_REFUSED
							   : DNS_RCODE_NXDOMAIN,
		    DNS_EDE_BLOCKED, text);
	return true;
}

/* An allowed name asked with a type that does not go upstream (qtype.c):
 * ANY gets RFC 8482's HINFO, the rest REFUSED with EDE 21. Audit mode
 * logs what enforce would answer here and forwards. True when q was
 * answered. */
static bool unforwarded_type(const struct config *cfg,
			     const struct dns_query *q, const struct client *c)
{
	enum qtype_verdict v =
	    qtype_judge(q->qtype, cfg->qtypes, cfg->n_qtypes);
	char text[DNS_NAME_STRLEN + 96], name[DNS_NAME_STRLEN],
	    type[QTYPE_STRLEN];
	uint8_t out[LOCAL_MAX];
	ssize_t n;

	if (v == QTYPE_FORWARD)
		return false;
	dns_name_to_text(q->name, q->name_len, name, sizeof(name));
	qtype_name(q->qtype, type, sizeof(type));
	if (config_audit_dns_open(cfg)) {
		log_limited(LOG_CLASS_AUDIT, LOGL_WARN, "resolver",
			    "audit: %s %s would be answered locally (qtype not "
			    "forwarded)",
			    name, type);
		return false;
	}
	stats_inc(STAT_QTYPE_LOCAL);
	stats_inc(STAT_ANSWERED_LOCAL);
	if (v == QTYPE_ANY) {
		n = dnsmsg_build_rfc8482(q, out, sizeof(out));
		if (n > 0)
			local_send(c, NULL, out, (size_t)n);
		return true;
	}
	snprintf(text, sizeof(text), "dnsfence does not forward %s queries%s",
		 type,
		 v == QTYPE_META ? " (meta or private-use type)"
				 : " (not in qtypes)");
	local_reply(q, c, NULL, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, text);
	return true;
}

/* Must q be refused? Logs the verdict for a name off the allowlist:
 * in audit mode it is forwarded after all (false). A search-list
 * expansion of an allowed name ("www.example.com.svc.cluster.local") is
 * logged at debug only: every lookup of an allowed name makes some.
 * why, the answer's EDE text, is made for every refusal; the log line's
 * type and client only when its class's rate limit lets it out, since a
 * flood of denied names would otherwise format them all for nothing. */
static bool denied(const struct config *cfg, const struct policy *pol,
		   const struct dns_query *q, const struct policy_hit *hit,
		   struct client *c, char *why, size_t whylen)
{
	const struct sockaddr *peer = (const struct sockaddr *)&c->peer;
	char name[DNS_NAME_STRLEN], type[16], client[NETADDR_ENDPOINT_STRLEN],
	    entry[DNS_NAME_STRLEN];
	bool audit = config_audit_dns_open(cfg);
	enum log_level level = LOGL_WARN;
	struct log_field f[LOCAL_FIELDS_MAX];
	uint32_t uid;
	bool probe;
	size_t n;

	if (hit != NULL && !beyond_caps(cfg, q, hit, why, whylen))
		return false;
	dns_name_to_text(q->name, q->name_len, name, sizeof(name));
	if (hit == NULL) {
		char lower[DNS_NAME_STRLEN];

		/* The rule, and the entries that would admit the name: a
		 * program (an agent) can act on it. */
		memcpy(lower, name, strlen(name) + 1);
		lower_ascii(lower);
		policy_admitting("not in allow; ", lower, why, whylen);
	}
	probe = own_probe(name);
	/* A new name's asker, once: sock_diag is asked for no repeat. */
	if (!probe && learn_name(name, q->qtype, q->id) &&
	    sockuid_lookup(peer, (const struct sockaddr *)&c->local, c->tcp,
			   &uid) == 0)
		learn_name_uid(name, uid);
	stats_inc(audit ? STAT_AUDIT_ALLOWED : STAT_DENIED);
	c->audited = audit;
	/* (a hit that comes here is beyond the budget's caps); our own
	 * probe is no workload's denial: at debug, like a search suffix */
	if (!audit && cfg->mode != CONFIG_MODE_AUDIT && hit == NULL &&
	    (probe || local_search_suffix(pol, q)))
		level = LOGL_DEBUG;
	if (!log_limited_take(audit ? LOG_CLASS_AUDIT : LOG_CLASS_DENIED, level,
			      "policy"))
		return !audit;
	local_describe(q, peer, name, sizeof(name), type, sizeof(type), client,
		       sizeof(client));
	n = local_query_fields(f, "query_denied", name, type, client, c, &uid);
	f[n++] = log_str("reason", hit != NULL		 ? "wildcard_caps"
				   : level != LOGL_DEBUG ? "not_allowed"
				   : probe		 ? "own_probe"
							 : "search_suffix");
	if (hit == NULL) {
		memcpy(entry, name, strlen(name) + 1);
		lower_ascii(entry);
		f[n++] = log_str("entry", entry);
	}
	f[n++] = log_str("rcode", audit ? "forwarded"
				  : cfg->deny_rcode == CONFIG_DENY_REFUSED
				      ? "REFUSED"
				      : "NXDOMAIN");
	log_fields(f, n);
	if (audit)
		log_warn("policy",
			 "audit: would deny %s %s from %s (%s); forwarding",
			 name, type, client, why);
	else if (cfg->mode == CONFIG_MODE_AUDIT)
		log_warn("policy",
			 "audit: denied %s %s from %s (%s); answered locally "
			 "(audit_denied \"local\")",
			 name, type, client, why);
	else if (hit != NULL && hit->depth > 0)
		log_warn("policy", "denied %s %s from %s: %s", name, type,
			 client, why);
	else if (level == LOGL_DEBUG && probe)
		log_debug("policy",
			  "denied %s %s from %s: dnsfence's own probe", name,
			  type, client);
	else if (level == LOGL_DEBUG)
		log_debug("policy",
			  "denied %s %s from %s: an allowed name with a "
			  "search-list suffix",
			  name, type, client);
	else
		log_warn("policy", "denied %s %s from %s: not on the allowlist",
			 name, type, client);
	return !audit;
}

/* A name below a wildcard with more labels, or a longer label, than
 * wildcard_budget lets through: why says which. */
static bool beyond_caps(const struct config *cfg, const struct dns_query *q,
			const struct policy_hit *hit, char *why, size_t whylen)
{
	char name[DNS_NAME_STRLEN], wild[DNS_NAME_STRLEN];

	if (hit->depth == 0 || (hit->depth <= cfg->budget_depth_max &&
				hit->label_max <= cfg->budget_label_max))
		return false;
	dns_name_to_text(q->name, q->name_len, name, sizeof(name));
	dns_name_to_text(q->lname + hit->suffix_off,
			 q->name_len - hit->suffix_off, wild, sizeof(wild));
	if (hit->depth > cfg->budget_depth_max)
		snprintf(why, whylen,
			 "%s is %zu labels below *.%s, more than "
			 "wildcard_budget.depth_max (%u)",
			 name, hit->depth, wild, cfg->budget_depth_max);
	else
		snprintf(why, whylen,
			 "%s has a label of %u bytes below *.%s, more than "
			 "wildcard_budget.label_max (%u)",
			 name, hit->label_max, wild, cfg->budget_label_max);
	return true;
}

/* The interface whose clients share a wildcard budget: the one the
 * question came in on in the forward scope (each fenced interface its
 * own), none in the output scope (one namespace, one budget). */
static unsigned budget_iface(const struct config *cfg, const struct client *c)
{
	return cfg->scope == CONFIG_SCOPE_FORWARD ? c->ifindex : 0;
}

/* Who shares an entry's bucket, for the log line. */
static void budget_all(const struct config *cfg, const struct client *c,
		       char *buf, size_t len)
{
	char ifn[IF_NAMESIZE];
	unsigned i = budget_iface(cfg, c);

	if (i == 0)
		snprintf(buf, len, "all clients together");
	else if (if_indextoname(i, ifn) != NULL)
		snprintf(buf, len, "all clients of interface %s together", ifn);
	else
		snprintf(buf, len, "all clients of interface #%u together", i);
}

bool local_over_budget(const struct config *cfg, struct budget *b,
		       const struct dns_query *q, const struct client *c,
		       const struct policy_hit *hit)
{
	const struct budget_params bp = {cfg->budget_burst,
					 cfg->budget_per_minute};
	const struct sockaddr *peer = (const struct sockaddr *)&c->peer;
	char name[DNS_NAME_STRLEN], wild[DNS_NAME_STRLEN], type[16],
	    who[NETADDR_STRLEN] = "?", text[DNS_NAME_STRLEN + 96],
	    all[IF_NAMESIZE + 40];
	bool audit = config_audit_dns_open(cfg);
	struct budget_refusal why;
	struct netaddr a;

	if (b == NULL || hit == NULL || hit->depth == 0 ||
	    budget_take_on(b, &bp, q->lname + hit->suffix_off,
			   q->name_len - hit->suffix_off, peer,
			   budget_iface(cfg, c), monotime_ms(), &why))
		return false;
	stats_inc(audit ? STAT_BUDGET_AUDIT : STAT_BUDGET_REFUSED);
	dns_name_to_text(q->lname + hit->suffix_off,
			 q->name_len - hit->suffix_off, wild, sizeof(wild));
	if (why.log_now) {
		dns_name_to_text(q->name, q->name_len, name, sizeof(name));
		dns_type_name(q->qtype, type, sizeof(type));
		if (netaddr_from_sockaddr(peer, &a))
			netaddr_format(&a, who, sizeof(who));
		budget_all(cfg, c, all, sizeof(all));
		log_warn("policy",
			 "%snew-name budget of *.%s used up by %s (%u at once, "
			 "%u a minute%s): %s %s %s; %" PRIu64
			 " more since the last line",
			 audit ? "audit: " : "", wild, why.by_entry ? all : who,
			 bp.burst * (why.by_entry ? BUDGET_ENTRY_FACTOR : 1),
			 bp.per_minute *
			     (why.by_entry ? BUDGET_ENTRY_FACTOR : 1),
			 why.by_entry ? "" : " per client", name, type,
			 audit ? "would be refused; forwarding" : "refused",
			 why.before);
	}
	if (audit)
		return false;
	stats_inc(STAT_DENIED);
	snprintf(text, sizeof(text),
		 "dnsfence: the new-name budget of *.%s is used up", wild);
	local_reply(q, c, NULL, DNS_RCODE_REFUSED, DNS_EDE_PROHIBITED, text);
	return true;
}

/* Is q an allowed name with labels appended (a resolv.conf search list
 * at work)? Tries every proper prefix of whole labels. */
bool local_search_suffix(const struct policy *pol, const struct dns_query *q)
{
	uint8_t prefix[DNS_MAX_NAME];
	size_t off = 0;

	while (off < q->name_len && q->lname[off] != 0) {
		off += 1u + q->lname[off];
		if (off >= q->name_len || q->lname[off] == 0)
			break;
		memcpy(prefix, q->lname, off);
		prefix[off] = 0;
		if (policy_match(pol, prefix, off + 1))
			return true;
	}
	return false;
}

void local_describe(const struct dns_query *q, const struct sockaddr *peer,
		    char *name, size_t namecap, char *type, size_t typecap,
		    char *client, size_t clientcap)
{
	dns_name_to_text(q->name, q->name_len, name, namecap);
	dns_type_name(q->qtype, type, typecap);
	netaddr_format_endpoint(peer, client, clientcap);
}

size_t local_query_fields(struct log_field *f, const char *event,
			  const char *name, const char *type,
			  const char *client, const struct client *c,
			  uint32_t *uid)
{
	size_t n = 0;

	f[n++] = log_str("event", event);
	f[n++] = log_str("name", name);
	f[n++] = log_str("qtype", type);
	f[n++] = log_str("client", client);
	f[n++] = log_str("proto", c->tcp ? "tcp" : "udp");
	if (sockuid_lookup((const struct sockaddr *)&c->peer,
			   (const struct sockaddr *)&c->local, c->tcp,
			   uid) == 0)
		f[n++] = log_num("uid", (int64_t)*uid);
	return n;
}

static void lower_ascii(char *s)
{
	for (; *s != '\0'; s++) {
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
	}
}

/* dnsfence's own probes (`probe`, the self-test) ask names below
 * POLICY_PROBE_DOMAIN: denied like any other, never learned. */
static bool own_probe(const char *name)
{
	size_t n = strlen(name), d = strlen(POLICY_PROBE_DOMAIN);

	return n > d && name[n - d - 1] == '.' &&
	       strcasecmp(name + n - d, POLICY_PROBE_DOMAIN) == 0;
}
