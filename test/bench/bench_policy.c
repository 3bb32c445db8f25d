// SPDX-License-Identifier: GPL-2.0-or-later
/* Benchmark of the policy module: load 100,000 entries (half exact, half
 * wildcard), then time 1,000,000 lookups of wire names, a mix of hits and
 * misses at several depths ("bench_policy N" loads N entries instead).
 * Not a test: it asserts nothing about time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/policy.h"

#define N_ENTRIES 100000 /* default; argv[1] overrides */
#define N_LOOKUPS 1000000
#define N_QUERIES 4096

struct query {
	uint8_t wire[256];
	size_t len;
};

static double elapsed(const struct timespec *a, const struct timespec *b);
static size_t to_wire(const char *text, uint8_t *out);

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Plain dotted text (no escapes, valid) to wire; the bench owns this so
 * that it measures policy_match alone. */
static size_t to_wire(const char *text, uint8_t *out)
{
	size_t pos = 0;

	while (*text) {
		size_t l = strcspn(text, ".");
		out[pos++] = (uint8_t)l;
		memcpy(out + pos, text, l);
		pos += l;
		text += l;
		if (*text == '.')
			text++;
	}
	out[pos++] = 0;
	return pos;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1, t2, t3;
	struct query *q = calloc(N_QUERIES, sizeof(*q));
	struct policy *p = policy_new();
	char buf[128];
	size_t hits = 0;
	unsigned n = N_ENTRIES;
	int ret = 1;

	if (argc > 1)
		n = (unsigned)strtoul(argv[1], NULL, 10);
	if (n < 2 || !p || !q)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < n; i++) {
		const char *why;
		if (i % 2)
			snprintf(buf, sizeof(buf), "*.w%u.example%u.com", i,
				 i % 97);
		else
			snprintf(buf, sizeof(buf), "host%u.example%u.com", i,
				 i % 97);
		if (policy_add(p, buf, &why) < 0) {
			printf("policy_add(%s): %s\n", buf, why);
			goto out;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	/* A quarter each: exact hit, wildcard hit three labels deep,
	 * exact miss, deep miss (five labels, every suffix probed). */
	srand(1);
	for (unsigned i = 0; i < N_QUERIES; i++) {
		unsigned e = (unsigned)rand() % n;
		switch (i % 4) {
		case 0:
			e &= ~1u;
			snprintf(buf, sizeof(buf), "Host%u.example%u.com", e,
				 e % 97);
			break;
		case 1:
			e |= 1u;
			if (e >= n)
				e -= 2;
			snprintf(buf, sizeof(buf), "cdn.a.w%u.example%u.com", e,
				 e % 97);
			break;
		case 2:
			snprintf(buf, sizeof(buf), "other%u.example%u.com", e,
				 e % 97);
			break;
		default:
			snprintf(buf, sizeof(buf), "a.b.c.miss%u.example.org",
				 e);
			break;
		}
		q[i].len = to_wire(buf, q[i].wire);
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	for (unsigned i = 0; i < N_LOOKUPS; i++) {
		const struct query *x = &q[i % N_QUERIES];
		hits += policy_match(p, x->wire, x->len);
	}
	clock_gettime(CLOCK_MONOTONIC, &t3);

	printf("policy: loaded %zu entries in %.3f ms (%.0f ns/entry)\n",
	       policy_size(p), elapsed(&t0, &t1) * 1e3,
	       elapsed(&t0, &t1) * 1e9 / n);
	printf("policy: %d lookups in %.3f ms (%.1f ns/lookup), %zu hits\n",
	       N_LOOKUPS, elapsed(&t2, &t3) * 1e3,
	       elapsed(&t2, &t3) * 1e9 / N_LOOKUPS, hits);
	ret = hits == N_LOOKUPS / 2 ? 0 : 1;
out:
	policy_free(p);
	free(q);
	return ret;
}
