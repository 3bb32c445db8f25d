// SPDX-License-Identifier: GPL-2.0-or-later
/* resolver: the life of one client query.
 *
 * A query that parses is checked against the policy. A denied name is
 * answered here (deny_rcode, with an Extended DNS Error when the client
 * speaks EDNS) and nothing about it leaves the machine (invariant 1). An
 * allowed name joins the pending upstream question with the same key
 * (name, type, class, DO, CD) or starts one: a query built afresh by
 * dnsmsg with a random ID and our own EDNS (invariant 5).
 *
 * When the upstream answers, the answer is snooped once for the addresses
 * it hands out; internal ones are dropped (invariant 3), the rest go to
 * the kernel sets, and only when the kernel has acked them all does each
 * waiting client get its rewritten copy (invariant 2). A failed add, a
 * malformed answer or an upstream failure is SERVFAIL.
 *
 * Answers are cached for their smallest TTL (capped at ttl.max). A hit
 * takes the same road from the kernel step on: its addresses are offered
 * to the sets again (the never-shorten map makes that free when their
 * entries already live long enough, and puts them back when the set was
 * flushed), and the client's copy carries TTLs reduced by the entry's age.
 *
 * A reload swaps the config and the policy between two queries
 * (resolver_set_policy). A question already upstream is judged again
 * when its answer arrives: a name the new policy denies gets the deny
 * answer, and nothing of it reaches the sets. Every address put into the
 * sets is noted with the name that put it there (prov.c), so that a
 * reload can take out what only removed names brought in.
 *
 * Ownership: a struct pending owns its waiting rqueries and its copy of
 * the answer; free_pending() releases all of it. An rquery is freed after
 * its reply is sent or when its transport cancels it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>

#include "dnsfence/cache.h"
#include "dnsfence/dnsmsg.h"
#include "dnsfence/log.h"
#include "dnsfence/policy.h"
#include "dnsfence/prov.h"
#include "dnsfence/resolver.h"
#include "dnsfence/sets.h"
#include "dnsfence/stats.h"
#include "dnsfence/upstream.h"

#define PENDING_BUCKETS 4096 /* power of two */
#define KEY_MAX		(DNS_MAX_NAME + 6)
#define SNOOP_MAX	512
#define CACHE_ENTRIES	4096
#define CACHE_BYTES	(1u << 20)

struct pending;

struct rquery {
	TAILQ_ENTRY(rquery) link;
	struct pending *p;
	struct dns_query q;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	bool tcp;
	resolver_reply_fn fn;
	void *ctx;
};

TAILQ_HEAD(rquery_list, rquery);

/* What the client's copy of an answer may carry. */
struct keep_ctx {
	struct resolver *r;
	uint32_t age;		      /* seconds to take off every TTL */
	const struct dns_addr *addrs; /* the addresses put into the sets */
	size_t n_addrs;
};

struct pending {
	struct pending *hnext;
	TAILQ_ENTRY(pending) all;
	struct resolver *r;
	bool in_table;
	uint8_t key[KEY_MAX];
	size_t keylen;
	struct rquery_list waiters;
	uint8_t *answer; /* owned, or hit->answer */
	size_t answer_len;
	struct dns_addr *addrs; /* handed out: owned, or hit->addrs */
	size_t n_addrs;
	const struct cache_entry *hit; /* a cache hit: its reference */
	uint32_t age;		       /* seconds since the hit was stored */
	uint8_t qname[DNS_MAX_NAME];
	size_t qname_len;
};

struct resolver {
	struct event_base *base;
	const struct config *cfg;
	const struct policy *pol;
	struct upstream *up;
	struct sets *sets;
	struct prov *prov; /* NULL: provenance not kept */
	struct cache *cache;
	struct pending *table[PENDING_BUCKETS];
	TAILQ_HEAD(, pending) pendings;
	uint8_t out[DNS_MAX_UDP + 1];
};

