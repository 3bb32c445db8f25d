// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the resolver against fakes: an upstream that records each
 * question and completes it when the test says, and sets whose acks come
 * when the test says (or never). They show what the daemon answers locally
 * (denied names, other classes), the cache, the in-flight cap and each
 * client's share of it, remembered failures, serve-stale, the upstream's
 * SERVFAIL, a failed send, and the kernel step's failures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixtures.h"

#include "config/config.h"
#include "dns/dnsmsg.h"
#include "resolve/local.h"
#include "base/log.h"
#include "config/policy.h"
#include "resolve/resolver.h"
#include "sets/sets.h"
#include "resolve/upstream.h"

/* ---- the fake upstream ---- */

#define MAX_SENT 64

static struct {
	int sent;
	int send_rc; /* what upstream_send returns */
	uint16_t next_id;
	struct {
		uint8_t q[512];
		size_t len;
		upstream_cb cb;
		void *arg;
		bool done;
	} q[MAX_SENT];
} up;

int upstream_new_id(struct upstream *u, uint16_t *id)
{
	(void)u;
	*id = ++up.next_id;
	return 0;
}

int upstream_send(struct upstream *u, const uint8_t *query, size_t len,
		  upstream_cb cb, void *arg)
{
	(void)u;
	if (up.send_rc != 0)
		return up.send_rc;
	assert_true(up.sent < MAX_SENT);
	memcpy(up.q[up.sent].q, query, len);
	up.q[up.sent].len = len;
	up.q[up.sent].cb = cb;
	up.q[up.sent].arg = arg;
	up.sent++;
	return 0;
}

const char *upstream_strerror(int status)
{
	(void)status;
	return "fake";
}

/* Complete question i with status, or (status 0) an answer of rcode
 * carrying one A record addr with ttl. */
static void up_complete(int i, int status, uint8_t rcode, const char *addr,
			uint32_t ttl)
{
	uint8_t a[600];
	size_t qlen = up.q[i].len, n;
	struct dns_reader r;
	uint8_t name[DNS_MAX_NAME];
	size_t nlen;

	assert_false(up.q[i].done);
	up.q[i].done = true;
	if (status != 0) {
		up.q[i].cb(up.q[i].arg, status, NULL, 0);
		return;
	}
	/* Header and question of the query, then one answer record. */
	dns_reader_init(&r, up.q[i].q, qlen);
	assert_int_equal(dns_skip(&r, 12), 0);
	assert_int_equal(dns_read_name(&r, name, &nlen), 0);
	n = 12 + nlen + 4;
	memcpy(a, up.q[i].q, n);
	a[2] = 0x81;
	a[3] = (uint8_t)(0x80 | rcode);
	a[6] = 0, a[7] = addr != NULL ? 1 : 0;
	a[8] = a[9] = a[10] = a[11] = 0;
	if (addr != NULL) {
		uint8_t rr[] = {0xc0,
				12,
				0,
				1,
				0,
				1,
				(uint8_t)(ttl >> 24),
				(uint8_t)(ttl >> 16),
				(uint8_t)(ttl >> 8),
				(uint8_t)ttl,
				0,
				4};
		memcpy(a + n, rr, sizeof(rr));
		n += sizeof(rr);
		assert_int_equal(inet_pton(AF_INET, addr, a + n), 1);
		n += 4;
	}
	up.q[i].cb(up.q[i].arg, 0, a, n);
}

/* ---- the fake sets ---- */

static struct {
	int adds;
	int add_rc;
	sets_done_fn done;
	void *arg;
	bool covered;
	uint64_t behind_ms; /* sets_behind_ms */
} sets;

int sets_add_for(struct sets *s, const struct dns_addr *addrs, size_t n,
		 const struct netaddr *clients, size_t n_clients,
		 sets_done_fn done, void *arg)
{
	(void)s;
	(void)addrs;
	(void)n;
	(void)clients;
	(void)n_clients;
	if (sets.add_rc != 0)
		return sets.add_rc;
	sets.adds++;
	sets.done = done;
	sets.arg = arg;
	return 0;
}

