/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fence: what the commands setup, serve, run, check and teardown do, as
 * short sequences of module calls on a loaded config and a resolved user.
 * main parses the command line and maps these results to exit codes.
 * Everything is logged here; the returns only say how it went. */
#ifndef DNSFENCE_FENCE_H
#define DNSFENCE_FENCE_H

#include <stdbool.h>
#include <sys/types.h>

#include "config/config.h"

/* setup and/or serve: create the sets, install the rules and read both
 * back (do_setup); then serve behind them (do_serve; path is the config
 * file, which a reload reads again), after checking
 * that they are in place when this call did not just install them.
 * 0; -EIO when the kernel refused something or the fence is not in
 * place; -EPERM when the privilege drop failed; -EBUSY when another
 * daemon holds the state directory or the control socket (serving
 * only: instance.h). */
int fence_run(const struct config *cfg, const char *path, uid_t uid, gid_t gid,
	      bool do_setup, bool do_serve);
/* check: compare the kernel with the config, one line per difference on
 * stdout. 0 in place (or mode off), 1 drift, -errno when the state
 * cannot be read. */
int fence_check(const struct config *cfg);
/* teardown: remove the rules and the sets. 0 or -EIO. */
int fence_teardown(const struct config *cfg);

#endif
