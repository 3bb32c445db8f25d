/* SPDX-License-Identifier: GPL-2.0-or-later */
/* firewall: renders the iptables/ip6tables rules from the config, applies
 * them atomically (iptables-restore --noflush, no shell), reads them back
 * to verify or to list drift, and removes them. */
#ifndef DNSFENCE_FIREWALL_H
#define DNSFENCE_FIREWALL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "dnsfence/config.h"

#include "dnsfence/fwrules.h"

/* The iptables-restore input for one family (AF_INET or AF_INET6), rules
 * written exactly as iptables-save prints them, so that what the kernel
 * holds can be compared line by line. uid is unused since the socket
 * mark (cfg->mark) identifies the daemon; kept for the callers. malloc'd text,
 * or NULL (bad family, set name unfit for the restore text, allocation).
 * fw_apply adds the jump from OUTPUT before COMMIT when it is not in place; in
 * mode off the text is a comment only. */
char *fw_render(const struct config *cfg, int family, uid_t uid);

/* Install both families (enforce and audit; nothing for off), then
 * verify them as fw_check does. 0, or -errno with err saying which
 * family/rule failed: -EEXIST when both iptables backends (nft and legacy)
 * hold rules in this namespace, -EIO when the rules read back differ. */
int fw_apply(const struct config *cfg, uid_t uid, char *err, size_t errlen);

/* Compare what the kernel holds with the config: policy, our chain's
 * rules, the single jump from OUTPUT (its first rule). 0 when all is in
 * place; 1 when something differs, with report() called once per
 * difference ("ipv4: rule missing: -A DNSFENCE-OUT ..."; both backends
 * holding rules is one such line); -errno when the state cannot be
 * read. */
int fw_check(const struct config *cfg, uid_t uid,
	     void (*report)(void *arg, const char *line), void *arg);

/* The comparison behind fw_check (and fw_apply's verification) for one
 * family, on the text of `iptables-save -t filter` (saved): no kernel
 * access, for the unit tests. The number of differences reported (0 when
 * all is in place), or -errno. Mode off expects no chain and no jump. */
int fw_compare(const struct config *cfg, int family, uid_t uid,
	       const char *saved, void (*report)(void *arg, const char *line),
	       void *arg);

/* The policy fingerprint the installed rules carry (see provenance.h),
 * into hex (at least PROVENANCE_HEXLEN bytes): "" when there are no rules,
 * none carries one, or the two families disagree. 0 or -errno (err). */
int fw_stored_policy(char *hex, size_t len, char *err, size_t errlen);

/* Remove our jump and chain from both families and set OUTPUT's policy
 * back to ACCEPT, on the backend holding rules (both when both do).
 * Missing pieces are not an error. The sets are not touched. */
int fw_remove(char *err, size_t errlen);

#endif
