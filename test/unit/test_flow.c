// SPDX-License-Identifier: GPL-2.0-or-later
/* The name check's pure parts: the ClientHello reader (whole, in every
 * prefix, across records, without a name, malformed), the verdict on a
 * flow (allowed and answered, not allowed, allowed but not answered with
 * this address, no name) and the reassembly table's bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "config/policy.h"
#include "flow/flowdecide.h"
#include "flow/flowpkt.h"
#include "flow/flowtab.h"
#include "flow/httphost.h"
#include "flow/tlshello.h"

static struct tlshello h;

static size_t put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

/* A ClientHello record around the e bytes of extensions at ext. */
static size_t wrap(uint8_t *out, const uint8_t *ext, size_t e)
{
	uint8_t body[2600];
	size_t b = 0;

	body[b++] = 3;
	body[b++] = 3;
	memset(body + b, 0x11, 32);
	b += 32;
	body[b++] = 0; /* session id */
	b += put16(body + b, 2);
	b += put16(body + b, 0x1301);
	body[b++] = 1;
	body[b++] = 0;
	b += put16(body + b, e);
	memcpy(body + b, ext, e);
	b += e;
	out[0] = 22;
	out[1] = 3;
	out[2] = 1;
	put16(out + 3, b + 4);
	out[5] = 1;
	out[6] = 0;
	put16(out + 7, b);
	memcpy(out + 9, body, b);
	return 9 + b;
}

/* A TLS 1.3-style ClientHello record: name (NULL: no server_name), an
 * ECH extension when ech, a duplicate server_name when dup. */
static size_t build(uint8_t *out, const char *name, bool ech, bool dup)
{
	uint8_t ext[600];
	size_t e = 0, n;

	for (int k = 0; name != NULL && k < (dup ? 2 : 1); k++) {
		n = strlen(name);
		e += put16(ext + e, 0);
		e += put16(ext + e, n + 5);
		e += put16(ext + e, n + 3);
		ext[e++] = 0;
		e += put16(ext + e, n);
		memcpy(ext + e, name, n);
		e += n;
	}
	if (ech) {
		e += put16(ext + e, 0xfe0d);
		e += put16(ext + e, 4);
		memset(ext + e, 0xaa, 4);
		e += 4;
	}
	e += put16(ext + e, 0x002b); /* supported_versions */
	e += put16(ext + e, 3);
	ext[e++] = 2;
	e += put16(ext + e, 0x0304);
	return wrap(out, ext, e);
}

static void hello_name_lower_case_and_every_prefix_waits(void **state)
{
	uint8_t buf[1024];
	size_t n = build(buf, "WWW.Allowed.Test", false, false);

	(void)state;
	assert_int_equal(tlshello_parse(buf, n, &h), 0);
	assert_true(h.has_name);
	assert_string_equal(h.name, "www.allowed.test");
	assert_false(h.has_ech);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tlshello_parse(buf, i, &h), -EAGAIN);
}

static void hello_across_two_records(void **state)
{
	uint8_t one[1024], two[1100];
	size_t n = build(one, "a.test", true, false), body = n - 5, cut = 20;

	(void)state;
	memcpy(two, one, 3);
	put16(two + 3, cut);
	memcpy(two + 5, one + 5, cut);
	memcpy(two + 5 + cut, one, 3);
	put16(two + 8 + cut, body - cut);
	memcpy(two + 10 + cut, one + 5 + cut, body - cut);
	assert_int_equal(tlshello_parse(two, n + 5, &h), 0);
	assert_string_equal(h.name, "a.test");
	assert_true(h.has_ech);
	assert_int_equal(tlshello_parse(two, n, &h), -EAGAIN);
}

