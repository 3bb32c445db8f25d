// SPDX-License-Identifier: GPL-2.0-or-later
/* why: `dnsfence why NAME|ADDR[:PORT]` (see why.h).
 *
 * The config's verdict on a name is inspect_allowed's, the one `allowed`
 * prints; the daemon's memory comes over its control socket (`entries`
 * for the addresses in the sets, `suggest` for the denied names and the
 * blocked flows, `why ADDR` for an address's attribution). When no
 * daemon answers, the denied names and blocked flows are the ones the
 * last daemon wrote to state_dir/suggest.json, read through suggest's
 * trusted reader (statefs.h's rule); what only a live daemon knows (the
 * sets' entries, the address-to-name memory) is then said to be
 * unknown, never guessed. Every answer names its source first. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "base/netaddr.h"
#include "cli/inspect.h"
#include "cli/suggest.h"
#include "cli/why.h"
#include "daemon/control.h"
#include "observe/learn.h"

static char *call(const char *socket, const char *cmd, int *rc, char *err,
		  size_t errlen);
static cJSON *learned(const struct config *cfg, const char *socket, bool *live,
		      FILE *out);
static int why_name(const struct config *cfg, const char *socket,
		    const char *name, FILE *out, char *err, size_t errlen);
static int why_addr(const struct config *cfg, const char *socket,
		    const char *arg, FILE *out, char *err, size_t errlen);
static void print_flow(FILE *out, const cJSON *f);
static const char *proto_text(double proto);

bool why_is_address(const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = NULL;

	return netaddr_parse_endpoint(arg, false, 0, &ss, &len, &why) == 0;
}

int why_run(const struct config *cfg, const char *socket, const char *arg,
	    FILE *out, char *err, size_t errlen)
{
	if (why_is_address(arg))
		return why_addr(cfg, socket, arg, out, err, errlen);
	return why_name(cfg, socket, arg, out, err, errlen);
}

/* The daemon's reply body to cmd (malloc'd), or NULL with *rc: the
 * daemon's exit code (> 0) or -errno, err set. */
