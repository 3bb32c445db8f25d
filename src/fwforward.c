// SPDX-License-Identifier: GPL-2.0-or-later
/* fwforward: the fence from outside ("scope": "forward").
 *
 * A workload holding CAP_NET_ADMIN in its own network namespace can
 * rewrite any rule there, so in this scope the rules live on the host, on
 * the path the workload's packets take: matched by the interface they
 * come in on (a bridge such as Docker's br-fenced, or veths with a '+'
 * wildcard). Two chains per family, each rule carrying "-i IFACE", so
 * traffic from other interfaces falls off their end untouched:
 *
 *   DNSFENCE-FWD, the first rule of DOCKER-USER when Docker's FORWARD
 *   sends every packet there first, else the first rule of FORWARD:
 *   upstream addresses rejected in every state, then established flows,
 *   traffic staying among the fenced interfaces, set members and
 *   allow_cidrs on `ports` pass (RETURN: the fence only takes away, so
 *   Docker's isolation and the host's own FORWARD rules still decide);
 *   DNS elsewhere and everything else is rejected.
 *
 *   DNSFENCE-IN, the first rule of INPUT: established flows (replies to
 *   the host's own connections), what IPv6 neighbour discovery needs, and
 *   DNS to our listen addresses are accepted; everything else the
 *   interfaces send to any address of the host is rejected.
 *
 * The built-in chains' policies are never set (an iptables-restore line
 * ":FORWARD ACCEPT" would set it, so none is written), the host's OUTPUT
 * is not touched, and of Docker's chains only our one jump in DOCKER-USER
 * is ours. The rules come from fwfwdrules.c, written as iptables-save
 * prints them, so they are both the restore input and what `check`
 * expects; the last rule of DNSFENCE-FWD carries the policy fingerprint
 * (provenance.c), as DNSFENCE-OUT's does in the output scope. Here: reading
 * iptables-save back, deciding where the jump belongs, comparing, and one
 * iptables-restore --noflush transaction per family to apply or remove.
 *
 * The socket mark opens nothing here: the daemon's upstream traffic leaves
 * through the host's OUTPUT, which this scope does not fence, and a mark
 * a workload puts on its own packets is cleared when they cross into the
 * host's namespace; no rule looks at marks. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "dnsfence/fwexec.h"
#include "dnsfence/fwforward.h"
#include "dnsfence/fwfwdrules.h"
#include "dnsfence/log.h"
#include "dnsfence/provenance.h"

#define F	    "-A " FWFWD_CHAIN " "
#define IN	    "-A " FWFWD_IN_CHAIN " "
#define DOCKER_USER "DOCKER-USER"

/* Our jump in one built-in (or Docker's) chain: exact "-A HOOK -j CHAIN"
 * lines, and the 1-based position of the first among HOOK's rules. */
struct hook {
	int rules, jumps, pos;
};

/* What one family's `iptables-save -t filter` says about our pieces. */
struct fsaved {
	bool fwd_chain, in_chain, docker_user, out_chain;
	bool du_first; /* FORWARD's first rule is "-j DOCKER-USER" */
	struct hook forward, docker, input;
	struct fw_rules fwd, in;
};

static void say(fwfwd_report_fn report, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *fam_name(int family);
static bool starts(const char *s, const char *prefix);
static void count_jump(struct hook *h, const char *line, const char *jump);
static int saved_line(struct fsaved *sv, const char *line);
static int parse_saved(const char *text, struct fsaved *sv);
static void fsaved_free(struct fsaved *sv);
static bool use_docker_user(const struct fsaved *sv);
static int hook_diff(int family, const struct hook *h, const char *hook,
		     const char *chain, fwfwd_report_fn report, void *arg);
static int compare_frame(int family, const struct fsaved *sv,
			 fwfwd_report_fn report, void *arg);
static int compare_off(int family, const struct fsaved *sv,
		       fwfwd_report_fn report, void *arg);
static int compare_chain(int family, const char *chain,
			 const struct fw_rules *want,
			 const struct fw_rules *have, fwfwd_report_fn report,
			 void *arg);
static int compare_policy(const struct config *cfg, int family,
			  const struct fsaved *sv, fwfwd_report_fn report,
			  void *arg);
static int save_family(enum fwexec_backend b, int family, char **text,
		       char *err, size_t errlen);
static int restore_family(enum fwexec_backend b, int family, const char *input,
			  char *err, size_t errlen);
static size_t jump_fixes(const struct fsaved *sv, char *buf, size_t cap);
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen);
static int verify(const struct config *cfg, enum fwexec_backend b, char *err,
		  size_t errlen);
