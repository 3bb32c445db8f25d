/* SPDX-License-Identifier: GPL-2.0-or-later */
/* local: the answers the resolver gives without asking upstream (parse
 * errors, zone transfers, other classes, names off the allowlist), and
 * where a client's reply goes. */
#ifndef DNSFENCE_LOCAL_H
#define DNSFENCE_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config/config.h"
#include "dns/dnsmsg.h"
#include "resolve/reply.h"
#include "resolve/replyfn.h"
#include "base/stats.h"

struct budget;
struct policy;
struct policy_hit;

/* Where a reply goes: a copy of the client's address and its transport's
 * callback. */
struct client {
	struct sockaddr_storage peer;
	socklen_t peerlen;
	struct sockaddr_storage local; /* ss_family 0: none */
	unsigned ifindex;	       /* arrived on; 0: not known */
	bool tcp;
	/* denied by the policy, forwarded in audit mode: counted once, as
	 * audit_allowed, whatever its answer (the results partition the
	 * parsed queries: docs/metrics.md) */
	bool audited;
	/* Received at (monotonic ns: the kernel's receive time when known,
	 * else the read; 0: not known), read at (its batch's read, the
	 * start of the to_upstream stage), and the path its answer took:
	 * the histogram its reply is counted in (STATS_H_CACHED ...). */
	uint64_t recv_ns, read_ns;
	enum stats_hist path;
	resolver_reply_fn fn;
	void *ctx;
};

void local_client_init(struct client *c, const struct sockaddr *peer,
		       socklen_t peerlen, const struct sockaddr *local,
		       bool tcp, resolver_reply_fn fn, void *ctx);
/* Hand msg to c's transport; rq is the pending query it completes, or
 * NULL for an immediate reply. */
void local_send(const struct client *c, struct rquery *rq, const uint8_t *msg,
		size_t len);
/* Send the client's copy of an answer (reply_render of v for q), or
 * SERVFAIL when it cannot be rendered; counts the result (STAT_ANSWERS,
 * or STAT_CACHE_HIT when v->cached). rq as for local_send. */
void local_send_answer(const struct reply_view *v, const struct dns_query *q,
		       const struct client *c, struct rquery *rq);
/* Reply rcode to q (with an Extended DNS Error when ede is not
 * DNS_EDE_NONE and the client speaks EDNS). Counts SERVFAIL. */
void local_reply(const struct dns_query *q, const struct client *c,
		 struct rquery *rq, enum dns_rcode rcode, uint16_t ede,
		 const char *ede_text);
/* The reply to a query that did not parse (pr != DNS_PARSE_OK), if any. */
void local_parse_error(enum dns_parse pr, const uint8_t *msg, size_t len,
		       const struct dns_query *q, const struct client *c);
/* Answer q here when it is a zone transfer, of a class other than IN,
 * (mode enforce) off the allowlist or beyond wildcard_budget's depth and
 * label caps, or of a type not forwarded (qtype.c); true when it was. Logs
 * denied names (rate-limited; search-list expansions of allowed names at
 * debug). hit: how pol matched q's name (policy_match_hit, done once per
 * query by the caller), NULL when it did not. A name audit mode forwards
 * though the policy denies it sets c->audited. */
bool local_answer(const struct config *cfg, const struct policy *pol,
		  const struct dns_query *q, struct client *c,
		  const struct policy_hit *hit);
/* A new upstream question (neither cached nor in flight) for a name
 * below a wildcard (hit, as for local_answer) takes a token of the
 * wildcard's budget (budget.c); over it, REFUSED with EDE 18 here, true
 * (audit: logged, counted, false). Logs one line per bucket and window. */
bool local_over_budget(const struct config *cfg, struct budget *b,
		       const struct dns_query *q, const struct client *c,
		       const struct policy_hit *hit);
/* Is q an allowed name with labels appended (a resolv.conf search list
 * at work)? */
bool local_search_suffix(const struct policy *pol, const struct dns_query *q);
/* An event's first fields (base/log.h) into f (LOCAL_FIELDS_MAX, room
 * left for the caller's reason, entry and rcode): event, name, qtype,
 * client, proto and, for a loopback client whose socket the kernel still
 * knows, its uid (sockuid.c; *uid holds it). Returns the count. */
#define LOCAL_FIELDS_MAX 10
struct log_field;
size_t local_query_fields(struct log_field *f, const char *event,
			  const char *name, const char *type,
			  const char *client, const struct client *c,
			  uint32_t *uid);
/* Name, type and client of q as text, for log lines. */
void local_describe(const struct dns_query *q, const struct sockaddr *peer,
		    char *name, size_t namecap, char *type, size_t typecap,
		    char *client, size_t clientcap);

#endif
