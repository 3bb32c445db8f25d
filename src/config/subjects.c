// SPDX-License-Identifier: GPL-2.0-or-later
/* subjects: the parsers of the "subjects" keys, whom the output fence
 * applies to when it should not fence the whole namespace.
 *
 * Users and groups are resolved here, once, to the numbers the kernel's
 * owner match compares (iptables-save prints numbers, so the rules read
 * back compare as text); a name that does not resolve is an error now,
 * not a rule that silently fences nobody. Cgroup paths are cgroup v2
 * paths as /proc/PID/cgroup shows them ("0::/system.slice/x.service"),
 * narrowed to what is safe inside a quoted iptables-restore argument.
 * The cross-key rules (output scope only, not the daemon's own user,
 * loopback_ports only with loopback "listener") are subjects_check.
 * "local_upstream_user" is resolved the same way, for the same match. */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/netaddr.h"
#include "config/configkeys.h"
#include "config/subjects.h"

#define ID_MAX	     4294967294UL /* (uid_t)-1 means "no change" */
#define CGROUP_MAX   200
#define NSS_BUF_SIZE 16384

static int push_id(uint32_t **arr, size_t *n, uint32_t id);
static bool parse_id(const char *s, uint32_t *id);
static int lookup_user(const char *s, uint32_t *id);
static int lookup_group(const char *s, uint32_t *id);
static bool cgroup_char_ok(char ch);
static int resolve_id(struct pctx *p, const char *s, const char *path,
		      bool group, uint32_t *id);
static int item_id(struct pctx *p, const char *s, const char *path, bool group);

static int push_id(uint32_t **arr, size_t *n, uint32_t id)
{
	uint32_t *v;

	for (size_t i = 0; i < *n; i++) {
		if ((*arr)[i] == id)
			return 0;
	}
	v = reallocarray(*arr, *n + 1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	v[(*n)++] = id;
	*arr = v;
	return 0;
}

/* Decimal digits only, 0..ID_MAX. */
static bool parse_id(const char *s, uint32_t *id)
{
	unsigned long v = 0;

	if (*s == '\0' || strlen(s) > 10)
		return false;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v > ID_MAX)
		return false;
	*id = (uint32_t)v;
	return true;
}

/* 0 and *id, -ENOENT (no such user), or another -errno. */
static int lookup_user(const char *s, uint32_t *id)
{
	struct passwd pw, *res = NULL;
	char *buf = malloc(NSS_BUF_SIZE);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	rc = getpwnam_r(s, &pw, buf, NSS_BUF_SIZE, &res);
	if (rc == 0 && res != NULL)
		*id = (uint32_t)res->pw_uid;
	free(buf);
	return rc != 0 ? -rc : res == NULL ? -ENOENT : 0;
}

static int lookup_group(const char *s, uint32_t *id)
{
	struct group gr, *res = NULL;
	char *buf = malloc(NSS_BUF_SIZE);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	rc = getgrnam_r(s, &gr, buf, NSS_BUF_SIZE, &res);
	if (rc == 0 && res != NULL)
		*id = (uint32_t)res->gr_gid;
	free(buf);
	return rc != 0 ? -rc : res == NULL ? -ENOENT : 0;
}

/* A user (group false) or group name, or its number, into *id: 0, or
 * -EINVAL with p's error naming the entry at path. */
static int resolve_id(struct pctx *p, const char *s, const char *path,
		      bool group, uint32_t *id)
{
	const char *what = group ? "group" : "user";
	char val[72];
	int rc;

	if (parse_id(s, id))
		return 0;
	configkeys_show(s, val, sizeof(val));
	rc = group ? lookup_group(s, id) : lookup_user(s, id);
	if (rc == -ENOENT)
		return configkeys_fail(p, path,
				       "\"%s\": no such %s (create it before "
				       "setup, or give its %s)",
				       val, what, group ? "gid" : "uid");
	if (rc != 0)
		return configkeys_fail(p, path, "\"%s\": cannot look it up: %s",
				       val, strerror(-rc));
	return 0;
}

/* A user (group false) or group name, or its number, resolved; not 0. */
static int item_id(struct pctx *p, const char *s, const char *path, bool group)
{
	char val[72];
	uint32_t id;
	int rc;

	if ((rc = resolve_id(p, s, path, group, &id)) != 0)
		return rc;
	configkeys_show(s, val, sizeof(val));
	if (id == 0)
		return configkeys_fail(
		    p, path,
		    group ? "\"%s\" is gid 0: a fenced group root can remove "
			    "the fence; use a group of its own"
			  : "\"%s\" is root: a fenced root can remove the "
			    "fence; run the program under a user of its own",
		    val);
	return group ? push_id(&p->c->subject_gids, &p->c->n_subject_gids, id)
		     : push_id(&p->c->subject_uids, &p->c->n_subject_uids, id);
}

int subjects_item_user(struct pctx *p, const char *s, const char *path)
{
	return item_id(p, s, path, false);
}

