// SPDX-License-Identifier: GPL-2.0-or-later
/* fwfwdrules: the forward scope's rules as lists, per family, in the order
 * the kernel walks them (fwforward.c applies and compares them; the design
 * note there and docs/firewall.md give the reason for each).
 *
 * Each rule is written exactly as `iptables-save -t filter` prints it
 * (checked with iptables 1.8.9, nft and legacy: "-d" before "-i", no mask
 * after --ctorigdst, the default --reject-with spelled out), so the same
 * text is the iptables-restore input, the expected lines of `check`, and
 * what the unit tests read. Every rule carries "-i IFACE": per configured
 * interface, one block in each chain, except DNSFENCE-IN's last rules,
 * which keep every other interface (the uplink) from our listeners.
 *
 * Invariant 13 (a container's forged or spoofed packets create no state,
 * earn no answer and no error outside the fenced networks) is the raw
 * table's chain DNSFENCE-PRE: a packet coming in on a fenced interface
 * with a source not of that interface's networks is dropped there, before
 * conntrack sees it (no planted entry), before INPUT (no answer from the
 * listener) and before any REJECT (no error to an outside address). The
 * networks are the host's own routes (the rpfilter match: the route back
 * to the source must leave by the interface the packet came in on; a
 * lookup done by the rule, not the rp_filter sysctl), or source_cidrs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fence/fwfwdrules.h"
#include "base/netaddr.h"
#include "config/fingerprint.h"

#define F     "-A " FWFWD_CHAIN " "
#define IN    "-A " FWFWD_IN_CHAIN " "
#define PRE   "-A " FWFWD_PRE_CHAIN " "
#define SRC   "dnsfence-source"
#define LIMIT "-m limit --limit 10/sec --limit-burst 20 "
#define AUDIT "dnsfence-audit"
#define BLOCK "dnsfence-block"
#define DNS   "dnsfence-dns"
#define ND    "-p ipv6-icmp -m icmp6 --icmpv6-type "

static const char *icmp_reject(int family);
static const char *inbound_dir(const struct config *cfg);
static int render_host_allow(const char *spec, int family, const char *ifn,
			     struct fw_rules *r);
static int render_upstreams(const struct config *cfg, int family,
			    const char *ifn, struct fw_rules *r);
static int render_dns(const struct config *cfg, int family, const char *ifn,
		      struct fw_rules *r);
static int render_ports(const struct config *cfg, int family, const char *ifn,
			struct fw_rules *r);
static int render_fwd(const struct config *cfg, int family, const char *ifn,
		      const char *fp, struct fw_rules *r);
static int render_in(const struct config *cfg, int family, const char *ifn,
		     struct fw_rules *r);
static int render_hairpin(const struct config *cfg, int family, const char *ifn,
			  struct fw_rules *r);
static int render_hairpin_open(const struct config *cfg, int family,
			       const char *ifn, struct fw_rules *r);
static bool endpoint_text(const struct config_endpoint *e, int family, char *a,
			  size_t len);
static int render_listen(const struct config *cfg, int family,
			 const char *ifmatch, const char *target,
			 struct fw_rules *r);
static int render_pre(const struct config *cfg, int family, const char *ifn,
		      struct fw_rules *r);

static const char *icmp_reject(int family)
{
	return family == AF_INET ? "icmp-admin-prohibited"
				 : "icmp6-adm-prohibited";
}

/* "inbound": "deny": the established accepts only carry the direction of
 * connections the containers opened, so none of them answers a peer that
 * connected to it (a published port, the host's health probe). */
static const char *inbound_dir(const struct config *cfg)
{
	return cfg->inbound_deny ? "--ctdir ORIGINAL " : "";
}

/* The upstreams on any port and in any state, before the established
 * accept: a workload never talks to them, only the daemon on the host. */