static void hello_without_name_and_garbage(void **state)
{
	uint8_t buf[1024];
	size_t n = build(buf, NULL, false, false);
	const char *http = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";

	(void)state;
	assert_int_equal(tlshello_parse(buf, n, &h), 0);
	assert_false(h.has_name);
	assert_int_equal(
	    tlshello_parse((const uint8_t *)http, strlen(http), &h), -EPROTO);
	n = build(buf, "a.test", false, true);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	n = build(buf, "a.te st", false, false);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	n = build(buf, "a.test.", false, false);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	buf[5] = 2; /* a ServerHello */
	assert_int_equal(tlshello_parse(buf, n, &h), -EPROTO);
}

/* dummies empty extensions of distinct unknown types, then a server_name
 * for each of the names (NULL-terminated). */
static size_t build_many(uint8_t *out, size_t dummies, const char *const *names)
{
	uint8_t ext[2400];
	size_t e = 0, n;

	for (size_t i = 0; i < dummies; i++) {
		e += put16(ext + e, 0x7000 + i);
		e += put16(ext + e, 0);
	}
	for (; *names != NULL; names++) {
		n = strlen(*names);
		e += put16(ext + e, 0);
		e += put16(ext + e, n + 5);
		e += put16(ext + e, n + 3);
		ext[e++] = 0;
		e += put16(ext + e, n);
		memcpy(ext + e, *names, n);
		e += n;
	}
	return wrap(out, ext, e);
}

/* A second server_name is refused however many extensions come first,
 * and so is a hello with more than TLSHELLO_EXTS_MAX extensions. */
static void hello_duplicate_name_after_many_extensions(void **state)
{
	static const char *const one[] = {"a.test", NULL};
	static const char *const two[] = {"evil.test", "a.test", NULL};
	uint8_t buf[2700];
	size_t n;

	(void)state;
	n = build_many(buf, TLSHELLO_EXTS_MAX - 1, one);
	assert_int_equal(tlshello_parse(buf, n, &h), 0);
	assert_string_equal(h.name, "a.test");
	n = build_many(buf, TLSHELLO_EXTS_MAX, one);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	n = build_many(buf, 58, two);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	n = build_many(buf, 70, two); /* both names past the 64th type */
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	n = build_many(buf, TLSHELLO_EXTS_MAX - 2, two);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
	n = build_many(buf, 0, two);
	assert_int_equal(tlshello_parse(buf, n, &h), -EBADMSG);
}

/* stream: a first hello for a.test (offering TLS 1.3), then the records
 * at rest (n bytes). */
static size_t flight(uint8_t *out, const uint8_t *rest, size_t n)
{
	size_t k = build(out, "a.test", false, false);

	memcpy(out + k, rest, n);
	return k + n;
}

/* tlshello_flight reads on until the handshake is encrypted; a second
 * ClientHello must name the same server. */