int subjects_item_group(struct pctx *p, const char *s, const char *path)
{
	return item_id(p, s, path, true);
}

/* What a quoted iptables-restore argument and systemd's unit names need:
 * no blank, quote or backslash. */
static bool cgroup_char_ok(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || strchr("/_.-@:+", ch) != NULL;
}

int subjects_item_cgroup(struct pctx *p, const char *s, const char *path)
{
	size_t n = strlen(s);
	char val[72], *dup;

	configkeys_show(s, val, sizeof(val));
	while (n > 1 && s[n - 1] == '/')
		n--;
	if (n < 2 || n > CGROUP_MAX || s[0] != '/')
		return configkeys_fail(
		    p, path,
		    "\"%s\": expected an absolute cgroup v2 path of 2..%d "
		    "bytes, as /proc/PID/cgroup shows it after \"0::\" (e.g. "
		    "\"/system.slice/agent.service\"), not the root",
		    val, CGROUP_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!cgroup_char_ok(s[i]))
			return configkeys_fail(
			    p, path,
			    "\"%s\": character '%c' not allowed (letters, "
			    "digits and / _ . - @ : + only)",
			    val, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
		if (s[i] == '/' && i + 1 < n &&
		    (s[i + 1] == '/' || s[i + 1] == '.'))
			return configkeys_fail(
			    p, path,
			    "\"%s\": empty or dot segment (write the path "
			    "as the kernel shows it)",
			    val);
	}
	for (size_t i = 0; i < p->c->n_subject_cgroups; i++) {
		if (strlen(p->c->subject_cgroups[i]) == n &&
		    strncmp(p->c->subject_cgroups[i], s, n) == 0)
			return 0;
	}
	dup = strndup(s, n);
	if (dup == NULL)
		return -ENOMEM;
	char **v = reallocarray(p->c->subject_cgroups,
				p->c->n_subject_cgroups + 1, sizeof(*v));
	if (v == NULL) {
		free(dup);
		return -ENOMEM;
	}
	v[p->c->n_subject_cgroups++] = dup;
	p->c->subject_cgroups = v;
	return 0;
}

int subjects_item_lo_port(struct pctx *p, const char *s, const char *path)
{
	struct config_port pt, *v;
	int rc = configkeys_parse_port(p, s, path, &pt);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < p->c->n_subject_lo_ports; i++) {
		if (memcmp(&p->c->subject_lo_ports[i], &pt, sizeof(pt)) == 0)
			return 0;
	}
	v = reallocarray(p->c->subject_lo_ports, p->c->n_subject_lo_ports + 1,
			 sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	v[p->c->n_subject_lo_ports++] = pt;
	p->c->subject_lo_ports = v;
	return 0;
}

int subjects_check(struct pctx *p, bool loopback_given)
{
	uint32_t daemon;

	if (!config_has_subjects(p->c)) {
		if (loopback_given || p->c->n_subject_lo_ports > 0)
			return configkeys_fail(
			    p,
			    loopback_given ? "subjects.loopback"
					   : "subjects.loopback_ports",
			    "only used with subjects.users, subjects.groups or "
			    "subjects.cgroups (without them the whole "
			    "namespace is fenced)");
		return 0;
	}
	if (p->c->scope != CONFIG_SCOPE_OUTPUT)
		return configkeys_fail(
		    p, "subjects",
		    "only used with \"scope\": \"output\" (the forward scope "
		    "fences by interface, not by process)");
	if (p->c->n_subject_lo_ports > 0 && !p->c->subject_lo_listener)
		return configkeys_fail(
		    p, "subjects.loopback_ports",
		    "only used with \"subjects.loopback\": \"listener\" (with "
		    "\"all\" every loopback port is open to the subjects)");
	if (!parse_id(p->c->user, &daemon) &&
	    lookup_user(p->c->user, &daemon) != 0)
		return 0; /* run refuses an unknown user; nothing to compare */
	for (size_t i = 0; i < p->c->n_subject_uids; i++) {
		if (p->c->subject_uids[i] == daemon)
			return configkeys_fail(
			    p, "subjects.users",
			    "uid %u is the daemon's own `user`: fence the "
			    "workload's user, not dnsfence's",
			    (unsigned)daemon);
	}
	return 0;
}

int subjects_local_upstream_user(struct pctx *p, const struct key_spec *k,
				 const cJSON *v)
{
	char num[16];
	const char *s;
	uint32_t id;
	int rc;

	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0 || v->valuedouble > (double)ID_MAX ||
		    v->valuedouble != (double)(uint32_t)v->valuedouble)
			return configkeys_fail(p, k->path, "a uid is 0..%lu",
					       ID_MAX);
		snprintf(num, sizeof(num), "%u", (uint32_t)v->valuedouble);
		s = num;
	} else if (cJSON_IsString(v)) {
		s = v->valuestring;
	} else {
		return configkeys_fail(p, k->path,
				       "expected a user name or a uid");
	}
	if ((rc = resolve_id(p, s, k->path, false, &id)) != 0)
		return rc;
	p->c->local_upstream_uid = id;
	p->c->local_upstream_uid_set = true;
	return 0;
}

