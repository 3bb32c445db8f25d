// SPDX-License-Identifier: GPL-2.0-or-later
/* firewall: the egress fence as iptables/ip6tables rules.
 *
 * The rules are rendered as text exactly as `iptables-save -t filter`
 * prints them (match order, "-m udp" after "-p udp", "/32" on -d but not
 * on --ctorigdst, the default --reject-with spelled out), so that one
 * renderer serves three purposes: the iptables-restore input of
 * fw_apply, the expected lines of fw_check, and the unit tests. The
 * canonical forms were found by applying and saving with iptables 1.8.9
 * (nft and legacy print the same) and are listed in docs/firewall.md.
 *
 * Everything we own is the chain DNSFENCE-OUT, one jump to it as the
 * first rule of OUTPUT, and OUTPUT's policy (DROP). In an iptables-restore
 * --noflush transaction the line ":DNSFENCE-OUT - [0:0]" creates or
 * flushes our chain (verified for iptables-nft and -legacy 1.8.9), and
 * the jump is (re)inserted only when it is not already there exactly
 * once and first, so a second setup is a no-op and each family's change
 * is one atomic kernel transaction. Other rules in OUTPUT are never
 * touched; since our chain ends in a reject, its verdict is final.
 *
 * fw_apply verifies by running the same comparison as fw_check, so a
 * rule the kernel silently did not take fails setup (invariant 7). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "dnsfence/firewall.h"
#include "dnsfence/fwexec.h"
#include "dnsfence/log.h"
#include "dnsfence/netaddr.h"
#include "dnsfence/sets.h"

#define RULE_MAX      512
#define MULTIPORT_MAX 15 /* xt_multiport slots; a range takes two */
#define AUDIT_PREFIX  "dnsfence-audit"
/* Enforce mode: what the rejects drop is also copied to NFLOG for the
 * daemon's attribution (nflog.c), at most this often per rule, so that
 * a flood costs the daemon a bounded amount of work. */
#define BLOCK_NFLOG                                                            \
	"-m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix "
#define JUMP_LINE  "-A OUTPUT -j " FW_CHAIN
#define CHAIN_RULE "-A " FW_CHAIN " "

struct strv {
	char **v;
	size_t n, cap;
};

/* What one family's `iptables-save -t filter` says about our pieces. */
struct saved {
	char policy[16];   /* OUTPUT's policy; "" when not listed */
	bool chain;	   /* ":DNSFENCE-OUT" is declared */
	int jumps;	   /* exact "-A OUTPUT -j DNSFENCE-OUT" lines */
	int jump_pos;	   /* 1-based position of the first one in OUTPUT */
	struct strv rules; /* "-A DNSFENCE-OUT ..." lines, in order */
};

struct first_diff {
	char *buf;
	size_t len;
	int n;
};

static void strv_free(struct strv *s);
static int strv_push(struct strv *s, const char *line);
static int rule_add(struct strv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *fam_name(int family);
static int render_dns(const struct config *cfg, int family, uid_t uid,
		      struct strv *r);
static int render_ports(const struct config *cfg, int family, const char *set,
			struct strv *r);
static int render_rules(const struct config *cfg, int family, uid_t uid,
			struct strv *r);
static int parse_saved(const char *text, struct saved *sv);
static void say(void (*report)(void *, const char *), void *arg,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int compare(const struct config *cfg, int family, uid_t uid,
		   const char *saved, void (*report)(void *, const char *),
		   void *arg);
static void keep_first(void *arg, const char *line);
static int save_family(enum fwexec_backend b, int family, char **text,
		       char *err, size_t errlen);
static void restore_error(int family, enum fwexec_backend b, const char *input,
			  const char *stderr_text, char *err, size_t errlen);
static int restore_family(enum fwexec_backend b, int family, const char *input,
			  char *err, size_t errlen);
static int apply_family(const struct config *cfg, int family, uid_t uid,
			enum fwexec_backend b, char *err, size_t errlen);
static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen);

static const int families[] = {AF_INET, AF_INET6};

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int strv_push(struct strv *s, const char *line)
{
	char *dup;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **v = reallocarray(s->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	dup = strdup(line);
	if (!dup)
		return -ENOMEM;
	s->v[s->n++] = dup;
	return 0;
}

/* Append one rule; a rule equal to an earlier one (a listen address or
 * upstream given twice) is dropped, as the kernel would match it once. */
static int rule_add(struct strv *s, const char *fmt, ...)
{
	char line[RULE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -E2BIG;
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->v[i], line) == 0)
			return 0;
	}
	return strv_push(s, line);
}