static int render_upstreams(const struct config *cfg, int family,
			    const char *ifn, struct fw_rules *r)
{
	bool audit = config_audit_dns_open(cfg);
	const char *host = family == AF_INET ? "/32" : "/128";
	char u[NETADDR_STRLEN];
	int ret = 0;

	for (size_t i = 0; !ret && i < cfg->n_upstreams; i++) {
		if (!endpoint_text(&cfg->upstreams[i], family, u, sizeof(u)))
			continue;
		if (audit) {
			ret = fw_rules_add(
			    r,
			    F "-i %s -m conntrack --ctorigdst %s -j "
			      "NFLOG --nflog-prefix " AUDIT,
			    ifn, u);
			if (!ret)
				ret = fw_rules_add(
				    r,
				    F "-i %s -m conntrack --ctorigdst "
				      "%s -j RETURN",
				    ifn, u);
			if (!ret)
				ret = fw_rules_add(r,
						   F "-d %s%s -i %s -j NFLOG "
						     "--nflog-prefix " AUDIT,
						   u, host, ifn);
			if (!ret)
				ret =
				    fw_rules_add(r, F "-d %s%s -i %s -j RETURN",
						 u, host, ifn);
			continue;
		}
		ret = fw_rules_add(
		    r,
		    F "-i %s -p tcp -m conntrack --ctorigdst %s -j "
		      "REJECT --reject-with tcp-reset",
		    ifn, u);
		if (!ret)
			ret = fw_rules_add(
			    r,
			    F "-i %s -m conntrack --ctorigdst %s -j "
			      "REJECT --reject-with %s",
			    ifn, u, icmp_reject(family));
		/* By destination too: an entry whose original direction is
		 * not the upstream's (one planted before the fence, or by a
		 * forged packet) must not carry a container's packets to
		 * it as its reply direction. */
		if (!ret)
			ret = fw_rules_add(r,
					   F "-d %s%s -i %s -p tcp -j REJECT "
					     "--reject-with tcp-reset",
					   u, host, ifn);
		if (!ret)
			ret = fw_rules_add(
			    r, F "-d %s%s -i %s -j REJECT --reject-with %s", u,
			    host, ifn, icmp_reject(family));
	}
	return ret;
}

/* DNS to anywhere but us (that is INPUT), on the original port. */
static int render_dns(const struct config *cfg, int family, const char *ifn,
		      struct fw_rules *r)
{
	static const char *const protos[] = {"udp", "tcp"};
	int ret = 0;

	for (size_t p = 0; !ret && p < 2; p++) {
		if (config_audit_dns_open(cfg)) {
			ret = fw_rules_add(
			    r,
			    F "-i %s -p %s -m conntrack --ctorigdstport "
			      "53 -j NFLOG --nflog-prefix " AUDIT,
			    ifn, protos[p]);
			if (!ret)
				ret = fw_rules_add(
				    r,
				    F "-i %s -p %s -m conntrack "
				      "--ctorigdstport 53 -j RETURN",
				    ifn, protos[p]);
			continue;
		}
		/* A rate-limited copy first, so the daemon says which
		 * container asked whom (attrib.c: reason "dns"). */
		ret = fw_rules_add(r,
				   F "-i %s -p %s -m conntrack --ctorigdstport "
				     "53 " LIMIT "-j NFLOG --nflog-prefix " DNS,
				   ifn, protos[p]);
		if (!ret)
			ret = fw_rules_add(
			    r,
			    F "-i %s -p %s -m conntrack --ctorigdstport 53 -j "
			      "REJECT --reject-with %s",
			    ifn, protos[p],
			    p ? "tcp-reset" : icmp_reject(family));
	}
	return ret;
}

/* Set members and allow_cidrs on `ports`, in runs of 15 multiport slots
 * (fw_rules_port_list, shared with the output scope). */
