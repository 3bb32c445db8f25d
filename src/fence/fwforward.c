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
 *   interfaces send to any address of the host is rejected, and our
 *   listeners answer no other interface.
 *
 *   DNSFENCE-PRE, in the raw table, the first rule of its PREROUTING:
 *   a fenced interface's packets with a source not of its own networks
 *   are dropped before conntrack, INPUT or any reject sees them
 *   (invariant 13; fwfwdrules.c).
 *
 * The built-in chains' policies are never set (an iptables-restore line
 * ":FORWARD ACCEPT" would set it, so none is written), the host's OUTPUT
 * is not touched, and of Docker's chains only our one jump in DOCKER-USER
 * is ours. The rules come from fwfwdrules.c, written as iptables-save
 * prints them, so they are both the restore input and what `check`
 * expects; the last rule of DNSFENCE-FWD carries the policy fingerprint
 * (provenance.c), as DNSFENCE-OUT's does in the output scope. Here: what
 * iptables-save says about our chains and jumps, deciding where the jump
 * belongs, and one iptables-restore --noflush transaction per family to
 * apply or remove; reading the filter table's lines, comparing a chain's
 * rules and the fingerprint, and running save/restore are firewall.c's
 * (the fw_* helpers in firewall.h), so both scopes report alike.
 *
 * The socket mark opens nothing here: the daemon's upstream traffic leaves
 * through the host's OUTPUT, which this scope does not fence, and a mark
 * a workload puts on its own packets is cleared when they cross into the
 * host's namespace; no rule looks at marks. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "fence/firewall.h"
#include "fence/fwexec.h"
#include "fence/fwforward.h"
#include "fence/fwfwdrules.h"
#include "base/log.h"
#include "config/fingerprint.h"

#define F	    "-A " FWFWD_CHAIN " "
#define IN	    "-A " FWFWD_IN_CHAIN " "
#define DOCKER_USER "DOCKER-USER"
#define PRE	    "-A " FWFWD_PRE_CHAIN " "
#define PRE_HOOK    "raw PREROUTING"

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
	bool pre_chain; /* the raw table */
	struct hook prerouting;
	struct fw_rules pre;
};

static bool starts(const char *s, const char *prefix);
static void count_jump(struct hook *h, const char *line, const char *jump);
static int saved_line(void *arg, const char *line);
static bool ends_in_drop(const char *line);
static int raw_line(void *arg, const char *line);
static int read_saved(enum fwexec_backend b, int family, struct fsaved *sv,
		      char *err, size_t errlen);
static void fsaved_free(struct fsaved *sv);
static bool use_docker_user(const struct fsaved *sv);
static int hook_diff(int family, const struct hook *h, const char *hook,
		     const char *chain, fw_report_fn report, void *arg);
static int compare_frame(int family, const struct fsaved *sv,
			 fw_report_fn report, void *arg);
static int compare_off(int family, const struct fsaved *sv, fw_report_fn report,
		       void *arg);
static char *jump_fixes(const struct fsaved *sv);
static char *restore_text(const struct config *cfg, int family,
			  const struct fsaved *sv);
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen);
static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen);
static bool may_be_bridge(const char *pat);

static const int families[] = {AF_INET, AF_INET6};

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

