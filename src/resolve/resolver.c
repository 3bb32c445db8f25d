// SPDX-License-Identifier: GPL-2.0-or-later
/* resolver: the life of one client query.
 *
 * A query that parses is checked against the policy. A denied name, a
 * class other than IN, a zone transfer are answered here (with an
 * Extended DNS Error when the client speaks EDNS) and nothing about them
 * leaves the machine (invariant 1). An allowed name is answered from the
 * cache, or gets SERVFAIL at once when its upstream question failed in
 * the last failure_ttl seconds (RFC 9520), or joins the pending upstream
 * question with the same key (name, type, class, DO, CD), or starts one:
 * a query built afresh by dnsmsg with a random ID and our own EDNS
 * (invariant 5). Starting one takes a slot of the in-flight cap
 * (quota.c); at the cap, or at the client's share of it, the query gets
 * SERVFAIL at once instead of waiting: a drop would only bring the stub
 * resolver's retry five seconds later, on top of the flood.
 *
 * When the upstream answers, the answer is snooped once for the addresses
 * it hands out; internal ones are dropped (admit.c, invariant 3), the
 * rest go to the kernel sets, and only when the kernel has acked them all
 * does each waiting client get its rewritten copy (reply.c, invariant 2).
 * A failed add is SERVFAIL, and so is an add the set channel has no room
 * for: while its oldest add has waited SHED_SET_ADD_MS, the new one is
 * shed at once (counted), not queued for the 2 s deadline behind a
 * stopped or starved parent. A failed upstream question (timeout,
 * unreachable, SERVFAIL, REFUSED, malformed answer) is remembered
 * (failmem.c), and an expired cached answer, when there is one within
 * serve_stale, is served instead (RFC 8767) with a 30 s TTL, its
 * addresses put back in the sets first.
 *
 * Answers are cached for their smallest TTL (capped at ttl.max). A hit
 * takes the same road from the kernel step on: its addresses are offered
 * to the sets again (the expiry window makes that free when the kernel
 * confirmed their entries within the last second and they live long
 * enough), and the client's copy carries TTLs
 * reduced by the entry's age.
 *
 * A reload swaps the config and the policy between two queries
 * (resolver_set_policy). A question already upstream is judged again
 * when its answer arrives: a name the new policy denies gets the deny
 * answer, and nothing of it reaches the sets. Every address put into the
 * sets is noted with the name that put it there (prov.c), so that a
 * reload can take out what only removed names brought in.
 *
 * Ownership: a struct pending owns its waiting rqueries, its quota slot
 * and either its copy of the answer or one cache reference (p->hit);
 * free_pending() releases all of it. A pending is linked (table, list)
 * before its question is sent. An rquery is freed after its reply is
 * sent or when its transport cancels it. Every reply is built in a buffer
 * of the function that sends it: callbacks never share a scratch buffer. */
#include <errno.h>
#include <net/if.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>

#include "resolve/admit.h"
#include "resolve/budget.h"
#include "resolve/cache.h"
#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"
#include "resolve/failmem.h"
#include "base/hash.h"
#include "resolve/ifports.h"
#include "resolve/local.h"
#include "base/log.h"
#include "base/monotime.h"
#include "config/policy.h"
#include "resolve/prov.h"
#include "resolve/quota.h"
#include "observe/recent.h"
#include "resolve/reply.h"
#include "resolve/resolver.h"
#include "sets/sets.h"
#include "base/stats.h"
#include "resolve/upstream.h"
#include "observe/usage.h"

#define PENDING_BUCKETS 4096 /* power of two */
#define SNOOP_MAX	512
#define CACHE_ENTRIES	4096
#define CACHE_BYTES	(1u << 20)
#define STALE_TTL	30   /* RFC 8767 section 4 */
#define BUDGET_CLIENTS	4096 /* (wildcard, client) buckets kept */
/* The set channel's bound, by time: while its oldest add has waited this
 * long for the kernel's ack, an answer that needs an add is shed
 * (SERVFAIL, EDE 0) instead of queued behind it. A working parent acks in
 * about a millisecond, and within 250 ms even on two cores shared by
 * twenty busy processes (the round trip's p99.9 measured there); past
 * that it is stopped or starved, and a client is better served by a
 * SERVFAIL now than by one at the 2 s deadline. */
#define SHED_SET_ADD_MS 250

struct pending;

struct rquery {
	TAILQ_ENTRY(rquery) link;
	struct pending *p;
	struct dns_query q;
	struct client c;
};

TAILQ_HEAD(rquery_list, rquery);