static int render_ports(const struct config *cfg, int family, const char *ifn,
			struct fw_rules *r)
{
	static const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP};
	const char *set = family == AF_INET ? cfg->set4 : cfg->set6;
	char list[16 * 12], c[NETADDR_STRLEN + 8], client[64] = "";
	int ret = 0;

	/* "bind": "client": the answered client, on this port, too */
	if (config_client_sets(cfg))
		snprintf(client, sizeof(client),
			 "-m set --match-set %s src,dst,dst ",
			 family == AF_INET ? cfg->client4 : cfg->client6);

	for (size_t p = 0; !ret && p < 2; p++) {
		const char *pn = protos[p] == IPPROTO_TCP ? "tcp" : "udp";
		size_t i = 0;

		while (!ret && fw_rules_port_list(cfg, protos[p], &i, list,
						  sizeof(list)) > 0) {
			ret = fw_rules_add(
			    r,
			    F "-i %s -p %s -m set --match-set %s dst %s-m "
			      "multiport --dports %s -j RETURN",
			    ifn, pn, set, client, list);
			for (size_t k = 0; !ret && k < cfg->n_allow_cidrs;
			     k++) {
				if (cfg->allow_cidrs[k].addr.family != family)
					continue;
				netaddr_format_cidr(&cfg->allow_cidrs[k], c,
						    sizeof(c));
				ret = fw_rules_add(
				    r,
				    F "-d %s -i %s -p %s -m multiport "
				      "--dports %s -j RETURN",
				    c, ifn, pn, list);
			}
		}
	}
	return ret;
}

/* DNSFENCE-FWD for traffic coming in on ifn (see the file's note). */
static int render_fwd(const struct config *cfg, int family, const char *ifn,
		      const char *fp, struct fw_rules *r)
{
	bool audit = cfg->mode == CONFIG_MODE_AUDIT;
	int ret = 0;

	if (family == AF_INET6)
		ret = fw_rules_add(r, F "-i %s %s", ifn, fw_rules_rthdr(cfg));
	if (!ret)
		ret = render_upstreams(cfg, family, ifn, r);
	if (!ret && cfg->hairpin_deny)
		ret = render_hairpin(cfg, family, ifn, r);
	if (!ret)
		ret = fw_rules_add(
		    r,
		    F "-i %s -m conntrack --ctstate RELATED,ESTABLISHED "
		      "%s-j RETURN",
		    ifn, inbound_dir(cfg));
	if (!ret)
		ret = render_hairpin_open(cfg, family, ifn, r);
	if (!ret)
		ret = render_dns(cfg, family, ifn, r);
	if (!ret)
		ret = render_ports(cfg, family, ifn, r);
	if (!ret && audit)
		ret = fw_rules_add(r, F "-i %s -j NFLOG --nflog-prefix " AUDIT,
				   ifn);
	if (!ret && audit)
		return fw_rules_add(
		    r, F "-i %s -m comment " FW_POLICY_TAG "%s\" -j RETURN",
		    ifn, fp);
	/* What the rejects below refuse, copied (rate-limited) for the
	 * log line naming the container's address and interface, as the
	 * output scope's rule 9 does with the uid. */
	if (!ret)
		ret = fw_rules_add(
		    r, F "-i %s " LIMIT "-j NFLOG --nflog-prefix " BLOCK, ifn);
	if (!ret)
		ret = fw_rules_add(
		    r, F "-i %s -p tcp -j REJECT --reject-with tcp-reset", ifn);
	if (!ret)
		ret = fw_rules_add(r,
				   F "-i %s -m comment " FW_POLICY_TAG
				     "%s\" -j REJECT --reject-with %s",
				   ifn, fp, icmp_reject(family));
	return ret;
}

/* "hairpin": "deny": in on a fenced interface and out on one is refused,
 * in any state, before the established accept, so no entry (an old one,
 * or one a peer's packet made) lets two fenced workloads talk. */
static int render_hairpin(const struct config *cfg, int family, const char *ifn,
			  struct fw_rules *r)
{
	int ret = 0;

