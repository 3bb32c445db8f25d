// SPDX-License-Identifier: GPL-2.0-or-later
/* attrib: blocked-flow attribution.
 *
 * A packet reaches us only through one of our NFLOG rules (prefix
 * "dnsfence-block" or "dnsfence-dns" in enforce mode, "dnsfence-audit" in
 * audit mode, "dnsfence-source" in both for the forward scope's source
 * validation; other prefixes in the same group belong to someone else and
 * are ignored). The reason is decided in this order: a forged or spoofed
 * source (that rule's prefix says it, whatever the packet), an answer to
 * the daemon's question to an upstream from a socket of this namespace
 * ("dnsfence-answer", rule 2: a squatter on a local upstream's port), DNS
 * around the resolver (the DNS rule, or port 53 in audit mode, where one prefix
 * serves both rules), a protocol that is never allowed, then what the
 * recent memory says of the destination: answered (whatever the age of
 * its set entry) but on a port not in `ports`; answered but expired;
 * answered, live, on an allowed port and still rejected (the entry was
 * removed behind our back: ipset del/flush); never answered (or answered
 * so long ago that the bounded memory forgot it), unless allow_cidrs
 * covers it, when the port is the reason.
 *
 * One packet is the daemon's own, not a workload's: an answer that
 * arrives after upstream_timeout finds c-ares' socket closed, and the
 * kernel answers the upstream with an ICMP port unreachable, RELATED to
 * the daemon's flow, from no socket, which rule 2 rejects and logs. That
 * is no bypass: it is counted as a late answer (late_answers), logged once
 * per upstream and window, and takes no workload's slot. Another is the
 * kernel's own MLDv2 report (ICMPv6 143 behind a hop-by-hop header, no
 * socket): setup makes the kernel announce groups with MLDv1, and a v2
 * report it had scheduled before that (an interface that came up just
 * before setup) is dropped by rule 4 as designed. It is logged at info,
 * once per window, and counted nowhere: no workload sent it, and a
 * workload cannot send ICMPv6 itself without CAP_NET_RAW.
 *
 * Every other packet is counted by reason. Lines are deduplicated per
 * (destination address, reason, sender: the uid, or a forwarded packet's
 * source address and interface) for ATTRIB_DEDUP_MS in a
 * direct-mapped table (a collision only costs an extra line), so one
 * sender's lines cannot hide another's, and at most ATTRIB_BUDGET_LINES
 * go out per ATTRIB_BUDGET_MS; what the budget withholds is summed up in
 * one line when the next window opens. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "observe/attrib.h"
#include "base/hash.h"
#include "observe/learn.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/stats.h"

#define SYS	     "blocked"
#define PREFIX_BLOCK "dnsfence-block"
#define PREFIX_DNS   "dnsfence-dns"
#define PREFIX_AUDIT "dnsfence-audit"
#define PREFIX_SRC   "dnsfence-source"
#define PREFIX_ANS   "dnsfence-answer"

#define KIND_LATE  ATTRIB__COUNT       /* a slot of a late answer */
#define KIND_MLD   (ATTRIB__COUNT + 1) /* of the kernel's MLDv2 report */
#define KIND_EMPTY (ATTRIB__COUNT + 2) /* an unused slot */
#define NO_UID	   UINT64_MAX

struct slot {
	struct netaddr dst;
	uint8_t kind; /* an attrib_reason, KIND_LATE, KIND_MLD or KIND_EMPTY */
	uint64_t uid; /* the sender's, NO_UID without a socket */
	uint64_t logged_ms;
};

/* Blocked flows counted per interface they came in on (forward scope). */
struct ifcount {
	char name[IF_NAMESIZE];
	uint64_t n[ATTRIB__COUNT];
};

struct attrib {
	const struct config *cfg;
	/* the first ATTRIB_IFACES interfaces seen, then "other" */
	struct ifcount ifaces[ATTRIB_IFACES + 1];
	size_t n_ifaces;
	struct slot slots[ATTRIB_DEDUP_SLOTS];
	uint64_t window_ms; /* start of the current budget window */
	unsigned lines;	    /* lines logged in it */
	uint64_t withheld;  /* flows over budget since the last summary */
	uint32_t quiet_uid; /* the self-test's prober: its flows are not */
	uint64_t quiet_ms;  /* attributed until this monotonic ms */
};

