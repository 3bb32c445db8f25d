// SPDX-License-Identifier: GPL-2.0-or-later
/* instance: one daemon per fence (see instance.h).
 *
 * The lock is flock(2) on a file in the state directory, so it goes with
 * the process: a daemon that crashed holds nothing, and its pid in the
 * file is only read to name it when the lock is taken. The control
 * socket is checked by connecting to it: a file left by a dead daemon
 * refuses the connection (it is then replaced at bind), a live one
 * accepts and SO_PEERCRED names its pid. Two daemons of two configs that
 * name the same socket with different state directories are so refused
 * too, and a refused daemon never reaches the point where it would bind
 * (and later unlink) the other's socket.
 *
 * The default directory follows the network namespace, because that is
 * what one daemon fences: `ip netns exec` shares the host's /run, so two
 * namespaces of one host would otherwise share /run/dnsfence. The name
 * `ip netns` gave the namespace is used, not its inode number, so that
 * the directory is stable across a re-creation and readable in docs and
 * systemd units (RuntimeDirectory=dnsfence-%i). An unnamed namespace (a
 * container's, systemd's PrivateNetwork) keeps /run/dnsfence: its /run is
 * its own, or it is the only instance of its unit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/instance.h"
#include "base/log.h"
#include "base/statefs.h"

#define NETNS_DIR    "/run/netns"
#define NAME_MAX_LEN 64

struct instance {
	int fd; /* the locked pid file, or -1 (no state directory) */
};

static bool name_ok(const char *name);
static bool netns_name(char *name, size_t cap);
static pid_t read_pid(int fd);
static int take_lock(const char *state_dir, uid_t uid, gid_t gid, int *fdp,
		     char *err, size_t errlen);

static bool name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

void instance_dir_for(const char *name, char *buf, size_t cap)
{
	if (name != NULL && name_ok(name))
		snprintf(buf, cap, "%s-%s", INSTANCE_DEFAULT_DIR, name);
	else
		snprintf(buf, cap, "%s", INSTANCE_DEFAULT_DIR);
}

/* The smallest name in /run/netns bound to our network namespace. */
static bool netns_name(char *name, size_t cap)
{
	struct stat self, st;
	struct dirent *e;
	DIR *d;
	bool found = false;

	if (stat("/proc/self/ns/net", &self) != 0 ||
	    (d = opendir(NETNS_DIR)) == NULL)
		return false;
	while ((e = readdir(d)) != NULL) {
		if (!name_ok(e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, 0) != 0 ||
		    st.st_dev != self.st_dev || st.st_ino != self.st_ino)
			continue;
		if (found && strcmp(e->d_name, name) >= 0)
			continue;
		snprintf(name, cap, "%.*s", NAME_MAX_LEN, e->d_name);
		found = true;
	}
	closedir(d);
	return found;
}

void instance_default_dir(char *buf, size_t cap)
{
	char name[NAME_MAX_LEN + 1];

	instance_dir_for(netns_name(name, sizeof(name)) ? name : NULL, buf,
			 cap);
}

static int socket_owner(const char *path, pid_t *pid, bool *full);

int instance_socket_owner(const char *path, pid_t *pid)
{
	bool full;
	int rc = socket_owner(path, pid, &full);
	pid_t p;

	/* A live daemon accepts at once and its binder is alive. */
	for (int ms = 0; rc > 0 && ms < INSTANCE_ORPHAN_WAIT_MS; ms += 50) {
		if (!full &&
		    (*pid <= 0 || kill(*pid, 0) == 0 || errno != ESRCH))
			break;
		usleep(50 * 1000);
		rc = socket_owner(path, &p, &full);
		if (p > 0)
			*pid = p;
	}
	return rc;
}

