// SPDX-License-Identifier: GPL-2.0-or-later
/* fwsubject: the output fence for named subjects (config "subjects"):
 * which OUTPUT packets enter the fence, and where the subjects' DNS goes.
 *
 * Without subjects one jump, "-A OUTPUT -j DNSFENCE-OUT", first in OUTPUT,
 * sends every packet of the namespace into the fence, and OUTPUT's policy
 * is DROP. With subjects OUTPUT's policy is left as it is and the first
 * rules of OUTPUT jump only the subjects' packets there: one owner match
 * per uid, one per gid (supplementary groups too), one cgroup match per
 * cgroup v2 path. The kernel sends group reports (IGMP, MLD) for a
 * socket's joins without the socket's owner, so those of every process
 * enter the fence too: a subject could otherwise announce groups of its
 * choosing on the link (invariant 6); DNSFENCE-OUT lets out only what
 * neighbour discovery needs, as for a whole-namespace fence.
 *
 * The subjects' DNS, to whatever resolver they were given (Docker's
 * 127.0.0.11 included), is DNATed to our listener by the chain
 * DNSFENCE-DNS of the nat table, jumped to first in nat OUTPUT (ahead of
 * Docker's DOCKER_OUTPUT): the policy answers it, and nothing of theirs
 * reaches another resolver. Everyone else keeps its resolver.
 *
 * The jumps of one table are compared and fixed as one list (struct
 * fw_jumps): exactly the wanted lines, once each, as the first rules of
 * OUTPUT in order; anything else jumping to our chain is deleted. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fence/fwsubject.h"
#include "base/netaddr.h"

#define OUT_A "-A OUTPUT "

static int push_jump(struct fw_rules *out, const char *match,
		     const char *chain);
static bool listener_of(const struct config *cfg, int family, char *to,
			size_t len);
static char *delete_lines(const struct fw_jumps *have);
static int port53_rules(const struct config *cfg, int family, const char *chain,
			bool to_listener, struct fw_rules *r);

static void say(void (*report)(void *arg, const char *line), void *arg,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static const char *family_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

static void say(void (*report)(void *arg, const char *line), void *arg,
		const char *fmt, ...)
{
	char line[FW_RULE_MAX + 160];
	va_list ap;

	if (report == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	report(arg, line);
}

static int push_jump(struct fw_rules *out, const char *match, const char *chain)
{
	return fw_rules_add(out, OUT_A "%s%s-j %s", match, *match ? " " : "",
			    chain);
}

int fwsubject_only_jumps(const struct config *cfg, const char *chain,
			 struct fw_rules *out)
{
	char m[FW_RULE_MAX];
	int ret = 0;

	for (size_t i = 0; !ret && i < cfg->n_subject_uids; i++) {
		snprintf(m, sizeof(m), "-m owner --uid-owner %u",
			 (unsigned)cfg->subject_uids[i]);
		ret = push_jump(out, m, chain);
	}
	for (size_t i = 0; !ret && i < cfg->n_subject_gids; i++) {
		snprintf(m, sizeof(m), "-m owner --gid-owner %u --suppl-groups",
			 (unsigned)cfg->subject_gids[i]);
		ret = push_jump(out, m, chain);
	}
	for (size_t i = 0; !ret && i < cfg->n_subject_cgroups; i++) {
		snprintf(m, sizeof(m), "-m cgroup --path \"%s\"",
			 cfg->subject_cgroups[i]);
		ret = push_jump(out, m, chain);
	}
	return ret;
}

int fwsubject_jumps(const struct config *cfg, int family, struct fw_rules *out)
{
	static const char *const mld[] = {"131", "132", "143"};
	char m[128];
	int ret;

	if (!config_has_subjects(cfg))
		return push_jump(out, "", FW_CHAIN);
	ret = fwsubject_only_jumps(cfg, FW_CHAIN, out);
	/* A socket a subject closed with data unacknowledged is orphaned:
	 * the kernel still sends from it, but it has no owner, so the owner
	 * matches above miss it. Every connection a subject opened carries
	 * the mark in its connmark (DNSFENCE-OUT sets it on the first
	 * packet), and its packets without a socket enter the fence too. */
	if (!ret) {
		snprintf(
		    m, sizeof(m),
		    "-m owner ! --socket-exists -m connmark --mark 0x%x/0x%x",
		    (unsigned)cfg->mark, (unsigned)cfg->mark);
		ret = push_jump(out, m, FW_CHAIN);
	}
	if (!ret && family == AF_INET)
		ret = push_jump(out, "-p igmp", FW_CHAIN);
	for (size_t i = 0; !ret && family == AF_INET6 && i < 3; i++) {
		snprintf(m, sizeof(m), "-p ipv6-icmp -m icmp6 --icmpv6-type %s",
			 mld[i]);
		ret = push_jump(out, m, FW_CHAIN);
	}
	return ret;
}

