/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fwexec: runs the iptables-save/-restore binaries of one backend (nft or
 * legacy) by absolute path, without a shell, and picks the backend that
 * this network namespace uses. Only the firewall module calls it. */
#ifndef DNSFENCE_FWEXEC_H
#define DNSFENCE_FWEXEC_H

#include <stdbool.h>
#include <stddef.h>

enum fwexec_backend { FWEXEC_NFT = 0, FWEXEC_LEGACY };
enum fwexec_tool { FWEXEC_SAVE = 0, FWEXEC_RESTORE };

/* "iptables-nft-save", "ip6tables-legacy-restore", ... */
const char *fwexec_name(enum fwexec_backend b, int family, enum fwexec_tool t);
const char *fwexec_backend_name(enum fwexec_backend b);

/* Run /usr/sbin/NAME (or /sbin/NAME) with args (NULL-terminated, argv[0]
 * excluded), input on stdin (NULL: empty). 0 with *out the malloc'd stdout
 * (NULL allowed); -errno when it cannot be started, or -EPROTO when it
 * exits non-zero: then *errout (when non-NULL) holds its malloc'd stderr.
 * The caller frees *out and *errout. */
int fwexec_run(const char *name, const char *const *args, const char *input,
	       char **out, char **errout);

/* One view of the firewall for a one-shot command (setup, check,
 * teardown): while on, a save that succeeded is remembered and its text
 * given again for the same binary and arguments, until the next restore
 * (which ends the view: what follows reads the firewall again). Off
 * forgets everything; the daemon never turns it on, so its guard always
 * reads the kernel. */
void fwexec_snapshot(bool on);

/* Does this iptables-save text hold anything beyond empty built-in chains
 * with policy ACCEPT (a rule, a user chain, a DROP policy)? Pure. */
bool fwexec_save_has_rules(const char *text);

/* The backend to use in this namespace: the one holding rules (either
 * family), else the one the `iptables` alternative points to, else nft.
 * -EEXIST with err set when both hold rules. */
int fwexec_backend(enum fwexec_backend *out, char *err, size_t errlen);

#endif
