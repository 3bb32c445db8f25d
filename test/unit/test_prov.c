// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the eviction bookkeeping: an address only removed names
 * put in the sets is evicted, one a still-allowed name holds stays, an
 * expired link holds nothing, names are judged once, the bound, and the
 * map against a brute-force model under churn, and the names' pool
 * compacted under every link.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve/prov.h"

#define MODEL_ADDRS 64
#define MODEL_NAMES 8

struct judge {
	const char *gone[4]; /* first labels no longer allowed */
	size_t calls;
};

struct evicted {
	struct netaddr a[MODEL_ADDRS];
	size_t n;
};

static struct netaddr v4(uint32_t n);
static struct netaddr v6(uint32_t n);
static size_t dotted(const char *name, uint8_t *out);
static int note_dotted(struct prov *p, const char *name, struct netaddr a,
		       uint64_t expires, uint64_t now);
static bool answered_dotted(struct prov *p, const char *name, struct netaddr a,
			    uint64_t now);
static bool allowed(void *arg, const uint8_t *name, size_t len);
static void on_evict(void *arg, const struct netaddr *a);
static bool was_evicted(const struct evicted *ev, const struct netaddr *a);
static int note(struct prov *p, const char *label, struct netaddr a,
		uint64_t expires, uint64_t now);
static bool answered(struct prov *p, const char *label, struct netaddr a,
		     uint64_t now);

static struct netaddr v4(uint32_t n)
{
	struct netaddr a = {.family = AF_INET};

	a.bytes[0] = 198;
	a.bytes[1] = 18;
	a.bytes[2] = (uint8_t)(n >> 8);
	a.bytes[3] = (uint8_t)n;
	return a;
}

static struct netaddr v6(uint32_t n)
{
	struct netaddr a = {.family = AF_INET6};

	a.bytes[0] = 0x20;
	a.bytes[1] = 0x01;
	a.bytes[2] = 0x0d;
	a.bytes[3] = 0xb8;
	a.bytes[14] = (uint8_t)(n >> 8);
	a.bytes[15] = (uint8_t)n;
	return a;
}

static bool allowed(void *arg, const uint8_t *name, size_t len)
{
	struct judge *j = arg;

	(void)len;
	j->calls++;
	for (size_t i = 0; i < 4 && j->gone[i] != NULL; i++) {
		if (name[0] == strlen(j->gone[i]) &&
		    memcmp(name + 1, j->gone[i], name[0]) == 0)
			return false;
	}
	return true;
}

static void on_evict(void *arg, const struct netaddr *a)
{
	struct evicted *ev = arg;

	assert_true(ev->n < MODEL_ADDRS);
	ev->a[ev->n++] = *a;
}

static bool was_evicted(const struct evicted *ev, const struct netaddr *a)
{
	for (size_t i = 0; i < ev->n; i++) {
		if (ev->a[i].family == a->family &&
		    memcmp(ev->a[i].bytes, a->bytes, 16) == 0)
			return true;
	}
	return false;
}

/* label.test. */
static int note(struct prov *p, const char *label, struct netaddr a,
		uint64_t expires, uint64_t now)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.test.", label);
	return note_dotted(p, name, a, expires, now);
}

static void removed_name_alone_is_evicted_shared_stays(void **state)
{
	struct prov *p = prov_new(64);
	struct judge j = {.gone = {"gone"}};
	struct evicted ev = {0};
	struct netaddr only = v4(1), shared = v4(2), other = v6(3);

	(void)state;
	assert_int_equal(note(p, "gone", only, 200, 100), 0);
	assert_int_equal(note(p, "gone", shared, 200, 100), 0);
	assert_int_equal(note(p, "kept", shared, 150, 100), 0);
	assert_int_equal(note(p, "kept", other, 150, 100), 0);
	assert_int_equal(prov_names(p), 2);
	assert_int_equal(prov_links(p), 4);
	assert_int_equal(prov_evict(p, allowed, &j, on_evict, &ev, 110), 1);
	assert_true(was_evicted(&ev, &only));
	assert_false(was_evicted(&ev, &shared));
	assert_false(was_evicted(&ev, &other));
	/* The removed name and its links are forgotten. */
	assert_int_equal(j.calls, 2);
	assert_int_equal(prov_names(p), 1);
	assert_int_equal(prov_links(p), 2);
	assert_int_equal(prov_addresses(p), 2);
	/* A second reload with the same judgement evicts nothing more. */
	ev.n = 0;
	assert_int_equal(prov_evict(p, allowed, &j, on_evict, &ev, 120), 0);
	prov_free(p);
}

