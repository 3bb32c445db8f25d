/* SPDX-License-Identifier: GPL-2.0-or-later */
/* configjson: the normalized config as JSON (`dnsfence validate`), and
 * config equality defined by it. */
#ifndef DNSFENCE_CONFIGJSON_H
#define DNSFENCE_CONFIGJSON_H

#include <stdbool.h>

#include "config/config.h"

/* The normalized config as JSON that config_parse accepts again.
 * malloc'd; NULL on allocation failure. */
char *config_to_json(const struct config *c);
/* The same, with every ecosystem preset expanded: "allow" holds the
 * config's entries and then each preset's hosts (once each), and
 * "ecosystems" is empty; the names the fence allows, as a config that
 * parses to the same policy. NULL on allocation failure. */
char *config_to_json_effective(const struct config *c);
/* Same normalized content (every field, lists in order). For reload
 * decisions and tests. */
bool config_equal(const struct config *a, const struct config *b);

#endif
