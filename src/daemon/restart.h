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

#include "config/config.h"

/* Whom the state file written for the new policy belongs to (the
 * daemon reads it after its privilege drop). */
struct restart_owner {
	uid_t uid;
	gid_t gid;
};

/* A provenance_keep_fn (fence/provenance.h), arg a struct restart_owner:
 * judge the set entries policy have filled by the state the last daemon
 * left under that fingerprint, delete what cfg does not allow, and write
 * the state again for want. Any failure (no state, another generation's,
 * unreadable, a kernel error) removes the state file and returns -errno
 * with why set: the caller flushes. */
int restart_keep(void *arg, const struct config *cfg, const char *have,
		 const char *want, size_t *kept, size_t *evicted, char *why,
		 size_t whylen);

#endif