static void hello_flight_until_encrypted(void **state)
{
	static const uint8_t ccs[] = {20, 3, 3, 0, 1, 1};
	static const uint8_t app[] = {23, 3, 3, 0, 2, 0xaa, 0xbb};
	static const uint8_t fin12[] = {22, 3, 3, 0, 4, 0x14, 0x9f, 0x01, 0x02};
	static const char *const none[] = {NULL};
	uint8_t buf[3000], rest[1200];
	size_t n, k;

	(void)state;
	n = flight(buf, app, 0);
	assert_int_equal(tlshello_flight(buf, n, &h), -EAGAIN);
	assert_true(h.first_whole);
	assert_string_equal(h.name, "a.test");
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(tlshello_flight(buf, i, &h), -EAGAIN);
		assert_false(h.first_whole);
	}
	n = flight(buf, app, sizeof(app));
	assert_int_equal(tlshello_flight(buf, n, &h), 0);
	/* TLS 1.2's encrypted Finished after its ChangeCipherSpec. */
	memcpy(rest, ccs, sizeof(ccs));
	memcpy(rest + sizeof(ccs), fin12, sizeof(fin12));
	n = flight(buf, rest, sizeof(ccs) + sizeof(fin12));
	assert_int_equal(tlshello_flight(buf, n, &h), 0);
	/* After a HelloRetryRequest: the same name, then encrypted. */
	memcpy(rest, ccs, sizeof(ccs));
	k = sizeof(ccs) + build(rest + sizeof(ccs), "A.test", false, false);
	n = flight(buf, rest, k);
	assert_int_equal(tlshello_flight(buf, n, &h), -EAGAIN);
	memcpy(rest + k, app, sizeof(app));
	n = flight(buf, rest, k + sizeof(app));
	assert_int_equal(tlshello_flight(buf, n, &h), 0);
	assert_string_equal(h.name, "a.test");
	/* Another name, or none, in the second hello. */
	k = sizeof(ccs) + build(rest + sizeof(ccs), "evil.test", false, false);
	n = flight(buf, rest, k);
	assert_int_equal(tlshello_flight(buf, n, &h), -EXDEV);
	k = sizeof(ccs) + build(rest + sizeof(ccs), NULL, false, false);
	n = flight(buf, rest, k);
	assert_int_equal(tlshello_flight(buf, n, &h), -EXDEV);
	/* Without the ChangeCipherSpec too. */
	k = build(rest, "evil.test", false, false);
	n = flight(buf, rest, k);
	assert_int_equal(tlshello_flight(buf, n, &h), -EXDEV);
	/* A hello offering only TLS 1.2 ends the flight. */
	n = build_many(buf, 0, none);
	assert_int_equal(tlshello_flight(buf, n, &h), 0);
	assert_false(h.first_whole);
	/* Bytes after the first hello in its own record. */
	n = build(buf, "a.test", false, false);
	buf[4] = (uint8_t)(buf[4] + 1);
	buf[n++] = 0;
	assert_int_equal(tlshello_flight(buf, n, &h), -EBADMSG);
}

static int flight_of(const char *stream)
{
	static struct httphost hh;

	return httphost_flight((const uint8_t *)stream, strlen(stream), &hh);
}

/* Every head of the first flight names the same host; a body of known
 * length is skipped; nothing may follow a chunked one. */
