/* SPDX-License-Identifier: GPL-2.0-or-later */
/* subjects: parsing the "subjects" keys (whom the output fence applies
 * to: uids, gids, cgroup v2 paths) for config.c's schema table. */
#ifndef DNSFENCE_SUBJECTS_H
#define DNSFENCE_SUBJECTS_H

#include <stdbool.h>

#include "config/configkeys.h"

/* item_fn parsers of subjects.users, .groups, .cgroups, .loopback_ports:
 * 0, or -EINVAL with p's error naming the entry and the fix. */
int subjects_item_user(struct pctx *p, const char *s, const char *path);
int subjects_item_group(struct pctx *p, const char *s, const char *path);
int subjects_item_cgroup(struct pctx *p, const char *s, const char *path);
int subjects_item_lo_port(struct pctx *p, const char *s, const char *path);

/* The rules across keys, after all are parsed: subjects only in output
 * scope; subjects.loopback (loopback_given) and loopback_ports only with
 * subjects named, loopback_ports only with "listener"; the daemon's own
 * user is no subject. 0 or -EINVAL. */
int subjects_check(struct pctx *p, bool loopback_given);

#endif