struct pending {
	struct pending *hnext;
	TAILQ_ENTRY(pending) all;
	struct resolver *r;
	bool in_table; /* joinable: its upstream question is open */
	bool counted;  /* holds quota slot */
	uint32_t slot;
	size_t keylen;
	struct rquery_list waiters;
	uint8_t *answer; /* owned, or hit->answer */
	size_t answer_len;
	struct dns_addr *addrs; /* handed out: owned, or hit->addrs */
	size_t n_addrs;
	const struct cache_entry *hit; /* a cache reference, or NULL */
	uint32_t age;		       /* seconds since the hit was stored */
	uint32_t ttl_max;	       /* cap on the client's TTLs */
	size_t qname_len;
	uint16_t qtype;
	struct usage_entry *usage; /* the entry that allowed the question */
	/* monotonic ns, for the stage histograms (0: not reached) */
	uint64_t answer_ns; /* the upstream's answer read */
	uint64_t add_ns;    /* the set add sent */
	uint64_t done_ns;   /* acked (or answered with nothing to add) */
	/* last, not cleared by pending_new: written before they are read */
	uint8_t key[DNSMSG_KEY_MAX];
	uint8_t qname[DNS_MAX_NAME];
};

struct resolver {
	struct event_base *base;
	const struct config *cfg;
	const struct policy *pol;
	const struct config *admit_was; /* resolver_set_admit_was */
	struct upstream *up;
	struct sets *sets;
	struct prov *prov; /* NULL: provenance not kept */
	struct cache *cache;
	struct failmem *fails; /* questions that failed upstream, recently */
	struct quota *quota;
	struct ifports *ports; /* real containers behind each interface */
	struct budget *budget; /* new names below wildcards */
	struct pending *table[PENDING_BUCKETS];
	TAILQ_HEAD(, pending) pendings;
	/* Not ready yet: queries for this name get no reply (len 0: off). */
	uint8_t gated[DNS_MAX_NAME];
	size_t gated_len;
	struct usage *usage; /* per allow entry; NULL: not counted */
};

static void log_allowed(const struct resolver *r, const struct dns_query *q,
			const struct client *c);
static struct rquery *lookup(struct resolver *r, const struct dns_query *q,
			     struct client *c, const struct policy_hit *ph,
			     struct usage_entry *ue);
static struct rquery *rquery_new(const struct dns_query *q,
				 const struct client *c);
static int start_question(struct resolver *r, const struct dns_query *q,
			  const struct client *c, struct usage_entry *ue,
			  const uint8_t *key, size_t keylen,
			  struct pending **out);
static int take_slot(struct resolver *r, const struct dns_query *q,
		     const struct client *c, uint32_t *slot);
static struct pending *pending_new(struct resolver *r, const uint8_t *key,
				   size_t keylen);
static struct pending *pending_find(struct resolver *r, const uint8_t *key,
				    size_t len);
static void pending_link(struct pending *p);
static void pending_unlink(struct pending *p);
static void free_pending(struct pending *p);
static void on_upstream(void *arg, int status, const uint8_t *answer,
			size_t len);
static int take_answer(struct pending *p, const uint8_t *answer, size_t len);
static void upstream_failed(struct pending *p, int rc);
static bool serve_stale(struct pending *p);
static void put_in_sets(struct pending *p, const struct dns_addr *addrs,
			size_t n);
static bool sets_behind(struct resolver *r);
static int add_for_waiters(struct pending *p, const struct dns_addr *addrs,
			   size_t n);
static int add_for_client(struct resolver *r, const struct dns_addr *addrs,
			  size_t n, const struct client *c, struct pending *p);
static int answer_family(const struct config *cfg, const struct client *c);
static void on_sets_done(void *arg, int status);
static void finish_pending(struct pending *p, int status);
static void answer_one(struct pending *p, struct rquery *rq);
static bool answer_hit_now(struct resolver *r, const struct dns_query *q,
			   const struct client *c,
			   const struct cache_entry *hit, uint32_t age);
static void answer_hit(struct resolver *r, const struct dns_query *q,
		       const struct client *c, const struct cache_entry *hit,
		       uint32_t age, uint32_t ttl_max);
static struct rquery *wait_hit(struct resolver *r, struct rquery *rq,
			       const struct cache_entry *hit, uint32_t age,
			       uint32_t ttl_max);
static void hold_hit(struct pending *p, const struct cache_entry *hit,
		     uint32_t age, uint32_t ttl_max);
static const struct cache_entry *stale_entry(struct resolver *r,
					     const uint8_t *key, size_t keylen);
static void cache_answer(struct pending *p, const uint8_t *answer, size_t len);
static void deny_pending(struct pending *p);
static bool cache_keep(void *arg, const uint8_t *key, size_t keylen,
		       const struct cache_entry *e);
static bool cache_keep_none(void *arg, const uint8_t *key, size_t keylen,
			    const struct cache_entry *e);

struct resolver *resolver_new(struct event_base *base, const struct config *cfg,
			      const struct policy *pol, struct upstream *up,
			      struct sets *sets)
{
	struct resolver *r = calloc(1, sizeof(*r));
	uint32_t max = cfg->max_inflight ? cfg->max_inflight : 2048;