static void keep_first(void *arg, const char *line);
static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen);

static const int families[] = {AF_INET, AF_INET6};

static void say(fwfwd_report_fn report, void *arg, const char *fmt, ...)
{
	char line[FW_RULE_MAX + 160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (report)
		report(arg, line);
}

static const char *fam_name(int family)
{
	return family == AF_INET6 ? "ipv6" : "ipv4";
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void count_jump(struct hook *h, const char *line, const char *jump)
{
	h->rules++;
	if (strcmp(line, jump) == 0 && h->jumps++ == 0)
		h->pos = h->rules;
}

static int saved_line(struct fsaved *sv, const char *line)
{
	if (starts(line, ":" FWFWD_CHAIN " "))
		sv->fwd_chain = true;
	else if (starts(line, ":" FWFWD_IN_CHAIN " "))
		sv->in_chain = true;
	else if (starts(line, ":" DOCKER_USER " "))
		sv->docker_user = true;
	else if (starts(line, ":" FW_CHAIN " "))
		sv->out_chain = true;
	else if (starts(line, F))
		return fw_rules_push(&sv->fwd, line);
	else if (starts(line, IN))
		return fw_rules_push(&sv->in, line);
	else if (starts(line, "-A FORWARD ")) {
		if (sv->forward.rules == 0)
			sv->du_first =
			    strcmp(line, "-A FORWARD -j " DOCKER_USER) == 0;
		count_jump(&sv->forward, line, "-A FORWARD -j " FWFWD_CHAIN);
	} else if (starts(line, "-A " DOCKER_USER " "))
		count_jump(&sv->docker, line,
			   "-A " DOCKER_USER " -j " FWFWD_CHAIN);
	else if (starts(line, "-A INPUT "))
		count_jump(&sv->input, line, "-A INPUT -j " FWFWD_IN_CHAIN);
	return 0;
}

/* Only the filter table matters; trailing blanks are not part of a rule. */
static int parse_saved(const char *text, struct fsaved *sv)
{
	const char *p = text ? text : "";
	bool filter = false;
	int ret = 0;

	memset(sv, 0, sizeof(*sv));
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
			filter = strcmp(line, "*filter") == 0;
		else if (filter)
			ret = saved_line(sv, line);
	}
	if (ret)
		fsaved_free(sv);
	return ret;
}

static void fsaved_free(struct fsaved *sv)
{
	fw_rules_free(&sv->fwd);
	fw_rules_free(&sv->in);
}

/* Docker promises that FORWARD sends every packet to DOCKER-USER first
 * and never flushes it; where that holds, our jump lives there (Docker
 * re-inserting its own rules at the top of FORWARD cannot pass it). */
static bool use_docker_user(const struct fsaved *sv)
{
	return sv->docker_user && sv->du_first;
}

static int hook_diff(int family, const struct hook *h, const char *hook,
		     const char *chain, fwfwd_report_fn report, void *arg)
{
	const char *fam = fam_name(family);

	if (h->jumps == 1 && h->pos == 1)
		return 0;
	if (h->jumps == 0)
		say(report, arg, "%s: jump from %s to %s missing", fam, hook,
		    chain);
	else if (h->jumps > 1)
		say(report, arg, "%s: jump from %s to %s appears %d times", fam,
		    hook, chain, h->jumps);
	else
		say(report, arg,
		    "%s: jump from %s to %s is rule %d of %s, expected 1 "
		    "(rules before it bypass the fence)",
		    fam, hook, chain, h->pos, hook);
	return 1;
}

/* The jumps, the chains, and no output-scope chain: that one would fence
 * the host's own OUTPUT, which this scope promises to leave alone. */
static int compare_frame(int family, const struct fsaved *sv,
			 fwfwd_report_fn report, void *arg)
{
	bool du = use_docker_user(sv);
	const struct hook *other = du ? &sv->forward : &sv->docker;
	const char *fam = fam_name(family);
	int diffs;

	diffs =
	    hook_diff(family, du ? &sv->docker : &sv->forward,
		      du ? DOCKER_USER : "FORWARD", FWFWD_CHAIN, report, arg);
	if (other->jumps) {
		diffs++;
		say(report, arg,
		    "%s: %s also jumps to %s (expected only from %s)", fam,
		    du ? "FORWARD" : DOCKER_USER, FWFWD_CHAIN,
		    du ? DOCKER_USER : "FORWARD");
	}
	diffs +=
	    hook_diff(family, &sv->input, "INPUT", FWFWD_IN_CHAIN, report, arg);
	if (!sv->fwd_chain) {
		diffs++;
		say(report, arg, "%s: chain %s missing", fam, FWFWD_CHAIN);
	}
	if (!sv->in_chain) {
		diffs++;
		say(report, arg, "%s: chain %s missing", fam, FWFWD_IN_CHAIN);
	}
	if (sv->out_chain) {
		diffs++;
		say(report, arg,
		    "%s: chain %s of the output scope exists, but this "
		    "config's "
		    "scope is forward and leaves the host's OUTPUT alone; "
		    "remove it with 'dnsfence teardown' and the old config",
		    fam, FW_CHAIN);
	}
	return diffs;
}

static int compare_off(int family, const struct fsaved *sv,
		       fwfwd_report_fn report, void *arg)
{
	const char *fam = fam_name(family);
	int diffs = 0;

	if (sv->fwd_chain || sv->in_chain) {
		diffs++;
		say(report, arg, "%s: mode is off but chain %s or %s exists",
		    fam, FWFWD_CHAIN, FWFWD_IN_CHAIN);
	}
	if (sv->forward.jumps || sv->docker.jumps || sv->input.jumps) {
		diffs++;
		say(report, arg,
		    "%s: mode is off but a jump to %s or %s exists", fam,
		    FWFWD_CHAIN, FWFWD_IN_CHAIN);
	}
	return diffs;
}

/* Each wanted rule present once, nothing else, and in order. */
static int compare_chain(int family, const char *chain,
			 const struct fw_rules *want,
			 const struct fw_rules *have, fwfwd_report_fn report,
			 void *arg)
{
	const char *fam = fam_name(family);
	bool *used = calloc(have->n + 1, sizeof(*used));
	int diffs = 0;
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
		} else {
			diffs++;
			say(report, arg, "%s: rule missing: %s", fam,
			    want->v[i]);
		}
	}
	for (j = 0; j < have->n; j++) {
		if (used[j])
			continue;
		diffs++;
		say(report, arg, "%s: unexpected rule in %s: %s", fam, chain,
		    have->v[j]);
	}
	free(used);
	for (size_t i = 0; diffs == 0 && i < want->n; i++) {
		if (strcmp(have->v[i], want->v[i]) == 0)
			continue;
		say(report, arg,
		    "%s: rules of %s out of order: rule %zu is %s, expected %s",
		    fam, chain, i + 1, have->v[i], want->v[i]);
		return 1;
	}
	return diffs;
}