static bool in_allow_cidrs(const struct config *cfg, const struct netaddr *a);
static void clock_text(int64_t wall, char *buf, size_t cap);
static const char *proto_name(uint8_t proto, char *buf, size_t cap);
static enum attrib_reason explain_known(const struct config *cfg,
					const struct nflog_pkt *pkt,
					const struct recent_info *k,
					uint64_t now_ms, int64_t wall_now,
					char *text, size_t cap);
static bool dedup(struct attrib *a, const struct netaddr *dst, uint8_t kind,
		  uint64_t uid, uint64_t now);
static bool late_answer(const struct nflog_pkt *pkt);
static bool budget(struct attrib *a, uint64_t now);
static void endpoint(const struct netaddr *addr, bool with_port, uint16_t port,
		     char *buf, size_t cap);
static void sender(const struct nflog_pkt *pkt, char *buf, size_t cap);
static void ifname(uint32_t index, char *buf);
static void count_interface(struct attrib *a, uint32_t index,
			    enum attrib_reason r);
static uint64_t sender_key(const struct nflog_pkt *pkt);
static void log_flow(const char *event, bool audit, const struct nflog_pkt *pkt,
		     const char *reason, const char *name, const char *text);
static bool is_upstream(const struct config *cfg, const struct netaddr *a);
static void why_known(FILE *f, const char *addr, const struct recent_info *k,
		      uint64_t now_ms, int64_t wall_now);
static void why_remedy(FILE *f, const struct config *cfg,
		       const struct netaddr *dst, const struct recent_info *k,
		       enum attrib_reason r, uint16_t port, uint64_t now_ms);

static const enum stat_id reason_stat[ATTRIB__COUNT] = {
    [ATTRIB_NEVER] = STAT_BLOCKED_NEVER,
    [ATTRIB_EXPIRED] = STAT_BLOCKED_EXPIRED,
    [ATTRIB_PORT] = STAT_BLOCKED_PORT,
    [ATTRIB_DNS] = STAT_BLOCKED_DNS,
    [ATTRIB_NOTSET] = STAT_BLOCKED_NOTSET,
    [ATTRIB_PROTO] = STAT_BLOCKED_PROTO,
    [ATTRIB_SOURCE] = STAT_BLOCKED_SOURCE,
    [ATTRIB_NAME] = STAT_FLOW_CHECKED, /* counted by the name check */
    [ATTRIB_ANSWERER] = STAT_BLOCKED_ANSWERER,
    [ATTRIB_CLIENT] = STAT_BLOCKED_CLIENT,
};

static bool in_allow_cidrs(const struct config *cfg, const struct netaddr *a)
{
	for (size_t i = 0; i < cfg->n_allow_cidrs; i++) {
		if (netaddr_cidr_contains(&cfg->allow_cidrs[i], a))
			return true;
	}
	return false;
}

static void clock_text(int64_t wall, char *buf, size_t cap)
{
	time_t t = (time_t)wall;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, cap, "%H:%M:%S", &tm) == 0)
		snprintf(buf, cap, "?");
}

static const char *proto_name(uint8_t proto, char *buf, size_t cap)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "ipv6-icmp";
	default:
		snprintf(buf, cap, "protocol %u", (unsigned)proto);
		return buf;
	}
}