	if (r == NULL)
		return NULL;
	r->base = base;
	r->cfg = cfg;
	r->pol = pol;
	r->up = up;
	r->sets = sets;
	TAILQ_INIT(&r->pendings);
	r->cache = cache_new(CACHE_ENTRIES, CACHE_BYTES);
	r->fails = failmem_new();
	/* One client address may hold 3/4 of the cap: a quarter stays for
	 * the others whatever it sends. */
	r->quota = quota_new(max, max - max / 4);
	r->ports = ifports_new();
	r->budget = budget_new(BUDGET_CLIENTS);
	if (r->cache == NULL || r->fails == NULL || r->quota == NULL ||
	    r->ports == NULL || r->budget == NULL) {
		resolver_free(r);
		return NULL;
	}
	cache_set_stale(r->cache, cfg->serve_stale);
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
	failmem_free(r->fails);
	quota_free(r->quota);
	ifports_free(r->ports);
	budget_free(r->budget);
	free(r);
}

uint32_t resolver_inflight(const struct resolver *r)
{
	return quota_used(r->quota);
}

struct rquery *resolver_handle(struct resolver *r, const uint8_t *msg,
			       size_t len, const struct sockaddr *peer,
			       socklen_t peerlen, const struct sockaddr *local,
			       unsigned ifindex, uint64_t recv_ns,
			       uint64_t read_ns, bool tcp, resolver_reply_fn fn,
			       void *ctx)
{
	struct dns_query q;
	struct client c;
	struct policy_hit h;
	const struct policy_hit *hit;
	enum dns_parse pr;

	local_client_init(&c, peer, peerlen, local, tcp, fn, ctx);
	c.ifindex = ifindex;
	c.recv_ns = recv_ns;
	c.read_ns = read_ns;
	pr = dnsmsg_parse_query(msg, len, &q);
	if (pr != DNS_PARSE_OK) {
		local_parse_error(pr, msg, len, &q, &c);
		return NULL;
	}
	stats_inc(STAT_QUERIES);
	if (r->gated_len != 0 &&
	    dns_name_equal(q.name, q.name_len, r->gated, r->gated_len)) {
		stats_inc(STAT_UNANSWERED);
		return NULL;
	}
	/* The one policy match of the query: the verdict, the budget and
	 * the usage counts all read it. */
	hit = policy_match_hit(r->pol, q.name, q.name_len, &h) ? &h : NULL;
	c.path = hit == NULL ? STATS_H_DENIED : STATS_H_LOCAL;
	if (local_answer(r->cfg, r->pol, &q, &c, hit))
		return NULL;
	if (r->cfg->log_queries && !c.audited &&
	    log_limited_take(LOG_CLASS_QUERIES, LOGL_INFO, "resolver"))
		log_allowed(r, &q, &c);
	c.path = STATS_H_FORWARDED;
	return lookup(r, &q, &c, hit,
		      usage_question(r->usage, q.lname, q.name_len, hit));
}

/* log.queries: one line for an allowed question, with its fields. */
static void log_allowed(const struct resolver *r, const struct dns_query *q,
			const struct client *c)
{
	char name[DNS_NAME_STRLEN], type[16], client[NETADDR_ENDPOINT_STRLEN],
	    entry[DNS_NAME_STRLEN + 2];
	struct log_field f[LOCAL_FIELDS_MAX];
	uint32_t uid;
	size_t n;

	local_describe(q, (const struct sockaddr *)&c->peer, name, sizeof(name),
		       type, sizeof(type), client, sizeof(client));
	n = local_query_fields(f, "query_allowed", name, type, client, c, &uid);
	if (policy_entry(r->pol, q->lname, q->name_len, entry, sizeof(entry)))
		f[n++] = log_str("entry", entry);
	log_fields(f, n);
	log_info("resolver", "allowed %s %s from %s", name, type, client);
}

void resolver_set_gated(struct resolver *r, const char *name)
{
	r->gated_len = sizeof(r->gated);
	if (name == NULL ||
	    dns_name_from_text(name, r->gated, &r->gated_len) != 0)
		r->gated_len = 0;
}

void resolver_cancel(struct rquery *rq)
{
	if (rq == NULL)
		return;
	TAILQ_REMOVE(&rq->p->waiters, rq, link);
	if (!rq->c.audited)
		stats_inc(STAT_UNANSWERED);
	free(rq);
}

static struct rquery *rquery_new(const struct dns_query *q,
				 const struct client *c)
{
	/* Not calloc: a kilobyte cleared per query only to be copied over. */
	struct rquery *rq = malloc(sizeof(*rq));

	if (rq == NULL)
		return NULL;
	rq->p = NULL;
	rq->q = *q;
	rq->c = *c;
	return rq;
}

/* An allowed name (ph: how the policy matched it, ue: the usage entry
 * it counted on): the cache, the failure cache, a question in flight, or
 * a new one; c->path says which. Returns the rquery the transport may
 * cancel, or NULL when the reply was sent. */
static struct rquery *lookup(struct resolver *r, const struct dns_query *q,
			     struct client *c, const struct policy_hit *ph,
			     struct usage_entry *ue)
{
	uint8_t key[DNSMSG_KEY_MAX];
	size_t keylen = dnsmsg_question_key(q, key);
	uint64_t now = monotime_ms();
	const struct cache_entry *hit = cache_get(r->cache, key, keylen, now);
	struct pending *p = NULL;
	struct rquery *rq;
	int rc = 0;