struct cut {
	struct netaddr a[4];
	uint64_t exp[4];
	size_t n;
};

static void on_cut(void *arg, const struct netaddr *a, uint64_t expires)
{
	struct cut *c = arg;

	assert_true(c->n < 4);
	c->a[c->n] = *a;
	c->exp[c->n++] = expires;
}

/* A shared address gets the kept names' longest expiry, not the removed
 * name's; the cap cuts kept links too; an address whose kept link is
 * already the longest, within the cap, is left alone. */
static void shared_address_gets_kept_expiry(void **state)
{
	struct prov *p = prov_new(64);
	struct judge j = {.gone = {"gone"}};
	struct evicted ev = {0};
	struct cut c = {0};
	struct netaddr shared = v4(1), longest = v4(2), fine = v4(3);
	const struct prov_shorten sh = {on_cut, &c, 100 + 500, NULL};

	(void)state;
	assert_int_equal(note(p, "gone", shared, 3700, 100), 0);
	assert_int_equal(note(p, "kept", shared, 105, 100), 0);
	assert_int_equal(note(p, "other", shared, 120, 100), 0);
	assert_int_equal(note(p, "kept", longest, 3700, 100), 0);
	assert_int_equal(note(p, "gone", fine, 150, 100), 0);
	assert_int_equal(note(p, "kept", fine, 200, 100), 0);
	assert_int_equal(
	    prov_evict_shorten(p, allowed, &j, on_evict, &ev, &sh, 101), 0);
	assert_int_equal(c.n, 2);
	for (size_t i = 0; i < c.n; i++) {
		if (c.a[i].bytes[3] == 1)
			assert_int_equal(c.exp[i], 120);
		else
			assert_int_equal(c.exp[i], 600); /* the cap */
	}
	/* Done once: the same judgement cuts nothing more. */
	c.n = 0;
	assert_int_equal(
	    prov_evict_shorten(p, allowed, &j, on_evict, &ev, &sh, 102), 0);
	assert_int_equal(c.n, 0);
	assert_false(was_evicted(&ev, &fine));
	prov_free(p);
}

static bool refuse_4(void *arg, const struct netaddr *a)
{
	(void)arg;
	return a->family == AF_INET && a->bytes[3] == 4;
}

/* An address the new config refuses as such (a narrowed allow_cidrs, a
 * new upstream's) is evicted although only still-allowed names hold it,
 * and its links are forgotten: prov no longer says the name answered it.
 * The other addresses of the same names stay. */
static void refused_address_is_evicted_whoever_holds_it(void **state)
{
	struct prov *p = prov_new(64);
	struct judge j = {.gone = {"gone"}};
	struct evicted ev = {0};
	struct cut c = {0};
	struct netaddr bad = v4(4), good = v4(5);
	const struct prov_shorten sh = {on_cut, &c, 0, refuse_4};

	(void)state;
	assert_int_equal(note(p, "kept", bad, 500, 100), 0);
	assert_int_equal(note(p, "other", bad, 600, 100), 0);
	assert_int_equal(note(p, "kept", good, 500, 100), 0);
	assert_int_equal(
	    prov_evict_shorten(p, allowed, &j, on_evict, &ev, &sh, 101), 1);
	assert_true(was_evicted(&ev, &bad));
	assert_false(was_evicted(&ev, &good));
	assert_int_equal(c.n, 0);
	assert_int_equal(prov_links_of(p, &bad, NULL, NULL, 101), 0);
	assert_int_equal(prov_links_of(p, &good, NULL, NULL, 101), 1);
	assert_int_equal(prov_addresses(p), 1);
	assert_int_equal(prov_links(p), 1);
	prov_free(p);
}