static const char *fam_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

/* Upstream DNS for our uid only, matched on the conntrack original
 * destination (Docker DNATs 127.0.0.11:53 to another port); our own
 * listeners for anyone; every other DNS refused before the loopback
 * accept (audit: logged, then let through). */
static int render_dns(const struct config *cfg, int family, uid_t uid,
		      struct strv *r)
{
	static const char *const protos[] = {"udp", "tcp"};
	const char *host = family == AF_INET ? "/32" : "/128";
	const char *icmp = family == AF_INET ? "icmp-admin-prohibited"
					     : "icmp6-adm-prohibited";
	char a[NETADDR_STRLEN];
	struct netaddr na;
	int ret = 0;

	for (size_t i = 0; i < cfg->n_upstreams && !ret; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&cfg->upstreams[i].sa;
		unsigned port = netaddr_port(sa);

		if (sa->sa_family != family || !netaddr_from_sockaddr(sa, &na))
			continue;
		netaddr_format(&na, a, sizeof(a));
		for (size_t p = 0; p < 2 && !ret; p++)
			ret =
			    rule_add(r,
				     CHAIN_RULE "-p %s -m owner --uid-owner %u "
						"-m conntrack --ctorigdst %s "
						"--ctorigdstport %u -j ACCEPT",
				     protos[p], (unsigned)uid, a, port);
	}
	for (size_t i = 0; i < cfg->n_listen && !ret; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&cfg->listen[i].sa;
		unsigned port = netaddr_port(sa);
		static const uint8_t zero[16];

		if (sa->sa_family != family || !netaddr_from_sockaddr(sa, &na))
			continue;
		netaddr_format(&na, a, sizeof(a));
		for (size_t p = 0; p < 2 && !ret; p++) {
			if (memcmp(na.bytes, zero, family == AF_INET ? 4 : 16))
				ret = rule_add(
				    r,
				    CHAIN_RULE "-d %s%s -p %s -m %s "
					       "--dport %u -j ACCEPT",
				    a, host, protos[p], protos[p], port);
			else /* wildcard listener: any local address */
				ret =
				    rule_add(r,
					     CHAIN_RULE
					     "-p %s -m addrtype --dst-type "
					     "LOCAL -m %s --dport %u -j ACCEPT",
					     protos[p], protos[p], port);
		}
	}
	for (size_t p = 0; p < 2 && !ret; p++) {
		if (cfg->mode == CONFIG_MODE_AUDIT) {
			ret =
			    rule_add(r,
				     CHAIN_RULE "-p %s -m conntrack "
						"--ctorigdstport 53 -j NFLOG "
						"--nflog-prefix " AUDIT_PREFIX,
				     protos[p]);
			if (!ret)
				ret = rule_add(r,
					       CHAIN_RULE
					       "-p %s -m conntrack "
					       "--ctorigdstport 53 -j ACCEPT",
					       protos[p]);
		} else {
			ret = rule_add(r,
				       CHAIN_RULE
				       "-p %s -m conntrack "
				       "--ctorigdstport 53 " BLOCK_NFLOG
				       "dnsfence-dns",
				       protos[p]);
			if (!ret)
				ret = rule_add(
				    r,
				    CHAIN_RULE "-p %s -m conntrack "
					       "--ctorigdstport 53 -j REJECT "
					       "--reject-with %s",
				    protos[p], p ? "tcp-reset" : icmp);
		}
	}
	return ret;
}

/* Set members and allow_cidrs on the configured ports, one rule per
 * protocol and per run of at most 15 multiport slots. */