/* Docker's embedded resolver: 127.0.0.11:53, DNATed by Docker to the
 * port its own socket holds, so nothing else can take its place. */
static bool docker_resolver(const struct config_endpoint *e,
			    const struct netaddr *a)
{
	static const uint8_t addr[4] = {127, 0, 0, 11};
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&e->sa;

	return a->family == AF_INET && memcmp(a->bytes, addr, 4) == 0 &&
	       ntohs(sin->sin_port) == 53;
}

/* " (from /etc/resolv.conf: the file sets no \"upstreams\")", or "". */
static void source_of(const struct pctx *p, char *buf, size_t cap)
{
	if (p->upstreams_file == NULL)
		buf[0] = '\0';
	else
		snprintf(buf, cap, " (from %s: the file sets no \"upstreams\")",
			 p->upstreams_file);
}

/* Must a local upstream name its answerer? In output scope with a fence
 * and no local_upstream_user. With subjects, no: only the subjects'
 * packets enter the fence, so a resolver of the namespace (no subject)
 * answers unchecked, and a subject's answer meets rule 2's drop of every
 * process's socket (fwrules.c render_answerer). */
static bool needs_answerer(const struct config *c)
{
	return c->scope == CONFIG_SCOPE_OUTPUT && c->mode != CONFIG_MODE_OFF &&
	       !c->local_upstream_uid_set && !config_has_subjects(c);
}

static bool unspecified(const struct netaddr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->bytes, zero, a->family == AF_INET ? 4 : 16) == 0;
}

int subjects_check_local_upstreams(struct pctx *p)
{
	const struct config *c = p->c;
	char s[NETADDR_STRLEN], from[PATH_MAX + 48];
	struct netaddr a;
	bool fenced = needs_answerer(c);

	source_of(p, from, sizeof(from));
	for (size_t i = 0; i < c->n_upstreams; i++) {
		const struct config_endpoint *e = &c->upstreams[i];

		if (!netaddr_from_sockaddr((const struct sockaddr *)&e->sa, &a))
			continue;
		netaddr_format(&a, s, sizeof(s));
		/* The kernel sends what goes to 0.0.0.0 or :: to a loopback
		 * address (the packets carry 127.0.0.1 or ::1): a local port
		 * any process could hold, which no rule naming the upstream
		 * would ever match. */
		if (unspecified(&a))
			return configkeys_fail(
			    p, "upstreams",
			    "%s%s is the unspecified address: what is sent "
			    "there goes to this host's own ports, where any "
			    "process could answer, and no fence rule can name "
			    "it. Name the resolver's own address",
			    s, from);
		if (!fenced || !netaddr_is_loopback(&a) ||
		    docker_resolver(e, &a))
			continue;
		return configkeys_fail(
		    p, "upstreams",
		    "%s%s is a loopback address: while the resolver there is "
		    "down or restarting, any process of this namespace can "
		    "bind its port and answer dnsfence with any address for "
		    "any allowed name. Name the user the resolver runs as in "
		    "\"local_upstream_user\" (the fence then takes its "
		    "answers only from that user's sockets), or use an "
		    "upstream outside the namespace",
		    s, from);
	}
	return 0;
}

int subjects_check_own_addresses(const struct config *c, char *err,
				 size_t errlen)
{
	struct ifaddrs *ifs, *f;
	struct netaddr a, own;
	char s[NETADDR_STRLEN];

	if (!needs_answerer(c))
		return 0;
	if (getifaddrs(&ifs) != 0) {
		int e = errno;

		snprintf(err, errlen,
			 "upstreams: cannot list this network namespace's "
			 "addresses to check that no upstream is one of them: "
			 "%s",
			 strerror(e));
		return -e;
	}
	for (size_t i = 0; i < c->n_upstreams; i++) {
		if (!netaddr_from_sockaddr(
			(const struct sockaddr *)&c->upstreams[i].sa, &a) ||
		    netaddr_is_loopback(&a)) /* the parse's rule */
			continue;
		for (f = ifs; f != NULL; f = f->ifa_next) {
			if (f->ifa_addr == NULL ||
			    !netaddr_from_sockaddr(f->ifa_addr, &own) ||
			    !netaddr_equal(&own, &a))
				continue;
			netaddr_format(&a, s, sizeof(s));
			snprintf(err, errlen,
				 "upstreams: %s is an address of this network "
				 "namespace (on %s): while the resolver there "
				 "is down or restarting, any process of the "
				 "namespace can bind its port and answer "
				 "dnsfence with any address for any allowed "
				 "name, and the fence takes no answer from a "
				 "socket here without \"local_upstream_user\". "
				 "Name the user the resolver runs as there, or "
				 "use an upstream outside the namespace",
				 s, f->ifa_name);
			freeifaddrs(ifs);
			return -EINVAL;
		}
	}
	freeifaddrs(ifs);
	return 0;
}