enum attrib_reason attrib_explain(const struct config *cfg,
				  const struct nflog_pkt *pkt,
				  const struct recent_info *known,
				  uint64_t now_ms, int64_t wall_now, char *text,
				  size_t cap)
{
	char dst[NETADDR_STRLEN], pn[24];
	const char *proto = proto_name(pkt->proto, pn, sizeof(pn));
	bool dns = strcmp(pkt->prefix, PREFIX_DNS) == 0 ||
		   (strcmp(pkt->prefix, PREFIX_AUDIT) == 0 && pkt->has_ports &&
		    pkt->dport == 53);

	netaddr_format(&pkt->dst, dst, sizeof(dst));
	if (strcmp(pkt->prefix, PREFIX_SRC) == 0) {
		netaddr_format(&pkt->src, dst, sizeof(dst));
		snprintf(text, cap,
			 "source %s is not of the fenced interface's networks "
			 "(forged or spoofed)",
			 dst);
		return ATTRIB_SOURCE;
	}
	if (strcmp(pkt->prefix, PREFIX_ANS) == 0) {
		netaddr_format(&pkt->src, dst, sizeof(dst));
		snprintf(text, cap,
			 "an answer to dnsfence's question to the upstream %s "
			 "from a socket of this namespace that is not "
			 "local_upstream_user's: a process holds the "
			 "upstream's port (the resolver is down, or runs as "
			 "another user)",
			 dst);
		return ATTRIB_ANSWERER;
	}
	if (dns) {
		snprintf(text, cap, "DNS to %s bypassing dnsfence", dst);
		return ATTRIB_DNS;
	}
	if (!pkt->has_ports) {
		snprintf(text, cap, "%s is never allowed (only `ports`)",
			 proto);
		return ATTRIB_PROTO;
	}
	if (known != NULL)
		return explain_known(cfg, pkt, known, now_ms, wall_now, text,
				     cap);
	if (in_allow_cidrs(cfg, &pkt->dst)) {
		snprintf(text, cap,
			 "port %s/%u is not in `ports` (address in "
			 "allow_cidrs)",
			 proto, (unsigned)pkt->dport);
		return ATTRIB_PORT;
	}
	snprintf(text, cap, "address was never answered by dnsfence");
	return ATTRIB_NEVER;
}

static enum attrib_reason explain_known(const struct config *cfg,
					const struct nflog_pkt *pkt,
					const struct recent_info *k,
					uint64_t now_ms, int64_t wall_now,
					char *text, size_t cap)
{
	char at[16], until[16];
	const char *proto = pkt->proto == IPPROTO_TCP ? "tcp" : "udp";
	int64_t ago = (int64_t)((now_ms - k->answered_ms) / 1000);
	int64_t left = ((int64_t)k->expires_ms - (int64_t)now_ms) / 1000;

	clock_text(wall_now - ago, at, sizeof(at));
	clock_text(wall_now + left, until, sizeof(until));
	/* The port first, whatever the entry's age: asking again would
	 * not let a flow on a port not in `ports` through. */
	if (!config_port_allowed(cfg, pkt->proto, pkt->dport)) {
		snprintf(text, cap,
			 "port %s/%u is not in `ports` (address answered for "
			 "%s at %s%s%s)",
			 proto, (unsigned)pkt->dport, k->name, at,
			 k->expires_ms <= now_ms ? ", entry expired at " : "",
			 k->expires_ms <= now_ms ? until : "");
		return ATTRIB_PORT;
	}
	if (k->expires_ms <= now_ms) {
		snprintf(text, cap,
			 "answered for %s at %s, entry expired at %s", k->name,
			 at, until);
		return ATTRIB_EXPIRED;
	}
	/* Live, on an allowed port: with client sets, the address was
	 * answered, but not to this source. */
	if (config_client_sets(cfg)) {
		char src[NETADDR_STRLEN];

		netaddr_format(&pkt->src, src, sizeof(src));
		snprintf(text, cap,
			 "answered for %s at %s to another client, not to %s: "
			 "an answer opens its addresses only for the client "
			 "that asked (\"bind\": \"client\")",
			 k->name, at, src);
		return ATTRIB_CLIENT;
	}
	snprintf(text, cap,
		 "answered for %s at %s, entry due until %s, but not in the "
		 "set (removed behind dnsfence's back?)",
		 k->name, at, until);
	return ATTRIB_NOTSET;
}

struct attrib *attrib_new(const struct config *cfg)
{
	struct attrib *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->cfg = cfg;
	for (size_t i = 0; i < ATTRIB_DEDUP_SLOTS; i++)
		a->slots[i].kind = KIND_EMPTY;
	return a;
}

/* One more flow blocked for r that came in on the interface index (a
 * forwarded packet: no socket). */
static void count_interface(struct attrib *a, uint32_t index,
			    enum attrib_reason r)
{
	char name[IF_NAMESIZE];
	size_t i;

