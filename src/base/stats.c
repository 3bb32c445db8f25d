// SPDX-License-Identifier: GPL-2.0-or-later
/* stats: process-wide counters. The daemon is one thread, so plain
 * integers suffice; the names are what operators grep for. */
#include <stdio.h>
#include <sys/mman.h>
#include <string.h>

#include "base/log.h"
#include "base/stats.h"

static uint64_t own[STAT__COUNT];
static uint64_t *counters = own;
/* stats_share's page: the privileged parent's counters, which the DNS
 * process (status, metrics) adds to its own for the ids the parent
 * alone counts. */
static uint64_t *parent_page;
/* after the counters: the parent's count of each set's entries */
enum {
	EXTRA_SET4,
	EXTRA_SET6,
	EXTRA_SET_MS,
	EXTRA_JOURNAL,	  /* the parent's log_journal_dropped */
	EXTRA_SUPPRESSED, /* and log_suppressed_total */
	PAGE_EXTRA
};
static const enum stat_id parent_owned[] = {STAT_GUARD_DRIFT,
					    STAT_GUARD_RESTORED};

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
    [STAT_CACHE_HIT] = "cache_hit",
    [STAT_BLOCKED_NEVER] = "blocked_never_answered",
    [STAT_BLOCKED_EXPIRED] = "blocked_expired",
    [STAT_BLOCKED_PORT] = "blocked_port",
    [STAT_BLOCKED_DNS] = "blocked_dns",
    [STAT_BLOCKED_NOTSET] = "blocked_not_in_set",
    [STAT_BLOCKED_PROTO] = "blocked_protocol",
    [STAT_BLOCKED_SOURCE] = "blocked_source",
    [STAT_BLOCKED_ANSWERER] = "blocked_answerer",
    [STAT_BLOCKED_CLIENT] = "blocked_other_client",
    [STAT_NFLOG_LOST] = "nflog_lost",
    [STAT_OVER_CAP] = "over_cap",
    [STAT_FAIL_CACHED] = "fail_cached",
    [STAT_STALE] = "stale",
    [STAT_NOT_IN] = "not_in",
    [STAT_ADDR_EVICTED] = "addr_evicted",
    [STAT_RELOADS] = "reloads",
    [STAT_RELOAD_FAIL] = "reload_fail",
    [STAT_FLOW_CHECKED] = "flow_checked",
    [STAT_FLOW_ACCEPTED] = "flow_accepted",
    [STAT_FLOW_NO_NAME] = "flow_refused_no_name",
    [STAT_FLOW_NOT_ALLOWED] = "flow_refused_not_allowed",
    [STAT_FLOW_NOT_ANSWERED] = "flow_refused_not_answered",
    [STAT_FLOW_UNREADABLE] = "flow_refused_unreadable",
    [STAT_FLOW_TIMEOUT] = "flow_refused_timeout",
    [STAT_FLOW_BUSY] = "flow_refused_busy",
    [STAT_FLOW_AUDIT_ALLOWED] = "flow_audit_allowed",
    [STAT_FLOW_QUEUE_LOST] = "flow_queue_lost",
    [STAT_FLOW_SHED_PENDING] = "flow_shed_pending",
    [STAT_FLOW_SHED_RATE] = "flow_shed_rate",
    [STAT_ECH_STRIPPED] = "ech_stripped",
    [STAT_QTYPE_LOCAL] = "qtype_local",
    [STAT_BUDGET_REFUSED] = "budget_refused",
    [STAT_BUDGET_AUDIT] = "budget_audit",
    [STAT_LATE_ANSWER] = "late_answers",
    [STAT_ANSWERED_LOCAL] = "answered_local",
    [STAT_UNANSWERED] = "unanswered",
    [STAT_SHED_RECEIVE] = "shed_receive",
    [STAT_SHED_SET_ADD] = "shed_set_add",
    [STAT_SHED_UPSTREAM] = "shed_upstream",
    [STAT_SHED_REPLY] = "shed_reply",
    [STAT_SHED_TCP] = "shed_tcp",
};

const uint32_t stats_latency_bounds_us[STATS_LATENCY_BUCKETS - 1] = {
    1000, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000};
static uint64_t latency[STATS_LATENCY_BUCKETS];
static bool config_ok;
static int64_t config_ok_at;
static uint64_t latency_sum_us;
static uint64_t upstream_inflight;
/* 25 us to 2.5 s: a 2 ms target and a 2 s client timeout both land on a
 * bound. */
const uint32_t stats_hist_bounds_ns[STATS_HIST_BUCKETS - 1] = {
    25000,     50000,	  100000,     250000,	  500000,      1000000,
    2000000,   5000000,	  10000000,   25000000,	  50000000,    100000000,
    250000000, 500000000, 1000000000, 2000000000, 2500000000u, 4000000000u};
static uint64_t hist[STATS_H__COUNT][STATS_HIST_BUCKETS];
static uint64_t hist_sum_ns[STATS_H__COUNT];

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
	uint64_t n = counters[id];

	for (size_t i = 0; parent_page != NULL && counters != parent_page &&
			   i < sizeof(parent_owned) / sizeof(parent_owned[0]);
	     i++) {
		if (parent_owned[i] == id)
			n +=
			    __atomic_load_n(&parent_page[id], __ATOMIC_RELAXED);
	}
	return n;
}

