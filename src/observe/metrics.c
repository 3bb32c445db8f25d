// SPDX-License-Identifier: GPL-2.0-or-later
/* metrics: Prometheus text exposition over libevent's evhttp.
 *
 * Every counter of stats.c is exported; a table maps each to a metric
 * family and, where several counters are one family, a label. A counter
 * the table does not know (added later) is still exported, as
 * dnsfence_<name>_total, so nothing is silently left out. Labels never
 * carry a name or an address, only fixed words: the output is the same
 * size whatever the workload does, and it tells a reader how much was
 * asked and blocked, never what.
 *
 * Whoever can reach the endpoint is untrusted (the fenced workload can
 * reach loopback), so evhttp is held to: GET and HEAD, /metrics only,
 * METRICS_MAX_HEADERS bytes of headers, no body, a timeout, and
 * METRICS_MAX_CONNS connections. evhttp 2.1 has no connection limit, so
 * we keep one reference to each connection's bufferevent (created in
 * evhttp's bevcb): a slot whose bufferevent evhttp has freed (its
 * callbacks cleared) is released, the listener pauses while all slots are
 * taken, and a connection older than METRICS_CONN_SECONDS is closed
 * through evhttp's own error callback, so none lives longer. The kernel
 * set sizes come from one netlink round trip, at most once a second. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "observe/learn.h"
#include "base/log.h"
#include "observe/metrics.h"
#include "base/monotime.h"
#include "observe/recent.h"
#include "observe/attrib.h"
#include "observe/usage.h"
#include "sets/setsadm.h"
#include "base/stats.h"

#define SYS "metrics"
/* Every method evhttp parses (answer() refuses all but GET and HEAD). */
#define ALL_METHODS                                                            \
	(EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | \
	 EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |           \
	 EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH)

struct family {
	const char *name, *type, *help;
};

struct mapping {
	int family;	   /* index into families[] */
	const char *label; /* "result=\"denied\"" or NULL */
};

struct conn {
	struct bufferevent *bev;
	uint64_t born_ms;
};

struct metrics {
	struct event_base *base;
	const struct config *cfg;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	struct event *sweep;
	struct conn conns[METRICS_MAX_CONNS];
	bool paused;
	uint64_t sets_ms;
	long long set4, set6;
	const struct usage *usage;   /* NULL: not counted */
	const struct attrib *attrib; /* NULL: no flows per interface */
	int queue_fd; /* METRICS_QUEUE_PROC, or -1 (not the caller's) */
	uint16_t queue;
};

enum fam_id {
	F_QUERIES,
	F_RESULTS,
	F_MALFORMED,
	F_UPSTREAM,
	F_COALESCED,
	F_UPSTREAM_FAIL,
	F_BAD_ANSWER,
	F_TRUNCATED,
	F_SET_ADDS,
	F_SET_SKIPPED,
	F_INTERNAL,
	F_SET_FAILS,
	F_TCP_REFUSED,
	F_GUARD_DRIFT,
	F_GUARD_RESTORED,
	F_BLOCKED,
	F_NFLOG_LOST,
	F_FLOW_CHECKED,
	F_FLOW_RESULTS,
	F_FLOW_AUDIT,
	F_QUEUE_LOST,
	F_OVER_CAP,
	F_FAIL_CACHED,
	F_STALE,
	F_NOT_IN,
	F_EVICTED,
	F_RELOADS,
	F_RELOAD_FAIL,
	F_ECH,
	F_QTYPE_LOCAL,
	F_BUDGET_REFUSED,
	F_BUDGET_AUDIT,
	F_LATE,
	F_SHED,
	F_FLOW_SHED,
	F__COUNT
};

