// SPDX-License-Identifier: GPL-2.0-or-later
/* Benchmark of the provenance map's memory and note cost: N addresses
 * (half IPv4, half IPv6), each noted for one name, names shared by two
 * addresses (an A and an AAAA answer), as the unique-names workload of
 * dnsperf.sh fills it; prints the malloc heap the map holds (mallinfo2:
 * what was allocated; its entry arrays and names' pool are mapped on
 * their own from 64 KiB on, not counted there) and the resident memory
 * it added (/proc/self/statm: what was touched, the number to quote)
 * per address, and the time per note. "bench_prov N" for
 * another N (default 100000 and 262144). Not a test: it asserts nothing.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "resolve/prov.h"

static size_t resident(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu %lu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

static void run(size_t n);
static size_t heap(void);
static size_t resident(void);

static size_t heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void run(size_t n)
{
	struct prov *p = prov_new(n * 2);
	uint8_t wire[64];
	struct timespec a, b;
	size_t before = heap(), after, rss0 = resident(), rss1;
	double s;

	if (p == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
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
	after = heap();
	rss1 = resident();
	s = (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%zu addresses, %zu names: %.1f MiB malloc heap, %.1f bytes "
	       "per address (resident: %.1f), %.0f ns per note\n",
	       prov_addresses(p), prov_names(p),
	       (double)(after - before) / (1 << 20),
	       (double)(after - before) / (double)n,
	       (double)(rss1 > rss0 ? rss1 - rss0 : 0) / (double)n,
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