/* full: the listener's backlog is full (it accepts nothing) */
static int socket_owner(const char *path, pid_t *pid, bool *full)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd, rc;

	*pid = 0;
	*full = false;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	/* Non-blocking: a listener that accepts nothing (a process about to
	 * exit) fills its backlog, and a blocking connect would then wait
	 * for it forever. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		*full = errno == EAGAIN;
		rc = *full					? 1
		     : errno == ENOENT || errno == ECONNREFUSED ? 0
								: -errno;
		goto out;
	}
	rc = 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
		*pid = cr.pid;
out:
	close(fd);
	return rc;
}

static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;
	char *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	return pid > 0 && (*end == '\n' || *end == '\0') ? (pid_t)pid : 0;
}

/* A root without CAP_CHOWN (in a container) keeps the directory root's:
 * then the daemon cannot write its state after the drop, which learn and
 * serve say when they try. */
int instance_open_dir(const char *dir, uid_t uid, gid_t gid, char *err,
		      size_t errlen)
{
	bool made = mkdir(dir, 0750) == 0;
	int fd;

	if (!made && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	/* Judged before the chown, on the descriptor: a directory swapped
	 * in after the mkdir is refused, never given to uid. */
	fd = statefs_open_dir(dir, uid, err, errlen);
	if (fd >= 0 && made && geteuid() == 0 && fchown(fd, uid, gid) != 0)
		log_warn("main", "%s: chown to %u:%u: %s", dir, (unsigned)uid,
			 (unsigned)gid, strerror(errno));
	return fd;
}

/* The lock on state_dir/INSTANCE_PID_FILE: 0 and *fdp held; 1 when the
 * directory or the file cannot be had at all (a daemon started without
 * root, with no way to create its state directory: said once, and the
 * socket check alone guards it); -EBUSY with err naming the holder;
 * -EPERM with err when the directory is there but not to be trusted
 * (statefs.h). */
static int take_lock(const char *state_dir, uid_t uid, gid_t gid, int *fdp,
		     char *err, size_t errlen)
{
	char why[512];
	int dfd, fd;

	*fdp = -1;
	dfd = instance_open_dir(state_dir, uid, gid, why, sizeof(why));
	if (dfd == -EPERM) { /* there, but not to be trusted */
		snprintf(err, errlen, "%s", why);
		return -EPERM;
	}
	if (dfd < 0) {
		log_warn("main",
			 "%s: no lock on the state directory; only the "
			 "control socket keeps a second daemon out",
			 why);
		return 1;
	}
	fd = openat(dfd, INSTANCE_PID_FILE,
		    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	close(dfd);
	if (fd < 0) {
		log_warn("main",
			 "%s/%s: %s; only the control socket keeps a second "
			 "daemon out",
			 state_dir, INSTANCE_PID_FILE, strerror(errno));
		return 1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, errlen,
			 errno == EWOULDBLOCK
			     ? "another dnsfence (pid %ld) runs with state_dir "
			       "%s: refusing to start a second daemon on the "
			       "same state"
			     : "(pid %ld) %s: cannot lock the state directory",
			 (long)read_pid(fd), state_dir);
		close(fd);
		return -EBUSY;
	}
	*fdp = fd;
	return 0;
}

struct instance *instance_claim(const char *state_dir,
				const char *control_socket, uid_t uid,
				gid_t gid, char *err, size_t errlen)
{
	struct instance *in = NULL;
	char line[32];
	int fd = -1, n;
	pid_t other;

	if (take_lock(state_dir, uid, gid, &fd, err, errlen) < 0)
		return NULL;
	if (instance_socket_owner(control_socket, &other) > 0) {
		if (other > 0)
			snprintf(err, errlen,
				 "another dnsfence (pid %ld) listens on the "
				 "control socket %s: refusing to start a "
				 "second daemon on it",
				 (long)other, control_socket);
		else
			snprintf(err, errlen,
				 "another process listens on the control "
				 "socket %s: refusing to start",
				 control_socket);
		goto fail;
	}
	n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	if (fd >= 0 &&
	    (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n))
		log_warn("main", "%s/%s: cannot write our pid: %s", state_dir,
			 INSTANCE_PID_FILE, strerror(errno));
	if ((in = calloc(1, sizeof(*in))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	in->fd = fd;
	return in;
fail:
	if (fd >= 0)
		close(fd);
	return NULL;
}

void instance_release(struct instance *in)
{
	if (in == NULL)
		return;
	if (in->fd >= 0)
		close(in->fd);
	free(in);
}
