/* SPDX-License-Identifier: GPL-2.0-or-later */
/* why: `dnsfence why NAME|ADDR[:PORT]`, the story of one name or one
 * address, with its fix, from the running daemon or, when none runs,
 * from what the last one left in state_dir. */
#ifndef DNSFENCE_WHY_H
#define DNSFENCE_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config/config.h"

/* Is arg an address operand ("ADDR", "ADDR:PORT", "[V6]:PORT")? */
bool why_is_address(const char *arg);

/* A NAME: what `allowed NAME` says (the entry or preset, or the entry to
 * add), then what the daemon on socket knows of it: the addresses it put
 * in the sets, how often it denied it, the flows blocked to its
 * addresses (from state_dir/suggest.json when no daemon answers). An
 * ADDR[:PORT]: the daemon's attribution (control `why`), else the flows
 * to ADDR (and PORT) suggest.json holds and what `ports` says of PORT.
 * Each answer says which source it used. 0; -EINVAL (err set) for an
 * operand that is neither; -ENOENT (err set) when an address has neither
 * a daemon nor a state file; another -errno (err set) when the daemon
 * failed; a positive exit code (err set) the daemon gave. */
int why_run(const struct config *cfg, const char *socket, const char *arg,
	    FILE *out, char *err, size_t errlen);

#endif