/* Another fingerprint: the sets may hold another policy's entries. */
static int compare_policy(const struct config *cfg, int family,
			  const struct fsaved *sv, fwfwd_report_fn report,
			  void *arg)
{
	char want[PROVENANCE_HEXLEN], have[PROVENANCE_HEXLEN] = "";
	int ret = provenance_fingerprint(cfg, want);

	if (ret)
		return ret;
	fw_rules_find_policy(&sv->fwd, have, sizeof(have));
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

int fwfwd_compare(const struct config *cfg, int family, const char *saved,
		  fwfwd_report_fn report, void *arg)
{
	struct fw_rules fwd = {0}, in = {0};
	struct fsaved sv;
	int ret, diffs = 0;

	ret = parse_saved(saved, &sv);
	if (ret)
		return ret;
	ret = fwfwd_rules_render(cfg, family, &fwd, &in);
	if (ret)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		diffs = compare_off(family, &sv, report, arg);
		goto out;
	}
	diffs = compare_frame(family, &sv, report, arg);
	ret = compare_policy(cfg, family, &sv, report, arg);
	if (ret >= 0) {
		diffs += ret;
		ret = compare_chain(family, FWFWD_CHAIN, &fwd, &sv.fwd, report,
				    arg);
	}
	if (ret >= 0) {
		diffs += ret;
		ret = compare_chain(family, FWFWD_IN_CHAIN, &in, &sv.in, report,
				    arg);
	}
	if (ret >= 0) {
		diffs += ret;
		ret = 0;
	}
out:
	fw_rules_free(&fwd);
	fw_rules_free(&in);
	fsaved_free(&sv);
	return ret ? ret : diffs;
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

/* iptables-restore says "Error occurred at line: N"; its first line of
 * stderr names the problem, which is what the operator needs. */
static int restore_family(enum fwexec_backend b, int family, const char *input,
			  char *err, size_t errlen)
{
	static const char *const args[] = {"-w", "5", "--noflush", NULL};
	const char *name = fwexec_name(b, family, FWEXEC_RESTORE);
	char *stderr_text = NULL;
	int ret = fwexec_run(name, args, input, NULL, &stderr_text);

	if (ret == -EPROTO) {
		const char *msg = stderr_text ? stderr_text : "";

		msg += strspn(msg, "\n");
		snprintf(err, errlen, "%s: %s failed: %.*s", fam_name(family),
			 name, (int)strcspn(msg, "\n"),
			 *msg ? msg : "exit status non-zero");
	} else if (ret) {
		snprintf(err, errlen, "%s: cannot run %s: %s", fam_name(family),
			 name, strerror(-ret));
	}
	free(stderr_text);
	return ret;
}

/* The restore lines that leave exactly one jump to each chain, first in
 * its hook; nothing when they are already so. */
static size_t jump_fixes(const struct fsaved *sv, char *buf, size_t cap)
{
	bool du = use_docker_user(sv);
	const struct hook *want = du ? &sv->docker : &sv->forward;
	const struct hook *other = du ? &sv->forward : &sv->docker;
	size_t len = 0;

	if (want->jumps != 1 || want->pos != 1 || other->jumps) {
		for (int i = 0; i < sv->forward.jumps; i++)
			len +=
			    (size_t)snprintf(buf + len, cap - len,
					     "-D FORWARD -j " FWFWD_CHAIN "\n");
		for (int i = 0; i < sv->docker.jumps; i++)
			len += (size_t)snprintf(buf + len, cap - len,
						"-D " DOCKER_USER
						" -j " FWFWD_CHAIN "\n");
		len += (size_t)snprintf(buf + len, cap - len,
					"-I %s 1 -j " FWFWD_CHAIN "\n",
					du ? DOCKER_USER : "FORWARD");
	}
	if (sv->input.jumps != 1 || sv->input.pos != 1) {
		for (int i = 0; i < sv->input.jumps; i++)
			len += (size_t)snprintf(buf + len, cap - len,
						"-D INPUT -j " FWFWD_IN_CHAIN
						"\n");
		len += (size_t)snprintf(buf + len, cap - len,
					"-I INPUT 1 -j " FWFWD_IN_CHAIN "\n");
	}
	return len;
}

/* Our chains (flushed and refilled by their ":" lines) and the jumps, in
 * one transaction per family: the kernel never sees half a fence. */
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen)
{
	char *saved = NULL, *rules = NULL, *input = NULL;
	struct fsaved sv = {0};
	size_t len, cap;
	int ret;

	ret = save_family(b, family, &saved, err, errlen);
	if (!ret)
		ret = parse_saved(saved, &sv);
	if (ret)
		goto out;
	rules = fwfwd_rules_text(cfg, family);
	if (!rules) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: cannot render the rules",
			 fam_name(family));
		goto out;
	}
	len = strlen(rules) - strlen("COMMIT\n");
	cap =
	    len + 64 +
	    (size_t)(sv.forward.jumps + sv.docker.jumps + sv.input.jumps + 2) *
		48;
	input = malloc(cap);
	if (!input) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(input, rules, len);
	len += jump_fixes(&sv, input + len, cap - len);
	snprintf(input + len, cap - len, "COMMIT\n");
	ret = restore_family(b, family, input, err, errlen);