static const struct family families[F__COUNT] = {
    [F_QUERIES] = {"dnsfence_queries_total", "counter",
		   "Client queries parsed, UDP and TCP."},
    [F_RESULTS] =
	{"dnsfence_query_results_total", "counter",
	 "Client queries by result, each counted once (the results "
	 "sum to dnsfence_queries_total): allowed (upstream answer "
	 "relayed), cache_hit (answer from the cache), denied (policy "
	 "or budget), audit_allowed (would be denied, forwarded in "
	 "audit mode), servfail, local (zone transfer, class or type "
	 "answered here), unanswered (client gone first)."},
    [F_MALFORMED] = {"dnsfence_malformed_queries_total", "counter",
		     "Queries answered FORMERR/NOTIMP/BADVERS or dropped."},
    [F_UPSTREAM] = {"dnsfence_upstream_queries_total", "counter",
		    "Queries sent to the upstreams."},
    [F_COALESCED] = {"dnsfence_coalesced_queries_total", "counter",
		     "Queries that joined an identical one in flight."},
    [F_UPSTREAM_FAIL] = {"dnsfence_upstream_failures_total", "counter",
			 "Upstream timeouts and errors."},
    [F_BAD_ANSWER] = {"dnsfence_upstream_bad_answers_total", "counter",
		      "Malformed or oversized upstream answers."},
    [F_TRUNCATED] = {"dnsfence_truncated_answers_total", "counter",
		     "UDP answers sent with TC set."},
    [F_SET_ADDS] = {"dnsfence_set_adds_total", "counter",
		    "Addresses added to the sets and acked by the kernel."},
    [F_SET_SKIPPED] = {"dnsfence_set_adds_skipped_total", "counter",
		       "Adds skipped: the entry already lived long enough."},
    [F_INTERNAL] = {"dnsfence_internal_addresses_total", "counter",
		    "Internal addresses left out of answers and sets."},
    [F_SET_FAILS] = {"dnsfence_set_add_failures_total", "counter",
		     "Failed set adds by reason: noset, full, other."},
    [F_TCP_REFUSED] = {"dnsfence_tcp_refused_total", "counter",
		       "TCP clients closed at the connection cap."},
    [F_GUARD_DRIFT] = {"dnsfence_guard_drift_total", "counter",
		       "Guard checks that found the fence changed."},
    [F_GUARD_RESTORED] = {"dnsfence_guard_restored_total", "counter",
			  "Times the guard wrote the rules and sets back."},
    [F_BLOCKED] = {"dnsfence_blocked_flows_total", "counter",
		   "Blocked (audit: would-be-blocked) packets the NFLOG rules "
		   "reported (rate-limited), by reason."},
    [F_NFLOG_LOST] =
	{"dnsfence_nflog_lost_total", "counter",
	 "NFLOG reads that found the kernel had dropped messages."},
    [F_FLOW_CHECKED] = {"dnsfence_name_check_flows_checked_total", "counter",
			"Flows the name check decided (TLS server name or "
			"HTTP host read, or refused unread)."},
    [F_FLOW_RESULTS] = {"dnsfence_name_check_flows_total", "counter",
			"Name check verdicts: accepted, or refused by "
			"reason (busy: refused unread, the table full)."},
    [F_FLOW_AUDIT] = {"dnsfence_name_check_audit_allowed_total", "counter",
		      "Refused flows let through in audit."},
    [F_QUEUE_LOST] = {"dnsfence_name_check_queue_lost_total", "counter",
		      "Queue reads that found the kernel had dropped "
		      "messages to the daemon."},
    [F_OVER_CAP] = {"dnsfence_over_cap_total", "counter",
		    "Queries answered SERVFAIL because upstream questions in "
		    "flight were at max_inflight or the client's share."},
    [F_FAIL_CACHED] = {"dnsfence_fail_cached_total", "counter",
		       "Queries answered SERVFAIL from the failure cache (the "
		       "same question failed upstream a moment ago)."},
    [F_STALE] = {"dnsfence_stale_total", "counter",
		 "Expired cached answers served because the upstream "
		 "failed (serve_stale)."},
    [F_NOT_IN] = {"dnsfence_not_in_total", "counter",
		  "Queries of a class other than IN, refused."},
    [F_EVICTED] = {"dnsfence_addr_evicted_total", "counter",
		   "Set entries a reload took out (only removed names had "
		   "put them in)."},
    [F_RELOADS] = {"dnsfence_reloads_total", "counter",
		   "Reloads that ran to the end (failed ones included)."},
    [F_RELOAD_FAIL] = {"dnsfence_reload_fail_total", "counter",
		       "Reloads refused or failed: bad config, restart "
		       "needed, or rules not applied."},
    [F_ECH] = {"dnsfence_ech_stripped_total", "counter",
	       "HTTPS/SVCB records sent without their ech param (the name "
	       "check is on)."},
    [F_QTYPE_LOCAL] = {"dnsfence_qtype_local_total", "counter",
		       "Queries for allowed names answered locally for their "
		       "type (meta, private-use, ANY, not in qtypes)."},
    [F_BUDGET_REFUSED] = {"dnsfence_budget_refused_total", "counter",
			  "New names below a wildcard refused: its "
			  "wildcard_budget was used up."},
    [F_BUDGET_AUDIT] = {"dnsfence_budget_audit_total", "counter",
			"New names below a wildcard past its budget, "
			"forwarded in audit mode."},
    [F_LATE] = {"dnsfence_late_answers_total", "counter",
		"Upstream answers that came after the timeout to a closed "
		"socket (ICMP errors seen)."},
    [F_SHED] = {"dnsfence_shed_total", "counter",
		"Queries shed at once rather than queued, by the stage "
		"whose bound was reached."},
    [F_FLOW_SHED] = {"dnsfence_namecheck_shed_total", "counter",
		     "New flows the name check refused unread because their "
		     "subject (uid or source address) held its share of the "
		     "pending flows (pending) or opened them faster than its "
		     "rate (rate)."},
};

