/* SPDX-License-Identifier: GPL-2.0-or-later */
/* privs: dropping from root to the configured user while keeping only
 * CAP_NET_ADMIN, or checking that an already unprivileged start (systemd
 * User= with AmbientCapabilities=) holds what the daemon needs. */
#ifndef DNSFENCE_PRIVS_H
#define DNSFENCE_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Resolve `user` ("dnsfence", "nobody", "1234"); "dnsfence" falls back to
 * nobody when it does not exist. A numeric uid without a passwd entry
 * gets gid = uid. -ENOENT with err naming the user when it does not
 * exist; -EINVAL when it is root (the daemon never serves as root). */
int privs_lookup(const char *user, uid_t *uid, gid_t *gid, char *err,
		 size_t errlen);
/* Is uid nobody's (65534, or the passwd entry named "nobody"): a uid other
 * programs share, which the caller warns about when it installs or serves
 * with it. */
bool privs_shared_uid(uid_t uid);

/* Become uid/gid (setgroups, setgid, setuid), keeping CAP_NET_ADMIN in the
 * permitted, effective, inheritable and ambient sets (so an
 * iptables-restore child of the guard has it too) and nothing else
 * effective; CAP_NET_RAW, when held, stays permitted, inheritable and
 * ambient (not effective) for those children (iptables' set match needs
 * a raw socket). Sets no_new_privs. When started unprivileged (no uid is 0),
 * checks that the process runs as uid and holds CAP_NET_ADMIN, then reduces it
 * to that. Verifies the result (uid, capability sets, setuid(0) refused). 0, or
 * -EPERM with err saying what failed or is missing; the caller must not
 * go on serving. */
int privs_drop(uid_t uid, gid_t gid, char *err, size_t errlen);

/* Before anything is bound: does this process hold what serving needs?
 * Started as root: cap_net_admin, cap_setuid, cap_setgid (the drop) and,
 * when bind_low_port, cap_net_bind_service, all permitted. Started
 * unprivileged: uid must be the configured uid, with cap_net_admin (and
 * cap_net_bind_service when bind_low_port) permitted, e.g. through
 * ambient capabilities. 0, or -EPERM with err listing every missing
 * capability and what is held. (A missing cap_net_raw is warned about
 * by privs_drop: the guard's read-back needs it, serving does not.) */
int privs_preflight(uid_t uid, bool bind_low_port, char *err, size_t errlen);

/* Is the capability (CAP_*) in the effective set? */
bool privs_have(int cap);

/* Raise a permitted capability into the effective set; -EPERM when it
 * is not permitted. */
int privs_raise(int cap);

/* For a child that must act as the workload: become uid/gid (when root)
 * and hold no capability at all, with no_new_privs; proved afterwards.
 * -EPERM with err set. */
int privs_shed(uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
