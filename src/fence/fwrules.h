/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fwrules: the rules of the fence, one family at a time, in order, each
 * written exactly as `iptables-save -t filter` prints it (firewall.c
 * applies and compares them; docs/firewall.md explains each). */
#ifndef DNSFENCE_FWRULES_H
#define DNSFENCE_FWRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

#define FW_CHAIN      "DNSFENCE-OUT"
#define FW_CHAIN_RULE "-A " FW_CHAIN " "
#define FW_RULE_MAX   512
/* The comment on the last rule that records the policy fingerprint. */
#define FW_POLICY_TAG "--comment \"dnsfence policy "

struct fw_rules {
	char **v;
	size_t n, cap;
};

void fw_rules_free(struct fw_rules *r);
/* Append a copy of line. 0 or -ENOMEM. */
int fw_rules_push(struct fw_rules *r, const char *line);
/* Append the rule fmt formats; a rule equal to an earlier one (a listen
 * address or upstream given twice) is dropped, as the kernel would match
 * it once. 0, -E2BIG (longer than FW_RULE_MAX - 1), -ENOMEM. */
int fw_rules_add(struct fw_rules *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Every "-A DNSFENCE-OUT ..." line for family (AF_INET or AF_INET6), in
 * order; none in mode off. 0, -EAFNOSUPPORT, -EINVAL (a set name unfit
 * for the restore text), -E2BIG, -ENOMEM. */
int fw_rules_render(const struct config *cfg, int family, struct fw_rules *r);
/* The policy fingerprint the first rule carrying one holds, copied into
 * hex (at least 17 bytes); false, and hex "", when none does. */
bool fw_rules_find_policy(const struct fw_rules *r, char *hex, size_t len);
/* The upstream address a saved rule demands the daemon's mark for (the
 * "--ctorigdst ADDR -m mark --mark" accept of rule 2), or false. */
bool fw_rules_upstream_of(const char *line, struct netaddr *out);
/* The upstream endpoint whose entries a saved rule lets only the daemon's
 * marked packets use (the "--ctorigsrc ADDR --ctorigsrcport PORT -m mark
 * --mark" accept of rule 2), or false. */
bool fw_rules_origin_of(const char *line, struct config_endpoint *out);
/* The multiport list ("80,443,8000:8080") of proto's (IPPROTO_TCP/UDP)
 * ports from cfg->ports[*i] on, at most 15 xt_multiport slots (a range
 * takes two); *i moves past what was taken. Returns the slots used, 0 when
 * nothing is left. list needs 16 * 12 bytes. For fwforward.c. */
/* The IPv6 routing-header rule's matches and target (REJECT; audit:
 * NFLOG), for both scopes, without the chain and interface. */
const char *fw_rules_rthdr(const struct config *cfg);
int fw_rules_port_list(const struct config *cfg, uint8_t proto, size_t *i,
		       char *list, size_t cap);

#endif