bool sets_covered(struct sets *s, const struct dns_addr *addrs, size_t n)
{
	(void)s;
	(void)addrs;
	(void)n;
	return sets.covered;
}

uint64_t sets_behind_ms(const struct sets *s)
{
	(void)s;
	return sets.behind_ms;
}

void sets_set_floor(struct sets *s, sets_floor_fn fn, void *arg)
{
	(void)s;
	(void)fn;
	(void)arg;
}

/* recent.c (linked for the resolver's recent_note hook) computes expiries
 * with it; the real one lives in sets.c, which this test replaces. */
uint32_t sets_timeout(uint32_t ttl, uint32_t min, uint32_t max)
{
	return ttl < min ? min : ttl > max ? max : ttl;
}

static void sets_ack(int status)
{
	sets_done_fn done = sets.done;

	sets.done = NULL;
	assert_non_null(done);
	done(sets.arg, status);
}

/* ---- the client side ---- */

struct reply {
	int n;
	bool pending; /* the reply completed a returned rquery */
	bool local;   /* it carried the local address given */
	uint8_t rcode;
	uint16_t ancount;
	uint8_t msg[4096];
	size_t len;
};

static struct reply got;

static void on_reply(void *ctx, struct rquery *q, const struct sockaddr *peer,
		     socklen_t peerlen, const struct sockaddr *local,
		     const uint8_t *msg, size_t len)
{
	(void)ctx;
	(void)peer;
	(void)peerlen;
	got.local = local != NULL;
	got.n++;
	got.pending = q != NULL;
	got.rcode = msg[3] & 15;
	got.ancount = (uint16_t)(msg[6] << 8 | msg[7]);
	got.len = len < sizeof(got.msg) ? len : sizeof(got.msg);
	memcpy(got.msg, msg, got.len);
}

/* The local address queries are given with (a wildcard listener's). */
static const struct sockaddr *ask_local;

static struct sockaddr_in client(const char *addr)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(40000)};

	assert_int_equal(inet_pton(AF_INET, addr, &sin.sin_addr), 1);
	return sin;
}

static struct rquery *ask_from(struct resolver *r, const char *who,
			       const char *name, uint16_t qclass)
{
	uint8_t q[300] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t nlen;
	struct sockaddr_in sin = client(who);

	assert_int_equal(dns_name_from_text(name, q + 12, &nlen), 0);
	q[12 + nlen] = 0;
	q[13 + nlen] = 1; /* A */
	q[14 + nlen] = (uint8_t)(qclass >> 8);
	q[15 + nlen] = (uint8_t)qclass;
	memset(&got, 0, sizeof(got));
	return resolver_handle(r, q, 16 + nlen, (struct sockaddr *)&sin,
			       sizeof(sin), ask_local, 0, 0, 0, false, on_reply,
			       NULL);
}

static struct rquery *ask(struct resolver *r, const char *name)
{
	return ask_from(r, "198.18.0.2", name, 1);
}

static bool reply_has(const char *addr)
{
	uint8_t a[4];

	assert_int_equal(inet_pton(AF_INET, addr, a), 1);
	return memmem(got.msg, got.len, a, 4) != NULL;
}

/* ---- fixture ---- */

struct fix {
	struct config cfg;
	struct policy *pol;
	struct resolver *r;
};

static struct fix *fix_new(bool with_sets, uint32_t max_inflight)
{
	struct fix *f = calloc(1, sizeof(*f));
	const char *why;

	memset(&up, 0, sizeof(up));
	memset(&sets, 0, sizeof(sets));
	f->cfg.ttl_min = 60;
	f->cfg.ttl_max = 86400;
	f->cfg.max_inflight = max_inflight;
	f->cfg.failure_ttl = 5;
	f->cfg.serve_stale = 3600;
	f->cfg.budget_burst = 600;
	f->cfg.budget_per_minute = 120;
	f->cfg.budget_depth_max = 6;
	f->cfg.budget_label_max = 63;
	f->pol = policy_new();
	assert_int_equal(policy_add(f->pol, "*.allowed.test", &why), 0);
	f->r = resolver_new(NULL, &f->cfg, f->pol, NULL,
			    with_sets ? (struct sets *)f : NULL);
	assert_non_null(f->r);
	return f;
}

