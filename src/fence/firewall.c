// SPDX-License-Identifier: GPL-2.0-or-later
/* firewall: applies, verifies and removes the egress fence.
 *
 * The rules themselves come from fwrules.c, written exactly as
 * `iptables-save -t filter` prints them, so that the same lines are the
 * iptables-restore input of fw_apply and the expected lines of fw_check.
 *
 * Everything we own is the chain DNSFENCE-OUT, one jump to it as the
 * first rule of OUTPUT, and OUTPUT's policy (DROP). In an iptables-restore
 * --noflush transaction the line ":DNSFENCE-OUT - [0:0]" creates or
 * flushes our chain (verified for iptables-nft and -legacy 1.8.9), and
 * the jump is (re)inserted only when it is not already there exactly
 * once and first, so a second setup is a no-op and each family's change
 * is one atomic kernel transaction. Other rules in OUTPUT are never
 * touched; since our chain ends in a reject, its verdict is final.
 *
 * fw_apply verifies by running the same comparison as fw_check, so a
 * rule the kernel silently did not take fails setup (invariant 7). The
 * last rule carries the policy fingerprint, so a config whose policy
 * differs from the installed one is drift, reported as such. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fence/conntrack.h"
#include "fence/firewall.h"
#include "fence/fwexec.h"
#include "fence/fwrules.h"
#include "fence/fwsubject.h"
#include "base/log.h"
#include "config/fingerprint.h"

#define FW_REPLACED_MAX 16 /* replaced upstreams forgotten in one apply */

/* What one family's filter table (iptables-save) says about our pieces. */
struct saved {
	char policy[16];       /* OUTPUT's policy; "" when not listed */
	bool chain;	       /* ":DNSFENCE-OUT" is declared */
	struct fw_jumps jumps; /* "-A OUTPUT ... -j DNSFENCE-OUT" lines */
	struct fw_rules rules; /* "-A DNSFENCE-OUT ..." lines, in order */
};

struct first_diff {
	char *buf;
	size_t len;
	int n;
};

static int saved_line(void *arg, const char *line);
static int compare_off(int family, const struct saved *sv, fw_report_fn report,
		       void *arg);
static int compare_frame(const struct config *cfg, int family,
			 const struct saved *sv, fw_report_fn report,
			 void *arg);
static int compare(const struct config *cfg, int family, const char *saved,
		   fw_report_fn report, void *arg);
static void keep_first(void *arg, const char *line);
static int stored_policy(enum fwexec_backend b, int family, char *hex,
			 size_t len, char *err, size_t errlen);
static void restore_error(int family, enum fwexec_backend b, const char *input,
			  const char *stderr_text, char *err, size_t errlen);
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen);
static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen);
static bool fenced_upstream(const struct config *cfg, const struct netaddr *a);
static int forget_replaced(const struct config *cfg, int family,
			   const struct fw_rules *saved, char *err,
			   size_t errlen);
static char *jump_fixes(const struct config *cfg, int family,
			const struct saved *sv);
static void saved_free(struct saved *sv);
static int save_for(const struct config *cfg, enum fwexec_backend b, int family,
		    char **text, char *err, size_t errlen);
static void prefer_mldv1(void);

static const int families[] = {AF_INET, AF_INET6};

const char *fw_family_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

char *fwout_render(const struct config *cfg, int family)
{
	struct fw_rules r = {0};
	size_t len = 0, cap;
	char *out = NULL;

	if (fw_rules_render(cfg, family, &r) < 0)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		out = strdup("# dnsfence: mode off installs no rules\n");
		goto out;
	}
	cap = 64 + strlen(FW_CHAIN);
	for (size_t i = 0; i < r.n; i++)
		cap += strlen(r.v[i]) + 1;
	out = malloc(cap);
	if (!out)
		goto out;
	/* With subjects the rest of the namespace keeps OUTPUT's policy. */
	len += (size_t)snprintf(
	    out, cap, "*filter\n%s:%s - [0:0]\n",
	    config_has_subjects(cfg) ? "" : ":OUTPUT DROP\n", FW_CHAIN);
	for (size_t i = 0; i < r.n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\n", r.v[i]);
	snprintf(out + len, cap - len, "COMMIT\n");
out:
	fw_rules_free(&r);
	return out;
}

