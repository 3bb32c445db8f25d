// SPDX-License-Identifier: GPL-2.0-or-later
/* drift: is the fence the config asks for the one in the kernel? The
 * rules are compared line by line by firewall.c (fw_check), the sets by
 * type, family and timeout support by setsadm.c; this module joins the
 * two into one answer, so `check`, setup's verification, serve's refusal
 * and the guard cannot disagree about what "in place" means. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fence/drift.h"
#include "fence/firewall.h"
#include "sets/setsadm.h"

int drift_compare(const struct config *cfg, fw_report_fn report, void *arg,
		  char *err, size_t errlen)
{
	char why[512];
	int drift = 0, r;

	r = fw_check(cfg, report, arg);
	if (r < 0) {
		snprintf(err, errlen, "cannot read the firewall rules: %s",
			 strerror(-r));
		return r;
	}
	if (r > 0)
		drift |= DRIFT_RULES;
	r = setsadm_check(cfg->set4, cfg->set6, why, sizeof(why));
	if (r == 0 && config_client_sets(cfg))
		r = setsadm_check_clients(cfg->client4, cfg->client6, why,
					  sizeof(why));
	if (r == -ENOENT || r == -EEXIST) {
		char line[600];

		snprintf(line, sizeof(line), "sets: %s", why);
		report(arg, line);
		drift |= DRIFT_SETS;
	} else if (r < 0) {
		snprintf(err, errlen, "cannot read the sets: %s", why);
		return r;
	}
	return drift;
}