static void reply_now(struct resolver *r, const struct dns_query *q,
		      const struct sockaddr *peer, socklen_t peerlen,
		      enum dns_rcode rcode, uint16_t ede, const char *ede_text,
		      resolver_reply_fn fn, void *ctx);
static bool deny(struct resolver *r, const struct dns_query *q,
		 const struct sockaddr *peer, socklen_t peerlen,
		 resolver_reply_fn fn, void *ctx);
static size_t make_key(const struct dns_query *q, uint8_t *key);
static uint32_t key_hash(const uint8_t *key, size_t len);
static struct pending *pending_find(struct resolver *r, const uint8_t *key,
				    size_t len);
static struct pending *pending_start(struct resolver *r,
				     const struct dns_query *q,
				     const uint8_t *key, size_t keylen);
static void pending_unlink(struct pending *p);
static void free_pending(struct pending *p);
static void on_upstream(void *arg, int status, const uint8_t *answer,
			size_t len);
static void on_sets_done(void *arg, int status);
static void finish_pending(struct pending *p, int status);
static void answer_one(struct pending *p, struct rquery *rq);
static ssize_t render(struct resolver *r, const uint8_t *answer, size_t len,
		      const struct keep_ctx *kc, const struct dns_query *q,
		      bool tcp);
static size_t aged_addrs(const struct cache_entry *hit, uint32_t age,
			 struct dns_addr *out);
static bool answer_hit_now(struct resolver *r, const struct dns_query *q,
			   bool tcp, const struct cache_entry *hit,
			   uint64_t now, const struct sockaddr *peer,
			   socklen_t peerlen, resolver_reply_fn fn, void *ctx);
static struct rquery *wait_hit(struct resolver *r, struct rquery *rq,
			       const struct cache_entry *hit, uint64_t now);
static void cache_answer(struct pending *p, const uint8_t *answer, size_t len,
			 const struct dns_addr *addrs, size_t n);
static uint64_t now_ms(void);
static void fail_one(struct resolver *r, struct rquery *rq);
static bool allowed_now(const struct resolver *r, const uint8_t *name,
			size_t len);
static void deny_pending(struct pending *p);
static int note_prov(struct resolver *r, const uint8_t *name, size_t len,
		     const struct dns_addr *addrs, size_t n);
static bool cache_keep(void *arg, const uint8_t *key, size_t keylen);
static bool keep_rr(struct dns_rr *rr, void *arg);
static int hint_handed_out(const struct netaddr *a, void *arg);
static bool handed_out(const struct keep_ctx *kc, const struct netaddr *a);
static bool admissible(const struct resolver *r, const struct netaddr *a);
static size_t client_max(const struct dns_query *q, bool tcp);
static void describe(const struct dns_query *q, const struct sockaddr *peer,
		     char *name, size_t namecap, char *type, size_t typecap,
		     char *client, size_t clientcap);