static int render_ports(const struct config *cfg, int family, const char *set,
			struct strv *r)
{
	static const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP};
	char list[16 * 12], c[NETADDR_STRLEN + 8];
	size_t i = 0;
	int ret = 0;

	for (size_t p = 0; p < 2 && !ret; p++) {
		const char *pn = protos[p] == IPPROTO_TCP ? "tcp" : "udp";

		for (i = 0; i < cfg->n_ports && !ret;) {
			size_t len = 0;
			int slots = 0;

			list[0] = '\0';
			for (; i < cfg->n_ports; i++) {
				const struct config_port *cp = &cfg->ports[i];
				int w = cp->first == cp->last ? 1 : 2;

				if (cp->proto != protos[p])
					continue;
				if (slots + w > MULTIPORT_MAX)
					break;
				len += (size_t)snprintf(
				    list + len, sizeof(list) - len,
				    cp->first == cp->last ? "%s%u" : "%s%u:%u",
				    len ? "," : "", (unsigned)cp->first,
				    (unsigned)cp->last);
				slots += w;
			}
			if (!slots)
				break;
			ret =
			    rule_add(r,
				     CHAIN_RULE "-p %s -m set --match-set %s "
						"dst -m multiport --dports %s "
						"-j ACCEPT",
				     pn, set, list);
			for (size_t k = 0; k < cfg->n_allow_cidrs && !ret;
			     k++) {
				if (cfg->allow_cidrs[k].addr.family != family)
					continue;
				netaddr_format_cidr(&cfg->allow_cidrs[k], c,
						    sizeof(c));
				ret = rule_add(r,
					       CHAIN_RULE
					       "-d %s -p %s -m multiport "
					       "--dports %s -j ACCEPT",
					       c, pn, list);
			}
		}
	}
	return ret;
}

static int render_rules(const struct config *cfg, int family, uid_t uid,
			struct strv *r)
{
	const char *set = family == AF_INET ? cfg->set4 : cfg->set6;
	int ret;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (!sets_name_valid(set))
		return -EINVAL;
	if (cfg->mode == CONFIG_MODE_OFF)
		return 0;
	ret = rule_add(r, CHAIN_RULE "-m conntrack --ctstate "
				     "RELATED,ESTABLISHED -j ACCEPT");
	/* Neighbour discovery (and the MLD reports that keep solicited-node
	 * groups alive on snooping bridges), link-local only: RFC 4861
	 * packets carry hop limit 255, MLD hop limit 1. */
	if (!ret && family == AF_INET6) {
		static const struct {
			int type, hl;
		} nd[] = {{133, 255}, {135, 255}, {136, 255}, {143, 1}};

		for (size_t i = 0; i < 4 && !ret; i++)
			ret = rule_add(r,
				       CHAIN_RULE "-p ipv6-icmp -m icmp6 "
						  "--icmpv6-type %d -m hl "
						  "--hl-eq %d -j ACCEPT",
				       nd[i].type, nd[i].hl);
	}
	if (!ret)
		ret = render_dns(cfg, family, uid, r);
	if (!ret)
		ret = rule_add(r, CHAIN_RULE "-o lo -j ACCEPT");
	if (!ret)
		ret = render_ports(cfg, family, set, r);
	if (ret)
		return ret;
	if (cfg->mode == CONFIG_MODE_AUDIT) {
		ret = rule_add(r, CHAIN_RULE
			       "-j NFLOG --nflog-prefix " AUDIT_PREFIX);
		if (!ret)
			ret = rule_add(r, CHAIN_RULE "-j ACCEPT");
	} else {
		ret = rule_add(r, CHAIN_RULE BLOCK_NFLOG "dnsfence-block");
		if (!ret)
			ret = rule_add(r, CHAIN_RULE "-p tcp -j REJECT "
						     "--reject-with tcp-reset");
		if (!ret)
			ret = rule_add(
			    r, CHAIN_RULE "-j REJECT --reject-with %s",
			    family == AF_INET ? "icmp-admin-prohibited"
					      : "icmp6-adm-prohibited");
	}
	return ret;
}

char *fw_render(const struct config *cfg, int family, uid_t uid)
{
	struct strv r = {0};
	size_t len = 0, cap;
	char *out = NULL;

	if (render_rules(cfg, family, uid, &r) < 0)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		out = strdup("# dnsfence: mode off installs no rules\n");
		goto out;
	}
	cap = 64 + strlen(FW_CHAIN);
	for (size_t i = 0; i < r.n; i++)
		cap += strlen(r.v[i]) + 1;
	out = malloc(cap);
	if (!out)
		goto out;
	len += (size_t)snprintf(
	    out, cap, "*filter\n:OUTPUT DROP\n:%s - [0:0]\n", FW_CHAIN);
	for (size_t i = 0; i < r.n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\n", r.v[i]);
	snprintf(out + len, cap - len, "COMMIT\n");
out:
	strv_free(&r);
	return out;
}

