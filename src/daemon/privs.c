// SPDX-License-Identifier: GPL-2.0-or-later
/* privs: the daemon binds its listeners and opens its netlink socket with
 * the privileges it starts with, then becomes `user` with CAP_NET_ADMIN
 * and nothing else, for life. CAP_NET_ADMIN stays effective because
 * netlink checks the sender's capability on every message (the set adds),
 * and ambient because the guard's iptables-restore children need it after
 * execve. Those children also need CAP_NET_RAW (the set match's raw
 * socket); it is kept ambient but not effective in the daemon itself.
 * Everything is raw capget/capset and prctl (no libcap), and the result is
 * verified, not assumed: a drop that did not happen is an error, never a daemon
 * serving as root.
 *
 * Two starts are supported. As root (uid 0, full or reduced capabilities,
 * e.g. a Kubernetes sidecar with drop ALL + NET_ADMIN, NET_BIND_SERVICE,
 * SETUID, SETGID): KEEPCAPS, setgroups/setgid/setuid, then capset down to
 * CAP_NET_ADMIN. Already unprivileged (systemd User= with
 * AmbientCapabilities=CAP_NET_ADMIN): nothing to drop, so check that the
 * uid is the configured one and CAP_NET_ADMIN is there, and say what is
 * missing otherwise. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "daemon/privs.h"

#define SYS	 "privs"
#define KEEP_CAP CAP_NET_ADMIN
/* Kept latent (permitted, inheritable, ambient; never effective here) when
 * the daemon starts with it: iptables' set match opens a raw socket to
 * map set names to indexes, so the guard's iptables-save and
 * iptables-restore children need it to read back or restore our rules. */
#define CHILD_CAP  CAP_NET_RAW
#define CAP_BIT(c) (UINT64_C(1) << (c))

struct capsets {
	uint64_t eff, perm, inh;
};

static int caps_get(struct capsets *c);
static int caps_set(const struct capsets *c);
static const char *caps_format(uint64_t mask, char *buf, size_t len);
static void drop_bounding(bool keep_ours);
static int drop_from_root(uid_t uid, gid_t gid, char *err, size_t errlen);
static int check_unprivileged(uid_t uid, char *err, size_t errlen);
static int keep_only_net_admin(char *err, size_t errlen);
static int verify(uid_t uid, gid_t gid, char *err, size_t errlen);
static void missing_add(char *buf, size_t len, const char *cap);

/* Names of the capabilities, for messages ("holds cap_net_raw"). */
static const char *const cap_names[] = {
    "cap_chown",
    "cap_dac_override",
    "cap_dac_read_search",
    "cap_fowner",
    "cap_fsetid",
    "cap_kill",
    "cap_setgid",
    "cap_setuid",
    "cap_setpcap",
    "cap_linux_immutable",
    "cap_net_bind_service",
    "cap_net_broadcast",
    "cap_net_admin",
    "cap_net_raw",
    "cap_ipc_lock",
    "cap_ipc_owner",
    "cap_sys_module",
    "cap_sys_rawio",
    "cap_sys_chroot",
    "cap_sys_ptrace",
    "cap_sys_pacct",
    "cap_sys_admin",
    "cap_sys_boot",
    "cap_sys_nice",
    "cap_sys_resource",
    "cap_sys_time",
    "cap_sys_tty_config",
    "cap_mknod",
    "cap_lease",
    "cap_audit_write",
    "cap_audit_control",
    "cap_setfcap",
    "cap_mac_override",
    "cap_mac_admin",
    "cap_syslog",
    "cap_wake_alarm",
    "cap_block_suspend",
    "cap_audit_read",
    "cap_perfmon",
    "cap_bpf",
    "cap_checkpoint_restore",
};

bool privs_shared_uid(uid_t uid)
{
	const struct passwd *pw = getpwuid(uid);

	return uid == 65534 ||
	       (pw != NULL && strcmp(pw->pw_name, "nobody") == 0);
}