	ifname(index, name);
	for (i = 0; i < a->n_ifaces; i++) {
		if (strcmp(a->ifaces[i].name, name) == 0)
			break;
	}
	if (i == a->n_ifaces && i < ATTRIB_IFACES) {
		snprintf(a->ifaces[i].name, IF_NAMESIZE, "%s", name);
		a->n_ifaces++;
	} else if (i == a->n_ifaces) {
		i = ATTRIB_IFACES; /* "other" */
	}
	a->ifaces[i].n[r]++;
}

void attrib_each_interface(const struct attrib *a, attrib_iface_fn fn,
			   void *arg)
{
	for (size_t i = 0; a != NULL && i <= ATTRIB_IFACES; i++) {
		const char *name = i == ATTRIB_IFACES ? "other"
				   : i < a->n_ifaces  ? a->ifaces[i].name
						      : NULL;

		for (int r = 0; name != NULL && r < ATTRIB__COUNT; r++) {
			if (a->ifaces[i].n[r] > 0)
				fn(arg, name,
				   attrib_reason_name((enum attrib_reason)r),
				   a->ifaces[i].n[r]);
		}
	}
}

void attrib_quiet(struct attrib *a, uid_t uid, uint64_t until_ms)
{
	if (a == NULL)
		return;
	a->quiet_uid = (uint32_t)uid;
	a->quiet_ms = until_ms;
}

void attrib_set_config(struct attrib *a, const struct config *cfg)
{
	a->cfg = cfg;
}

void attrib_free(struct attrib *a)
{
	free(a);
}

/* true when (dst, kind, uid) was logged less than ATTRIB_DEDUP_MS ago. */
static bool dedup(struct attrib *a, const struct netaddr *dst, uint8_t kind,
		  uint64_t uid, uint64_t now)
{
	size_t n = dst->family == AF_INET ? 4 : 16;
	uint32_t h = hash_fnv1a(dst->bytes, n,
				(uint32_t)kind ^ (uint32_t)(uid * 0x9e3779b1u));
	struct slot *s = &a->slots[h % ATTRIB_DEDUP_SLOTS];

	if (s->kind == kind && s->uid == uid && netaddr_equal(&s->dst, dst) &&
	    now - s->logged_ms < ATTRIB_DEDUP_MS)
		return true;
	s->dst = *dst;
	s->kind = kind;
	s->uid = uid;
	s->logged_ms = now;
	return false;
}

/* The kernel's port unreachable for an upstream's late answer (rule 2's
 * NFLOG copy, no socket): IPv4 type 3 code 3, IPv6 type 1 code 4. A
 * workload cannot send ICMP errors itself without CAP_NET_RAW. */
static bool late_answer(const struct nflog_pkt *pkt)
{
	if (strcmp(pkt->prefix, PREFIX_DNS) != 0 || pkt->has_uid ||
	    !pkt->has_icmp)
		return false;
	if (pkt->dst.family == AF_INET)
		return pkt->icmp_type == 3 && pkt->icmp_code == 3;
	return pkt->icmp_type == 1 && pkt->icmp_code == 4;
}

/* The kernel's MLDv2 report (see the top of this file). */
static bool kernel_mld_v2(const struct nflog_pkt *pkt)
{
	return pkt->dst.family == AF_INET6 && !pkt->has_uid &&
	       !pkt->has_indev && pkt->proto == IPPROTO_ICMPV6 &&
	       pkt->has_icmp && pkt->icmp_type == 143;
}

/* May one more line go out in this window? Opens a new window (and says
 * what the last one withheld) when the old one is over. */
static bool budget(struct attrib *a, uint64_t now)
{
	if (now - a->window_ms >= ATTRIB_BUDGET_MS) {
		if (a->withheld > 0)
			log_warn(SYS,
				 "%llu more blocked flows not logged (at most "
				 "%d lines per %d s; see the "
				 "dnsfence_blocked_flows_total metric)",
				 (unsigned long long)a->withheld,
				 ATTRIB_BUDGET_LINES, ATTRIB_BUDGET_MS / 1000);
		a->window_ms = now;
		a->lines = 0;
		a->withheld = 0;
	}
	if (a->lines >= ATTRIB_BUDGET_LINES) {
		a->withheld++;
		return false;
	}
	a->lines++;
	return true;
}

