/* SPDX-License-Identifier: GPL-2.0-or-later */
/* statefs: what dnsfence trusts on disk. A state directory is used only
 * when it is a directory (not a link to one) owned by root or the
 * daemon's user that no group and no other may write; a state file is
 * loaded only when it is a regular file (not a link) with the same
 * owners and no group or other write; a file is written to a temporary
 * name created exclusively, never through one someone else made. */
#ifndef DNSFENCE_STATEFS_H
#define DNSFENCE_STATEFS_H

#include <stddef.h>
#include <sys/types.h>

/* The directory fd (path names it in err) may hold state for a daemon
 * running as uid (owned by root, uid or ourselves, no group or other
 * write): 0, or -EPERM with err naming `state_dir`, the path, the owner
 * and mode found and the fix. */
int statefs_dir_ok(int fd, const char *path, uid_t uid, char *err,
		   size_t errlen);

/* Open path (O_DIRECTORY, O_NOFOLLOW) and judge it by statefs_dir_ok:
 * the fd, or -errno with err set (-EPERM: not to be trusted). */
int statefs_open_dir(const char *path, uid_t uid, char *err, size_t errlen);

/* Open name in dirfd for reading (O_NOFOLLOW) when it is a regular file
 * owned by root, uid or ourselves that no group and no other may write:
 * the fd; -ENOENT (err set) when there is none; -EPERM with err naming
 * the file (dir/name), the owner and mode found, when it is refused;
 * another -errno with err set. */
int statefs_open_file(int dirfd, const char *dir, const char *name, uid_t uid,
		      char *err, size_t errlen);

/* Create name in dirfd for writing, exclusively (O_EXCL, O_NOFOLLOW,
 * mode): a file or link already there under that temporary name (a
 * crash's leftover, or one planted) is removed first, never written
 * through. The fd or -errno. */
int statefs_create(int dirfd, const char *name, mode_t mode);

#endif
