/* SPDX-License-Identifier: GPL-2.0-or-later */
/* firewall: renders the iptables/ip6tables rules from the config, applies
 * them atomically (iptables-restore --noflush, no shell), reads them back
 * to verify or to list drift, and removes them. */
#ifndef DNSFENCE_FIREWALL_H
#define DNSFENCE_FIREWALL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "config/config.h"
#include "fence/fwexec.h"

#include "fence/fwrules.h"

/* One difference (or one line of a report), for check's output, a log
 * or the guard's pipe: the one report callback of the fence layer
 * (firewall, fwforward, drift). line is valid during the call. */
typedef void (*fw_report_fn)(void *arg, const char *line);

/* The iptables-restore input for one family (AF_INET or AF_INET6; in the
 * forward scope fwfwd_tables_text's, the raw table first), rules
 * written exactly as iptables-save prints them, so that what the kernel
 * holds can be compared line by line (the socket mark, cfg->mark,
 * identifies the daemon: no uid is needed). malloc'd text, or NULL (bad
 * family, set name unfit for the restore text, allocation). fw_apply adds
 * the jump from OUTPUT before COMMIT when it is not in place; in mode off
 * the text is a comment only. */
char *fw_render(const struct config *cfg, int family);

/* Install both families (enforce and audit; nothing for off), then
 * verify them as fw_check does. 0, or -errno with err saying which
 * family/rule failed: -EEXIST when both iptables backends (nft and legacy)
 * hold rules in this namespace, -EIO when the rules read back differ. */
int fw_apply(const struct config *cfg, char *err, size_t errlen);

/* Compare what the kernel holds with the config: policy, our chain's
 * rules, the single jump from OUTPUT (its first rule). 0 when all is in
 * place; 1 when something differs, with report() called once per
 * difference ("ipv4: rule missing: -A DNSFENCE-OUT ..."; both backends
 * holding rules is one such line); -errno when the state cannot be
 * read. */
int fw_check(const struct config *cfg, fw_report_fn report, void *arg);

/* The comparison behind fw_check (and fw_apply's verification) for one
 * family, on the text of `iptables-save -t filter` (saved): no kernel
 * access, for the unit tests. The number of differences reported (0 when
 * all is in place), or -errno. Mode off expects no chain and no jump. */
int fw_compare(const struct config *cfg, int family, const char *saved,
	       fw_report_fn report, void *arg);

/* The four above are the public dispatcher on cfg->scope (fwscope.c):
 * forward scope goes to fwforward.c, output scope to this engine's own
 * fwout_* below, so the engine never calls up into a scope. */
char *fwout_render(const struct config *cfg, int family);
int fwout_apply(const struct config *cfg, char *err, size_t errlen);
int fwout_check(const struct config *cfg,
		void (*report)(void *arg, const char *line), void *arg);
int fwout_compare(const struct config *cfg, int family, const char *saved,
		  void (*report)(void *arg, const char *line), void *arg);

/* The policy fingerprint the installed rules carry (see provenance.h),
 * into hex (at least PROVENANCE_HEXLEN bytes): "" when there are no rules,
 * none carries one, or the two families disagree. 0 or -errno (err). */
int fw_stored_policy(char *hex, size_t len, char *err, size_t errlen);

/* One view of the firewall for a one-shot command (fwexec_snapshot):
 * reads of the same table are read once, again after each restore. */
void fw_snapshot(bool on);

/* Remove our jump and chain from both families and set OUTPUT's policy
 * back to ACCEPT, on the backend holding rules (both when both do).
 * Missing pieces are not an error. The sets are not touched. */
int fw_remove(char *err, size_t errlen);

/* What both scopes share (fwforward.c reads, compares and reports its
 * chains the way this file does DNSFENCE-OUT's). */

/* "ipv4" for AF_INET, "ipv6" for AF_INET6. */
const char *fw_family_name(int family);

/* Format one difference and hand it to report (nothing when report is
 * NULL); a line longer than FW_RULE_MAX + 160 bytes is cut there. */
