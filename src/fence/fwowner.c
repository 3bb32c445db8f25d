// SPDX-License-Identifier: GPL-2.0-or-later
/* fwowner: whose fence the rules in place are (see fwowner.h). Read
 * before setup writes anything: the reconcile, the rules and the flush
 * of another policy's entries all assume the chain is this config's. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "fence/firewall.h"
#include "fence/fwexec.h"
#include "fence/fwfwdrules.h"
#include "fence/fwowner.h"
#include "fence/fwrules.h"
#include "fence/mldset.h"

#define MATCH_SET "--match-set "

struct scan {
	const struct config *cfg;
	const char *rule; /* "-A CHAIN " of the config's scope */
	char set[64];	  /* the first foreign set seen */
	char ifn[32];	  /* the interface of its rule, if it names one */
};

/* The word after "-i " in a rule, or "". */
static void rule_iface(const char *line, char *ifn, size_t len)
{
	const char *p = strstr(line, " -i ");

	ifn[0] = '\0';
	if (p != NULL)
		snprintf(ifn, len, "%.*s", (int)strcspn(p + 4, " "), p + 4);
}

void fwowner_line_foreign(const struct config *cfg, const char *line,
			  char *name, size_t namelen)
{
	const char *p = line;
	char mld[MLDSET_NAME_MAX], c4[32], c6[32];
	const char *ours[] = {cfg->set4, cfg->set6, mld, c4, c6};

	name[0] = '\0';
	mldset_name(cfg, mld, sizeof(mld));
	/* the client sets by name, whatever "bind" says now */
	config_client_set_name(cfg->set4, c4, sizeof(c4));
	config_client_set_name(cfg->set6, c6, sizeof(c6));
	while ((p = strstr(p, MATCH_SET)) != NULL) {
		size_t n, i = 0;

		p += strlen(MATCH_SET);
		n = strcspn(p, " ");
		while (i < sizeof(ours) / sizeof(ours[0]) &&
		       (strlen(ours[i]) != n || strncmp(p, ours[i], n) != 0))
			i++;
		if (i == sizeof(ours) / sizeof(ours[0])) {
			snprintf(name, namelen, "%.*s", (int)n, p);
			return;
		}
		p += n;
	}
}

static int scan_line(void *arg, const char *line)
{
	struct scan *s = arg;

	if (s->set[0] != '\0' || strncmp(line, s->rule, strlen(s->rule)) != 0)
		return 0;
	fwowner_line_foreign(s->cfg, line, s->set, sizeof(s->set));
	if (s->set[0] != '\0')
		rule_iface(line, s->ifn, sizeof(s->ifn));
	return 0;
}

int fwowner_foreign(const struct config *cfg, bool removing, char *err,
		    size_t errlen)
{
	static const int families[] = {AF_INET, AF_INET6};
	bool fwd = cfg->scope == CONFIG_SCOPE_FORWARD;
	const char *chain = fwd ? FWFWD_CHAIN : FW_CHAIN;
	const char *unfenced = "";
	char rule[48];
	struct scan s = {.cfg = cfg, .rule = rule};
	enum fwexec_backend b;
	int ret = fwexec_backend(&b, err, errlen);

	snprintf(rule, sizeof(rule), "-A %s ", chain);
	for (size_t i = 0; !ret && s.set[0] == '\0' && i < 2; i++)
		ret = fw_saved_read(b, families[i], scan_line, &s, err, errlen);
	if (ret != 0 || s.set[0] == '\0')
		return ret;
	if (fwd && s.ifn[0] != '\0')
		unfenced = " and leave that interface unfenced";
	if (removing)
		snprintf(err, errlen,
			 "the fence in place is another config's: %s%s%s "
			 "matches set %s, this config's sets are %s and %s. "
			 "Teardown removes the whole chain, so it would take "
			 "that fence out%s; nothing was removed. Run teardown "
			 "with the config that installed it (its sets name %s)",
			 chain, s.ifn[0] ? " on " : "", s.ifn, s.set, cfg->set4,
			 cfg->set6, unfenced, s.set);
	else
		snprintf(
		    err, errlen,
		    "the fence in place is another config's: %s%s%s "
		    "matches set %s, this config's sets are %s and %s. "
		    "The chain holds one fence per network namespace and "
		    "setup writes it whole, so installing this one would "
		    "take that fence's rules out%s. Fence both with one "
		    "config (every interface in its \"interfaces\", every "
		    "subject in its \"subjects\"), give this one a network "
		    "namespace of its own, or remove the other first: "
		    "dnsfence -c ITS_CONFIG teardown",
		    chain, s.ifn[0] ? " on " : "", s.ifn, s.set, cfg->set4,
		    cfg->set6, unfenced);
	return 1;
}
