// SPDX-License-Identifier: GPL-2.0-or-later
/* fwrules: the fence as a list of rules, per family, in the order the
 * kernel walks them (docs/firewall.md gives the reason for each).
 *
 * Each rule is written exactly as `iptables-save -t filter` prints it
 * (match order, "-m udp" after "-p udp", "/32" on -d but not on
 * --ctorigdst, the default --reject-with spelled out, the comment
 * quoted), so that the same text is the iptables-restore input, the
 * expected lines of `check`, and what the unit tests read. The forms were
 * found by applying and saving with iptables 1.8.9 (nft and legacy print
 * the same).
 *
 * The order is the design:
 *   0. IPv6 only: any packet carrying a routing header is rejected: its
 *      destination is only the next segment, so the set accept below
 *      would judge the wrong address (invariant 13);
 *   1. our own listeners, for anyone;
 *   2. anything whose conntrack ORIGINAL destination is an upstream
 *      address: accepted only with the daemon's socket mark (and the
 *      replies to us: from the network, or from local_upstream_user's
 *      sockets), else rejected, on every packet, before rule 3; and
 *      anything of an entry the upstream's endpoint began, only with the
 *      mark (invariant 5);
 *   2a. name check (name_check, flowmark.h): a flow the daemon decided
 *      carries its verdict in the connmark; an undecided established
 *      flow to a set member on a TLS or HTTP port goes to the queue, with
 *      no bypass (no reader: dropped);
 *   2b. DNS as the reply direction of an entry begun from port 53 (a
 *      late answer of any resolver), rejected before rule 3;
 *   3. RELATED,ESTABLISHED (with inbound "deny", only in the original
 *      direction, connections this namespace opened, and on loopback);
 *   4. IPv6 only: what neighbour discovery needs, no more (invariant 6);
 *   5. every other DNS (original port 53) rejected, before rule 6;
 *   6. loopback;
 *   7. set members and allow_cidrs on the configured ports;
 *   8. reject (audit: log and accept), the last rule carrying the policy
 *      fingerprint (provenance.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fence/fwrules.h"
#include "fence/mldset.h"
#include "base/netaddr.h"
#include "config/fingerprint.h"
#include "flow/flowmark.h"
#include "sets/sets.h"

#define MULTIPORT_MAX 15 /* xt_multiport slots; a range takes two */
#define AUDIT_PREFIX  "dnsfence-audit"
/* Docker's embedded resolver, in every container on a user network, and
 * the uid its socket belongs to: dockerd's, root (a rootless dockerd is
 * root of the user namespace that owns the container's network). */
#define DOCKER_RESOLVER "127.0.0.11"
#define DOCKERD_UID	0u
/* Enforce mode: what the rejects drop is also copied to NFLOG for the
 * daemon's attribution (nflog.c), at most this often per rule, so that
 * a flood costs the daemon a bounded amount of work. */
#define BLOCK_NFLOG                                                            \
	"-m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix "
/* A socket of some process, whoever it runs as (render_answerer). */
#define ANY_UID "-m owner --uid-owner 0-4294967294"
#define C	FW_CHAIN_RULE
#define ICMP6	"-p ipv6-icmp -m icmp6 --icmpv6-type "

static const char *reject_with(int family);
static int render_listen(const struct config *cfg, int family,
			 struct fw_rules *r);
static int render_upstream(const struct config *cfg, const struct netaddr *a,
			   struct fw_rules *r);
static int render_answerer(const struct config *cfg, const struct netaddr *a,
			   const char *s, struct fw_rules *r);
static int render_upstreams(const struct config *cfg, int family,
			    struct fw_rules *r);
static int render_upstream_origin(const struct config *cfg,
				  const struct netaddr *a, unsigned port,
				  struct fw_rules *r);
static int render_icmp6(const struct config *cfg, struct fw_rules *r);
static int render_dns(const struct config *cfg, int family, struct fw_rules *r);
static int render_dns_replies(const struct config *cfg, int family,
			      struct fw_rules *r);
static int port_list(const struct config_port *ports, size_t n, uint8_t proto,
		     size_t *i, char *list, size_t cap);
static int render_name_check(const struct config *cfg, int family,
			     const char *set, struct fw_rules *r);
static int copy_verdict(uint32_t m, struct fw_rules *r);
static int render_queue(int family, const char *set, const char *list,
			struct fw_rules *r);
static int render_quic(const struct config *cfg, int family, const char *set,
		       struct fw_rules *r);
static int render_ports(const struct config *cfg, int family, const char *set,
			struct fw_rules *r);
static int render_last(const struct config *cfg, int family,
		       struct fw_rules *r);
static int log_then_accept(struct fw_rules *r, const char *match);
static int log_then_drop(struct fw_rules *r, const char *match,
			 const char *prefix);
