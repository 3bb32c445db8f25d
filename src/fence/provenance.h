/* SPDX-License-Identifier: GPL-2.0-or-later */
/* provenance: the sets emptied when the policy that filled them changed
 * (invariant 9); the fingerprint itself is config/fingerprint.h. */
#ifndef DNSFENCE_PROVENANCE_H
#define DNSFENCE_PROVENANCE_H

#include <stddef.h>

#include "config/config.h"

/* Before installing the rules: when the fingerprint the installed rules
 * carry differs from cfg's, or none is there, empty both sets, since
 * their entries may come from names cfg no longer allows. Same policy:
 * nothing is touched, entries survive. 0, or -errno with err set. */
int provenance_reconcile(const struct config *cfg, char *err, size_t errlen);

#endif
