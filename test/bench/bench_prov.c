// SPDX-License-Identifier: GPL-2.0-or-later
/* Benchmark of the provenance map's memory and note cost: N addresses
 * (half IPv4, half IPv6), each noted for one name, names shared by two
 * addresses (an A and an AAAA answer), as the unique-names workload of
 * dnsperf.sh fills it; prints the resident memory the map added
 * (/proc/self/status VmRSS: what was touched, the number to quote, its
 * arrays being mapped on their own from 64 KiB on) and its peak (the
 * growth of VmHWM, reset before each run through /proc/self/clear_refs:
 * an array growing while the old one is still held sets it) per
 * address, and the time per note. "bench_prov N" for another N (default
 * 100000 and 262144). Not a test: it asserts nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "resolve/prov.h"

#include "benchmem.h"

static void run(size_t n);

static void run(size_t n)
{
	struct prov *p = prov_new(n * 2);
	uint8_t wire[64];
	struct timespec a, b;
	size_t rss0, rss1, hwm1;
	double s;

	if (p == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	bench_peak_reset();
	rss0 = bench_status_kb("VmRSS");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t i = 0; i < n; i++) {
		struct netaddr addr = {.family = i % 2 ? AF_INET6 : AF_INET};
		int len =
		    snprintf((char *)wire + 1, sizeof(wire) - 1, "n%zu", i / 2);
		uint32_t k = (uint32_t)i;

		wire[0] = (uint8_t)len;
		memcpy(wire + 1 + len, "\4uniq\5bench\4test", 17);
		/* 198.18.x.y-style IPv4, 2001:db8::x IPv6: all distinct */
		addr.bytes[0] = i % 2 ? 0x20 : 198;
		addr.bytes[i % 2 ? 12 : 1] = (uint8_t)(k >> 16);
		addr.bytes[i % 2 ? 13 : 2] = (uint8_t)(k >> 8);
		addr.bytes[i % 2 ? 14 : 3] = (uint8_t)k;
		if (prov_note(p, wire, (size_t)len + 18, &addr, 1000, 1) != 0) {
			fprintf(stderr, "note %zu failed\n", i);
			exit(1);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	rss1 = bench_status_kb("VmRSS");
	hwm1 = bench_status_kb("VmHWM");
	s = (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%zu addresses, %zu names: %.1f bytes resident per address, "
	       "%.1f at the peak, %.0f ns per note\n",
	       prov_addresses(p), prov_names(p),
	       (double)(rss1 > rss0 ? rss1 - rss0 : 0) * 1024 / (double)n,
	       (double)(hwm1 > rss0 ? hwm1 - rss0 : 0) * 1024 / (double)n,
	       s * 1e9 / (double)n);
	prov_free(p);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		run(strtoul(argv[1], NULL, 10));
		return 0;
	}
	run(100000);
	run(262144);
	return 0;
}