static int log_then_reject(struct fw_rules *r, const char *match,
			   const char *prefix, const char *with);
static int render_cidrs(const struct config *cfg, int family, const char *pn,
			const char *list, struct fw_rules *r);
static bool policy_of(const char *line, char *hex, size_t len);
static int render_loopback(const struct config *cfg, struct fw_rules *r);
static int render_established(const struct config *cfg, struct fw_rules *r);

void fw_rules_free(struct fw_rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int fw_rules_push(struct fw_rules *r, const char *line)
{
	char *dup;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 32;
		char **v = reallocarray(r->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	dup = strdup(line);
	if (!dup)
		return -ENOMEM;
	r->v[r->n++] = dup;
	return 0;
}

int fw_rules_add(struct fw_rules *r, const char *fmt, ...)
{
	char line[FW_RULE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -E2BIG;
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i], line) == 0)
			return 0;
	}
	return fw_rules_push(r, line);
}

static const char *reject_with(int family)
{
	return family == AF_INET ? "icmp-admin-prohibited"
				 : "icmp6-adm-prohibited";
}

/* Our own listeners, for anyone (a wildcard listener: any local address).
 * -d is the destination after the nat table, so this reaches our socket. */
static int render_listen(const struct config *cfg, int family,
			 struct fw_rules *r)
{
	static const char *const protos[] = {"udp", "tcp"};
	static const uint8_t zero[16];
	const char *host = family == AF_INET ? "/32" : "/128";
	char a[NETADDR_STRLEN];
	struct netaddr na;
	int ret = 0;