int privs_lookup(const char *user, uid_t *uid, gid_t *gid, char *err,
		 size_t errlen)
{
	const struct passwd *pw = NULL;
	const char *name = user != NULL ? user : "dnsfence";
	char *end = NULL;
	unsigned long n;

	errno = 0;
	n = strtoul(name, &end, 10);
	if (name[0] >= '0' && name[0] <= '9' && *end == '\0' && errno == 0 &&
	    n < (unsigned long)(uid_t)-1) {
		pw = getpwuid((uid_t)n);
		*uid = (uid_t)n;
		*gid = pw != NULL ? pw->pw_gid : (gid_t)n;
	} else {
		pw = getpwnam(name);
		if (pw == NULL && strcmp(name, "dnsfence") == 0) {
			pw = getpwnam("nobody");
			if (pw != NULL)
				log_debug(SYS,
					  "user: no user \"dnsfence\", using "
					  "nobody (uid %u)",
					  (unsigned)pw->pw_uid);
		}
		if (pw == NULL) {
			snprintf(err, errlen, "user: no such user \"%s\"%s",
				 name,
				 strcmp(name, "dnsfence") == 0
				     ? " (and no \"nobody\" to fall back to)"
				     : "");
			return -ENOENT;
		}
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
	}
	if (*uid == 0) {
		snprintf(err, errlen,
			 "user: \"%s\" is uid 0; dnsfence never serves as root",
			 name);
		return -EINVAL;
	}
	return 0;
}

bool privs_have(int cap)
{
	struct capsets c = {0};

	if (cap < 0 || cap > 63 || caps_get(&c) < 0)
		return false;
	return (c.eff & CAP_BIT(cap)) != 0;
}

int privs_drop(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t r = 0, e = 0, s = 0;
	int rc;

	if (getresuid(&r, &e, &s) < 0) {
		snprintf(err, errlen, "getresuid: %s", strerror(errno));
		return -EPERM;
	}
	if (r == 0 || e == 0 || s == 0)
		rc = drop_from_root(uid, gid, err, errlen);
	else
		rc = check_unprivileged(uid, err, errlen);
	if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS): %s",
			 strerror(errno));
		rc = -EPERM;
	}
	if (rc == 0)
		rc = verify(uid, gid, err, errlen);
	return rc;
}

static int drop_from_root(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	/* Keep the permitted set across setuid; effective is cleared and
	 * raised again by keep_only_net_admin. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "prctl(PR_SET_KEEPCAPS): %s",
			 strerror(errno));
		return -EPERM;
	}
	if (!privs_have(KEEP_CAP)) {
		snprintf(err, errlen,
			 "started as root without cap_net_admin: the set adds "
			 "need it");
		return -EPERM;
	}
	drop_bounding(true);
	if (setgroups(1, &gid) < 0) {
		snprintf(err, errlen, "setgroups(%u): %s%s", (unsigned)gid,
			 strerror(errno),
			 errno == EPERM ? " (needs cap_setgid)" : "");
		return -EPERM;
	}
	if (setresgid(gid, gid, gid) < 0) {
		snprintf(err, errlen, "setgid(%u): %s%s", (unsigned)gid,
			 strerror(errno),
			 errno == EPERM ? " (needs cap_setgid)" : "");
		return -EPERM;
	}
	if (setresuid(uid, uid, uid) < 0) {
		snprintf(err, errlen, "setuid(%u): %s%s", (unsigned)uid,
			 strerror(errno),
			 errno == EPERM ? " (needs cap_setuid)" : "");
		return -EPERM;
	}
	(void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return keep_only_net_admin(err, errlen);
}

/* Nothing to drop from; say precisely what is missing. */
static int check_unprivileged(uid_t uid, char *err, size_t errlen)
{
	struct capsets c = {0};
	char have[256];

	if (getuid() != uid) {
		snprintf(err, errlen,
			 "started as uid %u, but user is uid %u: start as "
			 "root, or as uid %u",
			 (unsigned)getuid(), (unsigned)uid, (unsigned)uid);
		return -EPERM;
	}
	if (caps_get(&c) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -EPERM;
	}
	if (!(c.perm & CAP_BIT(KEEP_CAP))) {
		snprintf(err, errlen,
			 "started unprivileged (uid %u) without cap_net_admin "
			 "(permitted: %s): it needs cap_net_admin, e.g. "
			 "systemd AmbientCapabilities=CAP_NET_ADMIN "
			 "CAP_NET_BIND_SERVICE",
			 (unsigned)uid,
			 caps_format(c.perm, have, sizeof(have)));
		return -EPERM;
	}
	return keep_only_net_admin(err, errlen);
}

/* eff = {CAP_NET_ADMIN}, perm = inh = ambient = that plus CAP_NET_RAW if
 * held. Lowering is always allowed; inheritable may be raised from
 * permitted. */
static int keep_only_net_admin(char *err, size_t errlen)
{
	struct capsets now = {0}, want = {0};

	if (caps_get(&now) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -EPERM;
	}
	want.eff = CAP_BIT(KEEP_CAP);
	want.perm = CAP_BIT(KEEP_CAP) | (now.perm & CAP_BIT(CHILD_CAP));
	want.inh = want.perm;
	if (caps_set(&want) < 0) {
		snprintf(err, errlen, "capset(cap_net_admin only): %s",
			 strerror(errno));
		return -EPERM;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, KEEP_CAP, 0, 0) < 0 ||
	    ((want.perm & CAP_BIT(CHILD_CAP)) &&
	     prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CHILD_CAP, 0, 0) <
		 0)) {
		snprintf(err, errlen,
			 "ambient cap_net_admin (for the guard's "
			 "iptables-restore): %s",
			 strerror(errno));
		return -EPERM;
	}
	if (!(want.perm & CAP_BIT(CHILD_CAP)))
		log_warn(SYS, "no cap_net_raw to pass on: the guard's "
			      "iptables-save cannot read back rules that match "
			      "sets (grant NET_RAW to the daemon, not to the "
			      "workload)");
	return 0;
}