static const struct mapping map[STAT__COUNT] = {
    [STAT_QUERIES] = {F_QUERIES, NULL},
    [STAT_DENIED] = {F_RESULTS, "result=\"denied\""},
    [STAT_AUDIT_ALLOWED] = {F_RESULTS, "result=\"audit_allowed\""},
    [STAT_MALFORMED] = {F_MALFORMED, NULL},
    [STAT_FORWARDED] = {F_UPSTREAM, NULL},
    [STAT_COALESCED] = {F_COALESCED, NULL},
    [STAT_ANSWERS] = {F_RESULTS, "result=\"allowed\""},
    [STAT_SERVFAIL] = {F_RESULTS, "result=\"servfail\""},
    [STAT_UPSTREAM_FAIL] = {F_UPSTREAM_FAIL, NULL},
    [STAT_BAD_ANSWER] = {F_BAD_ANSWER, NULL},
    [STAT_TRUNCATED] = {F_TRUNCATED, NULL},
    [STAT_ADDR_ADDED] = {F_SET_ADDS, NULL},
    [STAT_ADDR_SKIPPED] = {F_SET_SKIPPED, NULL},
    [STAT_ADDR_INTERNAL] = {F_INTERNAL, NULL},
    [STAT_ADD_FAIL_NOSET] = {F_SET_FAILS, "reason=\"noset\""},
    [STAT_ADD_FAIL_FULL] = {F_SET_FAILS, "reason=\"full\""},
    [STAT_ADD_FAIL_OTHER] = {F_SET_FAILS, "reason=\"other\""},
    [STAT_TCP_REFUSED] = {F_TCP_REFUSED, NULL},
    [STAT_GUARD_DRIFT] = {F_GUARD_DRIFT, NULL},
    [STAT_GUARD_RESTORED] = {F_GUARD_RESTORED, NULL},
    [STAT_CACHE_HIT] = {F_RESULTS, "result=\"cache_hit\""},
    [STAT_BLOCKED_NEVER] = {F_BLOCKED, "reason=\"never_answered\""},
    [STAT_BLOCKED_EXPIRED] = {F_BLOCKED, "reason=\"expired\""},
    [STAT_BLOCKED_PORT] = {F_BLOCKED, "reason=\"port\""},
    [STAT_BLOCKED_DNS] = {F_BLOCKED, "reason=\"dns\""},
    [STAT_BLOCKED_NOTSET] = {F_BLOCKED, "reason=\"not_in_set\""},
    [STAT_BLOCKED_PROTO] = {F_BLOCKED, "reason=\"protocol\""},
    [STAT_BLOCKED_SOURCE] = {F_BLOCKED, "reason=\"source\""},
    [STAT_BLOCKED_ANSWERER] = {F_BLOCKED, "reason=\"answerer\""},
    [STAT_BLOCKED_CLIENT] = {F_BLOCKED, "reason=\"other_client\""},
    [STAT_NFLOG_LOST] = {F_NFLOG_LOST, NULL},
    [STAT_FLOW_CHECKED] = {F_FLOW_CHECKED, NULL},
    [STAT_FLOW_ACCEPTED] = {F_FLOW_RESULTS, "result=\"accepted\""},
    [STAT_FLOW_NO_NAME] = {F_FLOW_RESULTS,
			   "result=\"refused\",reason=\"no_name\""},
    [STAT_FLOW_NOT_ALLOWED] = {F_FLOW_RESULTS,
			       "result=\"refused\",reason=\"not_allowed\""},
    [STAT_FLOW_NOT_ANSWERED] = {F_FLOW_RESULTS,
				"result=\"refused\",reason=\"not_answered\""},
    [STAT_FLOW_UNREADABLE] = {F_FLOW_RESULTS,
			      "result=\"refused\",reason=\"unreadable\""},
    [STAT_FLOW_TIMEOUT] = {F_FLOW_RESULTS,
			   "result=\"refused\",reason=\"timeout\""},
    [STAT_FLOW_BUSY] = {F_FLOW_RESULTS, "result=\"refused\",reason=\"busy\""},
    [STAT_FLOW_AUDIT_ALLOWED] = {F_FLOW_AUDIT, NULL},
    [STAT_FLOW_QUEUE_LOST] = {F_QUEUE_LOST, NULL},
    [STAT_OVER_CAP] = {F_OVER_CAP, NULL},
    [STAT_FAIL_CACHED] = {F_FAIL_CACHED, NULL},
    [STAT_STALE] = {F_STALE, NULL},
    [STAT_NOT_IN] = {F_NOT_IN, NULL},
    [STAT_ADDR_EVICTED] = {F_EVICTED, NULL},
    [STAT_RELOADS] = {F_RELOADS, NULL},
    [STAT_RELOAD_FAIL] = {F_RELOAD_FAIL, NULL},
    [STAT_ECH_STRIPPED] = {F_ECH, NULL},
    [STAT_QTYPE_LOCAL] = {F_QTYPE_LOCAL, NULL},
    [STAT_BUDGET_REFUSED] = {F_BUDGET_REFUSED, NULL},
    [STAT_BUDGET_AUDIT] = {F_BUDGET_AUDIT, NULL},
    [STAT_LATE_ANSWER] = {F_LATE, NULL},
    [STAT_ANSWERED_LOCAL] = {F_RESULTS, "result=\"local\""},
    [STAT_UNANSWERED] = {F_RESULTS, "result=\"unanswered\""},
    [STAT_SHED_RECEIVE] = {F_SHED, "stage=\"receive\""},
    [STAT_SHED_SET_ADD] = {F_SHED, "stage=\"set_add\""},
    [STAT_SHED_UPSTREAM] = {F_SHED, "stage=\"upstream\""},
    [STAT_SHED_REPLY] = {F_SHED, "stage=\"reply\""},
    [STAT_SHED_TCP] = {F_SHED, "stage=\"tcp\""},
    [STAT_FLOW_SHED_PENDING] = {F_FLOW_SHED, "reason=\"pending\""},
    [STAT_FLOW_SHED_RATE] = {F_FLOW_SHED, "reason=\"rate\""},
};