static int saved_line(void *arg, const char *line)
{
	struct fsaved *sv = arg;

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

/* A rule that can only drop: one before our jump cannot let a forged
 * packet past it (Docker puts such rules in raw PREROUTING for published
 * ports), so it does not count as a rule ahead of ours. */
static bool ends_in_drop(const char *line)
{
	size_t n = strlen(line);

	return n >= 8 && strcmp(line + n - 8, " -j DROP") == 0;
}

/* One line of the raw table: our chain, its rules, PREROUTING's jumps
 * (counted among the rules that do not only drop). */
static int raw_line(void *arg, const char *line)
{
	struct fsaved *sv = arg;

	if (starts(line, ":" FWFWD_PRE_CHAIN " "))
		sv->pre_chain = true;
	else if (starts(line, PRE))
		return fw_rules_push(&sv->pre, line);
	else if (starts(line, "-A PREROUTING ") && !ends_in_drop(line))
		count_jump(&sv->prerouting, line,
			   "-A PREROUTING -j " FWFWD_PRE_CHAIN);
	return 0;
}

/* Both tables of one family. */
static int read_saved(enum fwexec_backend b, int family, struct fsaved *sv,
		      char *err, size_t errlen)
{
	int ret = fw_saved_read(b, family, saved_line, sv, err, errlen);

	if (!ret)
		ret = fw_saved_read_table(b, family, "raw", raw_line, sv, err,
					  errlen);
	return ret;
}

static void fsaved_free(struct fsaved *sv)
{
	fw_rules_free(&sv->fwd);
	fw_rules_free(&sv->in);
	fw_rules_free(&sv->pre);
}

/* Docker promises that FORWARD sends every packet to DOCKER-USER first
 * and never flushes it; where that holds, our jump lives there (Docker
 * re-inserting its own rules at the top of FORWARD cannot pass it). */
static bool use_docker_user(const struct fsaved *sv)
{
	return sv->docker_user && sv->du_first;
}

static int hook_diff(int family, const struct hook *h, const char *hook,
		     const char *chain, fw_report_fn report, void *arg)
{
	const char *fam = fw_family_name(family);

	if (h->jumps == 1 && h->pos == 1)
		return 0;
	if (h->jumps == 0)
		fw_say(report, arg, "%s: jump from %s to %s missing", fam, hook,
		       chain);
	else if (h->jumps > 1)
		fw_say(report, arg, "%s: jump from %s to %s appears %d times",
		       fam, hook, chain, h->jumps);
	else
		fw_say(report, arg,
		       "%s: jump from %s to %s is rule %d of %s, expected 1 "
		       "(rules before it bypass the fence)",
		       fam, hook, chain, h->pos, hook);
	return 1;
}

/* The jumps, the chains, and no output-scope chain: that one would fence
 * the host's own OUTPUT, which this scope promises to leave alone. */
static int compare_frame(int family, const struct fsaved *sv,
			 fw_report_fn report, void *arg)
{
	bool du = use_docker_user(sv);
	const struct hook *other = du ? &sv->forward : &sv->docker;
	const char *fam = fw_family_name(family);
	int diffs;

	diffs =
	    hook_diff(family, du ? &sv->docker : &sv->forward,
		      du ? DOCKER_USER : "FORWARD", FWFWD_CHAIN, report, arg);
	if (other->jumps) {
		diffs++;
		fw_say(report, arg,
		       "%s: %s also jumps to %s (expected only from %s)", fam,
		       du ? "FORWARD" : DOCKER_USER, FWFWD_CHAIN,
		       du ? DOCKER_USER : "FORWARD");
	}
	diffs +=
	    hook_diff(family, &sv->input, "INPUT", FWFWD_IN_CHAIN, report, arg);
	diffs += hook_diff(family, &sv->prerouting, PRE_HOOK, FWFWD_PRE_CHAIN,
			   report, arg);
	if (!sv->pre_chain) {
		diffs++;
		fw_say(report, arg, "%s: chain %s (raw table) missing", fam,
		       FWFWD_PRE_CHAIN);
	}
	if (!sv->fwd_chain) {
		diffs++;
		fw_say(report, arg, "%s: chain %s missing", fam, FWFWD_CHAIN);
	}
	if (!sv->in_chain) {
		diffs++;
		fw_say(report, arg, "%s: chain %s missing", fam,
		       FWFWD_IN_CHAIN);
	}
	if (sv->out_chain) {
		diffs++;
		fw_say(report, arg,
		       "%s: chain %s of the output scope exists, but this "
		       "config's "
		       "scope is forward and leaves the host's OUTPUT alone; "
		       "remove it with 'dnsfence teardown' and the old config",
		       fam, FW_CHAIN);
	}
	return diffs;
}

static int compare_off(int family, const struct fsaved *sv, fw_report_fn report,
		       void *arg)
{
	const char *fam = fw_family_name(family);
	int diffs = 0;

	if (sv->fwd_chain || sv->in_chain || sv->pre_chain) {
		diffs++;
		fw_say(report, arg,
		       "%s: mode is off but chain %s, %s or %s exists", fam,
		       FWFWD_CHAIN, FWFWD_IN_CHAIN, FWFWD_PRE_CHAIN);
	}
	if (sv->forward.jumps || sv->docker.jumps || sv->input.jumps ||
	    sv->prerouting.jumps) {
		diffs++;
		fw_say(report, arg,
		       "%s: mode is off but a jump to %s, %s or %s exists", fam,
		       FWFWD_CHAIN, FWFWD_IN_CHAIN, FWFWD_PRE_CHAIN);
	}
	return diffs;
}

int fwfwd_compare(const struct config *cfg, int family, const char *saved,
		  fw_report_fn report, void *arg)
{
	struct fw_rules fwd = {0}, in = {0}, pre = {0};
	struct fsaved sv = {0};
	int ret, diffs = 0;

	ret = fw_saved_each(saved, saved_line, &sv);
	if (!ret)
		ret = fw_saved_each_table(saved, "*raw", raw_line, &sv);
	if (!ret)
		ret = fwfwd_rules_render(cfg, family, &fwd, &in);
	if (!ret)
		ret = fwfwd_pre_render(cfg, family, &pre);
	if (ret)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		diffs = compare_off(family, &sv, report, arg);
		goto out;
	}
	diffs = compare_frame(family, &sv, report, arg);
	ret = fw_compare_chain(cfg, family, FWFWD_CHAIN, &fwd, &sv.fwd, report,
			       arg);
	if (ret >= 0) {
		diffs += ret;
		ret = fw_compare_rules(family, FWFWD_IN_CHAIN, &in, &sv.in,
				       report, arg);
	}
	if (ret >= 0) {
		diffs += ret;
		ret = fw_compare_rules(family, FWFWD_PRE_CHAIN, &pre, &sv.pre,
				       report, arg);
	}
	if (ret >= 0) {
		diffs += ret;
		ret = 0;
	}
out:
	fw_rules_free(&fwd);
	fw_rules_free(&in);
	fw_rules_free(&pre);
	fsaved_free(&sv);
	return ret ? ret : diffs;
}