out:
	fsaved_free(&sv);
	free(saved);
	free(rules);
	free(input);
	return ret;
}

static void keep_first(void *arg, const char *line)
{
	char **first = arg;

	if (!*first)
		*first = strdup(line);
}

/* Read both families back: a rule the kernel did not take fails setup. */
static int verify(const struct config *cfg, enum fwexec_backend b, char *err,
		  size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < 2; i++) {
		char *saved = NULL, *first = NULL;

		ret = save_family(b, families[i], &saved, err, errlen);
		if (!ret)
			ret = fwfwd_compare(cfg, families[i], saved, keep_first,
					    &first);
		if (ret > 0)
			snprintf(err, errlen,
				 "rules not in place after %s-restore: %s (%d "
				 "difference%s)",
				 fwexec_backend_name(b), first ? first : "?",
				 ret, ret == 1 ? "" : "s");
		free(first);
		free(saved);
		ret = ret > 0 ? -EIO : ret;
	}
	return ret;
}

int fwfwd_apply(const struct config *cfg, char *err, size_t errlen)
{
	enum fwexec_backend b;
	int ret;

	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("firewall", "mode off: no firewall rules installed");
		return 0;
	}
	ret = fwexec_backend(&b, err, errlen);
	for (size_t i = 0; !ret && i < 2; i++)
		ret = apply_family(cfg, families[i], b, err, errlen);
	if (!ret)
		ret = verify(cfg, b, err, errlen);
	if (!ret)
		log_info("firewall",
			 "%s rules installed for traffic from %zu interface "
			 "pattern%s (forward scope, %s)",
			 config_mode_name(cfg->mode), cfg->n_interfaces,
			 cfg->n_interfaces == 1 ? "" : "s",
			 fwexec_backend_name(b));
	return ret;
}

