// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for control_parse, the control socket's command check: any
 * bytes are one of the three commands or refused, and only the exact
 * spellings are accepted. */
/* Control and reload reach every part of the daemon.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool json = false;
	int r = control_parse((const char *)data, size, &json);
	size_t n = size;

	while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		n--;
	if (r == 1 && !(n == 6 && memcmp(data, "reload", 6) == 0))
		abort();
	if (r == 0 && !(json ? n == 11 && memcmp(data, "status json", 11) == 0
			     : n == 6 && memcmp(data, "status", 6) == 0))
		abort();
	if (r != 0 && r != 1 && r != -EINVAL)
		abort();
	return 0;
}
