// SPDX-License-Identifier: GPL-2.0-or-later
/* install: sets, then their reconcile, then the rules. The order is the
 * point: the rules match the sets by name, so the sets exist first; the
 * reconcile reads the fingerprint the rules in place carry, so it runs
 * before they are replaced. The MLD set (mldset.c) is filled before the
 * rules too, or the kernel's reports would meet an empty set. Before this file,
 * setup and the guard each wrote the sequence, and the guard's copy skipped the
 * reconcile, so a restore kept entries that rules of another policy had let in.
 */
#include <stdio.h>
#include <string.h>

#include "fence/firewall.h"
#include "fence/install.h"
#include "fence/mldset.h"
#include "fence/provenance.h"
#include "sets/setsadm.h"

int install_fence(const struct config *cfg, enum install_sets sets,
		  provenance_keep_fn keep, void *keep_arg, char *err,
		  size_t errlen)
{
	char why[480];
	int r;

	if (cfg->mode == CONFIG_MODE_OFF)
		return 0;
	r = setsadm_create(cfg->set4, cfg->set6, cfg->maxelem, why,
			   sizeof(why));
	/* The forward rule names the client sets too. */
	if (r == 0 && config_client_sets(cfg))
		r = setsadm_create_clients(cfg->client4, cfg->client6,
					   cfg->client_maxelem, why,
					   sizeof(why));
	if (r == 0 && sets == INSTALL_RECONCILE)
		r = provenance_reconcile(cfg, keep, keep_arg, why, sizeof(why));
	if (r != 0) {
		snprintf(err, errlen, "sets: %s", why);
		return r;
	}
	/* Rule 4 names the MLD set: it must exist and be full first. */
	if (cfg->scope == CONFIG_SCOPE_OUTPUT &&
	    (r = mldset_sync(cfg, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "MLD set: %s", why);
		return r;
	}
	r = fw_apply(cfg, why, sizeof(why));
	if (r != 0)
		snprintf(err, errlen, "firewall: %s", why);
	return r;
}
