// SPDX-License-Identifier: GPL-2.0-or-later
/* Benchmark of the never-shorten map's memory: N addresses (half IPv4,
 * half IPv6) go through it as the sets module sends them, each noted in
 * flight and acked WINDOW adds later (so WINDOW adds are in flight at
 * once, as under load); prints the resident memory the map added and
 * its peak (the growth of VmHWM, which a table growing while the old one
 * is still held sets) per address, and the time per add (the tables
 * are mapped on their own, so the heap does not show them). "bench_expiry N
 * [WINDOW]"; defaults 100000 and 1024. One N per run: a peak is a process's.
 * Not a test: it asserts nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "sets/expiry.h"

#include "benchmem.h"

static struct netaddr addr_of(size_t i);

/* 198.18.x.y-style IPv4, 2001:db8::x IPv6: all distinct. */
static struct netaddr addr_of(size_t i)
{
	struct netaddr a = {.family = i % 2 ? AF_INET6 : AF_INET};
	uint32_t k = (uint32_t)i;

	a.bytes[0] = i % 2 ? 0x20 : 198;
	a.bytes[i % 2 ? 12 : 1] = (uint8_t)(k >> 16);
	a.bytes[i % 2 ? 13 : 2] = (uint8_t)(k >> 8);
	a.bytes[i % 2 ? 14 : 3] = (uint8_t)k;
	return a;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	size_t window = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
	size_t rss0 = bench_status_kb("VmRSS"), hwm0, rss1, hwm1;
	struct expiry_map *m = expiry_new(n + window + 1);
	struct timespec a, b;
	double s;

	hwm0 = bench_status_kb("VmHWM");
	if (m == NULL || n == 0) {
		fprintf(stderr, "bad N or out of memory\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t i = 0; i < n + window; i++) {
		struct netaddr ad;

		if (i < n) {
			ad = addr_of(i);
			(void)expiry_note_inflight(m, &ad, 1000 + 60, 1000);
		}
		if (i >= window) {
			ad = addr_of(i - window);
			(void)expiry_note_acked(m, &ad, 1000 + 60, 1000);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	rss1 = bench_status_kb("VmRSS");
	hwm1 = bench_status_kb("VmHWM");
	s = (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%zu addresses (%zu in flight at once): %.1f bytes resident "
	       "per address, %.1f at the peak, %.0f ns per add\n",
	       expiry_count(m), window,
	       (double)(rss1 > rss0 ? rss1 - rss0 : 0) * 1024 / (double)n,
	       (double)(hwm1 > hwm0 ? hwm1 - rss0 : 0) * 1024 / (double)n,
	       s * 1e9 / (double)n);
	expiry_free(m);
	return 0;
}