	uint32_t age = 0, ttl_max = r->cfg->ttl_max;

	if (hit != NULL) {
		c->path = STATS_H_CACHED;
		age = (uint32_t)((now - hit->stored_ms) / 1000);
		if (answer_hit_now(r, q, c, hit, age))
			return NULL;
	} else if (failmem_recent(r->fails, key, keylen, now)) {
		/* Failed a moment ago: a stale answer, or SERVFAIL. */
		hit = stale_entry(r, key, keylen);
		c->path = hit != NULL ? STATS_H_CACHED : STATS_H_LOCAL;
		if (hit == NULL) {
			stats_inc(STAT_FAIL_CACHED);
			local_reply(q, c, NULL, DNS_RCODE_SERVFAIL,
				    DNS_EDE_NONE, NULL);
			return NULL;
		}
		ttl_max = STALE_TTL;
	}
	/* A new question below a wildcard costs a token of its budget. */
	if (hit == NULL && pending_find(r, key, keylen) == NULL) {
		c->path = STATS_H_LOCAL;
		if (local_over_budget(r->cfg, r->budget, q, c, ph))
			return NULL;
		c->path = STATS_H_FORWARDED;
	}
	rq = rquery_new(q, c);
	if (rq == NULL) {
		cache_release(r->cache, hit);
		local_reply(q, c, NULL, DNS_RCODE_SERVFAIL, DNS_EDE_NONE, NULL);
		return NULL;
	}
	if (hit != NULL)
		return wait_hit(r, rq, hit, age, ttl_max);
	rc = start_question(r, q, c, ue, key, keylen, &p);
	if (rc != 0) {
		free(rq);
		c->path = STATS_H_LOCAL;
		local_reply(q, c, NULL, DNS_RCODE_SERVFAIL,
			    rc == -EBUSY || rc == -EDQUOT || rc == -ENOSPC
				? DNS_EDE_OTHER
				: DNS_EDE_NONE,
			    "too many queries in flight");
		return NULL;
	}
	rq->p = p;
	TAILQ_INSERT_TAIL(&p->waiters, rq, link);
	return rq;
}

/* Join the open question for key, or send one. 0 and *out, -EBUSY or
 * -EDQUOT at the cap, or another -errno. */
static int start_question(struct resolver *r, const struct dns_query *q,
			  const struct client *c, struct usage_entry *ue,
			  const uint8_t *key, size_t keylen,
			  struct pending **out)
{
	uint8_t query[DNS_MAX_NAME + 64];
	struct pending *p = pending_find(r, key, keylen);
	uint16_t id;
	ssize_t n;
	int rc;

	if (p != NULL) {
		stats_inc(STAT_COALESCED);
		*out = p;
		return 0;
	}
	p = pending_new(r, key, keylen);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p->qname, q->lname, q->name_len);
	p->qname_len = q->name_len;
	p->qtype = q->qtype;
	p->usage = ue;
	rc = take_slot(r, q, c, &p->slot);
	if (rc != 0)
		goto fail;
	p->counted = true;
	rc = upstream_new_id(r->up, &id);
	n = rc == 0 ? dnsmsg_build_upstream_query(q, id, query, sizeof(query))
		    : rc;
	if (n < 0) {
		rc = (int)n;
		goto fail;
	}
	/* Linked first: the completion may find it at once. */
	pending_link(p);
	rc = upstream_send(r->up, query, (size_t)n, on_upstream, p);
	if (rc != 0) {
		pending_unlink(p);
		goto fail;
	}
	stats_inc(STAT_FORWARDED);
	if (c->read_ns != 0)
		stats_hist_ns(STATS_H_TO_UPSTREAM, monotime_ns() - c->read_ns);
	*out = p;
	return 0;
fail:
	free_pending(p);
	return rc;
}

/* A pending on the resolver's list (so resolver_free finds it), not yet
 * in the table. */
static struct pending *pending_new(struct resolver *r, const uint8_t *key,
				   size_t keylen)
{
	/* Not calloc: the key and the name, most of it, are copied in. */
	struct pending *p = malloc(sizeof(*p));

	if (p == NULL)
		return NULL;
	memset(p, 0, offsetof(struct pending, key));
	p->r = r;
	memcpy(p->key, key, keylen);
	p->keylen = keylen;
	p->ttl_max = r->cfg->ttl_max;
	TAILQ_INIT(&p->waiters);
	TAILQ_INSERT_TAIL(&r->pendings, p, all);
	return p;
}

static struct pending *pending_find(struct resolver *r, const uint8_t *key,
				    size_t len)
{
	struct pending *p =
	    r->table[hash_fnv1a(key, len, 0) & (PENDING_BUCKETS - 1)];

	for (; p != NULL; p = p->hnext) {
		if (p->keylen == len && memcmp(p->key, key, len) == 0)
			return p;
	}
	return NULL;
}