/* The restore lines that leave exactly one jump to each chain, first in
 * its hook ("" when they are already so): malloc'd, NULL when out of
 * memory. Each line is shorter than 48 bytes. */
static char *jump_fixes(const struct fsaved *sv)
{
	bool du = use_docker_user(sv);
	const struct hook *want = du ? &sv->docker : &sv->forward;
	const struct hook *other = du ? &sv->forward : &sv->docker;
	size_t len = 0,
	       cap = 48 * (size_t)(sv->forward.jumps + sv->docker.jumps +
				   sv->input.jumps + 2) +
		     1;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	buf[0] = '\0';

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
	return buf;
}

/* The raw table's section (its jump fixed as jump_fixes does the
 * filter's), then the filter table's rules: malloc'd, or NULL. */
static char *restore_text(const struct config *cfg, int family,
			  const struct fsaved *sv)
{
	char fix[48 * 9] = "";
	size_t len = 0;

	if (sv->prerouting.jumps != 1 || sv->prerouting.pos != 1) {
		for (int i = 0; i < sv->prerouting.jumps && i < 8; i++)
			len += (size_t)snprintf(
			    fix + len, sizeof(fix) - len,
			    "-D PREROUTING -j " FWFWD_PRE_CHAIN "\n");
		snprintf(fix + len, sizeof(fix) - len,
			 "-I PREROUTING 1 -j " FWFWD_PRE_CHAIN "\n");
	}
	return fwfwd_tables_text(cfg, family, fix);
}

/* Our chains (flushed and refilled by their ":" lines) and the jumps, in
 * one transaction per family, both tables: the kernel never sees half a
 * fence. */
static int apply_family(const struct config *cfg, int family,
			enum fwexec_backend b, char *err, size_t errlen)
{
	struct fsaved sv = {0};
	int ret = read_saved(b, family, &sv, err, errlen);

	if (!ret)
		ret =
		    fw_restore_rules(b, family, restore_text(cfg, family, &sv),
				     jump_fixes(&sv), err, errlen);
	fsaved_free(&sv);
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
	/* "deny" that bridged traffic would pass: refused before any rule
	 * (fails closed: the workload does not start behind a fence that
	 * only looks like one). */
	if (fwfwd_bridged(cfg, err, errlen) > 0)
		return -EPERM;
	ret = fwexec_backend(&b, err, errlen);
	for (size_t i = 0; !ret && i < 2; i++)
		ret = apply_family(cfg, families[i], b, err, errlen);
	if (!ret)
		ret = fw_verify(cfg, b, fwfwd_compare, err, errlen);
	if (!ret)
		log_info("firewall",
			 "%s rules installed for traffic from %zu interface "
			 "pattern%s (forward scope, %s)",
			 config_mode_name(cfg->mode), cfg->n_interfaces,
			 cfg->n_interfaces == 1 ? "" : "s",
			 fwexec_backend_name(b));
	return ret;
}

int fwfwd_check(const struct config *cfg, fw_report_fn report, void *arg)
{
	char why[512];
	int r = fw_check_with(cfg, fwfwd_compare, report, arg);

	if (r >= 0 && fwfwd_bridged(cfg, why, sizeof(why)) > 0) {
		fw_say(report, arg, "%s", why);
		r++;
	}
	return r;
}

/* Whether interface pattern pat (a name, or a prefix ending in '+') may
 * be a bridge: a name that is one now, or absent (it may come later); a
 * prefix when one of its matches is, or none matches yet. Read from
 * /sys/class/net, the sysfs of this network namespace. */