/* One line of the filter table: only OUTPUT's and DNSFENCE-OUT's matter. */
static int saved_line(void *arg, const char *line)
{
	struct saved *sv = arg;

	if (strncmp(line, ":OUTPUT ", 8) == 0) {
		sscanf(line + 8, "%15s", sv->policy);
	} else if (strncmp(line, ":" FW_CHAIN " ", strlen(FW_CHAIN) + 2) == 0) {
		sv->chain = true;
	} else if (strncmp(line, "-A OUTPUT ", 10) == 0) {
		fw_jumps_line(&sv->jumps, line, FW_CHAIN);
	} else if (strncmp(line, FW_CHAIN_RULE, strlen(FW_CHAIN_RULE)) == 0) {
		return fw_rules_push(&sv->rules, line);
	}
	return 0;
}

int fw_saved_each(const char *text, int (*on_line)(void *arg, const char *line),
		  void *arg)
{
	return fw_saved_each_table(text, "*filter", on_line, arg);
}

int fw_saved_each_table(const char *text, const char *table,
			int (*on_line)(void *arg, const char *line), void *arg)
{
	const char *p = text ? text : "";
	bool filter = false;
	int ret = 0;

	while (*p && !ret) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[FW_RULE_MAX * 2];

		while (len && (p[len - 1] == ' ' || p[len - 1] == '\r'))
			len--;
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		p = eol ? eol + 1 : p + strlen(p);
		if (line[0] == '*')
			filter = strcmp(line, table) == 0;
		else if (filter)
			ret = on_line(arg, line);
	}
	return ret;
}

int fw_saved_read(enum fwexec_backend b, int family,
		  int (*on_line)(void *arg, const char *line), void *arg,
		  char *err, size_t errlen)
{
	return fw_saved_read_table(b, family, "filter", on_line, arg, err,
				   errlen);
}

int fw_saved_read_table(enum fwexec_backend b, int family, const char *table,
			int (*on_line)(void *arg, const char *line), void *arg,
			char *err, size_t errlen)
{
	char *text = NULL, section[16];
	int ret = fw_save_table(b, family, table, &text, err, errlen);

	snprintf(section, sizeof(section), "*%s", table);
	if (!ret)
		ret = fw_saved_each_table(text, section, on_line, arg);
	free(text);
	return ret;
}

