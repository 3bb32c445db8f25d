/* SPDX-License-Identifier: GPL-2.0-or-later */
/* status: the running daemon's state as `dnsfence status` prints it, as
 * JSON or as "key: value" lines, from one set of values. */
#ifndef DNSFENCE_STATUS_H
#define DNSFENCE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct status_info {
	const char *mode, *config;
	char fingerprint[20];
	size_t allow_entries, in_flight, cached, set4, set6;
	size_t prov_addresses, prov_names, prov_links;
	uint64_t uptime_s, reloads;
	const char *last_trigger; /* NULL: no reload yet */
	bool last_ok;
	const char *last_text;
	uint64_t last_ago_s, last_ms;
};

/* si plus the counters (stats.c), malloc'd; NULL on ENOMEM. Text:
 * "key: value" lines, objects flattened to "key.sub: value". */
char *status_render(const struct status_info *si, bool json);

#endif
