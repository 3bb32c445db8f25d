// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for control_parse, the control socket's command check: any
 * bytes are one of the six commands (reload, status, status json,
 * entries, suggest, report) or refused, and only the exact
 * spellings are accepted; and for the operand of "why ADDR[:PORT]"
 * (attrib_why), which explains an address or refuses the operand. */
/* Control and reload reach every part of the daemon.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "observe/attrib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void why_operand(const char *op, size_t len);

static void why_operand(const char *op, size_t len)
{
	static struct config cfg;
	char arg[CONTROL_LINE_MAX];
	FILE *f = fopen("/dev/null", "w");
	int r;

	if (f == NULL || len >= sizeof(arg)) {
		if (f != NULL)
			fclose(f);
		return;
	}
	memcpy(arg, op, len);
	arg[len] = '\0';
	r = attrib_why(&cfg, NULL, arg, f);
	fclose(f);
	if (r != 0 && r != -EINVAL)
		abort();
}

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
	if (r == 2 && !(n == 7 && memcmp(data, "entries", 7) == 0))
		abort();
	if (r == 3 && !(n == 7 && memcmp(data, "suggest", 7) == 0))
		abort();
	if (r == 4 && !(n == 6 && memcmp(data, "report", 6) == 0))
		abort();
	if (r != 0 && r != 1 && r != 2 && r != 3 && r != 4 && r != -EINVAL)
		abort();
	if (size > 4 && memcmp(data, "why ", 4) == 0)
		why_operand((const char *)data + 4, size - 4);
	return 0;
}
