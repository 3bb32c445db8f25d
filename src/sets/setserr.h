/* SPDX-License-Identifier: GPL-2.0-or-later */
/* setserr: the meaning of an ipset netlink error code, and the log of
 * failed adds to one set (counted always, logged once per cause until
 * adds succeed again). */
#ifndef DNSFENCE_SETSERR_H
#define DNSFENCE_SETSERR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/netaddr.h"

#define SETSERR_CAUSES 3 /* set missing, set full, other */

struct setserr_count {
	uint64_t count;	 /* failures of this cause */
	uint64_t logged; /* count when last logged; 0 = quiet */
};

/* The failures of one set; zero-initialized by its owner (sets.c). */
struct setserr_log {
	struct setserr_count cause[SETSERR_CAUSES];
	bool quiet; /* counted, never logged (another process logs them) */
};

/* The kernel's reason for an ipset netlink error (a positive errno or
 * IPSET_ERR_* code), as ipset(8) words it. */
const char *setserr_strerror(int code);
/* The sets_done_fn status for a netlink error code: -ENOENT (the set does
 * not exist), -ENOSPC (hash is full) or -EIO. */
int setserr_status(int code);
/* An add of addr (NULL: unknown) to set failed with code: counted (stats
 * and l), logged (event set_add_failed) when it is the first of its cause
 * since adds last succeeded. */
void setserr_note(struct setserr_log *l, const char *set,
		  const struct netaddr *addr, int code);
/* An add to set succeeded: each cause that was logged gets its "succeed
 * again" line, and is quiet until it fails anew. */
void setserr_ok(struct setserr_log *l, const char *set);

#endif