void fw_say(fw_report_fn report, void *arg, const char *fmt, ...)
{
	char line[FW_RULE_MAX + 160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (report)
		report(arg, line);
}

/* Mode off expects neither our chain nor the jump. */
static int compare_off(int family, const struct saved *sv, fw_report_fn report,
		       void *arg)
{
	int diffs = 0;

	if (sv->chain) {
		diffs++;
		fw_say(report, arg, "%s: mode is off but chain %s exists",
		       fw_family_name(family), FW_CHAIN);
	}
	if (sv->jumps.lines.n) {
		diffs++;
		fw_say(report, arg, "%s: mode is off but OUTPUT jumps to %s",
		       fw_family_name(family), FW_CHAIN);
	}
	return diffs;
}

/* OUTPUT's policy (DROP, unless the fence is for subjects only), the
 * jumps first in OUTPUT (fwsubject_jumps), our chain declared. */
static int compare_frame(const struct config *cfg, int family,
			 const struct saved *sv, fw_report_fn report, void *arg)
{
	const char *fam = fw_family_name(family);
	struct fw_rules want = {0};
	int diffs = 0, ret;

	if (!config_has_subjects(cfg) && strcmp(sv->policy, "DROP") != 0) {
		diffs++;
		fw_say(report, arg, "%s: OUTPUT policy is %s, expected DROP",
		       fam,
		       sv->policy[0] ? sv->policy : "ACCEPT (no filter table)");
	}
	ret = fwsubject_jumps(cfg, family, &want);
	if (!ret)
		ret = fw_jumps_compare(family, FW_CHAIN, &want, &sv->jumps,
				       report, arg);
	fw_rules_free(&want);
	if (ret < 0)
		return ret;
	diffs += ret;
	if (!sv->chain) {
		diffs++;
		fw_say(report, arg, "%s: chain %s missing", fam, FW_CHAIN);
	}
	return diffs;
}

/* The sets hold what the policy recorded in the rules let in: another
 * fingerprint means entries of another policy (invariant 9). */
int fw_compare_policy(const struct config *cfg, int family,
		      const struct fw_rules *have_rules, fw_report_fn report,
		      void *arg)
{
	char want[PROVENANCE_HEXLEN], have[PROVENANCE_HEXLEN] = "";
	int ret = provenance_fingerprint(cfg, want);

	if (ret)
		return ret;
	fw_rules_find_policy(have_rules, have, sizeof(have));
	if (strcmp(have, want) == 0)
		return 0;
	fw_say(report, arg,
	       "%s: sets %s and %s may hold entries of another policy (the "
	       "rules were installed for fingerprint %s, this config's is %s: "
	       "its allow, ecosystems, mode, allow_cidrs or upstreams "
	       "differ); with a daemon running, 'dnsfence reload' applies the "
	       "file and evicts them, without one 'dnsfence setup' reinstalls "
	       "the rules and flushes the sets",
	       fw_family_name(family), cfg->set4, cfg->set6,
	       have[0] ? have : "none", want);
	return 1;
}

int fw_compare_rules(int family, const char *chain, const struct fw_rules *want,
		     const struct fw_rules *have, fw_report_fn report,
		     void *arg)
{
	const char *fam = fw_family_name(family);
	bool *used = calloc(have->n + 1, sizeof(*used));
	int missing = 0;
	size_t j;

	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < want->n; i++) {
		for (j = 0; j < have->n; j++) {
			if (!used[j] && strcmp(have->v[j], want->v[i]) == 0)
				break;
		}
		if (j < have->n) {
			used[j] = true;
			continue;
		}
		missing++;
		fw_say(report, arg, "%s: rule missing: %s", fam, want->v[i]);
	}
	for (j = 0; j < have->n; j++) {
		if (used[j])
			continue;
		missing++;
		fw_say(report, arg, "%s: unexpected rule in %s: %s", fam, chain,
		       have->v[j]);
	}
	free(used);
	for (size_t i = 0; missing == 0 && i < want->n; i++) {
		if (strcmp(have->v[i], want->v[i]) == 0)
			continue;
		fw_say(
		    report, arg,
		    "%s: rules of %s out of order: rule %zu is %s, expected %s",
		    fam, chain, i + 1, have->v[i], want->v[i]);
		return 1;
	}
	return missing;
}

int fw_compare_chain(const struct config *cfg, int family, const char *chain,
		     const struct fw_rules *want, const struct fw_rules *have,
		     fw_report_fn report, void *arg)
{
	int ret = fw_compare_policy(cfg, family, have, report, arg);
	int diffs = ret;

	if (ret >= 0)
		ret = fw_compare_rules(family, chain, want, have, report, arg);
	return ret < 0 ? ret : diffs + ret;
}

static int compare(const struct config *cfg, int family, const char *saved,
		   fw_report_fn report, void *arg)
{
	struct fw_rules want = {0};
	struct saved sv = {0};
	int ret, diffs = 0;

	ret = fw_saved_each(saved, saved_line, &sv);
	if (ret)
		goto out;
	ret = fw_rules_render(cfg, family, &want);
	if (ret)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		diffs = compare_off(family, &sv, report, arg);
		goto out;
	}
	diffs = compare_frame(cfg, family, &sv, report, arg);
	if (diffs < 0) {
		ret = diffs;
		goto out;
	}
	if (!sv.chain)
		goto out;
	ret = fw_compare_chain(cfg, family, FW_CHAIN, &want, &sv.rules, report,
			       arg);
	if (ret >= 0) {
		diffs += ret;
		ret = 0;
	}