static void expired_link_of_allowed_name_does_not_hold(void **state)
{
	struct prov *p = prov_new(64);
	struct judge j = {.gone = {"gone"}};
	struct evicted ev = {0};
	struct netaddr a = v4(7);

	(void)state;
	assert_int_equal(note(p, "kept", a, 150, 100), 0);
	assert_int_equal(note(p, "gone", a, 400, 100), 0);
	/* At 200 only the removed name's longer entry keeps it alive. */
	assert_int_equal(prov_evict(p, allowed, &j, on_evict, &ev, 200), 1);
	assert_true(was_evicted(&ev, &a));
	assert_int_equal(prov_addresses(p), 0);
	assert_int_equal(prov_names(p), 0);
	assert_int_equal(prov_links(p), 0);
	prov_free(p);
}

static void later_note_lengthens_never_shortens(void **state)
{
	struct prov *p = prov_new(64);
	struct judge j = {.gone = {"gone"}};
	struct evicted ev = {0};
	struct netaddr a = v4(9);

	(void)state;
	assert_int_equal(note(p, "kept", a, 500, 100), 0);
	assert_int_equal(note(p, "kept", a, 150, 110), 0); /* shorter */
	assert_int_equal(prov_links(p), 1);
	assert_int_equal(note(p, "gone", a, 300, 110), 0);
	/* At 200 the first, longer note of kept still holds a. */
	assert_int_equal(prov_evict(p, allowed, &j, on_evict, &ev, 200), 0);
	assert_int_equal(prov_links(p), 1);
	prov_free(p);
}

/* The sets' floor: the latest live link of the address, whichever name
 * it is; none once every link expired, none for an unknown address. */
static void expires_is_the_latest_live_link(void **state)
{
	struct prov *p = prov_new(64);
	struct netaddr a = v4(10), b = v4(11), c = v4(12);

	(void)state;
	assert_int_equal(note(p, "long", a, 900, 100), 0);
	assert_int_equal(note(p, "short", a, 200, 100), 0);
	assert_int_equal(note(p, "short", b, 200, 100), 0);
	assert_int_equal(prov_expires(p, &a, 150), 900);
	assert_int_equal(note(p, "short", a, 300, 150), 0); /* lengthened */
	assert_int_equal(prov_expires(p, &a, 150), 900);
	assert_int_equal(prov_expires(p, &b, 150), 200);
	assert_int_equal(prov_expires(p, &b, 200), 0); /* expired */
	assert_int_equal(prov_expires(p, &a, 899), 900);
	assert_int_equal(prov_expires(p, &a, 900), 0);
	assert_int_equal(prov_expires(p, &c, 150), 0); /* never noted */
	prov_free(p);
}

static void bound_refuses_until_links_expire(void **state)
{
	struct prov *p = prov_new(3);

	(void)state;
	assert_int_equal(note(p, "a", v4(1), 200, 100), 0);
	assert_int_equal(note(p, "b", v4(1), 150, 100), 0);
	assert_int_equal(note(p, "a", v4(2), 200, 100), 0);
	assert_int_equal(note(p, "c", v4(3), 200, 100), -ENOSPC);
	assert_int_equal(prov_addresses(p), 2); /* no empty node left */
	/* Refreshing a known pair needs no room. */
	assert_int_equal(note(p, "a", v4(2), 300, 100), 0);
	/* Once b's link has expired, the sweep makes room. */
	assert_int_equal(note(p, "c", v4(3), 400, 160), 0);
	assert_int_equal(prov_links(p), 3);
	assert_int_equal(prov_names(p), 2);
	prov_free(p);
}

static void bad_input_is_refused(void **state)
{
	struct prov *p = prov_new(8);
	struct netaddr bad = {.family = AF_UNIX};
	uint8_t unterminated[] = {3, 'a', 'b', 'c'};

	(void)state;
	assert_null(prov_new(0));
	assert_int_equal(note(p, "a", bad, 200, 100), -EINVAL);
	assert_int_equal(note(p, "a", v4(1), 100, 100), -EINVAL);
	assert_int_equal(prov_note(p, unterminated, sizeof(unterminated),
				   &(struct netaddr){.family = AF_INET}, 200,
				   100),
			 -EINVAL);
	assert_int_equal(prov_links(p), 0);
	prov_clear(p);
	prov_free(p);
}

/* Random notes and evictions against a matrix of (address, name) expiry
 * times: evict() must name exactly the addresses the model says. */
