// SPDX-License-Identifier: GPL-2.0-or-later
/* stats: process-wide counters. The daemon is one thread, so plain
 * integers suffice; the names are what operators grep for. */
#include <stdio.h>
#include <string.h>

#include "dnsfence/log.h"
#include "dnsfence/stats.h"

static uint64_t counters[STAT__COUNT];

static const char *const names[STAT__COUNT] = {
    [STAT_QUERIES] = "queries",
    [STAT_DENIED] = "denied",
    [STAT_AUDIT_ALLOWED] = "audit_allowed",
    [STAT_MALFORMED] = "malformed",
    [STAT_FORWARDED] = "forwarded",
    [STAT_COALESCED] = "coalesced",
    [STAT_ANSWERS] = "answers",
    [STAT_SERVFAIL] = "servfail",
    [STAT_UPSTREAM_FAIL] = "upstream_fail",
    [STAT_BAD_ANSWER] = "bad_answer",
    [STAT_TRUNCATED] = "truncated",
    [STAT_ADDR_ADDED] = "addr_added",
    [STAT_ADDR_SKIPPED] = "addr_skipped",
    [STAT_ADDR_INTERNAL] = "addr_internal",
    [STAT_ADD_FAIL_NOSET] = "add_fail_noset",
    [STAT_ADD_FAIL_FULL] = "add_fail_full",
    [STAT_ADD_FAIL_OTHER] = "add_fail_other",
    [STAT_TCP_REFUSED] = "tcp_refused",
    [STAT_GUARD_DRIFT] = "guard_drift",
    [STAT_GUARD_RESTORED] = "guard_restored",
    [STAT_ADDR_EVICTED] = "addr_evicted",
    [STAT_RELOADS] = "reloads",
    [STAT_RELOAD_FAIL] = "reload_fail",
};

void stats_inc(enum stat_id id)
{
	counters[id]++;
}

void stats_add(enum stat_id id, uint64_t n)
{
	counters[id] += n;
}

uint64_t stats_get(enum stat_id id)
{
	return counters[id];
}

const char *stats_name(enum stat_id id)
{
	return names[id];
}

void stats_reset(void)
{
	memset(counters, 0, sizeof(counters));
}

void stats_log(void)
{
	char line[1024];
	size_t off = 0;

	for (int i = 0; i < STAT__COUNT && off < sizeof(line); i++) {
		int n = snprintf(line + off, sizeof(line) - off, "%s%s=%llu",
				 i ? " " : "", names[i],
				 (unsigned long long)counters[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	log_info("stats", "%s", line);
}
