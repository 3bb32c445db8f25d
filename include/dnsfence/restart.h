/* SPDX-License-Identifier: GPL-2.0-or-later */
/* restart: setup's answer to a policy change across a restart.
 * The names that put each set entry there (provstate.h, left by the
 * last daemon) are judged by the new config; an entry stays only when a
 * name the new policy allows holds it with a live link and the new
 * config still admits the address (not internal, not an upstream's).
 * Everything else in the sets (removed names' addresses, and entries of
 * no known name) is deleted. */
#ifndef DNSFENCE_RESTART_H
#define DNSFENCE_RESTART_H

#include <stddef.h>
#include <sys/types.h>

#include "dnsfence/config.h"

/* Before installing the rules: when the fingerprint the installed rules
 * carry (provenance.h) differs from cfg's, delete every entry that only
 * names cfg no longer allows brought in, judged on the state the last
 * daemon left under that fingerprint, and write that state again for
 * cfg (owned uid:gid). When the state is missing, unreadable or another
 * generation's, or the rules carry no fingerprint, empty both sets; one
 * log line says which. Same policy: nothing is touched, entries survive.
 * 0, or -errno with err set (a kernel failure). */
int restart_reconcile(const struct config *cfg, uid_t uid, gid_t gid, char *err,
		      size_t errlen);

#endif
