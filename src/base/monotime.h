/* SPDX-License-Identifier: GPL-2.0-or-later */
/* monotime: the one reading of CLOCK_MONOTONIC (never the wall clock:
 * timeouts and ages must not jump when the date is set). */
#ifndef DNSFENCE_MONOTIME_H
#define DNSFENCE_MONOTIME_H

#include <stdint.h>

uint64_t monotime_ns(void);
uint64_t monotime_ms(void);
uint64_t monotime_s(void);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC now, in ns: turns a kernel
 * receive timestamp (SO_TIMESTAMPNS, wall clock) into monotonic time,
 * read once per batch of datagrams. Never used as a time by itself. */
int64_t monotime_realtime_offset_ns(void);

/* The kernel's boot id (36 characters, "" when unreadable): a monotonic
 * time saved in a file means something only within the boot that wrote
 * it. */
#define MONOTIME_BOOT_LEN 36
void monotime_boot_id(char buf[MONOTIME_BOOT_LEN + 1]);

#endif
