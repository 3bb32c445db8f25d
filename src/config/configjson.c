// SPDX-License-Identifier: GPL-2.0-or-later
/* configjson: a struct config written back as JSON, the normalized form
 * `dnsfence validate` prints. Every field is written, defaults included,
 * addresses and ports in their canonical spelling, so the text parses
 * again to the same config and two configs are equal exactly when their
 * texts are (config_equal). Indented with two spaces, as people write it. */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config/configjson.h"
#include "dns/qtype.h"
#include "base/log.h"
#include "base/netaddr.h"
#include "config/policy.h"

static cJSON *json_strings(char *const *s, size_t n);
static cJSON *json_endpoints(const struct config_endpoint *e, size_t n);
static char *indent_two(char *s);
static cJSON *config_tree(const struct config *c);
static char *tree_text(cJSON *root);
static cJSON *effective_allow(const struct config *c);
static bool has_string(const cJSON *arr, const char *s);
static bool json_resolving(cJSON *root, const struct config *c);
static bool json_sets(cJSON *root, const struct config *c);
static bool json_ports(cJSON *root, const struct config *c);
static bool json_cidr_list(cJSON *root, const char *key,
			   const struct netcidr *v, size_t n);
static bool json_qtypes(cJSON *root, const struct config *c);
static bool json_budget(cJSON *root, const struct config *c);
static bool json_cidrs(cJSON *root, const struct config *c);
static bool json_daemon(cJSON *root, const struct config *c);
static bool json_observe(cJSON *root, const struct config *c);
static bool json_control(cJSON *root, const struct config *c);
static bool json_scope(cJSON *root, const struct config *c);
static bool json_subjects(cJSON *root, const struct config *c);
static cJSON *json_port_list(const struct config_port *pt, size_t n);
static cJSON *json_ids(const uint32_t *ids, size_t n);

/* The normalized JSON holds every field, so it is the comparison. */
bool config_equal(const struct config *a, const struct config *b)
{
	char *ta = config_to_json(a), *tb = config_to_json(b);
	bool eq = ta != NULL && tb != NULL && strcmp(ta, tb) == 0;

	free(ta);
	free(tb);
	return eq;
}