static void pending_link(struct pending *p)
{
	uint32_t b = hash_fnv1a(p->key, p->keylen, 0) & (PENDING_BUCKETS - 1);

	p->hnext = p->r->table[b];
	p->r->table[b] = p;
	p->in_table = true;
}

/* Once the upstream has answered, later identical queries start a new
 * upstream question instead of joining one whose answer is decided. */
static void pending_unlink(struct pending *p)
{
	struct pending **pp;

	if (!p->in_table)
		return;
	pp = &p->r->table[hash_fnv1a(p->key, p->keylen, 0) &
			  (PENDING_BUCKETS - 1)];
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
	if (p->counted)
		quota_give(p->r->quota, p->slot);
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
	int rc = status;

	p->answer_ns = monotime_ns();
	pending_unlink(p);
	if (status == -ECANCELED) {
		free_pending(p);
		return;
	}
	if (!admit_allowed(p->r->cfg, p->r->pol, p->qname, p->qname_len)) {
		deny_pending(p);
		return;
	}
	if (rc == 0)
		rc = take_answer(p, answer, len);
	if (rc != 0)
		upstream_failed(p, rc);
	else
		put_in_sets(p, p->addrs, p->n_addrs);
}

/* Keep a copy of an upstream answer and the admissible addresses it
 * hands out, and cache it. -EREMOTEIO/-EACCES for an upstream SERVFAIL
 * or REFUSED, -EBADMSG/-E2BIG for one we cannot snoop, -ENOMEM. */
static int take_answer(struct pending *p, const uint8_t *answer, size_t len)
{
	struct dns_addr addrs[SNOOP_MAX], keep[SNOOP_MAX];
	size_t n = 0, nkeep;
	uint8_t rcode = answer[3] & 0xf;
	int rc;

	if (rcode == DNS_RCODE_SERVFAIL)
		return -EREMOTEIO;
	if (rcode == DNS_RCODE_REFUSED)
		return -EACCES;
	rc = dnsmsg_snoop(answer, len, p->qname, p->qname_len,
			  config_name_check_on(p->r->cfg) ? DNS_SNOOP_STRIP_ECH
							  : 0,
			  addrs, SNOOP_MAX, &n);
	if (rc != 0) {
		stats_inc(STAT_BAD_ANSWER);
		return rc == -E2BIG ? -E2BIG : -EBADMSG;
	}
	nkeep = admit_addrs(p->r->cfg, p->qname, p->qname_len, addrs, n, keep);
	if (p->r->admit_was != NULL)
		nkeep = admit_addrs(p->r->admit_was, p->qname, p->qname_len,
				    keep, nkeep, keep);
	p->answer = malloc(len);
	p->addrs = malloc(nkeep > 0 ? nkeep * sizeof(*p->addrs) : 1);
	if (p->answer == NULL || p->addrs == NULL)
		return -ENOMEM;
	memcpy(p->answer, answer, len);
	p->answer_len = len;
	memcpy(p->addrs, keep, nkeep * sizeof(*keep));
	p->n_addrs = nkeep;
	cache_answer(p, answer, len);
	recent_note(p->qname, p->qname_len, keep, nkeep);
	usage_answered(p->r->usage, p->usage, p->qname, p->qname_len, keep,
		       nkeep);
	return 0;
}

/* The question failed: remember it, and serve a stale answer if there
 * is one, else SERVFAIL. */
static void upstream_failed(struct pending *p, int rc)
{
	char name[DNS_NAME_STRLEN], type[16];

	stats_inc(STAT_UPSTREAM_FAIL);
	if (log_limited_take(LOG_CLASS_UPSTREAM, LOGL_WARN, "upstream")) {
		dns_name_to_text(p->qname, p->qname_len, name, sizeof(name));
		dns_type_name(p->qtype, type, sizeof(type));
		log_warn("upstream", "no answer for %s %s: %s", name, type,
			 upstream_strerror(rc));
	}
	if (rc != -ENOMEM)
		failmem_note(p->r->fails, p->key, p->keylen,
			     p->r->cfg->failure_ttl, monotime_ms());
	if (!serve_stale(p))
		finish_pending(p, rc);
}

/* RFC 8767: an expired answer for p's question, within serve_stale, goes
 * to its waiters with a STALE_TTL TTL, after its addresses are back in
 * the sets. False when there is none (p is untouched). */
static bool serve_stale(struct pending *p)
{
	struct dns_addr aged[SNOOP_MAX];
	const struct cache_entry *e = stale_entry(p->r, p->key, p->keylen);
	size_t n;

	if (e == NULL)
		return false;
	free(p->answer);
	free(p->addrs);
	hold_hit(p, e, 0, STALE_TTL);
	n = reply_aged_addrs(e->addrs, e->n_addrs, 0, STALE_TTL, aged,
			     SNOOP_MAX);
	put_in_sets(p, aged, n);
	return true;
}

/* An expired answer for key within serve_stale (counted), or NULL. */
static const struct cache_entry *stale_entry(struct resolver *r,
					     const uint8_t *key, size_t keylen)
{
	const struct cache_entry *e;

	if (r->cfg->serve_stale == 0)
		return NULL;
	e = cache_get_stale(r->cache, key, keylen, monotime_ms());
	if (e != NULL)
		stats_inc(STAT_STALE);
	return e;
}