static bool may_be_bridge(const char *pat)
{
	size_t n = strlen(pat);
	bool wild = n > 0 && pat[n - 1] == '+', matched = false, bridge = false;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (!wild) {
		snprintf(path, sizeof(path), "/sys/class/net/%s", pat);
		if (access(path, F_OK) != 0)
			return true;
		snprintf(path, sizeof(path), "/sys/class/net/%s/bridge", pat);
		return access(path, F_OK) == 0;
	}
	d = opendir("/sys/class/net");
	if (d == NULL)
		return true;
	while (!bridge && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, pat, n - 1) != 0)
			continue;
		matched = true;
		snprintf(path, sizeof(path), "/sys/class/net/%s/bridge",
			 e->d_name);
		bridge = access(path, F_OK) == 0;
	}
	closedir(d);
	return bridge || !matched;
}

int fwfwd_bridged(const struct config *cfg, char *err, size_t errlen)
{
	static const char *const knobs[] = {"bridge-nf-call-iptables",
					    "bridge-nf-call-ip6tables"};
	static bool warned[2]; /* once a process: the guard checks often */
	const char *bridge = NULL;
	char path[96];

	if (cfg->hairpin_allow || cfg->mode == CONFIG_MODE_OFF)
		return 0;
	for (size_t i = 0; bridge == NULL && i < cfg->n_interfaces; i++)
		if (may_be_bridge(cfg->interfaces[i]))
			bridge = cfg->interfaces[i];
	if (bridge == NULL)
		return 0;
	for (size_t i = 0; i < 2; i++) {
		FILE *f;
		int on = 0;

		snprintf(path, sizeof(path), "/proc/sys/net/bridge/%s",
			 knobs[i]);
		f = fopen(path, "re");
		if (f != NULL && fscanf(f, "%d", &on) != 1)
			on = 0;
		if (f != NULL)
			fclose(f);
		if (on != 0)
			continue;
		if (cfg->hairpin_deny && cfg->mode == CONFIG_MODE_ENFORCE) {
			snprintf(err, errlen,
				 "hairpin deny: net.bridge.%s is %s: traffic "
				 "the bridge %s switches between its ports "
				 "would not meet the rules; load br_netfilter "
				 "and set it to 1 in this network namespace "
				 "(or choose \"hairpin\": \"fence\", which "
				 "lets bridged traffic pass)",
				 knobs[i], f == NULL ? "absent" : "0", bridge);
			return 1;
		}
		if (warned[i])
			continue;
		warned[i] = true;
		log_warn("firewall",
			 "hairpin %s: net.bridge.%s is %s: container to "
			 "container traffic the bridge %s switches itself "
			 "does not meet the rules (only routed hairpin "
			 "traffic is fenced); load br_netfilter and set it "
			 "to 1 in this network namespace",
			 cfg->hairpin_deny ? "deny (audit)" : "fence", knobs[i],
			 f == NULL ? "absent" : "0", bridge);
	}
	return 0;
}

static int remove_family(enum fwexec_backend b, int family, char *err,
			 size_t errlen)
{
	char input[2048];
	struct fsaved sv = {0};
	size_t len = 0;
	int ret;

	ret = read_saved(b, family, &sv, err, errlen);
	if (ret)
		goto out;
	if (sv.pre_chain || sv.prerouting.jumps) {
		len += (size_t)snprintf(input, sizeof(input), "*raw\n");
		for (int i = 0; i < sv.prerouting.jumps && i < 8; i++)
			len += (size_t)snprintf(
			    input + len, sizeof(input) - len,
			    "-D PREROUTING -j " FWFWD_PRE_CHAIN "\n");
		if (sv.pre_chain)
			len +=
			    (size_t)snprintf(input + len, sizeof(input) - len,
					     ":" FWFWD_PRE_CHAIN " - [0:0]\n"
					     "-X " FWFWD_PRE_CHAIN "\n");
		len += (size_t)snprintf(input + len, sizeof(input) - len,
					"COMMIT\n");
	}
	len += (size_t)snprintf(input + len, sizeof(input) - len, "*filter\n");
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
	ret = fw_restore_family(b, family, input, err, errlen);
out:
	fsaved_free(&sv);
	return ret;
}

int fwfwd_remove(char *err, size_t errlen)
{
	return fw_remove_with(remove_family, err, errlen);
}

int fwfwd_stored_policy(char *hex, size_t len, char *err, size_t errlen)
{
	char got[2][PROVENANCE_HEXLEN] = {"", ""};
	enum fwexec_backend b;
	int ret = fwexec_backend(&b, err, errlen);

	hex[0] = '\0';
	for (size_t i = 0; !ret && i < 2; i++) {
		struct fsaved sv = {0};

		ret =
		    fw_saved_read(b, families[i], saved_line, &sv, err, errlen);
		if (!ret)
			fw_rules_find_policy(&sv.fwd, got[i], sizeof(got[i]));
		fsaved_free(&sv);
	}
	if (!ret && strcmp(got[0], got[1]) == 0)
		snprintf(hex, len, "%s", got[0]);
	return ret;
}
