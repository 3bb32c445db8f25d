// SPDX-License-Identifier: GPL-2.0-or-later
/* fwowner: whose fence the rules in place are. One network namespace
 * holds one fence per scope: the rules live in fixed chains
 * (DNSFENCE-OUT, DNSFENCE-FWD) that setup writes whole, so a second
 * config installing its own fence would take the first one's rules out
 * (in forward scope: every container of the first config's bridges
 * unfenced). Each fence matches its own config's sets by name; rules
 * that match other sets are another config's fence. */
#ifndef DNSFENCE_FENCE_FWOWNER_H
#define DNSFENCE_FENCE_FWOWNER_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

/* 0: the scope's chain holds no rules, or only rules matching cfg's
 * sets. 1: it holds another fence's rules (err says whose and what to
 * do, for setup or, removing, for teardown). <0: the rules could not be
 * read (err says why). */
int fwowner_foreign(const struct config *cfg, bool removing, char *err,
		    size_t errlen);

/* One saved rule line against cfg's sets: the first set name it
 * matches that is not cfg's, copied into name (NUL-terminated), or ""
 * (its own function for the unit test). */
void fwowner_line_foreign(const struct config *cfg, const char *line,
			  char *name, size_t namelen);

#endif