/* p answers from hit (a reference p now owns). */
static void hold_hit(struct pending *p, const struct cache_entry *hit,
		     uint32_t age, uint32_t ttl_max)
{
	p->hit = hit;
	p->answer = (uint8_t *)(uintptr_t)hit->answer;
	p->answer_len = hit->len;
	p->addrs = (struct dns_addr *)(uintptr_t)hit->addrs;
	p->n_addrs = hit->n_addrs;
	p->age = age;
	p->ttl_max = ttl_max;
}

/* The kernel step: p's waiters are answered when the sets have addrs. */
static void put_in_sets(struct pending *p, const struct dns_addr *addrs,
			size_t n)
{
	int rc;

	if (p->r->sets == NULL || n == 0) {
		finish_pending(p, 0);
		return;
	}
	if (sets_behind(p->r)) {
		finish_pending(p, -EBUSY);
		return;
	}
	rc = admit_note_prov(p->r->prov, p->r->cfg, p->qname, p->qname_len,
			     addrs, n);
	p->add_ns = monotime_ns();
	if (p->answer_ns != 0)
		stats_hist_ns(STATS_H_TO_SET_ADD, p->add_ns - p->answer_ns);
	if (rc == 0)
		rc = add_for_waiters(p, addrs, n);
	if (rc != 0)
		finish_pending(p, rc);
}

/* sets_add_for with the client of every waiter of p ("bind": "client":
 * each is answered only once its own entries are in): 0 or -errno. */
static int add_for_waiters(struct pending *p, const struct dns_addr *addrs,
			   size_t n)
{
	struct netaddr *clients = NULL;
	struct rquery *rq;
	size_t k = 0, max = 0;
	int rc;

	if (config_client_sets(p->r->cfg)) {
		TAILQ_FOREACH(rq, &p->waiters, link)
		max++;
		clients = calloc(max ? max : 1, sizeof(*clients));
		if (clients == NULL)
			return -ENOMEM;
		TAILQ_FOREACH(rq, &p->waiters, link)
		netaddr_from_sockaddr((const struct sockaddr *)&rq->c.peer,
				      &clients[k++]);
	}
	rc = sets_add_for(p->r->sets, addrs, n, clients, k, on_sets_done, p);
	free(clients);
	return rc;
}

/* The family a client's answer is limited to (reply_view.family). */
static int answer_family(const struct config *cfg, const struct client *c)
{
	return config_client_sets(cfg) ? c->peer.ss_family : 0;
}

/* Is the set channel behind its bound (SHED_SET_ADD_MS)? */
static bool sets_behind(struct resolver *r)
{
	return sets_behind_ms(r->sets) >= SHED_SET_ADD_MS;
}

static void on_sets_done(void *arg, int status)
{
	struct pending *p = arg;

	p->done_ns = monotime_ns();
	stats_hist_ns(STATS_H_SET_ADD, p->done_ns - p->add_ns);
	finish_pending(p, status);
}

/* Answer (status 0) or fail every client waiting on p, then free it;
 * -EBUSY: shed at the set channel's bound (SERVFAIL with EDE 0). */
static void finish_pending(struct pending *p, int status)
{
	struct rquery *rq;

	if (p->done_ns == 0)
		p->done_ns = monotime_ns();
	while ((rq = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, rq, link);
		if (status == 0) {
			answer_one(p, rq);
		} else if (status == -EBUSY) {
			stats_inc(STAT_SHED_SET_ADD);
			local_reply(&rq->q, &rq->c, rq, DNS_RCODE_SERVFAIL,
				    DNS_EDE_OTHER,
				    "busy: the set channel is behind");
		} else {
			local_reply(&rq->q, &rq->c, rq, DNS_RCODE_SERVFAIL,
				    DNS_EDE_NONE, NULL);
		}
		free(rq);
		stats_hist_ns(STATS_H_TO_REPLY, monotime_ns() - p->done_ns);
	}
	free_pending(p);
}

static void answer_one(struct pending *p, struct rquery *rq)
{
	struct reply_view v = {.answer = p->answer,
			       .len = p->answer_len,
			       .addrs = p->addrs,
			       .n_addrs = p->n_addrs,
			       .age = p->age,
			       .ttl_max = p->ttl_max,
			       .strip_ech = config_name_check_on(p->r->cfg),
			       .cached = p->hit != NULL,
			       .family = answer_family(p->r->cfg, &rq->c)};

	local_send_answer(&v, &rq->q, &rq->c, rq);
}

/* Answer a cache hit at once when the kernel has nothing to do for it:
 * no addresses, no sets, or every entry confirmed recently and living
 * long enough (the common case); the hit is then released. Returns
 * false, with the hit still held, when it must wait for the kernel.
 * Such a hit changes nothing the sets hold, so provenance is not noted:
 * the answer that filled the cache noted (name, address) until at least
 * the cache entry's expiry (clamp(TTL) >= its TTL, never shortened, and
 * prov drops only expired links), and this reply's TTLs end before it. */