struct resolver *resolver_new(struct event_base *base, const struct config *cfg,
			      const struct policy *pol, struct upstream *up,
			      struct sets *sets)
{
	struct resolver *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->base = base;
	r->cfg = cfg;
	r->pol = pol;
	r->up = up;
	r->sets = sets;
	TAILQ_INIT(&r->pendings);
	r->cache = cache_new(CACHE_ENTRIES, CACHE_BYTES);
	if (r->cache == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void resolver_shutdown(struct resolver *r)
{
	struct pending *p;
	struct rquery *rq;

	TAILQ_FOREACH(p, &r->pendings, all)
	{
		while ((rq = TAILQ_FIRST(&p->waiters)) != NULL) {
			TAILQ_REMOVE(&p->waiters, rq, link);
			free(rq);
		}
	}
}

/* Pending questions still waiting on c-ares or the kernel are the
 * arguments of those callbacks: the caller frees the upstream and the sets
 * first, which completes them, and only then the resolver. */
void resolver_free(struct resolver *r)
{
	struct pending *p;

	if (r == NULL)
		return;
	while ((p = TAILQ_FIRST(&r->pendings)) != NULL) {
		pending_unlink(p);
		free_pending(p);
	}
	cache_free(r->cache);
	free(r);
}

struct rquery *resolver_handle(struct resolver *r, const uint8_t *msg,
			       size_t len, const struct sockaddr *peer,
			       socklen_t peerlen, bool tcp,
			       resolver_reply_fn fn, void *ctx)
{
	struct dns_query q;
	enum dns_parse pr;
	const struct cache_entry *hit;
	struct rquery *rq;
	struct pending *p;
	uint64_t now;
	uint8_t key[KEY_MAX];
	size_t keylen;
	ssize_t n;

	pr = dnsmsg_parse_query(msg, len, &q);
	switch (pr) {
	case DNS_PARSE_OK:
		break;
	case DNS_PARSE_DROP:
		stats_inc(STAT_MALFORMED);
		return NULL;
	case DNS_PARSE_FORMERR:
	case DNS_PARSE_NOTIMP:
		stats_inc(STAT_MALFORMED);
		n = dnsmsg_build_header_error(msg, len,
					      pr == DNS_PARSE_NOTIMP
						  ? DNS_RCODE_NOTIMP
						  : DNS_RCODE_FORMERR,
					      r->out, sizeof(r->out));
		if (n > 0)
			fn(ctx, NULL, peer, peerlen, r->out, (size_t)n);
		return NULL;
	case DNS_PARSE_BADVERS:
		stats_inc(STAT_MALFORMED);
		n = dnsmsg_build_badvers(&q, r->out, sizeof(r->out));
		if (n > 0)
			fn(ctx, NULL, peer, peerlen, r->out, (size_t)n);
		return NULL;
	}
	stats_inc(STAT_QUERIES);

	if (q.qtype == DNS_TYPE_AXFR || q.qtype == DNS_TYPE_IXFR) {
		reply_now(r, &q, peer, peerlen, DNS_RCODE_NOTIMP, DNS_EDE_NONE,
			  NULL, fn, ctx);
		return NULL;
	}
	if (!policy_match(r->pol, q.name, q.name_len) &&
	    deny(r, &q, peer, peerlen, fn, ctx))
		return NULL;

	keylen = make_key(&q, key);
	now = now_ms();
	hit = cache_get(r->cache, key, keylen, now);
	if (hit != NULL &&
	    answer_hit_now(r, &q, tcp, hit, now, peer, peerlen, fn, ctx))
		return NULL;

	rq = calloc(1, sizeof(*rq));
	if (rq == NULL) {
		cache_release(r->cache, hit);
		reply_now(r, &q, peer, peerlen, DNS_RCODE_SERVFAIL,
			  DNS_EDE_NONE, NULL, fn, ctx);
		return NULL;
	}
	rq->q = q;
	memcpy(&rq->peer, peer, peerlen);
	rq->peerlen = peerlen;
	rq->tcp = tcp;
	rq->fn = fn;
	rq->ctx = ctx;
	if (hit != NULL)
		return wait_hit(r, rq, hit, now);

	p = pending_find(r, key, keylen);
	if (p != NULL) {
		stats_inc(STAT_COALESCED);
	} else {
		p = pending_start(r, &q, key, keylen);
		if (p == NULL) {
			free(rq);
			reply_now(r, &q, peer, peerlen, DNS_RCODE_SERVFAIL,
				  DNS_EDE_NONE, NULL, fn, ctx);
			return NULL;
		}
	}
	rq->p = p;
	TAILQ_INSERT_TAIL(&p->waiters, rq, link);
	return rq;
}

void resolver_cancel(struct rquery *rq)
{
	if (rq == NULL)
		return;
	TAILQ_REMOVE(&rq->p->waiters, rq, link);
	free(rq);
}

/* Returns true when the query was answered locally; false in audit mode,
 * where the name goes upstream after all. */
static bool deny(struct resolver *r, const struct dns_query *q,
		 const struct sockaddr *peer, socklen_t peerlen,
		 resolver_reply_fn fn, void *ctx)
{
	char name[DNS_NAME_STRLEN], type[16], client[NETADDR_ENDPOINT_STRLEN];
	char text[DNS_NAME_STRLEN + 64];

	describe(q, peer, name, sizeof(name), type, sizeof(type), client,
		 sizeof(client));
	if (r->cfg->mode == CONFIG_MODE_AUDIT) {
		stats_inc(STAT_AUDIT_ALLOWED);
		log_warn("policy",
			 "audit: would deny %s %s from %s (not on the "
			 "allowlist); forwarding",
			 name, type, client);
		return false;
	}
	stats_inc(STAT_DENIED);
	log_info("policy", "denied %s %s from %s: not on the allowlist", name,
		 type, client);
	snprintf(text, sizeof(text), "%s is not on the dnsfence allowlist",
		 name);
	reply_now(r, q, peer, peerlen,
		  r->cfg->deny_rcode == CONFIG_DENY_REFUSED
		      ? DNS_RCODE_REFUSED
		      : DNS_RCODE_NXDOMAIN,
		  DNS_EDE_BLOCKED, text, fn, ctx);
	return true;
}

static void reply_now(struct resolver *r, const struct dns_query *q,
		      const struct sockaddr *peer, socklen_t peerlen,
		      enum dns_rcode rcode, uint16_t ede, const char *ede_text,
		      resolver_reply_fn fn, void *ctx)
{
	ssize_t n =
	    dnsmsg_build_reply(q, rcode, ede, ede_text, r->out, sizeof(r->out));

	if (rcode == DNS_RCODE_SERVFAIL)
		stats_inc(STAT_SERVFAIL);
	if (n > 0)
		fn(ctx, NULL, peer, peerlen, r->out, (size_t)n);
}

static void describe(const struct dns_query *q, const struct sockaddr *peer,
		     char *name, size_t namecap, char *type, size_t typecap,
		     char *client, size_t clientcap)
{
	dns_name_to_text(q->name, q->name_len, name, namecap);
	dns_type_name(q->qtype, type, typecap);
	netaddr_format_endpoint(peer, client, clientcap);
}

/* The key of an upstream question: lower-case name, type, class and the
 * two bits that change what the upstream returns (DO, CD). */
static size_t make_key(const struct dns_query *q, uint8_t *key)
{
	size_t n = q->name_len;

	memcpy(key, q->lname, n);
	key[n++] = (uint8_t)(q->qtype >> 8);
	key[n++] = (uint8_t)q->qtype;
	key[n++] = (uint8_t)(q->qclass >> 8);
	key[n++] = (uint8_t)q->qclass;
	key[n++] = q->edns_do ? 1 : 0;
	key[n++] = (q->flags & DNS_FLAG_CD) ? 1 : 0;
	return n;
}

static uint32_t key_hash(const uint8_t *key, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ key[i]) * 16777619u;
	return h;
}

static struct pending *pending_find(struct resolver *r, const uint8_t *key,
				    size_t len)
{
	struct pending *p =
	    r->table[key_hash(key, len) & (PENDING_BUCKETS - 1)];

	for (; p != NULL; p = p->hnext) {
		if (p->keylen == len && memcmp(p->key, key, len) == 0)
			return p;
	}
	return NULL;
}

static struct pending *pending_start(struct resolver *r,
				     const struct dns_query *q,
				     const uint8_t *key, size_t keylen)
{
	uint8_t query[DNS_MAX_NAME + 64];
	struct pending *p;
	uint32_t b;
	ssize_t n;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->r = r;
	memcpy(p->key, key, keylen);
	p->keylen = keylen;
	memcpy(p->qname, q->lname, q->name_len);
	p->qname_len = q->name_len;
	TAILQ_INIT(&p->waiters);

	n = dnsmsg_build_upstream_query(q, upstream_new_id(r->up), query,
					sizeof(query));
	if (n < 0 ||
	    upstream_send(r->up, query, (size_t)n, on_upstream, p) != 0) {
		free(p);
		return NULL;
	}
	stats_inc(STAT_FORWARDED);
	b = key_hash(key, keylen) & (PENDING_BUCKETS - 1);
	p->hnext = r->table[b];
	r->table[b] = p;
	p->in_table = true;
	TAILQ_INSERT_TAIL(&r->pendings, p, all);
	return p;
}

/* Once the upstream has answered, later identical queries start a new
 * upstream question instead of joining one whose answer is decided. */
static void pending_unlink(struct pending *p)
{
	struct pending **pp;

	if (!p->in_table)
		return;
	pp = &p->r->table[key_hash(p->key, p->keylen) & (PENDING_BUCKETS - 1)];
	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	p->in_table = false;
}

static void free_pending(struct pending *p)
{
	struct rquery *rq;

	while ((rq = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, rq, link);
		free(rq);
	}
	TAILQ_REMOVE(&p->r->pendings, p, all);
	if (p->hit != NULL) {
		cache_release(p->r->cache, p->hit);
	} else {
		free(p->answer);
		free(p->addrs);
	}
	free(p);
}

static void on_upstream(void *arg, int status, const uint8_t *answer,
			size_t len)
{
	struct pending *p = arg;
	struct resolver *r = p->r;
	struct dns_addr addrs[SNOOP_MAX], keep[SNOOP_MAX];
	size_t n = 0, nkeep = 0;
	char name[DNS_NAME_STRLEN], astr[NETADDR_STRLEN];
	int rc;

	pending_unlink(p);
	if (status == -ECANCELED) {
		free_pending(p);
		return;
	}
	if (!allowed_now(r, p->qname, p->qname_len)) {
		deny_pending(p);
		return;
	}
	dns_name_to_text(p->qname, p->qname_len, name, sizeof(name));
	if (status != 0) {
		stats_inc(STAT_UPSTREAM_FAIL);
		log_warn("upstream", "no answer for %s: %s", name,
			 strerror(-status));
		finish_pending(p, status);
		return;
	}
	rc = dnsmsg_snoop(answer, len, p->qname, p->qname_len, addrs, SNOOP_MAX,
			  &n);
	if (rc != 0) {
		stats_inc(STAT_BAD_ANSWER);
		log_warn("upstream", "%s answer for %s, sending SERVFAIL",
			 rc == -E2BIG ? "oversized" : "malformed", name);
		finish_pending(p, rc);
		return;
	}
	p->answer = malloc(len);
	p->addrs = malloc(n > 0 ? n * sizeof(*p->addrs) : 1);
	if (p->answer == NULL || p->addrs == NULL) {
		finish_pending(p, -ENOMEM);
		return;
	}
	memcpy(p->answer, answer, len);
	p->answer_len = len;

	for (size_t i = 0; i < n; i++) {
		if (admissible(r, &addrs[i].addr)) {
			keep[nkeep++] = addrs[i];
			continue;
		}
		stats_inc(STAT_ADDR_INTERNAL);
		netaddr_format(&addrs[i].addr, astr, sizeof(astr));
		log_warn("snoop",
			 "%s answered internal address %s: left out of the "
			 "answer and the sets",
			 name, astr);
	}
	memcpy(p->addrs, keep, nkeep * sizeof(*keep));
	p->n_addrs = nkeep;
	cache_answer(p, answer, len, keep, nkeep);
	if (r->sets == NULL || nkeep == 0) {
		finish_pending(p, 0);
		return;
	}
	rc = note_prov(r, p->qname, p->qname_len, keep, nkeep);
	if (rc == 0)
		rc = sets_add(r->sets, keep, nkeep, on_sets_done, p);
	if (rc != 0)
		finish_pending(p, rc);
}

static void on_sets_done(void *arg, int status)
{
	finish_pending(arg, status);
}

/* Answer (status 0) or fail every client waiting on p, then free it. */
static void finish_pending(struct pending *p, int status)
{
	struct rquery *rq;

	while ((rq = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, rq, link);
		if (status == 0)
			answer_one(p, rq);
		else
			fail_one(p->r, rq);
		free(rq);
	}
	free_pending(p);
}

static size_t client_max(const struct dns_query *q, bool tcp)
{
	size_t max;

	if (tcp)
		return DNS_MAX_UDP;
	if (!q->edns)
		return 512;
	max = q->edns_udp < 512 ? 512 : q->edns_udp;
	return max > DNS_EDNS_UDPSIZE ? DNS_EDNS_UDPSIZE : max;
}

/* The client's copy of an answer, into r->out: TTLs reduced by the age
 * of a cache hit and capped, and no address but those in kc->addrs. */
static ssize_t render(struct resolver *r, const uint8_t *answer, size_t len,
		      const struct keep_ctx *kc, const struct dns_query *q,
		      bool tcp)
{
	ssize_t n;

	n = dnsmsg_rewrite_answer(answer, len, q, client_max(q, tcp), keep_rr,
				  (void *)(uintptr_t)kc, r->out,
				  sizeof(r->out));
	if (n < 0) {
		stats_inc(STAT_BAD_ANSWER);
		return n;
	}
	stats_inc(STAT_ANSWERS);
	if ((r->out[2] & (DNS_FLAG_TC >> 8)) != 0)
		stats_inc(STAT_TRUNCATED);
	return n;
}

static void answer_one(struct pending *p, struct rquery *rq)
{
	struct keep_ctx kc = {
	    .r = p->r, .age = p->age, .addrs = p->addrs, .n_addrs = p->n_addrs};
	ssize_t n =
	    render(p->r, p->answer, p->answer_len, &kc, &rq->q, rq->tcp);

	if (n < 0) {
		fail_one(p->r, rq);
		return;
	}
	rq->fn(rq->ctx, rq, (struct sockaddr *)&rq->peer, rq->peerlen,
	       p->r->out, (size_t)n);
}

/* The addresses of a hit, with TTLs reduced by its age; at most
 * SNOOP_MAX (what on_upstream stored). */
static size_t aged_addrs(const struct cache_entry *hit, uint32_t age,
			 struct dns_addr *out)
{
	size_t n = hit->n_addrs < SNOOP_MAX ? hit->n_addrs : SNOOP_MAX;

