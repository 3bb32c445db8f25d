// SPDX-License-Identifier: GPL-2.0-or-later
/* monotime: CLOCK_MONOTONIC in the three units the modules count in. */
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
