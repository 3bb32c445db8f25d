// SPDX-License-Identifier: GPL-2.0-or-later
/* inspect: `dnsfence entries` and `dnsfence allowed` (see inspect.h).
 *
 * entries: the daemon sends its provenance links flat and unsorted
 * (reload_entries: no sorting or grouping in the event loop); this side,
 * the CLI, filters, sorts and groups them by name. allowed: the config
 * compiled as the daemon compiles it (reload_build_policy) decides; the
 * entry that allows the name is then found by a walk over the config's
 * entries and presets, fine for one name on the command line. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "cli/inspect.h"
#include "base/netaddr.h"
#include "dns/dnsmsg.h"
#include "config/policy.h"
#include "daemon/reload.h"

struct link {
	const char *name, *addr;
	double left_s;
};

static int cmp_link(const void *a, const void *b);
static bool name_kept(const char *entry, const char *filter);
static bool addr_kept(const cJSON *arr, const char *name,
		      const struct netaddr *want);
static int print_groups(const struct link *v, size_t n, const char *mode,
			bool json, FILE *out);
static const char *find_entry(const struct config *cfg, const char *name,
			      const char **source);
static const char *closest(char *const *v, size_t n, const char *name);

static int cmp_link(const void *a, const void *b)
{
	const struct link *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->addr, y->addr);
}

/* entry equals filter, or lies below it (label-aligned). */
static bool name_kept(const char *entry, const char *filter)
{
	size_t n = strlen(entry), f = strlen(filter);

	if (f > 1 && filter[f - 1] == '.')
		f--;
	if (n == f)
		return strncasecmp(entry, filter, f) == 0;
	return n > f && entry[n - f - 1] == '.' &&
	       strncasecmp(entry + n - f, filter, f) == 0;
}

/* Did name put the address want in the sets (any of its links)? */
static bool addr_kept(const cJSON *arr, const char *name,
		      const struct netaddr *want)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, arr)
	{
		const char *n = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "name"));
		const char *a = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "address"));
		struct netaddr got;

		if (n != NULL && a != NULL && strcmp(n, name) == 0 &&
		    netaddr_parse(a, &got) == 0 && netaddr_equal(&got, want))
			return true;
	}
	return false;
}

int inspect_entries(const char *reply, const char *name, const char *addr,
		    bool json, FILE *out, char *err, size_t errlen)
{
	cJSON *root = cJSON_Parse(reply);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "entries");
	const char *mode = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(root, "mode"));
	struct netaddr want;
	struct link *v = NULL;
	size_t n = 0;
	const cJSON *e;
	int rc;

	if (addr != NULL && netaddr_parse(addr, &want) != 0) {
		snprintf(err, errlen,
			 "--addr '%s': not an IPv4 or IPv6 address", addr);
		rc = -EINVAL;
		goto out;
	}
	if (!cJSON_IsArray(arr) || mode == NULL) {
		snprintf(err, errlen, "the daemon's reply is not understood");
		rc = -EINVAL;
		goto out;
	}
	v = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*v));
	if (v == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(e, arr)
	{
		struct link l = {
		    cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(e, "name")),
		    cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(e, "address")),
		    cJSON_GetNumberValue(
			cJSON_GetObjectItemCaseSensitive(e, "expires_in_s")),
		};

		if (l.name == NULL || l.addr == NULL ||
		    (name != NULL && !name_kept(l.name, name)) ||
		    (addr != NULL && !addr_kept(arr, l.name, &want)))
			continue;
		v[n++] = l;
	}
	qsort(v, n, sizeof(*v), cmp_link);
	rc = print_groups(v, n, mode, json, out);
out:
	free(v);
	cJSON_Delete(root);
	return rc;
}

/* One line (or JSON element) per name, its addresses in order. */
static int print_groups(const struct link *v, size_t n, const char *mode,
			bool json, FILE *out)
{
	cJSON *root = json ? cJSON_CreateObject() : NULL, *names = NULL;
	cJSON *cur = NULL;
	char *text;
	int groups = 0;

	if (json) {
		if (root == NULL)
			return -ENOMEM;
		cJSON_AddStringToObject(root, "mode", mode);
		names = cJSON_AddArrayToObject(root, "names");
	}
	for (size_t i = 0; i < n; i++) {
		bool first = i == 0 || strcmp(v[i].name, v[i - 1].name) != 0;

		groups += first;
		if (json && first) {
			cJSON *g = cJSON_CreateObject();

			cJSON_AddItemToArray(names, g);
			cJSON_AddStringToObject(g, "name", v[i].name);
			cur = cJSON_AddArrayToObject(g, "addresses");
		}
		if (json) {
			cJSON *a = cJSON_CreateObject();

			cJSON_AddItemToArray(cur, a);
			cJSON_AddStringToObject(a, "address", v[i].addr);
			cJSON_AddNumberToObject(a, "expires_in_s", v[i].left_s);
			continue;
		}
		if (first)
			fprintf(out, "%s -> ", v[i].name);
		else
			fputs(", ", out);
		fprintf(out, "%s (expires in %.0f s)", v[i].addr, v[i].left_s);
		if (i + 1 == n || strcmp(v[i].name, v[i + 1].name) != 0)
			fputc('\n', out);
	}
	if (json) {
		text = cJSON_PrintUnformatted(root);
		if (text != NULL)
			fprintf(out, "%s\n", text);
		free(text);
		cJSON_Delete(root);
	}
	return groups;
}