	for (size_t k = 0; !ret && k < cfg->n_interfaces; k++) {
		const char *o = cfg->interfaces[k];

		if (cfg->mode == CONFIG_MODE_AUDIT) {
			ret = fw_rules_add(
			    r, F "-i %s -o %s -j NFLOG --nflog-prefix " AUDIT,
			    ifn, o);
			continue;
		}
		ret = fw_rules_add(
		    r, F "-i %s -o %s -p tcp -j REJECT --reject-with tcp-reset",
		    ifn, o);
		if (!ret)
			ret = fw_rules_add(
			    r, F "-i %s -o %s -j REJECT --reject-with %s", ifn,
			    o, icmp_reject(family));
	}
	return ret;
}

/* "hairpin": "allow": traffic staying among the fenced interfaces passes.
 * "fence" (the default): it goes on to the DNS and port rules like any
 * other; only with "inbound": "deny", whose established accept carries
 * the original direction alone, the replies of a connection one fenced
 * workload opened to another (which the rules below let start) pass
 * (the reply direction, as iptables-save prints "--ctdir REPLY"). */
static int render_hairpin_open(const struct config *cfg, int family,
			       const char *ifn, struct fw_rules *r)
{
	int ret = 0;

	for (size_t k = 0; !ret && k < cfg->n_interfaces; k++) {
		const char *o = cfg->interfaces[k];

		if (cfg->hairpin_allow) {
			ret =
			    fw_rules_add(r, F "-i %s -o %s -j RETURN", ifn, o);
			continue;
		}
		if (cfg->hairpin_deny)
			continue;
		if (cfg->inbound_deny)
			ret =
			    fw_rules_add(r,
					 F "-i %s -o %s -m conntrack --ctstate "
					   "RELATED,ESTABLISHED --ctdir REPLY "
					   "-j RETURN",
					 ifn, o);
		/* Neighbour discovery between two containers of one bridge
		 * (br_netfilter hands the bridged frames to FORWARD): hop
		 * limit 255, so never a routed packet; without it their
		 * IPv6 connections the rules below allow would time out. */
		for (int t = 135; !ret && family == AF_INET6 && t <= 136; t++)
			ret = fw_rules_add(r,
					   F "-i %s -o %s " ND
					     "%d -m hl --hl-eq 255 -j RETURN",
					   ifn, o, t);
	}
	return ret;
}

/* One host_allow entry, "tcp/addr:port" as config.c normalized it. */
static int render_host_allow(const char *spec, int family, const char *ifn,
			     struct fw_rules *r)
{
	char proto[4], a[NETADDR_STRLEN];
	struct sockaddr_storage ss;
	const char *why = NULL;
	struct netaddr na;
	socklen_t len;

	snprintf(proto, sizeof(proto), "%.3s", spec);
	if (strlen(spec) < 5 ||
	    netaddr_parse_endpoint(spec + 4, true, 0, &ss, &len, &why) != 0 ||
	    !netaddr_from_sockaddr((const struct sockaddr *)&ss, &na))
		return -EINVAL;
	if (na.family != family)
		return 0;
	netaddr_format(&na, a, sizeof(a));
	return fw_rules_add(r,
			    IN "-d %s%s -i %s -p %s -m %s --dport %u -j ACCEPT",
			    a, family == AF_INET ? "/32" : "/128", ifn, proto,
			    proto, netaddr_port((const struct sockaddr *)&ss));
}

/* DNSFENCE-IN for traffic from ifn to any address of the host. */
static int render_in(const struct config *cfg, int family, const char *ifn,
		     struct fw_rules *r)
{
	char ifmatch[24];
	int ret = 0;