void fw_jumps_line(struct fw_jumps *j, const char *line, const char *chain)
{
	size_t n = strlen(line), c = strlen(chain);

	if (strncmp(line, OUT_A, strlen(OUT_A)) != 0)
		return;
	j->rules++;
	if (n < c + 4 || strcmp(line + n - c, chain) != 0 ||
	    strncmp(line + n - c - 4, " -j ", 4) != 0)
		return;
	if (j->lines.n < FW_JUMPS_MAX)
		j->pos[j->lines.n] = j->rules;
	if (fw_rules_push(&j->lines, line) != 0)
		j->oom = true;
}

int fw_jumps_compare(int family, const char *chain, const struct fw_rules *want,
		     const struct fw_jumps *have,
		     void (*report)(void *arg, const char *line), void *arg)
{
	const char *fam = family_name(family);
	bool one = want->n == 1;
	int diffs = 0;

	if (have->oom)
		return -ENOMEM;
	for (size_t i = 0; i < want->n; i++) {
		int seen = 0;

		for (size_t k = 0; k < have->lines.n; k++)
			seen += strcmp(have->lines.v[k], want->v[i]) == 0;
		if (seen == 1)
			continue;
		diffs++;
		if (seen == 0 && one)
			say(report, arg, "%s: jump from OUTPUT to %s missing",
			    fam, chain);
		else if (seen == 0)
			say(report, arg, "%s: jump missing: %s", fam,
			    want->v[i]);
		else
			say(report, arg,
			    "%s: jump from OUTPUT to %s appears %d times%s%s",
			    fam, chain, seen, one ? "" : ": ",
			    one ? "" : want->v[i]);
	}
	for (size_t k = 0; k < have->lines.n; k++) {
		size_t i;

		for (i = 0; i < want->n; i++) {
			if (strcmp(have->lines.v[k], want->v[i]) == 0)
				break;
		}
		if (i == want->n) {
			diffs++;
			say(report, arg, "%s: unexpected jump to %s: %s", fam,
			    chain, have->lines.v[k]);
		}
	}
	if (diffs)
		return diffs;
	for (size_t i = 0; i < want->n; i++) {
		if (strcmp(have->lines.v[i], want->v[i]) == 0 &&
		    i < FW_JUMPS_MAX && have->pos[i] == (int)i + 1)
			continue;
		if (one)
			say(report, arg,
			    "%s: jump from OUTPUT to %s is rule %d of "
			    "OUTPUT, expected 1 (rules before it bypass the "
			    "fence)",
			    fam, chain, have->pos[0]);
		else
			say(report, arg,
			    "%s: the %zu jumps from OUTPUT to %s are not "
			    "its first rules in order (rules before them "
			    "bypass the fence)",
			    fam, want->n, chain);
		return 1;
	}
	return 0;
}

/* "-D OUTPUT <spec>" for each line of have. */
static char *delete_lines(const struct fw_jumps *have)
{
	size_t cap = 1, len = 0;
	char *buf;

	for (size_t k = 0; k < have->lines.n; k++)
		cap += strlen(have->lines.v[k]) + 2;
	buf = malloc(cap);
	if (buf == NULL)
		return NULL;
	buf[0] = '\0';
	for (size_t k = 0; k < have->lines.n; k++)
		len += (size_t)snprintf(buf + len, cap - len, "-D OUTPUT %s\n",
					have->lines.v[k] + strlen(OUT_A));
	return buf;
}