static void matches_model_under_churn(void **state)
{
	static const char *names[MODEL_NAMES] = {"n0", "n1", "n2", "n3",
						 "n4", "n5", "n6", "n7"};
	uint64_t model[MODEL_ADDRS][MODEL_NAMES] = {{0}};
	struct prov *p = prov_new(MODEL_ADDRS * MODEL_NAMES);
	uint64_t now = 1000;

	(void)state;
	srand(12345);
	for (int round = 0; round < 200; round++) {
		struct judge j = {.gone = {names[rand() % MODEL_NAMES]}};
		struct evicted ev = {0};

		for (int k = 0; k < 50; k++) {
			size_t ai = (size_t)rand() % MODEL_ADDRS;
			size_t ni = (size_t)rand() % MODEL_NAMES;
			uint64_t exp = now + 1 + (uint64_t)(rand() % 20);
			struct netaddr a =
			    ai % 2 ? v4((uint32_t)ai) : v6((uint32_t)ai);

			assert_int_equal(note(p, names[ni], a, exp, now), 0);
			if (exp > model[ai][ni])
				model[ai][ni] = exp;
		}
		now += (uint64_t)(rand() % 5);
		(void)prov_evict(p, allowed, &j, on_evict, &ev, now);
		for (size_t ai = 0; ai < MODEL_ADDRS; ai++) {
			struct netaddr a =
			    ai % 2 ? v4((uint32_t)ai) : v6((uint32_t)ai);
			bool gone = false, keep = false;

			for (size_t ni = 0; ni < MODEL_NAMES; ni++) {
				bool removed =
				    strcmp(names[ni], j.gone[0]) == 0;

				if (model[ai][ni] > now && !removed)
					keep = true;
				if (model[ai][ni] > now && removed)
					gone = true;
				if (removed)
					model[ai][ni] = 0;
			}
			/* A removed name's expired link may count or not;
			 * a live one must. */
			if (gone && !keep)
				assert_true(was_evicted(&ev, &a));
			if (keep)
				assert_false(was_evicted(&ev, &a));
		}
	}
	prov_free(p);
}

static void count_evict(void *arg, const struct netaddr *a)
{
	(void)a;
	(*(size_t *)arg)++;
}

/* Past the first allocation of entries and buckets: every address keeps
 * its links through the growth, an eviction of one name takes exactly
 * the addresses only it held, their entries are taken again by new
 * addresses, and a cleared map starts over. */
static void many_addresses_grow_and_reuse(void **state)
{
	struct prov *p = prov_new(1u << 20);
	struct judge j = {.gone = {"only"}};
	size_t n = 5000, evicted = 0, links;
	char label[16];

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "h%u", i / 2);
		assert_int_equal(note(p, label, v4(i), 100, 1), 0);
		assert_int_equal(note(p, label, v6(i), 100, 1), 0);
		if (i % 3 == 0)
			assert_int_equal(note(p, "shared", v4(i), 50, 1), 0);
		if (i % 3 == 0)
			assert_int_equal(note(p, "only", v4(i), 90, 1), 0);
		if (i < 1000)
			assert_int_equal(note(p, "only", v6(20000 + i), 90, 1),
					 0);
	}
	links = 2 * n + 2 * ((n + 2) / 3) + 1000;
	assert_int_equal(prov_addresses(p), 2 * n + 1000);
	assert_int_equal(prov_links(p), links);
	assert_int_equal(prov_names(p), n / 2 + 2);
	assert_int_equal(prov_links_of(p, &(struct netaddr){0}, NULL, NULL, 2),
			 0);
	for (uint32_t i = 0; i < n; i++) {
		struct netaddr a4 = v4(i), a6 = v6(i);

		assert_int_equal(prov_links_of(p, &a4, NULL, NULL, 2),
				 i % 3 == 0 ? 3 : 1);
		assert_int_equal(prov_links_of(p, &a6, NULL, NULL, 2), 1);
	}
	assert_int_equal(prov_evict(p, allowed, &j, count_evict, &evicted, 2),
			 1000);
	assert_int_equal(evicted, 1000);
	assert_int_equal(prov_addresses(p), 2 * n);
	assert_int_equal(prov_links(p), links - 1000 - (n + 2) / 3);
	for (uint32_t i = 0; i < 1000; i++) {
		struct netaddr gone = v6(20000 + i), a4 = v4(i);

		assert_int_equal(prov_links_of(p, &gone, NULL, NULL, 2), 0);
		assert_int_equal(prov_links_of(p, &a4, NULL, NULL, 2),
				 i % 3 == 0 ? 2 : 1);
		assert_int_equal(note(p, "new", v6(40000 + i), 100, 2), 0);
	}
	assert_int_equal(prov_addresses(p), 2 * n + 1000);
	for (uint32_t i = 0; i < 1000; i++) {
		struct netaddr a = v6(40000 + i);

		assert_int_equal(prov_links_of(p, &a, NULL, NULL, 2), 1);
	}
	prov_clear(p);
	assert_int_equal(prov_addresses(p), 0);
	assert_int_equal(prov_links(p), 0);
	assert_int_equal(prov_names(p), 0);
	assert_int_equal(note(p, "again", v4(7), 100, 2), 0);
	assert_int_equal(prov_addresses(p), 1);
	prov_free(p);
}