static bool mapped(int id);
static void render_counters(struct evbuffer *b);
static void render_latency(struct evbuffer *b);
static void render_hists(struct evbuffer *b);
static void render_hist(struct evbuffer *b, const char *name, const char *label,
			enum stats_hist h);
static void render_gauges(struct evbuffer *b, long long set4, long long set6);
static void render_usage(struct evbuffer *b, const struct usage *u);
static void render_interfaces(struct evbuffer *b, const struct attrib *a);
static void render_log_drops(struct evbuffer *b);
static void render_reload(struct evbuffer *b);
static void render_queue(struct evbuffer *b, const struct metrics_queue *q);
static void on_request(struct evhttp_request *req, void *arg);
static void answer(struct metrics *m, struct evhttp_request *req);
static struct bufferevent *on_new_conn(struct event_base *base, void *arg);
static void on_sweep(evutil_socket_t fd, short what, void *arg);
static void sweep(struct metrics *m);
static void refresh_sets(struct metrics *m);

/* A zeroed row is F_QUERIES with no label: only STAT_QUERIES is that. */
static bool mapped(int id)
{
	return id == STAT_QUERIES || map[id].family != F_QUERIES ||
	       map[id].label != NULL;
}

static void render_counters(struct evbuffer *b)
{
	for (int f = 0; f < F__COUNT; f++) {
		evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n",
				    families[f].name, families[f].help,
				    families[f].name, families[f].type);
		for (int id = 0; id < STAT__COUNT; id++) {
			if (!mapped(id) || map[id].family != f)
				continue;
			evbuffer_add_printf(
			    b, "%s%s%s%s %" PRIu64 "\n", families[f].name,
			    map[id].label ? "{" : "",
			    map[id].label ? map[id].label : "",
			    map[id].label ? "}" : "", stats_get(id));
		}
	}
	for (int id = 0; id < STAT__COUNT; id++) {
		if (mapped(id))
			continue;
		evbuffer_add_printf(b,
				    "# HELP dnsfence_%s_total stats counter "
				    "%s.\n# TYPE dnsfence_%s_total counter\n"
				    "dnsfence_%s_total %" PRIu64 "\n",
				    stats_name(id), stats_name(id),
				    stats_name(id), stats_name(id),
				    stats_get(id));
	}
}