/* Only the filter table's OUTPUT and DNSFENCE-OUT lines matter. */
static int parse_saved(const char *text, struct saved *sv)
{
	const char *p = text ? text : "";
	bool filter = false;
	int out_rules = 0, ret = 0;

	memset(sv, 0, sizeof(*sv));
	while (*p && !ret) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[RULE_MAX * 2];

		while (len && (p[len - 1] == ' ' || p[len - 1] == '\r'))
			len--;
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		p = eol ? eol + 1 : p + strlen(p);
		if (line[0] == '*') {
			filter = strcmp(line, "*filter") == 0;
		} else if (!filter) {
			continue;
		} else if (strncmp(line, ":OUTPUT ", 8) == 0) {
			sscanf(line + 8, "%15s", sv->policy);
		} else if (strncmp(line, ":" FW_CHAIN " ",
				   strlen(FW_CHAIN) + 2) == 0) {
			sv->chain = true;
		} else if (strncmp(line, "-A OUTPUT ", 10) == 0) {
			out_rules++;
			if (strcmp(line, JUMP_LINE) == 0 && !sv->jumps++)
				sv->jump_pos = out_rules;
		} else if (strncmp(line, CHAIN_RULE, strlen(CHAIN_RULE)) == 0) {
			ret = strv_push(&sv->rules, line);
		}
	}
	if (ret)
		strv_free(&sv->rules);
	return ret;
}

static void say(void (*report)(void *, const char *), void *arg,
		const char *fmt, ...)
{
	char line[RULE_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (report)
		report(arg, line);
}

static int compare(const struct config *cfg, int family, uid_t uid,
		   const char *saved, void (*report)(void *, const char *),
		   void *arg)
{
	const char *fam = fam_name(family);
	struct strv want = {0};
	struct saved sv;
	bool *used = NULL;
	int ret, diffs = 0, missing = 0;

	ret = parse_saved(saved, &sv);
	if (ret)
		return ret;
	ret = render_rules(cfg, family, uid, &want);
	if (ret)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		if (sv.chain && ++diffs)
			say(report, arg, "%s: mode is off but chain %s exists",
			    fam, FW_CHAIN);
		if (sv.jumps && ++diffs)
			say(report, arg,
			    "%s: mode is off but OUTPUT jumps to %s", fam,
			    FW_CHAIN);
		goto out;
	}
	if (strcmp(sv.policy, "DROP") != 0 && ++diffs)
		say(report, arg, "%s: OUTPUT policy is %s, expected DROP", fam,
		    sv.policy[0] ? sv.policy : "ACCEPT (no filter table)");
	if (sv.jumps == 0 && ++diffs)
		say(report, arg, "%s: jump from OUTPUT to %s missing", fam,
		    FW_CHAIN);
	else if (sv.jumps > 1 && ++diffs)
		say(report, arg, "%s: jump from OUTPUT to %s appears %d times",
		    fam, FW_CHAIN, sv.jumps);
	else if (sv.jump_pos != 1 && ++diffs)
		say(report, arg,
		    "%s: jump from OUTPUT to %s is rule %d of OUTPUT, expected "
		    "1 (rules before it bypass the fence)",
		    fam, FW_CHAIN, sv.jump_pos);
	if (!sv.chain) {
		diffs++;
		say(report, arg, "%s: chain %s missing", fam, FW_CHAIN);
		goto out;
	}
	used = calloc(sv.rules.n + 1, sizeof(*used));
	if (!used) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < want.n; i++) {
		size_t j = 0;

		while (j < sv.rules.n &&
		       (used[j] || strcmp(sv.rules.v[j], want.v[i]) != 0))
			j++;
		if (j < sv.rules.n) {
			used[j] = true;
			continue;
		}
		missing++;
		say(report, arg, "%s: rule missing: %s", fam, want.v[i]);
	}
	for (size_t j = 0; j < sv.rules.n; j++) {
		if (!used[j] && ++missing)
			say(report, arg, "%s: unexpected rule in %s: %s", fam,
			    FW_CHAIN, sv.rules.v[j]);
	}
	diffs += missing;
	for (size_t i = 0; !missing && i < want.n; i++) {
		if (strcmp(sv.rules.v[i], want.v[i]) != 0) {
			diffs++;
			say(report, arg,
			    "%s: rules of %s out of order: rule %zu is %s, "
			    "expected %s",
			    fam, FW_CHAIN, i + 1, sv.rules.v[i], want.v[i]);
			break;
		}
	}
