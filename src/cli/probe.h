/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe: one query to the daemon's own listener, for readiness checks
 * (Kubernetes startupProbe, container entrypoints). */
#ifndef DNSFENCE_PROBE_H
#define DNSFENCE_PROBE_H

#include <stddef.h>

#include "config/config.h"
#include "config/policy.h"

/* The name `dnsfence probe` asks for when none is given: never allowed,
 * so a ready daemon answers it locally without asking an upstream. */
#define PROBE_DEFAULT_NAME POLICY_PROBE_NAME
#define PROBE_TIMEOUT_MS   2000

/* Send one A query for name over UDP to the first `listen` address of
 * cfg (a wildcard address is asked on loopback) and wait up to
 * timeout_ms for a well-formed reply with the query's ID and question.
 * Any rcode counts: a denied name's NXDOMAIN proves the daemon answers.
 * 0 with *rcode set; -ETIMEDOUT, -ECONNREFUSED, -EBADMSG (only malformed
 * replies came), -EINVAL (bad name) or another -errno, with err saying
 * what happened and where. */
int probe_run(const struct config *cfg, const char *name, int timeout_ms,
	      int *rcode, char *err, size_t errlen);

#endif
