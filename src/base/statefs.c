// SPDX-License-Identifier: GPL-2.0-or-later
/* statefs: the trust rule for the state directory and its files (see
 * statefs.h).
 *
 * Another local user who made the state directory first (below a
 * world-writable folder), or who may write into it, could plant the
 * files the daemon loads (prov.state names which set entries a restart
 * keeps) or a temporary file the daemon would write through and rename
 * into place, and then edit it. So the directory is judged on the
 * descriptor that is used afterwards (no path looked up twice), links
 * are never followed at the last component, a file is judged on its
 * own descriptor after the open, and temporary files are created with
 * O_EXCL after whatever holds their name is removed: the directory is
 * already judged, so only root, the daemon's user or a crash left it. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/statefs.h"

static bool owner_ok(uid_t owner, uid_t uid);

static bool owner_ok(uid_t owner, uid_t uid)
{
	return owner == 0 || owner == uid || owner == geteuid();
}

int statefs_dir_ok(int fd, const char *path, uid_t uid, char *err,
		   size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "state_dir %s: %s", path,
			 strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode) && owner_ok(st.st_uid, uid) &&
	    (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 0;
	snprintf(err, errlen,
		 "state_dir %s is owned by uid %u with mode %04o: refusing "
		 "it, since only root or the daemon's user (uid %u) may own "
		 "the state directory and no group or other may write it "
		 "(another user could plant the files the daemon loads). "
		 "Fix: 'chown root %s; chmod go-w %s', or remove it and let "
		 "dnsfence create it, or name another `state_dir` whose "
		 "parents only root may write",
		 path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
		 (unsigned)uid, path, path);
	return -EPERM;
}

int statefs_open_dir(const char *path, uid_t uid, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP || rc == -ENOTDIR)
			snprintf(err, errlen,
				 "state_dir %s is a symbolic link or not a "
				 "directory: refusing to follow it. Fix: name "
				 "the real directory in `state_dir`",
				 path);
		else
			snprintf(err, errlen, "state_dir %s: %s", path,
				 strerror(-rc));
		return rc == -ELOOP || rc == -ENOTDIR ? -EPERM : rc;
	}
	rc = statefs_dir_ok(fd, path, uid, err, errlen);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int statefs_open_file(int dirfd, const char *dir, const char *name, uid_t uid,
		      char *err, size_t errlen)
{
	int fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int rc;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s/%s: %s", dir, name,
			 rc == -ELOOP ? "a symbolic link: refused"
				      : strerror(-rc));
		return rc == -ELOOP ? -EPERM : rc;
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		snprintf(err, errlen, "%s/%s: %s", dir, name, strerror(-rc));
		close(fd);
		return rc;
	}
	if (S_ISREG(st.st_mode) && owner_ok(st.st_uid, uid) &&
	    (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return fd;
	snprintf(
	    err, errlen,
	    "%s/%s is %s owned by uid %u with mode %04o: refused (a state "
	    "file must be a regular file of root or the daemon's user, "
	    "uid %u, that no group or other may write)",
	    dir, name, S_ISREG(st.st_mode) ? "a file" : "not a regular file",
	    (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)uid);
	close(fd);
	return -EPERM;
}

int statefs_create(int dirfd, const char *name, mode_t mode)
{
	int fd;

	if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT)
		return -errno;
	fd = openat(dirfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd >= 0 ? fd : -errno;
}