static bool answered(struct prov *p, const char *label, struct netaddr a,
		     uint64_t now)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.test.", label);
	return answered_dotted(p, name, a, now);
}

/* Most names expire (their chunks free, far more than the live names
 * hold): the pool is compacted, and every kept name still answers for
 * its addresses, in one link or many, is found again by a new note (no
 * second copy), and is judged by an eviction. */
static void compacted_names_keep_every_link(void **state)
{
	struct prov *p = prov_new(1u << 20);
	struct judge j = {.gone = {"m0"}};
	uint32_t n = 20000, kept = 0, many = 0;
	size_t evicted = 0;
	char label[32];

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "name-%u-of-the-pool", i);
		assert_int_equal(note(p, label, v4(i), i % 4 ? 10 : 100, 1), 0);
		if (i % 8 == 0) {
			snprintf(label, sizeof(label), "m%u", i);
			assert_int_equal(note(p, label, v4(i), 100, 1), 0);
		}
	}
	assert_int_equal(prov_names(p), n + n / 8);
	/* the sweep of an eviction at 20 drops the expired links */
	assert_int_equal(prov_evict(p, allowed, &j, count_evict, &evicted, 20),
			 0);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "name-%u-of-the-pool", i);
		assert_int_equal(answered(p, label, v4(i), 20), i % 4 == 0);
		kept += i % 4 == 0;
		if (i % 8 == 0 && i > 0) { /* m0 was judged gone */
			snprintf(label, sizeof(label), "m%u", i);
			assert_true(answered(p, label, v4(i), 20));
			many++;
		}
	}
	assert_int_equal(prov_names(p), kept + many);
	assert_int_equal(prov_addresses(p), kept);
	for (uint32_t i = 0; i < n; i += 4) {
		snprintf(label, sizeof(label), "name-%u-of-the-pool", i);
		assert_int_equal(note(p, label, v4(i), 200, 20), 0);
		assert_int_equal(note(p, label, v6(i), 200, 20), 0);
	}
	assert_int_equal(prov_names(p), kept + many);
	assert_int_equal(prov_evict(p, allowed, &j, count_evict, &evicted, 20),
			 0);
	assert_true(answered(p, "name-0-of-the-pool", v6(0), 20));
	assert_false(answered(p, "m0", v4(0), 20));
	assert_true(answered(p, "m8", v4(8), 20));
	prov_free(p);
}

/* Far past the first buckets, into the arrays that are mapped and grow
 * by mremap (16,384 heads and more): every doubling splits each chain in
 * place, and every address and name is still found (a second note of a
 * name adds no copy, of a pair no link), answered for, and evicted. */
static void buckets_split_in_place_keep_every_entry(void **state)
{
	struct prov *p = prov_new(1u << 20);
	struct judge j = {.gone = {"g7"}};
	uint32_t n = 60000; /* v4() and v6() take 16 bits of i */
	size_t evicted = 0;
	char label[32];

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "g%u", i);
		assert_int_equal(note(p, label, v4(i), 100, 1), 0);
		assert_int_equal(note(p, label, v6(i), 100, 1), 0);
	}
	assert_int_equal(prov_addresses(p), 2 * n);
	assert_int_equal(prov_names(p), n);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "g%u", i);
		assert_true(answered(p, label, v4(i), 2));
		assert_true(answered(p, label, v6(i), 2));
		assert_false(answered(p, label, v4(i + 1), 2));
		assert_int_equal(note(p, label, v4(i), 100, 2), 0);
	}
	assert_int_equal(prov_names(p), n);
	assert_int_equal(prov_links(p), 2 * n);
	assert_int_equal(prov_evict(p, allowed, &j, count_evict, &evicted, 2),
			 2);
	assert_false(answered(p, "g7", v4(7), 2));
	assert_true(answered(p, "g8", v6(8), 2));
	assert_int_equal(prov_addresses(p), 2 * n - 2);
	prov_free(p);
}

