// SPDX-License-Identifier: GPL-2.0-or-later
/* provenance: setup when the policy that filled the sets is not the one
 * being installed (invariant 9). The fingerprint compared is
 * config/fingerprint.c's; the one the installed rules carry is read back
 * by the engine of the config's scope (firewall.c, fwforward.c). The
 * names behind each entry are known only above this layer (the daemon's
 * provenance map, kept over a restart: daemon/restart.c), so the precise
 * path is a keeper the caller hands in; without one, or when it cannot
 * say, both sets are flushed. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "config/fingerprint.h"
#include "fence/firewall.h"
#include "fence/fwforward.h"
#include "fence/provenance.h"
#include "sets/setsadm.h"

#define SYS "policy"

int provenance_reconcile(const struct config *cfg, provenance_keep_fn keep,
			 void *arg, char *err, size_t errlen)
{
	char want[PROVENANCE_HEXLEN], have[PROVENANCE_HEXLEN], why[512] = "";
	size_t kept = 0, evicted = 0;
	int ret = provenance_fingerprint(cfg, want);

	if (ret) {
		snprintf(err, errlen, "policy fingerprint: %s", strerror(-ret));
		return ret;
	}
	ret = cfg->scope == CONFIG_SCOPE_FORWARD
		  ? fwfwd_stored_policy(have, sizeof(have), err, errlen)
		  : fw_stored_policy(have, sizeof(have), err, errlen);
	if (ret)
		return ret;
	if (strcmp(have, want) == 0) {
		log_info(SYS, "policy %s unchanged: set entries kept", want);
		return 0;
	}
	if (keep != NULL && keep(arg, cfg, have, want, &kept, &evicted, why,
				 sizeof(why)) == 0) {
		log_info(SYS,
			 "policy %s replaces %s: %zu set entries kept (a name "
			 "it allows brought each in), %zu evicted",
			 want, have, kept, evicted);
		return 0;
	}
	ret = setsadm_flush(cfg->set4, cfg->set6, err, errlen);
	if (ret == 0 && config_client_sets(cfg))
		ret = setsadm_flush(cfg->client4, cfg->client6, err, errlen);
	if (ret)
		return ret;
	if (have[0])
		log_warn(SYS,
			 "policy %s replaces %s: sets %s and %s flushed, so "
			 "no entry of the old policy stays reachable (the "
			 "names that filled them are not known: %s)",
			 want, have, cfg->set4, cfg->set6,
			 why[0] ? why : "no record of them");
	else
		log_info(SYS,
			 "policy %s: no rules of an earlier setup recorded a "
			 "policy, so sets %s and %s start empty",
			 want, cfg->set4, cfg->set6);
	return 0;
}