static void render_latency(struct evbuffer *b)
{
	static const char *const n = "dnsfence_upstream_latency_seconds";
	uint64_t cum[STATS_LATENCY_BUCKETS], count, sum_us;

	stats_latency(cum, &count, &sum_us);
	evbuffer_add_printf(b,
			    "# HELP %s Upstream round trips, sent to answered "
			    "or failed.\n# TYPE %s histogram\n",
			    n, n);
	for (size_t i = 0; i < STATS_LATENCY_BUCKETS - 1; i++)
		evbuffer_add_printf(b, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", n,
				    stats_latency_bounds_us[i] / 1e6, cum[i]);
	evbuffer_add_printf(b,
			    "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n"
			    "%s_count %" PRIu64 "\n",
			    n, cum[STATS_LATENCY_BUCKETS - 1], n,
			    (double)sum_us / 1e6, n, count);
}

/* The query and stage histograms of stats.h, one family each for the
 * whole query by path, the set add's round trip, and the stages. */
static void render_hists(struct evbuffer *b)
{
	static const struct {
		enum stats_hist h;
		const char *label;
	} query[] = {{STATS_H_CACHED, "path=\"cached\""},
		     {STATS_H_FORWARDED, "path=\"forwarded\""},
		     {STATS_H_DENIED, "path=\"denied\""},
		     {STATS_H_LOCAL, "path=\"local\""}},
	  stage[] = {{STATS_H_RECV_QUEUE, "stage=\"receive_queue\""},
		     {STATS_H_TO_UPSTREAM, "stage=\"to_upstream\""},
		     {STATS_H_UPSTREAM, "stage=\"upstream\""},
		     {STATS_H_TO_SET_ADD, "stage=\"to_set_add\""},
		     {STATS_H_SET_ADD, "stage=\"set_add\""},
		     {STATS_H_TO_REPLY, "stage=\"to_reply\""}};
	static const char *const q = "dnsfence_query_duration_seconds",
				 *const a = "dnsfence_set_add_duration_seconds",
				 *const s =
				     "dnsfence_query_stage_duration_seconds";

	evbuffer_add_printf(b,
			    "# HELP %s Client queries, from the kernel's "
			    "receive to the reply handed to the transport, by "
			    "the path the answer took.\n# TYPE %s histogram\n",
			    q, q);
	for (size_t i = 0; i < sizeof(query) / sizeof(query[0]); i++)
		render_hist(b, q, query[i].label, query[i].h);
	evbuffer_add_printf(b,
			    "# HELP %s Set adds, from sent to the privileged "
			    "process to the kernel's ack back.\n# TYPE %s "
			    "histogram\n",
			    a, a);
	render_hist(b, a, NULL, STATS_H_SET_ADD);
	evbuffer_add_printf(
	    b,
	    "# HELP %s The stages of a query: waiting in the "
	    "listener's socket, read to upstream question sent, "
	    "the upstream round trip, answer to set add sent, "
	    "the set add's round trip, ack to reply handed "
	    "back.\n# TYPE %s histogram\n",
	    s, s);
	for (size_t i = 0; i < sizeof(stage) / sizeof(stage[0]); i++)
		render_hist(b, s, stage[i].label, stage[i].h);
}

/* One labelled series (label NULL: none) of a histogram family. */
static void render_hist(struct evbuffer *b, const char *name, const char *label,
			enum stats_hist h)
{
	uint64_t cum[STATS_HIST_BUCKETS], count, sum_ns;
	const char *sep = label != NULL ? "," : "";

	if (label == NULL)
		label = "";
	stats_hist_read(h, cum, &count, &sum_ns);
	for (size_t i = 0; i < STATS_HIST_BUCKETS - 1; i++)
		evbuffer_add_printf(b, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n",
				    name, label, sep,
				    stats_hist_bounds_ns[i] / 1e9, cum[i]);
	evbuffer_add_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name,
			    label, sep, cum[STATS_HIST_BUCKETS - 1]);
	if (*label == '\0')
		evbuffer_add_printf(b, "%s_sum %.9f\n%s_count %" PRIu64 "\n",
				    name, (double)sum_ns / 1e9, name, count);
	else
		evbuffer_add_printf(
		    b, "%s_sum{%s} %.9f\n%s_count{%s} %" PRIu64 "\n", name,
		    label, (double)sum_ns / 1e9, name, label, count);
}

