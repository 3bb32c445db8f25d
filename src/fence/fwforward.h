/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fwforward: the fence of "scope": "forward". dnsfence runs on the host
 * and fences what comes in on the configured interfaces (a container
 * bridge or veth): forwarded traffic in DNSFENCE-FWD, jumped to first from
 * DOCKER-USER (when Docker's FORWARD sends everything there first) or else
 * from FORWARD; traffic to the host itself in DNSFENCE-IN, jumped to first
 * from INPUT. Built-in policies and the host's OUTPUT are never touched.
 * firewall.c dispatches here when cfg->scope is CONFIG_SCOPE_FORWARD;
 * docs/firewall.md lists the rules and why. */
#ifndef DNSFENCE_FWFORWARD_H
#define DNSFENCE_FWFORWARD_H

#include <stddef.h>

#include "config/config.h"
#include "fence/firewall.h"
#include "fence/fwfwdrules.h"

/* Compare the text of `iptables-save -t filter` (saved) with cfg: the two
 * chains, their one jump each (first in DOCKER-USER or FORWARD, first in
 * INPUT), the policy fingerprint, and no output-scope chain. The number of
 * differences, each passed to report(); or -errno. No kernel access. */
int fwfwd_compare(const struct config *cfg, int family, const char *saved,
		  fw_report_fn report, void *arg);

/* Install both families (one iptables-restore --noflush transaction
 * each), then verify as fwfwd_check does. 0, or -errno with err set. */
int fwfwd_apply(const struct config *cfg, char *err, size_t errlen);

/* 0 in place, 1 with report() per difference, -errno unreadable. */
int fwfwd_check(const struct config *cfg, fw_report_fn report, void *arg);
/* Traffic a bridge switches itself meets FORWARD only through
 * br_netfilter (bridge-nf-call-iptables / -ip6tables 1 in this network
 * namespace). When either is 0 or absent and a fenced interface may be a
 * bridge: with "hairpin": "deny" in enforce mode, 1 with err saying so
 * (apply refuses, check reports a difference); with "fence" (or "deny"
 * in audit mode), a warning once a process and 0. 0 when
 * nothing would pass unfenced (or "allow", which fences none of it). */
int fwfwd_bridged(const struct config *cfg, char *err, size_t errlen);

/* Delete our jumps and chains in both families; no policy is touched.
 * Missing pieces are not an error. */
int fwfwd_remove(char *err, size_t errlen);

/* The fingerprint on DNSFENCE-FWD's rules ("" none, or the families
 * disagree), for provenance_reconcile. 0 or -errno (err). */
int fwfwd_stored_policy(char *hex, size_t len, char *err, size_t errlen);

#endif
