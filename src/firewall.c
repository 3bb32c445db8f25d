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

#include "dnsfence/firewall.h"
#include "dnsfence/fwexec.h"
#include "dnsfence/fwforward.h"
#include "dnsfence/fwrules.h"
#include "dnsfence/log.h"
#include "dnsfence/provenance.h"

#define JUMP_LINE "-A OUTPUT -j " FW_CHAIN

typedef void (*report_fn)(void *, const char *);

/* What one family's `iptables-save -t filter` says about our pieces. */
struct saved {
	char policy[16];       /* OUTPUT's policy; "" when not listed */
	bool chain;	       /* ":DNSFENCE-OUT" is declared */
	int jumps;	       /* exact "-A OUTPUT -j DNSFENCE-OUT" lines */
	int jump_pos;	       /* 1-based position of the first one in OUTPUT */
	struct fw_rules rules; /* "-A DNSFENCE-OUT ..." lines, in order */
};

struct first_diff {
	char *buf;
	size_t len;
	int n;
};

static const char *fam_name(int family);
static int parse_saved(const char *text, struct saved *sv);
static void say(report_fn report, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int compare_off(int family, const struct saved *sv, report_fn report,
		       void *arg);
static int compare_frame(int family, const struct saved *sv, report_fn report,
			 void *arg);
static int compare_policy(const struct config *cfg, int family,
			  const struct saved *sv, report_fn report, void *arg);
static int compare_rules(int family, const struct fw_rules *want,
			 const struct saved *sv, report_fn report, void *arg);
static int compare(const struct config *cfg, int family, const char *saved,
		   report_fn report, void *arg);
static void keep_first(void *arg, const char *line);
static int save_family(enum fwexec_backend b, int family, char **text,
		       char *err, size_t errlen);
static int stored_policy(enum fwexec_backend b, int family, char *hex,
			 size_t len, char *err, size_t errlen);
static void restore_error(int family, enum fwexec_backend b, const char *input,
			  const char *stderr_text, char *err, size_t errlen);
static int restore_family(enum fwexec_backend b, int family, const char *input,
			  char *err, size_t errlen);
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen);
static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen);
static void prefer_mldv1(void);

static const int families[] = {AF_INET, AF_INET6};

static const char *fam_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