/* "198.18.1.10:80", "[2001:db8::1]:443", or the bare address. */
static void endpoint(const struct netaddr *addr, bool with_port, uint16_t port,
		     char *buf, size_t cap)
{
	char a[NETADDR_STRLEN];

	netaddr_format(addr, a, sizeof(a));
	if (!with_port)
		snprintf(buf, cap, "%s", a);
	else if (addr->family == AF_INET6)
		snprintf(buf, cap, "[%s]:%u", a, (unsigned)port);
	else
		snprintf(buf, cap, "%s:%u", a, (unsigned)port);
}

/* Who sent it: "uid 1000"; a forwarded packet (no socket) by where it
 * came in, "interface br-fenced port veth1a2b" (the bridge port when
 * br_netfilter saw the frame); else "no socket". */
static void sender(const struct nflog_pkt *pkt, char *buf, size_t cap)
{
	char in[IF_NAMESIZE], port[IF_NAMESIZE];

	if (pkt->has_uid) {
		snprintf(buf, cap, "uid %u", (unsigned)pkt->uid);
		return;
	}
	if (!pkt->has_indev) {
		snprintf(buf, cap, "no socket");
		return;
	}
	ifname(pkt->indev, in);
	if (!pkt->has_physindev) {
		snprintf(buf, cap, "interface %s", in);
		return;
	}
	ifname(pkt->physindev, port);
	snprintf(buf, cap, "interface %s port %s", in, port);
}

/* The interface's name, "#INDEX" when it is gone. */
static void ifname(uint32_t index, char *buf)
{
	if (if_indextoname(index, buf) == NULL)
		snprintf(buf, IF_NAMESIZE, "#%u", (unsigned)index);
}

/* The dedup key of the sender: its uid, or for a forwarded packet its
 * source address (one container's lines cannot hide another's). */
static uint64_t sender_key(const struct nflog_pkt *pkt)
{
	if (pkt->has_uid)
		return pkt->uid;
	if (!pkt->has_indev)
		return NO_UID;
	return (1ull << 32) |
	       hash_fnv1a(pkt->src.bytes, pkt->src.family == AF_INET ? 4 : 16,
			  pkt->indev);
}

/* One blocked flow's line, with its fields (docs/metrics.md): event,
 * action, proto, src, dst, dport, reason, and where known uid, name (the
 * name dst was answered for, or the name check's name read) and the
 * interface (and bridge port) a forwarded packet came in on. */
static void log_flow(const char *event, bool audit, const struct nflog_pkt *pkt,
		     const char *reason, const char *name, const char *text)
{
	char src[NETADDR_ENDPOINT_STRLEN], dst[NETADDR_ENDPOINT_STRLEN];
	char sa[NETADDR_STRLEN], da[NETADDR_STRLEN], in[IF_NAMESIZE],
	    port[IF_NAMESIZE];
	char pn[24], uid[2 * IF_NAMESIZE + 24];
	const char *proto = proto_name(pkt->proto, pn, sizeof(pn));
	struct log_field f[LOG_FIELDS_MAX];
	size_t n = 0;

	endpoint(&pkt->src, pkt->has_ports, pkt->sport, src, sizeof(src));
	endpoint(&pkt->dst, pkt->has_ports, pkt->dport, dst, sizeof(dst));
	sender(pkt, uid, sizeof(uid));
	netaddr_format(&pkt->src, sa, sizeof(sa));
	netaddr_format(&pkt->dst, da, sizeof(da));
	f[n++] = log_str("event", event);
	f[n++] = log_str("action", audit ? "would_block" : "blocked");
	f[n++] = log_str("proto", proto);
	f[n++] = log_str("src", sa);
	f[n++] = log_str("dst", da);
	if (pkt->has_ports)
		f[n++] = log_num("dport", pkt->dport);
	f[n++] = log_str("reason", reason);
	if (pkt->has_uid)
		f[n++] = log_num("uid", pkt->uid);
	if (name != NULL && *name != '\0')
		f[n++] = log_str("name", name);
	if (!pkt->has_uid && pkt->has_indev) {
		ifname(pkt->indev, in);
		f[n++] = log_str("interface", in);
		if (pkt->has_physindev) {
			ifname(pkt->physindev, port);
			f[n++] = log_str("bridge_port", port);
		}
	}
	log_fields(f, n);
	/* warning in both modes: log.level "warning" shows every block. The
	 * caller says whether the flow went through (an audit rule's packet, or
	 * the name check in audit). */
	log_warn(SYS, "%s %s %s -> %s from %s: %s",
		 audit ? "would block" : "blocked", proto, src, dst, uid, text);
}

