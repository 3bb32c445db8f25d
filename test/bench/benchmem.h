/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the memory benchmarks read of their own process: a field of
 * /proc/self/status and the reset of its peak. Header only (static
 * inline), so a benchmark links nothing more for it. */
#ifndef DNSFENCE_BENCHMEM_H
#define DNSFENCE_BENCHMEM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A field of /proc/self/status (VmRSS, VmHWM) in kB, 0 when missing. */
static inline size_t bench_status_kb(const char *key)
{
	char line[256];
	size_t v = 0, n = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtoul(line + n + 1, NULL, 10);
	}
	if (f != NULL)
		fclose(f);
	return v;
}

/* VmHWM back to VmRSS (proc(5), clear_refs "5"), so that what follows
 * has a peak of its own. */
static inline void bench_peak_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f != NULL) {
		fputs("5", f);
		fclose(f);
	}
}

#endif
