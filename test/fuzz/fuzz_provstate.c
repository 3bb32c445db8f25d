// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for provstate_parse, the reader of state_dir/prov.state
 * (written by the unprivileged daemon, read by setup as root): any bytes
 * are loaded whole or refused whole (the map is then cleared by the
 * caller), never beyond the map's bound, and every link loaded is live.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "resolve/prov.h"
#include "resolve/provstate.h"

#define MAX_LINKS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prov *p = prov_new(MAX_LINKS);
	char err[256];
	int rc;

	if (p == NULL)
		return 0;
	rc = provstate_parse(p, (const char *)data, size, "0123456789abcdef",
			     "00000000-0000-0000-0000-000000000000", 100, err,
			     sizeof(err));
	if (rc != 0 && rc != -EINVAL && rc != -ESTALE && rc != -ENOSPC &&
	    rc != -ENOMEM)
		abort();
	if (prov_links(p) > MAX_LINKS)
		abort();
	prov_free(p);
	return 0;
}