/* The wildcard entry of v with the longest parent that covers name. */
static const char *closest(char *const *v, size_t n, const char *name)
{
	const char *best = NULL;

	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(v[i], name) == 0)
			return v[i];
		if (policy_entry_matches(v[i], name) &&
		    (best == NULL || strlen(v[i]) > strlen(best)))
			best = v[i];
	}
	return best;
}

/* The entry that allows name, and where it comes from ("allow", or the
 * preset's name); NULL when none does. */
static const char *find_entry(const struct config *cfg, const char *name,
			      const char **source)
{
	const char *hit = closest(cfg->allow, cfg->n_allow, name);

	*source = "allow";
	if (hit != NULL && strncmp(hit, "*.", 2) != 0)
		return hit; /* exact entries win, as in the policy */
	for (size_t i = 0; hit == NULL && i < cfg->n_ecosystems; i++) {
		const char *const *h = policy_preset_hosts(cfg->ecosystems[i]);
		size_t k = 0;

		while (h != NULL && h[k] != NULL)
			k++;
		hit = closest((char *const *)h, k, name);
		if (hit != NULL)
			*source = cfg->ecosystems[i];
	}
	return hit;
}

int inspect_allowed(const struct config *cfg, const char *name, bool json,
		    FILE *out, char *err, size_t errlen)
{
	char why[256], lower[DNS_NAME_STRLEN], hint[2 * DNS_NAME_STRLEN + 40];
	struct policy *pol;
	const char *entry = NULL, *source = NULL;
	const char *mode = config_mode_name(cfg->mode);
	bool ok;

	if (!policy_pattern_valid(name, why, sizeof(why)) || name[0] == '*') {
		snprintf(err, errlen, "'%s': not a name (%s)", name,
			 name[0] == '*' ? "a wildcard" : why);
		return -EINVAL;
	}
	pol = reload_build_policy(cfg, why, sizeof(why));
	if (pol == NULL) {
		snprintf(err, errlen, "%s", why);
		return -ENOMEM;
	}
	ok = policy_match_text(pol, name);
	policy_free(pol);
	if (ok)
		entry = find_entry(cfg, name, &source);
	/* The fix, as the denied answer's EDE text says it. */
	snprintf(lower, sizeof(lower), "%s", name);
	for (char *p = lower; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	if (lower[0] != '\0' && lower[strlen(lower) - 1] == '.')
		lower[strlen(lower) - 1] = '\0';
	policy_admitting("not in allow; ", lower, hint, sizeof(hint));
	if (json) {
		cJSON *o = cJSON_CreateObject();
		char *text;

		cJSON_AddStringToObject(o, "name", name);
		cJSON_AddBoolToObject(o, "allowed", ok);
		if (entry != NULL) {
			cJSON_AddStringToObject(o, "entry", entry);
			cJSON_AddStringToObject(o, "source", source);
		} else if (!ok) {
			cJSON_AddStringToObject(o, "would_allow", lower);
			cJSON_AddStringToObject(o, "hint", hint);
		}
		cJSON_AddStringToObject(o, "mode", mode);
		text = cJSON_PrintUnformatted(o);
		if (text != NULL)
			fprintf(out, "%s\n", text);
		free(text);
		cJSON_Delete(o);
	} else if (ok && strcmp(source, "allow") == 0) {
		fprintf(out, "allowed: %s, by allow entry \"%s\"\n", name,
			entry);
	} else if (ok) {
		fprintf(out, "allowed: %s, by \"%s\" of ecosystem \"%s\"\n",
			name, entry, source);
	} else {
		fprintf(out,
			"not allowed: %s matches no allow entry and no "
			"ecosystem preset (%s)\n",
			name,
			cfg->mode == CONFIG_MODE_ENFORCE
			    ? "enforce: answered locally, never forwarded"
			: cfg->mode == CONFIG_MODE_AUDIT
			    ? "mode audit: forwarded all the same, and logged "
			      "as would deny"
			    : "mode off: nothing is fenced");
		fprintf(out, "%s\n", hint);
	}
	return ok ? 1 : 0;
}