	for (size_t i = 0; i < cfg->n_listen; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&cfg->listen[i].sa;
		unsigned port = netaddr_port(sa);

		if (sa->sa_family != family || !netaddr_from_sockaddr(sa, &na))
			continue;
		netaddr_format(&na, a, sizeof(a));
		for (size_t p = 0; p < 2; p++) {
			if (memcmp(na.bytes, zero, family == AF_INET ? 4 : 16))
				ret = fw_rules_add(
				    r,
				    C "-d %s%s -p %s -m %s --dport "
				      "%u -j ACCEPT",
				    a, host, protos[p], protos[p], port);
			else
				ret = fw_rules_add(
				    r,
				    C "-p %s -m addrtype --dst-type "
				      "LOCAL -m %s --dport %u -j "
				      "ACCEPT",
				    protos[p], protos[p], port);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Who may answer the daemon's questions to this upstream from a socket of
 * this namespace. An answer from the network comes in through INPUT and
 * never meets this chain; one from a socket here (a resolver on loopback
 * or on an address of the namespace, whose port any process can bind
 * while it is free) must be local_upstream_user's. Without that key no
 * process here may answer: config.c refuses a loopback upstream without
 * it, setup and reload one on an address of the namespace
 * (subjects_check_own_addresses), and this rule holds when the address
 * comes later. Docker's 127.0.0.11:53, DNATed to a port dockerd's socket
 * holds, is the one loopback upstream config.c admits without the key:
 * only dockerd's sockets (root's) answer there, or while dockerd is away
 * (a restart with live-restore keeps the container and the DNAT) a
 * process that binds that port answers for it. With subjects only their
 * packets enter this chain: no key is needed (a resolver of the
 * namespace answers unchecked), and every upstream, loopback too, gets
 * the rule that no subject answers. "A process's socket" is an owner uid
 * in the whole range: the kernel's own sockets, which send its resets
 * and ICMP errors (a local resolver's closed port refuses at once, not
 * after a timeout), have no file and match no uid, though they match
 * --socket-exists. The rate-limited copy tells the daemon who answered
 * (attrib.c). */
static int render_answerer(const struct config *cfg, const struct netaddr *a,
			   const char *s, struct fw_rules *r)
{
	char match[NETADDR_STRLEN + 128];
	int n =
	    snprintf(match, sizeof(match),
		     "-m conntrack --ctorigdst %s --ctdir REPLY " ANY_UID, s);

	if (cfg->local_upstream_uid_set)
		snprintf(match + n, sizeof(match) - (size_t)n,
			 " -m owner ! --uid-owner %u",
			 (unsigned)cfg->local_upstream_uid);
	else if (netaddr_is_loopback(a) && !config_has_subjects(cfg))
		snprintf(match + n, sizeof(match) - (size_t)n,
			 " -m owner ! --uid-owner %u", DOCKERD_UID);
	strcat(match, " ");
	return log_then_drop(r, match, "dnsfence-answer");
}

/* Everything whose original destination is this upstream, on any port
 * and in any conntrack state: the daemon's mark, or (loopback upstream)
 * the local resolver's replies to the daemon, or nothing. A reply-
 * direction packet of an entry goes to the original source, and only a
 * marked packet could create an entry towards the upstream. */
static int render_upstream(const struct config *cfg, const struct netaddr *a,
			   struct fw_rules *r)
{
	char s[NETADDR_STRLEN];
	int ret;

	netaddr_format(a, s, sizeof(s));
	ret = fw_rules_add(r,
			   C "-m conntrack --ctorigdst %s -m mark --mark 0x%x "
			     "-j ACCEPT",
			   s, (unsigned)cfg->mark);
	if (!ret)
		ret = render_answerer(cfg, a, s, r);
	/* Reply-direction packets of the upstream's connections go back to
	 * their local originator: a loopback resolver's answers, and the RST
	 * or ICMP error our own REJECT below makes (it travels OUTPUT too;
	 * rejecting it would turn every refusal into a timeout). */
	if (!ret)
		ret =
		    fw_rules_add(r,
				 C "-m conntrack --ctorigdst %s --ctdir REPLY "
				   "-j ACCEPT",
				 s);
	if (ret)
		return ret;
	if (config_audit_dns_open(cfg)) {
		char match[NETADDR_STRLEN + 32];

		snprintf(match, sizeof(match), "-m conntrack --ctorigdst %s ",
			 s);
		return log_then_accept(r, match);
	}
	ret = fw_rules_add(
	    r, C "-m conntrack --ctorigdst %s " BLOCK_NFLOG "dnsfence-dns", s);
	if (!ret)
		ret = fw_rules_add(
		    r,
		    C "-p tcp -m conntrack --ctorigdst %s -j REJECT "
		      "--reject-with tcp-reset",
		    s);
	return ret ? ret
		   : fw_rules_add(r,
				  C "-m conntrack --ctorigdst %s -j REJECT "
				    "--reject-with %s",
				  s, reject_with(a->family));
}

/* Entries the upstream's endpoint began: their reply direction is the
 * daemon's question (or anyone's) to that endpoint, and their original
 * destination is ours, which render_upstream never names. The upstream
 * makes them itself with an answer later than conntrack kept the
 * daemon's entry (a NEW entry from A:53 to the daemon's old port, whose
 * reply direction then carried a workload's query from that port,
 * rebound, to the upstream past rule 3); a squatter on a local
 * upstream's free port makes them by sending first, from A:P to every
 * ephemeral port of the daemon's address (the daemon's question then
 * rode it, and the squatter's answer came back as its original
 * direction). Only the daemon's marked packets pass; no upstream
 * begins anything legitimately from the port it serves on. */
static int render_upstream_origin(const struct config *cfg,
				  const struct netaddr *a, unsigned port,
				  struct fw_rules *r)
{
	char s[NETADDR_STRLEN], match[NETADDR_STRLEN + 64];
	int ret;

	netaddr_format(a, s, sizeof(s));
	snprintf(match, sizeof(match),
		 "-m conntrack --ctorigsrc %s --ctorigsrcport %u ", s, port);
	ret = fw_rules_add(r, C "%s-m mark --mark 0x%x -j ACCEPT", match,
			   (unsigned)cfg->mark);
	if (!ret && config_audit_dns_open(cfg))
		return log_then_accept(r, match);
	return ret ? ret : log_then_drop(r, match, "dnsfence-dns");
}

/* The upstreams, then those a reload replaced whose questions are still
 * draining (cfg->retired): their rules stay until the daemon has deleted
 * its conntrack entries to them (conntrack.c), so no packet to one of
 * them passes without the mark meanwhile. Then the replaced endpoints
 * whose drain ended (cfg->held, held.c): only their origin lines, against
 * the late answers that come after it. */
static int render_upstreams(const struct config *cfg, int family,
			    struct fw_rules *r)
{
	const struct config_endpoint *lists[] = {cfg->upstreams, cfg->retired};
	const size_t counts[] = {cfg->n_upstreams, cfg->n_retired};
	struct netaddr na;
	int ret;

	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			const struct sockaddr *sa =
			    (const struct sockaddr *)&lists[l][i].sa;

			if (sa->sa_family != family ||
			    !netaddr_from_sockaddr(sa, &na))
				continue;
			ret = render_upstream(cfg, &na, r);
			if (!ret)
				ret = render_upstream_origin(
				    cfg, &na, (unsigned)netaddr_port(sa), r);
			if (ret)
				return ret;
		}
	}
	for (size_t i = 0; i < cfg->n_held; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&cfg->held[i].e.sa;

		if (sa->sa_family != family || !netaddr_from_sockaddr(sa, &na))
			continue;
		ret = render_upstream_origin(cfg, &na,
					     (unsigned)netaddr_port(sa), r);
		if (ret)
			return ret;
	}
	return 0;
}

