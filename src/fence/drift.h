/* SPDX-License-Identifier: GPL-2.0-or-later */
/* drift: the comparison of the kernel's rules and sets with the config,
 * shared by `check`, setup's verification, serve's refusal to start on an
 * unfenced namespace, and the guard's periodic check. */
#ifndef DNSFENCE_DRIFT_H
#define DNSFENCE_DRIFT_H

#include <stddef.h>

#include "config/config.h"
#include "fence/firewall.h"

/* drift_compare result bits: what differs. */
#define DRIFT_RULES 1
#define DRIFT_SETS  2

/* Compare the kernel with the config (fw_check, then setsadm_check): 0
 * when everything is in place; DRIFT_* bits when something differs, with
 * report() called once per difference ("ipv4: rule missing: ...",
 * "sets: set dnsfence4 does not exist"); -errno with err set when the
 * state cannot be read. Blocks (runs iptables-save); never call it from
 * the event loop, the guard forks for it. */
int drift_compare(const struct config *cfg, fw_report_fn report, void *arg,
		  char *err, size_t errlen);

#endif