static void render_gauges(struct evbuffer *b, long long set4, long long set6)
{
	evbuffer_add_printf(
	    b,
	    "# HELP dnsfence_upstream_queries_in_flight Upstream queries "
	    "sent and not yet answered.\n"
	    "# TYPE dnsfence_upstream_queries_in_flight gauge\n"
	    "dnsfence_upstream_queries_in_flight %" PRIu64 "\n",
	    stats_upstream_inflight_now());
	evbuffer_add_printf(b, "# HELP dnsfence_set_entries Entries in each "
			       "kernel set (a family left out while its count "
			       "is unknown).\n"
			       "# TYPE dnsfence_set_entries gauge\n");
	if (set4 >= 0)
		evbuffer_add_printf(
		    b, "dnsfence_set_entries{family=\"ipv4\"} %lld\n", set4);
	if (set6 >= 0)
		evbuffer_add_printf(
		    b, "dnsfence_set_entries{family=\"ipv6\"} %lld\n", set6);
	render_reload(b);
	evbuffer_add_printf(
	    b,
	    "# HELP dnsfence_recent_addresses Addresses in the attribution "
	    "memory (bounded).\n"
	    "# TYPE dnsfence_recent_addresses gauge\n"
	    "dnsfence_recent_addresses %zu\n"
	    "# HELP dnsfence_build_info The running version.\n"
	    "# TYPE dnsfence_build_info gauge\n"
	    "dnsfence_build_info{version=\"%s\"} 1\n",
	    recent_count(recent_global()), DNSFENCE_VERSION);
}

/* Prometheus's own names for the same facts, so the same alert fits. */
static void render_reload(struct evbuffer *b)
{
	static const char ok[] = "dnsfence_config_last_reload_successful";
	static const char at[] =
	    "dnsfence_config_last_reload_success_timestamp_seconds";
	bool good;
	int64_t when;

	stats_config_state(&good, &when);
	evbuffer_add_printf(b,
			    "# HELP %s Whether the last config load (the "
			    "start's, then each reload's) succeeded.\n"
			    "# TYPE %s gauge\n%s %d\n",
			    ok, ok, ok, good ? 1 : 0);
	evbuffer_add_printf(b,
			    "# HELP %s Unix time of the last config load that "
			    "succeeded.\n# TYPE %s gauge\n",
			    at, at);
	if (when > 0)
		evbuffer_add_printf(b, "%s %" PRId64 "\n", at, when);
}

/* Counts only: the entries' names stay on the control socket. */
static void render_usage(struct evbuffer *b, const struct usage *u)
{
	size_t used, unused;

	if (u == NULL)
		return;
	usage_counts(u, &used, &unused);
	evbuffer_add_printf(b,
			    "# HELP dnsfence_allow_entries Allow entries (and "
			    "preset hosts) by whether any question used them "
			    "(state_dir/usage.json).\n"
			    "# TYPE dnsfence_allow_entries gauge\n"
			    "dnsfence_allow_entries{used=\"yes\"} %zu\n"
			    "dnsfence_allow_entries{used=\"no\"} %zu\n",
			    used, unused);
}

void metrics_set_usage(struct metrics *m, const struct usage *u)
{
	if (m != NULL)
		m->usage = u;
}

void metrics_set_attrib(struct metrics *m, const struct attrib *a)
{
	if (m != NULL)
		m->attrib = a;
}

struct iface_out {
	struct evbuffer *b;
	bool head;
};

/* One sample; the name as a label value (backslash, quote escaped). */
static void iface_sample(void *arg, const char *ifname, const char *reason,
			 uint64_t n)
{
	struct iface_out *o = arg;
	const char *fam = "dnsfence_blocked_flows_by_interface_total";

	if (!o->head) {
		evbuffer_add_printf(o->b,
				    "# HELP %s Blocked forwarded flows by the "
				    "interface they came in on (scope "
				    "forward).\n# TYPE %s counter\n",
				    fam, fam);
		o->head = true;
	}
	evbuffer_add_printf(o->b, "%s{interface=\"", fam);
	for (; *ifname != '\0'; ifname++) {
		if (*ifname == '\\' || *ifname == '"')
			evbuffer_add(o->b, "\\", 1);
		evbuffer_add(o->b, ifname, 1);
	}
	evbuffer_add_printf(o->b, "\",reason=\"%s\"} %" PRIu64 "\n", reason, n);
}

static void render_interfaces(struct evbuffer *b, const struct attrib *a)
{
	struct iface_out o = {b, false};

	attrib_each_interface(a, iface_sample, &o);
}

/* Both processes' log lines left out (the parent's as of its last count
 * of the sets, at most a second old). */
static void render_log_drops(struct evbuffer *b)
{
	const char *fam = "dnsfence_log_lines_dropped_total";
	uint64_t journal, suppressed;

	stats_log_drops(&journal, &suppressed);
	evbuffer_add_printf(b,
			    "# HELP %s Log lines left out: the journal's "
			    "socket was full, or a flood of one kind of line "
			    "passed its rate (then counted in a "
			    "\"suppressed\" line).\n# TYPE %s counter\n"
			    "%s{reason=\"journal_full\"} %" PRIu64 "\n"
			    "%s{reason=\"suppressed\"} %" PRIu64 "\n",
			    fam, fam, fam, journal, fam, suppressed);
}