static char *call(const char *socket, const char *cmd, int *rc, char *err,
		  size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (mem == NULL) {
		*rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*rc =
	    control_call(socket, cmd, CONTROL_IO_TIMEOUT * 5, mem, err, errlen);
	if (fclose(mem) != 0 && *rc == 0) {
		*rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
	}
	if (*rc == 0)
		return text;
	free(text);
	return NULL;
}

/* What was denied and blocked: the running daemon's (*live), else
 * suggest.json's; the source line goes to out. NULL when neither. */
static cJSON *learned(const struct config *cfg, const char *socket, bool *live,
		      FILE *out)
{
	char err[512], ferr[512];
	int rc;
	char *text = call(socket, "suggest", &rc, err, sizeof(err));
	cJSON *root;

	*live = text != NULL;
	if (text != NULL) {
		fprintf(out, "source: the running daemon (%s)\n", socket);
	} else {
		if (rc == -ENOENT || rc == -ECONNREFUSED)
			snprintf(err, sizeof(err), "no daemon listens on %s",
				 socket);
		text = suggest_read_state(cfg, LEARN_FILE, &rc, ferr,
					  sizeof(ferr));
		if (text != NULL)
			fprintf(out, "source: %s/%s, the last daemon's (%s)\n",
				cfg->state_dir, LEARN_FILE, err);
		else
			fprintf(out, "source: none (%s; %s)\n", err, ferr);
	}
	root = text != NULL ? cJSON_Parse(text) : NULL;
	if (text != NULL && root == NULL)
		fprintf(out, "source: its text is not JSON: not used\n");
	free(text);
	return root;
}

static int why_name(const struct config *cfg, const char *socket,
		    const char *name, FILE *out, char *err, size_t errlen)
{
	char ierr[512];
	const cJSON *it;
	cJSON *root;
	uint64_t flows = 0;
	bool live, denied = false;
	int r = inspect_allowed(cfg, name, false, out, ierr, sizeof(ierr));

	if (r == -EINVAL) {
		snprintf(err, errlen,
			 "'%s': expected NAME, ADDR, ADDR:PORT or [V6]:PORT "
			 "(as a name: %s)",
			 name, ierr);
		return -EINVAL;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s", ierr);
		return r;
	}
	root = learned(cfg, socket, &live, out);
	if (live) {
		int rc;
		char *reply = call(socket, "entries", &rc, ierr, sizeof(ierr));
		char *lines = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&lines, &len);
		int n = -EINVAL;

		if (reply != NULL && mem == NULL)
			snprintf(ierr, sizeof(ierr), "out of memory");
		if (reply != NULL && mem != NULL)
			n = inspect_entries(reply, name, NULL, false, mem, ierr,
					    sizeof(ierr));
		if (mem != NULL)
			fclose(mem);
		if (n > 0) {
			for (char *l = strtok(lines, "\n"); l != NULL;
			     l = strtok(NULL, "\n"))
				fprintf(out, "answered: %s\n", l);
		} else if (n == 0) {
			fprintf(out,
				"answered: no address of %s is in the "
				"sets now\n",
				name);
		} else {
			fprintf(out, "answered: unknown (%s)\n", ierr);
		}
		free(lines);
		free(reply);
	} else {
		fprintf(out, "answered: unknown (only a running daemon knows "
			     "what its sets hold)\n");
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(root, "names"))
	{
		const cJSON *n = cJSON_GetObjectItem(it, "name");
		const cJSON *c = cJSON_GetObjectItem(it, "count");

		if (cJSON_IsString(n) && cJSON_IsNumber(c) &&
		    strcasecmp(n->valuestring, name) == 0) {
			fprintf(out, "denied: %.0f time(s)%s\n", c->valuedouble,
				cfg->mode == CONFIG_MODE_AUDIT
				    ? " (audit: would deny, forwarded)"
				    : "");
			denied = true;
		}
	}
	if (root != NULL && !denied)
		fprintf(out, "denied: never\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(root, "flows"))
	{
		const cJSON *n = cJSON_GetObjectItem(it, "name");

		if (cJSON_IsString(n) &&
		    strcasecmp(n->valuestring, name) == 0) {
			print_flow(out, it);
			flows++;
		}
	}
	if (root != NULL && flows == 0)
		fprintf(out, "blocked: no flow to its addresses\n");
	cJSON_Delete(root);
	return 0;
}

static int why_addr(const struct config *cfg, const char *socket,
		    const char *arg, FILE *out, char *err, size_t errlen)
{
	char cmd[CONTROL_LINE_MAX - 1], derr[512], a[NETADDR_STRLEN];
	struct sockaddr_storage ss;
	struct netaddr dst, fa;
	socklen_t len;
	const char *why = NULL;
	const cJSON *it;
	cJSON *root;
	uint16_t port;
	uint64_t flows = 0;
	bool live;
	int rc;
	char *text;

	if (netaddr_parse_endpoint(arg, false, 0, &ss, &len, &why) != 0 ||
	    !netaddr_from_sockaddr((const struct sockaddr *)&ss, &dst)) {
		snprintf(err, errlen,
			 "'%s': expected ADDR, ADDR:PORT or "
			 "[V6]:PORT",
			 arg);
		return -EINVAL;
	}
	port = netaddr_port((const struct sockaddr *)&ss);
	netaddr_format(&dst, a, sizeof(a));
	if ((size_t)snprintf(cmd, sizeof(cmd), "why %s", arg) >= sizeof(cmd)) {
		snprintf(err, errlen, "'%s' is too long for an address", arg);
		return -EINVAL;
	}
	text = call(socket, cmd, &rc, derr, sizeof(derr));
	if (text != NULL) {
		fprintf(out, "source: the running daemon (%s)\n%s", socket,
			text);
		free(text);
		return 0;
	}
	if (rc > 0) {
		snprintf(err, errlen, "%s", derr);
		return rc;
	}
	root = learned(cfg, socket, &live, out);
	if (root == NULL) {
		snprintf(err, errlen,
			 "no daemon answers on %s and %s/%s cannot be used "
			 "(has the daemon run with this config?)",
			 socket, cfg->state_dir, LEARN_FILE);
		return -ENOENT;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(root, "flows"))
	{
		const cJSON *d = cJSON_GetObjectItem(it, "dst");
		const cJSON *p = cJSON_GetObjectItem(it, "port");

		if (!cJSON_IsString(d) || netaddr_parse(d->valuestring, &fa) ||
		    !netaddr_equal(&fa, &dst) ||
		    (port != 0 &&
		     (!cJSON_IsNumber(p) || p->valuedouble != port)))
			continue;
		print_flow(out, it);
		flows++;
	}
	if (flows == 0)
		fprintf(out, "%s: no blocked flow to it recorded%s\n", a,
			port != 0 ? " on that port" : "");
	if (port != 0 && !config_port_allowed(cfg, IPPROTO_TCP, port))
		fprintf(out,
			"tcp/%u: not in `ports`: blocked whatever the "
			"address\nwould allow: add \"tcp/%u\" to ports\n",
			(unsigned)port, (unsigned)port);
	cJSON_Delete(root);
	return 0;
}

static const char *proto_text(double proto)
{
	return proto == IPPROTO_TCP   ? "tcp"
	       : proto == IPPROTO_UDP ? "udp"
				      : "ip";
}

/* One learned flow: "blocked: tcp/8080 to ADDR, N time(s), uid U
 * (REASON; answered for NAME)", then its fix. */
static void print_flow(FILE *out, const cJSON *f)
{
	const cJSON *d = cJSON_GetObjectItem(f, "dst");
	const cJSON *uid = cJSON_GetObjectItem(f, "uid");
	const cJSON *n = cJSON_GetObjectItem(f, "name");
	const cJSON *r = cJSON_GetObjectItem(f, "reason");
	const char *dst = cJSON_IsString(d) ? d->valuestring : "?";
	const char *name = cJSON_IsString(n) ? n->valuestring : "";
	const char *reason = cJSON_IsString(r) ? r->valuestring : "?";
	const char *proto =
	    proto_text(cJSON_GetNumberValue(cJSON_GetObjectItem(f, "proto")));
	unsigned port =
	    (unsigned)cJSON_GetNumberValue(cJSON_GetObjectItem(f, "port"));
	char who[32] = "";

	if (cJSON_IsNumber(uid))
		snprintf(who, sizeof(who), ", uid %.0f", uid->valuedouble);
	fprintf(out, "blocked: %s/%u to %s, %.0f time(s)%s (%s%s%s)\n", proto,
		port, dst,
		cJSON_GetNumberValue(cJSON_GetObjectItem(f, "count")), who,
		reason, name[0] != '\0' ? "; answered for " : "", name);
	if (strcmp(reason, "port") == 0)
		fprintf(out, "would allow: add \"%s/%u\" to ports\n", proto,
			port);
	else if (strcmp(reason, "expired") == 0 && name[0] != '\0')
		fprintf(out, "would allow: ask dnsfence for %s again\n", name);
	else if (strcmp(reason, "never_answered") == 0)
		fprintf(out,
			"would allow: its name in allow, asked through "
			"dnsfence; or \"%s/%u\" in allow_cidrs\n",
			dst, strchr(dst, ':') != NULL ? 128u : 32u);
	else if (strcmp(reason, "dns") == 0)
		fprintf(out, "would allow: nothing; DNS goes through dnsfence "
			     "(its listen addresses)\n");
	else if (strcmp(reason, "not_in_set") == 0)
		fprintf(out, "would allow: nothing to change (the set entry "
			     "was removed: ask dnsfence again)\n");
	else if (strcmp(reason, "other_client") == 0 && name[0] != '\0')
		fprintf(out,
			"would allow: that client asks dnsfence for %s itself "
			"(an answer opens its addresses for the client that "
			"asked)\n",
			name);
}