void fw_say(fw_report_fn report, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Call on_line(arg, line) for each line of the filter table in the text of
 * `iptables-save` (NULL reads as empty), trailing blanks and CRs removed,
 * a line cut at 2 * FW_RULE_MAX - 1 bytes. Stops at the first non-zero
 * return of on_line and returns it; 0 when all lines were read. */
int fw_saved_each(const char *text, int (*on_line)(void *arg, const char *line),
		  void *arg);
/* The same for the lines of table ("*filter", "*nat", "*raw") of the
 * text. */
int fw_saved_each_table(const char *text, const char *table,
			int (*on_line)(void *arg, const char *line), void *arg);

/* The chain whose last rule carries the policy fingerprint: the
 * fingerprint (fw_compare_policy) and its rules (fw_compare_rules). The
 * number of differences, or -errno. */
int fw_compare_chain(const struct config *cfg, int family, const char *chain,
		     const struct fw_rules *want, const struct fw_rules *have,
		     fw_report_fn report, void *arg);

/* fw_save_family, then fw_saved_each on its text (freed here). 0, -errno
 * from the save (err set), or on_line's non-zero return. */
int fw_saved_read(enum fwexec_backend b, int family,
		  int (*on_line)(void *arg, const char *line), void *arg,
		  char *err, size_t errlen);
/* The same for another table ("raw": the section "*raw" of its save). */
int fw_saved_read_table(enum fwexec_backend b, int family, const char *table,
			int (*on_line)(void *arg, const char *line), void *arg,
			char *err, size_t errlen);

/* Compare the rules read back from chain (have) with the wanted ones:
 * each wanted rule present once, nothing else, and in order. The number
 * of differences, each passed to report(); -ENOMEM. */
int fw_compare_rules(int family, const char *chain, const struct fw_rules *want,
		     const struct fw_rules *have, fw_report_fn report,
		     void *arg);

/* The sets hold what the policy recorded in the rules (have) let in: a
 * fingerprint other than cfg's means entries of another policy
 * (invariant 9). 1 (reported) or 0; -errno when cfg's cannot be made. */
int fw_compare_policy(const struct config *cfg, int family,
		      const struct fw_rules *have, fw_report_fn report,
		      void *arg);

/* `iptables-save -t filter` of family on backend b into *text (malloc'd,
 * the caller frees it, also on error). 0, or -errno with err set. */
int fw_save_family(enum fwexec_backend b, int family, char **text, char *err,
		   size_t errlen);
/* The same for another table ("nat", "raw"). */
int fw_save_table(enum fwexec_backend b, int family, const char *table,
		  char **text, char *err, size_t errlen);

/* fw_save_table's text appended to *text (NULL: none yet), which is left
 * as it was on error. An unreadable table with optional set is no error:
 * nothing is appended, err is cleared and 0 returned. 0 or -errno. */
int fw_save_append(enum fwexec_backend b, int family, const char *table,
		   bool optional, char **text, char *err, size_t errlen);

/* One `iptables-restore -w 5 --noflush` transaction of input. 0, or
 * -errno with err naming the rejected line and the tool's first line of
 * complaint (-EPROTO: the tool refused the input). */
int fw_restore_family(enum fwexec_backend b, int family, const char *input,
		      char *err, size_t errlen);

/* Restore rules (fw_render's or fwfwd_rules_text's text, ending in
 * "COMMIT\n") with extra restore lines ("" for none) put before its
 * COMMIT, as one transaction. Takes both malloc'd strings and frees them,
 * so a renderer's result can be passed as it comes: rules NULL or without
 * its COMMIT is -EINVAL ("cannot render the rules"), extra NULL -ENOMEM;
 * else as fw_restore_family. */
int fw_restore_rules(enum fwexec_backend b, int family, char *rules,
		     char *extra, char *err, size_t errlen);

/* One scope's comparison of a family's saved text with cfg (fwout_compare
 * or fwfwd_compare): differences, or -errno. */
typedef int (*fw_compare_fn)(const struct config *cfg, int family,
			     const char *saved, fw_report_fn report, void *arg);

/* Read both families back from backend b after an apply: 0 when
 * compare_fn finds everything in place; -EIO with err quoting the first
 * difference and their number; -errno (err set) when they cannot be
 * read. */
int fw_verify(const struct config *cfg, enum fwexec_backend b,
	      fw_compare_fn compare_fn, char *err, size_t errlen);

/* fw_check for one scope: 0 in place, 1 with report() per difference
 * (both iptables backends holding rules is one), -errno (logged) when
 * the rules cannot be read. */
int fw_check_with(const struct config *cfg, fw_compare_fn compare_fn,
		  fw_report_fn report, void *arg);

/* Call remove_fn for both families on the backend holding rules; when
 * both do (a half-migrated namespace or host), on both, so teardown can
 * clean up what setup refuses. The first error stops it: -errno, err. */
int fw_remove_with(int (*remove_fn)(enum fwexec_backend b, int family,
				    char *err, size_t errlen),
		   char *err, size_t errlen);

#endif
