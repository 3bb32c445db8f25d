/* SPDX-License-Identifier: GPL-2.0-or-later */
/* held: the replaced upstreams whose origin lines (rule 2: the entries an
 * upstream's endpoint began, the daemon's mark required) outlive their
 * drain. An answer later than the daemon's question's conntrack entry
 * makes a NEW entry from the upstream's endpoint to the daemon's old
 * port; a workload bound to that port then asks the old resolver
 * anything as the entry's reply direction, past rule 3. Rule 2b stops it
 * on port 53 only; these lines stop it on any port, for HELD_SECONDS
 * after the daemon stopped asking (a reload's drain, or the setup of a
 * restart whose config no longer names an upstream the kernel's rules
 * did). The list lives in the config the rules are rendered from
 * (cfg->held) and in state_dir/HELD_FILE, so `check`, a restart and the
 * guard render the same lines. Bounded: HELD_MAX endpoints, the one
 * whose hold ends first dropped (said) for a new one. */
#ifndef DNSFENCE_HELD_H
#define DNSFENCE_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"

#define HELD_FILE    "held-upstreams"
#define HELD_SECONDS 600
#define HELD_MAX     16

/* Hold e until `until` (monotonic seconds): a later end wins for an
 * endpoint already held; nothing for one the config names as an upstream
 * or keeps as retired. 1 when the list changed, 0 when not, -ENOMEM. */
int held_add(struct config *cfg, const struct config_endpoint *e,
	     uint64_t until);
/* Drop the holds that ended by now, writing their endpoints, space
 * separated, into list (may be NULL). How many went. */
size_t held_expire(struct config *cfg, uint64_t now, char *list, size_t len);
/* The earliest end of a hold, 0 when none. */
uint64_t held_next(const struct config *cfg);
/* A reload: cfg takes over old's holds, less the endpoints cfg names as
 * upstreams again. 0 or -ENOMEM. */
int held_inherit(const struct config *old, struct config *cfg);

/* state_dir/HELD_FILE into cfg->held, the ended holds left out; a
 * missing file is an empty list (0). -EINVAL with err naming the line
 * for a file this code did not write (another version, another boot:
 * ignored, and then nothing is held); -EPERM when statefs.h's rule
 * refuses the directory or the file for a daemon running as uid; -errno
 * when unreadable. */
int held_load(struct config *cfg, uid_t uid, uint64_t now, char *err,
	      size_t errlen);
/* The file's text (len bytes, any bytes) into cfg->held, as held_load;
 * boot is this boot's id. A hold longer than HELD_SECONDS from now is
 * cut to it (the file is the daemon uid's: whatever it says holds no
 * longer than a drain would). 0 or -EINVAL/-ENOMEM with err. */
int held_parse(struct config *cfg, const char *text, size_t len,
	       const char *boot, uint64_t now, char *err, size_t errlen);
/* cfg->held into state_dir/HELD_FILE, written whole to a temporary file
 * created exclusively, then renamed (owned by uid:gid when run as root);
 * an empty list removes the file. dirfd:
 * state_dir opened before a privilege drop (its parents may be closed to
 * the daemon's uid), or -1 to open it by its path. */
int held_save(const struct config *cfg, int dirfd, uid_t uid, gid_t gid,
	      char *err, size_t errlen);
/* Setup: every upstream endpoint whose origin lines the kernel's rules
 * hold and cfg does not name (the previous run's upstreams, and those it
 * still drained) held for HELD_SECONDS from now; *added counts them, and
 * their endpoints go into list. 0, or <0 with err. */
int held_from_rules(struct config *cfg, uint64_t now, size_t *added, char *list,
		    size_t len, char *err, size_t errlen);

#endif
