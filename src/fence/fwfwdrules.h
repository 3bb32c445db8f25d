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

/* The "-A DNSFENCE-FWD ..." and "-A DNSFENCE-IN ..." lines for family
 * (AF_INET or AF_INET6), in order; none in mode off. 0, -EAFNOSUPPORT,
 * -E2BIG, -ENOMEM. */
int fwfwd_rules_render(const struct config *cfg, int family,
		       struct fw_rules *fwd, struct fw_rules *in);

/* The iptables-restore input that declares (creates or flushes) both
 * chains and fills them for family, without the jumps (fwfwd_apply adds
 * those). malloc'd, or NULL. */
char *fwfwd_rules_text(const struct config *cfg, int family);

#endif