void attrib_packet(void *arg, const struct nflog_pkt *pkt)
{
	struct attrib *a = arg;
	struct recent_info info;
	char text[ATTRIB_TEXT_MAX];
	uint64_t now = monotime_ms();
	bool known;
	enum attrib_reason r;

	if (!pkt->has_addrs || strncmp(pkt->prefix, "dnsfence-", 9) != 0)
		return;
	if (pkt->has_uid && pkt->uid == a->quiet_uid && now < a->quiet_ms)
		return;
	if (late_answer(pkt)) {
		stats_inc(STAT_LATE_ANSWER);
		if (!dedup(a, &pkt->dst, KIND_LATE, NO_UID, now)) {
			netaddr_format(&pkt->dst, text, sizeof(text));
			log_info(SYS,
				 "late answer from %s after upstream_timeout: "
				 "the kernel's port unreachable (the daemon's "
				 "socket was closed), not a bypass",
				 text);
		}
		return;
	}
	if (kernel_mld_v2(pkt)) {
		if (!dedup(a, &pkt->dst, KIND_MLD, NO_UID, now)) {
			netaddr_format(&pkt->dst, text, sizeof(text));
			log_info(SYS,
				 "the kernel's MLDv2 report to %s dropped: "
				 "setup makes it announce groups with MLDv1 "
				 "(force_mld_version 1), and this one was "
				 "scheduled before; not a workload's flow "
				 "(docs/firewall.md)",
				 text);
		}
		return;
	}
	known = recent_get(recent_global(), &pkt->dst, &info);
	r = attrib_explain(a->cfg, pkt, known ? &info : NULL, now,
			   (int64_t)time(NULL), text, sizeof(text));
	stats_inc(reason_stat[r]);
	if (!pkt->has_uid && pkt->has_indev)
		count_interface(a, pkt->indev, r);
	learn_flow(pkt, attrib_reason_name(r), known ? info.name : NULL);
	if (!dedup(a, &pkt->dst, (uint8_t)r, sender_key(pkt), now) &&
	    budget(a, now))
		log_flow("flow_blocked", strcmp(pkt->prefix, PREFIX_AUDIT) == 0,
			 pkt, attrib_reason_name(r), known ? info.name : NULL,
			 text);
}

void attrib_flow(struct attrib *a, const struct nflog_pkt *pkt, bool audit,
		 const char *reason, const char *name, const char *text)
{
	uint64_t now = monotime_ms();

	if (a == NULL || budget(a, now))
		log_flow("namecheck_refused", audit, pkt, reason, name, text);
}

static bool is_upstream(const struct config *cfg, const struct netaddr *a)
{
	struct netaddr u;

	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		if (netaddr_from_sockaddr(
			(const struct sockaddr *)&cfg->upstreams[i].sa, &u) &&
		    netaddr_equal(&u, a))
			return true;
	}
	return false;
}

/* `dnsfence why ADDR[:PORT]` (the control socket): what the recent
 * memory knows of ADDR, the reason a TCP flow to PORT is refused (the
 * same attrib_explain the NFLOG path uses), and the change to the
 * config that would let it through. */