out:
	free(used);
	strv_free(&want);
	strv_free(&sv.rules);
	return ret ? ret : diffs;
}

int fw_compare(const struct config *cfg, int family, uid_t uid,
	       const char *saved, void (*report)(void *arg, const char *line),
	       void *arg)
{
	return compare(cfg, family, uid, saved, report, arg);
}

static void keep_first(void *arg, const char *line)
{
	struct first_diff *fd = arg;

	if (fd->n++ == 0)
		snprintf(fd->buf, fd->len, "%s", line);
}

static int save_family(enum fwexec_backend b, int family, char **text,
		       char *err, size_t errlen)
{
	static const char *const args[] = {"-t", "filter", NULL};
	const char *name = fwexec_name(b, family, FWEXEC_SAVE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, NULL, text, &stderr_text);

	if (ret)
		snprintf(err, errlen, "%s: cannot read rules with %s: %s",
			 fam_name(family), name,
			 stderr_text ? stderr_text : strerror(-ret));
	free(stderr_text);
	return ret;
}

/* "ipv4: iptables-nft-restore rejected line 7 (-A ...): <its message>".
 * iptables-restore reports "Error occurred at line: N" on stderr. */
static void restore_error(int family, enum fwexec_backend b, const char *input,
			  const char *stderr_text, char *err, size_t errlen)
{
	const char *msg = stderr_text ? stderr_text : "";
	const char *at = strstr(msg, "line: ");
	char first[256] = "", text[RULE_MAX] = "";
	unsigned long lineno = at ? strtoul(at + 6, NULL, 10) : 0;

	while (*msg == '\n')
		msg++;
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(msg, "\n"), msg);
	for (unsigned long n = 1; lineno && input && *input; n++) {
		size_t len = strcspn(input, "\n");

		if (n == lineno) {
			snprintf(text, sizeof(text), " (%.*s)", (int)len,
				 input);
			break;
		}
		input += len + (input[len] ? 1 : 0);
	}
	if (lineno)
		snprintf(err, errlen, "%s: %s rejected line %lu%s: %s",
			 fam_name(family),
			 fwexec_name(b, family, FWEXEC_RESTORE), lineno, text,
			 first);
	else
		snprintf(err, errlen, "%s: %s failed: %s", fam_name(family),
			 fwexec_name(b, family, FWEXEC_RESTORE),
			 first[0] ? first : "exit status non-zero");
}

static int restore_family(enum fwexec_backend b, int family, const char *input,
			  char *err, size_t errlen)
{
	static const char *const args[] = {"-w", "5", "--noflush", NULL};
	const char *name = fwexec_name(b, family, FWEXEC_RESTORE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, input, NULL, &stderr_text);

	if (ret == -EPROTO)
		restore_error(family, b, input, stderr_text, err, errlen);
	else if (ret)
		snprintf(err, errlen, "%s: cannot run %s: %s", fam_name(family),
			 name, strerror(-ret));
	free(stderr_text);
	return ret;
}

/* Our chain (flushed and refilled by its ":" line), OUTPUT's policy, and
 * the jump: left alone when it is already there once and first; otherwise
 * every copy is deleted and one inserted first, in the same transaction. */
static int apply_family(const struct config *cfg, int family, uid_t uid,
			enum fwexec_backend b, char *err, size_t errlen)
{
	char *saved = NULL, *rules = NULL, *input = NULL;
	struct saved sv = {0};
	size_t len, cap;
	int ret;

	ret = save_family(b, family, &saved, err, errlen);
	if (ret)
		goto out;
	ret = parse_saved(saved, &sv);
	if (ret)
		goto out;
	rules = fw_render(cfg, family, uid);
	if (!rules) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: cannot render the rules",
			 fam_name(family));
		goto out;
	}
	len = strlen(rules) - strlen("COMMIT\n");
	cap = len + (size_t)(sv.jumps + 1) * 64 + 16;
	input = malloc(cap);
	if (!input) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(input, rules, len);
	if (sv.jumps != 1 || sv.jump_pos != 1) {
		for (int i = 0; i < sv.jumps; i++)
			len += (size_t)snprintf(input + len, cap - len,
						"-D OUTPUT -j %s\n", FW_CHAIN);
		len += (size_t)snprintf(input + len, cap - len,
					"-I OUTPUT 1 -j %s\n", FW_CHAIN);
	}
	snprintf(input + len, cap - len, "COMMIT\n");
	ret = restore_family(b, family, input, err, errlen);
