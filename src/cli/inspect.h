/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inspect: what `dnsfence entries` and `dnsfence allowed` print: which
 * name put which address in the sets and until when, and whether a name
 * is allowed and by which entry. For operators, scripts and agents. */
#ifndef DNSFENCE_INSPECT_H
#define DNSFENCE_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config/config.h"

/* The daemon's entries reply (reload_entries' JSON) to out, grouped by
 * name and sorted: text lines "NAME -> ADDR (N s), ADDR (N s)", or with
 * json one object {"mode": M, "names": [{"name": N, "addresses":
 * [{"address": A, "expires_in_s": S}]}]}. name (NULL: all) keeps a name
 * equal to it or below it ("example.com" keeps "www.example.com"); addr
 * (NULL: all) keeps the names that put that address in. Returns the
 * number of names printed, or -EINVAL with err set (a reply that does not
 * parse, an addr that is not an address). */
int inspect_entries(const char *reply, const char *name, const char *addr,
		    bool json, FILE *out, char *err, size_t errlen);

/* Is name allowed by cfg (the same policy the daemon compiles), and by
 * which entry: an exact allow entry first, else the closest wildcard,
 * else the ecosystem preset that holds it. Prints one line, and for a
 * name not allowed the fix as the EDE text says it ("not in allow; add
 * ..."); with json one object {"name", "allowed", "entry", "source",
 * "mode"}, "would_allow" and "hint" instead of entry and source for a
 * name not allowed.
 * 1 allowed, 0 not, -EINVAL (err set) when name is not a valid name,
 * -ENOMEM. */
int inspect_allowed(const struct config *cfg, const char *name, bool json,
		    FILE *out, char *err, size_t errlen);

#endif