/* As serve.c does: the upstream completes what is left (-ECANCELED),
 * then the resolver goes. */
static void fix_free(struct fix *f)
{
	resolver_shutdown(f->r);
	for (int i = 0; i < up.sent; i++) {
		if (!up.q[i].done)
			up_complete(i, -ECANCELED, 0, NULL, 0);
	}
	if (sets.done != NULL)
		sets_ack(-ECANCELED);
	assert_int_equal(resolver_inflight(f->r), 0);
	resolver_free(f->r);
	policy_free(f->pol);
	free(f);
}

/* ---- tests ---- */

static void denied_name_is_answered_here(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_null(ask(f->r, "www.evil.test"));
	assert_int_equal(got.n, 1);
	assert_int_equal(got.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(up.sent, 0);
	fix_free(f);
}

static void other_classes_are_refused_here(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_null(ask_from(f->r, "198.18.0.2", "www.allowed.test", 3));
	assert_int_equal(got.rcode, DNS_RCODE_REFUSED);
	assert_null(ask_from(f->r, "198.18.0.2", "www.allowed.test", 255));
	assert_int_equal(got.rcode, DNS_RCODE_REFUSED);
	assert_int_equal(up.sent, 0);
	fix_free(f);
}

static void allowed_name_is_forwarded_then_cached(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_non_null(ask(f->r, "www.allowed.test"));
	assert_int_equal(got.n, 0);
	assert_int_equal(up.sent, 1);
	assert_int_equal(resolver_inflight(f->r), 1);
	up_complete(0, 0, 0, "198.18.1.10", 300);
	assert_int_equal(got.n, 1);
	assert_true(got.pending);
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_true(reply_has("198.18.1.10"));
	assert_int_equal(resolver_inflight(f->r), 0);
	/* The repeat: from the cache, at once. */
	assert_null(ask(f->r, "WWW.allowed.test"));
	assert_int_equal(got.n, 1);
	assert_true(reply_has("198.18.1.10"));
	assert_int_equal(up.sent, 1);
	fix_free(f);
}

static void identical_questions_share_one_upstream_query(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_non_null(ask(f->r, "www.allowed.test"));
	assert_non_null(ask(f->r, "www.allowed.test"));
	assert_int_equal(up.sent, 1);
	fix_free(f);
}

static void internal_address_is_stripped(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_non_null(ask(f->r, "private.allowed.test"));
	up_complete(0, 0, 0, "10.1.2.3", 300);
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(got.ancount, 0);
	assert_false(reply_has("10.1.2.3"));
	fix_free(f);
}

/* A reload that widens allow_cidrs: until the parent has the new rules
 * (resolver_set_admit_was), 10.1.2.3 is stripped as the old config
 * would, since the parent still judges with it and stops on a refused
 * add; once cleared, the new config alone decides and it is handed out. */
static void admit_was_strips_until_cleared(void **state)
{
	struct fix *f = fix_new(true, 2048);
	struct netcidr ten = {.addr = {.family = AF_INET, .bytes = {10}},
			      .prefix = 8};
	struct config was = f->cfg;

	(void)state;
	f->cfg.allow_cidrs = &ten;
	f->cfg.n_allow_cidrs = 1;
	resolver_set_admit_was(f->r, &was);
	assert_non_null(ask(f->r, "private.allowed.test"));
	up_complete(0, 0, 0, "10.1.2.3", 300);
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(got.ancount, 0);
	assert_false(reply_has("10.1.2.3"));
	assert_int_equal(sets.adds, 0);
	resolver_set_admit_was(f->r, NULL);
	assert_non_null(ask(f->r, "other.allowed.test"));
	up_complete(1, 0, 0, "10.1.2.4", 300);
	assert_int_equal(sets.adds, 1);
	sets_ack(0);
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(got.ancount, 1);
	assert_true(reply_has("10.1.2.4"));
	fix_free(f);
}

static void failure_is_remembered(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_non_null(ask(f->r, "a.allowed.test"));
	up_complete(0, -ETIMEDOUT, 0, NULL, 0);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_null(ask(f->r, "a.allowed.test"));
	assert_int_equal(got.n, 1);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_int_equal(up.sent, 1);
	/* Another name still goes upstream. */
	assert_non_null(ask(f->r, "b.allowed.test"));
	assert_int_equal(up.sent, 2);
	fix_free(f);
}

static void upstream_servfail_is_a_failure(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_non_null(ask(f->r, "a.allowed.test"));
	up_complete(0, 0, DNS_RCODE_SERVFAIL, NULL, 0);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_null(ask(f->r, "a.allowed.test"));
	assert_int_equal(up.sent, 1);
	fix_free(f);
}

static void failed_send_is_servfail_and_frees_the_slot(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	up.send_rc = -EIO;
	assert_null(ask(f->r, "a.allowed.test"));
	assert_int_equal(got.n, 1);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_int_equal(resolver_inflight(f->r), 0);
	up.send_rc = 0;
	assert_non_null(ask(f->r, "a.allowed.test"));
	fix_free(f);
}

/* max_inflight 16: one client may hold 12; the others keep the rest;
 * denied names are answered whatever the count. */
static void cap_and_each_clients_share(void **state)
{
	struct fix *f = fix_new(false, 16);
	char name[64];

	(void)state;
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "n%d.allowed.test", i);
		assert_non_null(ask_from(f->r, "198.18.0.2", name, 1));
	}
	assert_null(ask_from(f->r, "198.18.0.2", "n12.allowed.test", 1));
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_int_equal(up.sent, 12);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "m%d.allowed.test", i);
		assert_non_null(ask_from(f->r, "198.18.0.3", name, 1));
	}
	assert_null(ask_from(f->r, "198.18.0.4", "o.allowed.test", 1));
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_int_equal(resolver_inflight(f->r), 16);
	assert_null(ask_from(f->r, "198.18.0.2", "x.evil.test", 1));
	assert_int_equal(got.rcode, DNS_RCODE_NXDOMAIN);
	/* An answer frees a slot. */
	up_complete(0, 0, 0, "198.18.1.10", 300);
	assert_int_equal(resolver_inflight(f->r), 15);
	assert_non_null(ask_from(f->r, "198.18.0.4", "o.allowed.test", 1));
	fix_free(f);
}