/* With CAP_SETPCAP (plain root), also shrink the bounding set, so not even
 * an exec could regain anything (all of it, or all but the daemon's own
 * two when keep_ours). Without it (a reduced container start, or a
 * process already dropped to `user`) there is nothing to gain:
 * no_new_privs already forbids raising. */
static void drop_bounding(bool keep_ours)
{
	if (!privs_have(CAP_SETPCAP))
		return;
	for (int c = 0; c < 64; c++) {
		if (keep_ours && (c == KEEP_CAP || c == CHILD_CAP))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	}
}

static int verify(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t r = 0, e = 0, s = 0;
	gid_t rg = 0, eg = 0, sg = 0;
	struct capsets c = {0};
	char have[256];

	if (getresuid(&r, &e, &s) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
	    r != uid || e != uid || s != uid || rg != gid || eg != gid ||
	    sg != gid) {
		snprintf(err, errlen,
			 "after the drop: uids %u/%u/%u gids %u/%u/%u, wanted "
			 "%u and %u",
			 (unsigned)r, (unsigned)e, (unsigned)s, (unsigned)rg,
			 (unsigned)eg, (unsigned)sg, (unsigned)uid,
			 (unsigned)gid);
		return -EPERM;
	}
	if (caps_get(&c) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -EPERM;
	}
	if (c.eff != CAP_BIT(KEEP_CAP) ||
	    (c.perm & ~(CAP_BIT(KEEP_CAP) | CAP_BIT(CHILD_CAP))) != 0) {
		snprintf(err, errlen,
			 "after the drop: effective %s, wanted cap_net_admin "
			 "only",
			 caps_format(c.eff, have, sizeof(have)));
		return -EPERM;
	}
	if (setuid(0) == 0) {
		snprintf(err, errlen, "after the drop: setuid(0) succeeded");
		return -EPERM;
	}
	return 0;
}

int privs_raise(int cap)
{
	struct capsets c = {0};

	if (cap < 0 || cap > 63 || caps_get(&c) < 0)
		return -EPERM;
	if (!(c.perm & CAP_BIT(cap)))
		return -EPERM;
	c.eff |= CAP_BIT(cap);
	return caps_set(&c);
}

/* From root: the bounding set is emptied, then the uid change without
 * keepcaps clears every set. Already uid: the sets are emptied by hand.
 * Either way the result is checked. */