out:
	fw_rules_free(&want);
	saved_free(&sv);
	return ret ? ret : diffs;
}

static void saved_free(struct saved *sv)
{
	fw_jumps_free(&sv->jumps);
	fw_rules_free(&sv->rules);
}

int fwout_compare(const struct config *cfg, int family, const char *saved,
		  void (*report)(void *arg, const char *line), void *arg)
{
	return compare(cfg, family, saved, report, arg);
}

static void keep_first(void *arg, const char *line)
{
	struct first_diff *fd = arg;

	if (fd->n++ == 0)
		snprintf(fd->buf, fd->len, "%s", line);
}

int fw_save_table(enum fwexec_backend b, int family, const char *table,
		  char **text, char *err, size_t errlen)
{
	const char *args[] = {"-t", table, NULL};
	const char *name = fwexec_name(b, family, FWEXEC_SAVE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, NULL, text, &stderr_text);

	if (ret)
		snprintf(err, errlen, "%s: cannot read %s rules with %s: %s",
			 fw_family_name(family), table, name,
			 stderr_text ? stderr_text : strerror(-ret));
	free(stderr_text);
	return ret;
}

int fw_save_family(enum fwexec_backend b, int family, char **text, char *err,
		   size_t errlen)
{
	return fw_save_table(b, family, "filter", text, err, errlen);
}

int fw_save_append(enum fwexec_backend b, int family, const char *table,
		   bool optional, char **text, char *err, size_t errlen)
{
	char *more = NULL, *both;
	int ret = fw_save_table(b, family, table, &more, err, errlen);

	if (ret && optional) {
		free(more);
		err[0] = '\0';
		return 0;
	}
	if (!ret &&
	    asprintf(&both, "%s%s", *text ? *text : "", more ? more : "") < 0)
		ret = -ENOMEM;
	free(more);
	if (!ret) {
		free(*text);
		*text = both;
	}
	return ret;
}

/* What the comparison of cfg needs: the filter table and behind it, in
 * the forward scope, the raw table (DNSFENCE-PRE: it must be readable),
 * in the output scope the nat and raw tables (subjects' DNS redirect and
 * its conntrack zone). Without subjects those two are read only to find
 * what an earlier config of subjects left: where one cannot be read
 * (iptables-legacy-save lists no table to an unprivileged guard),
 * nothing of ours can be checked there. */
static int save_for(const struct config *cfg, enum fwexec_backend b, int family,
		    char **text, char *err, size_t errlen)
{
	static const char *const tables[] = {"nat", "raw"};
	bool forward = cfg->scope == CONFIG_SCOPE_FORWARD;
	int ret = fw_save_family(b, family, text, err, errlen);

	for (size_t i = forward ? 1 : 0; !ret && i < 2; i++)
		ret = fw_save_append(b, family, tables[i],
				     !forward && !config_has_subjects(cfg),
				     text, err, errlen);
	return ret;
}

/* The fingerprint on our chain's rules for one family ("" if none). */
static int stored_policy(enum fwexec_backend b, int family, char *hex,
			 size_t len, char *err, size_t errlen)
{
	struct saved sv = {0};
	int ret = fw_saved_read(b, family, saved_line, &sv, err, errlen);

	hex[0] = '\0';
	if (!ret)
		fw_rules_find_policy(&sv.rules, hex, len);
	saved_free(&sv);
	return ret;
}

int fw_stored_policy(char *hex, size_t len, char *err, size_t errlen)
{
	char v6[PROVENANCE_HEXLEN];
	enum fwexec_backend b;
	int ret = fwexec_backend(&b, err, errlen);

	hex[0] = '\0';
	if (ret)
		return ret;
	ret = stored_policy(b, AF_INET, hex, len, err, errlen);
	if (!ret)
		ret = stored_policy(b, AF_INET6, v6, sizeof(v6), err, errlen);
	if (!ret && strcmp(hex, v6) != 0)
		hex[0] = '\0'; /* the families disagree: no one policy */
	return ret;
}