/* name (dotted, ending in ".") in wire format; returns its length. */
static size_t dotted(const char *name, uint8_t *out)
{
	size_t n = 0;

	while (*name != '\0' && strcmp(name, ".") != 0) {
		const char *dot = strchr(name, '.');
		size_t l = (size_t)(dot - name);

		out[n] = (uint8_t)l;
		memcpy(out + n + 1, name, l);
		n += l + 1;
		name = dot + 1;
	}
	out[n] = 0;
	return n + 1;
}

static int note_dotted(struct prov *p, const char *name, struct netaddr a,
		       uint64_t expires, uint64_t now)
{
	uint8_t w[256];
	size_t len = dotted(name, w);

	return prov_note(p, w, len, &a, expires, now);
}

/* The names of zones_keep_names_whole: host i under zone i % 300. */
static void zoned(uint32_t i, char *out, size_t size)
{
	snprintf(out, size, "h%u.z%u-of-a-long-zone-name.example.", i, i % 300);
}

/* Is host i of zoned() still allowed by allowed_by_zone? */
static bool zoned_kept(uint32_t i)
{
	return i % 300 % 3 == 0 && i % 7 != 1;
}

/* Judged by zone: the names under a zone whose number is not a multiple
 * of 3 are no longer allowed, and under the others one host in seven
 * (its zone stays for the rest); the odd names (no zone label) stay. */
static bool allowed_by_zone(void *arg, const uint8_t *name, size_t len)
{
	size_t *calls = arg, z = (size_t)name[0] + 1;

	(*calls)++;
	if (z >= len || name[z] < 2 || name[z + 1] != 'z')
		return true;
	return zoned_kept((uint32_t)strtoul((const char *)name + 2, NULL, 10));
}

struct seen {
	size_t n, wrong;
};

/* Every link the walk reports is the name its address was noted for. */
static void check_link(void *arg, const uint8_t *name, size_t len,
		       const struct netaddr *a, uint64_t left_s)
{
	struct seen *s = arg;
	char want[64];
	uint8_t w[64];
	size_t wl;

	(void)left_s;
	if (a->family == AF_INET) {
		zoned((uint32_t)a->bytes[2] << 8 | a->bytes[3], want,
		      sizeof(want));
	} else {
		static const char *odd[] = {".", "single.", "x.single.", "a.b.",
					    "ab."};

		snprintf(want, sizeof(want), "%s", odd[a->bytes[15] % 5]);
	}
	wl = dotted(want, w);
	s->n++;
	if (wl != len || memcmp(w, name, len) != 0)
		s->wrong++;
}

static bool answered_dotted(struct prov *p, const char *name, struct netaddr a,
			    uint64_t now)
{
	uint8_t w[256];
	size_t len = dotted(name, w);

	return prov_answered(p, w, len, &a, now);
}

/* Names share their zones (everything after the first label, kept once):
 * a name is still the whole of it wherever it is compared, judged or
 * walked; one with another zone, or a name that is another's zone, is
 * another name; a name of one label and the root are kept whole; the
 * zones go with their last name, and after the eviction compacts both
 * pools every kept name is found again, answers and walks whole. */
