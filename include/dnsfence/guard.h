/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guard: the comparison of the kernel's rules and sets with the config
 * (shared by `check`, `setup`'s verification, `serve`'s refusal and the
 * guard), and the guard itself: while serving, it re-checks them every
 * guard_interval seconds in a forked child and writes them back on drift. */
#ifndef DNSFENCE_GUARD_H
#define DNSFENCE_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dnsfence/config.h"

struct event_base;
struct guard;
struct sets;

/* guard_compare result bits: what differs. */
#define GUARD_DRIFT_RULES 1
#define GUARD_DRIFT_SETS  2

typedef void (*guard_report_fn)(void *arg, const char *line);

/* Compare the kernel with the config (fw_check, then sets_check): 0 when
 * everything is in place; GUARD_DRIFT_* bits when something differs, with
 * report() called once per difference ("ipv4: rule missing: ...",
 * "sets: set dnsfence4 does not exist"); -errno with err set when the
 * state cannot be read. Blocks (runs iptables-save); never call it from
 * the event loop, the guard forks for it. */
int guard_compare(const struct config *cfg, uid_t uid, guard_report_fn report,
		  void *arg, char *err, size_t errlen);

/* Start guarding (cfg, sets must outlive the guard; sets may be NULL).
 * After a sets restore, the sets' never-shorten map is forgotten. When a
 * restore fails, the guard logs why, calls event_base_loopexit and
 * guard_failed() turns true: the caller exits 3 so its supervisor runs
 * setup again. NULL on allocation failure. */
struct guard *guard_new(struct event_base *base, const struct config *cfg,
			uid_t uid, struct sets *sets);
/* Check against cfg from now on (a reload whose rules are the same). */
void guard_set_config(struct guard *g, const struct config *cfg);
/* Called once when guard_apply's rules are in place (status 0) or
 * failed (-EIO, detail: the first line of why). */
typedef void (*guard_applied_fn)(void *arg, int status, const char *detail);
/* The config changed (reload): check against cfg from now on, and write
 * its rules and sets now, in a child (what a restore does). A job already
 * running finishes first and its result is ignored. A failed apply stops
 * the daemon (guard_failed), like a failed restore. cfg must outlive the
 * guard or the next guard_apply. A later call before done replaces done
 * (the earlier one is never called). Returns 0. */
int guard_apply(struct guard *g, const struct config *cfg,
		guard_applied_fn done, void *arg);
/* Kills and reaps a child still running. */
void guard_free(struct guard *g);
bool guard_failed(const struct guard *g);

#endif