bool fw_rules_upstream_of(const char *line, struct netaddr *out)
{
	static const char head[] = C "-m conntrack --ctorigdst ";
	char addr[NETADDR_STRLEN];
	const char *p, *end;

	if (strncmp(line, head, strlen(head)) != 0)
		return false;
	p = line + strlen(head);
	end = strchr(p, ' ');
	if (end == NULL || (size_t)(end - p) >= sizeof(addr) ||
	    strncmp(end, " -m mark --mark ", 16) != 0)
		return false;
	memcpy(addr, p, (size_t)(end - p));
	addr[end - p] = '\0';
	return netaddr_parse(addr, out) == 0;
}

bool fw_rules_origin_of(const char *line, struct config_endpoint *out)
{
	static const char head[] = C "-m conntrack --ctorigsrc ";
	char addr[NETADDR_STRLEN], ep[NETADDR_ENDPOINT_STRLEN];
	unsigned port;
	struct netaddr na;
	const char *p, *end, *why = NULL;
	int used = 0;

	if (strncmp(line, head, strlen(head)) != 0)
		return false;
	p = line + strlen(head);
	end = strchr(p, ' ');
	if (end == NULL || (size_t)(end - p) >= sizeof(addr))
		return false;
	memcpy(addr, p, (size_t)(end - p));
	addr[end - p] = '\0';
	if (netaddr_parse(addr, &na) != 0 ||
	    sscanf(end, " --ctorigsrcport %5u%n", &port, &used) != 1 ||
	    port == 0 || port > 65535 ||
	    strncmp(end + used, " -m mark --mark ", 16) != 0)
		return false;
	snprintf(ep, sizeof(ep), na.family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 addr, port);
	return netaddr_parse_endpoint(ep, true, 0, &out->sa, &out->len, &why) ==
	       0;
}

/* What neighbour discovery needs (RFC 4861 packets carry hop limit 255):
 * router solicitations to all-routers, neighbour solicitations to a
 * solicited-node group or to a unicast neighbour (NUD), advertisements;
 * and MLDv1 reports (setup makes the kernel send those, see
 * prefer_mldv1 in firewall.c), each naming its one group as its
 * destination, only for a group in the MLD set: the solicited-node groups
 * of the namespace's own addresses (mldset.c), so no group a workload
 * joins is announced, not even one in ff02::1:ff00:0/104 whose low 24
 * bits it chose. MLDv2 reports, whose groups no rule can compare with a
 * set, stay in. */
static int render_icmp6(const struct config *cfg, struct fw_rules *r)
{
	static const char *const nd[] = {
	    C "-d ff02::2/128 " ICMP6 "133 -m hl --hl-eq 255 -j ACCEPT",
	    C "-d ff02::1:ff00:0/104 " ICMP6 "135 -m hl --hl-eq 255 -j ACCEPT",
	    C ICMP6 "135 -m addrtype --dst-type UNICAST -m hl --hl-eq 255 "
		    "-j ACCEPT",
	    C ICMP6 "136 -m hl --hl-eq 255 -j ACCEPT",
	};
	char mld[MLDSET_NAME_MAX];
	int ret;

	for (size_t i = 0; i < sizeof(nd) / sizeof(nd[0]); i++) {
		ret = fw_rules_add(r, "%s", nd[i]);
		if (ret)
			return ret;
	}
	mldset_name(cfg, mld, sizeof(mld));
	return fw_rules_add(r,
			    C "-d ff02::1:ff00:0/104 " ICMP6
			      "131 -m hl --hl-eq 1 -m set --match-set %s dst "
			      "-j ACCEPT",
			    mld);
}

/* Every other DNS, matched on the original port (Docker DNATs
 * 127.0.0.11:53 elsewhere), refused before the loopback accept; in audit
 * mode logged, then let through. In IPv4, every port of Docker's
 * embedded resolver's address too: its real port is in /proc/net/udp,
 * and a query sent there straight carries no port 53 at all. */
/* Each match refused, after its rate-limited dnsfence-dns copy (TCP with
 * a reset); in audit mode with DNS open, logged and let through. */
struct dns_match {
	const char *match;
	bool tcp; /* refused with a reset */
};

static int refuse_dns(const struct config *cfg, int family,
		      const struct dns_match *m, size_t n, struct fw_rules *r)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++)
		ret = config_audit_dns_open(cfg)
			  ? log_then_accept(r, m[i].match)
			  : log_then_reject(r, m[i].match, "dnsfence-dns",
					    m[i].tcp ? "tcp-reset"
						     : reject_with(family));
	return ret;
}

static int render_dns(const struct config *cfg, int family, struct fw_rules *r)
{
	static const struct dns_match matches[] = {
	    {"-p udp -m conntrack --ctorigdstport 53 ", false},
	    {"-p tcp -m conntrack --ctorigdstport 53 ", true},
	    {"-d " DOCKER_RESOLVER "/32 -p tcp ", true},
	    {"-d " DOCKER_RESOLVER "/32 ", false},
	};

	return refuse_dns(cfg, family, matches, family == AF_INET ? 4 : 2, r);
}