static cJSON *json_strings(char *const *s, size_t n)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr != NULL && i < n; i++) {
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(s[i]))) {
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

static cJSON *json_endpoints(const struct config_endpoint *e, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	char buf[NETADDR_ENDPOINT_STRLEN];

	for (size_t i = 0; arr != NULL && i < n; i++) {
		netaddr_format_endpoint((const struct sockaddr *)&e[i].sa, buf,
					sizeof(buf));
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(buf))) {
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* cJSON indents with tabs: make it two spaces, and ":\t" a ": ". Raw tabs
 * occur only as layout, since cJSON escapes them inside strings. */
static char *indent_two(char *s)
{
	size_t tabs = 0, o = 0;
	char *out;

	for (const char *c = s; *c != '\0'; c++)
		tabs += *c == '\t';
	if ((out = malloc(strlen(s) + tabs + 1)) == NULL)
		goto out;
	for (const char *c = s; *c != '\0'; c++) {
		if (*c != '\t')
			out[o++] = *c;
		else if (c > s && c[-1] == ':')
			out[o++] = ' ';
		else {
			out[o++] = ' ';
			out[o++] = ' ';
		}
	}
	out[o] = '\0';
out:
	free(s);
	return out;
}

/* Each json_* step adds its keys to root in the order people read them;
 * false when cJSON runs out of memory. */
static cJSON *config_tree(const struct config *c)
{
	cJSON *root = cJSON_CreateObject();
	bool ok = root != NULL && json_resolving(root, c) &&
		  json_sets(root, c) && json_ports(root, c) &&
		  json_cidrs(root, c) && json_daemon(root, c) &&
		  json_observe(root, c) && json_control(root, c) &&
		  json_scope(root, c) && json_subjects(root, c);

	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static char *tree_text(cJSON *root)
{
	char *text = NULL;

	if (root != NULL && (text = cJSON_Print(root)) != NULL)
		text = indent_two(text);
	cJSON_Delete(root);
	return text;
}

char *config_to_json(const struct config *c)
{
	return tree_text(config_tree(c));
}

static bool has_string(const cJSON *arr, const char *s)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, arr)
	{
		if (strcmp(e->valuestring, s) == 0)
			return true;
	}
	return false;
}

/* allow, then each preset's hosts that allow does not already hold. */
static cJSON *effective_allow(const struct config *c)
{
	cJSON *arr = json_strings(c->allow, c->n_allow);

	for (size_t i = 0; arr != NULL && i < c->n_ecosystems; i++) {
		const char *const *h = policy_preset_hosts(c->ecosystems[i]);

		for (; h != NULL && *h != NULL; h++) {
			if (!has_string(arr, *h) &&
			    !cJSON_AddItemToArray(arr,
						  cJSON_CreateString(*h))) {
				cJSON_Delete(arr);
				return NULL;
			}
		}
	}
	return arr;
}

char *config_to_json_effective(const struct config *c)
{
	cJSON *root = config_tree(c), *allow = effective_allow(c);
	cJSON *none = cJSON_CreateArray();

	if (root == NULL || allow == NULL || none == NULL ||
	    !cJSON_ReplaceItemInObjectCaseSensitive(root, "allow", allow)) {
		cJSON_Delete(root);
		cJSON_Delete(allow);
		cJSON_Delete(none);
		return NULL;
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(root, "ecosystems", none)) {
		cJSON_Delete(root);
		cJSON_Delete(none);
		return NULL;
	}
	return tree_text(root);
}

/* "listen", "upstreams", "allow", "allow_public_suffix_wildcards",
 * "ecosystems", "deny_rcode". */
static bool json_resolving(cJSON *root, const struct config *c)
{
	bool ok;

	ok = cJSON_AddItemToObject(root, "listen",
				   json_endpoints(c->listen, c->n_listen));
	ok = ok && cJSON_AddItemToObject(
		       root, "upstreams",
		       json_endpoints(c->upstreams, c->n_upstreams));
	ok = ok && cJSON_AddItemToObject(root, "allow",
					 json_strings(c->allow, c->n_allow));
	ok = ok && cJSON_AddBoolToObject(root, "allow_public_suffix_wildcards",
					 c->allow_psl_wildcards) != NULL;
	ok = ok && cJSON_AddItemToObject(
		       root, "ecosystems",
		       json_strings(c->ecosystems, c->n_ecosystems));
	ok = ok && json_qtypes(root, c) && json_budget(root, c);
	return ok && cJSON_AddStringToObject(root, "deny_rcode",
					     config_deny_name(c->deny_rcode));
}

/* "wildcard_budget": what a workload may ask below an allowed wildcard. */
static bool json_budget(cJSON *root, const struct config *c)
{
	cJSON *b = cJSON_AddObjectToObject(root, "wildcard_budget");
	bool ok = b != NULL;

	ok = ok && cJSON_AddNumberToObject(b, "burst", c->budget_burst);
	ok = ok &&
	     cJSON_AddNumberToObject(b, "per_minute", c->budget_per_minute);
	ok = ok && cJSON_AddNumberToObject(b, "depth_max", c->budget_depth_max);
	return ok &&
	       cJSON_AddNumberToObject(b, "label_max", c->budget_label_max);
}

/* "qtypes": ["LOC", "TYPE65000"], by mnemonic where there is one. */
static bool json_qtypes(cJSON *root, const struct config *c)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "qtypes");
	char name[QTYPE_STRLEN];
	bool ok = arr != NULL;

	for (size_t i = 0; ok && i < c->n_qtypes; i++)
		ok = cJSON_AddItemToArray(
		    arr, cJSON_CreateString(
			     qtype_name(c->qtypes[i], name, sizeof(name))));
	return ok;
}