static void stale_answer_when_upstream_fails(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	assert_non_null(ask(f->r, "www.allowed.test"));
	up_complete(0, 0, 0, "198.18.1.10", 1);
	sleep(2); /* the answer (TTL 1) expires */
	assert_non_null(ask(f->r, "www.allowed.test"));
	assert_int_equal(up.sent, 2);
	up_complete(1, -ETIMEDOUT, 0, NULL, 0);
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_true(reply_has("198.18.1.10"));
	/* Within failure_ttl: stale again, without asking upstream. */
	assert_null(ask(f->r, "www.allowed.test"));
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_true(reply_has("198.18.1.10"));
	assert_int_equal(up.sent, 2);
	fix_free(f);
}

static void stale_off_is_servfail(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	f->cfg.serve_stale = 0;
	assert_non_null(ask(f->r, "www.allowed.test"));
	up_complete(0, 0, 0, "198.18.1.10", 1);
	sleep(2);
	assert_non_null(ask(f->r, "www.allowed.test"));
	up_complete(1, -ETIMEDOUT, 0, NULL, 0);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	fix_free(f);
}

/* The kernel step: no answer before the ack; a failed add is SERVFAIL;
 * an ack that never comes leaves the client waiting, and its transport
 * can cancel it. */
static void answer_waits_for_the_ack(void **state)
{
	struct fix *f = fix_new(true, 2048);
	struct rquery *rq;

	(void)state;
	assert_non_null(ask(f->r, "www.allowed.test"));
	up_complete(0, 0, 0, "198.18.1.10", 300);
	assert_int_equal(got.n, 0);
	assert_int_equal(sets.adds, 1);
	sets_ack(0);
	assert_int_equal(got.n, 1);
	assert_true(reply_has("198.18.1.10"));

	assert_non_null(ask(f->r, "b.allowed.test"));
	up_complete(1, 0, 0, "198.18.1.11", 300);
	sets_ack(-ENOSPC);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_false(reply_has("198.18.1.11"));

	/* A cache hit the kernel must confirm, whose ack never comes. */
	rq = ask(f->r, "www.allowed.test");
	assert_non_null(rq);
	assert_int_equal(got.n, 0);
	resolver_cancel(rq);
	sets_ack(0); /* late: nobody waits any more */
	assert_int_equal(got.n, 0);

	/* The sets refuse the batch at once: SERVFAIL, no rquery. */
	sets.add_rc = -ENOMEM;
	assert_null(ask(f->r, "www.allowed.test"));
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	fix_free(f);
}

