// SPDX-License-Identifier: GPL-2.0-or-later
/* monotime: CLOCK_MONOTONIC in the three units the modules count in. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/monotime.h"

uint64_t monotime_ns(void)
{
	struct timespec ts;

	/* Cannot fail for CLOCK_MONOTONIC with a valid pointer. */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t monotime_ms(void)
{
	return monotime_ns() / 1000000u;
}

uint64_t monotime_s(void)
{
	return monotime_ns() / 1000000000u;
}

int64_t monotime_realtime_offset_ns(void)
{
	struct timespec ts;
	uint64_t mono = monotime_ns();

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)((uint64_t)ts.tv_sec * 1000000000u +
			 (uint64_t)ts.tv_nsec - mono);
}

void monotime_boot_id(char buf[MONOTIME_BOOT_LEN + 1])
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, MONOTIME_BOOT_LEN + 1, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}