/* "ipv4: iptables-nft-restore rejected line 7 (-A ...): <its message>".
 * iptables-restore reports "Error occurred at line: N" on stderr. */
static void restore_error(int family, enum fwexec_backend b, const char *input,
			  const char *stderr_text, char *err, size_t errlen)
{
	const char *msg = stderr_text ? stderr_text : "";
	const char *at = strstr(msg, "line: ");
	char first[256] = "", text[FW_RULE_MAX] = "";
	unsigned long lineno = at ? strtoul(at + 6, NULL, 10) : 0;

	while (*msg == '\n')
		msg++;
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(msg, "\n"), msg);
	for (unsigned long n = 1; lineno && input && *input; n++) {
		size_t len = strcspn(input, "\n");

		if (n == lineno) {
			snprintf(text, sizeof(text), " (%.*s)", (int)len,
				 input);
			break;
		}
		input += len + (input[len] ? 1 : 0);
	}
	if (lineno)
		snprintf(err, errlen, "%s: %s rejected line %lu%s: %s",
			 fw_family_name(family),
			 fwexec_name(b, family, FWEXEC_RESTORE), lineno, text,
			 first);
	else
		snprintf(err, errlen, "%s: %s failed: %s",
			 fw_family_name(family),
			 fwexec_name(b, family, FWEXEC_RESTORE),
			 first[0] ? first : "exit status non-zero");
}

int fw_restore_family(enum fwexec_backend b, int family, const char *input,
		      char *err, size_t errlen)
{
	static const char *const args[] = {"-w", "5", "--noflush", NULL};
	const char *name = fwexec_name(b, family, FWEXEC_RESTORE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, input, NULL, &stderr_text);

	if (ret == -EPROTO)
		restore_error(family, b, input, stderr_text, err, errlen);
	else if (ret)
		snprintf(err, errlen, "%s: cannot run %s: %s",
			 fw_family_name(family), name, strerror(-ret));
	free(stderr_text);
	return ret;
}

/* Our chain (flushed and refilled by its ":" line), OUTPUT's policy, and
 * the jump: left alone when it is already there once and first; otherwise
 * every copy is deleted and one inserted first, in the same transaction. */
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen)
{
	struct saved sv = {0};
	int ret = fw_saved_read(b, family, saved_line, &sv, err, errlen);

	if (!ret)
		ret = forget_replaced(cfg, family, &sv.rules, err, errlen);
	if (!ret)
		ret =
		    fw_restore_rules(b, family, fwout_render(cfg, family),
				     jump_fixes(cfg, family, &sv), err, errlen);
	saved_free(&sv);
	return ret;
}

static bool fenced_upstream(const struct config *cfg, const struct netaddr *a)
{
	const struct config_endpoint *lists[] = {cfg->upstreams, cfg->retired};
	const size_t counts[] = {cfg->n_upstreams, cfg->n_retired};
	struct netaddr na;

	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			if (netaddr_from_sockaddr(
				(const struct sockaddr *)&lists[l][i].sa,
				&na) &&
			    netaddr_equal(&na, a))
				return true;
		}
	}
	return false;
}

/* Before the rules stop demanding the daemon's mark towards an address
 * the kernel's rules name as an upstream (a reload's drained upstreams,
 * or those a previous policy left before this setup), the flows to it
 * are deleted: else a workload binding one of the daemon's old ports
 * rides the ESTABLISHED accept there. The old rules are still in place
 * while this runs. */