	snprintf(ifmatch, sizeof(ifmatch), "-i %s", ifn);
	if (family == AF_INET6)
		ret = fw_rules_add(r, IN "-i %s %s", ifn, fw_rules_rthdr(cfg));
	if (!ret)
		ret = fw_rules_add(
		    r,
		    IN "-i %s -m conntrack --ctstate RELATED,ESTABLISHED "
		       "%s-j ACCEPT",
		    ifn, inbound_dir(cfg));
	if (!ret && family == AF_INET6)
		ret = fw_rules_add(
		    r, IN "-i %s " ND "135 -m hl --hl-eq 255 -j ACCEPT", ifn);
	if (!ret && family == AF_INET6)
		ret = fw_rules_add(
		    r, IN "-i %s " ND "136 -m hl --hl-eq 255 -j ACCEPT", ifn);
	if (!ret)
		ret = render_listen(cfg, family, ifmatch, "ACCEPT", r);
	for (size_t i = 0; !ret && i < cfg->n_host_allow; i++)
		ret = render_host_allow(cfg->host_allow[i], family, ifn, r);
	if (!ret && cfg->mode == CONFIG_MODE_AUDIT)
		return fw_rules_add(
		    r, IN "-i %s -j NFLOG --nflog-prefix " AUDIT, ifn);
	if (!ret)
		ret = fw_rules_add(
		    r, IN "-i %s -p tcp -j REJECT --reject-with tcp-reset",
		    ifn);
	if (!ret)
		ret = fw_rules_add(r, IN "-i %s -j REJECT --reject-with %s",
				   ifn, icmp_reject(family));
	return ret;
}

/* The address of an endpoint of family, formatted into a; false when it
 * is of the other family. */
static bool endpoint_text(const struct config_endpoint *e, int family, char *a,
			  size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)&e->sa;
	struct netaddr na;

	if (sa->sa_family != family || !netaddr_from_sockaddr(sa, &na))
		return false;
	netaddr_format(&na, a, len);
	return true;
}

/* DNS to each listen address of family, UDP and TCP, from the packets
 * ifmatch names ("-i IFACE": a fenced interface's, accepted; "! -i lo"
 * after every interface's block: any other interface's, so our listeners
 * answer the fenced interfaces and the host itself only), to target. */
static int render_listen(const struct config *cfg, int family,
			 const char *ifmatch, const char *target,
			 struct fw_rules *r)
{
	static const char *const protos[] = {"udp", "tcp"};
	const char *host = family == AF_INET ? "/32" : "/128";
	char a[NETADDR_STRLEN];
	int ret = 0;

	for (size_t i = 0; !ret && i < cfg->n_listen; i++) {
		if (!endpoint_text(&cfg->listen[i], family, a, sizeof(a)))
			continue;
		for (size_t p = 0; !ret && p < 2; p++)
			ret = fw_rules_add(
			    r, IN "-d %s%s %s -p %s -m %s --dport %u -j %s", a,
			    host, ifmatch, protos[p], protos[p],
			    netaddr_port(
				(const struct sockaddr *)&cfg->listen[i].sa),
			    target);
	}
	return ret;
}

/* DNSFENCE-PRE for ifn: the sources of its own networks only (see the
 * file's note). With source_cidrs of this family, exactly those, and the
 * link-local and unspecified sources neighbour discovery uses (never
 * forwarded, answered only on the link). */
static int render_pre(const struct config *cfg, int family, const char *ifn,
		      struct fw_rules *r)
{
	bool audit = cfg->mode == CONFIG_MODE_AUDIT, listed = false;
	char c[NETADDR_STRLEN + 8];
	const char *m;
	int ret = 0;

	for (size_t k = 0; k < cfg->n_source_cidrs; k++)
		listed |= cfg->source_cidrs[k].addr.family == family;
	if (listed && family == AF_INET6)
		ret = fw_rules_add(r, PRE "-s fe80::/10 -i %s -j RETURN", ifn);
	if (!ret && listed && family == AF_INET6)
		ret = fw_rules_add(r, PRE "-s ::/128 -i %s -j RETURN", ifn);
	for (size_t k = 0; !ret && listed && k < cfg->n_source_cidrs; k++) {
		if (cfg->source_cidrs[k].addr.family != family)
			continue;
		netaddr_format_cidr(&cfg->source_cidrs[k], c, sizeof(c));
		ret = fw_rules_add(r, PRE "-s %s -i %s -j RETURN", c, ifn);
	}
	/* What is left: a sample for the log ("source ... is not of the
	 * fenced interface's networks"), as rule 9a of the output scope
	 * (audit: all of it, and nothing dropped), then the drop. */
	m = listed ? "" : "-m rpfilter --invert ";
	if (!ret)
		ret = fw_rules_add(r,
				   PRE "-i %s %s%s-j NFLOG --nflog-prefix " SRC,
				   ifn, m, audit ? "" : LIMIT);
	if (!ret && !audit)
		ret = fw_rules_add(r, PRE "-i %s %s-j DROP", ifn, m);
	return ret;
}