char *fw_jumps_fixes(const struct fw_rules *want, const struct fw_jumps *have)
{
	char *del, *buf;
	size_t cap, len;

	bool cgroup = false;

	/* The kernel resolves a cgroup path when the rule is inserted: a
	 * cgroup removed and made again (a unit restarted) is another
	 * cgroup, which the old rule, same text, does not match. So every
	 * apply inserts cgroup jumps afresh. */
	for (size_t i = 0; i < want->n; i++)
		cgroup = cgroup || strstr(want->v[i], " -m cgroup ") != NULL;
	if (!cgroup &&
	    fw_jumps_compare(AF_INET, "", want, have, NULL, NULL) == 0)
		return strdup("");
	del = delete_lines(have);
	if (del == NULL)
		return NULL;
	cap = strlen(del) + 1;
	for (size_t i = 0; i < want->n; i++)
		cap += strlen(want->v[i]) + 16;
	buf = malloc(cap);
	if (buf != NULL) {
		len = (size_t)snprintf(buf, cap, "%s", del);
		for (size_t i = 0; i < want->n; i++)
			len += (size_t)snprintf(buf + len, cap - len,
						"-I OUTPUT %zu %s\n", i + 1,
						want->v[i] + strlen(OUT_A));
	}
	free(del);
	return buf;
}

char *fw_jumps_deletes(const struct fw_jumps *have)
{
	return delete_lines(have);
}

void fw_jumps_free(struct fw_jumps *j)
{
	fw_rules_free(&j->lines);
	memset(j, 0, sizeof(*j));
}

/* The address:port the subjects' DNS of family goes to: the first
 * listener of that family (a wildcard one as loopback). */
static bool listener_of(const struct config *cfg, int family, char *to,
			size_t len)
{
	for (size_t i = 0; i < cfg->n_listen; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&cfg->listen[i].sa;
		char a[NETADDR_STRLEN];
		struct netaddr na;
		static const uint8_t zero[16];

		if (sa->sa_family != family || !netaddr_from_sockaddr(sa, &na))
			continue;
		if (memcmp(na.bytes, zero, family == AF_INET ? 4 : 16) == 0)
			snprintf(a, sizeof(a), "%s",
				 family == AF_INET ? "127.0.0.1" : "::1");
		else
			netaddr_format(&na, a, sizeof(a));
		snprintf(to, len, family == AF_INET ? "%s:%u" : "[%s]:%u", a,
			 netaddr_port(sa));
		return true;
	}
	return false;
}

/* Port 53, udp and tcp, of the subjects' packets, sent to target in
 * chain: none without subjects, in mode off, or with no listener of the
 * family (the DNAT's destination, which the zone exists for). */
static int port53_rules(const struct config *cfg, int family, const char *chain,
			bool to_listener, struct fw_rules *r)
{
	static const char *const protos[] = {"udp", "tcp"};
	char to[NETADDR_STRLEN + 16], target[NETADDR_STRLEN + 48];
	int ret = 0;

	if (!config_has_subjects(cfg) || cfg->mode == CONFIG_MODE_OFF ||
	    !listener_of(cfg, family, to, sizeof(to)))
		return 0;
	if (to_listener)
		snprintf(target, sizeof(target), "DNAT --to-destination %s",
			 to);
	else
		snprintf(target, sizeof(target), "CT --zone-orig %u",
			 (unsigned)FWSUBJECT_CT_ZONE);
	for (size_t p = 0; !ret && p < 2; p++)
		ret = fw_rules_add(r, "-A %s -p %s -m %s --dport 53 -j %s",
				   chain, protos[p], protos[p], target);
	return ret;
}

int fwsubject_nat_rules(const struct config *cfg, int family,
			struct fw_rules *r)
{
	return port53_rules(cfg, family, FWSUBJECT_NAT_CHAIN, true, r);
}

/* The DNAT lives in the flow's conntrack entry, which outlives the
 * socket (30 s for one UDP question and answer, longer for TCP), and the
 * kernel finds an entry by its four-tuple alone. A port is free again
 * when its socket closes: without a zone of their own another process
 * whose new socket draws a port a subject just used sends into the
 * subject's entry and is answered by us, and a subject on a port another
 * process just used sends into that entry, past the DNAT, and the fence
 * drops it. --zone-orig keeps the answers (from our listener, in the
 * default zone) finding the entry by its reply tuple. */
int fwsubject_zone_rules(const struct config *cfg, int family,
			 struct fw_rules *r)
{
	return port53_rules(cfg, family, FWSUBJECT_ZONE_CHAIN, false, r);
}
