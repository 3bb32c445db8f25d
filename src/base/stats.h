/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats: process-wide counters, logged on SIGUSR1. */
#ifndef DNSFENCE_STATS_H
#define DNSFENCE_STATS_H

#include <stdbool.h>
#include <stdint.h>

enum stat_id {
	STAT_QUERIES = 0,      /* parsed queries, UDP and TCP */
	STAT_DENIED,	       /* refused by the policy (allowlist, budget) */
	STAT_AUDIT_ALLOWED,    /* denied by policy, forwarded in audit mode */
	STAT_MALFORMED,	       /* FORMERR/NOTIMP/dropped garbage */
	STAT_FORWARDED,	       /* upstream queries sent */
	STAT_COALESCED,	       /* queries that joined one already in flight */
	STAT_ANSWERS,	       /* upstream answers relayed (not the cache's) */
	STAT_SERVFAIL,	       /* SERVFAIL sent to a client */
	STAT_UPSTREAM_FAIL,    /* upstream timeouts and errors */
	STAT_BAD_ANSWER,       /* malformed upstream answers */
	STAT_TRUNCATED,	       /* UDP answers sent with TC */
	STAT_ADDR_ADDED,       /* addresses sent to the kernel and acked */
	STAT_ADDR_SKIPPED,     /* add skipped: entry already lives longer */
	STAT_ADDR_INTERNAL,    /* addresses dropped as internal (invariant 3) */
	STAT_ADD_FAIL_NOSET,   /* set missing */
	STAT_ADD_FAIL_FULL,    /* set full */
	STAT_ADD_FAIL_OTHER,   /* any other netlink failure */
	STAT_TCP_REFUSED,      /* TCP connections closed at the cap */
	STAT_GUARD_DRIFT,      /* guard checks that found drift */
	STAT_GUARD_RESTORED,   /* rules and sets written back by the guard */
	STAT_CACHE_HIT,	       /* answers relayed from the cache (stale too) */
	STAT_BLOCKED_NEVER,    /* blocked flows: address never answered */
	STAT_BLOCKED_EXPIRED,  /* blocked flows: address's entry expired */
	STAT_BLOCKED_PORT,     /* blocked flows: port not in `ports` */
	STAT_BLOCKED_DNS,      /* blocked flows: DNS around dnsfence */
	STAT_BLOCKED_NOTSET,   /* blocked flows: answered, live, not in set */
	STAT_BLOCKED_PROTO,    /* blocked flows: neither TCP nor UDP */
	STAT_BLOCKED_SOURCE,   /* blocked flows: forged or spoofed source */
	STAT_BLOCKED_ANSWERER, /* blocked: a local socket answered an upstream
				*/
	STAT_BLOCKED_CLIENT,   /* blocked: answered to another client */
	STAT_NFLOG_LOST,       /* NFLOG messages the kernel dropped (ENOBUFS) */
	STAT_OVER_CAP,	       /* SERVFAIL: upstream questions at the cap */
	STAT_FAIL_CACHED,      /* SERVFAIL from the failure cache */
	STAT_STALE,	       /* expired answers served (upstream failed) */
	STAT_NOT_IN,	       /* queries of a class other than IN refused */
	STAT_ADDR_EVICTED,     /* addresses taken out of the sets on reload */
	STAT_RELOADS,	       /* reloads that changed the running policy */
	STAT_RELOAD_FAIL,   /* reloads refused (bad config, restart needed) */
	STAT_FLOW_CHECKED,  /* name check: flows decided */
	STAT_FLOW_ACCEPTED, /* name check: flows let through */
	STAT_FLOW_NO_NAME,  /* name check refused: no server name */
	STAT_FLOW_NOT_ALLOWED,	 /* name check refused: name not allowed */
	STAT_FLOW_NOT_ANSWERED,	 /* name check refused: not answered with dst */
	STAT_FLOW_UNREADABLE,	 /* name check refused: unreadable bytes */
	STAT_FLOW_TIMEOUT,	 /* name check refused: incomplete in time */
	STAT_FLOW_BUSY,		 /* name check refused: too many flows read */
	STAT_FLOW_AUDIT_ALLOWED, /* name check, audit: refused, let through */
	STAT_FLOW_QUEUE_LOST,	 /* queue reads that found the kernel dropped */
	STAT_FLOW_SHED_PENDING,	 /* name check: new flows refused unread, their
				  * subject holding its share of pending ones */
	STAT_FLOW_SHED_RATE,	 /* the same, the subject over its rate */
	STAT_ECH_STRIPPED,	 /* HTTPS/SVCB records sent without "ech" */
	STAT_QTYPE_LOCAL,	 /* allowed names asked a type not forwarded */
	STAT_BUDGET_REFUSED, /* new names refused: wildcard budget used up */
	STAT_BUDGET_AUDIT,   /* the same in audit mode (forwarded) */
	STAT_LATE_ANSWER,    /* late upstream answers' ICMP errors seen */
	STAT_ANSWERED_LOCAL, /* answered here: zone transfer, class, qtype */
	STAT_UNANSWERED,     /* parsed, never answered (client gone, gated) */
	STAT_SHED_RECEIVE,   /* shed: waited in the listener past its bound */
	STAT_SHED_SET_ADD,   /* shed: the set channel behind past its bound */
	STAT_SHED_UPSTREAM,  /* shed: upstream questions at the cap */
	STAT_SHED_REPLY,     /* shed: a UDP reply the socket would not take */
	STAT_SHED_TCP, /* shed: TCP clients not reading, reading stopped */
	STAT__COUNT
};