int attrib_why(const struct config *cfg, const struct recent *rc,
	       const char *arg, FILE *f)
{
	struct nflog_pkt pkt = {
	    .proto = IPPROTO_TCP, .has_ports = true, .has_addrs = true};
	struct sockaddr_storage ss;
	struct recent_info info;
	char addr[NETADDR_STRLEN], text[ATTRIB_TEXT_MAX];
	uint64_t now = monotime_ms();
	int64_t wall = (int64_t)time(NULL);
	const char *why = NULL;
	socklen_t len;
	bool known;
	enum attrib_reason r;

	if (netaddr_parse_endpoint(arg, false, 0, &ss, &len, &why) != 0 ||
	    !netaddr_from_sockaddr((const struct sockaddr *)&ss, &pkt.dst))
		return -EINVAL;
	pkt.dport = netaddr_port((const struct sockaddr *)&ss);
	netaddr_format(&pkt.dst, addr, sizeof(addr));
	if (is_upstream(cfg, &pkt.dst)) {
		fprintf(f,
			"%s: an upstream: only dnsfence's own sockets (socket "
			"mark %#x) reach it, on any port\n"
			"would allow: nothing; a workload asks dnsfence\n",
			addr, (unsigned)cfg->mark);
		return 0;
	}
	known = rc != NULL && recent_get(rc, &pkt.dst, &info);
	if (known)
		why_known(f, addr, &info, now, wall);
	else
		fprintf(f,
			"%s: never answered by dnsfence (or longer ago than "
			"it remembers)\n",
			addr);
	if (pkt.dport == 0) {
		why_remedy(f, cfg, &pkt.dst, known ? &info : NULL,
			   ATTRIB__COUNT, 0, now);
		return 0;
	}
	snprintf(pkt.prefix, sizeof(pkt.prefix), "%s",
		 pkt.dport == 53 ? PREFIX_DNS : PREFIX_BLOCK);
	r = attrib_explain(cfg, &pkt, known ? &info : NULL, now, wall, text,
			   sizeof(text));
	if (r == ATTRIB_NOTSET)
		fprintf(f, "tcp/%u: allowed while the entry lives\n",
			(unsigned)pkt.dport);
	else
		fprintf(f, "tcp/%u: blocked (%s): %s\n", (unsigned)pkt.dport,
			attrib_reason_name(r), text);
	why_remedy(f, cfg, &pkt.dst, known ? &info : NULL, r, pkt.dport, now);
	return 0;
}

static void why_known(FILE *f, const char *addr, const struct recent_info *k,
		      uint64_t now_ms, int64_t wall_now)
{
	char at[16], until[16];
	int64_t ago = (int64_t)((now_ms - k->answered_ms) / 1000);
	int64_t left = ((int64_t)k->expires_ms - (int64_t)now_ms) / 1000;

	clock_text(wall_now - ago, at, sizeof(at));
	clock_text(wall_now + left, until, sizeof(until));
	fprintf(f, "%s: answered for %s at %s; its set entry %s %s\n", addr,
		k->name, at,
		k->expires_ms > now_ms ? "lasts until" : "expired at", until);
}

static void why_remedy(FILE *f, const struct config *cfg,
		       const struct netaddr *dst, const struct recent_info *k,
		       enum attrib_reason r, uint16_t port, uint64_t now_ms)
{
	char addr[NETADDR_STRLEN];

	netaddr_format(dst, addr, sizeof(addr));
	if (r == ATTRIB_DNS)
		fprintf(f, "would allow: nothing; DNS goes through dnsfence "
			   "(its listen addresses)\n");
	else if (r == ATTRIB_PORT && k != NULL && k->expires_ms <= now_ms)
		fprintf(f,
			"would allow: add \"tcp/%u\" to ports, then ask "
			"dnsfence for %s again\n",
			(unsigned)port, k->name);
	else if (r == ATTRIB_PORT)
		fprintf(f, "would allow: add \"tcp/%u\" to ports\n",
			(unsigned)port);
	else if (r == ATTRIB_NOTSET)
		fprintf(f, "would allow: nothing to change (if it is refused, "
			   "the set entry was removed: ask dnsfence again)\n");
	else if (r == ATTRIB_CLIENT)
		fprintf(f,
			"would allow: the client asks dnsfence for %s itself "
			"(its own answer opens the address for it)\n",
			k->name);
	else if (k != NULL && k->expires_ms <= now_ms)
		fprintf(f, "would allow: ask dnsfence for %s again\n", k->name);
	else if (k != NULL || in_allow_cidrs(cfg, dst))
		fprintf(f, "would allow: nothing to change on `ports`\n");
	else
		fprintf(f,
			"would allow: its name in allow, asked through "
			"dnsfence; or \"%s/%u\" in allow_cidrs\n",
			addr, dst->family == AF_INET ? 32u : 128u);
}
