/* SPDX-License-Identifier: GPL-2.0-or-later */
/* install: the one sequence that puts the fence in the kernel, shared by
 * `setup` (and `run`) and the guard's children (a restore after drift, a
 * reload's new rules). */
#ifndef DNSFENCE_INSTALL_H
#define DNSFENCE_INSTALL_H

#include <stddef.h>

#include "config/config.h"
#include "fence/provenance.h"

/* What happens to the entries already in the sets. */
enum install_sets {
	/* setup and the guard's restore: flushed when the rules in place do
	 * not carry cfg's policy fingerprint (or none), invariant 9 */
	INSTALL_RECONCILE,
	/* a reload's new rules: kept, the daemon has deleted what the
	 * removed names put there (reload.c's evict step) */
	INSTALL_KEEP,
};

/* Create the sets (kept when they exist), reconcile their entries as
 * `sets` says (INSTALL_RECONCILE: through keep, which may be NULL, see
 * provenance_reconcile), install and verify the rules (fw_apply).
 * Nothing in mode "off". Blocks (libipset, iptables-restore). 0, or
 * -errno with err naming the step ("sets: ...", "firewall: ..."). */
int install_fence(const struct config *cfg, enum install_sets sets,
		  provenance_keep_fn keep, void *keep_arg, char *err,
		  size_t errlen);

#endif