	for (size_t i = 0; i < n; i++) {
		out[i] = hit->addrs[i];
		out[i].ttl = out[i].ttl > age ? out[i].ttl - age : 0;
	}
	return n;
}

/* Answer a cache hit at once when the kernel has nothing to do for it:
 * no addresses, no sets, or every entry confirmed recently and living
 * long enough (the common case). Returns false, with the hit still held,
 * when it must wait for the kernel. */
static bool answer_hit_now(struct resolver *r, const struct dns_query *q,
			   bool tcp, const struct cache_entry *hit,
			   uint64_t now, const struct sockaddr *peer,
			   socklen_t peerlen, resolver_reply_fn fn, void *ctx)
{
	struct dns_addr aged[SNOOP_MAX];
	uint32_t age = (uint32_t)((now - hit->stored_ms) / 1000);
	struct keep_ctx kc = {
	    .r = r, .age = age, .addrs = hit->addrs, .n_addrs = hit->n_addrs};
	size_t n = aged_addrs(hit, age, aged);
	ssize_t len;

	if (r->sets != NULL && n > 0 && !sets_covered(r->sets, aged, n))
		return false;
	len = render(r, hit->answer, hit->len, &kc, q, tcp);
	cache_release(r->cache, hit);
	if (len >= 0 && r->sets != NULL &&
	    note_prov(r, q->lname, q->name_len, aged, n) != 0)
		len = -ENOSPC;
	if (len < 0) {
		reply_now(r, q, peer, peerlen, DNS_RCODE_SERVFAIL, DNS_EDE_NONE,
			  NULL, fn, ctx);
		return true;
	}
	fn(ctx, NULL, peer, peerlen, r->out, (size_t)len);
	return true;
}

/* A hit whose addresses the kernel must (re)confirm first: it waits like
 * an upstream answer does. Takes over rq and the hit. */
static struct rquery *wait_hit(struct resolver *r, struct rquery *rq,
			       const struct cache_entry *hit, uint64_t now)
{
	struct dns_addr aged[SNOOP_MAX];
	uint32_t age = (uint32_t)((now - hit->stored_ms) / 1000);
	struct pending *p = calloc(1, sizeof(*p));
	size_t n = aged_addrs(hit, age, aged);

	if (p == NULL) {
		cache_release(r->cache, hit);
		fail_one(r, rq);
		free(rq);
		return NULL;
	}
	p->r = r;
	p->hit = hit;
	p->answer = (uint8_t *)(uintptr_t)hit->answer;
	p->answer_len = hit->len;
	p->addrs = (struct dns_addr *)(uintptr_t)hit->addrs;
	p->n_addrs = hit->n_addrs;
	p->age = age;
	TAILQ_INIT(&p->waiters);
	TAILQ_INSERT_TAIL(&r->pendings, p, all);
	rq->p = p;
	TAILQ_INSERT_TAIL(&p->waiters, rq, link);
	if (note_prov(r, rq->q.lname, rq->q.name_len, aged, n) != 0 ||
	    sets_add(r->sets, aged, n, on_sets_done, p) != 0) {
		/* Not queued: answer from here, as a failure. */
		TAILQ_REMOVE(&p->waiters, rq, link);
		free_pending(p);
		fail_one(r, rq);
		free(rq);
		return NULL;
	}
	return rq;
}

static void cache_answer(struct pending *p, const uint8_t *answer, size_t len,
			 const struct dns_addr *addrs, size_t n)
{
	uint32_t ttl;

	if (dnsmsg_cache_ttl(answer, len, &ttl) != 0)
		return;
	if (ttl > p->r->cfg->ttl_max)
		ttl = p->r->cfg->ttl_max;
	(void)cache_put(p->r->cache, p->key, p->keylen, answer, len, addrs, n,
			ttl, now_ms());
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void fail_one(struct resolver *r, struct rquery *rq)
{
	ssize_t n = dnsmsg_build_reply(&rq->q, DNS_RCODE_SERVFAIL, DNS_EDE_NONE,
				       NULL, r->out, sizeof(r->out));

	stats_inc(STAT_SERVFAIL);
	if (n > 0)
		rq->fn(rq->ctx, rq, (struct sockaddr *)&rq->peer, rq->peerlen,
		       r->out, (size_t)n);
}

size_t resolver_set_policy(struct resolver *r, const struct config *cfg,
			   const struct policy *pol)
{
	r->cfg = cfg;
	r->pol = pol;
	return cache_drop_if(r->cache, cache_keep, r);
}

void resolver_set_upstream(struct resolver *r, struct upstream *up)
{
	r->up = up;
}

void resolver_set_prov(struct resolver *r, struct prov *prov)
{
	r->prov = prov;
}

size_t resolver_pending(const struct resolver *r)
{
	const struct pending *p;
	size_t n = 0;

	TAILQ_FOREACH(p, &r->pendings, all)
	n++;
	return n;
}

size_t resolver_cached(const struct resolver *r)
{
	return cache_count(r->cache);
}

/* Would the running policy send this name upstream? (Audit forwards every
 * name.) */
static bool allowed_now(const struct resolver *r, const uint8_t *name,
			size_t len)
{
	return r->cfg->mode == CONFIG_MODE_AUDIT ||
	       policy_match(r->pol, name, len);
}

static bool cache_keep(void *arg, const uint8_t *key, size_t keylen)
{
	return allowed_now(arg, key, keylen);
}

/* The policy changed while p's question was upstream, and its name is no
 * longer allowed: every waiting client gets the deny answer, and the
 * upstream's answer is dropped unread. */
static void deny_pending(struct pending *p)
{
	struct resolver *r = p->r;
	char name[DNS_NAME_STRLEN], text[DNS_NAME_STRLEN + 64];
	struct rquery *rq;
	ssize_t n;

	dns_name_to_text(p->qname, p->qname_len, name, sizeof(name));
	log_info("policy",
		 "denied %s: removed from the allowlist while "
		 "upstream",
		 name);
	snprintf(text, sizeof(text), "%s is not on the dnsfence allowlist",
		 name);
	while ((rq = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, rq, link);
		stats_inc(STAT_DENIED);
		n = dnsmsg_build_reply(&rq->q,
				       r->cfg->deny_rcode == CONFIG_DENY_REFUSED
					   ? DNS_RCODE_REFUSED
					   : DNS_RCODE_NXDOMAIN,
				       DNS_EDE_BLOCKED, text, r->out,
				       sizeof(r->out));
		if (n > 0)
			rq->fn(rq->ctx, rq, (struct sockaddr *)&rq->peer,
			       rq->peerlen, r->out, (size_t)n);
		free(rq);
	}
	free_pending(p);
}

/* Remember which name put these addresses in the sets, until the entry
 * this answer asks for expires. A full map refuses (-ENOSPC): the answer
 * must not go out, or a reload could not take the address back. */
static int note_prov(struct resolver *r, const uint8_t *name, size_t len,
		     const struct dns_addr *addrs, size_t n)
{
	uint64_t now = now_ms() / 1000;
	int rc;

	if (r->prov == NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t t = sets_timeout(addrs[i].ttl, r->cfg->ttl_min,
					  r->cfg->ttl_max);

		rc =
		    prov_note(r->prov, name, len, &addrs[i].addr, now + t, now);
		if (rc == -ENOSPC || rc == -ENOMEM) {
			log_warn("prov",
				 "cannot note a set entry's name: %s; "
				 "SERVFAIL",
				 strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static bool admissible(const struct resolver *r, const struct netaddr *a)
{
	return netaddr_admissible(a, r->cfg->allow_cidrs,
				  r->cfg->n_allow_cidrs);
}

static bool handed_out(const struct keep_ctx *kc, const struct netaddr *a)
{
	for (size_t i = 0; i < kc->n_addrs; i++) {
		if (netaddr_equal(&kc->addrs[i].addr, a))
			return true;
	}
	return false;
}

static int hint_handed_out(const struct netaddr *a, void *arg)
{
	return handed_out(arg, a) ? 0 : 1;
}

/* The client gets no address that is not in the sets (invariant 2):
 * address records and HTTPS/SVCB hints survive only when snooping put
 * them there (on the CNAME chain, admissible), wherever else they stand:
 * internal ones, other owners' and the additional section's are left out,
 * and an HTTPS/SVCB record with such a hint goes whole. No TTL exceeds
 * ttl.max: a client must not cache an address longer than its set entry
 * can live. */
static bool keep_rr(struct dns_rr *rr, void *arg)
{
	const struct keep_ctx *kc = arg;
	struct resolver *r = kc->r;
	struct netaddr a;

	if (rr->ttl > 0x7fffffffu) /* RFC 2181 section 8 */
		rr->ttl = 0;
	rr->ttl = rr->ttl > kc->age ? rr->ttl - kc->age : 0;
	if (rr->ttl > r->cfg->ttl_max)
		rr->ttl = r->cfg->ttl_max;
	switch (rr->type) {
	case DNS_TYPE_A:
		if (rr->rdlen != 4)
			return false;
		a.family = AF_INET;
		memcpy(a.bytes, rr->rdata, 4);
		return handed_out(kc, &a);
	case DNS_TYPE_AAAA:
		if (rr->rdlen != 16)
			return false;
		a.family = AF_INET6;
		memcpy(a.bytes, rr->rdata, 16);
		return handed_out(kc, &a);
	case DNS_TYPE_SVCB:
	case DNS_TYPE_HTTPS:
		return dnsmsg_svcb_hints(rr->rdata, rr->rdlen, hint_handed_out,
					 (void *)(uintptr_t)kc) == 0;
	default:
		return true;
	}
}