char *fw_render(const struct config *cfg, int family, uid_t uid)
{
	struct fw_rules r = {0};
	size_t len = 0, cap;
	char *out = NULL;

	(void)uid;
	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_rules_text(cfg, family);
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
	len += (size_t)snprintf(
	    out, cap, "*filter\n:OUTPUT DROP\n:%s - [0:0]\n", FW_CHAIN);
	for (size_t i = 0; i < r.n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\n", r.v[i]);
	snprintf(out + len, cap - len, "COMMIT\n");
out:
	fw_rules_free(&r);
	return out;
}

/* Only the filter table's OUTPUT and DNSFENCE-OUT lines matter. */
static int parse_saved(const char *text, struct saved *sv)
{
	const char *p = text ? text : "";
	bool filter = false;
	int out_rules = 0, ret = 0;

	memset(sv, 0, sizeof(*sv));
	while (*p) {
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
		if (line[0] == '*') {
			filter = strcmp(line, "*filter") == 0;
		} else if (!filter) {
			continue;
		} else if (strncmp(line, ":OUTPUT ", 8) == 0) {
			sscanf(line + 8, "%15s", sv->policy);
		} else if (strncmp(line, ":" FW_CHAIN " ",
				   strlen(FW_CHAIN) + 2) == 0) {
			sv->chain = true;
		} else if (strncmp(line, "-A OUTPUT ", 10) == 0) {
			out_rules++;
			if (strcmp(line, JUMP_LINE) != 0)
				continue;
			if (sv->jumps == 0)
				sv->jump_pos = out_rules;
			sv->jumps++;
		} else if (strncmp(line, FW_CHAIN_RULE,
				   strlen(FW_CHAIN_RULE)) == 0) {
			ret = fw_rules_push(&sv->rules, line);
			if (ret)
				break;
		}
	}
	if (ret)
		fw_rules_free(&sv->rules);
	return ret;
}

static void say(report_fn report, void *arg, const char *fmt, ...)
{
	char line[FW_RULE_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (report)
		report(arg, line);
}

/* Mode off expects neither our chain nor the jump. */
static int compare_off(int family, const struct saved *sv, report_fn report,
		       void *arg)
{
	int diffs = 0;

	if (sv->chain) {
		diffs++;
		say(report, arg, "%s: mode is off but chain %s exists",
		    fam_name(family), FW_CHAIN);
	}
	if (sv->jumps) {
		diffs++;
		say(report, arg, "%s: mode is off but OUTPUT jumps to %s",
		    fam_name(family), FW_CHAIN);
	}
	return diffs;
}

/* OUTPUT's policy, the one jump first in OUTPUT, our chain declared. */
static int compare_frame(int family, const struct saved *sv, report_fn report,
			 void *arg)
{
	const char *fam = fam_name(family);
	int diffs = 1;

	if (strcmp(sv->policy, "DROP") != 0)
		say(report, arg, "%s: OUTPUT policy is %s, expected DROP", fam,
		    sv->policy[0] ? sv->policy : "ACCEPT (no filter table)");
	else
		diffs = 0;
	diffs++;
	if (sv->jumps == 0)
		say(report, arg, "%s: jump from OUTPUT to %s missing", fam,
		    FW_CHAIN);
	else if (sv->jumps > 1)
		say(report, arg, "%s: jump from OUTPUT to %s appears %d times",
		    fam, FW_CHAIN, sv->jumps);
	else if (sv->jump_pos != 1)
		say(report, arg,
		    "%s: jump from OUTPUT to %s is rule %d of OUTPUT, expected "
		    "1 (rules before it bypass the fence)",
		    fam, FW_CHAIN, sv->jump_pos);
	else
		diffs--;
	if (!sv->chain) {
		diffs++;
		say(report, arg, "%s: chain %s missing", fam, FW_CHAIN);
	}
	return diffs;
}

/* The sets hold what the policy recorded in the rules let in: another
 * fingerprint means entries of another policy (invariant 9). */
static int compare_policy(const struct config *cfg, int family,
			  const struct saved *sv, report_fn report, void *arg)
{
	char want[PROVENANCE_HEXLEN], have[PROVENANCE_HEXLEN] = "";
	int ret = provenance_fingerprint(cfg, want);

	if (ret)
		return ret;
	fw_rules_find_policy(&sv->rules, have, sizeof(have));
	if (strcmp(have, want) == 0)
		return 0;
	say(report, arg,
	    "%s: sets %s and %s may hold entries of another policy (rules "
	    "installed for policy %s, this config is %s); run 'dnsfence "
	    "setup' to flush them",
	    fam_name(family), cfg->set4, cfg->set6, have[0] ? have : "none",
	    want);
	return 1;
}

/* Each wanted rule present once, nothing else, and in order. */
static int compare_rules(int family, const struct fw_rules *want,
			 const struct saved *sv, report_fn report, void *arg)
{
	const char *fam = fam_name(family);
	bool *used = calloc(sv->rules.n + 1, sizeof(*used));
	int missing = 0;
	size_t j;

	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < want->n; i++) {
		for (j = 0; j < sv->rules.n; j++) {
			if (!used[j] && strcmp(sv->rules.v[j], want->v[i]) == 0)
				break;
		}
		if (j < sv->rules.n) {
			used[j] = true;
			continue;
		}
		missing++;
		say(report, arg, "%s: rule missing: %s", fam, want->v[i]);
	}
	for (j = 0; j < sv->rules.n; j++) {
		if (used[j])
			continue;
		missing++;
		say(report, arg, "%s: unexpected rule in %s: %s", fam, FW_CHAIN,
		    sv->rules.v[j]);
	}
	free(used);
	for (size_t i = 0; missing == 0 && i < want->n; i++) {
		if (strcmp(sv->rules.v[i], want->v[i]) == 0)
			continue;
		say(report, arg,
		    "%s: rules of %s out of order: rule %zu is %s, expected %s",
		    fam, FW_CHAIN, i + 1, sv->rules.v[i], want->v[i]);
		return 1;
	}
	return missing;
}

static int compare(const struct config *cfg, int family, const char *saved,
		   report_fn report, void *arg)
{
	struct fw_rules want = {0};
	struct saved sv;
	int ret, diffs = 0;

	ret = parse_saved(saved, &sv);
	if (ret)
		return ret;
	ret = fw_rules_render(cfg, family, &want);
	if (ret)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		diffs = compare_off(family, &sv, report, arg);
		goto out;
	}
	diffs = compare_frame(family, &sv, report, arg);
	if (!sv.chain)
		goto out;
	ret = compare_policy(cfg, family, &sv, report, arg);
	if (ret >= 0) {
		diffs += ret;
		ret = compare_rules(family, &want, &sv, report, arg);
	}
	if (ret >= 0) {
		diffs += ret;
		ret = 0;
	}
out:
	fw_rules_free(&want);
	fw_rules_free(&sv.rules);
	return ret ? ret : diffs;
}