/* "sets" and "ttl", the two objects that say what goes into the sets. */
static bool json_sets(cJSON *root, const struct config *c)
{
	cJSON *sets, *ttl;
	bool ok;

	ok = (sets = cJSON_AddObjectToObject(root, "sets")) != NULL;
	ok = ok && cJSON_AddStringToObject(sets, "ipv4", c->set4);
	ok = ok && cJSON_AddStringToObject(sets, "ipv6", c->set6);
	ok = ok && cJSON_AddNumberToObject(sets, "maxelem", c->maxelem);
	ok = ok &&
	     cJSON_AddNumberToObject(sets, "client_maxelem", c->client_maxelem);
	ok = ok && (ttl = cJSON_AddObjectToObject(root, "ttl")) != NULL;
	ok = ok && cJSON_AddNumberToObject(ttl, "min", c->ttl_min);
	return ok && cJSON_AddNumberToObject(ttl, "max", c->ttl_max);
}

/* "ports": "tcp/443", "udp/8000-8080". */
/* "ports": "tcp/443", "udp/8000-8080"; name_check's mode and ports. */
static bool json_ports(cJSON *root, const struct config *c)
{
	cJSON *nc;

	if (!cJSON_AddItemToObject(root, "ports",
				   json_port_list(c->ports, c->n_ports)))
		return false;
	nc = cJSON_AddObjectToObject(root, "name_check");
	return nc != NULL &&
	       cJSON_AddStringToObject(nc, "mode",
				       config_name_check_name(c->name_check)) &&
	       cJSON_AddItemToObject(
		   nc, "tls_ports",
		   json_port_list(c->tls_ports, c->n_tls_ports)) &&
	       cJSON_AddItemToObject(
		   nc, "http_ports",
		   json_port_list(c->http_ports, c->n_http_ports)) &&
	       cJSON_AddItemToObject(
		   nc, "quic_ports",
		   json_port_list(c->quic_ports, c->n_quic_ports));
}

static cJSON *json_port_list(const struct config_port *pt, size_t n)
{
	char buf[32];
	cJSON *ports = cJSON_CreateArray();
	bool ok = ports != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		config_port_format(&pt[i], buf, sizeof(buf));
		ok = cJSON_AddItemToArray(ports, cJSON_CreateString(buf));
	}
	if (!ok) {
		cJSON_Delete(ports);
		return NULL;
	}
	return ports;
}

static cJSON *json_ids(const uint32_t *ids, size_t n)
{
	char buf[16];
	cJSON *arr = cJSON_CreateArray();
	bool ok = arr != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		snprintf(buf, sizeof(buf), "%u", (unsigned)ids[i]);
		ok = cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (!ok) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

/* "subjects", only when some are named (users and groups as numbers). */
static bool json_subjects(cJSON *root, const struct config *c)
{
	cJSON *sj;
	bool ok;

	if (!config_has_subjects(c))
		return true;
	ok = (sj = cJSON_AddObjectToObject(root, "subjects")) != NULL;
	ok = ok &&
	     cJSON_AddItemToObject(
		 sj, "users", json_ids(c->subject_uids, c->n_subject_uids));
	ok = ok &&
	     cJSON_AddItemToObject(
		 sj, "groups", json_ids(c->subject_gids, c->n_subject_gids));
	ok = ok && cJSON_AddItemToObject(
		       sj, "cgroups",
		       json_strings(c->subject_cgroups, c->n_subject_cgroups));
	ok = ok && cJSON_AddStringToObject(sj, "loopback",
					   c->subject_lo_listener ? "listener"
								  : "all");
	return ok &&
	       cJSON_AddItemToObject(
		   sj, "loopback_ports",
		   json_port_list(c->subject_lo_ports, c->n_subject_lo_ports));
}

/* A list of CIDRs under key, each as address/length. */
static bool json_cidr_list(cJSON *root, const char *key,
			   const struct netcidr *v, size_t n)
{
	char buf[NETADDR_ENDPOINT_STRLEN];
	cJSON *cidrs = cJSON_AddArrayToObject(root, key);
	bool ok = cidrs != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		netaddr_format_cidr(&v[i], buf, sizeof(buf));
		ok = cJSON_AddItemToArray(cidrs, cJSON_CreateString(buf));
	}
	return ok;
}

/* "allow_cidrs". */
static bool json_cidrs(cJSON *root, const struct config *c)
{
	return json_cidr_list(root, "allow_cidrs", c->allow_cidrs,
			      c->n_allow_cidrs);
}

