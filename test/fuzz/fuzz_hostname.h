/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every fuzz target of a server-name reader (fuzz_clienthello,
 * fuzz_httphost) holds a name it returns to: 1 to TLSHELLO_NAME_MAX
 * lower-case letters, digits, '-', '_' and single dots, no dot at either
 * end. abort()s otherwise. */
#ifndef DNSFENCE_FUZZ_HOSTNAME_H
#define DNSFENCE_FUZZ_HOSTNAME_H

#include <stdlib.h>
#include <string.h>

#include "flow/tlshello.h"

static inline void fuzz_check_host_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > TLSHELLO_NAME_MAX || name[0] == '.' ||
	    name[n - 1] == '.' || strstr(name, "..") != NULL)
		abort();
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			abort();
	}
}

#endif