int fw_compare(const struct config *cfg, int family, uid_t uid,
	       const char *saved, void (*report)(void *arg, const char *line),
	       void *arg)
{
	(void)uid;
	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_compare(cfg, family, saved, report, arg);
	return compare(cfg, family, saved, report, arg);
}

static void keep_first(void *arg, const char *line)
{
	struct first_diff *fd = arg;

	if (fd->n++ == 0)
		snprintf(fd->buf, fd->len, "%s", line);
}

static int save_family(enum fwexec_backend b, int family, char **text,
		       char *err, size_t errlen)
{
	static const char *const args[] = {"-t", "filter", NULL};
	const char *name = fwexec_name(b, family, FWEXEC_SAVE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, NULL, text, &stderr_text);

	if (ret)
		snprintf(err, errlen, "%s: cannot read rules with %s: %s",
			 fam_name(family), name,
			 stderr_text ? stderr_text : strerror(-ret));
	free(stderr_text);
	return ret;
}

/* The fingerprint on our chain's rules for one family ("" if none). */
static int stored_policy(enum fwexec_backend b, int family, char *hex,
			 size_t len, char *err, size_t errlen)
{
	struct saved sv = {0};
	char *saved = NULL;
	int ret = save_family(b, family, &saved, err, errlen);

	hex[0] = '\0';
	if (!ret)
		ret = parse_saved(saved, &sv);
	if (!ret)
		fw_rules_find_policy(&sv.rules, hex, len);
	fw_rules_free(&sv.rules);
	free(saved);
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
			 fam_name(family),
			 fwexec_name(b, family, FWEXEC_RESTORE), lineno, text,
			 first);
	else
		snprintf(err, errlen, "%s: %s failed: %s", fam_name(family),
			 fwexec_name(b, family, FWEXEC_RESTORE),
			 first[0] ? first : "exit status non-zero");
}

static int restore_family(enum fwexec_backend b, int family, const char *input,
			  char *err, size_t errlen)
{
	static const char *const args[] = {"-w", "5", "--noflush", NULL};
	const char *name = fwexec_name(b, family, FWEXEC_RESTORE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, input, NULL, &stderr_text);

	if (ret == -EPROTO)
		restore_error(family, b, input, stderr_text, err, errlen);
	else if (ret)
		snprintf(err, errlen, "%s: cannot run %s: %s", fam_name(family),
			 name, strerror(-ret));
	free(stderr_text);
	return ret;
}

/* Our chain (flushed and refilled by its ":" line), OUTPUT's policy, and
 * the jump: left alone when it is already there once and first; otherwise
 * every copy is deleted and one inserted first, in the same transaction. */
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen)
{
	char *saved = NULL, *rules = NULL, *input = NULL;
	struct saved sv = {0};
	size_t len, cap;
	int ret;

	ret = save_family(b, family, &saved, err, errlen);
	if (ret)
		goto out;
	ret = parse_saved(saved, &sv);
	if (ret)
		goto out;
	rules = fw_render(cfg, family, 0);
	if (!rules) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: cannot render the rules",
			 fam_name(family));
		goto out;
	}
	len = strlen(rules) - strlen("COMMIT\n");
	cap = len + (size_t)(sv.jumps + 1) * 64 + 16;
	input = malloc(cap);
	if (!input) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(input, rules, len);
	if (sv.jumps != 1 || sv.jump_pos != 1) {
		for (int i = 0; i < sv.jumps; i++)
			len += (size_t)snprintf(input + len, cap - len,
						"-D OUTPUT -j %s\n", FW_CHAIN);
		len += (size_t)snprintf(input + len, cap - len,
					"-I OUTPUT 1 -j %s\n", FW_CHAIN);
	}
	snprintf(input + len, cap - len, "COMMIT\n");
	ret = restore_family(b, family, input, err, errlen);
