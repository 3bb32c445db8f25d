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

/* The fn of "local_upstream_user": a user name or uid (0 allowed: a
 * resolver may run as root), resolved now; null or absent: unset. */
int subjects_local_upstream_user(struct pctx *p, const struct key_spec *k,
				 const cJSON *v);

/* The rule across "upstreams", "scope", "mode" and "local_upstream_user":
 * in output scope with a fence, a loopback upstream (but Docker's
 * 127.0.0.11:53, which Docker DNATs to its own held port) needs
 * local_upstream_user, or any process of the namespace that binds the
 * port while it is free answers in its place. 0 or -EINVAL. */
int subjects_check_local_upstreams(struct pctx *p);
/* The same rule for the addresses of this network namespace that are not
 * loopback (a pod's own address, a LAN address of the host): a resolver
 * there answers from a socket here just the same. It reads the interfaces
 * of the namespace it runs in, so the daemon's parent runs it at setup
 * and each reload (and validate, where it is run). 0, or -EINVAL with err
 * "upstreams: ADDR is an address of this network namespace ...". */
int subjects_check_own_addresses(const struct config *c, char *err,
				 size_t errlen);

/* The rules across keys, after all are parsed: subjects only in output
 * scope; subjects.loopback (loopback_given) and loopback_ports only with
 * subjects named, loopback_ports only with "listener"; the daemon's own
 * user is no subject. 0 or -EINVAL. */
int subjects_check(struct pctx *p, bool loopback_given);

#endif