/* DNS as the reply direction of an entry someone began from port 53
 * towards us, before rule 3 accepts it: a resolver's answer that came
 * later than conntrack kept the question's entry is such an entry, to
 * the asker's old port, and a workload that binds that port once it is
 * free asks the resolver anything through it. For the upstreams rule 2
 * holds those entries already (render_upstream_origin); this holds them
 * for every other resolver, one a reload replaced among them (its rules
 * are gone once its questions drained, its late answers not). Nothing
 * legitimate begins from port 53. */
static int render_dns_replies(const struct config *cfg, int family,
			      struct fw_rules *r)
{
	static const struct dns_match matches[] = {
	    {"-p udp -m udp --dport 53 -m conntrack --ctdir REPLY ", false},
	    {"-p tcp -m tcp --dport 53 -m conntrack --ctdir REPLY ", true},
	};

	return refuse_dns(cfg, family, matches, 2, r);
}

/* In enforce mode a rejected packet is also copied, rate-limited, to
 * NFLOG under prefix, for the daemon's attribution. */
static int log_then_reject(struct fw_rules *r, const char *match,
			   const char *prefix, const char *with)
{
	int ret = fw_rules_add(r, C "%s" BLOCK_NFLOG "%s", match, prefix);

	return ret ? ret
		   : fw_rules_add(r, C "%s-j REJECT --reject-with %s", match,
				  with);
}

/* The same copy, then a silent drop (a local sender's send fails with
 * EPERM; nothing is sent back to it). */
static int log_then_drop(struct fw_rules *r, const char *match,
			 const char *prefix)
{
	int ret = fw_rules_add(r, C "%s" BLOCK_NFLOG "%s", match, prefix);

	return ret ? ret : fw_rules_add(r, C "%s-j DROP", match);
}

/* In audit mode what enforce would reject is logged, then let through. */
static int log_then_accept(struct fw_rules *r, const char *match)
{
	int ret =
	    fw_rules_add(r, C "%s-j NFLOG --nflog-prefix " AUDIT_PREFIX, match);

	return ret ? ret : fw_rules_add(r, C "%s-j ACCEPT", match);
}

/* The multiport list of proto's ports from cfg->ports[*i] on, at most 15
 * slots; *i moves past what was taken. 0 slots: nothing left. */
static int port_list(const struct config_port *ports, size_t n, uint8_t proto,
		     size_t *i, char *list, size_t cap)
{
	size_t len = 0;
	int slots = 0;

	list[0] = '\0';
	for (; *i < n; (*i)++) {
		const struct config_port *cp = &ports[*i];
		int w = cp->first == cp->last ? 1 : 2;

		if (cp->proto != proto)
			continue;
		if (slots + w > MULTIPORT_MAX)
			break;
		len += (size_t)snprintf(
		    list + len, cap - len,
		    cp->first == cp->last ? "%s%u" : "%s%u:%u", len ? "," : "",
		    (unsigned)cp->first, (unsigned)cp->last);
		slots += w;
	}
	return slots;
}

int fw_rules_port_list(const struct config *cfg, uint8_t proto, size_t *i,
		       char *list, size_t cap)
{
	return port_list(cfg->ports, cfg->n_ports, proto, i, list, cap);
}

/* Set members and allow_cidrs on the configured ports, one rule per
 * protocol and per run of at most 15 multiport slots. */
