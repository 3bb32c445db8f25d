/* SPDX-License-Identifier: GPL-2.0-or-later */
/* instance: one daemon per fence. The default state directory of the
 * network namespace the process runs in, and the claim a daemon holds
 * on its state directory and control socket for as long as it runs. */
#ifndef DNSFENCE_INSTANCE_H
#define DNSFENCE_INSTANCE_H

#include <stddef.h>
#include <sys/types.h>

#define INSTANCE_DEFAULT_DIR "/run/dnsfence" /* config.h's default */
#define INSTANCE_PID_FILE    "dnsfence.pid"

struct instance;

/* The state directory when the config names none: /run/dnsfence, or
 * /run/dnsfence-NAME in a network namespace `ip netns` named NAME (a
 * bind mount in /run/netns; the smallest such name when there are
 * several), so that daemons in two namespaces of one host share no
 * state and no control socket. Written into buf (cap >= 64). */
void instance_default_dir(char *buf, size_t cap);

/* Pure, for tests: the directory for a namespace named name (NULL: not
 * named); a name with other bytes than A-Z a-z 0-9 _ . - (or starting
 * with '.', or over 64 bytes) is treated as no name. */
void instance_dir_for(const char *name, char *buf, size_t cap);

/* Before setup and serve: take the state directory (creating it, 0750
 * uid:gid, when missing) by an exclusive lock on STATE_DIR/dnsfence.pid
 * holding our pid, and make sure no live daemon answers on the control
 * socket. Another daemon on either is refused with err naming its pid.
 * A state directory that cannot be had at all (no root to create it) is
 * a warning: then the socket check alone guards; one that is there but
 * fails statefs.h's rule is refused. The claim lasts until
 * instance_release (or the process's end). NULL with err set on
 * refusal. */
struct instance *instance_claim(const char *state_dir,
				const char *control_socket, uid_t uid,
				gid_t gid, char *err, size_t errlen);
void instance_release(struct instance *in);

/* Open the state directory (creating it, mode 0750, owned by uid:gid
 * when run as root, if missing) while privileges allow; the daemon
 * writes through the descriptor, so only the directory itself must be
 * writable by uid later. fd >= 0, or -errno with err set: -EPERM when
 * it is a link or fails statefs_dir_ok (owner, mode). */
int instance_open_dir(const char *dir, uid_t uid, gid_t gid, char *err,
		      size_t errlen);

/* Does a process listen on the unix socket path? 1 with *pid its pid
 * (read with SO_PEERCRED; 0 if unknown), 0 when none does (no socket
 * file, or a stale one nothing accepts on), -errno when it cannot be told
 * (-EACCES: the socket's mode keeps the caller out). Connects and closes
 * at once: a daemon reads EOF and forgets the connection. A listener
 * whose pid is gone is the DNS process of a daemon that died (the parent
 * bound the socket), and one whose backlog is full accepts nothing: such
 * a listener is about to exit, and is waited for up to
 * INSTANCE_ORPHAN_WAIT_MS before it counts. */
#define INSTANCE_ORPHAN_WAIT_MS 3000
int instance_socket_owner(const char *path, pid_t *pid);

#endif