void stats_inc(enum stat_id id);
void stats_add(enum stat_id id, uint64_t n);
uint64_t stats_get(enum stat_id id);
const char *stats_name(enum stat_id id);
void stats_reset(void);
/* Two processes: a MAP_SHARED page made before the fork (0 or -1), into
 * which the privileged parent counts from stats_count_shared on; the DNS
 * process's stats_get adds the counters only the parent keeps (the
 * guard's). */
int stats_share(void);
void stats_count_shared(void);
/* The parent's count of the kernel's set entries (-1: unknown), and the
 * DNS process's read of it for metrics: false before the first count. */
void stats_set_entries(long long v4, long long v6);
bool stats_shared_set_entries(long long *v4, long long *v6);
/* Log lines left out (log_journal_dropped, log_suppressed_total): the
 * parent publishes its own with each count of the sets; the DNS
 * process's read adds them to its own (for the metrics). */
void stats_set_log_drops(void);
void stats_log_drops(uint64_t *journal, uint64_t *suppressed);
/* The last config load (the start's, then each reload's): whether it
 * succeeded, and the wall clock of the last one that did (0: none yet). */
void stats_config_loaded(bool ok, int64_t now);
void stats_config_state(bool *ok, int64_t *success_at);
/* One log line with every counter. */
void stats_log(void);

/* Upstream round trips (send to answer or failure) in microseconds, for
 * the metrics histogram: buckets bounded by stats_latency_bounds_us (the
 * last is +Inf). */
#define STATS_LATENCY_BUCKETS 10
extern const uint32_t stats_latency_bounds_us[STATS_LATENCY_BUCKETS - 1];
void stats_upstream_latency(uint64_t us);
/* Cumulative count per bucket (Prometheus `le`), count and sum in us. */
void stats_latency(uint64_t cum[STATS_LATENCY_BUCKETS], uint64_t *count,
		   uint64_t *sum_us);
/* Durations in nanoseconds, kept per path and per stage of a query for
 * the metrics histograms (docs/metrics.md): buckets bounded by
 * stats_hist_bounds_ns (the last is +Inf), fine below a millisecond. */
enum stats_hist {
	STATS_H_CACHED = 0,  /* received to handed back: cache hits */
	STATS_H_FORWARDED,   /* ... answers that went upstream */
	STATS_H_DENIED,	     /* ... names off the allowlist */
	STATS_H_LOCAL,	     /* ... other local answers (SERVFAIL at the
			      * cap, failure memory, types not forwarded) */
	STATS_H_SET_ADD,     /* set add sent to the parent to its ack */
	STATS_H_RECV_QUEUE,  /* the kernel's receive to the daemon's read */
	STATS_H_TO_UPSTREAM, /* read to the upstream question sent */
	STATS_H_UPSTREAM,    /* upstream question sent to its answer */
	STATS_H_TO_SET_ADD,  /* upstream answer to the set add sent */
	STATS_H_TO_REPLY,    /* ack (or answer, no add) to handed back */
	STATS_H__COUNT
};
#define STATS_HIST_BUCKETS 19
extern const uint32_t stats_hist_bounds_ns[STATS_HIST_BUCKETS - 1];
void stats_hist_ns(enum stats_hist h, uint64_t ns);
/* Cumulative count per bucket (Prometheus `le`), count and sum in ns. */
void stats_hist_read(enum stats_hist h, uint64_t cum[STATS_HIST_BUCKETS],
		     uint64_t *count, uint64_t *sum_ns);

/* Upstream queries sent and not yet answered or failed. */
void stats_upstream_inflight(int delta);
uint64_t stats_upstream_inflight_now(void);

#endif
