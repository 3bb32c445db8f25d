// SPDX-License-Identifier: GPL-2.0-or-later
/* fwexec: the firewall module's hands. It runs iptables-save and
 * iptables-restore (nft or legacy, IPv4 or IPv6) by absolute path with
 * posix_spawn and an explicit argv and environment: no shell, no PATH
 * lookup, no locale. stdin, stdout and stderr are anonymous memfds rather
 * than pipes: the child can write any amount without the parent polling
 * two pipes while feeding a third, so there is no deadlock to get wrong,
 * and nothing touches the disk.
 *
 * Backend choice: iptables-nft and iptables-legacy program different
 * kernel tables that both filter every packet, so rules split across the
 * two cannot be verified by reading one of them. We use the backend that
 * already holds rules in this namespace (ours from an earlier setup, or
 * Docker's nat rules), else the one the `iptables` alternative points to,
 * and refuse when both hold rules. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fence/fwexec.h"
#include "base/log.h"

#define FWEXEC_MAX_OUTPUT (64u << 20)
#define SNAP_MAX	  16 /* 4 backend probes, 3 tables x 2 families, ... */
#define SNAP_KEY	  96

/* fwexec_snapshot's remembered saves: binary and arguments, and the text. */
static struct {
	bool on;
	size_t n;
	struct {
		char key[SNAP_KEY];
		char *text;
	} e[SNAP_MAX];
} snap;

/* The child's standard fds; -1 when not open. */
struct child_io {
	int in, out, err;
};

static const char *find_binary(const char *name, char *buf, size_t len);
static int memfd_with(const char *name, const char *text);
static int read_memfd(int fd, char **out);
static int wait_child(pid_t pid, int *status);
static int stdio_open(const char *input, struct child_io *io);
static void stdio_close(struct child_io *io);
static int spawn_with(const char *path, char *const argv[],
		      const struct child_io *io, pid_t *pid);
static int collect(pid_t pid, const struct child_io *io, char **out,
		   char **errout);
static int backend_has_rules(enum fwexec_backend b, bool *has);
static bool snap_key(const char *name, const char *const *args, char *key);
static void snap_forget(void);
static int fwexec_spawn(const char *name, const char *const *args,
			const char *input, char **out, char **errout);

const char *fwexec_name(enum fwexec_backend b, int family, enum fwexec_tool t)
{
	static const char *const names[2][2][2] = {
	    {{"iptables-nft-save", "iptables-nft-restore"},
	     {"ip6tables-nft-save", "ip6tables-nft-restore"}},
	    {{"iptables-legacy-save", "iptables-legacy-restore"},
	     {"ip6tables-legacy-save", "ip6tables-legacy-restore"}},
	};

	return names[b == FWEXEC_LEGACY][family == AF_INET6]
		    [t == FWEXEC_RESTORE];
}

const char *fwexec_backend_name(enum fwexec_backend b)
{
	return b == FWEXEC_LEGACY ? "iptables-legacy" : "iptables-nft";
}

/* The binaries live in /usr/sbin on merged-/usr systems and in /sbin on
 * older ones; never anywhere PATH would lead. */