static int forget_replaced(const struct config *cfg, int family,
			   const struct fw_rules *saved, char *err,
			   size_t errlen)
{
	struct netaddr gone[FW_REPLACED_MAX], a;
	char list[FW_REPLACED_MAX * (NETADDR_STRLEN + 1)] = "";
	size_t n = 0, len = 0, deleted = 0;
	int ret;

	for (size_t i = 0; i < saved->n; i++) {
		bool dup = false;

		if (!fw_rules_upstream_of(saved->v[i], &a) ||
		    a.family != family || fenced_upstream(cfg, &a))
			continue;
		for (size_t j = 0; j < n && !dup; j++)
			dup = netaddr_equal(&gone[j], &a);
		if (dup)
			continue;
		if (n == FW_REPLACED_MAX) {
			snprintf(err, errlen,
				 "%s: more than %d replaced upstreams in the "
				 "rules",
				 fw_family_name(family), FW_REPLACED_MAX);
			return -E2BIG;
		}
		if (n > 0)
			list[len++] = ' ';
		gone[n++] = a;
		netaddr_format(&a, list + len, sizeof(list) - len);
		len += strlen(list + len);
	}
	if (n == 0)
		return 0;
	ret = conntrack_forget(gone, n, &deleted, err, errlen);
	if (ret)
		return ret;
	log_info("firewall",
		 "%s: %zu conntrack entries to replaced upstream(s) %s deleted "
		 "before their rules go",
		 fw_family_name(family), deleted, list);
	return 0;
}

/* The restore lines that leave exactly the wanted jumps, first in OUTPUT
 * ("" when they already are): malloc'd, NULL when out of memory. */
static char *jump_fixes(const struct config *cfg, int family,
			const struct saved *sv)
{
	struct fw_rules want = {0};
	char *fixes = NULL;

	if (fwsubject_jumps(cfg, family, &want) == 0)
		fixes = fw_jumps_fixes(&want, &sv->jumps);
	fw_rules_free(&want);
	return fixes;
}

int fw_restore_rules(enum fwexec_backend b, int family, char *rules,
		     char *extra, char *err, size_t errlen)
{
	static const char commit[] = "COMMIT\n";
	size_t len = rules ? strlen(rules) : 0, cap;
	char *input = NULL;
	int ret = -EINVAL;

	if (len < strlen(commit) ||
	    strcmp(rules + len - strlen(commit), commit) != 0) {
		snprintf(err, errlen, "%s: cannot render the rules",
			 fw_family_name(family));
		goto out;
	}
	len -= strlen(commit);
	cap = extra ? len + strlen(extra) + sizeof(commit) : 0;
	input = cap ? malloc(cap) : NULL;
	ret = -ENOMEM;
	if (!input)
		goto out;
	memcpy(input, rules, len);
	snprintf(input + len, cap - len, "%s%s", extra, commit);
	ret = fw_restore_family(b, family, input, err, errlen);
out:
	free(rules);
	free(extra);
	free(input);
	return ret;
}

/* MLDv1 reports name one group each, as their destination, so the rules
 * can let out exactly the groups of the MLD set (an MLDv2 report lists
 * many groups, and no rule can compare them with a set). The setting is
 * per network namespace. Where /proc/sys is read-only (a container), the
 * kernel sends v2 reports, which stay in; say so. */
static void prefer_mldv1(void)
{
	static const char path[] = "/proc/sys/net/ipv6/conf/all/"
				   "force_mld_version";
	FILE *f = fopen(path, "w");
	bool ok = f != NULL && fputs("1\n", f) >= 0;

	if (f != NULL && fclose(f) != 0)
		ok = false;
	if (ok || errno == ENOENT) /* ENOENT: no IPv6 here */
		return;
	log_warn("firewall",
		 "cannot set %s to 1 (%s): the kernel's MLDv2 reports stay "
		 "in, so snooping bridges and switches may not deliver "
		 "neighbour solicitations to this namespace; set "
		 "net.ipv6.conf.all.force_mld_version=1 (docs/firewall.md)",
		 path, strerror(errno));
}

int fwout_apply(const struct config *cfg, char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret;

	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("firewall", "mode off: no firewall rules installed");
		return 0;
	}
	ret = fwexec_backend(&b, err, errlen);
	if (ret)
		return ret;
	log_debug("firewall", "using %s", fwexec_backend_name(b));
	for (size_t i = 0; i < 2; i++) {
		ret = apply_family(cfg, families[i], b, err, errlen);
		if (ret)
			return ret;
	}
	ret = fw_verify(cfg, b, compare, err, errlen);
	if (ret)
		return ret;
	prefer_mldv1();
	log_info("firewall", "%s rules installed (%s)",
		 config_mode_name(cfg->mode), fwexec_backend_name(b));
	return 0;
}

