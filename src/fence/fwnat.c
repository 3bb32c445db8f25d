// SPDX-License-Identifier: GPL-2.0-or-later
/* fwnat: the output fence's nat part, the subjects' DNS redirect
 * (chain DNSFENCE-DNS, jumped to first in nat OUTPUT; fwsubject.c renders
 * it): applied, read back and compared, removed, through the engine's
 * restore and save (firewall.c), for fwscope.c and teardown. Without
 * subjects nothing of ours is in the nat table, and whatever an earlier
 * config of subjects left there is removed by setup and reported by
 * check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fence/fwnat.h"
#include "fence/firewall.h"
#include "fence/fwsubject.h"

#define NAT_TABLE "*nat"

struct nat_saved {
	bool chain;
	struct fw_jumps jumps;
	struct fw_rules rules;
};

static int nat_line(void *arg, const char *line);
static int compare_nat(const struct config *cfg, int family,
		       const struct fw_jumps *jumps, bool chain,
		       const struct fw_rules *have, fw_report_fn report,
		       void *arg);
static int nat_apply(enum fwexec_backend b, const struct config *cfg,
		     int family, const char *saved, char *err, size_t errlen);
static int remove_with(enum fwexec_backend b, int family, char *err,
		       size_t errlen);

static const int families[] = {AF_INET, AF_INET6};

static int nat_line(void *arg, const char *line)
{
	struct nat_saved *ns = arg;

	if (strncmp(line, ":" FWSUBJECT_NAT_CHAIN " ",
		    strlen(FWSUBJECT_NAT_CHAIN) + 2) == 0)
		ns->chain = true;
	else if (strncmp(line, "-A " FWSUBJECT_NAT_CHAIN " ",
			 strlen(FWSUBJECT_NAT_CHAIN) + 4) == 0)
		return fw_rules_push(&ns->rules, line);
	else
		fw_jumps_line(&ns->jumps, line, FWSUBJECT_NAT_CHAIN);
	return 0;
}

static int compare_nat(const struct config *cfg, int family,
		       const struct fw_jumps *jumps, bool chain,
		       const struct fw_rules *have, fw_report_fn report,
		       void *arg)
{
	struct fw_rules want = {0}, wjumps = {0};
	const char *fam = fw_family_name(family);
	int ret = fwsubject_nat_rules(cfg, family, &want), diffs = 0;

	if (!ret && want.n > 0)
		ret = fwsubject_only_jumps(cfg, FWSUBJECT_NAT_CHAIN, &wjumps);
	if (ret)
		goto out;
	if (want.n == 0) {
		if (chain || jumps->lines.n > 0) {
			diffs = 1;
			fw_say(report, arg,
			       "%s: nat chain %s is left from a fence of "
			       "subjects this config does not name",
			       fam, FWSUBJECT_NAT_CHAIN);
		}
		goto out;
	}
	if (!chain) {
		diffs = 1;
		fw_say(report, arg, "%s: nat chain %s missing", fam,
		       FWSUBJECT_NAT_CHAIN);
		goto out;
	}
	ret = fw_jumps_compare(family, FWSUBJECT_NAT_CHAIN, &wjumps, jumps,
			       report, arg);
	if (ret >= 0) {
		diffs = ret;
		ret = fw_compare_rules(family, FWSUBJECT_NAT_CHAIN, &want, have,
				       report, arg);
	}
	if (ret >= 0) {
		diffs += ret;
		ret = 0;
	}
out:
	fw_rules_free(&want);
	fw_rules_free(&wjumps);
	return ret < 0 ? ret : diffs;
}

int fwnat_compare(const struct config *cfg, int family, const char *saved,
		  fw_report_fn report, void *arg)
{
	struct nat_saved ns = {0};
	int ret = fw_saved_each_table(saved, NAT_TABLE, nat_line, &ns);

	if (!ret)
		ret = compare_nat(cfg, family, &ns.jumps, ns.chain, &ns.rules,
				  report, arg);
	fw_jumps_free(&ns.jumps);
	fw_rules_free(&ns.rules);
	return ret;
}

/* The nat table's part: our chain refilled and the jumps fixed, or, when
 * this config names no subjects, whatever an earlier one left removed. */
static int nat_apply(enum fwexec_backend b, const struct config *cfg,
		     int family, const char *saved, char *err, size_t errlen)
{
	struct fw_rules want = {0}, wjumps = {0};
	struct nat_saved ns = {0};
	char *text = NULL, *fixes = NULL;
	size_t cap, len = 0;
	int ret = fw_saved_each_table(saved, NAT_TABLE, nat_line, &ns);

	if (!ret)
		ret = fwsubject_nat_rules(cfg, family, &want);
	if (!ret && want.n > 0)
		ret = fwsubject_only_jumps(cfg, FWSUBJECT_NAT_CHAIN, &wjumps);
	if (ret || (want.n == 0 && !ns.chain && ns.jumps.lines.n == 0))
		goto out;
	fixes = want.n ? fw_jumps_fixes(&wjumps, &ns.jumps)
		       : fw_jumps_deletes(&ns.jumps);
	ret = -ENOMEM;
	cap = 64 + (fixes ? strlen(fixes) : 0);
	for (size_t i = 0; i < want.n; i++)
		cap += strlen(want.v[i]) + 1;
	if (fixes == NULL || (text = malloc(cap)) == NULL)
		goto out;
	len = (size_t)snprintf(text, cap, "*nat\n:%s - [0:0]\n",
			       FWSUBJECT_NAT_CHAIN);
	for (size_t i = 0; i < want.n; i++)
		len +=
		    (size_t)snprintf(text + len, cap - len, "%s\n", want.v[i]);
	len += (size_t)snprintf(text + len, cap - len, "%s", fixes);
	if (want.n == 0)
		snprintf(text + len, cap - len, "-X %s\n", FWSUBJECT_NAT_CHAIN);
	strncat(text, "COMMIT\n", cap - strlen(text) - 1);
	ret = fw_restore_family(b, family, text, err, errlen);
out:
	free(text);
	free(fixes);
	fw_rules_free(&want);
	fw_rules_free(&wjumps);
	fw_jumps_free(&ns.jumps);
	fw_rules_free(&ns.rules);
	return ret;
}

int fwnat_remove_family(enum fwexec_backend b, int family, const char *saved,
			char *err, size_t errlen)
{
	static const struct config none = {.mode = CONFIG_MODE_OFF};

	return nat_apply(b, &none, family, saved, err, errlen);
}

int fwnat_apply(const struct config *cfg, char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret = fwexec_backend(&b, err, errlen);

	for (size_t i = 0; !ret && i < 2; i++) {
		char *saved = NULL;

		ret = fw_save_table(b, families[i], "nat", &saved, err, errlen);
		if (ret && !config_has_subjects(cfg)) {
			/* Unreadable (legacy, unprivileged): nothing of ours
			 * can be there to remove. */
			free(saved);
			err[0] = '\0';
			return 0;
		}
		if (!ret)
			ret =
			    nat_apply(b, cfg, families[i], saved, err, errlen);
		free(saved);
	}
	return ret ? ret : fw_verify(cfg, b, fwnat_compare, err, errlen);
}

static int remove_with(enum fwexec_backend b, int family, char *err,
		       size_t errlen)
{
	char *saved = NULL;
	int ret = fw_save_table(b, family, "nat", &saved, err, errlen);

	if (!ret)
		ret = fwnat_remove_family(b, family, saved, err, errlen);
	free(saved);
	return ret;
}

int fwnat_remove(char *err, size_t errlen)
{
	return fw_remove_with(remove_with, err, errlen);
}