int stats_share(void)
{
	void *p =
	    mmap(NULL, sizeof(own) + PAGE_EXTRA * sizeof(uint64_t),
		 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	parent_page = p;
	parent_page[STAT__COUNT + EXTRA_SET4] = (uint64_t)-1;
	parent_page[STAT__COUNT + EXTRA_SET6] = (uint64_t)-1;
	return 0;
}

void stats_set_entries(long long v4, long long v6)
{
	if (parent_page == NULL)
		return;
	__atomic_store_n(&parent_page[STAT__COUNT + EXTRA_SET4], (uint64_t)v4,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&parent_page[STAT__COUNT + EXTRA_SET6], (uint64_t)v6,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&parent_page[STAT__COUNT + EXTRA_SET_MS], (uint64_t)1,
			 __ATOMIC_RELEASE);
}

bool stats_shared_set_entries(long long *v4, long long *v6)
{
	if (parent_page == NULL ||
	    __atomic_load_n(&parent_page[STAT__COUNT + EXTRA_SET_MS],
			    __ATOMIC_ACQUIRE) == 0)
		return false;
	*v4 = (long long)__atomic_load_n(&parent_page[STAT__COUNT + EXTRA_SET4],
					 __ATOMIC_RELAXED);
	*v6 = (long long)__atomic_load_n(&parent_page[STAT__COUNT + EXTRA_SET6],
					 __ATOMIC_RELAXED);
	return true;
}

void stats_set_log_drops(void)
{
	if (parent_page == NULL)
		return;
	__atomic_store_n(&parent_page[STAT__COUNT + EXTRA_JOURNAL],
			 log_journal_dropped(), __ATOMIC_RELAXED);
	__atomic_store_n(&parent_page[STAT__COUNT + EXTRA_SUPPRESSED],
			 log_suppressed_total(), __ATOMIC_RELAXED);
}

void stats_log_drops(uint64_t *journal, uint64_t *suppressed)
{
	*journal = log_journal_dropped();
	*suppressed = log_suppressed_total();
	if (parent_page == NULL || counters == parent_page)
		return; /* one process, or the parent itself */
	*journal += __atomic_load_n(&parent_page[STAT__COUNT + EXTRA_JOURNAL],
				    __ATOMIC_RELAXED);
	*suppressed += __atomic_load_n(
	    &parent_page[STAT__COUNT + EXTRA_SUPPRESSED], __ATOMIC_RELAXED);
}

void stats_count_shared(void)
{
	if (parent_page != NULL)
		counters = parent_page;
}

const char *stats_name(enum stat_id id)
{
	return names[id];
}

void stats_reset(void)
{
	memset(counters, 0, sizeof(own));
	memset(latency, 0, sizeof(latency));
	latency_sum_us = 0;
	memset(hist, 0, sizeof(hist));
	memset(hist_sum_ns, 0, sizeof(hist_sum_ns));
	upstream_inflight = 0;
}

void stats_log(void)
{
	char line[2048];
	size_t off = 0;

	for (int i = 0; i < STAT__COUNT && off < sizeof(line); i++) {
		int n = snprintf(
		    line + off, sizeof(line) - off, "%s%s=%llu", i ? " " : "",
		    names[i], (unsigned long long)stats_get((enum stat_id)i));
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off < sizeof(line))
		snprintf(line + off, sizeof(line) - off,
			 " log_suppressed=%llu journal_dropped=%llu",
			 (unsigned long long)log_suppressed_total(),
			 (unsigned long long)log_journal_dropped());
	log_info("stats", "%s", line);
}

void stats_upstream_latency(uint64_t us)
{
	size_t i = 0;

	while (i < STATS_LATENCY_BUCKETS - 1 && us > stats_latency_bounds_us[i])
		i++;
	latency[i]++;
	latency_sum_us += us;
}

void stats_latency(uint64_t cum[STATS_LATENCY_BUCKETS], uint64_t *count,
		   uint64_t *sum_us)
{
	uint64_t run = 0;

	for (size_t i = 0; i < STATS_LATENCY_BUCKETS; i++) {
		run += latency[i];
		cum[i] = run;
	}
	*count = run;
	*sum_us = latency_sum_us;
}

void stats_hist_ns(enum stats_hist h, uint64_t ns)
{
	size_t i = 0;

	while (i < STATS_HIST_BUCKETS - 1 && ns > stats_hist_bounds_ns[i])
		i++;
	hist[h][i]++;
	hist_sum_ns[h] += ns;
}

void stats_hist_read(enum stats_hist h, uint64_t cum[STATS_HIST_BUCKETS],
		     uint64_t *count, uint64_t *sum_ns)
{
	uint64_t run = 0;

	for (size_t i = 0; i < STATS_HIST_BUCKETS; i++) {
		run += hist[h][i];
		cum[i] = run;
	}
	*count = run;
	*sum_ns = hist_sum_ns[h];
}

void stats_upstream_inflight(int delta)
{
	if (delta < 0 && upstream_inflight < (uint64_t)-delta)
		upstream_inflight = 0;
	else
		upstream_inflight += (uint64_t)(int64_t)delta;
}

uint64_t stats_upstream_inflight_now(void)
{
	return upstream_inflight;
}

void stats_config_loaded(bool ok, int64_t now)
{
	config_ok = ok;
	if (ok)
		config_ok_at = now;
}

void stats_config_state(bool *ok, int64_t *success_at)
{
	*ok = config_ok;
	*success_at = config_ok_at;
}
