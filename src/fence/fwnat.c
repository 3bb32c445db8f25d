// SPDX-License-Identifier: GPL-2.0-or-later
/* fwnat: the output fence's parts outside the filter table, for named
 * subjects (fwsubject.c renders them): in the nat table the subjects' DNS
 * redirect (chain DNSFENCE-DNS), in the raw table its conntrack zone
 * (chain DNSFENCE-ZONE), each jumped to first in its table's OUTPUT by
 * the subjects' matches. Applied, read back and compared, removed,
 * through the engine's restore and save (firewall.c), for fwscope.c and
 * teardown. Without subjects nothing of ours is in either table, and
 * whatever an earlier config of subjects left there is removed by setup
 * and reported by check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fence/fwnat.h"
#include "fence/firewall.h"
#include "fence/fwsubject.h"

/* One table's part: its chain and the rules in it. table is the save's
 * header ("*nat"); without the star, the table's name. */
struct nat_part {
	const char *table;
	const char *chain;
	int (*rules)(const struct config *cfg, int family, struct fw_rules *r);
};

static const struct nat_part parts[] = {
    {"*nat", FWSUBJECT_NAT_CHAIN, fwsubject_nat_rules},
    {"*raw", FWSUBJECT_ZONE_CHAIN, fwsubject_zone_rules},
};

#define N_PARTS (sizeof(parts) / sizeof(parts[0]))

struct nat_saved {
	const struct nat_part *part;
	bool chain;
	struct fw_jumps jumps;
	struct fw_rules rules;
};

static int nat_line(void *arg, const char *line);
static int compare_nat(const struct config *cfg, int family,
		       const struct nat_saved *ns, fw_report_fn report,
		       void *arg);
static int part_apply(enum fwexec_backend b, const struct config *cfg,
		      int family, const struct nat_part *pt, const char *saved,
		      char *err, size_t errlen);
static int save_parts(enum fwexec_backend b, int family, bool optional,
		      char **saved, char *err, size_t errlen);
static int nat_apply(enum fwexec_backend b, const struct config *cfg,
		     int family, const char *saved, char *err, size_t errlen);
static int remove_with(enum fwexec_backend b, int family, char *err,
		       size_t errlen);

static const int families[] = {AF_INET, AF_INET6};

static int nat_line(void *arg, const char *line)
{
	struct nat_saved *ns = arg;
	const char *chain = ns->part->chain;
	size_t n = strlen(chain);

	if (line[0] == ':' && strncmp(line + 1, chain, n) == 0 &&
	    line[n + 1] == ' ')
		ns->chain = true;
	else if (strncmp(line, "-A ", 3) == 0 &&
		 strncmp(line + 3, chain, n) == 0 && line[n + 3] == ' ')
		return fw_rules_push(&ns->rules, line);
	else
		fw_jumps_line(&ns->jumps, line, chain);
	return 0;
}

static int compare_nat(const struct config *cfg, int family,
		       const struct nat_saved *ns, fw_report_fn report,
		       void *arg)
{
	const struct nat_part *pt = ns->part;
	struct fw_rules want = {0}, wjumps = {0};
	const char *fam = fw_family_name(family);
	int ret = pt->rules(cfg, family, &want), diffs = 0;

	if (!ret && want.n > 0)
		ret = fwsubject_only_jumps(cfg, pt->chain, &wjumps);
	if (ret)
		goto out;
	if (want.n == 0) {
		if (ns->chain || ns->jumps.lines.n > 0) {
			diffs = 1;
			fw_say(report, arg,
			       "%s: %s chain %s is left from a fence of "
			       "subjects this config does not name",
			       fam, pt->table + 1, pt->chain);
		}
		goto out;
	}
	if (!ns->chain) {
		diffs = 1;
		fw_say(report, arg, "%s: %s chain %s missing", fam,
		       pt->table + 1, pt->chain);
		goto out;
	}
	ret = fw_jumps_compare(family, pt->chain, &wjumps, &ns->jumps, report,
			       arg);
	if (ret >= 0) {
		diffs = ret;
		ret = fw_compare_rules(family, pt->chain, &want, &ns->rules,
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
	int diffs = 0;

	for (size_t i = 0; i < N_PARTS; i++) {
		struct nat_saved ns = {.part = &parts[i]};
		int ret =
		    fw_saved_each_table(saved, parts[i].table, nat_line, &ns);

		if (!ret)
			ret = compare_nat(cfg, family, &ns, report, arg);
		fw_jumps_free(&ns.jumps);
		fw_rules_free(&ns.rules);
		if (ret < 0)
			return ret;
		diffs += ret;
	}
	return diffs;
}

/* One table's part: our chain refilled and the jumps fixed, or, when
 * this config names no subjects, whatever an earlier one left removed.
 * saved holds that table's text (it may hold others). */
static int part_apply(enum fwexec_backend b, const struct config *cfg,
		      int family, const struct nat_part *pt, const char *saved,
		      char *err, size_t errlen)
{
	struct fw_rules want = {0}, wjumps = {0};
	struct nat_saved ns = {.part = pt};
	char *text = NULL, *fixes = NULL;
	size_t cap, len = 0;
	int ret = fw_saved_each_table(saved, pt->table, nat_line, &ns);

	if (!ret)
		ret = pt->rules(cfg, family, &want);
	if (!ret && want.n > 0)
		ret = fwsubject_only_jumps(cfg, pt->chain, &wjumps);
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
	len = (size_t)snprintf(text, cap, "%s\n:%s - [0:0]\n", pt->table,
			       pt->chain);
	for (size_t i = 0; i < want.n; i++)
		len +=
		    (size_t)snprintf(text + len, cap - len, "%s\n", want.v[i]);
	len += (size_t)snprintf(text + len, cap - len, "%s", fixes);
	if (want.n == 0)
		snprintf(text + len, cap - len, "-X %s\n", pt->chain);
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

static int nat_apply(enum fwexec_backend b, const struct config *cfg,
		     int family, const char *saved, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < N_PARTS; i++)
		ret = part_apply(b, cfg, family, &parts[i], saved, err, errlen);
	return ret;
}

int fwnat_remove_family(enum fwexec_backend b, int family, const char *saved,
			char *err, size_t errlen)
{
	static const struct config none = {.mode = CONFIG_MODE_OFF};

	return nat_apply(b, &none, family, saved, err, errlen);
}

/* Both tables of one family, read. With optional (a config without
 * subjects) either may be unreadable (iptables-legacy-save lists no table
 * to an unprivileged guard): then nothing of ours can be there, and
 * *saved is NULL when neither could be read. */
static int save_parts(enum fwexec_backend b, int family, bool optional,
		      char **saved, char *err, size_t errlen)
{
	int ret = 0;

	*saved = NULL;
	for (size_t i = 0; !ret && i < N_PARTS; i++)
		ret = fw_save_append(b, family, parts[i].table + 1, optional,
				     saved, err, errlen);
	if (ret) {
		free(*saved);
		*saved = NULL;
	}
	return ret;
}

int fwnat_apply(const struct config *cfg, char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret = fwexec_backend(&b, err, errlen);

	for (size_t i = 0; !ret && i < 2; i++) {
		char *saved = NULL;

		ret = save_parts(b, families[i], !config_has_subjects(cfg),
				 &saved, err, errlen);
		if (!ret && saved != NULL)
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
	int ret = save_parts(b, family, false, &saved, err, errlen);

	if (!ret)
		ret = fwnat_remove_family(b, family, saved, err, errlen);
	free(saved);
	return ret;
}

int fwnat_remove(char *err, size_t errlen)
{
	return fw_remove_with(remove_with, err, errlen);
}
