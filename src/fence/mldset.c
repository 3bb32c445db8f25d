// SPDX-License-Identifier: GPL-2.0-or-later
/* mldset: rule 4's MLD reports, held to the namespace's own addresses
 * (invariant 6).
 *
 * For each IPv6 address it holds, the kernel joins the solicited-node
 * group ff02::1:ffXX:XXXX (XX:XXXX the address's low 24 bits) and
 * announces it in an MLD report, which snooping bridges and switches
 * need before they deliver neighbour solicitations to the namespace. An
 * unprivileged process may join such a group too (IPV6_JOIN_GROUP), and
 * its report would carry 24 bits of the process's choosing to the
 * link's other hosts, a join at a time. So rule 4 lets out a report only
 * for a group in the set "<sets.ipv6>-mld", and this module keeps that
 * set exactly the groups of the addresses on the namespace's interfaces
 * (getifaddrs, tentative and link-local ones included) and of its
 * anycast addresses (/proc/net/anycast6; joining one takes
 * CAP_NET_ADMIN). A group shared by two addresses stays while either
 * does.
 *
 * setup fills it before the rules that name it go in, and the daemon's
 * parent syncs it once a second against the kernel's own list of
 * members, so a flush is repaired too. An address added meanwhile has
 * its first report dropped; the kernel repeats an unsolicited MLDv1
 * report within mldv1_unsolicited_report_interval (10 s) and answers
 * every query. */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "fence/mldset.h"
#include "sets/setsadm.h"

#define SYS "mld"

struct groups {
	struct netaddr a[MLDSET_MAX];
	size_t n;
	bool full;
};

static void put(struct groups *g, const struct netaddr *group);
static bool has(const struct groups *g, const struct netaddr *group);
static void add_member(void *arg, const struct netaddr *a);
static void own_groups(struct groups *g);
static void anycast_groups(struct groups *g);
static int apply(const char *name, const struct groups *want,
		 const struct groups *have, char *err, size_t errlen);

void mldset_name(const struct config *cfg, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.27s-mld", cfg->set6);
}

void mldset_group(const struct netaddr *a, struct netaddr *group)
{
	static const uint8_t prefix[13] = {0xff, 0x02, 0, 0, 0, 0,   0,
					   0,	 0,    0, 0, 1, 0xff};

	group->family = AF_INET6;
	memcpy(group->bytes, prefix, sizeof(prefix));
	memcpy(group->bytes + 13, a->bytes + 13, 3);
}

int mldset_sync(const struct config *cfg, char *err, size_t errlen)
{
	static struct groups want, have;
	char name[MLDSET_NAME_MAX];
	int r;

	mldset_name(cfg, name, sizeof(name));
	r = setsadm_create_plain(name, MLDSET_MAX, err, errlen);
	if (r < 0)
		return r;
	want.n = have.n = 0;
	want.full = have.full = false;
	own_groups(&want);
	anycast_groups(&want);
	if (want.full)
		log_limited(LOG_CLASS_SETS, LOGL_WARN, SYS,
			    "more than %d solicited-node groups: the reports "
			    "of the others stay in",
			    MLDSET_MAX);
	r = setsadm_members(name, add_member, &have, err, errlen);
	if (r < 0)
		return r;
	return apply(name, &want, &have, err, errlen);
}

int mldset_destroy(const struct config *cfg, char *err, size_t errlen)
{
	char name[MLDSET_NAME_MAX];

	mldset_name(cfg, name, sizeof(name));
	return setsadm_destroy_one(name, err, errlen);
}

/* Add what want has and have lacks, delete what have has and want lacks. */
static int apply(const char *name, const struct groups *want,
		 const struct groups *have, char *err, size_t errlen)
{
	static struct netaddr add[MLDSET_MAX], del[MLDSET_MAX];
	char text[NETADDR_STRLEN];
	size_t na = 0, nd = 0;
	int r;

	for (size_t i = 0; i < want->n; i++)
		if (!has(have, &want->a[i]))
			add[na++] = want->a[i];
	for (size_t i = 0; i < have->n; i++)
		if (!has(want, &have->a[i]))
			del[nd++] = have->a[i];
	r = setsadm_put(name, add, na, err, errlen);
	if (r == 0)
		r = setsadm_del(name, del, nd, err, errlen);
	if (r < 0)
		return r;
	for (size_t i = 0; i < na; i++) {
		netaddr_format(&add[i], text, sizeof(text));
		log_debug(SYS, "%s may be reported (an address here has it)",
			  text);
	}
	for (size_t i = 0; i < nd; i++) {
		netaddr_format(&del[i], text, sizeof(text));
		log_debug(SYS, "%s no longer reported (no address has it)",
			  text);
	}
	return (int)(na + nd);
}

static bool has(const struct groups *g, const struct netaddr *group)
{
	for (size_t i = 0; i < g->n; i++)
		if (memcmp(g->a[i].bytes, group->bytes, 16) == 0)
			return true;
	return false;
}

static void put(struct groups *g, const struct netaddr *group)
{
	if (has(g, group))
		return;
	if (g->n == MLDSET_MAX) {
		g->full = true;
		return;
	}
	g->a[g->n++] = *group;
}

static void add_member(void *arg, const struct netaddr *a)
{
	if (a->family == AF_INET6)
		put(arg, a);
}

static void own_groups(struct groups *g)
{
	struct ifaddrs *ifa = NULL;
	struct netaddr a, group;

	if (getifaddrs(&ifa) != 0) {
		log_limited(LOG_CLASS_SETS, LOGL_WARN, SYS,
			    "cannot list this namespace's addresses (%s): "
			    "MLD reports for them stay in",
			    strerror(errno));
		return;
	}
	for (struct ifaddrs *i = ifa; i != NULL; i = i->ifa_next) {
		const struct sockaddr_in6 *sin6 =
		    (const struct sockaddr_in6 *)(const void *)i->ifa_addr;

		if (sin6 == NULL || sin6->sin6_family != AF_INET6)
			continue;
		a.family = AF_INET6;
		memcpy(a.bytes, &sin6->sin6_addr, 16);
		mldset_group(&a, &group);
		put(g, &group);
	}
	freeifaddrs(ifa);
}

/* /proc/net/anycast6: "IFINDEX IFNAME ADDRESS(32 hex) USERS" lines. */
static void anycast_groups(struct groups *g)
{
	FILE *f = fopen("/proc/net/anycast6", "re");
	char line[256], hex[33];
	struct netaddr a, group;

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned v;

		if (sscanf(line, "%*d %*s %32s", hex) != 1 || strlen(hex) != 32)
			continue;
		a.family = AF_INET6;
		for (size_t i = 0; i < 16; i++) {
			if (sscanf(hex + 2 * i, "%2x", &v) != 1)
				break;
			a.bytes[i] = (uint8_t)v;
		}
		mldset_group(&a, &group);
		put(g, &group);
	}
	fclose(f);
}