void metrics_set_queue(struct metrics *m, int fd, uint16_t num)
{
	if (m == NULL)
		return;
	m->queue_fd = fd;
	m->queue = num;
}

/* The kernel's own account of the queue: what waits for a verdict now,
 * and what it dropped (queue full; not sendable to the reader). Absent
 * (HELP and TYPE only) when the queue is not bound. */
static void render_queue(struct evbuffer *b, const struct metrics_queue *q)
{
	static const char d[] = "dnsfence_name_check_queue_depth";
	static const char x[] = "dnsfence_name_check_queue_dropped_total";

	evbuffer_add_printf(b,
			    "# HELP %s Packets in the name check's queue "
			    "awaiting a verdict (the kernel's count).\n"
			    "# TYPE %s gauge\n",
			    d, d);
	if (q != NULL)
		evbuffer_add_printf(b, "%s %" PRIu32 "\n", d, q->depth);
	evbuffer_add_printf(b,
			    "# HELP %s Packets the kernel dropped from the "
			    "name check's queue: full, or not sendable to the "
			    "daemon (no bypass: each one a lost packet).\n"
			    "# TYPE %s counter\n",
			    x, x);
	if (q != NULL)
		evbuffer_add_printf(b,
				    "%s{reason=\"full\"} %" PRIu32
				    "\n%s{reason=\"unsent\"} %" PRIu32 "\n",
				    x, q->full_dropped, x, q->send_dropped);
}

int metrics_queue_parse(const char *text, uint16_t num,
			struct metrics_queue *out)
{
	const char *line = text;

	while (line != NULL && *line != '\0') {
		unsigned int f[9];
		int n = sscanf(line, "%u %u %u %u %u %u %u %u %u", &f[0], &f[1],
			       &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8]);

		if (n < 7)
			return -EINVAL;
		if (f[0] == num) {
			out->depth = f[2];
			out->full_dropped = f[5];
			out->send_dropped = f[6];
			return 0;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return -ENOENT;
}

int metrics_queue_read(int fd, uint16_t num, struct metrics_queue *out)
{
	char text[4096];
	ssize_t n;

	if (fd < 0)
		return -EBADF;
	n = pread(fd, text, sizeof(text) - 1, 0); /* seq_file: from the top */
	if (n < 0)
		return -errno;
	text[n] = '\0';
	return metrics_queue_parse(text, num, out);
}

int metrics_render(struct evbuffer *buf, long long set4, long long set6,
		   const struct metrics_queue *q)
{
	render_counters(buf);
	render_latency(buf);
	render_hists(buf);
	render_gauges(buf, set4, set6);
	render_queue(buf, q);
	return 0;
}

static void refresh_sets(struct metrics *m)
{
	uint64_t n, now = monotime_ms();

	if (m->sets_ms != 0 && now - m->sets_ms < METRICS_SETS_CACHE_MS)
		return;
	m->sets_ms = now;
	m->set4 = m->set6 = -1;
	if (m->cfg->mode == CONFIG_MODE_OFF)
		return;
	/* counted by the privileged parent (libipset needs CAP_NET_ADMIN,
	 * and blocks: never in the DNS process's loop) */
	if (stats_shared_set_entries(&m->set4, &m->set6))
		return;
	if (setsadm_count(m->cfg->set4, &n) == 0)
		m->set4 = (long long)n;
	if (setsadm_count(m->cfg->set6, &n) == 0)
		m->set6 = (long long)n;
}

static void on_request(struct evhttp_request *req, void *arg)
{
	answer(arg, req);
}

static void answer(struct metrics *m, struct evhttp_request *req)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct metrics_queue q;
	bool has_q;
	struct evbuffer *b;

