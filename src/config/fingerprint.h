/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fingerprint: which policy filled the sets. A fingerprint of everything
 * that decides what may enter them, kept with the rules, so that setup
 * can flush entries another policy put there (invariant 9). */
#ifndef DNSFENCE_FINGERPRINT_H
#define DNSFENCE_FINGERPRINT_H

#include <stddef.h>

#include "config/config.h"

#define PROVENANCE_HEXLEN 17 /* 16 hex digits and the NUL */

/* The fingerprint of cfg's policy as 16 lower-case hex digits: mode,
 * allow (EXTRA_HOSTS included), ecosystems, allow_cidrs, the upstream
 * addresses and the program version (which fixes the presets and the
 * internal ranges). Order and duplicates do not count. 0 or -ENOMEM. */
int provenance_fingerprint(const struct config *cfg,
			   char hex[PROVENANCE_HEXLEN]);

/* Keep cfg's fingerprint in cfg, so that rendering its rules again
 * (the guard, every guard_interval) does not sort the allow list again.
 * 0, or -errno (cfg unchanged). */
int provenance_memoize(struct config *cfg);

/* provenance_memoize, then free the allow list (n_allow 0): for a
 * holder that renders rules but never matches names. 0, or -errno (cfg
 * unchanged). */
int provenance_shed_allow(struct config *cfg);

#endif