int fwfwd_check(const struct config *cfg, fwfwd_report_fn report, void *arg)
{
	enum fwexec_backend b;
	char err[512];
	int ret, diffs = 0;

	ret = fwexec_backend(&b, err, sizeof(err));
	if (ret == -EEXIST) {
		say(report, arg, "%s", err);
		return 1;
	}
	for (size_t i = 0; !ret && i < 2; i++) {
		char *saved = NULL;

		ret = save_family(b, families[i], &saved, err, sizeof(err));
		if (!ret)
			ret =
			    fwfwd_compare(cfg, families[i], saved, report, arg);
		free(saved);
		if (ret > 0) {
			diffs += ret;
			ret = 0;
		}
	}
	if (ret < 0) {
		log_err("firewall", "%s", err);
		return ret;
	}
	return diffs ? 1 : 0;
}

static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen)
{
	char *saved = NULL, input[2048];
	struct fsaved sv = {0};
	size_t len = 0;
	int ret;

	ret = save_family(b, family, &saved, err, errlen);
	if (!ret)
		ret = parse_saved(saved, &sv);
	if (ret)
		goto out;
	len += (size_t)snprintf(input, sizeof(input), "*filter\n");
	for (int i = 0; i < sv.forward.jumps && i < 8; i++)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					"-D FORWARD -j " FWFWD_CHAIN "\n");
	for (int i = 0; i < sv.docker.jumps && i < 8; i++)
		len +=
		    (size_t)snprintf(input + len, sizeof(input) - len,
				     "-D " DOCKER_USER " -j " FWFWD_CHAIN "\n");
	for (int i = 0; i < sv.input.jumps && i < 8; i++)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					"-D INPUT -j " FWFWD_IN_CHAIN "\n");
	if (sv.fwd_chain)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					":" FWFWD_CHAIN " - [0:0]\n"
					"-X " FWFWD_CHAIN "\n");
	if (sv.in_chain)
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					":" FWFWD_IN_CHAIN " - [0:0]\n"
					"-X " FWFWD_IN_CHAIN "\n");
	snprintf(input + len, sizeof(input) - len, "COMMIT\n");
	ret = restore_family(b, family, input, err, errlen);
out:
	fsaved_free(&sv);
	free(saved);
	return ret;
}

/* On the backend holding rules; on both when both do (a half-migrated
 * host), so teardown can clean up what setup refuses. */
int fwfwd_remove(char *err, size_t errlen)
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
			ret = remove_family((enum fwexec_backend)k, families[i],
					    err, errlen);
	}
	return ret;
}

int fwfwd_stored_policy(char *hex, size_t len, char *err, size_t errlen)
{
	char got[2][PROVENANCE_HEXLEN] = {"", ""};
	enum fwexec_backend b;
	int ret = fwexec_backend(&b, err, errlen);

	hex[0] = '\0';
	for (size_t i = 0; !ret && i < 2; i++) {
		struct fsaved sv = {0};
		char *saved = NULL;

		ret = save_family(b, families[i], &saved, err, errlen);
		if (!ret)
			ret = parse_saved(saved, &sv);
		if (!ret)
			fw_rules_find_policy(&sv.fwd, got[i], sizeof(got[i]));
		fsaved_free(&sv);
		free(saved);
	}
	if (!ret && strcmp(got[0], got[1]) == 0)
		snprintf(hex, len, "%s", got[0]);
	return ret;
}