out:
	fw_rules_free(&sv.rules);
	free(saved);
	free(rules);
	free(input);
	return ret;
}

/* MLDv1 reports name one group each, as their destination, so the rules
 * can let out exactly the solicited-node ones (an MLDv2 report lists many
 * groups, and no rule can read them all). The setting is per network
 * namespace. Where /proc/sys is read-only (a container), the v2 rules
 * still pass reports of one or two solicited-node groups; say so. */
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
		 "cannot set %s to 1 (%s): MLDv2 reports announcing more than "
		 "two groups stay in, which may hide this namespace from "
		 "snooping bridges; set net.ipv6.conf.all.force_mld_version=1 "
		 "(docs/firewall.md)",
		 path, strerror(errno));
}

int fw_apply(const struct config *cfg, uid_t uid, char *err, size_t errlen)
{
	(void)uid;
	enum fwexec_backend b;
	char diff[FW_RULE_MAX + 128];
	int ret;

	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_apply(cfg, err, errlen);
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
	for (size_t i = 0; i < 2; i++) {
		struct first_diff fd = {diff, sizeof(diff), 0};
		char *saved = NULL;

		ret = save_family(b, families[i], &saved, err, errlen);
		if (!ret)
			ret = compare(cfg, families[i], saved, keep_first, &fd);
		free(saved);
		if (ret > 0) {
			snprintf(err, errlen,
				 "rules not in place after %s-restore: %s (%d "
				 "difference%s)",
				 fwexec_backend_name(b), diff, ret,
				 ret == 1 ? "" : "s");
			return -EIO;
		}
		if (ret < 0)
			return ret;
	}
	prefer_mldv1();
	log_info("firewall", "%s rules installed (%s)",
		 config_mode_name(cfg->mode), fwexec_backend_name(b));
	return 0;
}

int fw_check(const struct config *cfg, uid_t uid,
	     void (*report)(void *arg, const char *line), void *arg)
{
	(void)uid;
	enum fwexec_backend b;
	char err[512];
	int ret, diffs = 0;

	if (cfg->scope == CONFIG_SCOPE_FORWARD)
		return fwfwd_check(cfg, report, arg);
	ret = fwexec_backend(&b, err, sizeof(err));
	if (ret == -EEXIST) {
		say(report, arg, "%s", err);
		return 1;
	}
	if (ret) {
		log_err("firewall", "%s", err);
		return ret;
	}
	for (size_t i = 0; i < 2; i++) {
		char *saved = NULL;

		ret = save_family(b, families[i], &saved, err, sizeof(err));
		if (!ret)
			ret = compare(cfg, families[i], saved, report, arg);
		free(saved);
		if (ret < 0) {
			log_err("firewall", "%s", err);
			return ret;
		}
		diffs += ret;
	}
	return diffs ? 1 : 0;
}

static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen)
{
	char *saved = NULL, input[1024];
	struct saved sv = {0};
	size_t len;
	int ret;

	ret = save_family(b, family, &saved, err, errlen);
	if (!ret)
		ret = parse_saved(saved, &sv);
	if (ret)
		goto out;
	len =
	    (size_t)snprintf(input, sizeof(input), "*filter\n:OUTPUT ACCEPT\n");
	for (int i = 0; i < sv.jumps && i < 16; i++)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					"-D OUTPUT -j %s\n", FW_CHAIN);
	if (sv.chain)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					":%s - [0:0]\n-X %s\n", FW_CHAIN,
					FW_CHAIN);
	snprintf(input + len, sizeof(input) - len, "COMMIT\n");
	ret = restore_family(b, family, input, err, errlen);
out:
	fw_rules_free(&sv.rules);
	free(saved);
	return ret;
}

/* Works on the backend holding rules; when both do (a half-migrated
 * namespace), on both, so teardown can clean up what setup refuses. */
int fw_remove(char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret, first = 0, last = 0;

	ret = fwexec_backend(&b, err, errlen);
	if (ret == -EEXIST) {
		first = FWEXEC_NFT;
		last = FWEXEC_LEGACY;
	} else if (ret) {
		return ret;
	} else {
		first = last = (int)b;
	}
	for (int k = first; k <= last; k++) {
		for (size_t i = 0; i < 2; i++) {
			ret = remove_family((enum fwexec_backend)k, families[i],
					    err, errlen);
			if (ret)
				return ret;
		}
	}
	return 0;
}
