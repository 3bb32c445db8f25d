/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flowshare: the name check's admission of new pending flows, per
 * subject (the sending uid, or the source address of a packet that
 * names no uid): at most a share of the pending flows, and a token
 * bucket on new ones, so one subject cannot fill the queue that every
 * subject's first bytes wait in. Bounded; pure (time passed in). */
#ifndef DNSFENCE_FLOWSHARE_H
#define DNSFENCE_FLOWSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"
#include "flow/flowtab.h"

struct flowshare_subject {
	bool has_uid;
	uint32_t uid;
	struct netaddr src; /* when !has_uid */
};

struct flowshare_limits {
	size_t pending_max; /* pending flows one subject may hold */
	uint32_t burst;	    /* new pending flows at once */
	uint32_t per_s;	    /* and per second after */
};

struct flowshare;

/* At most max_flows pending flows in all. NULL on ENOMEM or a zero
 * bound. */
struct flowshare *flowshare_new(size_t max_flows,
				const struct flowshare_limits *lim);
void flowshare_free(struct flowshare *t);

/* Admit the new pending flow key of subject s: 0 (counted until
 * flowshare_release), -EBUSY (s holds pending_max pending flows),
 * -EAGAIN (s opened more than its rate allows), -ENOSPC (the table is
 * full). A flow already admitted is admitted again (0). */
int flowshare_admit(struct flowshare *t, const struct flowtab_key *key,
		    const struct flowshare_subject *s, uint64_t now_ms);
/* The flow key is pending no more (decided, refused or forgotten);
 * nothing when it is not counted. */
void flowshare_release(struct flowshare *t, const struct flowtab_key *key);
/* Release every flow admitted max_age_ms ago or more: a pending flow
 * lives at most the check's timeout, so a missed release cannot shed its
 * subject for good. */
void flowshare_expire(struct flowshare *t, uint64_t now_ms,
		      uint64_t max_age_ms);
/* The pending flows s holds. */
size_t flowshare_pending(const struct flowshare *t,
			 const struct flowshare_subject *s);
size_t flowshare_count(const struct flowshare *t); /* pending flows */

#endif