static void http_flight_every_head(void **st)
{
	(void)st;
	assert_int_equal(flight_of("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"),
			 0);
	assert_int_equal(
	    flight_of("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
		      "GET /2 HTTP/1.1\r\nHost: A.test:80\r\n\r\n"),
	    0);
	assert_int_equal(
	    flight_of("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
		      "GET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
	    -EXDEV);
	assert_int_equal(flight_of("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
				   "GET /2 HTTP/1.1\r\n\r\n"),
			 -EXDEV);
	assert_int_equal(flight_of("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
				   "GET /2 HTTP/1.1\r\nHost: ev"),
			 -EAGAIN);
	assert_int_equal(flight_of("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
				   "\x16\x03\x01"),
			 -EBADMSG);
	assert_int_equal(
	    flight_of("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n"
		      "\r\nbodyGET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
	    -EXDEV);
	assert_int_equal(
	    flight_of(
		"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 40\r\n"
		"\r\nGET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
	    0); /* all of it body: the server reads it so too */
	assert_int_equal(
	    flight_of("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: "
		      "chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n"),
	    -EBADMSG);
	assert_int_equal(
	    flight_of("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n"
		      "Content-Length: 1\r\n\r\nx"),
	    -EBADMSG);
	assert_int_equal(
	    flight_of(
		"POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: +1\r\n"
		"\r\nx"),
	    -EBADMSG);
}

struct answers {
	uint8_t wire[64];
	size_t len;
	struct netaddr a;
};

static bool answered(void *arg, const uint8_t *wire, size_t len,
		     const struct netaddr *dst)
{
	const struct answers *x = arg;

	return len == x->len && memcmp(wire, x->wire, len) == 0 &&
	       netaddr_equal(dst, &x->a);
}

static void verdict_needs_allowed_and_answered_with_this_address(void **state)
{
	struct policy *p = policy_new();
	struct answers x = {.len = 18};
	struct netaddr front = {.family = AF_INET};
	const char *why = NULL;
	char text[300];

	(void)state;
	assert_non_null(p);
	assert_int_equal(policy_add(p, "www.allowed.test", &why), 0);
	assert_int_equal(policy_add(p, "a.b.allowed.test", &why), 0);
	memcpy(x.wire, "\3www\7allowed\4test", 18);
	inet_pton(AF_INET, "198.18.1.10", front.bytes);
	x.a = front;
	assert_int_equal(flowdecide("TLS server name", "www.allowed.test",
				    &front, p, answered, &x, text,
				    sizeof(text)),
			 FLOWDECIDE_OK);
	assert_int_equal(flowdecide("TLS server name", "evil.test", &front, p,
				    answered, &x, text, sizeof(text)),
			 FLOWDECIDE_NOT_ALLOWED);
	assert_string_equal(text, "TLS server name evil.test is not allowed");
	assert_int_equal(flowdecide("TLS server name", "a.b.allowed.test",
				    &front, p, answered, &x, text,
				    sizeof(text)),
			 FLOWDECIDE_NOT_ANSWERED);
	assert_string_equal(text, "TLS server name a.b.allowed.test was not "
				  "answered with 198.18.1.10");
	assert_int_equal(flowdecide("TLS server name", NULL, &front, p,
				    answered, &x, text, sizeof(text)),
			 FLOWDECIDE_NO_NAME);
	assert_string_equal(flowdecide_reason_name(FLOWDECIDE_NOT_ANSWERED),
			    "not_answered");
	policy_free(p);
}

static int n_timeouts;

static enum flowtab_late last_late;

static void on_timeout(void *arg, struct flowtab_flow *f, enum flowtab_late why)
{
	(void)arg;
	(void)f;
	last_late = why;
	n_timeouts++;
}

static void reassembly_in_order_and_bounded(void **state)
{
	struct flowtab *t = flowtab_new(2, 100, 150);
	struct flowtab_key k1 = {.sport = 1, .dport = 443}, k2 = k1, k3 = k1;
	struct flowtab_flow *f, *g;
	uint8_t data[120];

	(void)state;
	memset(data, 'x', sizeof(data));
	k1.src.family = k1.dst.family = AF_INET;
	k2 = k1;
	k2.sport = 2;
	k3 = k1;
	k3.sport = 3;
	f = flowtab_get(t, &k1, 0, true);
	assert_non_null(f);
	assert_ptr_equal(flowtab_get(t, &k1, 0, false), f);
	assert_int_equal(flowtab_append(t, f, 1000, data, 10, 0), 0);
	assert_int_equal(flowtab_append(t, f, 1020, data, 10, 0), -EAGAIN);
	assert_int_equal(flowtab_append(t, f, 1000, data, 10, 0), 0);
	assert_int_equal(flowtab_append(t, f, 1005, data, 10, 0), 0);
	assert_int_equal(f->len, 15);
	assert_int_equal(flowtab_append(t, f, 1015, data, 90, 0), -EMSGSIZE);
	g = flowtab_get(t, &k2, 0, true);
	assert_non_null(g);
	assert_int_equal(flowtab_append(t, g, 7, data, 100, 0), 0);
	assert_int_equal(flowtab_append(t, f, 1015, data, 50, 0), -EMSGSIZE);
	assert_null(flowtab_get(t, &k3, 0, true)); /* two flows at most */
	for (int i = 0; i < FLOWTAB_HELD_MAX; i++)
		assert_int_equal(flowtab_hold(f, (uint32_t)i), 0);
	assert_int_equal(flowtab_hold(f, 99), -ENOSPC);
	flowtab_decide(t, g, true, 10);
	assert_int_equal(flowtab_bytes(t), 15);
	assert_int_equal(g->isn, 7); /* kept: a new ISN is a new connection */
	flowtab_remove(t, g);
	assert_null(flowtab_get(t, &k2, 0, false));
	g = flowtab_get(t, &k2, 0, true);
	assert_non_null(g);
	flowtab_decide(t, g, true, 10);
	flowtab_expire(t, 5000, 5000, 30000, 2000, on_timeout, NULL);
	assert_int_equal(n_timeouts, 1); /* f, still being read */
	assert_int_equal(flowtab_reading(t), 0);
	flowtab_expire(t, 7000, 5000, 30000, 2000, on_timeout, NULL);
	assert_int_equal(flowtab_count(t), 0);
	flowtab_free(t);
}

/* Bytes sent again must equal the ones read where they overlap (a sender
 * can rewrite a page the kernel still holds): before the verdict, and
 * after it while the accepted flow is guarded, whose stream is kept until
 * flowtab_unguard and which flowtab_expire never drops. */
static bool forget_all(void *arg, struct flowtab_flow *f)
{
	(void)f;
	++*(int *)arg;
	return true;
}

static void rewritten_bytes_refused_and_guarded_stream_kept(void **state)
{
	struct flowtab *t = flowtab_new(4, 100, 400);
	struct flowtab_key k = {.sport = 1, .dport = 443};
	const uint8_t good[] = "www.allowed.test", bad[] = "www.evilxxx.test";
	struct flowtab_flow *f;
	int seen = 0;

	(void)state;
	k.src.family = k.dst.family = AF_INET;
	f = flowtab_get(t, &k, 0, true);
	assert_true(flowtab_agrees(f, 5, bad, 16)); /* nothing read yet */
	assert_int_equal(flowtab_append(t, f, 0xfffffff8u, good, 16, 0), 0);
	/* the same bytes again, whole, shifted, past the end, or from
	 * before the start, agree; any byte changed does not */
	assert_int_equal(flowtab_append(t, f, 0xfffffff8u, good, 16, 0), 0);
	assert_true(flowtab_agrees(f, 0xfffffffcu, good + 4, 12));
	assert_true(flowtab_agrees(f, 0xfffffff0u, good, 8));
	assert_true(flowtab_agrees(f, 8, bad, 16));
	assert_true(
	    flowtab_agrees(f, 0xfffffff6u, (const uint8_t *)"..www", 5));
	assert_false(
	    flowtab_agrees(f, 0xfffffff6u, (const uint8_t *)"..wwx", 5));
	assert_false(flowtab_agrees(f, 0xfffffff8u, bad, 16));
	assert_false(flowtab_agrees(f, 0xfffffffcu, bad + 4, 14));
	assert_int_equal(flowtab_append(t, f, 0xfffffff8u, bad, 16, 0),
			 -EBADMSG);
	assert_int_equal(f->len, 16);

	flowtab_guard(t, f, 10);
	assert_true(f->decided && f->accept && f->guarded);
	assert_int_equal(flowtab_reading(t), 0);
	assert_int_equal(flowtab_bytes(t), 16);
	flowtab_expire(t, 100000, 5000, 30000, 2000, on_timeout, NULL);
	assert_ptr_equal(flowtab_get(t, &k, 0, false), f);
	assert_false(flowtab_agrees(f, 0xfffffff8u, bad, 16));
	flowtab_unguard(t, f);
	assert_false(f->guarded);
	assert_int_equal(flowtab_bytes(t), 0);
	flowtab_each_guarded(t, forget_all, &seen);
	assert_int_equal(seen, 0);
	flowtab_expire(t, 100000, 5000, 30000, 2000, on_timeout, NULL);
	assert_null(flowtab_get(t, &k, 0, false));

	f = flowtab_get(t, &k, 0, true);
	assert_int_equal(flowtab_append(t, f, 7, good, 16, 0), 0);
	flowtab_guard(t, f, 10);
	flowtab_each_guarded(t, forget_all, &seen);
	assert_int_equal(seen, 1);
	assert_int_equal(flowtab_count(t), 0);
	assert_int_equal(flowtab_bytes(t), 0);
	flowtab_free(t);
}

/* A slow hello is read on while each segment brings new bytes within the
 * idle bound (old bytes again do not move it), for at most the total
 * bound. */
static void deadlines_idle_and_total(void **state)
{
	struct flowtab *t = flowtab_new(4, 1000, 4000);
	struct flowtab_key k1 = {.sport = 1, .dport = 443}, k2;
	struct flowtab_flow *f, *g;
	uint8_t data[10] = {0};
	uint64_t now;

	(void)state;
	k1.src.family = k1.dst.family = AF_INET;
	k2 = k1;
	k2.sport = 2;
	n_timeouts = 0;
	f = flowtab_get(t, &k1, 1000, true);
	for (uint32_t i = 0; i < 6; i++) { /* 4 s apart: 20 s in all */
		now = 1000 + 4000 * (uint64_t)i;
		assert_int_equal(
		    flowtab_append(t, f, 100 + 10 * i, data, 10, now), 0);
		flowtab_expire(t, now + 3999, 5000, 30000, 2000, on_timeout,
			       NULL);
	}
	assert_int_equal(n_timeouts, 0);
	assert_int_equal(f->moved_ms, 21000);
	assert_int_equal(flowtab_append(t, f, 100, data, 10, 25000), 0);
	assert_int_equal(f->moved_ms, 21000); /* nothing new */
	flowtab_expire(t, 25999, 5000, 30000, 2000, on_timeout, NULL);
	assert_int_equal(n_timeouts, 0);
	flowtab_expire(t, 26000, 5000, 30000, 2000, on_timeout, NULL);
	assert_int_equal(n_timeouts, 1);
	assert_int_equal(last_late, FLOWTAB_LATE_IDLE);
	assert_true(f->decided && !f->accept);

	g = flowtab_get(t, &k2, 30000, true); /* a byte a second */
	for (uint32_t i = 0; i < 30; i++) {
		now = 30000 + 1000 * (uint64_t)i;
		assert_int_equal(flowtab_append(t, g, i, data, 1, now), 0);
		flowtab_expire(t, now, 5000, 30000, 2000, on_timeout, NULL);
	}
	assert_int_equal(n_timeouts, 1);
	flowtab_expire(t, 60000, 5000, 30000, 2000, on_timeout, NULL);
	assert_int_equal(n_timeouts, 2);
	assert_int_equal(last_late, FLOWTAB_LATE_TOTAL);
	assert_int_equal(flowtab_reading(t), 0);
	flowtab_free(t);
}

/* A verdict is one connection's: a decided flow's verdict is repeated only
 * for a packet of the same conntrack entry; another id is a new
 * connection on the four-tuple, a missing one is never guessed. */
static void verdict_belongs_to_one_connection(void **state)
{
	struct flowtab *t = flowtab_new(4, 100, 400);
	struct flowtab_key k = {.sport = 40000, .dport = 80};
	struct flowtab_flow *f, *g;

	(void)state;
	k.src.family = k.dst.family = AF_INET;
	f = flowtab_get(t, &k, 0, true);
	assert_non_null(f);
	f->has_conn = true;
	f->conn_id = 0x1234;
	/* Being read. */
	assert_int_equal(flowtab_conn_of(f, true, 0x1234), FLOWTAB_CONN_SAME);
	assert_int_equal(flowtab_conn_of(f, true, 0x1235), FLOWTAB_CONN_OTHER);
	assert_int_equal(flowtab_conn_of(f, false, 0), FLOWTAB_CONN_OTHER);
	flowtab_decide(t, f, true, 10);
	/* Decided: the same connection, a new one on the same four-tuple
	 * (the reused-four-tuple escape), or no id to tell. */
	assert_int_equal(flowtab_conn_of(f, true, 0x1234), FLOWTAB_CONN_SAME);
	assert_int_equal(flowtab_conn_of(f, true, 0x9999), FLOWTAB_CONN_OTHER);
	assert_int_equal(flowtab_conn_of(f, false, 0x1234),
			 FLOWTAB_CONN_UNKNOWN);
	/* A flow read without ids (the kernel gives none). */
	k.sport = 40001;
	g = flowtab_get(t, &k, 0, true);
	assert_non_null(g);
	assert_int_equal(flowtab_conn_of(g, false, 0), FLOWTAB_CONN_SAME);
	assert_int_equal(flowtab_conn_of(g, true, 7), FLOWTAB_CONN_OTHER);
	flowtab_decide(t, g, true, 10);
	assert_int_equal(flowtab_conn_of(g, false, 0), FLOWTAB_CONN_UNKNOWN);
	assert_int_equal(flowtab_conn_of(g, true, 0), FLOWTAB_CONN_UNKNOWN);
	flowtab_free(t);
}

static void packet_headers_and_payload(void **state)
{
	uint8_t p[60] = {0x45, 0, 0,   45, 0, 0, 0x40, 0,  64, 6,
			 0,    0, 198, 18, 0, 2, 198,  18, 1,  10};
	struct flowpkt fp;

	(void)state;
	p[20] = 0x9c;
	p[21] = 0x40; /* sport 40000 */
	p[22] = 1;
	p[23] = 0xbb; /* 443 */
	p[24] = 0;
	p[25] = 0;
	p[26] = 3;
	p[27] = 0xe8; /* seq 1000 */
	p[32] = 0x50;
	p[33] = 0x18;
	memcpy(p + 40, "hello", 5);
	assert_int_equal(flowpkt_parse(p, 60, &fp), 0);
	assert_int_equal(fp.sport, 40000);
	assert_int_equal(fp.dport, 443);
	assert_int_equal(fp.seq, 1000);
	assert_int_equal(fp.payload_len, 5); /* the IP length, not the buffer */
	assert_memory_equal(fp.payload, "hello", 5);
	assert_int_equal(fp.flags & FLOWPKT_URG, 0);
	assert_int_equal(fp.urgent, 0);
	p[33] = 0x38; /* URG */
	p[38] = 0;
	p[39] = 3; /* urgent pointer 3 */
	assert_int_equal(flowpkt_parse(p, 60, &fp), 0);
	assert_int_equal(fp.flags & FLOWPKT_URG, FLOWPKT_URG);
	assert_int_equal(fp.urgent, 3);
	p[6] = 0x20; /* more fragments */
	assert_int_equal(flowpkt_parse(p, 60, &fp), -EBADMSG);
	p[6] = 0x40;
	p[9] = 17; /* UDP */
	assert_int_equal(flowpkt_parse(p, 60, &fp), -EBADMSG);
	assert_int_equal(flowpkt_parse(p, 30, &fp), -EBADMSG);
}

/* httphost_parse of a C string: its rc, the name in *name ("" none). */
static int http(const char *head, const char **name)
{
	static struct httphost hh;
	int rc = httphost_parse((const uint8_t *)head, strlen(head), &hh);

	*name = hh.has_name ? hh.name : "";
	return rc;
}

static void http_host_lower_case_port_stripped_every_prefix_waits(void **st)
{
	static const char head[] = "GET /x HTTP/1.1\r\nUser-Agent: t\r\n"
				   "hOsT:  WWW.Allowed.Test:8080 \r\n"
				   "Accept: */*\r\n\r\n";
	struct httphost hp;
	const char *name;

	(void)st;
	assert_int_equal(http(head, &name), 0);
	assert_string_equal(name, "www.allowed.test");
	for (size_t n = 0; n + 1 < sizeof(head) - 1; n++)
		assert_int_equal(httphost_parse((const uint8_t *)head, n, &hp),
				 -EAGAIN);
	assert_int_equal(
	    http("\r\nGET / HTTP/1.0\r\nHost: a.test.\r\n\r\n", &name), 0);
	assert_string_equal(name, "a.test");
}

static void http_absolute_form_target_wins_and_must_agree(void **st)
{
	const char *name;

	(void)st;
	assert_int_equal(http("GET http://Allowed.test:80/p?q HTTP/1.1\r\n"
			      "Host: allowed.test\r\n\r\n",
			      &name),
			 0);
	assert_string_equal(name, "allowed.test");
	assert_int_equal(
	    http("GET http://allowed.test/ HTTP/1.1\r\n\r\n", &name), 0);
	assert_string_equal(name, "allowed.test");
	assert_int_equal(http("GET http://allowed.test/ HTTP/1.1\r\n"
			      "Host: evil.test\r\n\r\n",
			      &name),
			 -EBADMSG);
	assert_int_equal(http("CONNECT evil.test:443 HTTP/1.1\r\n"
			      "Host: evil.test:443\r\n\r\n",
			      &name),
			 0);
	assert_string_equal(name, "evil.test");
	assert_int_equal(http("GET http://u@allowed.test/ HTTP/1.1\r\n"
			      "Host: allowed.test\r\n\r\n",
			      &name),
			 -EBADMSG);
	assert_int_equal(
	    http("OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n", &name), 0);
	assert_string_equal(name, "a.test");
}

static void http_no_host_ip_host_duplicates_and_garbage(void **st)
{
	static const struct {
		const char *head;
		int rc;
	} bad[] = {
	    {"GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
	     -EBADMSG},
	    {"GET / HTTP/1.1\r\nHost : a.test\r\n\r\n", -EBADMSG},
	    {"GET / HTTP/1.1\r\nX: 1\r\n Host: a.test\r\n\r\n", -EBADMSG},
	    {"GET / HTTP/1.1\nHost: a.test\n\n", -EBADMSG},
	    {"GET / HTTP/1.1\r\nHost: a.test\rX\r\n\r\n", -EBADMSG},
	    {"GET / HTTP/1.1\r\nHost: a.test:x\r\n\r\n", -EBADMSG},
	    {"GET / HTTP/1.1\r\nHost: a..test\r\n\r\n", -EBADMSG},
	    {"GET / HTTP/1.1\r\nHost: a.test/evil\r\n\r\n", -EBADMSG},
	    {"GET / HTTP/2.0\r\n\r\n", -EPROTO},
	    {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", -EPROTO},
	    {"\x16\x03\x01\x02\x00\x01", -EPROTO},
	    {"GET /", -EAGAIN},
	};
	static const char *const noname[] = {
	    "GET / HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: 198.18.1.10\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: 198.18.1.10:80\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost:\r\n\r\n",
	    "GET http://198.18.1.10/ HTTP/1.1\r\nHost: 198.18.1.10\r\n\r\n",
	};
	static uint8_t big[HTTPHOST_MAX + 8];
	struct httphost hp;
	const char *name;

	(void)st;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = http(bad[i].head, &name);

		if (rc != bad[i].rc || *name != '\0')
			fail_msg("%s: rc %d name '%s'", bad[i].head, rc, name);
	}
	for (size_t i = 0; i < sizeof(noname) / sizeof(noname[0]); i++) {
		if (http(noname[i], &name) != 0 || *name != '\0')
			fail_msg("%s: a name '%s'", noname[i], name);
	}
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	memset(big + 19, 'a', sizeof(big) - 19);
	assert_int_equal(httphost_parse(big, sizeof(big), &hp), -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hello_name_lower_case_and_every_prefix_waits),
	    cmocka_unit_test(hello_across_two_records),
	    cmocka_unit_test(hello_without_name_and_garbage),
	    cmocka_unit_test(hello_duplicate_name_after_many_extensions),
	    cmocka_unit_test(hello_flight_until_encrypted),
	    cmocka_unit_test(http_flight_every_head),
	    cmocka_unit_test(
		verdict_needs_allowed_and_answered_with_this_address),
	    cmocka_unit_test(reassembly_in_order_and_bounded),
	    cmocka_unit_test(rewritten_bytes_refused_and_guarded_stream_kept),
	    cmocka_unit_test(deadlines_idle_and_total),
	    cmocka_unit_test(verdict_belongs_to_one_connection),
	    cmocka_unit_test(packet_headers_and_payload),
	    cmocka_unit_test(
		http_host_lower_case_port_stripped_every_prefix_waits),
	    cmocka_unit_test(http_absolute_form_target_wins_and_must_agree),
	    cmocka_unit_test(http_no_host_ip_host_duplicates_and_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
