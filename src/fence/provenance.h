/* SPDX-License-Identifier: GPL-2.0-or-later */
/* provenance: setup's answer when the policy that filled the sets changed
 * (invariant 9): entry by entry through a keeper that knows the names
 * behind them (daemon/restart.c), else the sets emptied; the fingerprint
 * itself is config/fingerprint.h. */
#ifndef DNSFENCE_PROVENANCE_H
#define DNSFENCE_PROVENANCE_H

#include <stddef.h>

#include "config/config.h"

/* The precise alternative to a flush: the sets were filled under policy
 * have ("" when the rules name none), cfg (fingerprint want) is being
 * installed. 0 when every entry cfg does not allow is deleted and the
 * rest kept (*kept, *evicted counted); -errno with why set when that
 * cannot be done (the caller then flushes). */
typedef int (*provenance_keep_fn)(void *arg, const struct config *cfg,
				  const char *have, const char *want,
				  size_t *kept, size_t *evicted, char *why,
				  size_t whylen);

/* Before installing the rules: when the fingerprint the installed rules
 * carry differs from cfg's, ask keep (may be NULL) to delete what only
 * names cfg no longer allows brought in; when it cannot, or none is
 * there, empty both sets, one log line saying why. Same policy: nothing
 * is touched, entries survive. 0, or -errno with err set. */
int provenance_reconcile(const struct config *cfg, provenance_keep_fn keep,
			 void *arg, char *err, size_t errlen);

#endif