/* While the set channel's oldest add has waited its bound, an answer
 * that needs an add is shed at once (SERVFAIL with an EDE, counted),
 * the upstream's and a cache hit's alike; below the bound it waits for
 * the ack as before. */
static void behind_set_channel_sheds(void **state)
{
	struct fix *f = fix_new(true, 2048);
	uint64_t shed = stats_get(STAT_SHED_SET_ADD);

	(void)state;
	sets.behind_ms = 249;
	assert_non_null(ask(f->r, "www.allowed.test"));
	up_complete(0, 0, 0, "198.18.1.10", 300);
	assert_int_equal(got.n, 0);
	assert_int_equal(sets.adds, 1);
	sets_ack(0);
	assert_int_equal(got.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(stats_get(STAT_SHED_SET_ADD), shed);

	sets.behind_ms = 250;
	assert_non_null(ask(f->r, "b.allowed.test"));
	up_complete(1, 0, 0, "198.18.1.11", 300);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_false(reply_has("198.18.1.11"));
	assert_int_equal(sets.adds, 1);
	assert_int_equal(stats_get(STAT_SHED_SET_ADD), shed + 1);

	/* a cache hit the kernel must confirm: shed before it waits */
	assert_null(ask(f->r, "www.allowed.test"));
	assert_int_equal(got.n, 1);
	assert_int_equal(got.rcode, DNS_RCODE_SERVFAIL);
	assert_false(reply_has("198.18.1.10"));
	assert_int_equal(sets.adds, 1);
	assert_int_equal(stats_get(STAT_SHED_SET_ADD), shed + 2);
	fix_free(f);
}

/* The address a query was sent to comes back with its reply, immediate
 * or later, so the transport can answer from it. */
static void local_address_comes_back_with_the_reply(void **state)
{
	struct fix *f = fix_new(false, 2048);
	struct sockaddr_in local = client("198.18.9.9");

	(void)state;
	ask_local = (const struct sockaddr *)&local;
	assert_null(ask(f->r, "www.evil.test"));
	assert_true(got.local);
	assert_non_null(ask(f->r, "www.allowed.test"));
	up_complete(0, 0, 0, "198.18.1.10", 300);
	assert_int_equal(got.n, 1);
	assert_true(got.local);
	ask_local = NULL;
	assert_null(ask(f->r, "www.evil.test"));
	assert_false(got.local);
	fix_free(f);
}

static bool suffix(const struct policy *pol, const char *name)
{
	struct dns_query q;
	size_t n;

	memset(&q, 0, sizeof(q));
	assert_int_equal(dns_name_from_text(name, q.lname, &n), 0);
	q.name_len = n;
	return local_search_suffix(pol, &q);
}

/* A search-list expansion of an allowed name is told apart from a name
 * that is simply not allowed (it is logged at debug only). */
static void search_list_expansions_are_recognised(void **state)
{
	struct policy *pol = policy_new();
	const char *why;

	(void)state;
	assert_int_equal(policy_add(pol, "*.allowed.test", &why), 0);
	assert_int_equal(policy_add(pol, "example.com", &why), 0);
	assert_true(suffix(pol, "www.allowed.test.default.svc.cluster.local"));
	assert_true(suffix(pol, "example.com.svc.cluster.local"));
	assert_true(suffix(pol, "a.b.allowed.test.corp"));
	assert_false(suffix(pol, "www.evil.test"));
	assert_false(suffix(pol, "allowed.test.corp"));
	assert_false(suffix(pol, "www.example.com.corp"));
	assert_false(suffix(pol, "example.com"));
	policy_free(pol);
}

/* The log lines of refused names, read from stderr: a name off the
 * allowlist at warning, with its type and client; a search-list
 * expansion of an allowed one at debug only (the EDE text a denial
 * carries is read by test_denial_explains_itself). */
static char log_text[4096];
static const char *ask_name;
static void ask_it(void *r)
{
	assert_null(ask(r, ask_name));
}

static void capture_stderr(struct resolver *r, const char *name)
{
	ask_name = name;
	fixture_stderr(ask_it, r, log_text, sizeof(log_text));
}

static void denials_are_logged_by_kind(void **state)
{
	struct fix *f = fix_new(false, 2048);

	(void)state;
	log_setup(LOGL_DEBUG, LOG_FORMAT_TEXT, false);
	capture_stderr(f->r, "WWW.Evil.test");
	assert_non_null(strstr(log_text,
			       "denied WWW.Evil.test A from "
			       "198.18.0.2:40000: not on the allowlist"));
	capture_stderr(f->r, "www.allowed.test.default.svc.cluster.local");
	assert_non_null(strstr(log_text, "an allowed name with a search-list "
					 "suffix"));
	assert_null(strstr(log_text, "not on the allowlist"));
	/* at warning, the expansion writes nothing, while a plain denial
	 * still does */
	log_setup(LOGL_WARN, LOG_FORMAT_TEXT, false);
	capture_stderr(f->r, "www.allowed.test.corp.example");
	assert_string_equal(log_text, "");
	capture_stderr(f->r, "api.evil.test");
	assert_non_null(strstr(log_text,
			       "denied api.evil.test A from "
			       "198.18.0.2:40000: not on the allowlist"));
	assert_int_equal(got.rcode, DNS_RCODE_NXDOMAIN);
	log_setup(LOGL_ERR, LOG_FORMAT_TEXT, false);
	fix_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(denied_name_is_answered_here),
	    cmocka_unit_test(other_classes_are_refused_here),
	    cmocka_unit_test(allowed_name_is_forwarded_then_cached),
	    cmocka_unit_test(identical_questions_share_one_upstream_query),
	    cmocka_unit_test(internal_address_is_stripped),
	    cmocka_unit_test(admit_was_strips_until_cleared),
	    cmocka_unit_test(failure_is_remembered),
	    cmocka_unit_test(upstream_servfail_is_a_failure),
	    cmocka_unit_test(failed_send_is_servfail_and_frees_the_slot),
	    cmocka_unit_test(cap_and_each_clients_share),
	    cmocka_unit_test(stale_answer_when_upstream_fails),
	    cmocka_unit_test(stale_off_is_servfail),
	    cmocka_unit_test(answer_waits_for_the_ack),
	    cmocka_unit_test(behind_set_channel_sheds),
	    cmocka_unit_test(search_list_expansions_are_recognised),
	    cmocka_unit_test(local_address_comes_back_with_the_reply),
	    cmocka_unit_test(denials_are_logged_by_kind),
	};

	log_setup(LOGL_ERR, LOG_FORMAT_TEXT, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
