// SPDX-License-Identifier: GPL-2.0-or-later
/* status: renders the daemon's state (see status.h). The text form is
 * made from the JSON object, so both always carry the same keys. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "base/stats.h"
#include "observe/status.h"

static cJSON *reload_record(const struct status_reload *r);
static void reload_records(cJSON *o, const struct status_info *si);
static cJSON *to_json(const struct status_info *si);
static void name_check(cJSON *o, const struct status_info *si);
static void lines(FILE *f, const cJSON *o, const char *prefix);

static cJSON *reload_record(const struct status_reload *r)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "trigger", r->trigger);
	cJSON_AddStringToObject(o, "result", r->ok ? "ok" : "error");
	cJSON_AddStringToObject(o, "text", r->text);
	cJSON_AddNumberToObject(o, "ago_s", (double)r->ago_s);
	cJSON_AddNumberToObject(o, "duration_ms", (double)r->ms);
	return o;
}

/* "last_reload": the last one; "last_reload_by": the last per trigger. */
static void reload_records(cJSON *o, const struct status_info *si)
{
	cJSON *last = NULL, *by = cJSON_CreateObject();

	for (size_t i = 0; i < si->n_reloads; i++) {
		const struct status_reload *r = &si->reloads[i];

		if (r->key == NULL)
			last = reload_record(r);
		else
			cJSON_AddItemToObject(by, r->key, reload_record(r));
	}
	cJSON_AddItemToObject(o, "last_reload",
			      last != NULL ? last : cJSON_CreateObject());
	cJSON_AddItemToObject(o, "last_reload_by", by);
}

/* "name_check": its mode and queue; the verdicts are in "counters"
 * (flow_checked, flow_accepted, flow_refused_*). */
static void name_check(cJSON *o, const struct status_info *si)
{
	cJSON *nc;

	if (si->name_check == NULL)
		return;
	nc = cJSON_AddObjectToObject(o, "name_check");
	cJSON_AddStringToObject(nc, "mode", si->name_check);
	if (!si->has_queue)
		return;
	cJSON_AddNumberToObject(nc, "queue_depth", (double)si->queue_depth);
	cJSON_AddNumberToObject(nc, "queue_dropped_full",
				(double)si->queue_full_dropped);
	cJSON_AddNumberToObject(nc, "queue_dropped_unsent",
				(double)si->queue_send_dropped);
}

static cJSON *to_json(const struct status_info *si)
{
	cJSON *o = cJSON_CreateObject(), *sets, *prov, *ctr;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "version", DNSFENCE_VERSION);
	cJSON_AddNumberToObject(o, "pid", (double)si->pid);
	cJSON_AddStringToObject(o, "mode", si->mode);
	cJSON_AddStringToObject(o, "config", si->config);
	cJSON_AddStringToObject(o, "policy_fingerprint", si->fingerprint);
	cJSON_AddNumberToObject(o, "allow_entries", (double)si->allow_entries);
	cJSON_AddNumberToObject(o, "uptime_s", (double)si->uptime_s);
	cJSON_AddNumberToObject(o, "queries_in_flight", (double)si->in_flight);
	cJSON_AddNumberToObject(o, "cache_entries", (double)si->cached);
	sets = cJSON_AddObjectToObject(o, "set_entries");
	cJSON_AddNumberToObject(sets, "ipv4", (double)si->set4);
	cJSON_AddNumberToObject(sets, "ipv6", (double)si->set6);
	prov = cJSON_AddObjectToObject(o, "provenance");
	cJSON_AddNumberToObject(prov, "addresses", (double)si->prov_addresses);
	cJSON_AddNumberToObject(prov, "names", (double)si->prov_names);
	cJSON_AddNumberToObject(prov, "links", (double)si->prov_links);
	cJSON_AddNumberToObject(o, "reload_requests",
				(double)si->reload_requests);
	reload_records(o, si);
	name_check(o, si);
	if (si->usage != NULL)
		cJSON_AddItemToObject(o, "allow_usage", si->usage);
	ctr = cJSON_AddObjectToObject(o, "counters");
	for (int i = 0; i < STAT__COUNT; i++)
		cJSON_AddNumberToObject(ctr, stats_name((enum stat_id)i),
					(double)stats_get((enum stat_id)i));
	return o;
}

static void lines(FILE *f, const cJSON *o, const char *prefix)
{
	for (const cJSON *it = o->child; it != NULL; it = it->next) {
		char key[96];

		snprintf(key, sizeof(key), "%s%s", prefix, it->string);
		if (cJSON_IsObject(it)) {
			char sub[100];

			if (it->child == NULL)
				fprintf(f, "%s: none\n", key);
			snprintf(sub, sizeof(sub), "%s.", key);
			lines(f, it, sub);
		} else if (cJSON_IsString(it)) {
			fprintf(f, "%s: %s\n", key, it->valuestring);
		} else {
			fprintf(f, "%s: %.0f\n", key, it->valuedouble);
		}
	}
}

char *status_render(const struct status_info *si, bool json)
{
	cJSON *o = to_json(si);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (o == NULL) {
		cJSON_Delete(si->usage);
		return NULL;
	}
	if (json) {
		text = cJSON_PrintUnformatted(o);
	} else if ((f = open_memstream(&text, &len)) != NULL) {
		lines(f, o, "");
		fclose(f);
	}
	cJSON_Delete(o);
	return text;
}