static const char *find_binary(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {"/usr/sbin/", "/sbin/"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(buf, len, "%s%s", dirs[i], name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

static int memfd_with(const char *name, const char *text)
{
	size_t len = text ? strlen(text) : 0, done = 0;
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n;

		do
			n = write(fd, text + done, len - done);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			break;
		done += (size_t)n;
	}
	if (done < len || lseek(fd, 0, SEEK_SET) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int read_memfd(int fd, char **out)
{
	struct stat st;
	char *buf = NULL;
	size_t len, done = 0;
	int ret = 0;

	if (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	if (st.st_size < 0 ||
	    (unsigned long long)st.st_size > FWEXEC_MAX_OUTPUT)
		return -EFBIG;
	len = (size_t)st.st_size;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	buf[done] = '\0';
	*out = buf;
	buf = NULL;
out:
	free(buf);
	return ret;
}

static int wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* The child's stdin (holding the input), stdout and stderr: memfds. */
static int stdio_open(const char *input, struct child_io *io)
{
	io->in = memfd_with("fw-stdin", input);
	if (io->in < 0) {
		int ret = io->in;

		io->in = -1;
		return ret;
	}
	io->out = memfd_create("fw-stdout", MFD_CLOEXEC);
	io->err = memfd_create("fw-stderr", MFD_CLOEXEC);
	if (io->out < 0 || io->err < 0)
		return -errno;
	return 0;
}

static void stdio_close(struct child_io *io)
{
	if (io->in >= 0)
		close(io->in);
	if (io->out >= 0)
		close(io->out);
	if (io->err >= 0)
		close(io->err);
}

/* Start path with argv, io as its fds 0-2, the fixed environment. */
static int spawn_with(const char *path, char *const argv[],
		      const struct child_io *io, pid_t *pid)
{
	static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
				     "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	int ret = -posix_spawn_file_actions_init(&fa);

	if (ret)
		return ret;
	ret = -posix_spawn_file_actions_adddup2(&fa, io->in, 0);
	if (!ret)
		ret = -posix_spawn_file_actions_adddup2(&fa, io->out, 1);
	if (!ret)
		ret = -posix_spawn_file_actions_adddup2(&fa, io->err, 2);
	if (!ret)
		ret = -posix_spawn(pid, path, &fa, NULL, argv, envp);
	if (ret)
		log_debug("firewall", "%s: cannot start: %s", path,
			  strerror(-ret));
	posix_spawn_file_actions_destroy(&fa);
	return ret;
}

/* Wait for the child; on exit 0 its stdout into *out (when out), else
 * -EPROTO with its stderr into *errout (when errout). */
static int collect(pid_t pid, const struct child_io *io, char **out,
		   char **errout)
{
	int status = 0, ret = wait_child(pid, &status);

	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (errout && read_memfd(io->err, errout) < 0)
			*errout = NULL;
		return -EPROTO;
	}
	return out ? read_memfd(io->out, out) : 0;
}

void fwexec_snapshot(bool on)
{
	snap_forget();
	snap.on = on;
}

static void snap_forget(void)
{
	for (size_t i = 0; i < snap.n; i++)
		free(snap.e[i].text);
	snap.n = 0;
}

/* "NAME ARG ARG" into key; false when it does not fit (not remembered). */
static bool snap_key(const char *name, const char *const *args, char *key)
{
	size_t len = (size_t)snprintf(key, SNAP_KEY, "%s", name);

	for (; args && *args && len < SNAP_KEY; args++)
		len +=
		    (size_t)snprintf(key + len, SNAP_KEY - len, " %s", *args);
	return len < SNAP_KEY;
}

/* A save (no input, output wanted) the snapshot remembers: *out is a
 * copy of its text; true when given. */
static bool snap_give(const char *key, char **out)
{
	for (size_t i = 0; i < snap.n; i++) {
		if (strcmp(snap.e[i].key, key) == 0)
			return (*out = strdup(snap.e[i].text)) != NULL;
	}
	return false;
}

static void snap_keep(const char *key, const char *text)
{
	if (snap.n == SNAP_MAX ||
	    (snap.e[snap.n].text = strdup(text ? text : "")) == NULL)
		return;
	memcpy(snap.e[snap.n].key, key, SNAP_KEY);
	snap.n++;
}

int fwexec_run(const char *name, const char *const *args, const char *input,
	       char **out, char **errout)
{
	char key[SNAP_KEY];
	bool kept = snap.on && input == NULL && out != NULL &&
		    snap_key(name, args, key);
	int ret;

	if (out)
		*out = NULL;
	if (errout)
		*errout = NULL;
	if (snap.on && input != NULL)
		snap_forget(); /* a restore: the view ends */
	if (kept && snap_give(key, out))
		return 0;
	ret = fwexec_spawn(name, args, input, out, errout);
	if (kept && ret == 0)
		snap_keep(key, *out);
	return ret;
}

static int fwexec_spawn(const char *name, const char *const *args,
			const char *input, char **out, char **errout)
{
	struct child_io io = {-1, -1, -1};
	char path[PATH_MAX], *argv[16];
	int ret, n = 0;
	pid_t pid;

	if (!find_binary(name, path, sizeof(path))) {
		log_debug("firewall", "%s: not found in /usr/sbin or /sbin",
			  name);
		return -ENOENT;
	}
	argv[n++] = path;
	for (; args && *args && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	ret = stdio_open(input, &io);
	if (!ret)
		ret = spawn_with(path, argv, &io, &pid);
	if (!ret)
		ret = collect(pid, &io, out, errout);
	stdio_close(&io);
	return ret;
}

bool fwexec_save_has_rules(const char *text)
{
	const char *p = text ? text : "";

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (len > 0 && p[0] == ':') {
			/* ":NAME POLICY [p:b]": only built-in chains with
			 * ACCEPT are "empty"; user chains print "-". */
			const char *sp = memchr(p, ' ', len);

			if (!sp || strncmp(sp + 1, "ACCEPT ", 7) != 0)
				return true;
		} else if (len > 0 && p[0] != '#' && p[0] != '*' &&
			   !(len == 6 && strncmp(p, "COMMIT", 6) == 0)) {
			return true;
		}
		p += len + (eol ? 1 : 0);
	}
	return false;
}

/* A save of every table lists /proc/net/ip_tables_names first, which
 * only root may read: the guard's children (the daemon's uid with
 * CAP_NET_ADMIN) then fail with iptables-legacy and would wrongly pick
 * nft. The filter table, where our rules and Docker's DOCKER-USER live,
 * can be read without that list. */
static int backend_has_rules(enum fwexec_backend b, bool *has)
{
	static const char *const filter[] = {"-t", "filter", NULL};
	static const int families[] = {AF_INET, AF_INET6};
	int ret = -ENOENT;

	*has = false;
	for (size_t i = 0; i < 2; i++) {
		const char *name = fwexec_name(b, families[i], FWEXEC_SAVE);
		char *text = NULL;
		int r = fwexec_run(name, NULL, NULL, &text, NULL);

		if (r == -EPROTO)
			r = fwexec_run(name, filter, NULL, &text, NULL);
		if (r == 0) {
			ret = 0;
			*has = *has || fwexec_save_has_rules(text);
		}
		free(text);
	}
	return ret;
}

int fwexec_backend(enum fwexec_backend *out, char *err, size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX];
	bool nft = false, legacy = false;
	int r_nft, r_legacy;

	r_nft = backend_has_rules(FWEXEC_NFT, &nft);
	r_legacy = backend_has_rules(FWEXEC_LEGACY, &legacy);
	if (nft && legacy) {
		snprintf(err, errlen,
			 "both iptables backends hold rules in this network "
			 "namespace (iptables-nft-save and "
			 "iptables-legacy-save both list some): rules split "
			 "across two backends cannot be verified; remove one "
			 "backend's rules first");
		return -EEXIST;
	}
	if (nft || legacy) {
		*out = nft ? FWEXEC_NFT : FWEXEC_LEGACY;
		return 0;
	}
	if (r_nft < 0 && r_legacy < 0) {
		snprintf(err, errlen,
			 "no working iptables-nft-save or iptables-legacy-save "
			 "in /usr/sbin or /sbin");
		return -ENOENT;
	}
	/* No rules anywhere: the `iptables` alternative decides, even when
	 * legacy could not be read (that is not a vote for nft). */
	*out = FWEXEC_NFT;
	if (r_nft < 0) {
		*out = FWEXEC_LEGACY;
	} else if (find_binary("iptables", path, sizeof(path)) &&
		   realpath(path, real) && strstr(real, "legacy")) {
		*out = FWEXEC_LEGACY;
	}
	return 0;
}