static int render_ports(const struct config *cfg, int family, const char *set,
			struct fw_rules *r)
{
	static const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP};
	char list[16 * 12];
	int ret;

	for (size_t p = 0; p < 2; p++) {
		const char *pn = protos[p] == IPPROTO_TCP ? "tcp" : "udp";
		size_t i = 0;

		while (port_list(cfg->ports, cfg->n_ports, protos[p], &i, list,
				 sizeof(list)) > 0) {
			ret =
			    fw_rules_add(r,
					 C "-p %s -m set --match-set %s dst -m "
					   "multiport --dports %s -j ACCEPT",
					 pn, set, list);
			if (!ret)
				ret = render_cidrs(cfg, family, pn, list, r);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The name check's rules (docs/firewall.md): the verdict a repeated
 * packet carries goes into its flow's connmark; a flow accepted keeps
 * sending its packets to the recheck queue while its guard bit is set
 * (the judged bytes not yet acknowledged); a flow refused is reset
 * on each packet it still sends (the original direction only: the reset
 * our own REJECT sends back travels OUTPUT too); a flow that starts to a
 * set member on a checked port is marked pending by its SYN, and its
 * established packets go to the queue until the verdict, also once the
 * set entry is gone (a flow that stays silent past the entry's timeout
 * would otherwise meet the established accept unread). */
static int render_name_check(const struct config *cfg, int family,
			     const char *set, struct fw_rules *r)
{
	char list[16 * 12];
	size_t i = 0;
	int ret;

	ret = copy_verdict(FLOW_MARK_ACCEPT, r);
	if (!ret)
		ret = copy_verdict(FLOW_MARK_REJECT, r);
	if (!ret)
		ret = copy_verdict(FLOW_MARK_GUARD, r);
	if (!ret)
		ret = fw_rules_add(
		    r,
		    C "-p tcp -m connmark --mark 0x%x/0x%x -m conntrack "
		      "--ctdir ORIGINAL -j REJECT --reject-with tcp-reset",
		    FLOW_MARK_REJECT, FLOW_MARK_MASK);
	while (!ret && port_list(cfg->tls_ports, cfg->n_tls_ports, IPPROTO_TCP,
				 &i, list, sizeof(list)) > 0)
		ret = render_queue(family, set, list, r);
	i = 0;
	while (!ret && port_list(cfg->http_ports, cfg->n_http_ports,
				 IPPROTO_TCP, &i, list, sizeof(list)) > 0)
		ret = render_queue(family, set, list, r);
	if (!ret)
		ret = fw_rules_add(r,
				   C "-p tcp -m connmark --mark 0x%x/0x%x -m "
				     "conntrack --ctstate ESTABLISHED --ctdir "
				     "ORIGINAL -j NFQUEUE --queue-num %d",
				   FLOW_MARK_PENDING, FLOW_MARK_MASK,
				   FLOW_QUEUE_NUM);
	return ret ? ret
		   : fw_rules_add(r,
				  C "-p tcp -m connmark --mark 0x%x/0x%x -m "
				    "mark ! --mark 0x%x -m conntrack --ctdir "
				    "ORIGINAL -j NFQUEUE --queue-num %d",
				  FLOW_MARK_GUARD_BIT, FLOW_MARK_GUARD_BIT,
				  FLOW_MARK_GUARD, FLOW_QUEUE_RECHECK);
}

/* The rule that copies verdict mark m, on a repeated packet, into its
 * flow's connmark, all three bits: accept and refuse clear the guard. */
static int copy_verdict(uint32_t m, struct fw_rules *r)
{
	return fw_rules_add(r,
			    C "-m mark --mark 0x%x -j CONNMARK --set-xmark "
			      "0x%x/0x%x",
			    m, m, FLOW_MARK_ALL);
}

/* A new flow to a set member on ports list: marked pending (queued by
 * the rule after all lists). Before it, a SYN that carries data (TCP Fast
 * Open: an unprivileged sendto with MSG_FASTOPEN once the kernel holds the
 * server's cookie) is dropped: its bytes would reach the server before the
 * check sees a packet, since the SYN is NEW, and the check would read the
 * stream without its start. The u32 test reads 4 bytes ending at the
 * payload's first byte, so it matches a SYN with 1 byte of payload or
 * more: in IPv6 at the TCP data offset plus 37 (the TCP header right after
 * the fixed one, as in render_quic); in IPv4 at the data offset plus 17,
 * which is the first payload byte less 3 when the IP header has no options
 * (u32 offsets cannot go back, so the header length is fixed), and a SYN
 * with IP options (IHL over 5, which unprivileged IP_OPTIONS can set) is
 * dropped by a rule of its own. The client's kernel sends the SYN again
 * without data and the bytes after the handshake, where the check reads
 * the stream from its first byte. */
static int render_queue(int family, const char *set, const char *list,
			struct fw_rules *r)
{
	const char *payload = family == AF_INET
				  ? "0x20>>0x1a&0x3c@0x11=0x0:0xffffffff"
				  : "0x34>>0x1a&0x3c@0x25=0x0:0xffffffff";
	int ret = 0;

	if (family == AF_INET)
		ret = fw_rules_add(
		    r,
		    C "-p tcp -m set --match-set %s dst -m multiport --dports "
		      "%s -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "
		      "\"0x0>>0x18&0xf=0x6:0xf\" -j DROP",
		    set, list);
	if (!ret)
		ret = fw_rules_add(
		    r,
		    C "-p tcp -m set --match-set %s dst -m multiport --dports "
		      "%s -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "
		      "\"%s\" -j DROP",
		    set, list, payload);
	return ret ? ret
		   : fw_rules_add(
			 r,
			 C "-p tcp -m set --match-set %s dst -m multiport "
			   "--dports %s -m conntrack --ctstate NEW -j CONNMARK "
			   "--set-xmark 0x%x/0x%x",
			 set, list, FLOW_MARK_PENDING, FLOW_MARK_MASK);
}

/* QUIC (docs/firewall.md): a refused flow is dropped; an undecided one to
 * a set member on a quic port (also in `ports`) goes to the queue from
 * its first packet; an accepted one sends its long-header packets (the
 * first bit of the UDP payload: Initial, Handshake, 0-RTT, a new
 * connection's Initial) to the recheck queue, all other packets stay in
 * the kernel. The repeated packet carrying our accept mark is not sent
 * again. IPv6: the UDP header right after the fixed header (extension
 * headers need CAP_NET_RAW, a routing header is rejected by rule 0). */
static int render_quic(const struct config *cfg, int family, const char *set,
		       struct fw_rules *r)
{
	const char *first_bit = family == AF_INET
				    ? "0x0>>0x16&0x3c@0x8>>0x18&0x80=0x80"
				    : "0x30>>0x18&0x80=0x80";
	struct config_port *q = calloc(cfg->n_quic_ports + 1, sizeof(*q));
	char list[16 * 12];
	size_t n = 0, i = 0;
	int ret;

	if (q == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < cfg->n_quic_ports; k++) {
		if (config_port_covered(cfg->ports, cfg->n_ports,
					&cfg->quic_ports[k]))
			q[n++] = cfg->quic_ports[k];
	}
	ret = n == 0 ? 0
		     : fw_rules_add(r,
				    C "-p udp -m connmark --mark 0x%x/0x%x -m "
				      "conntrack --ctdir ORIGINAL -j DROP",
				    FLOW_MARK_REJECT, FLOW_MARK_MASK);
	while (!ret &&
	       port_list(q, n, IPPROTO_UDP, &i, list, sizeof(list)) > 0) {
		ret = fw_rules_add(
		    r,
		    C "-p udp -m set --match-set %s dst -m multiport --dports "
		      "%s -m connmark --mark 0x0/0x%x -m conntrack --ctdir "
		      "ORIGINAL -j NFQUEUE --queue-num %d",
		    set, list, FLOW_MARK_MASK, FLOW_QUEUE_NUM);
		if (!ret)
			ret = fw_rules_add(
			    r,
			    C "-p udp -m set --match-set %s dst -m multiport "
			      "--dports %s -m connmark --mark 0x%x/0x%x -m "
			      "mark ! --mark 0x%x -m u32 --u32 \"%s\" -m "
			      "conntrack --ctdir ORIGINAL -j NFQUEUE "
			      "--queue-num %d",
			    set, list, FLOW_MARK_ACCEPT, FLOW_MARK_MASK,
			    FLOW_MARK_ACCEPT, first_bit, FLOW_QUEUE_RECHECK);
	}
	free(q);
	return ret;
}

/* Each allow_cidrs entry of this family on the same ports. */
static int render_cidrs(const struct config *cfg, int family, const char *pn,
			const char *list, struct fw_rules *r)
{
	char c[NETADDR_STRLEN + 8];
	int ret;

	for (size_t k = 0; k < cfg->n_allow_cidrs; k++) {
		if (cfg->allow_cidrs[k].addr.family != family)
			continue;
		netaddr_format_cidr(&cfg->allow_cidrs[k], c, sizeof(c));
		ret = fw_rules_add(r,
				   C "-d %s -p %s -m multiport --dports %s -j "
				     "ACCEPT",
				   c, pn, list);
		if (ret)
			return ret;
	}
	return 0;
}

/* The catch-all, carrying the policy fingerprint as its comment. */
static int render_last(const struct config *cfg, int family, struct fw_rules *r)
{
	char fp[PROVENANCE_HEXLEN];
	int ret = provenance_fingerprint(cfg, fp);

	if (ret)
		return ret;
	if (cfg->mode == CONFIG_MODE_AUDIT) {
		ret =
		    fw_rules_add(r, C "-j NFLOG --nflog-prefix " AUDIT_PREFIX);
		return ret ? ret
			   : fw_rules_add(r,
					  C "-m comment " FW_POLICY_TAG
					    "%s\" -j ACCEPT",
					  fp);
	}
	ret = fw_rules_add(r, C BLOCK_NFLOG "dnsfence-block");
	if (!ret)
		ret = fw_rules_add(r, C
				   "-p tcp -j REJECT --reject-with tcp-reset");
	return ret ? ret
		   : fw_rules_add(r,
				  C "-m comment " FW_POLICY_TAG
				    "%s\" -j REJECT --reject-with %s",
				  fp, reject_with(family));
}

int fw_rules_render(const struct config *cfg, int family, struct fw_rules *r)
{
	const char *set = family == AF_INET ? cfg->set4 : cfg->set6;
	int ret;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (!sets_name_valid(set))
		return -EINVAL;
	if (cfg->mode == CONFIG_MODE_OFF)
		return 0;
	ret = family == AF_INET6 ? fw_rules_add(r, C "%s", fw_rules_rthdr(cfg))
				 : 0;
	/* Subjects: each connection they open carries our mark (below). */
	if (!ret && config_has_subjects(cfg))
		ret = fw_rules_add(r,
				   C "-m conntrack --ctstate NEW -j CONNMARK "
				     "--set-xmark 0x%x/0x%x",
				   (unsigned)cfg->mark, (unsigned)cfg->mark);
	if (!ret)
		ret = render_listen(cfg, family, r);
	if (!ret)
		ret = render_upstreams(cfg, family, r);
	if (!ret && config_name_check_on(cfg))
		ret = render_name_check(cfg, family, set, r);
	if (!ret && cfg->name_check != CONFIG_NAME_CHECK_OFF &&
	    cfg->scope == CONFIG_SCOPE_OUTPUT)
		ret = render_quic(cfg, family, set, r);
	if (!ret)
		ret = render_dns_replies(cfg, family, r);
	if (!ret)
		ret = render_established(cfg, r);
	if (!ret && cfg->inbound_deny) /* our listeners' (local) answers */
		ret = fw_rules_add(r, C "-o lo -m conntrack --ctstate "
					"RELATED,ESTABLISHED -j ACCEPT");
	if (!ret && family == AF_INET6)
		ret = render_icmp6(cfg, r);
	if (!ret)
		ret = render_dns(cfg, family, r);
	if (!ret)
		ret = render_loopback(cfg, r);
	if (!ret)
		ret = render_ports(cfg, family, set, r);
	if (!ret)
		ret = render_last(cfg, family, r);
	return ret;
}

/* Packets of known connections. For subjects, only of connections a
 * subject opened (the connmark set on its NEW packet) or, with inbound
 * "allow", in the reply direction: a connection another process of the
 * namespace opened is not the subject's to use, or a subject could bind
 * that process's closed UDP port and ride its conntrack entry to
 * wherever it went (its own resolver, an address nobody answered). */
static int render_established(const struct config *cfg, struct fw_rules *r)
{
	int ret;

	if (!config_has_subjects(cfg))
		return fw_rules_add(
		    r,
		    C "-m conntrack --ctstate RELATED,ESTABLISHED "
		      "%s-j ACCEPT",
		    cfg->inbound_deny ? "--ctdir ORIGINAL " : "");
	ret = fw_rules_add(r,
			   C "-m conntrack --ctstate RELATED,ESTABLISHED -m "
			     "connmark --mark 0x%x/0x%x -j ACCEPT",
			   (unsigned)cfg->mark, (unsigned)cfg->mark);
	if (!ret && !cfg->inbound_deny)
		ret = fw_rules_add(r, C
				   "-m conntrack --ctstate RELATED,ESTABLISHED "
				   "--ctdir REPLY -j ACCEPT");
	return ret;
}

/* Loopback: everything, or for named subjects with "loopback":
 * "listener" only the listeners (accepted above) and loopback_ports. */
static int render_loopback(const struct config *cfg, struct fw_rules *r)
{
	int ret = 0;

	if (!config_has_subjects(cfg) || !cfg->subject_lo_listener)
		return fw_rules_add(r, FW_CHAIN_RULE "-o lo -j ACCEPT");
	for (size_t i = 0; !ret && i < cfg->n_subject_lo_ports; i++) {
		const struct config_port *pt = &cfg->subject_lo_ports[i];
		const char *pn = pt->proto == IPPROTO_UDP ? "udp" : "tcp";

		if (pt->first == pt->last)
			ret = fw_rules_add(r,
					   FW_CHAIN_RULE "-o lo -p %s -m %s "
							 "--dport %u -j ACCEPT",
					   pn, pn, (unsigned)pt->first);
		else
			ret = fw_rules_add(
			    r,
			    FW_CHAIN_RULE "-o lo -p %s -m %s --dport %u:%u -j "
					  "ACCEPT",
			    pn, pn, (unsigned)pt->first, (unsigned)pt->last);
	}
	return ret;
}

/* Any routing header, whatever its type (the kernel's SRv6 or a type 0
 * one a raw socket writes): the packet's destination is the next segment,
 * not where it ends, so no later rule may judge it (invariant 13). */
const char *fw_rules_rthdr(const struct config *cfg)
{
	return cfg->mode == CONFIG_MODE_AUDIT
		   ? "-m rt -j NFLOG --nflog-prefix " AUDIT_PREFIX
		   : "-m rt -j REJECT --reject-with icmp6-adm-prohibited";
}

static bool policy_of(const char *line, char *hex, size_t len)
{
	const char *p = strstr(line, FW_POLICY_TAG);
	size_t n;

	if (!p)
		return false;
	p += strlen(FW_POLICY_TAG);
	n = strspn(p, "0123456789abcdef");
	if (n == 0 || p[n] != '"' || n >= len)
		return false;
	memcpy(hex, p, n);
	hex[n] = '\0';
	return true;
}

bool fw_rules_find_policy(const struct fw_rules *r, char *hex, size_t len)
{
	hex[0] = '\0';
	for (size_t i = 0; i < r->n; i++) {
		if (policy_of(r->v[i], hex, len))
			return true;
	}
	return false;
}