	evhttp_add_header(h, "Connection", "close");
	if (!(evhttp_request_get_command(req) &
	      (EVHTTP_REQ_GET | EVHTTP_REQ_HEAD))) {
		evhttp_add_header(h, "Allow", "GET, HEAD");
		evhttp_send_error(req, HTTP_BADMETHOD, "GET or HEAD only");
		return;
	}
	if (strcmp(evhttp_request_get_uri(req), "/metrics") != 0) {
		evhttp_send_error(req, HTTP_NOTFOUND, "only /metrics");
		return;
	}
	b = evbuffer_new();
	if (b == NULL) {
		evhttp_send_error(req, HTTP_SERVUNAVAIL, NULL);
		return;
	}
	has_q = metrics_queue_read(m->queue_fd, m->queue, &q) == 0;
	refresh_sets(m);
	metrics_render(b, m->set4, m->set6, has_q ? &q : NULL);
	render_usage(b, m->usage);
	render_interfaces(b, m->attrib);
	render_log_drops(b);
	evhttp_add_header(h, "Content-Type",
			  "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

/* evhttp's bevcb: the bufferevent of each accepted connection, with one
 * reference of ours so that its end can be seen (see the header note). */
static struct bufferevent *on_new_conn(struct event_base *base, void *arg)
{
	struct metrics *m = arg;
	struct bufferevent *bev =
	    bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	size_t free_slots = 0;

	sweep(m);
	for (size_t i = 0; bev != NULL && i < METRICS_MAX_CONNS; i++) {
		if (m->conns[i].bev != NULL)
			continue;
		if (free_slots++ > 0)
			continue;
		bufferevent_incref(bev);
		m->conns[i].bev = bev;
		m->conns[i].born_ms = monotime_ms();
	}
	if (free_slots <= 1 && !m->paused) {
		evconnlistener_disable(
		    evhttp_bound_socket_get_listener(m->bound));
		m->paused = true;
	}
	return bev;
}

/* Release the slots of connections evhttp has freed, close those past
 * their lifetime, and resume accepting when a slot is free. */
static void sweep(struct metrics *m)
{
	uint64_t now = monotime_ms();
	bool any_free = false;

	for (size_t i = 0; i < METRICS_MAX_CONNS; i++) {
		struct conn *c = &m->conns[i];
		bufferevent_event_cb ecb = NULL;
		void *cbarg = NULL;

		if (c->bev == NULL) {
			any_free = true;
			continue;
		}
		bufferevent_getcb(c->bev, NULL, NULL, &ecb, &cbarg);
		if (ecb == NULL) {
			bufferevent_decref(c->bev);
			c->bev = NULL;
			any_free = true;
		} else if (now - c->born_ms >= METRICS_CONN_SECONDS * 1000ull) {
			ecb(c->bev, BEV_EVENT_EOF | BEV_EVENT_READING, cbarg);
		}
	}
	if (any_free && m->paused) {
		evconnlistener_enable(
		    evhttp_bound_socket_get_listener(m->bound));
		m->paused = false;
	}
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sweep(arg);
}

struct metrics *metrics_open(struct event_base *base, const struct config *cfg,
			     char *err, size_t errlen)
{
	struct metrics *m = calloc(1, sizeof(*m));
	const struct sockaddr *sa = (const struct sockaddr *)&cfg->metrics.sa;
	struct timeval tv = {1, 0};
	char host[NETADDR_STRLEN], ep[NETADDR_ENDPOINT_STRLEN];
	struct netaddr na;

	netaddr_format_endpoint(sa, ep, sizeof(ep));
	if (m == NULL || !netaddr_from_sockaddr(sa, &na))
		goto fail;
	netaddr_format(&na, host, sizeof(host));
	m->base = base;
	m->cfg = cfg;
	m->set4 = m->set6 = -1;
	m->queue_fd = -1;
	if ((m->http = evhttp_new(base)) == NULL)
		goto fail;
	/* Every method evhttp knows reaches answer(), which takes GET and
	 * HEAD only and says 405 to the rest (evhttp's own refusal would be
	 * 501, "not implemented"). */
	evhttp_set_allowed_methods(m->http, ALL_METHODS);
	evhttp_set_max_headers_size(m->http, METRICS_MAX_HEADERS);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_timeout(m->http, METRICS_CONN_SECONDS);
	evhttp_set_gencb(m->http, on_request, m);
	evhttp_set_bevcb(m->http, on_new_conn, m);
	m->bound =
	    evhttp_bind_socket_with_handle(m->http, host, netaddr_port(sa));
	if (m->bound == NULL) {
		snprintf(err, errlen, "metrics: cannot listen on %s", ep);
		goto out_fail;
	}
	m->sweep = event_new(base, -1, EV_PERSIST, on_sweep, m);
	if (m->sweep == NULL || event_add(m->sweep, &tv) != 0)
		goto fail;
	log_info(SYS, "Prometheus metrics on http://%s/metrics", ep);
	return m;
fail:
	snprintf(err, errlen, "metrics: %s: out of memory", ep);
out_fail:
	metrics_close(m);
	return NULL;
}

void metrics_close(struct metrics *m)
{
	if (m == NULL)
		return;
	if (m->sweep != NULL)
		event_free(m->sweep);
	if (m->http != NULL)
		evhttp_free(m->http);
	for (size_t i = 0; i < METRICS_MAX_CONNS; i++) {
		if (m->conns[i].bev != NULL)
			bufferevent_decref(m->conns[i].bev);
	}
	free(m);
}