out:
	strv_free(&sv.rules);
	free(saved);
	free(rules);
	free(input);
	return ret;
}

int fw_apply(const struct config *cfg, uid_t uid, char *err, size_t errlen)
{
	enum fwexec_backend b;
	char diff[RULE_MAX + 128];
	int ret;

	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("firewall", "mode off: no firewall rules installed");
		return 0;
	}
	ret = fwexec_backend(&b, err, errlen);
	if (ret)
		return ret;
	log_debug("firewall", "using %s", fwexec_backend_name(b));
	for (size_t i = 0; i < 2; i++) {
		ret = apply_family(cfg, families[i], uid, b, err, errlen);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < 2; i++) {
		struct first_diff fd = {diff, sizeof(diff), 0};
		char *saved = NULL;

		ret = save_family(b, families[i], &saved, err, errlen);
		if (!ret)
			ret = compare(cfg, families[i], uid, saved, keep_first,
				      &fd);
		free(saved);
		if (ret > 0) {
			snprintf(err, errlen,
				 "rules not in place after %s-restore: %s (%d "
				 "difference%s)",
				 fwexec_backend_name(b), diff, ret,
				 ret == 1 ? "" : "s");
			return -EIO;
		}
		if (ret < 0)
			return ret;
	}
	log_info("firewall", "%s rules installed (%s)",
		 config_mode_name(cfg->mode), fwexec_backend_name(b));
	return 0;
}

int fw_check(const struct config *cfg, uid_t uid,
	     void (*report)(void *arg, const char *line), void *arg)
{
	enum fwexec_backend b;
	char err[512];
	int ret, diffs = 0;

	ret = fwexec_backend(&b, err, sizeof(err));
	if (ret == -EEXIST) {
		say(report, arg, "%s", err);
		return 1;
	}
	if (ret) {
		log_err("firewall", "%s", err);
		return ret;
	}
	for (size_t i = 0; i < 2; i++) {
		char *saved = NULL;

		ret = save_family(b, families[i], &saved, err, sizeof(err));
		if (!ret)
			ret =
			    compare(cfg, families[i], uid, saved, report, arg);
		free(saved);
		if (ret < 0) {
			log_err("firewall", "%s", err);
			return ret;
		}
		diffs += ret;
	}
	return diffs ? 1 : 0;
}

static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen)
{
	char *saved = NULL, input[1024];
	struct saved sv = {0};
	size_t len;
	int ret;

	ret = save_family(b, family, &saved, err, errlen);
	if (!ret)
		ret = parse_saved(saved, &sv);
	if (ret)
		goto out;
	len =
	    (size_t)snprintf(input, sizeof(input), "*filter\n:OUTPUT ACCEPT\n");
	for (int i = 0; i < sv.jumps && i < 16; i++)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					"-D OUTPUT -j %s\n", FW_CHAIN);
	if (sv.chain)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					":%s - [0:0]\n-X %s\n", FW_CHAIN,
					FW_CHAIN);
	snprintf(input + len, sizeof(input) - len, "COMMIT\n");
	ret = restore_family(b, family, input, err, errlen);
out:
	strv_free(&sv.rules);
	free(saved);
	return ret;
}

/* Works on the backend holding rules; when both do (a half-migrated
 * namespace), on both, so teardown can clean up what setup refuses. */
int fw_remove(char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret, first = 0, last = 0;

	ret = fwexec_backend(&b, err, errlen);
	if (ret == -EEXIST) {
		first = FWEXEC_NFT;
		last = FWEXEC_LEGACY;
	} else if (ret) {
		return ret;
	} else {
		first = last = (int)b;
	}
	for (int k = first; k <= last; k++) {
		for (size_t i = 0; i < 2; i++) {
			ret = remove_family((enum fwexec_backend)k, families[i],
					    err, errlen);
			if (ret)
				return ret;
		}
	}
	return 0;
}