int fwout_check(const struct config *cfg,
		void (*report)(void *arg, const char *line), void *arg)
{
	return fw_check_with(cfg, compare, report, arg);
}

int fw_verify(const struct config *cfg, enum fwexec_backend b,
	      fw_compare_fn compare_fn, char *err, size_t errlen)
{
	char diff[FW_RULE_MAX + 160] = "";
	int ret = 0;

	for (size_t i = 0; !ret && i < 2; i++) {
		struct first_diff fd = {diff, sizeof(diff), 0};
		char *saved = NULL;

		ret = save_for(cfg, b, families[i], &saved, err, errlen);
		if (!ret)
			ret = compare_fn(cfg, families[i], saved, keep_first,
					 &fd);
		free(saved);
		if (ret > 0) {
			snprintf(err, errlen,
				 "rules not in place after %s-restore: %s (%d "
				 "difference%s)",
				 fwexec_backend_name(b), diff, ret,
				 ret == 1 ? "" : "s");
			ret = -EIO;
		}
	}
	return ret;
}

int fw_check_with(const struct config *cfg, fw_compare_fn compare_fn,
		  fw_report_fn report, void *arg)
{
	enum fwexec_backend b;
	char err[512] = "";
	int ret, diffs = 0;

	ret = fwexec_backend(&b, err, sizeof(err));
	if (ret == -EEXIST) {
		fw_say(report, arg, "%s", err);
		return 1;
	}
	for (size_t i = 0; !ret && i < 2; i++) {
		char *saved = NULL;

		ret = save_for(cfg, b, families[i], &saved, err, sizeof(err));
		if (!ret)
			ret = compare_fn(cfg, families[i], saved, report, arg);
		free(saved);
		if (ret > 0) {
			diffs += ret;
			ret = 0;
		}
	}
	if (ret < 0) {
		log_err("firewall", "%s", err[0] ? err : strerror(-ret));
		return ret;
	}
	return diffs ? 1 : 0;
}

static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen)
{
	struct saved sv = {0};
	char *input = NULL, *del = NULL;
	size_t len, cap;
	int ret;

	ret = fw_saved_read(b, family, saved_line, &sv, err, errlen);
	if (ret)
		goto out;
	ret = -ENOMEM;
	del = fw_jumps_deletes(&sv.jumps);
	cap = (del ? strlen(del) : 0) + 128;
	if (del == NULL || (input = malloc(cap)) == NULL)
		goto out;
	len = (size_t)snprintf(input, cap, "*filter\n:OUTPUT ACCEPT\n%s", del);
	if (sv.chain)
		len += (size_t)snprintf(input + len, cap - len,
					":%s - [0:0]\n-X %s\n", FW_CHAIN,
					FW_CHAIN);
	snprintf(input + len, cap - len, "COMMIT\n");
	ret = fw_restore_family(b, family, input, err, errlen);
out:
	free(del);
	free(input);
	saved_free(&sv);
	return ret;
}

void fw_snapshot(bool on)
{
	fwexec_snapshot(on);
}

int fw_remove(char *err, size_t errlen)
{
	return fw_remove_with(remove_family, err, errlen);
}

int fw_remove_with(int (*remove_fn)(enum fwexec_backend b, int family,
				    char *err, size_t errlen),
		   char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret, first, last;

	ret = fwexec_backend(&b, err, errlen);
	if (ret && ret != -EEXIST)
		return ret;
	first = ret ? FWEXEC_NFT : (int)b;
	last = ret ? FWEXEC_LEGACY : (int)b;
	ret = 0;
	for (int k = first; !ret && k <= last; k++) {
		for (size_t i = 0; !ret && i < 2; i++)
			ret = remove_fn((enum fwexec_backend)k, families[i],
					err, errlen);
	}
	return ret;
}
