/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fwfwdrules: the rules of the forward scope, one family at a time, in
 * order, each written exactly as `iptables-save -t filter` prints it
 * (fwforward.c applies and compares them; docs/firewall.md explains
 * each). */
#ifndef DNSFENCE_FWFWDRULES_H
#define DNSFENCE_FWFWDRULES_H

#include "config/config.h"
#include "fence/fwrules.h"

#define FWFWD_CHAIN    "DNSFENCE-FWD"
#define FWFWD_IN_CHAIN "DNSFENCE-IN"
#define FWFWD_PRE_CHAIN                                                        \
	"DNSFENCE-PRE" /* raw table: source validation, before conntrack */

/* The "-A DNSFENCE-FWD ..." and "-A DNSFENCE-IN ..." lines for family
 * (AF_INET or AF_INET6), in order; none in mode off. 0, -EAFNOSUPPORT,
 * -E2BIG, -ENOMEM. */
int fwfwd_rules_render(const struct config *cfg, int family,
		       struct fw_rules *fwd, struct fw_rules *in);

/* The iptables-restore input that declares (creates or flushes) both
 * chains and fills them for family, without the jumps (fwfwd_apply adds
 * those). malloc'd, or NULL. */
char *fwfwd_rules_text(const struct config *cfg, int family);

/* The "-A DNSFENCE-PRE ..." lines of the raw table for family: each fenced
 * interface accepts only sources of its own networks (none in mode off).
 * 0, -EAFNOSUPPORT, -E2BIG, -ENOMEM. */
int fwfwd_pre_render(const struct config *cfg, int family,
		     struct fw_rules *pre);

/* The raw table's iptables-restore section: "*raw", the chain declared
 * (created or flushed), its rules, extra lines ("" for none: the jump
 * fixes), "COMMIT". malloc'd, or NULL. */
char *fwfwd_pre_text(const struct config *cfg, int family, const char *extra);

/* Both tables' restore input: fwfwd_pre_text's section (with raw_extra),
 * then fwfwd_rules_text's. malloc'd, or NULL. */
char *fwfwd_tables_text(const struct config *cfg, int family,
			const char *raw_extra);

#endif