/* How the daemon runs: "user" to "inbound", then "log". */
static bool json_daemon(cJSON *root, const struct config *c)
{
	cJSON *log;
	bool ok;

	ok = cJSON_AddStringToObject(root, "user", c->user);
	if (c->local_upstream_uid_set) {
		char uid[16];

		snprintf(uid, sizeof(uid), "%u",
			 (unsigned)c->local_upstream_uid);
		ok = ok &&
		     cJSON_AddStringToObject(root, "local_upstream_user", uid);
	} else {
		ok = ok && cJSON_AddNullToObject(root, "local_upstream_user");
	}
	ok = ok &&
	     cJSON_AddStringToObject(root, "mode", config_mode_name(c->mode));
	ok = ok && cJSON_AddStringToObject(root, "audit_denied",
					   c->audit_denied_local ? "local"
								 : "forward");
	ok = ok && cJSON_AddNumberToObject(root, "upstream_timeout",
					   c->upstream_timeout_ms / 1000);
	ok = ok &&
	     cJSON_AddNumberToObject(root, "max_inflight", c->max_inflight);
	ok = ok && cJSON_AddNumberToObject(root, "failure_ttl", c->failure_ttl);
	ok = ok && cJSON_AddNumberToObject(root, "serve_stale", c->serve_stale);
	ok = ok &&
	     cJSON_AddNumberToObject(root, "guard_interval", c->guard_interval);
	ok = ok && cJSON_AddNumberToObject(root, "mark", c->mark);
	ok = ok && cJSON_AddBoolToObject(root, "selftest", c->selftest);
	ok = ok && cJSON_AddStringToObject(root, "inbound",
					   c->inbound_deny ? "deny" : "allow");
	ok = ok && (log = cJSON_AddObjectToObject(root, "log")) != NULL;
	ok = ok && cJSON_AddStringToObject(log, "level",
					   log_level_name(c->log_level));
	return ok && cJSON_AddStringToObject(
			 log, "format", config_log_format_name(c->log_format));
}

/* "scope", "interfaces", "host_allow": where the fence stands. */
static bool json_scope(cJSON *root, const struct config *c)
{
	bool ok;

	ok = cJSON_AddStringToObject(root, "scope",
				     config_scope_name(c->scope)) != NULL;
	ok = ok && cJSON_AddItemToObject(
		       root, "interfaces",
		       json_strings(c->interfaces, c->n_interfaces));
	ok = ok && cJSON_AddItemToObject(
		       root, "host_allow",
		       json_strings(c->host_allow, c->n_host_allow));
	ok = ok && json_cidr_list(root, "source_cidrs", c->source_cidrs,
				  c->n_source_cidrs);
	ok = ok && cJSON_AddStringToObject(root, "hairpin",
					   c->hairpin_deny    ? "deny"
					   : c->hairpin_allow ? "allow"
							      : "fence");
	/* the output scope refuses the key */
	if (c->scope != CONFIG_SCOPE_FORWARD)
		return ok;
	return ok && cJSON_AddStringToObject(root, "bind",
					     c->bind_interfaces ? "interfaces"
								: "client");
}

/* "metrics" (null when off) and "state_dir". */
static bool json_observe(cJSON *root, const struct config *c)
{
	char buf[NETADDR_ENDPOINT_STRLEN];

	if (!c->metrics_on)
		return cJSON_AddNullToObject(root, "metrics") != NULL &&
		       cJSON_AddStringToObject(root, "state_dir",
					       c->state_dir) != NULL;
	netaddr_format_endpoint((const struct sockaddr *)&c->metrics.sa, buf,
				sizeof(buf));
	return cJSON_AddStringToObject(root, "metrics", buf) != NULL &&
	       cJSON_AddStringToObject(root, "state_dir", c->state_dir) != NULL;
}

/* "control": {"socket": PATH, "watch": BOOL}. */
static bool json_control(cJSON *root, const struct config *c)
{
	cJSON *ctl = cJSON_AddObjectToObject(root, "control");

	return ctl != NULL &&
	       cJSON_AddStringToObject(ctl, "socket", c->control_socket) !=
		   NULL &&
	       cJSON_AddBoolToObject(ctl, "watch", c->control_watch) != NULL;
}