int privs_shed(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct capsets none = {0}, now = {0};

	drop_bounding(false);
	if (geteuid() == 0 &&
	    (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 || setgroups(1, &gid) < 0 ||
	     setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)) {
		snprintf(err, errlen, "becoming uid %u gid %u: %s",
			 (unsigned)uid, (unsigned)gid, strerror(errno));
		return -EPERM;
	}
	if (caps_set(&none) < 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "clearing the capabilities: %s",
			 strerror(errno));
		return -EPERM;
	}
	if (caps_get(&now) < 0 || now.eff != 0 || now.perm != 0 ||
	    getuid() != uid || geteuid() != uid) {
		snprintf(err, errlen, "capabilities or uid still held");
		return -EPERM;
	}
	return 0;
}

static int caps_get(struct capsets *c)
{
	struct __user_cap_header_struct hdr = {
	    .version = _LINUX_CAPABILITY_VERSION_3,
	    .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &hdr, d) < 0)
		return -errno;
	c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	c->perm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct capsets *c)
{
	struct __user_cap_header_struct hdr = {
	    .version = _LINUX_CAPABILITY_VERSION_3,
	    .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	d[0].effective = (uint32_t)c->eff;
	d[1].effective = (uint32_t)(c->eff >> 32);
	d[0].permitted = (uint32_t)c->perm;
	d[1].permitted = (uint32_t)(c->perm >> 32);
	d[0].inheritable = (uint32_t)c->inh;
	d[1].inheritable = (uint32_t)(c->inh >> 32);
	if (syscall(SYS_capset, &hdr, d) < 0)
		return -errno;
	return 0;
}

/* "cap_net_admin,cap_net_raw" or "none"; unknown bits as "cap_N". */
static const char *caps_format(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < 64 && off < len; c++) {
		char num[16];
		const char *name = num;
		int n;

		if (!(mask & CAP_BIT(c)))
			continue;
		if ((size_t)c < sizeof(cap_names) / sizeof(cap_names[0]))
			name = cap_names[c];
		else
			snprintf(num, sizeof(num), "cap_%d", c);
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
			     name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, len, "none");
	return buf;
}

static void missing_add(char *buf, size_t len, const char *cap)
{
	size_t off = strlen(buf);

	snprintf(buf + off, len - off, "%s%s", off > 0 ? ", " : "", cap);
}

int privs_preflight(uid_t uid, bool bind_low_port, char *err, size_t errlen)
{
	struct capsets c = {0};
	char missing[256] = "", have[256];
	bool root;
	uid_t r = 0, e = 0, s = 0;

	if (getresuid(&r, &e, &s) < 0 || caps_get(&c) < 0) {
		snprintf(err, errlen, "getresuid/capget: %s", strerror(errno));
		return -EPERM;
	}
	root = r == 0 || e == 0 || s == 0;
	if (!root && r != uid) {
		snprintf(err, errlen,
			 "started as uid %u, but user is uid %u: start as "
			 "root, or as uid %u",
			 (unsigned)r, (unsigned)uid, (unsigned)uid);
		return -EPERM;
	}
	if (!(c.perm & CAP_BIT(KEEP_CAP)))
		missing_add(missing, sizeof(missing), "cap_net_admin");
	if (bind_low_port && !(c.perm & CAP_BIT(CAP_NET_BIND_SERVICE)))
		missing_add(missing, sizeof(missing), "cap_net_bind_service");
	if (root && !(c.perm & CAP_BIT(CAP_SETUID)))
		missing_add(missing, sizeof(missing), "cap_setuid");
	if (root && !(c.perm & CAP_BIT(CAP_SETGID)))
		missing_add(missing, sizeof(missing), "cap_setgid");
	if (missing[0] != '\0') {
		snprintf(err, errlen,
			 "started as uid %u with permitted capabilities %s: "
			 "missing %s%s",
			 (unsigned)r, caps_format(c.perm, have, sizeof(have)),
			 missing,
			 root ? " (a root start drops to `user` itself)"
			      : " (e.g. systemd AmbientCapabilities=)");
		return -EPERM;
	}
	return 0;
}
