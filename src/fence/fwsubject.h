/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fwsubject: the output fence's rules that depend on "subjects": the
 * jumps from OUTPUT into the fence (filter), into the DNS redirect (nat)
 * and into its conntrack zone (raw), as iptables-save lines, and the comparison
 * and repair of a table's jumps as one ordered list. Pure: no kernel access. */
#ifndef DNSFENCE_FWSUBJECT_H
#define DNSFENCE_FWSUBJECT_H

#include <stdbool.h>

#include "config/config.h"
#include "fence/fwrules.h"

#define FWSUBJECT_NAT_CHAIN  "DNSFENCE-DNS"
#define FWSUBJECT_ZONE_CHAIN "DNSFENCE-ZONE"
/* The conntrack zone of the subjects' DNS flows, original direction. */
#define FWSUBJECT_CT_ZONE 53
#define FW_JUMPS_MAX	  64 /* positions kept; more lines still count */

/* The "-A OUTPUT ... -j CHAIN" lines one table of a family holds, in
 * order, with their positions among OUTPUT's rules (1-based). */
struct fw_jumps {
	struct fw_rules lines;
	int pos[FW_JUMPS_MAX];
	int rules; /* "-A OUTPUT" lines seen so far */
	bool oom;
};

/* The jumps from OUTPUT into DNSFENCE-OUT for family: the one plain jump
 * without subjects; with them one per uid, gid and cgroup, then the
 * group reports (IGMP; MLD 131, 132, 143) of every process. 0/-errno. */
int fwsubject_jumps(const struct config *cfg, int family, struct fw_rules *out);

/* The subjects' owner and cgroup matches alone, jumping to chain. */
int fwsubject_only_jumps(const struct config *cfg, const char *chain,
			 struct fw_rules *out);

/* DNSFENCE-DNS's rules for family: udp and tcp port 53 DNATed to the
 * first listener of the family (loopback for a wildcard one); none
 * without subjects, in mode off, or with no listener of the family. */
int fwsubject_nat_rules(const struct config *cfg, int family,
			struct fw_rules *r);

/* DNSFENCE-ZONE's rules for family (raw table): udp and tcp port 53 put
 * in conntrack zone FWSUBJECT_CT_ZONE for the original direction, so a
 * subject's redirected flow and another process's flow on the same
 * four-tuple are two entries; none whenever there are no nat rules. */
int fwsubject_zone_rules(const struct config *cfg, int family,
			 struct fw_rules *r);

/* Feed one saved line: an "-A OUTPUT" line is counted, and kept when it
 * jumps to chain. */
void fw_jumps_line(struct fw_jumps *j, const char *line, const char *chain);

/* have against want: each wanted line once, nothing else jumping to
 * chain, and the wanted lines first in OUTPUT in order. The number of
 * differences, each passed to report (may be NULL); -ENOMEM. */
int fw_jumps_compare(int family, const char *chain, const struct fw_rules *want,
		     const struct fw_jumps *have,
		     void (*report)(void *arg, const char *line), void *arg);

/* Restore lines that turn have into want ("" when they already match,
 * unless want holds a cgroup match: those are always inserted afresh, as
 * the kernel binds a rule to the cgroup that had the path at insertion):
 * every jump deleted, the wanted ones inserted first. malloc'd; NULL. */
char *fw_jumps_fixes(const struct fw_rules *want, const struct fw_jumps *have);

/* Restore lines deleting every jump of have. malloc'd; NULL. */
char *fw_jumps_deletes(const struct fw_jumps *have);

void fw_jumps_free(struct fw_jumps *j);

#endif
