/* SPDX-License-Identifier: GPL-2.0-or-later */
/* provstate: the provenance map (prov.h) kept in state_dir across a
 * restart, so that setup after a policy change evicts exactly what only
 * removed names brought in. One versioned text file, written atomically
 * (a temporary file created exclusively, fsync, rename), bounded by the map it
 * is loaded into, valid only for the policy generation and the boot it names.
 */
#ifndef DNSFENCE_PROVSTATE_H
#define DNSFENCE_PROVSTATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "resolve/prov.h"

#define PROVSTATE_FILE	  "prov.state"
#define PROVSTATE_VERSION 1
#define PROVSTATE_MAX	  (256u << 20) /* bytes read at most */

/* The file lives in the state directory dirfd (opened before a privilege
 * drop, so that the daemon can write it after: only the directory
 * itself must be writable then); dir is its path, for messages. */

/* Write p's live links to PROVSTATE_FILE for policy (the fingerprint of
 * the policy that filled the sets), owned uid:gid when run as root. 0,
 * or -errno with err set. */
int provstate_save(const struct prov *p, int dirfd, const char *dir,
		   const char *policy, uid_t uid, gid_t gid, char *err,
		   size_t errlen);

/* Read PROVSTATE_FILE into p (its live links only). 0; -ENOENT no
 * file; -EPERM a file statefs_open_file refuses for a daemon running as
 * uid (its owner, its mode, a link); -ESTALE it is another policy's (not
 * policy) or another boot's; -EINVAL not a state file of this version or
 * malformed; -ENOSPC more links than p holds; -EIO/-ENOMEM. err says
 * which on every failure. */
int provstate_load(struct prov *p, int dirfd, const char *dir, uid_t uid,
		   const char *policy, char *err, size_t errlen);

/* The parser of provstate_load, pure (for tests and the fuzzer): text of
 * len bytes, the policy and boot id it must name, links live at now. */
int provstate_parse(struct prov *p, const char *text, size_t len,
		    const char *policy, const char *boot, uint64_t now,
		    char *err, size_t errlen);

/* Remove PROVSTATE_FILE (missing is fine). */
void provstate_remove(int dirfd, const char *dir);

#endif