static bool answer_hit_now(struct resolver *r, const struct dns_query *q,
			   const struct client *c,
			   const struct cache_entry *hit, uint32_t age)
{
	struct dns_addr aged[SNOOP_MAX];
	size_t n = reply_aged_addrs(hit->addrs, hit->n_addrs, age, UINT32_MAX,
				    aged, SNOOP_MAX);

	/* "bind": "client": the client's own entries go in first, always */
	if (r->sets != NULL && n > 0 &&
	    (config_client_sets(r->cfg) || !sets_covered(r->sets, aged, n)))
		return false;
	answer_hit(r, q, c, hit, age, r->cfg->ttl_max);
	return true;
}

/* Send the client's copy of hit, and release it. */
static void answer_hit(struct resolver *r, const struct dns_query *q,
		       const struct client *c, const struct cache_entry *hit,
		       uint32_t age, uint32_t ttl_max)
{
	struct reply_view v = {.answer = hit->answer,
			       .len = hit->len,
			       .addrs = hit->addrs,
			       .n_addrs = hit->n_addrs,
			       .age = age,
			       .ttl_max = ttl_max,
			       .strip_ech = config_name_check_on(r->cfg),
			       .cached = true,
			       .family = answer_family(r->cfg, c)};

	local_send_answer(&v, q, c, NULL);
	cache_release(r->cache, hit);
}

/* A hit whose addresses the kernel must (re)confirm first: it waits like
 * an upstream answer does. Takes over rq and the hit; NULL when the reply
 * was sent at once (no sets, or a failure to queue the adds). */
static struct rquery *wait_hit(struct resolver *r, struct rquery *rq,
			       const struct cache_entry *hit, uint32_t age,
			       uint32_t ttl_max)
{
	struct dns_addr aged[SNOOP_MAX];
	size_t n = reply_aged_addrs(hit->addrs, hit->n_addrs, age, ttl_max,
				    aged, SNOOP_MAX);
	struct pending *p = NULL;

	if (r->sets == NULL) {
		answer_hit(r, &rq->q, &rq->c, hit, age, ttl_max);
		free(rq);
		return NULL;
	}
	if (sets_behind(r)) {
		stats_inc(STAT_SHED_SET_ADD);
		cache_release(r->cache, hit);
		local_reply(&rq->q, &rq->c, NULL, DNS_RCODE_SERVFAIL,
			    DNS_EDE_OTHER, "busy: the set channel is behind");
		free(rq);
		return NULL;
	}
	p = pending_new(r, (const uint8_t *)"", 0);
	if (p != NULL)
		p->add_ns = monotime_ns();
	if (p == NULL ||
	    admit_note_prov(r->prov, r->cfg, rq->q.lname, rq->q.name_len, aged,
			    n) != 0 ||
	    add_for_client(r, aged, n, &rq->c, p) != 0) {
		if (p != NULL)
			free_pending(p);
		cache_release(r->cache, hit);
		local_reply(&rq->q, &rq->c, NULL, DNS_RCODE_SERVFAIL,
			    DNS_EDE_NONE, NULL);
		free(rq);
		return NULL;
	}
	hold_hit(p, hit, age, ttl_max);
	rq->p = p;
	TAILQ_INSERT_TAIL(&p->waiters, rq, link);
	return rq;
}

/* sets_add_for with c as the one client (when "bind": "client"). */
static int add_for_client(struct resolver *r, const struct dns_addr *addrs,
			  size_t n, const struct client *c, struct pending *p)
{
	bool bind = config_client_sets(r->cfg);
	struct netaddr peer = {0};

	if (bind)
		netaddr_from_sockaddr((const struct sockaddr *)&c->peer, &peer);
	return sets_add_for(r->sets, addrs, n, &peer, bind ? 1 : 0,
			    on_sets_done, p);
}

static void cache_answer(struct pending *p, const uint8_t *answer, size_t len)
{
	uint32_t ttl;

	if (dnsmsg_cache_ttl(answer, len, &ttl) != 0)
		return;
	if (ttl > p->r->cfg->ttl_max)
		ttl = p->r->cfg->ttl_max;
	(void)cache_put(p->r->cache, p->key, p->keylen, answer, len, p->addrs,
			p->n_addrs, ttl, monotime_ms());
}

/* A cached answer's addresses were snooped under the old config: when
 * the name check flips, which HTTPS/SVCB hints they hold changes
 * (DNS_SNOOP_STRIP_ECH), so every cached answer goes. */
size_t resolver_set_policy(struct resolver *r, const struct config *cfg,
			   const struct policy *pol)
{
	bool flip = config_name_check_on(r->cfg) != config_name_check_on(cfg);

	r->cfg = cfg;
	r->pol = pol;
	usage_track(r->usage, cfg, pol);
	cache_set_stale(r->cache, cfg->serve_stale);
	return cache_drop_if(r->cache, flip ? cache_keep_none : cache_keep, r);
}