static void zones_keep_names_whole(void **state)
{
	static const char *odd[] = {".", "single.", "x.single.", "a.b.", "ab."};
	struct prov *p = prov_new(1u << 20);
	uint32_t n = 6000, kept = 0;
	struct seen seen = {0};
	size_t calls = 0, evicted = 0;
	char name[64];

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		zoned(i, name, sizeof(name));
		assert_int_equal(note_dotted(p, name, v4(i), 100, 1), 0);
		kept += zoned_kept(i);
	}
	for (uint32_t k = 0; k < 5; k++)
		assert_int_equal(note_dotted(p, odd[k], v6(k), 100, 1), 0);
	assert_int_equal(prov_names(p), n + 5);
	prov_walk(p, check_link, &seen, 1);
	assert_int_equal(seen.n, n + 5);
	assert_int_equal(seen.wrong, 0);
	/* The same host label under another zone, and a name that is only
	 * another's zone, are not the names noted. */
	assert_true(
	    answered_dotted(p, "h1.z1-of-a-long-zone-name.example.", v4(1), 2));
	assert_false(
	    answered_dotted(p, "h1.z2-of-a-long-zone-name.example.", v4(1), 2));
	assert_false(
	    answered_dotted(p, "z1-of-a-long-zone-name.example.", v4(1), 2));
	assert_true(answered_dotted(p, "x.single.", v6(2), 2));
	assert_false(answered_dotted(p, "single.", v6(2), 2));
	assert_true(answered_dotted(p, "single.", v6(1), 2));
	assert_true(answered_dotted(p, ".", v6(0), 2));
	assert_false(answered_dotted(p, "b.", v6(3), 2));
	assert_true(answered_dotted(p, "a.b.", v6(3), 2));

	/* Two zones in three go, and a seventh of the others' names: their
	 * chunks are freed, more than the live ones hold, and the eviction
	 * compacts. */
	assert_int_equal(
	    prov_evict(p, allowed_by_zone, &calls, count_evict, &evicted, 2),
	    n - kept);
	assert_int_equal(calls, n + 5);
	assert_int_equal(prov_names(p), kept + 5);
	assert_int_equal(prov_links(p), kept + 5);
	seen = (struct seen){0};
	prov_walk(p, check_link, &seen, 2);
	assert_int_equal(seen.n, kept + 5);
	assert_int_equal(seen.wrong, 0);
	for (uint32_t i = 0; i < n; i++) {
		zoned(i, name, sizeof(name));
		assert_int_equal(answered_dotted(p, name, v4(i), 2),
				 zoned_kept(i));
	}
	/* A kept name noted again is found, not copied; a new name goes
	 * under a kept zone and a new one alike. */
	for (uint32_t i = 0; i < n; i += 3) {
		if (!zoned_kept(i))
			continue;
		zoned(i, name, sizeof(name));
		assert_int_equal(note_dotted(p, name, v6(1000 + i), 100, 2), 0);
	}
	assert_int_equal(prov_names(p), kept + 5);
	assert_int_equal(note_dotted(p, "new.z3-of-a-long-zone-name.example.",
				     v6(9000), 100, 2),
			 0);
	assert_int_equal(note_dotted(p, "new.z1-of-a-long-zone-name.example.",
				     v6(9001), 100, 2),
			 0);
	assert_int_equal(prov_names(p), kept + 7);
	assert_true(answered_dotted(p, "new.z1-of-a-long-zone-name.example.",
				    v6(9001), 2));
	assert_false(answered_dotted(p, "new.z1-of-a-long-zone-name.example.",
				     v6(9000), 2));
	prov_clear(p);
	assert_int_equal(prov_names(p), 0);
	assert_int_equal(
	    note_dotted(p, "h0.z0-of-a-long-zone-name.example.", v4(0), 100, 2),
	    0);
	assert_true(
	    answered_dotted(p, "h0.z0-of-a-long-zone-name.example.", v4(0), 3));
	prov_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(removed_name_alone_is_evicted_shared_stays),
	    cmocka_unit_test(shared_address_gets_kept_expiry),
	    cmocka_unit_test(refused_address_is_evicted_whoever_holds_it),
	    cmocka_unit_test(expired_link_of_allowed_name_does_not_hold),
	    cmocka_unit_test(later_note_lengthens_never_shortens),
	    cmocka_unit_test(expires_is_the_latest_live_link),
	    cmocka_unit_test(bound_refuses_until_links_expire),
	    cmocka_unit_test(bad_input_is_refused),
	    cmocka_unit_test(matches_model_under_churn),
	    cmocka_unit_test(many_addresses_grow_and_reuse),
	    cmocka_unit_test(compacted_names_keep_every_link),
	    cmocka_unit_test(buckets_split_in_place_keep_every_entry),
	    cmocka_unit_test(zones_keep_names_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
