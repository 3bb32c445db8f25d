// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for held_parse, the reader of state_dir/held-upstreams
 * (written by the daemon's uid, read by setup as root and by check): any
 * bytes are loaded or refused whole, never more than HELD_MAX holds, none
 * ending after HELD_SECONDS from now, none an upstream of the config. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/netaddr.h"
#include "config/config.h"
#include "fence/held.h"

#define NOW 1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	struct config_endpoint up = {0};
	const char *why = NULL;
	char err[256];
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	if (netaddr_parse_endpoint("198.18.0.1:53", true, 53, &up.sa, &up.len,
				   &why) != 0)
		abort();
	cfg.upstreams = &up;
	cfg.n_upstreams = 1;
	rc = held_parse(&cfg, (const char *)data, size,
			"00000000-0000-0000-0000-000000000000", NOW, err,
			sizeof(err));
	if (rc != 0 && rc != -EINVAL && rc != -ENOMEM)
		abort();
	if (rc != 0 && cfg.n_held != 0)
		abort();
	if (cfg.n_held > HELD_MAX)
		abort();
	for (size_t i = 0; i < cfg.n_held; i++) {
		if (cfg.held[i].until <= NOW ||
		    cfg.held[i].until > NOW + HELD_SECONDS ||
		    netaddr_endpoint_equal(&cfg.held[i].e, &up))
			abort();
	}
	free(cfg.held);
	return 0;
}