void resolver_set_usage(struct resolver *r, struct usage *u)
{
	r->usage = u;
	usage_track(u, r->cfg, r->pol);
}

struct usage *resolver_usage(const struct resolver *r)
{
	return r->usage;
}

void resolver_set_upstream(struct resolver *r, struct upstream *up)
{
	r->up = up;
}

void resolver_set_admit_was(struct resolver *r, const struct config *was)
{
	r->admit_was = was;
}

/* The sets' floor: the latest expiry prov holds for a's entry. */
static uint64_t prov_floor(void *arg, const struct netaddr *a, uint64_t now)
{
	return prov_expires(arg, a, now);
}

/* Every add is noted in prov first (admit_note_prov), so prov's latest
 * link is at least what the add asks for, and the longest any answer
 * asked: the sets never send less. */
void resolver_set_prov(struct resolver *r, struct prov *prov)
{
	r->prov = prov;
	if (r->sets != NULL)
		sets_set_floor(r->sets, prov != NULL ? prov_floor : NULL, prov);
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

/* A reload keeps an answer whose name the new policy allows and whose
 * addresses it still admits: an answer cached under a wider allow_cidrs,
 * or with an address that is now an upstream's, is asked again (a hit
 * would hand out, and ask the sets for, what the parent now refuses). */
static bool cache_keep(void *arg, const uint8_t *key, size_t keylen,
		       const struct cache_entry *e)
{
	const struct resolver *r = arg;

	if (!admit_allowed(r->cfg, r->pol, key, keylen))
		return false;
	for (size_t i = 0; i < e->n_addrs; i++) {
		if (admit_check(r->cfg, &e->addrs[i].addr) != ADMIT_OK)
			return false;
	}
	return true;
}

static bool cache_keep_none(void *arg, const uint8_t *key, size_t keylen,
			    const struct cache_entry *e)
{
	(void)arg;
	(void)key;
	(void)keylen;
	(void)e;
	return false;
}

/* The policy changed while p's question was upstream, and its name is no
 * longer allowed: every waiting client gets the deny answer, and the
 * upstream's answer is dropped unread. */
static void deny_pending(struct pending *p)
{
	const struct config *cfg = p->r->cfg;
	char name[DNS_NAME_STRLEN], text[2 * DNS_NAME_STRLEN + 64];
	struct rquery *rq;

	dns_name_to_text(p->qname, p->qname_len, name, sizeof(name));
	log_limited(LOG_CLASS_DENIED, LOGL_WARN, "policy",
		    "denied %s: removed from the allowlist while upstream",
		    name);
	policy_admitting("not in allow (removed by a reload); ", name, text,
			 sizeof(text));
	while ((rq = TAILQ_FIRST(&p->waiters)) != NULL) {
		TAILQ_REMOVE(&p->waiters, rq, link);
		if (!rq->c.audited)
			stats_inc(STAT_DENIED);
		local_reply(&rq->q, &rq->c, rq,
			    cfg->deny_rcode == CONFIG_DENY_REFUSED
				? DNS_RCODE_REFUSED
				: DNS_RCODE_NXDOMAIN,
			    DNS_EDE_BLOCKED, text);
		free(rq);
	}
	free_pending(p);
}

/* A slot of the in-flight cap for c's question q: 0, or -EBUSY, -EDQUOT
 * or -ENOSPC (quota_take) with the refusal logged. */
static int take_slot(struct resolver *r, const struct dns_query *q,
		     const struct client *c, uint32_t *slot)
{
	char name[DNS_NAME_STRLEN], type[16], who[NETADDR_ENDPOINT_STRLEN];
	char why[IF_NAMESIZE + 96];
	struct quota_client qc = {
	    .peer = (const struct sockaddr *)&c->peer,
	    .ifindex = c->ifindex,
	    .ports = ifports_count(r->ports, c->ifindex),
	};
	int rc = quota_take(r->quota, &qc, slot);

	if (rc == 0)
		return 0;
	stats_inc(STAT_OVER_CAP);
	stats_inc(STAT_SHED_UPSTREAM);
	/* a flood past the cap is what comes here: format only a line
	 * that is written */
	if (!log_limited_take(LOG_CLASS_OVERLOAD, LOGL_WARN, "resolver"))
		return rc;
	if (rc == -EBUSY)
		snprintf(why, sizeof(why), "max_inflight reached");
	else if (rc == -EDQUOT)
		snprintf(why, sizeof(why), "this client's share is used up");
	else
		snprintf(why, sizeof(why),
			 "interface %s: the share of its %u real container(s) "
			 "is used up (%u)",
			 ifports_name(r->ports, c->ifindex), qc.ports,
			 quota_iface_bound(r->quota, &qc));
	local_describe(q, (const struct sockaddr *)&c->peer, name, sizeof(name),
		       type, sizeof(type), who, sizeof(who));
	log_warn("resolver", "%s %s from %s: SERVFAIL, %s (%u in flight)", name,
		 type, who, why, quota_used(r->quota));
	return rc;
}
