/* SPDX-License-Identifier: GPL-2.0-or-later */
/* serve: the daemon's assembly (policy, upstream, sets, resolver, server,
 * privilege drop, guard) and its event loop. */
#ifndef DNSFENCE_SERVE_H
#define DNSFENCE_SERVE_H

#include <sys/types.h>

#include "config/config.h"

/* Bind the listeners and open the sets' netlink socket, drop to uid/gid
 * keeping only CAP_NET_ADMIN, start the guard (unless mode is off), and
 * serve until SIGTERM/SIGINT (SIGHUP reloads path, the config file as
 * given to config_load; cfg must outlive the call). 0 on a clean shutdown;
 * -EPERM when the privilege drop failed (nothing was served); -EIO when a
 * socket could not be opened or the guard could not restore the fence.
 * Everything is logged. The fence itself must already be in place.
 * SERVE_NOT_READY: the readiness gate (the self-test) found a probe that
 * got around the fence, or could not run; READY=1 was never sent. */
#define SERVE_NOT_READY 1
int serve_run(const struct config *cfg, const char *path, uid_t uid, gid_t gid);

#endif
