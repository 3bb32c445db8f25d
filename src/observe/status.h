/* SPDX-License-Identifier: GPL-2.0-or-later */
/* status: the running daemon's state as `dnsfence status` prints it, as
 * JSON or as "key: value" lines, from one set of values. */
#ifndef DNSFENCE_STATUS_H
#define DNSFENCE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

/* One reload's record. key NULL: the last reload of any trigger
 * ("last_reload"); else the last one of that trigger ("last_reload_by").
 * The strings belong to the caller. */
struct status_reload {
	const char *key, *trigger, *text;
	bool ok;
	uint64_t ago_s, ms;
};
#define STATUS_RELOADS 4

struct status_info {
	long pid; /* the daemon's: which instance answered */
	const char *mode, *config;
	char fingerprint[20];
	size_t allow_entries, in_flight, cached;
	long long set4, set6; /* the kernel's count; -1: not known */
	size_t prov_addresses, prov_names, prov_links;
	uint64_t uptime_s;
	uint64_t reload_requests; /* answered: applied, unchanged or refused */
	struct status_reload reloads[STATUS_RELOADS];
	size_t n_reloads;
	struct cJSON *usage;	/* per allow entry (usage_status); taken over */
	const char *name_check; /* its mode: "enforce", "audit", "off" */
	bool has_queue;		/* the kernel's count of its queue */
	uint32_t queue_depth, queue_full_dropped, queue_send_dropped;
};

/* si plus the counters (stats.c), malloc'd; NULL on ENOMEM. Text:
 * "key: value" lines, objects flattened to "key.sub: value". */
char *status_render(const struct status_info *si, bool json);

#endif
