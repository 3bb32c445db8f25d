/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guard: while serving, re-checks the kernel's rules and sets every
 * guard_interval seconds in a forked child (drift.h) and writes them back
 * in another child on drift. */
#ifndef DNSFENCE_GUARD_H
#define DNSFENCE_GUARD_H

#include <stdbool.h>
#include <sys/types.h>

#include "config/config.h"

struct event_base;
struct guard;
struct sets;

/* Start guarding (cfg, sets must outlive the guard; sets may be NULL).
 * After a sets restore, the sets' expiry map is forgotten. When a
 * restore fails, the guard logs why, calls event_base_loopexit and
 * guard_failed() turns true: the caller exits 3 so its supervisor runs
 * setup again. NULL on allocation failure. */
struct guard *guard_new(struct event_base *base, const struct config *cfg,
			struct sets *sets);
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