int fwfwd_pre_render(const struct config *cfg, int family, struct fw_rules *pre)
{
	int ret = 0;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (cfg->mode == CONFIG_MODE_OFF)
		return 0;
	for (size_t i = 0; !ret && i < cfg->n_interfaces; i++)
		ret = render_pre(cfg, family, cfg->interfaces[i], pre);
	return ret;
}

char *fwfwd_pre_text(const struct config *cfg, int family, const char *extra)
{
	struct fw_rules pre = {0};
	size_t len = 0, cap = 64 + strlen(extra);
	char *out = NULL;

	if (fwfwd_pre_render(cfg, family, &pre) < 0)
		goto out;
	for (size_t i = 0; i < pre.n; i++)
		cap += strlen(pre.v[i]) + 1;
	out = malloc(cap);
	if (!out)
		goto out;
	len +=
	    (size_t)snprintf(out, cap, "*raw\n:" FWFWD_PRE_CHAIN " - [0:0]\n");
	for (size_t i = 0; i < pre.n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\n", pre.v[i]);
	snprintf(out + len, cap - len, "%sCOMMIT\n", extra);
out:
	fw_rules_free(&pre);
	return out;
}

char *fwfwd_tables_text(const struct config *cfg, int family,
			const char *raw_extra)
{
	char *pre = fwfwd_pre_text(cfg, family, raw_extra);
	char *filter = fwfwd_rules_text(cfg, family);
	char *out = NULL;

	if (pre && filter && asprintf(&out, "%s%s", pre, filter) < 0)
		out = NULL;
	free(pre);
	free(filter);
	return out;
}

int fwfwd_rules_render(const struct config *cfg, int family,
		       struct fw_rules *fwd, struct fw_rules *in)
{
	char fp[PROVENANCE_HEXLEN];
	int ret;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (cfg->mode == CONFIG_MODE_OFF)
		return 0;
	ret = provenance_fingerprint(cfg, fp);
	for (size_t i = 0; !ret && i < cfg->n_interfaces; i++)
		ret = render_fwd(cfg, family, cfg->interfaces[i], fp, fwd);
	for (size_t i = 0; !ret && i < cfg->n_interfaces; i++)
		ret = render_in(cfg, family, cfg->interfaces[i], in);
	if (!ret)
		ret = render_listen(cfg, family, "! -i lo",
				    cfg->mode == CONFIG_MODE_AUDIT
					? "NFLOG --nflog-prefix " AUDIT
					: "DROP",
				    in);
	return ret;
}

char *fwfwd_rules_text(const struct config *cfg, int family)
{
	struct fw_rules fwd = {0}, in = {0};
	size_t len = 0, cap = 128;
	char *out = NULL;

	if (fwfwd_rules_render(cfg, family, &fwd, &in) < 0)
		goto out;
	for (size_t i = 0; i < fwd.n; i++)
		cap += strlen(fwd.v[i]) + 1;
	for (size_t i = 0; i < in.n; i++)
		cap += strlen(in.v[i]) + 1;
	out = malloc(cap);
	if (!out)
		goto out;
	len += (size_t)snprintf(out, cap,
				"*filter\n:" FWFWD_CHAIN " - [0:0]\n"
				":" FWFWD_IN_CHAIN " - [0:0]\n");
	for (size_t i = 0; i < fwd.n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\n", fwd.v[i]);
	for (size_t i = 0; i < in.n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\n", in.v[i]);
	snprintf(out + len, cap - len, "COMMIT\n");
out:
	fw_rules_free(&fwd);
	fw_rules_free(&in);
	return out;
}
